//! touchstone's results layer: what a run and a measurement are, the
//! statistics every figure carries, the host it ran on, the warnings that
//! qualify it, and how runs are stored (SQLite) and exchanged (JSON).
//!
//! Nothing here knows about any particular benchmark or how it was timed.

pub mod brief;
pub mod checks;
pub mod convergence;
pub mod curve;
pub mod fingerprint;
pub mod groups;
pub mod host;
pub mod inventory;
pub mod json;
pub mod model;
pub mod random;
pub mod self_check;
pub mod stats;
// Only the binary opens the store: SQLite is linked by those that enable
// this crate's `store` feature (the CLI), not by everything that reads results.
#[cfg(feature = "store")]
pub mod store;
pub mod units;
pub mod validate;
pub mod warnings;

pub use brief::{Brief, Figure};
pub use model::{
    Baseline, ClockInfo, Interval, Measurement, Run, RunOptions, RunRow, RunStatus, Tool, Warning,
    WorkloadOptions,
};
pub use stats::{Statistic, Summary};
pub use units::Unit;
pub use warnings::WarningCode;
