//! Sweeps of a workload: every load of the ladder at every CPU count k
//! (the whole workload confined to k usable CPUs — whole cores before SMT
//! siblings, one NUMA node before the next: `topology` — so that
//! scalability S(k) = X(k) / X(1) reads as seed 003 defines it), and at
//! each point trials repeated until the Student-t interval of the mean
//! throughput converges (`results::convergence`). Bad input is refused by
//! `validate` before anything runs; each point is handed to the observer
//! as soon as it is measured, so a caller can store it at once.

use std::time::Instant;

use hdrhistogram::Histogram;
use touchstone_results::convergence::{assess, Assessment, Rule, Verdict};
use touchstone_results::curve::{
    latency_histogram, Convergence, CpuSplit, Curve, Latency, Point, ServiceDemand, TypeLatency,
};
use touchstone_results::self_check::SelfCheck;

use super::client::OpCpu;
use super::cpu;
use super::plan::{Pacing, SweepPlan, TrialPlan};
use super::topology::{CpuChoice, Topology};
use super::trial::{run_trial, TrialOutcome};
use super::{Workload, WorkloadError, MAX_OP_TYPES};

/// Progress of a sweep. Measuring code never prints; the CLI's progress
/// display and the tests' recorders implement this.
pub trait SweepObserver {
    /// The CPUs the points of one CPU count run on, and why those.
    fn cpus_chosen(&mut self, _choice: &CpuChoice) {}
    fn trial_started(&mut self, _load: u32, _cpus: usize, _trial: u32) {}
    fn trial_finished(&mut self, _outcome: &TrialOutcome) {}
    /// A point is complete (store it now).
    fn point(&mut self, _point: &Point) {}
}

impl SweepObserver for crate::events::NoObserver {}

/// A sweep's points, and the CPU counts asked for that the machine lacks.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// For each CPU count, each load, in that order.
    pub points: Vec<Point>,
    pub unmeasured_cpus: Vec<u32>,
}

impl Sweep {
    /// The results model's curve of this sweep.
    pub fn into_curve(
        self,
        workload: &str,
        params: std::collections::BTreeMap<String, String>,
        operation: &str,
    ) -> Curve {
        Curve {
            workload: workload.to_string(),
            params,
            operation: operation.to_string(),
            points: self.points,
            bytes_per_op: None,
            unmeasured_cpus: self.unmeasured_cpus,
        }
    }
}

/// The default ladder: 1, 2, 4, … doubling up to 4 × `cpus` (which ends
/// it even when not a power of two), none above the workload's `max`
/// (which ends it instead when smaller).
pub fn default_loads(cpus: usize, max: Option<u32>) -> Vec<u32> {
    default_loads_from(1, cpus, max)
}

/// The default ladder of a workload whose smallest load is `min`: `min`,
/// 2·`min`, 4·`min`, … up to 4 × `cpus` (just `min` when that is above it),
/// none above `max`.
pub fn default_loads_from(min: u32, cpus: usize, max: Option<u32>) -> Vec<u32> {
    let min = min.max(1);
    let top = (4 * cpus.max(1) as u64)
        .max(min as u64)
        .min(max.unwrap_or(u32::MAX) as u64) as u32;
    let mut loads = Vec::new();
    let mut l = min;
    while l < top {
        loads.push(l);
        l = l.saturating_mul(2);
    }
    loads.push(top.max(1));
    loads
}

/// A quick run's ladder: a client per CPU (the machine busy) and four per
/// CPU (queueing), from `min`, within `max` — two points where the
/// default ladder has four or five.
pub fn quick_loads_from(min: u32, cpus: usize, max: Option<u32>) -> Vec<u32> {
    let cap = max.unwrap_or(u32::MAX).max(1);
    let one = (cpus.max(1) as u32).max(min).min(cap);
    let four = (4 * cpus.max(1) as u32).max(min).min(cap);
    let mut v = vec![one, four];
    v.dedup();
    v
}

/// The ladder of a workload with a quick form: `quick_loads_from` in a
/// quick run, `default_loads_from` otherwise.
pub fn loads_from(quick: bool, min: u32, cpus: usize, max: Option<u32>) -> Vec<u32> {
    if quick {
        quick_loads_from(min, cpus, max)
    } else {
        default_loads_from(min, cpus, max)
    }
}

/// The CPU counts that can be measured on `usable` CPUs, in the order
/// asked, and those that cannot (more than the machine has). Each count
/// too large is replaced by all the usable CPUs ("measure what exists"),
/// unless that count is measured anyway. An empty list asks for all.
pub fn resolve_cpu_counts(asked: &[u32], usable: usize) -> (Vec<u32>, Vec<u32>) {
    let all = usable as u32;
    if asked.is_empty() {
        return (vec![all], Vec::new());
    }
    let mut measured = Vec::new();
    let mut missing = Vec::new();
    for &k in asked {
        if k > all {
            missing.push(k);
        }
        let k = k.min(all);
        if !measured.contains(&k) {
            measured.push(k);
        }
    }
    (measured, missing)
}

/// Refuse bad input before anything runs, each error naming the problem.
/// Returns the loads the sweep will measure.
pub fn validate(
    w: &dyn Workload,
    plan: &SweepPlan,
    usable: usize,
) -> Result<Vec<u32>, WorkloadError> {
    let invalid = |m: String| Err(WorkloadError::Invalid(m));
    let types = w.op_types().len();
    if !(1..=MAX_OP_TYPES).contains(&types) {
        return invalid(format!(
            "the workload declares {types} operation types; 1 to {MAX_OP_TYPES} are possible"
        ));
    }
    plan.rule.validate().map_err(WorkloadError::Invalid)?;
    validate_trial(&w.trial_plan(&plan.trial, 1))?;
    if let Some(k) = plan.cpu_counts.iter().find(|&&k| k == 0) {
        return invalid(format!("a CPU count of {k}: at least 1 CPU is needed"));
    }
    let loads = match &plan.loads {
        Some(l) if l.is_empty() => return invalid("no loads to measure".into()),
        Some(l) => l.clone(),
        None => w.default_loads(usable),
    };
    for &load in &loads {
        if load == 0 {
            return invalid("load 0: a load is at least 1 client".into());
        }
        if load < w.min_load() {
            return invalid(format!(
                "load {load} is below this workload's minimum of {}",
                w.min_load()
            ));
        }
        if let Some(max) = w.max_load() {
            if load > max {
                return invalid(format!(
                    "load {load} is above this workload's maximum of {max}"
                ));
            }
        }
        if let Some(e) = super::tasks_error(load, super::tasks_limit()) {
            return invalid(e);
        }
        w.check_load(load).map_err(WorkloadError::Invalid)?;
        let trial = w.trial_plan(&plan.trial, load);
        validate_trial(&trial)?;
        // Multiplexed clients complete whichever connection is ready: they
        // cannot keep each connection to a schedule.
        if matches!(trial.pacing, Pacing::Open { .. }) && w.clients(load, 1) < load {
            return invalid(format!(
                "load {load}: an open-loop rate needs one client per connection, and this \
                 workload multiplexes its connections (choose its one-client-per-connection mode)"
            ));
        }
        check_rate(&trial, load)?;
    }
    Ok(loads)
}

/// A trial plan's own bounds.
pub fn validate_trial(plan: &TrialPlan) -> Result<(), WorkloadError> {
    if plan.window_ns == 0 {
        return Err(WorkloadError::Invalid(
            "the measurement window must be longer than 0".into(),
        ));
    }
    if let Pacing::Open { rate } = plan.pacing {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(WorkloadError::Invalid(format!(
                "an open-loop rate of {rate} operations/s: it must be above 0"
            )));
        }
    }
    Ok(())
}

/// An open-loop rate so low that a client would wait half the stall
/// timeout between operations cannot be told from a stall.
fn check_rate(plan: &TrialPlan, load: u32) -> Result<(), WorkloadError> {
    if let Pacing::Open { rate } = plan.pacing {
        let gap_s = load as f64 / rate;
        if gap_s > plan.stall_timeout.as_secs_f64() / 2.0 {
            return Err(WorkloadError::Invalid(format!(
                "an open-loop rate of {rate} operations/s gives each of {load} clients one \
                 operation every {gap_s:.1} s; raise the rate or lower the load"
            )));
        }
    }
    Ok(())
}

/// Measure every point of `plan`.
pub fn sweep(
    w: &mut dyn Workload,
    plan: &SweepPlan,
    observer: &mut dyn SweepObserver,
) -> Result<Sweep, WorkloadError> {
    let usable = cpu::usable_cpus().map_err(|e| WorkloadError::Setup(e.to_string()))?;
    let loads = validate(&*w, plan, usable.len())?;
    let (counts, unmeasured_cpus) = resolve_cpu_counts(&plan.cpu_counts, usable.len());
    let mut points = Vec::new();
    let total = counts.len() * loads.len();
    let end = plan.budget.map(|b| Instant::now() + b.total(total));
    let topology = Topology::read(std::path::Path::new("/sys/devices/system"), &usable);
    for &k in &counts {
        let choice = topology.choose(&usable, k as usize);
        observer.cpus_chosen(&choice);
        let cpus = &choice.cpus[..];
        for &load in &loads {
            // This point's share of the time left: what remains over the
            // points still to measure (an early point that converged fast
            // leaves more to the later ones).
            let left = (total - points.len()) as u32;
            let share =
                end.map(|e| Instant::now() + e.saturating_duration_since(Instant::now()) / left);
            let mut point = measure_point(w, load, cpus, &plan.trial, &plan.rule, share, observer)?;
            point.cpu_choice = Some(choice.why.clone());
            observer.point(&point);
            points.push(point);
        }
    }
    Ok(Sweep {
        points,
        unmeasured_cpus,
    })
}

/// Trials of one point until `rule` says stop, or — past the rule's
/// minimum — until another trial would end after `stop_by`.
pub fn measure_point(
    w: &mut dyn Workload,
    load: u32,
    cpus: &[usize],
    plan: &TrialPlan,
    rule: &Rule,
    stop_by: Option<Instant>,
    observer: &mut dyn SweepObserver,
) -> Result<Point, WorkloadError> {
    rule.validate().map_err(WorkloadError::Invalid)?;
    let own = w.trial_plan(plan, load);
    let plan = &own;
    validate_trial(plan)?;
    check_rate(plan, load)?;
    let mut outcomes = Vec::new();
    let mut series = Vec::new();
    let names: Vec<String> = w.op_types().iter().map(|s| s.to_string()).collect();
    loop {
        let n = outcomes.len() as u32;
        observer.trial_started(load, cpus.len(), n);
        let began = Instant::now();
        let o = run_trial(w, load, cpus, plan, n)?;
        let took = began.elapsed();
        observer.trial_finished(&o);
        series.push(o.throughput);
        outcomes.push(o);
        let mut a = assess(rule, &series);
        let over_budget = stop_by.is_some_and(|t| Instant::now() + took > t);
        let cut = a.verdict == Verdict::More && a.kept >= rule.min_trials && over_budget;
        if cut {
            a.verdict = Verdict::NotConverged;
        }
        if a.verdict != Verdict::More {
            let mut p =
                point_from_trials(load, cpus, &outcomes, &a, rule, &names, w.counts_bytes());
            p.convergence.cut_by_budget = cut;
            return Ok(p);
        }
    }
}

/// The results model's point from its trials and the rule's assessment:
/// the kept trials' histograms merged, their CPU splits averaged, their
/// CPU time summed over their operations.
pub fn point_from_trials(
    load: u32,
    cpus: &[usize],
    outcomes: &[TrialOutcome],
    a: &Assessment,
    rule: &Rule,
    op_types: &[String],
    counts_bytes: bool,
) -> Point {
    let kept = if a.dropped_first {
        &outcomes[1..]
    } else {
        outcomes
    };
    let mut by_type: Vec<Histogram<u64>> = vec![latency_histogram(); op_types.len()];
    let mut all = latency_histogram();
    let mut cpu = OpCpu::default();
    for c in kept.iter().flat_map(|o| &o.clients) {
        cpu.add(&c.cpu);
    }
    for o in kept {
        for (ty, h) in o.histograms.iter().enumerate() {
            by_type[ty]
                .add(h)
                .expect("latency histograms share their bounds");
            all.add(h).expect("latency histograms share their bounds");
        }
    }
    let ops: u64 = kept.iter().map(|o| o.ops).sum();
    let per_op = |ns: f64| if ops == 0 { 0.0 } else { ns / ops as f64 };
    let server = kept.iter().map(|o| o.server_cpu_ns).sum::<Option<f64>>();
    let trials: Vec<_> = outcomes
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let mut t = o.to_trial(counts_bytes);
            t.dropped = a.dropped_first && i == 0;
            t
        })
        .collect();
    let kept_energy: Vec<_> = trials
        .iter()
        .filter(|t| !t.dropped && !t.extra.is_empty())
        .map(|t| (&t.extra, t.window_ns, t.ops))
        .collect();
    // Over every kept trial or none: a trial whose reads failed leaves the
    // point without a figure rather than with a partial one.
    let extra = if kept_energy.len() == kept.len() {
        crate::energy::over_trials(&kept_energy)
    } else {
        Default::default()
    };
    Point {
        load,
        cpus: cpus.len() as u32,
        cpu_ids: cpus.iter().map(|&c| c as u32).collect(),
        trials,
        throughput: a.mean,
        throughput_half_width: a.half_width,
        bytes_per_s: counts_bytes.then(|| {
            let bytes: u64 = kept.iter().map(|o| o.bytes).sum();
            let ns: u64 = kept.iter().map(|o| o.window_ns()).sum();
            bytes as f64 * 1e9 / ns.max(1) as f64
        }),
        convergence: Convergence::from_assessment(*rule, a),
        latency: Latency::of(&all),
        by_type: if op_types.len() > 1 {
            op_types
                .iter()
                .zip(&by_type)
                .enumerate()
                .map(|(ty, (name, h))| TypeLatency {
                    name: name.clone(),
                    latency: Latency::of(h),
                    cpu_ns_per_op: cpu.mean_ns(ty),
                })
                .collect()
        } else {
            Vec::new()
        },
        cpu: CpuSplit::mean(&kept.iter().map(|o| o.cpu).collect::<Vec<_>>()),
        service_demand: ServiceDemand {
            client_ns_per_op: per_op(kept.iter().map(|o| o.client_cpu_ns).sum()),
            server_ns_per_op: server.map(per_op),
        },
        self_check: SelfCheck::of_trials(kept.iter().filter_map(|o| o.self_check.as_ref())),
        cpu_choice: None,
        extra,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_ladder_doubles_to_four_times_the_cpus() {
        assert_eq!(default_loads(2, None), vec![1, 2, 4, 8]);
        assert_eq!(default_loads(1, None), vec![1, 2, 4]);
        assert_eq!(default_loads(3, None), vec![1, 2, 4, 8, 12]);
        assert_eq!(default_loads(2, Some(6)), vec![1, 2, 4, 6]);
        assert_eq!(default_loads(8, Some(1)), vec![1]);
        // A workload whose smallest load is 2 (a chat room) or 12.
        assert_eq!(default_loads_from(2, 2, None), vec![2, 4, 8]);
        assert_eq!(default_loads_from(4, 3, None), vec![4, 8, 12]);
        assert_eq!(default_loads_from(12, 2, None), vec![12]);
        assert_eq!(quick_loads_from(1, 2, None), vec![2, 8]);
        assert_eq!(quick_loads_from(3, 1, None), vec![3, 4]);
        assert_eq!(quick_loads_from(1, 2, Some(4)), vec![2, 4]);
        assert_eq!(quick_loads_from(1, 4, Some(2)), vec![2]);
        assert_eq!(loads_from(true, 1, 2, None), quick_loads_from(1, 2, None));
        assert_eq!(
            loads_from(false, 1, 2, None),
            default_loads_from(1, 2, None)
        );
    }

    #[test]
    fn cpu_counts_beyond_the_machine_are_named_and_what_exists_is_measured() {
        assert_eq!(
            resolve_cpu_counts(&[1, 2, 4, 8], 2),
            (vec![1, 2], vec![4, 8])
        );
        assert_eq!(resolve_cpu_counts(&[4], 2), (vec![2], vec![4]));
        assert_eq!(resolve_cpu_counts(&[], 3), (vec![3], vec![]));
        assert_eq!(resolve_cpu_counts(&[2, 1], 4), (vec![2, 1], vec![]));
    }
}
