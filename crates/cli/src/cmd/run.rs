//! `touchstone run`: check everything the user asked for, then measure each
//! case, committing each measurement to the store the moment it is done.

use std::path::PathBuf;

use chrono::Utc;
use touchstone_catalogue::params::{Kind, Param};
use touchstone_catalogue::{select, Mode};
use touchstone_harness::plan::MAX_REPETITIONS;
use touchstone_harness::{
    calibrate, measure_case, scratch, signals, Benchmark, CaseLabel, HarnessError, Plan,
};
use touchstone_report::terminal;
use touchstone_results::store::{Open, Store};
use touchstone_results::{checks, host, json, Run, RunOptions, RunStatus, Tool};

use crate::args::RunArgs;
use crate::error::CliError;
use crate::progress::Progress;

/// The most processes one measurement may start.
const MAX_PARALLEL: u32 = 1024;

pub fn profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

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

pub fn new_run_id() -> String {
    let mut b = [0u8; 8];
    // SAFETY: filling a local buffer.
    let got = unsafe { libc::getrandom(b.as_mut_ptr() as *mut libc::c_void, b.len(), 0) };
    if got != b.len() as isize {
        let t = Utc::now().timestamp_nanos_opt().unwrap_or(0) as u64
            ^ ((std::process::id() as u64) << 32);
        b = t.to_le_bytes();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
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
    // Open the store before measuring: a locked or foreign database is
    // reported now, not after minutes of work.
    let mut store = if a.no_store {
        None
    } else {
        Some(Store::open(&super::db_path(db), Open::CreateIfMissing)?)
    };

    signals::install();
    scratch::remove_stale();
    let clock = calibrate();
    plan.min_interval_ns = clock.min_interval_ns;
    let host = host::collect();
    let warnings = checks::host_warnings(&host, profile());
    let mut run = Run {
        id: new_run_id(),
        label: a.label.clone(),
        host,
        tool: Tool {
            name: "touchstone".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            profile: profile().into(),
            rustc: None,
        },
        clock,
        options: RunOptions {
            selection: a.benchmarks.clone(),
            repetitions: plan.repetitions,
            parallel: a.parallel.clone(),
            quick: a.quick,
            target_interval_ns: plan.target_ns,
            parallel_interval_ns: plan.parallel_target_ns,
            warmup_ns: plan.warmup_ns,
        },
        started_at: Utc::now(),
        ended_at: None,
        status: RunStatus::Running,
        warnings,
        measurements: Vec::new(),
    };
    if let Some(s) = store.as_mut() {
        s.begin_run(&run)?;
    }

    let total = selection.cases.len() * a.parallel.len();
    let mut progress = Progress::new(total);
    for w in &run.warnings {
        progress.line(&format!("warning: {} — {}", w.message, w.remedy));
    }
    for (name, why) in &selection.skipped {
        progress.line(&format!("skipped {name}: {why}"));
    }
    let (mut failures, mut interrupted) = (0usize, false);
    'cases: for case in &selection.cases {
        for &p in &a.parallel {
            if signals::interrupted() {
                interrupted = true;
                break 'cases;
            }
            progress.start_case(&case.name);
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
            let mut built = case
                .family
                .make(&case.point, mode)
                .map_err(CliError::Usage)?;
            let baseline = built
                .baseline
                .as_mut()
                .map(|(n, b)| (n.as_str(), &mut **b as &mut dyn Benchmark));
            match measure_case(
                &label,
                built.bench.as_mut(),
                &built.shape,
                baseline,
                &plan,
                &mut progress,
            ) {
                Ok(m) => {
                    if let Some(s) = store.as_mut() {
                        s.add_measurement(&run.id, &m)?;
                    }
                    let [fig, _, rel] = terminal::figure_cells(&m);
                    let par = if p > 1 {
                        format!(" ×{p}")
                    } else {
                        String::new()
                    };
                    progress.case_line(&format!("{}{par}: {fig} ({rel})", m.name));
                    run.measurements.push(m);
                }
                Err(HarnessError::Interrupted) => {
                    interrupted = true;
                    break 'cases;
                }
                Err(e) => {
                    failures += 1;
                    progress.case_line(&format!("error: {e}"));
                }
            }
        }
    }
    // Figures derived from a family's whole sweep (e.g. cache levels).
    if !interrupted {
        let mut seen: Vec<&str> = Vec::new();
        for case in &selection.cases {
            let f = case.family;
            let Some(derive) = f.derive else { continue };
            if seen.contains(&f.name) {
                continue;
            }
            seen.push(f.name);
            let own: Vec<_> = run
                .measurements
                .iter()
                .filter(|m| m.benchmark == f.name)
                .cloned()
                .collect();
            for m in derive(&own) {
                if let Some(s) = store.as_mut() {
                    s.add_measurement(&run.id, &m)?;
                }
                let [fig, _, _] = terminal::figure_cells(&m);
                progress.line(&format!("derived {}: {fig}", m.name));
                run.measurements.push(m);
            }
        }
    }
    progress.finish();
    run.ended_at = Some(Utc::now());
    run.status = if interrupted {
        RunStatus::Interrupted
    } else if failures > 0 {
        RunStatus::Failed
    } else {
        RunStatus::Complete
    };
    if let Some(s) = store.as_mut() {
        s.finish_run(&run.id, run.status, run.ended_at.unwrap(), &run.warnings)?;
    }
    if a.json {
        println!("{}", json::to_string(vec![run.clone()]));
    } else {
        print!(
            "{}\n{}",
            terminal::run_header(&run),
            terminal::measurements(&run.measurements)
        );
        if let Some(s) = &store {
            println!("stored as run {} in {}", run.id, s.path().display());
        }
    }
    if interrupted {
        return Err(CliError::Interrupted(run.id));
    }
    if failures > 0 {
        return Err(CliError::Failed(failures, total));
    }
    Ok(())
}
