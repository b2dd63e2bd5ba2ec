//! The timing harness (DESIGN.md "The harness contract", after lmbench3's
//! benchmp). A benchmark describes its setup, its timed body and its cleanup
//! (`Benchmark`), and what one iteration is worth (`Shape`); the harness does
//! all the timing: clock calibration, autosizing, warm-up, repetitions, and
//! coordinated load across N child processes. It returns raw intervals and
//! builds the results model's `Measurement` from them; it never prints.

pub mod bench;
pub mod clock;
pub mod energy;
pub mod events;
pub mod interval;
pub mod measurement;
pub mod parallel;
pub mod plan;
pub mod rounds;
pub mod scratch;
pub mod signals;
pub mod windows;
pub mod workload;

pub use bench::{BenchError, Benchmark, Context, Fallible, Report, Shape, Work};
pub use clock::{calibrate, Clock, Monotonic};
pub use events::{NoObserver, Observer};
pub use measurement::{measure_case, CaseLabel, CaseRounds};
pub use parallel::{measure, HarnessError, ProcessTiming, Timing};
pub use plan::Plan;
