//! One file per benchmark family; each ends with its `FAMILY` description
//! and is registered once in `crate::FAMILIES`.

pub mod dhrystone;
pub mod harness;
pub mod lat_syscall;
pub mod linpack;
pub mod sieve;
pub mod whetstone;
