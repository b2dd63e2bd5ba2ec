//! Harness self-checks: benchmarks whose true cost is known, so that the
//! harness itself can be measured. `null_loop` is the empty benchmark (its
//! figure is the harness overhead per iteration); `spin` busy-waits a known
//! time per iteration, a calibrated loop the harness must measure exactly.

use touchstone_harness::clock::now_ns;
use touchstone_harness::{Benchmark, Fallible, Shape};

use crate::family::{always_supported, Built, Family, Mode, Parallel};
use crate::params::{Kind, Param, Point};

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

fn build_null(_: &Point, _: Mode) -> Result<Built, String> {
    Ok(Built::new(NullLoop, Shape::latency(1.0)))
}

fn build_spin(p: &Point, _: Mode) -> Result<Built, String> {
    Ok(Built::new(Spin { ns: p.num("time") }, Shape::latency(1.0)))
}

pub const NULL_LOOP: Family = Family {
    name: "null_loop",
    group: "harness",
    summary: "empty benchmark: the harness's own overhead per iteration",
    params: &[],
    parallel: Parallel::Allowed,
    default_suite: true,
    unsupported: always_supported,
    build: build_null,
    derive: None,
};

pub const SPIN: Family = Family {
    name: "spin",
    group: "harness",
    summary: "busy-wait a known time per iteration: a calibrated loop of known cost",
    params: &[Param {
        name: "time",
        help: "time to spin per iteration",
        kind: Kind::Duration {
            min_ns: 100,
            max_ns: 100_000_000,
        },
        default: &["1us"],
        quick: &[],
        positional: true,
    }],
    parallel: Parallel::Allowed,
    default_suite: true,
    unsupported: always_supported,
    build: build_spin,
    derive: None,
};
