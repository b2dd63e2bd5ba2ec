//! `touchstone run --dry-run`: the cases a run would measure and how long it
//! would take, estimated from the checked plan and what each case declares
//! (`touchstone_catalogue::Cost`) — nothing is measured, nothing is stored.
//! A micro-benchmark case costs, in each of its rounds (each in fresh
//! processes, the case built afresh): every process's setup (memory to
//! fault in, a file to write and fsync), its warm-up and timed intervals
//! (none shorter than one iteration), the untimed work around them, and a
//! few ms of starting and stopping; with several processes also their
//! waits for each other; its first round sizes the loop (several
//! processes: about five of their long intervals, preempted sizings being
//! tried again). A workload sweep costs, at each of its points (loads × CPU
//! counts), its trials × (warm-up + window), between the fewest trials the
//! convergence rule accepts (plus the dropped warm-up trial) and the most
//! it allows. The constants were measured on the 2-CPU development VM under
//! load (each says how); `TOUCHSTONE_STEP_TIMES=1` prints every round's
//! real time beside its estimate, and docs/validation.md ("Estimates
//! against real times") gives the totals against real runs.

use serde::Serialize;
use touchstone_catalogue::Cost;
use touchstone_harness::workload::TrialPlan;
use touchstone_harness::{Plan, Shape};
use touchstone_results::convergence::Rule;

/// What a round of a micro-benchmark case costs beyond its warm-up,
/// intervals and declared setup: starting and stopping its process, the
/// untimed work around each interval. The quick suite's small cases took
/// 13–15 ms a round for 8 ms of warm-up and intervals (load 3, 2 CPUs).
const PER_ROUND_NS: u64 = 6_000_000;

/// Faulting in and first writing one byte of a case's memory (its
/// `Cost::setup_bytes`), per process and round: the quick suite's 128–512
/// MiB cases (bw_mem, lat_mem_rd, stream) took 0.55–0.77 ns a byte beyond
/// their estimate before setup was counted (load 3, 2 CPUs).
pub const SETUP_NS_PER_BYTE: f64 = 0.65;

/// Writing and fsyncing one byte of a test file (`Cost::synced_file`), per
/// process and round: io's 4 MiB files added about 22 ms a round whatever
/// the pass (bs:1m, buffered: 55–65 ms a round for 33 ms estimated
/// without them; load 5, the development VM's virtual disk).
pub const SYNCED_FILE_NS_PER_BYTE: f64 = 5.5;

/// Several processes size their loop against the long parallel interval,
/// and a preempted sizing interval is tried again (up to three times: with
/// as many processes as CPUs, nearly every one-second interval sees a
/// preemption), then the warm-up grows the loop that sizing alone made too
/// short: the first round of `stream -P 2` took 7.9 s more than the mean of
/// its later ones at a one-second interval (14.4 s against 6.5 s, load 5,
/// 2 CPUs, 27 Nov 2026; 5–12 s in earlier runs at load 3) — 5 intervals
/// left the estimate 1.6 × short in the quiet sitting of 26 Nov.
const PARALLEL_SIZING_INTERVALS: u64 = 8;

/// Several processes also run while the others warm up (until all are
/// warm) and after their own intervals (until all are done), and with as
/// many processes as CPUs every other task on the machine stretches
/// them: about three intervals a round between them (`stream -P 2`'s
/// later rounds on the 2-CPU VM: 9.9–10.9 s and 7.2–12.3 s in two quiet
/// sittings of 27 Nov, for 6 s of warm-up and intervals and 0.6 s of
/// setup; one interval, the earlier constant, left the estimate 1.5–1.6 ×
/// short).
const PARALLEL_WAIT_INTERVALS: u64 = 3;

/// What a workload trial costs beyond its warm-up and window (starting the
/// server and clients, collecting histograms): `tcp_rr --quick` took 11.4 s
/// for 16 trials of 0.7 s.
const PER_TRIAL_NS: u64 = 5_000_000;

#[derive(Debug, Serialize, PartialEq)]
pub struct CaseEstimate {
    pub name: String,
    pub parallel: u32,
    pub seconds: f64,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct SweepEstimate {
    pub name: String,
    pub loads: Vec<u32>,
    pub cpu_counts: Vec<u32>,
    pub points: usize,
    /// Every point converging after the fewest trials.
    pub seconds: f64,
    /// Every point running its most trials.
    pub max_seconds: f64,
}

/// What a run would do and how long it would take.
#[derive(Debug, Default, Serialize)]
pub struct DryRun {
    pub cases: Vec<CaseEstimate>,
    pub sweeps: Vec<SweepEstimate>,
    pub skipped: Vec<String>,
    pub seconds: f64,
    pub max_seconds: f64,
    /// Each case's (each sweep's fewest-trials) estimate in the order the
    /// run measures them, for the progress bar.
    #[serde(skip)]
    pub order_ns: Vec<u64>,
}

/// One micro-benchmark measurement at `plan.parallel` processes, in ns:
/// in each round, every process's setup (`cost`), the warm-up and timed
/// intervals (none shorter than one iteration) with their untimed work,
/// the waits of several processes for each other; the loop's sizing in the
/// first round; all twice when an overhead baseline is measured first.
pub fn case_ns(plan: &Plan, shape: &Shape, baseline: bool, cost: &Cost) -> u64 {
    let interval = plan.interval_target(shape).max(cost.iteration_ns);
    let warmup = plan.warmup_ns.max(shape.warmup_ns).max(interval);
    let processes = u64::from(plan.parallel.max(1));
    let several = processes > 1;
    let timed = warmup + u64::from(plan.repetitions) * interval;
    let untimed = (timed as f64 * cost.untimed_ratio) as u64;
    let per_byte = if cost.synced_file {
        SYNCED_FILE_NS_PER_BYTE
    } else {
        SETUP_NS_PER_BYTE
    };
    let setup = (cost.setup_bytes as f64 * per_byte) as u64 * processes;
    let waits = if several {
        PARALLEL_WAIT_INTERVALS * interval
    } else {
        0
    };
    let sizing = match (shape.fixed_iterations, several) {
        (Some(_), _) => 0,
        (None, true) => PARALLEL_SIZING_INTERVALS * interval,
        (None, false) => interval,
    };
    let round = timed + untimed + setup + waits + PER_ROUND_NS;
    let one = sizing + u64::from(plan.rounds.max(1)) * round;
    if baseline {
        2 * one
    } else {
        one
    }
}

/// One workload sweep of `points` points: (fewest, most) ns.
pub fn sweep_ns(points: usize, trial: &TrialPlan, rule: &Rule) -> (u64, u64) {
    let one = trial.warmup_ns + trial.window_ns + PER_TRIAL_NS;
    let fewest = (rule.min_trials + 1).min(rule.max_trials.max(1)) as u64;
    let most = rule.max_trials.max(1) as u64;
    let p = points as u64;
    (p * fewest * one, p * most * one)
}

impl DryRun {
    pub fn case(&mut self, name: &str, parallel: u32, ns: u64) {
        self.order_ns.push(ns);
        self.cases.push(CaseEstimate {
            name: name.to_string(),
            parallel,
            seconds: ns as f64 * 1e-9,
        });
        self.seconds += ns as f64 * 1e-9;
        self.max_seconds += ns as f64 * 1e-9;
    }

    pub fn sweep(&mut self, name: &str, loads: Vec<u32>, cpu_counts: Vec<u32>, ns: (u64, u64)) {
        self.order_ns.push(ns.0);
        self.seconds += ns.0 as f64 * 1e-9;
        self.max_seconds += ns.1 as f64 * 1e-9;
        self.sweeps.push(SweepEstimate {
            name: name.to_string(),
            points: loads.len() * cpu_counts.len(),
            loads,
            cpu_counts,
            seconds: ns.0 as f64 * 1e-9,
            max_seconds: ns.1 as f64 * 1e-9,
        });
    }

    /// The listing for a terminal: one line per case, then the total.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let width = self
            .cases
            .iter()
            .map(|c| c.name.len())
            .chain(self.sweeps.iter().map(|s| s.name.len()))
            .max()
            .unwrap_or(0);
        for c in &self.cases {
            out += &format!(
                "  {:width$}  ×{:<4} {:>9}\n",
                c.name,
                c.parallel,
                duration(c.seconds)
            );
        }
        for s in &self.sweeps {
            let time = if s.max_seconds > s.seconds * 1.01 {
                format!("{} to {}", duration(s.seconds), duration(s.max_seconds))
            } else {
                duration(s.seconds)
            };
            out += &format!(
                "  {:width$}  loads {} × CPUs {}: {} points, {time}\n",
                s.name,
                list(&s.loads),
                list(&s.cpu_counts),
                s.points,
            );
        }
        for why in &self.skipped {
            out += &format!("  skipped {why}\n");
        }
        let upper = if self.max_seconds > self.seconds * 1.01 {
            format!(
                " (up to {} if every workload point needs its most trials)",
                duration(self.max_seconds)
            )
        } else {
            String::new()
        };
        out += &format!(
            "{} measurement(s), {} workload sweep(s); estimated time about {}{upper}. Nothing was run.\n",
            self.cases.len(),
            self.sweeps.len(),
            duration(self.seconds)
        );
        out
    }
}

fn list(xs: &[u32]) -> String {
    xs.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// A duration for people: 850 ms, 12.3 s, 4 min 05 s, 1 h 02 min.
pub fn duration(seconds: f64) -> String {
    if seconds < 1.0 {
        format!("{:.0} ms", seconds * 1e3)
    } else if seconds < 60.0 {
        format!("{seconds:.1} s")
    } else if seconds < 3600.0 {
        let s = seconds.round() as u64;
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        let m = (seconds / 60.0).round() as u64;
        format!("{} h {:02} min", m / 60, m % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rounds` rounds, each a 10 ms warm-up and three intervals of 5 ms.
    fn rounds_of_three_5ms_intervals(rounds: u32) -> Plan {
        Plan {
            rounds,
            repetitions: 3,
            target_ns: 5_000_000,
            warmup_ns: 10_000_000,
            ..Plan::default()
        }
    }

    #[test]
    fn a_case_costs_its_rounds_of_warm_up_and_repetitions_and_one_sizing() {
        let plan = rounds_of_three_5ms_intervals(5);
        let shape = Shape::latency(1.0);
        let one = case_ns(&plan, &shape, false, &Cost::default());
        assert_eq!(
            one,
            5_000_000 + 5 * (10_000_000 + 3 * 5_000_000 + PER_ROUND_NS)
        );
        assert_eq!(case_ns(&plan, &shape, true, &Cost::default()), 2 * one);
        // Several processes: the long parallel interval.
        let par = Plan {
            parallel: 4,
            ..plan.clone()
        };
        assert!(case_ns(&par, &shape, false, &Cost::default()) >= 15 * par.parallel_target_ns);
    }

    #[test]
    fn each_process_pays_its_setup_in_every_round() {
        let plan = Plan {
            rounds: 5,
            ..Plan::default()
        };
        let shape = Shape::latency(1.0);
        let bare = case_ns(&plan, &shape, false, &Cost::default());
        let cost = Cost {
            setup_bytes: 256 << 20,
            ..Cost::default()
        };
        let one_round = (f64::from(256u32 << 20) * SETUP_NS_PER_BYTE) as u64;
        assert_eq!(case_ns(&plan, &shape, false, &cost), bare + 5 * one_round);
        let two = Plan {
            parallel: 2,
            ..plan.clone()
        };
        assert_eq!(
            case_ns(&two, &shape, false, &cost) - case_ns(&two, &shape, false, &Cost::default()),
            5 * 2 * one_round
        );
    }

    #[test]
    fn several_processes_size_alone_and_wait_for_each_other() {
        let plan = Plan {
            rounds: 5,
            repetitions: 3,
            parallel: 2,
            parallel_target_ns: 1_000_000_000,
            warmup_ns: 10_000_000,
            ..Plan::default()
        };
        let second = 1_000_000_000;
        // Sizing 8 intervals once; each round a 1 s warm-up, 3 intervals
        // and 3 intervals of waiting.
        assert_eq!(
            case_ns(&plan, &Shape::latency(1.0), false, &Cost::default()),
            8 * second + 5 * (7 * second + PER_ROUND_NS)
        );
    }

    #[test]
    fn long_iterations_and_untimed_work_lengthen_the_rounds() {
        let plan = rounds_of_three_5ms_intervals(1);
        // One iteration of 100 ms: every interval (and the warm-up) is one.
        let long = Cost {
            iteration_ns: 100_000_000,
            ..Cost::default()
        };
        // Untimed work twice the timed: three times the warm-up and intervals.
        let untimed = Cost {
            untimed_ratio: 2.0,
            ..Cost::default()
        };
        for (cost, want) in [
            (long, 100_000_000 + 4 * 100_000_000 + PER_ROUND_NS),
            (untimed, 5_000_000 + 3 * 25_000_000 + PER_ROUND_NS),
        ] {
            let got = case_ns(&plan, &Shape::latency(1.0), false, &cost);
            assert_eq!(got, want, "{cost:?}");
        }
    }

    #[test]
    fn a_sweep_costs_trials_of_warm_up_and_window_at_every_point() {
        let trial = TrialPlan {
            warmup_ns: 1_000_000_000,
            window_ns: 3_000_000_000,
            ..TrialPlan::default()
        };
        let rule = Rule {
            min_trials: 3,
            max_trials: 10,
            ..Rule::default()
        };
        let (low, high) = sweep_ns(6, &trial, &rule);
        let one = 4_000_000_000 + PER_TRIAL_NS;
        assert_eq!(low, 6 * 4 * one);
        assert_eq!(high, 6 * 10 * one);
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(0.85), "850 ms");
        assert_eq!(duration(12.34), "12.3 s");
        assert_eq!(duration(245.0), "4 min 05 s");
        assert_eq!(duration(3720.0), "1 h 02 min");
    }

    #[test]
    fn the_listing_totals_cases_and_sweeps() {
        let mut d = DryRun::default();
        d.case("lat_syscall/null", 1, 60_000_000);
        d.case("lat_syscall/null", 2, 2_000_000_000);
        d.sweep(
            "tcp_rr",
            vec![1, 2],
            vec![2],
            (8_000_000_000, 20_000_000_000),
        );
        let t = d.text();
        assert!(t.contains("lat_syscall/null  ×2"), "{t}");
        assert!(
            t.contains("loads 1,2 × CPUs 2: 2 points, 8.0 s to 20.0 s"),
            "{t}"
        );
        assert!(t.contains("about 10.1 s (up to 22.1 s"), "{t}");
        assert!(t.contains("Nothing was run"), "{t}");
        assert_eq!(d.order_ns, [60_000_000, 2_000_000_000, 8_000_000_000]);
    }
}
