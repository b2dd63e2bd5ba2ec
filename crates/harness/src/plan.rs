//! How a measurement is to be made: repetitions, processes, interval targets.
//! Parallelism, warm-up and repetitions belong to the plan, not the benchmark.

use std::time::Duration;

use touchstone_results::convergence::Rule;

use crate::bench::Shape;

#[derive(Debug, Clone)]
pub struct Plan {
    /// Rounds each case is measured in: each round starts fresh processes
    /// (new memory, new CPUs chosen by the scheduler) and times
    /// `repetitions` intervals; a run interleaves its cases' rounds in a
    /// shuffled order, and the headline and its interval are built over
    /// the rounds (`Summary::rounds`).
    pub rounds: u32,
    /// Timed intervals per process in each round.
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
    /// Add rounds after the planned ones until the headline's interval is
    /// this narrow (`run --converge`); `None`: the planned rounds.
    pub converge: Option<Rule>,
    /// Iterations per interval found by an earlier round of the same case:
    /// later rounds reuse it instead of sizing the loop again (`None`:
    /// autosize). Warm-up may still grow it, never shrink it.
    pub sizing: Option<u64>,
    /// The energy sources the run discovered (once per run): process 0
    /// snapshots them around its timed intervals; empty: none read.
    pub energy: Vec<crate::energy::Source>,
}

pub const DEFAULT_ROUNDS: u32 = 5;
pub const DEFAULT_REPETITIONS: u32 = 3;
/// Rounds and repetitions of the quick plan.
pub const QUICK_ROUNDS: u32 = 3;
pub const QUICK_REPETITIONS: u32 = 3;
/// The quick plan's interval target and warm-up for one process.
pub const QUICK_INTERVAL_NS: u64 = 1_000_000;
/// Repetitions are recorded in a fixed-size shared slot per process.
pub const MAX_REPETITIONS: u32 = 1001;

impl Default for Plan {
    fn default() -> Self {
        Plan {
            rounds: DEFAULT_ROUNDS,
            repetitions: DEFAULT_REPETITIONS,
            parallel: 1,
            target_ns: 5_000_000,
            parallel_target_ns: 1_000_000_000,
            warmup_ns: 10_000_000,
            min_interval_ns: 100_000,
            stall_timeout: Duration::from_secs(60),
            converge: None,
            sizing: None,
            energy: Vec::new(),
        }
    }
}

impl Plan {
    /// The quick plan: fewer rounds of shorter intervals. Three rounds are
    /// the fewest whose interval says something (Student's t at 2 degrees of
    /// freedom); three repetitions a round let a round's median set aside
    /// one interval that other work disturbed. Intervals and warm-up of 1
    /// ms (10 × the clock's 0.1 % floor): the run-to-run spread the
    /// interval must cover comes from the rounds (fresh processes and
    /// memory), not from longer intervals inside one, and at 2 ms the
    /// suite's 867 rounds took 26–30 s against the 16–17 s of one round
    /// before them (docs/validation.md, "Quick mode's time budget").
    pub fn quick() -> Plan {
        Plan {
            rounds: QUICK_ROUNDS,
            repetitions: QUICK_REPETITIONS,
            target_ns: QUICK_INTERVAL_NS,
            parallel_target_ns: 200_000_000,
            warmup_ns: QUICK_INTERVAL_NS,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick plan's warm-up and timed intervals over all its rounds
    /// cost no more than the one round of the quick plan before rounds (a
    /// 2 ms warm-up and seven 2 ms intervals): each round also pays fresh
    /// processes and memory, so the rounds' own time must not grow too.
    #[test]
    fn the_quick_rounds_time_no_more_than_the_one_round_before_them() {
        let q = Plan::quick();
        let shape = Shape::latency(1.0);
        let interval = q.interval_target(&shape);
        let warmup = q.warmup_ns.max(interval);
        let rounds = u64::from(q.rounds) * (warmup + u64::from(q.repetitions) * interval);
        let one_round_before = 2_000_000 + 7 * 2_000_000;
        assert!(
            q.rounds >= 3,
            "three rounds are the fewest with an interval"
        );
        assert!(
            rounds <= one_round_before,
            "{rounds} ns against {one_round_before}"
        );
        assert!(interval >= 10 * q.min_interval_ns, "clock error 0.01 %");
    }
}
