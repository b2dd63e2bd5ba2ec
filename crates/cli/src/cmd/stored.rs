//! Reading stored runs: `runs`, `show`, `export`; changing them: `runs
//! delete`, `runs relabel` (bringing runs in is `import`).

use std::io::Write;
use std::path::Path;

use touchstone_report::{run_export, terminal};
use touchstone_results::store::{Store, StoreError};
use touchstone_results::{json, Run};

use crate::args::ReportFormat;
use crate::cmd::runs_filter::RunFilter;
use crate::error::CliError;
use crate::output::{self, print};

pub fn runs(store: &Store, as_json: bool, filter: &RunFilter) -> Result<(), CliError> {
    let all = store.list_runs()?;
    let stored = all.len();
    let rows: Vec<_> = all.into_iter().filter(|r| filter.matches(r)).collect();
    if as_json {
        output::print_json(&format!(
            "{}\n",
            serde_json::to_string_pretty(&rows).expect("serialisable")
        ));
    } else if stored == 0 {
        print(&format!("no runs stored in {}\n", store.path().display()));
    } else if rows.is_empty() {
        print(&format!(
            "none of the {stored} runs stored in {} matches\n",
            store.path().display()
        ));
    } else {
        print(&terminal::runs(&rows));
    }
    Ok(())
}

pub fn show(
    store: &Store,
    spec: &str,
    format: ReportFormat,
    warnings: bool,
) -> Result<(), CliError> {
    let run = store.load_run(&store.resolve(spec)?)?;
    if warnings {
        print(&terminal::all_warnings(&run));
        return Ok(());
    }
    match format {
        ReportFormat::Json => output::print_json(&format!("{}\n", json::to_string(vec![run]))),
        ReportFormat::Csv => print(&run_export::csv(&run)),
        ReportFormat::Markdown => print(&run_export::markdown(&run)),
        ReportFormat::Table => print(&format!(
            "{}\n{}{}",
            terminal::run_header(&run),
            terminal::measurements(&run.measurements),
            terminal::curves(&run.curves)
        )),
    }
    Ok(())
}

pub fn export(store: &Store, specs: &[String], output: Option<&Path>) -> Result<(), CliError> {
    let ids = if specs.is_empty() {
        store.list_runs()?.into_iter().map(|r| r.id).collect()
    } else {
        specs
            .iter()
            .map(|s| store.resolve(s))
            .collect::<Result<Vec<_>, _>>()?
    };
    let runs = load_readable(store, &ids)?;
    let text = json::to_string(runs);
    match output {
        None => {
            output::print_json(&format!("{text}\n"));
            Ok(())
        }
        Some(path) => output::write_file(path, text.as_bytes(), store.path()),
    }
}

/// The runs `ids`, skipping with a warning that names it (and how to
/// remove it) any run whose stored documents do not parse, so one damaged
/// run does not hide the others.
pub fn load_readable(store: &Store, ids: &[String]) -> Result<Vec<Run>, CliError> {
    let (runs, unreadable) = load_each(store, ids)?;
    warn_skipped(&unreadable);
    Ok(runs)
}

/// A warning for each run skipped because it cannot be read.
pub fn warn_skipped(unreadable: &[StoreError]) {
    for e in unreadable {
        output::eprint_line(&format!("warning: skipped: {e}"));
    }
}

/// The runs `ids` that can be read, and why each of the others cannot
/// (`StoreError::Unreadable`, which names the run); any other error stops.
pub fn load_each(store: &Store, ids: &[String]) -> Result<(Vec<Run>, Vec<StoreError>), CliError> {
    let mut runs = Vec::with_capacity(ids.len());
    let mut unreadable = Vec::new();
    for id in ids {
        match store.load_run(id) {
            Ok(run) => runs.push(run),
            Err(e @ StoreError::Unreadable { .. }) => unreadable.push(e),
            Err(e) => return Err(e.into()),
        }
    }
    Ok((runs, unreadable))
}

/// `what` failed because no run could be read: each one named, with why.
pub fn none_readable(what: &str, unreadable: &[StoreError]) -> CliError {
    let why: Vec<String> = unreadable.iter().map(|e| format!("\n  {e}")).collect();
    CliError::Usage(format!("{what}:{}", why.concat()))
}

/// Ask before changing stored runs, when a person is there to answer
/// (standard input is a terminal) and `--yes` was not given.
fn confirm(question: &str, yes: bool) -> bool {
    // SAFETY: isatty only inspects the descriptor.
    if yes || unsafe { libc::isatty(libc::STDIN_FILENO) } != 1 {
        return true;
    }
    output::eprint(&format!("{question} [y/N] "));
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).is_ok()
        && matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// The runs `specs` name, each once, as stored rows (in store order).
fn named_rows(
    store: &Store,
    specs: &[String],
) -> Result<Vec<touchstone_results::RunRow>, CliError> {
    let mut ids = Vec::new();
    for spec in specs {
        let id = store.resolve(spec)?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    Ok(store
        .list_runs()?
        .into_iter()
        .filter(|r| ids.contains(&r.id))
        .collect())
}

pub fn delete(store: &mut Store, specs: &[String], yes: bool) -> Result<(), CliError> {
    let rows = named_rows(store, specs)?;
    output::eprint(&terminal::runs(&rows));
    if !confirm(
        &format!(
            "delete these {} run(s) and their measurements from {}?",
            rows.len(),
            store.path().display()
        ),
        yes,
    ) {
        print("nothing deleted\n");
        return Ok(());
    }
    let ids: Vec<String> = rows.into_iter().map(|r| r.id).collect();
    store.delete_runs(&ids)?;
    print(&format!(
        "deleted {} run(s) from {}: {}\n",
        ids.len(),
        store.path().display(),
        ids.join(", ")
    ));
    Ok(())
}

/// A new label is held to what `run --label` and import accept
/// (`validate::MAX_LABEL_BYTES`), so a relabelled run can still travel.
pub fn relabel(store: &mut Store, spec: &str, label: &str, yes: bool) -> Result<(), CliError> {
    use touchstone_results::validate::MAX_LABEL_BYTES;
    if label.len() > MAX_LABEL_BYTES {
        return Err(CliError::Usage(format!(
            "the label is {} bytes long: at most {MAX_LABEL_BYTES}",
            label.len()
        )));
    }
    if label.chars().any(char::is_control) {
        return Err(CliError::Usage(
            "the label holds control characters (newlines, escapes); use plain text".into(),
        ));
    }
    let id = store.resolve(spec)?;
    let label = Some(label).filter(|l| !l.is_empty());
    let question = match label {
        Some(l) => format!("label run {id} '{l}'?"),
        None => format!("remove the label of run {id}?"),
    };
    if !confirm(&question, yes) {
        print("nothing changed\n");
        return Ok(());
    }
    store.relabel(&id, label)?;
    match label {
        Some(l) => print(&format!("run {id} is now labelled '{l}'\n")),
        None => print(&format!("run {id} has no label now\n")),
    }
    Ok(())
}
