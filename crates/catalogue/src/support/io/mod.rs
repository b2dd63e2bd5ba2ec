//! What the file and disk I/O families (`io`, `io_copy`, `io_load`) share,
//! one subject a file: where they write (`target`: the run options and
//! their checks), which file system that is (`place`), the parameters
//! `bs` and `size` (`params`), the test file and the page cache
//! (`test_file`), the sync modes and their open flags (`sync_mode`), the
//! fixed seeded offset sequences (`sequences`), per-operation latency
//! (`latency`), and the io_uring submission path for queue depths beyond
//! one (`ring`). Everything is reached as `support::io::…`.

mod latency;
mod params;
mod place;
mod ring;
mod sequences;
mod sync_mode;
mod target;
mod test_file;

pub use latency::*;
pub use params::*;
pub use place::*;
pub use ring::*;
pub use sequences::*;
pub use sync_mode::*;
pub use target::*;
pub use test_file::*;
