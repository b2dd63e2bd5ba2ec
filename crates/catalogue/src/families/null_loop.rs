//! null_loop: the empty benchmark, a harness self-check. Its figure is the
//! harness's own overhead per iteration, what every other figure carries.

use touchstone_harness::{Benchmark, Fallible, Shape};

use crate::family::{Built, Family, RunContext};
use crate::params::Point;

/// The empty benchmark.
pub struct NullLoop;

impl Benchmark for NullLoop {
    /// Timed: a loop of `n` empty iterations. `black_box` keeps the counter
    /// alive so the loop is not deleted; nothing else is inside.
    fn run(&mut self, n: u64) -> Fallible {
        for i in 0..n {
            std::hint::black_box(i);
        }
        Ok(())
    }
}

fn build(_: &Point, _: &RunContext) -> Result<Built, String> {
    Ok(Built::new(NullLoop, Shape::latency(1.0)))
}

pub const FAMILY: Family = Family::new(
    "null_loop",
    "harness",
    "empty benchmark: the harness's own overhead per iteration",
    build,
);
