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
use std::time::{Duration, Instant};

use touchstone_catalogue::select::{Selected, Selection};
use touchstone_catalogue::{select, RunContext};
use touchstone_harness::plan::MAX_REPETITIONS;
use touchstone_harness::workload::{self, cpu, resolve_cpu_counts, Budget, SweepPlan, TrialPlan};
use touchstone_harness::{energy, rounds, Benchmark, CaseLabel, CaseRounds, Plan};
use touchstone_results::convergence::{self, Rule};
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
    if let Some(k) = a.rounds {
        if k == 0 || k > MAX_REPETITIONS {
            return Err(CliError::Usage(format!(
                "--rounds {k}: must be 1..={MAX_REPETITIONS}"
            )));
        }
        plan.rounds = k;
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
    let mut settings = sweep_settings(a)?;
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
    let mut dry = estimate(&selection, &ctx, &plan, &settings, &a.parallel, usable)?;
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
    let seed = a.seed.unwrap_or_else(rounds::fresh_seed);
    let micro = micro_cases(&selection, &a.parallel);
    // One round keeps the order asked for; rounds interleave, shuffled.
    let order = if plan.rounds > 1 {
        rounds::order(micro.len(), plan.rounds, seed)
    } else {
        vec![(0..micro.len()).collect()]
    };
    let steps = micro.len() * plan.rounds as usize + workloads;
    let mut notes: Vec<String> = selection
        .skipped
        .iter()
        .map(|(name, why)| format!("skipped {name}: {why}"))
        .chain(selection.run_notes(&ctx))
        .collect();
    // Energy sources are discovered once; process 0 of each measurement
    // reads them around its timed intervals, and a workload trial's
    // supervisor at its window's edges. Where none can be, the run says so
    // once rather than leave a reader to guess (issue 30).
    let found = energy::discover(std::path::Path::new("/sys"), &energy::read_to_string);
    notes.extend(found.run_note());
    settings.trial.energy = found.sources.clone();
    plan.energy = found.sources;
    let (_, unmeasured_cpus) = resolve_cpu_counts(&settings.cpu_counts, usable);
    if !unmeasured_cpus.is_empty() {
        notes.push(format!(
            "--cpus: this machine has {usable} usable CPU(s); {} CPUs cannot be measured here, \
             {usable} are measured instead",
            unmeasured_cpus
                .iter()
                .map(|k| k.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut session = Session::start(
        Request {
            db,
            store: !a.no_store,
            label: a.label.clone(),
            selection: a.benchmarks.clone(),
            parallel: a.parallel.clone(),
            quick: a.quick,
            planned: micro.len() + workloads,
            steps,
            seed: (!micro.is_empty() && plan.rounds > 1).then_some(seed),
            workload: (workloads > 0).then(|| settings.options()),
            notes,
        },
        &mut plan,
    )?;
    // One name per case, in the order each first starts (the first round's,
    // then the workloads), so a run stopped early names what it missed.
    let first_round = order.first().cloned().unwrap_or_default();
    session.plan_cases(
        first_round
            .iter()
            .map(|&i| micro[i].display())
            .chain(
                selection
                    .cases
                    .iter()
                    .filter(|c| c.family.is_workload())
                    .map(|c| c.name.clone()),
            )
            .collect(),
    );
    session.expect_costs_ns(&step_costs(&dry, &micro, &order, &selection));
    for note in session.notes().to_vec() {
        session.note(&note);
    }
    let body = measure_all(
        &mut session,
        &selection,
        micro,
        &order,
        seed,
        &ctx,
        &mut plan,
        &settings,
        &unmeasured_cpus,
    );
    Ok(Some((session, body)))
}

/// A micro-benchmark case at one process count, measured round by round.
struct MicroCase<'s> {
    case: &'s Selected,
    parallel: u32,
    /// Its rounds so far; None before the first and after a failure.
    rounds: Option<CaseRounds>,
    failed: bool,
    /// Why a round failed after others had been measured.
    failed_why: Option<String>,
    /// Where the run keeps its measurement, once kept.
    slot: Option<usize>,
    /// Measured since the store last took it.
    dirty: bool,
}

impl MicroCase<'_> {
    /// The name the progress and a stopped run's reason use.
    fn display(&self) -> String {
        match self.parallel {
            1 => self.case.name.clone(),
            p => format!("{} ×{p}", self.case.name),
        }
    }

    fn label(&self) -> CaseLabel {
        CaseLabel {
            name: self.case.name.clone(),
            benchmark: self.case.family.name.to_string(),
            group: self.case.family.group.to_string(),
            params: self
                .case
                .params()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }
}

/// Every micro-benchmark case at every process count, in selection order.
fn micro_cases<'s>(selection: &'s Selection, parallel: &[u32]) -> Vec<MicroCase<'s>> {
    selection
        .cases
        .iter()
        .filter(|c| !c.family.is_workload())
        .flat_map(|c| {
            parallel.iter().map(move |&p| MicroCase {
                case: c,
                parallel: p,
                rounds: None,
                failed: false,
                failed_why: None,
                slot: None,
                dirty: false,
            })
        })
        .collect()
}

/// Build every case once, so bad parameter combinations fail before
/// anything runs, and estimate what each costs (`run --dry-run`'s listing,
/// the progress bar's weights) on a machine of `usable` CPUs.
fn estimate(
    selection: &Selection,
    ctx: &RunContext,
    plan: &Plan,
    settings: &SweepSettings,
    parallel: &[u32],
    usable: usize,
) -> Result<DryRun, CliError> {
    let (measured_cpus, _) = resolve_cpu_counts(&settings.cpu_counts, usable);
    let mut dry = DryRun::default();
    for c in &selection.cases {
        let usage = |m: String| CliError::Usage(format!("{}: {m}", c.name));
        if c.family.is_workload() {
            let w = c.family.make_workload(&c.point, ctx).map_err(usage)?;
            let loads = workload::validate(&*w, &settings.plan(c), usable)
                .map_err(|e| usage(e.to_string()))?;
            // Each load at the trial plan the workload asks for there
            // (loaded_latency's trials are shorter than the run's).
            let cost = loads.iter().fold((0, 0), |(low, high), &load| {
                let trial = w.trial_plan(&settings.trial, load);
                let (l, h) = dry_run::sweep_ns(measured_cpus.len(), &trial, &settings.rule);
                (low + l, high + h)
            });
            dry.sweep(&c.name, loads, measured_cpus.to_vec(), cost);
        } else {
            let built = c.family.make(&c.point, ctx).map_err(usage)?;
            for &p in parallel {
                let at = Plan {
                    parallel: p,
                    ..plan.clone()
                };
                let cost =
                    dry_run::case_ns(&at, &built.shape, built.baseline.is_some(), &built.cost);
                dry.case(&c.name, p, cost);
            }
        }
    }
    Ok(dry)
}

/// The expected cost of each step in the order the run takes them: every
/// micro-benchmark case's share of its estimate in each round, then the
/// workload sweeps.
fn step_costs(
    dry: &DryRun,
    micro: &[MicroCase],
    order: &[Vec<usize>],
    selection: &Selection,
) -> Vec<u64> {
    let rounds = order.len().max(1) as u64;
    let per_case: Vec<u64> = micro
        .iter()
        .map(|m| {
            dry.cases
                .iter()
                .find(|c| c.name == m.case.name && c.parallel == m.parallel)
                .map_or(1, |c| (c.seconds * 1e9) as u64 / rounds)
        })
        .collect();
    let sweeps = selection
        .cases
        .iter()
        .filter(|c| c.family.is_workload())
        .map(|c| {
            dry.sweeps
                .iter()
                .find(|s| s.name == c.name)
                .map_or(1, |s| (s.seconds * 1e9) as u64)
        });
    order
        .iter()
        .flat_map(|r| r.iter().map(|&i| per_case[i]))
        .chain(sweeps)
        .collect()
}

/// Measure every micro-benchmark case at every process count in rounds,
/// each round in its own shuffled order (`order`, from `seed`), with more
/// rounds for the cases `--converge` is not yet satisfied with; then each
/// workload once (a sweep); then the figures derived from each family's
/// sweep. Stops early on an interruption, keeping every case measured in
/// at least one round; a case that fails is noted by the session and the
/// rest still run.
#[allow(clippy::too_many_arguments)]
fn measure_all(
    session: &mut Session,
    selection: &Selection,
    mut micro: Vec<MicroCase>,
    order: &[Vec<usize>],
    seed: u64,
    ctx: &RunContext,
    plan: &mut Plan,
    settings: &SweepSettings,
    unmeasured_cpus: &[u32],
) -> Result<(), CliError> {
    let mut builds = 0;
    let mut stored_at = Instant::now();
    let measured = (|| -> Result<(), CliError> {
        for (k, round) in order.iter().enumerate() {
            for &i in round {
                if session.interrupted() {
                    return Ok(());
                }
                measure_round(session, &mut micro[i], k == 0, ctx, plan, &mut builds)?;
                store_progress(session, &mut micro, ctx, plan, &mut stored_at)?;
            }
        }
        if let Some(rule) = plan.converge {
            // More rounds, each in its own order, for the cases not yet there.
            for extra in 1u64.. {
                let more: Vec<usize> = (0..micro.len())
                    .filter(|&i| {
                        micro[i].rounds.as_ref().is_some_and(|r| {
                            r.convergence(&rule).verdict == convergence::Verdict::More
                        })
                    })
                    .collect();
                if more.is_empty() {
                    break;
                }
                let shuffled = rounds::order(more.len(), 1, seed.wrapping_add(extra));
                for &j in &shuffled[0] {
                    if session.interrupted() {
                        return Ok(());
                    }
                    measure_round(session, &mut micro[more[j]], false, ctx, plan, &mut builds)?;
                    store_progress(session, &mut micro, ctx, plan, &mut stored_at)?;
                }
            }
        }
        Ok(())
    })();
    // Every case with a round measured is kept, also when the run stops;
    // one whose later round failed is kept marked invalid, with why.
    for m in &micro {
        let Some(r) = &m.rounds else { continue };
        plan.parallel = m.parallel;
        let convergence = plan.converge.map(|rule| r.convergence(&rule));
        match r.measurement(plan, convergence) {
            Ok(mut x) => {
                if let Some(why) = &m.failed_why {
                    x.invalid = Some(format!(
                        "round {} of this case failed ({why}); the {} round(s) before it are kept \
                         for the record",
                        r.rounds() + 1,
                        r.rounds()
                    ));
                }
                session.done(m.slot, x, plan, &|x| m.case.family.annotate(x, ctx))?
            }
            Err(e) => session.fail(e.to_string()),
        }
    }
    measured?;
    for case in &selection.cases {
        if !case.family.is_workload() {
            continue;
        }
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

/// How often the store takes the measurements of the rounds so far: a run
/// killed outright loses at most this much of its work, and a store
/// transaction per round of every case would cost the quick suite seconds.
const STORE_EVERY: Duration = Duration::from_secs(1);

/// Keep the measurements of the cases measured since the store last took
/// them (each from its rounds so far), and store them — at most every
/// `STORE_EVERY`, and not at all without a store.
fn store_progress(
    session: &mut Session,
    micro: &mut [MicroCase],
    ctx: &RunContext,
    plan: &mut Plan,
    stored_at: &mut Instant,
) -> Result<(), CliError> {
    if !session.stores() || stored_at.elapsed() < STORE_EVERY {
        return Ok(());
    }
    let parallel = plan.parallel;
    for m in micro.iter_mut().filter(|m| m.dirty && !m.failed) {
        m.dirty = false;
        let Some(r) = &m.rounds else { continue };
        plan.parallel = m.parallel;
        if let Ok(mut x) = r.measurement(plan, None) {
            m.case.family.annotate(&mut x, ctx);
            m.slot = Some(session.keep(m.slot, x));
        }
    }
    plan.parallel = parallel;
    *stored_at = Instant::now();
    session.store_kept()
}

/// One round of one micro-benchmark case: built afresh (what it needs —
/// memory, files, helpers — may be gone since the plan was checked: a
/// failed case, not bad input), then measured in fresh processes.
fn measure_round(
    session: &mut Session,
    m: &mut MicroCase,
    first: bool,
    ctx: &RunContext,
    plan: &mut Plan,
    builds: &mut usize,
) -> Result<(), CliError> {
    session.step(&m.display(), first);
    if m.failed {
        return Ok(());
    }
    plan.parallel = m.parallel;
    *builds += 1;
    let built = if failpoint("build_case", *builds) {
        Err("failpoint build_case".to_string())
    } else {
        m.case.family.make(&m.case.point, ctx)
    };
    let mut built = match built {
        Ok(b) => b,
        Err(e) => {
            let why = format!("{}: {e}", m.case.name);
            session.fail(why.clone());
            m.failed = true;
            if m.rounds.is_some() {
                m.failed_why = Some(why);
            }
            return Ok(());
        }
    };
    let label = m.label();
    let rounds = m.rounds.get_or_insert_with(|| {
        CaseRounds::new(
            &label,
            &built.shape,
            built.baseline.as_ref().map(|(n, _)| n.as_str()),
        )
    });
    let baseline = built
        .baseline
        .as_mut()
        .map(|(_, b)| &mut **b as &mut dyn Benchmark);
    if session.measure_round(rounds, built.bench.as_mut(), baseline, plan)? {
        m.dirty = true;
    } else {
        m.failed = !session.interrupted();
        if rounds.rounds() == 0 {
            m.rounds = None;
        } else if m.failed {
            m.failed_why = session.last_failure().map(str::to_string);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::args::{Cli, Command};

    /// The cases `run --dry-run` lists and the cases the run measures, for
    /// the quick and the default suites: the same, in the same order, and
    /// each round of each weighed by its own estimate on the progress bar.
    #[test]
    fn the_dry_run_lists_every_case_the_run_measures() {
        for argv in [
            &["touchstone", "run", "--quick"][..],
            &["touchstone", "run"],
        ] {
            let Command::Run(a) = Cli::try_parse_from(argv).unwrap().command else {
                unreachable!()
            };
            let plan = plan(&a).unwrap();
            let settings = sweep_settings(&a).unwrap();
            let ctx = a.family.context(a.quick);
            let selection = select(&a.benchmarks, &ctx, 1).unwrap();
            let usable = cpu::usable_cpus().unwrap().len();
            let dry = estimate(&selection, &ctx, &plan, &settings, &a.parallel, usable).unwrap();
            let micro = micro_cases(&selection, &a.parallel);
            let listed: Vec<_> = dry.cases.iter().map(|c| (&c.name, c.parallel)).collect();
            let run: Vec<_> = micro.iter().map(|m| (&m.case.name, m.parallel)).collect();
            assert!(run.len() > 100, "{argv:?}: {} cases", run.len());
            assert_eq!(listed, run, "{argv:?}");
            let order = rounds::order(micro.len(), plan.rounds, 7);
            let costs = step_costs(&dry, &micro, &order, &selection);
            assert_eq!(costs.len(), micro.len() * plan.rounds as usize);
            // 1: a step the listing did not know.
            assert!(costs.iter().all(|&ns| ns > 1_000_000), "{argv:?}");
        }
    }
}
