//! `touchstone app -- COMMAND…`: time a whole program with the harness's
//! rigour. The benchmark itself is the catalogue's (`touchstone_catalogue::app`);
//! this command parses, plans, and measures it in a run session, so the
//! result is stored as the measurement `app/NAME` of a run of its own, and
//! the run is finished (complete, failed with its reason, interrupted) on
//! every path.

use std::path::PathBuf;

use touchstone_catalogue::app::AppSpec;
use touchstone_harness::plan::{DEFAULT_REPETITIONS, MAX_REPETITIONS};
use touchstone_results::units::format_value;
use touchstone_results::{Run, Unit};

use crate::args::AppArgs;
use crate::error::CliError;
use crate::session::{Request, Session};

pub fn app(db: Option<PathBuf>, a: AppArgs) -> Result<(), CliError> {
    // Stage one: everything checked before anything runs.
    super::check_label(a.label.as_deref())?;
    let repetitions = a.repetitions.unwrap_or(DEFAULT_REPETITIONS);
    if repetitions == 0 || repetitions > MAX_REPETITIONS {
        return Err(CliError::Usage(format!(
            "--repetitions {repetitions}: must be 1..={MAX_REPETITIONS}"
        )));
    }
    let spec = AppSpec {
        command: a.command.clone(),
        name: a.name.clone(),
        setup: a.setup.clone(),
        cleanup: a.cleanup.clone(),
        show_output: a.show_output,
        warmup: a.warmup,
        repetitions,
    };
    let mut case = spec.check().map_err(CliError::Usage)?;
    let mut plan = spec.plan();

    let mut session = Session::start(
        Request {
            db,
            store: !a.no_store,
            label: a.label.clone(),
            selection: vec![case.label.name.clone()],
            parallel: vec![1],
            quick: false,
            planned: 1,
            workload: None,
        },
        &mut plan,
    )?;
    session.start_case(&case.label.name);
    let body = session.measure(&case.label, &mut case.bench, &case.shape, None, &plan);
    session.finish(body, a.json, |run| per_run(run, a.warmup, repetitions))
}

/// The resource use the benchmark recorded from wait4, under the table.
fn per_run(run: &Run, warmup: u32, repetitions: u32) -> String {
    let Some(m) = run.measurements.first() else {
        return String::new();
    };
    let get = |k: &str| m.extra.get(k).copied().unwrap_or(f64::NAN);
    format!(
        "per run: user {}, system {}, peak RSS {:.1} MiB; {warmup} warm-up and {repetitions} timed runs, all exited 0\n",
        format_value(Unit::Ns, get("user_cpu_s") * 1e9),
        format_value(Unit::Ns, get("system_cpu_s") * 1e9),
        get("peak_rss_bytes") / (1024.0 * 1024.0),
    )
}
