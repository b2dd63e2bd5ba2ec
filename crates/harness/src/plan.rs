//! How a measurement is to be made: repetitions, processes, interval targets.
//! Parallelism, warm-up and repetitions belong to the plan, not the benchmark.

use std::time::Duration;

use touchstone_results::convergence::Rule;

use crate::bench::Shape;

#[derive(Debug, Clone)]
pub struct Plan {
    /// Timed intervals per process (lmbench: 11).
    pub repetitions: u32,
    /// Processes running the benchmark at once.
    pub parallel: u32,
    /// Interval target for one process: a few ms.
    pub target_ns: u64,
    /// Interval target when several processes run: long against a scheduler
    /// time slice, so time-sharing averages out (lmbench3: about 1 s).
    pub parallel_target_ns: u64,
    /// Untimed running before the first timed interval (at least one interval).
    pub warmup_ns: u64,
    /// From clock calibration: the shortest interval with < 0.1 % clock error.
    pub min_interval_ns: u64,
    /// A process that makes no progress for this long has stalled.
    pub stall_timeout: Duration,
    /// Repeat rounds of `repetitions` until the median's interval is this
    /// narrow (`run --converge`); `None`: one round.
    pub converge: Option<Rule>,
}

pub const DEFAULT_REPETITIONS: u32 = 11;
/// Repetitions are recorded in a fixed-size shared slot per process.
pub const MAX_REPETITIONS: u32 = 1001;

impl Default for Plan {
    fn default() -> Self {
        Plan {
            repetitions: DEFAULT_REPETITIONS,
            parallel: 1,
            target_ns: 5_000_000,
            parallel_target_ns: 1_000_000_000,
            warmup_ns: 10_000_000,
            min_interval_ns: 100_000,
            stall_timeout: Duration::from_secs(60),
            converge: None,
        }
    }
}

impl Plan {
    /// The quick plan: fewer, shorter intervals; still 7 repetitions so the
    /// median's 95 % interval exists (x(1)..x(7) covers 98.4 %).
    pub fn quick() -> Plan {
        Plan {
            repetitions: 7,
            target_ns: 2_000_000,
            parallel_target_ns: 200_000_000,
            warmup_ns: 2_000_000,
            ..Plan::default()
        }
    }

    /// The interval length this benchmark's timed intervals must reach.
    pub fn interval_target(&self, shape: &Shape) -> u64 {
        let base = if self.parallel > 1 {
            self.parallel_target_ns
        } else {
            self.target_ns
        };
        base.max(shape.enough_ns).max(self.min_interval_ns)
    }

    /// How long a process may go without progress: generous against the
    /// interval so a slow but healthy benchmark is never cut short.
    pub fn stall_limit(&self, shape: &Shape) -> Duration {
        self.stall_timeout + Duration::from_nanos(self.interval_target(shape).saturating_mul(10))
    }
}
