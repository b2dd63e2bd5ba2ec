//! `touchstone check`: run the check suite (or take a stored run), judge it
//! against the host's own history and its hardware class
//! (`touchstone_analysis::health::assess`), print the verdict, and exit 0
//! healthy, 1 degraded, 2 bad input. A measurement of the check's run that
//! fails is a finding too: a node that cannot run it is not healthy. A
//! finding of a run measured now is confirmed before it counts: its
//! benchmarks are measured again, not stored
//! (`touchstone_analysis::health::confirm`); a stored run (`--run`) is
//! judged on its figures alone.

use std::path::PathBuf;

use touchstone_analysis::health::confirm::assess_confirmed;
use touchstone_analysis::outliers::{host_key, Hardware};
use touchstone_report::health;
use touchstone_results::store::{Open, Store, StoreError};
use touchstone_results::Run;

use super::run::measure_quietly;
use crate::args::{CheckArgs, CheckFormat, RunArgs};
use crate::error::CliError;
use crate::family_options::FamilyOptions;
use crate::store::open;

/// The run to judge, measured now (with the measurements that failed, "name:
/// why") or read from the store.
fn judged(db: Option<PathBuf>, a: &CheckArgs) -> Result<(Run, Vec<String>), CliError> {
    if let Some(spec) = &a.run {
        let store = open(db, Open::ReadOnly)?;
        let id = store.resolve(spec)?;
        return Ok((store.load_run(&id)?, Vec::new()));
    }
    let benchmarks = match a.benchmarks.is_empty() {
        true => vec!["check".into()],
        false => a.benchmarks.clone(),
    };
    measured(db, a, benchmarks, a.no_store)
}

/// `benchmarks` measured now as the check measures them (quick, one
/// process), stored unless `no_store`.
fn measured(
    db: Option<PathBuf>,
    a: &CheckArgs,
    benchmarks: Vec<String>,
    no_store: bool,
) -> Result<(Run, Vec<String>), CliError> {
    let args = RunArgs {
        benchmarks,
        parallel: vec![1],
        repetitions: a.repetitions,
        rounds: None,
        seed: None,
        quick: true,
        interval: None,
        cpus: Vec::new(),
        converge: None,
        window: None,
        warmup: None,
        budget: None,
        label: Some(a.label.clone()),
        json: false,
        tables: false,
        no_store,
        dry_run: false,
        family: FamilyOptions::default(),
    };
    let quiet = measure_quietly(db, &args)?;
    match quiet.outcome {
        Ok(()) | Err(CliError::Failed(..)) => Ok((quiet.run, quiet.failures)),
        Err(e) => Err(e),
    }
}

/// The stored runs of the judged run's host and of hosts of its hardware
/// (a store that does not exist yet has none). A run whose documents no
/// longer read is skipped with a warning.
fn references(db: Option<PathBuf>, run: &Run) -> Result<Vec<Run>, CliError> {
    let store: Store = match open(db, Open::ReadOnly) {
        Ok(s) => s,
        Err(CliError::Store(StoreError::Missing(_))) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let (me, hardware) = (host_key(run), Hardware::of(&run.host));
    let mut out = Vec::new();
    for row in store.list_runs()? {
        if row.id == run.id {
            continue;
        }
        match store.load_run(&row.id) {
            Ok(r) if host_key(&r) == me || Hardware::of(&r.host) == hardware => out.push(r),
            Ok(_) => {}
            Err(e @ StoreError::Unreadable { .. }) => {
                crate::output::eprint_line(&format!("warning: skipped: {e}"))
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out)
}

pub fn check(db: Option<PathBuf>, a: CheckArgs) -> Result<(), CliError> {
    let (run, failed) = judged(db.clone(), &a)?;
    let stored = references(db.clone(), &run)?;
    let me = host_key(&run);
    let (own, class): (Vec<&Run>, Vec<&Run>) = stored.iter().partition(|r| host_key(r) == me);
    // A second, independent measurement of what the first flagged: never
    // stored (the first run is the check's record), its failures ignored
    // (the first judgement then stands).
    let remeasure = |specs: &[String]| match a.run {
        Some(_) => None,
        None => measured(db, &a, specs.to_vec(), true).ok().map(|(r, _)| r),
    };
    let verdict = assess_confirmed(&run, &own, &class, remeasure);
    let text = match a.format {
        CheckFormat::Table => health::text(&verdict, &failed),
        CheckFormat::Json => health::json(&verdict, &failed),
        CheckFormat::Nhc => health::nhc(&verdict, &failed),
    };
    match a.format {
        CheckFormat::Json => crate::output::print_json(&text),
        _ => crate::output::print(&text),
    }
    let findings = verdict.findings().len() + failed.len();
    match findings {
        0 => Ok(()),
        n => Err(CliError::Degraded(n)),
    }
}
