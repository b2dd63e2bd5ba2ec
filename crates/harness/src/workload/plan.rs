//! How workload trials and sweeps are to be made: window lengths, pacing,
//! the load ladder, the CPU counts and the convergence rule. Plain data,
//! validated once (`sweep::validate`) before anything runs.

use std::time::Duration;

use touchstone_results::convergence::Rule;

/// How clients pace their operations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pacing {
    /// Each client starts its next operation when the last completes, as
    /// fast as it can; latency is each operation's own duration.
    Closed,
    /// All clients together aim at `rate` operations per second, each client
    /// at rate / L on a fixed schedule; latency is measured from each
    /// operation's intended start, so a stall delays the schedule's later
    /// operations and shows in their latency (no coordinated omission).
    Open { rate: f64 },
}

/// One trial: a warm-up window, then one measurement window.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialPlan {
    /// Running before the window, after every client's first operation.
    pub warmup_ns: u64,
    /// The measurement window.
    pub window_ns: u64,
    pub pacing: Pacing,
    /// A client or server that makes no progress for this long has stalled
    /// (generous: one operation of a workload may take seconds).
    pub stall_timeout: Duration,
    /// How long the server may take to return after being asked to stop
    /// before it is killed.
    pub server_grace: Duration,
    /// The energy sources the run discovered (once per run): the supervisor
    /// snapshots them around the window. Empty: no energy is recorded.
    pub energy: Vec<crate::energy::Source>,
}

impl Default for TrialPlan {
    /// Warm-up 1 s, window 3 s, closed loop.
    fn default() -> TrialPlan {
        TrialPlan {
            warmup_ns: 1_000_000_000,
            window_ns: 3_000_000_000,
            pacing: Pacing::Closed,
            stall_timeout: Duration::from_secs(30),
            server_grace: Duration::from_millis(500),
            energy: Vec::new(),
        }
    }
}

impl TrialPlan {
    /// Warm-up 0.2 s, window 0.5 s.
    pub fn quick() -> TrialPlan {
        TrialPlan {
            warmup_ns: 200_000_000,
            window_ns: 500_000_000,
            ..TrialPlan::default()
        }
    }
}

/// A sweep: every load of the ladder at every CPU count. The default: the
/// default ladder on all usable CPUs, default trials, `95,5` convergence.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SweepPlan {
    /// The load ladder; None: `default_loads` (doubling to 4 × the CPUs,
    /// bounded by the workload's maximum).
    pub loads: Option<Vec<u32>>,
    /// CPU counts k: the whole workload runs on the first k usable CPUs.
    /// Empty: all usable CPUs only.
    pub cpu_counts: Vec<u32>,
    pub trial: TrialPlan,
    pub rule: Rule,
    /// The most the whole sweep should take. Every point runs the rule's
    /// minimum of trials; beyond it, a point stops once it has used its
    /// share of the time left (what remains over the points still to
    /// measure) and is flagged as not converged, cut by the budget. None:
    /// the rule alone decides.
    pub budget: Option<Budget>,
}

/// A sweep's time budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// For the whole sweep.
    Total(Duration),
    /// On average per point (the sweep's total scales with its points).
    PerPoint(Duration),
}

impl Budget {
    pub fn total(self, points: usize) -> Duration {
        match self {
            Budget::Total(d) => d,
            Budget::PerPoint(d) => d * points as u32,
        }
    }
}

impl SweepPlan {
    pub fn quick() -> SweepPlan {
        SweepPlan {
            trial: TrialPlan::quick(),
            ..SweepPlan::default()
        }
    }
}
