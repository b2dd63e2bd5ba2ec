//! spin: busy-wait a known time per iteration, a harness self-check: a
//! calibrated loop of known cost that the harness must measure exactly.

use touchstone_harness::clock::now_ns;
use touchstone_harness::{Benchmark, Fallible, Shape};

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};

/// Busy-wait `ns` nanoseconds per iteration on the monotonic clock.
pub struct Spin {
    pub ns: u64,
}

impl Benchmark for Spin {
    /// Timed: `n` waits, each until the clock has advanced `ns`. An
    /// iteration costs `ns`, plus the read that starts it, plus the final
    /// read's overshoot (under one read): `ns` + 1 to 2 clock reads, which the
    /// run's clock info records.
    fn run(&mut self, n: u64) -> Fallible {
        for _ in 0..n {
            let t0 = now_ns();
            while now_ns().wrapping_sub(t0) < self.ns {}
        }
        Ok(())
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    Ok(Built::new(Spin { ns: p.num("time") }, Shape::latency(1.0)))
}

pub const FAMILY: Family = Family {
    params: &[Param::duration("time", 100, 100_000_000)
        .positional()
        .measured(&["1us"])
        .help("time to spin per iteration")],
    ..Family::new(
        "spin",
        "harness",
        "busy-wait a known time per iteration: a calibrated loop of known cost",
        build,
    )
};
