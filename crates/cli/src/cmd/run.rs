//! `touchstone run`: check everything the user asked for, then measure each
//! case in a run session (`crate::session`), which commits each measurement
//! to the store the moment it is done and always finishes the stored run.
//! Micro-benchmarks and workloads mix in one selection: a workload case is
//! swept into a load curve (its `load:` ladder × `--cpus`, trials until
//! `--converge`; a micro-benchmark given `--converge` repeats rounds of its
//! repetitions until its median's interval is that narrow), checked — loads, limits, CPU counts, the rule — with the
//! rest before anything runs.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use touchstone_catalogue::select::{Selected, Selection};
use touchstone_catalogue::{select, RunContext};
use touchstone_harness::plan::MAX_REPETITIONS;
use touchstone_harness::workload::{self, cpu, resolve_cpu_counts, Budget, SweepPlan, TrialPlan};
use touchstone_harness::{Benchmark, CaseLabel, Plan};
use touchstone_results::convergence::Rule;
use touchstone_results::curve::Curve;
use touchstone_results::WorkloadOptions;

use super::dry_run::{self, DryRun};
use crate::args::RunArgs;
use crate::error::CliError;
use crate::option_values::{check_label, duration};
use crate::session::{failpoint, Quiet, Request, Session};

/// Trials at a point in quick mode: at most 4 (3 kept after a warm-up
/// trial), so that a quick sweep of tcp_rr stays within seconds.
const QUICK_MAX_TRIALS: usize = 4;

/// The default sweep budget per point: the rule's minimum of three
/// default trials (about 4.2 s each) and a couple more, so that the default
/// sweep on 2 CPUs (4 loads) stays within 90 s even where the machine is
/// too noisy for the trials to converge.
const DEFAULT_BUDGET_PER_POINT: Duration = Duration::from_secs(22);

/// The most processes one measurement may start.
const MAX_PARALLEL: u32 = 1024;

/// Stage one: raw arguments to a checked plan, before anything runs.
fn plan(a: &RunArgs) -> Result<Plan, CliError> {
    let mut plan = if a.quick {
        Plan::quick()
    } else {
        Plan::default()
    };
    check_label(a.label.as_deref())?;
    if let Some(&bad) = a.parallel.iter().find(|&&p| p == 0 || p > MAX_PARALLEL) {
        return Err(CliError::Usage(format!(
            "--parallel {bad}: must be 1..={MAX_PARALLEL}"
        )));
    }
    if let Some(r) = a.repetitions {
        if r == 0 || r > MAX_REPETITIONS {
            return Err(CliError::Usage(format!(
                "--repetitions {r}: must be 1..={MAX_REPETITIONS}"
            )));
        }
        plan.repetitions = r;
    }
    if let Some(i) = &a.interval {
        plan.target_ns = duration("--interval", i, 10_000, 10_000_000_000)?;
    }
    Ok(plan)
}

/// How every workload case of the run is swept (all but its loads).
struct SweepSettings {
    trial: TrialPlan,
    rule: Rule,
    cpu_counts: Vec<u32>,
    budget: Option<Budget>,
}

impl SweepSettings {
    fn options(&self) -> WorkloadOptions {
        WorkloadOptions {
            cpus: self.cpu_counts.clone(),
            converge: self.rule,
            warmup_ns: self.trial.warmup_ns,
            window_ns: self.trial.window_ns,
        }
    }

    fn plan(&self, case: &Selected) -> SweepPlan {
        SweepPlan {
            loads: case.loads.clone(),
            cpu_counts: self.cpu_counts.clone(),
            trial: self.trial.clone(),
            rule: self.rule,
            budget: self.budget,
        }
    }
}

/// Stage one for workloads: the flags that only workloads take, checked
/// (a CPU count of 0, a confidence outside 50–100 % or a width outside
/// 0–100 % (`Rule::parse`), a window out of bounds are refused here).
fn sweep_settings(a: &RunArgs) -> Result<SweepSettings, CliError> {
    let mut trial = if a.quick {
        TrialPlan::quick()
    } else {
        TrialPlan::default()
    };
    if let Some(w) = &a.window {
        trial.window_ns = duration("--window", w, 10_000_000, 3_600_000_000_000)?;
    }
    if let Some(w) = &a.warmup {
        trial.warmup_ns = duration("--warmup", w, 0, 3_600_000_000_000)?;
    }
    let mut rule = match &a.converge {
        Some(text) => Rule::parse(text).map_err(|e| CliError::Usage(format!("--converge: {e}")))?,
        None => Rule::default(),
    };
    if a.quick {
        rule.max_trials = QUICK_MAX_TRIALS;
    }
    if a.cpus.contains(&0) {
        return Err(CliError::Usage(
            "--cpus 0: a workload needs at least 1 CPU; give counts such as 1,2,4".into(),
        ));
    }
    // Quick mode is bounded by its trial count; a default sweep by time.
    let budget = match a.budget.as_deref() {
        Some("none") => None,
        Some(text) => Some(Budget::Total(Duration::from_nanos(duration(
            "--budget",
            text,
            1_000_000_000,
            7 * 24 * 3_600_000_000_000,
        )?))),
        None if a.quick => None,
        None => Some(Budget::PerPoint(DEFAULT_BUDGET_PER_POINT)),
    };
    Ok(SweepSettings {
        trial,
        rule,
        cpu_counts: a.cpus.clone(),
        budget,
    })
}

/// Whether any flag only workloads take was given.
fn workload_flags(a: &RunArgs) -> Option<&'static str> {
    [
        (!a.cpus.is_empty(), "--cpus"),
        (a.window.is_some(), "--window"),
        (a.warmup.is_some(), "--warmup"),
        (a.budget.is_some(), "--budget"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag))
}

/// The empty curve of a workload case: what it is, before any point
/// (`bytes_per_op` from the built workload: a bandwidth reads in MB/s).
fn curve_of(case: &Selected, unmeasured_cpus: &[u32], bytes_per_op: Option<u64>) -> Curve {
    Curve {
        workload: case.family.name.to_string(),
        params: case
            .params()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
        operation: case.family.operation().unwrap_or("operation").to_string(),
        bytes_per_op,
        points: Vec::new(),
        unmeasured_cpus: unmeasured_cpus.to_vec(),
    }
}

pub fn run(db: Option<PathBuf>, a: RunArgs) -> Result<(), CliError> {
    match measure(db, &a)? {
        Some((mut session, body)) => {
            session.close_with_summary(a.tables);
            session.finish(body, a.json, |_| String::new())
        }
        None => Ok(()),
    }
}

/// Measure the selection of `a` and hand back the run, printing nothing but
/// progress (`touchstone check`), with the outcome `run` would give.
pub fn measure_quietly(db: Option<PathBuf>, a: &RunArgs) -> Result<Quiet, CliError> {
    let (session, body) = measure(db, a)?.ok_or_else(|| CliError::Usage("--dry-run".into()))?;
    Ok(session.finish_quietly(body))
}

/// Check everything, then measure in a session; None for a dry run (its
/// listing printed).
fn measure(
    db: Option<PathBuf>,
    a: &RunArgs,
) -> Result<Option<(Session, Result<(), CliError>)>, CliError> {
    let mut plan = plan(a)?;
    let settings = sweep_settings(a)?;
    // Micro-benchmarks converge too: rounds of R repetitions until the
    // median's interval is as narrow as asked (quick: at most 4 rounds).
    plan.converge = a.converge.is_some().then_some(settings.rule);
    // The run's context, handed to every family's build; the options of
    // some families checked against the families selected before anything
    // is built (what a check keeps — a device's exclusive claim — the
    // context holds until the run ends).
    let mut ctx = a.family.context(a.quick);
    let max_parallel = *a.parallel.iter().max().unwrap_or(&1);
    let selection = select(&a.benchmarks, &ctx, max_parallel)?;
    ctx.check(selection.cases.iter().map(|c| c.family))
        .map_err(CliError::Usage)?;
    if selection.cases.is_empty() {
        return Err(CliError::Usage(
            "nothing to run: the selection is empty here".into(),
        ));
    }
    let workloads = selection
        .cases
        .iter()
        .filter(|c| c.family.is_workload())
        .count();
    if let (0, Some(flag)) = (workloads, workload_flags(a)) {
        return Err(CliError::Usage(format!(
            "{flag} applies to workloads (e.g. tcp_rr), and the selection has none"
        )));
    }
    let usable = cpu::usable_cpus()
        .map_err(|e| CliError::Usage(format!("cannot read this process's CPUs: {e}")))?
        .len();
    // Build every case once now, so bad parameter combinations fail before
    // anything runs (the real instances are built again just before use);
    // a workload's sweep is checked whole: its loads against the workload's
    // maximum and this shell's limits (`ulimit -n`, `ulimit -u`).
    let (measured_cpus, unmeasured_cpus) = resolve_cpu_counts(&settings.cpu_counts, usable);
    let mut dry = DryRun::default();
    for c in &selection.cases {
        let usage = |m: String| CliError::Usage(format!("{}: {m}", c.name));
        if c.family.is_workload() {
            let w = c.family.make_workload(&c.point, &ctx).map_err(usage)?;
            let loads = workload::validate(&*w, &settings.plan(c), usable)
                .map_err(|e| usage(e.to_string()))?;
            let cost = dry_run::sweep_ns(
                loads.len() * measured_cpus.len(),
                &settings.trial,
                &settings.rule,
            );
            dry.sweep(&c.name, loads, measured_cpus.clone(), cost);
        } else {
            let built = c.family.make(&c.point, &ctx).map_err(usage)?;
            for &p in &a.parallel {
                let at = Plan {
                    parallel: p,
                    ..plan.clone()
                };
                let cost = dry_run::case_ns(&at, &built.shape, built.baseline.is_some());
                dry.case(&c.name, p, cost);
            }
        }
    }
    if a.dry_run {
        dry.skipped = selection
            .skipped
            .iter()
            .map(|(name, why)| format!("{name}: {why}"))
            .collect();
        if a.json {
            crate::output::print_json(&format!(
                "{}\n",
                serde_json::to_string_pretty(&dry).expect("serialisable")
            ));
        } else {
            crate::output::print(&dry.text());
        }
        return Ok(None);
    }
    let mut session = Session::start(
        Request {
            db,
            store: !a.no_store,
            label: a.label.clone(),
            selection: a.benchmarks.clone(),
            parallel: a.parallel.clone(),
            quick: a.quick,
            planned: (selection.cases.len() - workloads) * a.parallel.len() + workloads,
            workload: (workloads > 0).then(|| settings.options()),
        },
        &mut plan,
    )?;
    // One name per `start_case`, so a run stopped early names what it missed.
    session.plan_cases(
        selection
            .cases
            .iter()
            .flat_map(|c| {
                let levels = if c.family.is_workload() {
                    &[1][..]
                } else {
                    &a.parallel[..]
                };
                levels.iter().map(move |&p| match p {
                    1 => c.name.clone(),
                    p => format!("{} ×{p}", c.name),
                })
            })
            .collect(),
    );
    session.expect_costs_ns(&dry.order_ns);
    for (name, why) in &selection.skipped {
        session.note(&format!("skipped {name}: {why}"));
    }
    for note in selection.run_notes(&ctx) {
        session.note(&note);
    }
    if !unmeasured_cpus.is_empty() {
        session.note(&format!(
            "--cpus: this machine has {usable} usable CPU(s); {} CPUs cannot be measured here, \
             {usable} are measured instead",
            unmeasured_cpus
                .iter()
                .map(|k| k.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let body = measure_all(
        &mut session,
        &selection,
        &a.parallel,
        &ctx,
        &mut plan,
        &settings,
        &unmeasured_cpus,
    );
    Ok(Some((session, body)))
}

/// Measure every case at every process count (a workload: sweep it once),
/// then the figures derived from each family's sweep. Stops early on an
/// interruption; a case that fails is noted by the session and the rest
/// still run.
fn measure_all(
    session: &mut Session,
    selection: &Selection,
    parallel: &[u32],
    ctx: &RunContext,
    plan: &mut Plan,
    settings: &SweepSettings,
    unmeasured_cpus: &[u32],
) -> Result<(), CliError> {
    let mut builds = 0;
    for case in &selection.cases {
        if case.family.is_workload() {
            if session.interrupted() {
                return Ok(());
            }
            session.start_case(&case.name);
            builds += 1;
            let built = if failpoint("build_case", builds) {
                Err("failpoint build_case".to_string())
            } else {
                case.family.make_workload(&case.point, ctx)
            };
            match built {
                Ok(mut w) => {
                    let curve = curve_of(case, unmeasured_cpus, w.bytes_per_op());
                    session.sweep(&case.name, &mut *w, curve, &settings.plan(case))?
                }
                Err(m) => session.fail(format!("{}: {m}", case.name)),
            }
            continue;
        }
        for &p in parallel {
            if session.interrupted() {
                return Ok(());
            }
            session.start_case(&case.name);
            plan.parallel = p;
            let label = CaseLabel {
                name: case.name.clone(),
                benchmark: case.family.name.to_string(),
                group: case.family.group.to_string(),
                params: case
                    .params()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            };
            // It built when the plan was checked, but what it needs (memory,
            // files, helpers) may be gone now: a failed case, not bad input.
            builds += 1;
            let built = if failpoint("build_case", builds) {
                Err("failpoint build_case".to_string())
            } else {
                case.family.make(&case.point, ctx)
            };
            let mut built = match built {
                Ok(b) => b,
                Err(m) => {
                    session.fail(format!("{}: {m}", case.name));
                    continue;
                }
            };
            let baseline = built
                .baseline
                .as_mut()
                .map(|(n, b)| (n.as_str(), &mut **b as &mut dyn Benchmark));
            session.measure_annotated(
                &label,
                built.bench.as_mut(),
                &built.shape,
                baseline,
                plan,
                &|m| case.family.annotate(m, ctx),
            )?;
        }
    }
    if session.interrupted() {
        return Ok(());
    }
    // Figures derived from a family's whole sweep (e.g. cache levels).
    let mut seen: Vec<&str> = Vec::new();
    for case in &selection.cases {
        let f = case.family;
        let Some(derive) = f.derive else { continue };
        if seen.contains(&f.name) {
            continue;
        }
        seen.push(f.name);
        let own: Vec<_> = session
            .measurements()
            .iter()
            .filter(|m| m.benchmark == f.name)
            .cloned()
            .collect();
        // Printed once, with the rest, in the tables at the end.
        for m in derive(&own) {
            session.record(m)?;
        }
    }
    Ok(())
}
