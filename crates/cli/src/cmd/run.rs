//! `touchstone run`: check everything the user asked for, then measure each
//! case in a run session (`crate::session`), which commits each measurement
//! to the store the moment it is done and always finishes the stored run.

use std::path::PathBuf;

use touchstone_catalogue::params::{Kind, Param};
use touchstone_catalogue::select::Selection;
use touchstone_catalogue::{select, Mode};
use touchstone_harness::plan::MAX_REPETITIONS;
use touchstone_harness::{Benchmark, CaseLabel, Plan};
use touchstone_report::terminal;

use crate::args::RunArgs;
use crate::error::CliError;
use crate::session::{failpoint, Request, Session};

/// The most processes one measurement may start.
const MAX_PARALLEL: u32 = 1024;

/// Stage one: raw arguments to a checked plan, before anything runs.
fn plan(a: &RunArgs) -> Result<Plan, CliError> {
    let mut plan = if a.quick {
        Plan::quick()
    } else {
        Plan::default()
    };
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
        let p = Param {
            name: "--interval",
            help: "",
            kind: Kind::Duration {
                min_ns: 10_000,
                max_ns: 10_000_000_000,
            },
            default: &[],
            quick: &[],
            positional: false,
        };
        plan.target_ns = p.parse(i).map_err(CliError::Usage)?.num;
    }
    Ok(plan)
}

pub fn run(db: Option<PathBuf>, a: RunArgs) -> Result<(), CliError> {
    let mut plan = plan(&a)?;
    let mode = Mode { quick: a.quick };
    let max_parallel = *a.parallel.iter().max().unwrap_or(&1);
    let selection = select(&a.benchmarks, mode, max_parallel)?;
    if selection.cases.is_empty() {
        return Err(CliError::Usage(
            "nothing to run: the selection is empty here".into(),
        ));
    }
    // Build every case once now, so bad parameter combinations fail before
    // anything runs (the real instances are built again just before use).
    for c in &selection.cases {
        c.family
            .make(&c.point, mode)
            .map_err(|m| CliError::Usage(format!("{}: {m}", c.name)))?;
    }
    let mut session = Session::start(
        Request {
            db,
            store: !a.no_store,
            label: a.label.clone(),
            selection: a.benchmarks.clone(),
            parallel: a.parallel.clone(),
            quick: a.quick,
            planned: selection.cases.len() * a.parallel.len(),
        },
        &mut plan,
    )?;
    for (name, why) in &selection.skipped {
        session.note(&format!("skipped {name}: {why}"));
    }
    let body = measure_all(&mut session, &selection, &a.parallel, mode, &mut plan);
    session.finish(body, a.json, |_| String::new())
}

/// Measure every case at every process count, then the figures derived
/// from each family's sweep. Stops early on an interruption; a case that
/// fails is noted by the session and the rest still run.
fn measure_all(
    session: &mut Session,
    selection: &Selection,
    parallel: &[u32],
    mode: Mode,
    plan: &mut Plan,
) -> Result<(), CliError> {
    let mut builds = 0;
    for case in &selection.cases {
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
                    .point
                    .0
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.text.clone()))
                    .collect(),
            };
            // It built when the plan was checked, but what it needs (memory,
            // files, helpers) may be gone now: a failed case, not bad input.
            builds += 1;
            let built = if failpoint("build_case", builds) {
                Err("failpoint build_case".to_string())
            } else {
                case.family.make(&case.point, mode)
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
            session.measure(&label, built.bench.as_mut(), &built.shape, baseline, plan)?;
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
        for m in derive(&own) {
            let [fig, _, _] = terminal::figure_cells(&m);
            session.note(&format!("derived {}: {fig}", m.name));
            session.record(m)?;
        }
    }
    Ok(())
}
