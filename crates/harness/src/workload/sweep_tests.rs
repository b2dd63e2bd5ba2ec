//! The engine's sweeps with the fake workloads of `tests`: every load at
//! every CPU count, a time budget, bad input refused, a point's trials
//! merged exactly, a workload's own rate, traffic beside the clients.

use std::time::Duration;

use touchstone_results::convergence::{assess, Rule};
use touchstone_results::curve::latency_histogram;

use super::tests::*;
use super::*;

#[derive(Default)]
struct Recorder {
    outcomes: Vec<TrialOutcome>,
    started: Vec<(u32, usize, u32)>,
    points: usize,
}

impl SweepObserver for Recorder {
    fn trial_started(&mut self, load: u32, cpus: usize, trial: u32) {
        self.started.push((load, cpus, trial));
    }
    fn trial_finished(&mut self, outcome: &TrialOutcome) {
        self.outcomes.push(outcome.clone());
    }
    fn point(&mut self, _: &touchstone_results::curve::Point) {
        self.points += 1;
    }
}

#[test]
fn a_sweep_measures_every_load_at_every_cpu_count_with_every_client_through_the_window() {
    let mut w = Fake::new(ClientKind::Processes);
    w.server = true;
    let usable = all_cpus().len() as u32;
    let plan = SweepPlan {
        loads: Some(vec![1, 3]),
        cpu_counts: vec![1, usable + 1],
        trial: short(),
        rule: Rule {
            confidence: 0.95,
            width: 1.0,
            min_trials: 2,
            max_trials: 3,
        },
        budget: None,
    };
    let mut rec = Recorder::default();
    let s = sweep(&mut w, &plan, &mut rec).unwrap();
    assert_eq!(s.unmeasured_cpus, vec![usable + 1]);
    let counts: Vec<u32> = if usable == 1 {
        vec![1]
    } else {
        vec![1, usable]
    };
    assert_eq!(s.points.len(), 2 * counts.len());
    assert_eq!(rec.points, s.points.len());
    let mut k = 0;
    for &c in &counts {
        for load in [1, 3] {
            let p = &s.points[k];
            k += 1;
            assert_eq!((p.load, p.cpus), (load, c));
            assert_eq!(p.cpu_ids.len(), c as usize);
            assert!((2..=3).contains(&p.trials.len()));
            assert!(p.throughput > 0.0);
            assert!(p.latency.p50_ns <= p.latency.p99_ns && p.latency.p99_ns <= p.latency.max_ns);
            assert!(p.service_demand.server_ns_per_op.is_some());
            let split = p.cpu;
            let sum =
                split.user + split.system + split.irq + split.softirq + split.steal + split.idle;
            assert!((sum - 1.0).abs() < 1e-9 || sum == 0.0, "{split:?}");
            // The point's histogram holds exactly its kept trials' operations.
            let kept_ops: u64 = p.kept_trials().map(|t| t.ops).sum();
            assert_eq!(p.latency.count, kept_ops);
            assert_eq!(p.latency.histogram.decode().unwrap().len(), kept_ops);
        }
    }
    // The curve of real points survives the results model's JSON: counts
    // and histograms exactly, floats to their last digit or so (serde_json
    // parses floats without its `float_roundtrip` feature).
    let curve = s.clone().into_curve("fake", Default::default(), "op");
    assert_eq!(curve.unmeasured_cpus, vec![usable + 1]);
    let back: touchstone_results::curve::Curve =
        serde_json::from_str(&serde_json::to_string(&curve).unwrap()).unwrap();
    assert_eq!(back.points.len(), curve.points.len());
    for (b, p) in back.points.iter().zip(&curve.points) {
        assert_eq!(b.latency.histogram, p.latency.histogram);
        let ints = |l: &touchstone_results::curve::Latency| {
            (
                l.count, l.min_ns, l.p50_ns, l.p90_ns, l.p99_ns, l.p999_ns, l.max_ns,
            )
        };
        assert_eq!(ints(&b.latency), ints(&p.latency));
        assert_eq!(b.latency.histogram.decode().unwrap().len(), p.latency.count);
        assert_eq!(
            (b.load, b.cpus, b.trials.len()),
            (p.load, p.cpus, p.trials.len())
        );
        assert!((b.throughput - p.throughput).abs() <= 1e-12 * p.throughput);
        assert_eq!(b.convergence.converged, p.convergence.converged);
    }
    assert_eq!(rec.outcomes.len(), rec.started.len());
    for o in &rec.outcomes {
        assert!(
            o.every_client_ran_through(),
            "{:?} {:?}",
            o.window,
            o.clients
        );
        assert!(o.pids.iter().all(|&p| gone(p)));
    }
}

#[test]
fn a_time_budget_stops_trials_at_the_minimum_and_flags_the_point() {
    // A width no trial series reaches: without a budget every point runs
    // to max_trials; with a budget already spent, each runs its minimum
    // and says the budget cut it.
    let rule = Rule {
        confidence: 0.95,
        width: 1e-12,
        min_trials: 2,
        max_trials: 4,
    };
    let mut w = Fake::new(ClientKind::Processes);
    w.op_ns = 100_000;
    // Two trials with equal throughputs would converge at any width (on a
    // quiet machine two trials of the fake can): each trial slower.
    w.slowing = Some(SharedPids::new(1));
    let cpus = all_cpus().len() as u32;
    let plan = |budget| SweepPlan {
        loads: Some(vec![1, 2]),
        cpu_counts: vec![cpus],
        trial: short(),
        rule,
        budget,
    };
    let spent = sweep(
        &mut w,
        &plan(Some(Budget::Total(Duration::from_millis(1)))),
        &mut Recorder::default(),
    )
    .unwrap();
    for p in &spent.points {
        assert_eq!(p.trials.len(), 2, "load {}", p.load);
        assert!(!p.convergence.converged && p.convergence.cut_by_budget);
    }
    let free = sweep(&mut w, &plan(None), &mut Recorder::default()).unwrap();
    for p in &free.points {
        assert_eq!(p.trials.len(), 4, "load {}", p.load);
        assert!(!p.convergence.converged && !p.convergence.cut_by_budget);
    }
    assert_eq!(
        Budget::PerPoint(Duration::from_secs(22)).total(4),
        Duration::from_secs(88)
    );
}

#[test]
fn bad_input_is_refused_before_anything_runs() {
    let mut w = Fake::new(ClientKind::Processes);
    w.max = Some(8);
    let err = |plan: &SweepPlan| validate(&w, plan, 2).unwrap_err().to_string();
    let base = SweepPlan::quick();
    assert!(err(&SweepPlan {
        loads: Some(vec![1, 0]),
        ..base.clone()
    })
    .contains("load 0"));
    assert!(err(&SweepPlan {
        loads: Some(vec![9]),
        ..base.clone()
    })
    .contains("maximum of 8"));
    assert!(err(&SweepPlan {
        loads: Some(vec![7]),
        ..base.clone()
    })
    .contains("ulimit -n"));
    assert!(err(&SweepPlan {
        cpu_counts: vec![0],
        ..base.clone()
    })
    .contains("CPU count of 0"));
    let mut zero_width = base.clone();
    zero_width.rule.width = 0.0;
    assert!(err(&zero_width).contains("width"));
    let mut no_rate = base.clone();
    no_rate.trial.pacing = Pacing::Open { rate: 0.0 };
    assert!(err(&no_rate).contains("rate"));
    let mut slow = base.clone();
    slow.loads = Some(vec![4]);
    slow.trial.pacing = Pacing::Open { rate: 0.1 };
    assert!(err(&slow).contains("every 40.0 s"), "{}", err(&slow));
    let e = tasks_error(100, 64).unwrap();
    assert!(e.contains("ulimit -u") && e.contains("102"), "{e}");
    assert!(tasks_error(10, 64).is_none());
    // The default ladder is bounded by the workload.
    assert_eq!(validate(&w, &base, 4).unwrap(), vec![1, 2, 4, 8]);
    // Nothing ran: no process was ever recorded.
    assert!(w.pids.all().is_empty());
    assert!(run_trial(&mut w, 0, &all_cpus(), &short(), 0).is_err());
}

/// A point from synthetic trials, no clock involved: histograms merge
/// exactly, a dropped warm-up trial is left out of every figure.
#[test]
fn a_point_merges_its_kept_trials_exactly() {
    let outcome = |values: &[u64], throughput: f64, client_cpu: f64| {
        let mut hs = vec![latency_histogram(), latency_histogram()];
        for (i, &v) in values.iter().enumerate() {
            hs[i % 2].record(v).unwrap();
        }
        TrialOutcome {
            load: 2,
            cpus: vec![0],
            started_ns: 0,
            window: (1_000, 1_000_000_001_000),
            ops: values.len() as u64,
            traffic: false,
            throughput,
            // 1 KB per operation.
            bytes: 1000 * values.len() as u64,
            clients: Vec::new(),
            histograms: hs,
            cpu: touchstone_results::curve::CpuSplit {
                user: 0.5,
                idle: 0.5,
                ..Default::default()
            },
            client_cpu_ns: client_cpu,
            server_cpu_ns: Some(client_cpu / 2.0),
            sampled: (0, 0),
            self_check: None,
            pids: Vec::new(),
            energy: Vec::new(),
        }
    };
    let warm = outcome(&[9_000_000; 10], 10.0, 1e9);
    let a = outcome(&[100, 200, 300, 400], 100.0, 400.0);
    let b = outcome(&[150, 250, 350, 450, 550, 650], 101.0, 600.0);
    let c = outcome(&[1000, 2000], 99.0, 200.0);
    let outcomes = vec![warm, a, b, c];
    let rule = Rule::default();
    let series: Vec<f64> = outcomes.iter().map(|o| o.throughput).collect();
    let assessment = assess(&rule, &series);
    assert!(assessment.dropped_first);
    let names = vec!["even".to_string(), "odd".to_string()];
    let p = point_from_trials(2, &[0], &outcomes, &assessment, &rule, &names, true);
    let mut all = latency_histogram();
    for v in [100, 200, 300, 400, 150, 250, 350, 450, 550, 650, 1000, 2000] {
        all.record(v).unwrap();
    }
    let merged = p.latency.histogram.decode().unwrap();
    assert_eq!(merged, all);
    assert_eq!(p.latency.count, 12);
    assert_eq!(p.latency.max_ns, 2000);
    assert_eq!(p.latency.p50_ns, all.value_at_quantile(0.5));
    assert_eq!(p.by_type.len(), 2);
    assert_eq!(p.by_type[0].latency.count + p.by_type[1].latency.count, 12);
    assert!(p.trials[0].dropped && !p.trials[1].dropped);
    assert_eq!(p.throughput, 100.0);
    assert!(p.convergence.converged);
    // (400 + 600 + 200) ns of client CPU over 12 operations.
    assert_eq!(p.service_demand.client_ns_per_op, 100.0);
    assert_eq!(p.service_demand.server_ns_per_op, Some(50.0));
    assert_eq!(p.cpu.user, 0.5);
    // 12 KB over three windows of 1000 s; the warm-up trial's 10 KB left out.
    assert_eq!(p.bytes_per_s, Some(4.0));
    assert_eq!(p.trials[1].bytes, Some(4000));
    let none = point_from_trials(2, &[0], &outcomes, &assessment, &rule, &names, false);
    assert!(none.bytes_per_s.is_none() && none.trials.iter().all(|t| t.bytes.is_none()));
}

/// A workload whose own parameters set an open-loop rate (`pacing`).
struct Paced {
    rate: f64,
    multiplexed: bool,
}
impl Workload for Paced {
    fn pacing(&self) -> Option<Pacing> {
        Some(Pacing::Open { rate: self.rate })
    }
    fn clients(&self, load: u32, _cpus: usize) -> u32 {
        if self.multiplexed {
            1
        } else {
            load
        }
    }
    fn client(&self, _ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        Err("not run".into())
    }
}

#[test]
fn a_workloads_own_rate_replaces_the_plans_pacing_and_is_checked() {
    let w = Paced {
        rate: 500.0,
        multiplexed: false,
    };
    let plan = SweepPlan {
        loads: Some(vec![2]),
        ..SweepPlan::quick()
    };
    assert_eq!(plan.trial.pacing, Pacing::Closed);
    assert_eq!(
        w.trial_plan(&plan.trial, 1).pacing,
        Pacing::Open { rate: 500.0 }
    );
    assert_eq!(validate(&w, &plan, 2).unwrap(), vec![2]);
    // Its rate is held to the same bounds as the plan's…
    let zero = Paced {
        rate: 0.0,
        multiplexed: false,
    };
    let e = validate(&zero, &plan, 2).unwrap_err().to_string();
    assert!(e.contains("rate"), "{e}");
    // …and multiplexed clients cannot keep each connection to a schedule.
    let muxed = Paced {
        rate: 500.0,
        multiplexed: true,
    };
    let e = validate(&muxed, &plan, 2).unwrap_err().to_string();
    assert!(e.contains("one client per connection"), "{e}");
}

/// Counts one operation of traffic per µs of the clock, beside Fake's
/// clients.
struct Traffic(Fake);
impl Workload for Traffic {
    fn traffic_ops(&self) -> Option<u64> {
        Some(crate::clock::now_ns() / 1000)
    }
    fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        self.0.client(ctx)
    }
}

#[test]
fn traffic_beside_the_clients_is_the_throughput_and_the_clients_the_latency() {
    let mut w = Traffic(Fake::new(ClientKind::Processes));
    let o = run_trial(&mut w, 2, &all_cpus(), &short(), 0).unwrap();
    // A million a second, read at the window's edges and scaled to it.
    assert!(o.traffic);
    assert!((o.throughput / 1e6 - 1.0).abs() < 0.01, "{}", o.throughput);
    assert_eq!(
        o.ops,
        (o.throughput * o.window_ns() as f64 / 1e9).round() as u64
    );
    // The clients' 200 µs operations are still what the histograms hold.
    let clients: u64 = o.clients.iter().map(|c| c.window_ops).sum();
    assert_eq!(o.latency().len(), clients);
    assert!(o.latency().value_at_quantile(0.5) >= 200_000);
    assert!(o.every_client_ran_through());
}
