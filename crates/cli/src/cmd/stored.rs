//! Reading stored runs: `runs`, `show`, `export`; bringing runs in:
//! `import`; changing them: `runs delete`, `runs relabel`.

use std::io::Write;
use std::path::{Path, PathBuf};

use touchstone_report::{run_export, terminal};
use touchstone_results::store::{Store, StoreError};
use touchstone_results::{json, Run};

use crate::args::ReportFormat;
use crate::cmd::runs_filter::RunFilter;
use crate::error::CliError;

pub fn runs(store: &Store, as_json: bool, filter: &RunFilter) -> Result<(), CliError> {
    let all = store.list_runs()?;
    let stored = all.len();
    let rows: Vec<_> = all.into_iter().filter(|r| filter.matches(r)).collect();
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).expect("serialisable")
        );
    } else if stored == 0 {
        println!("no runs stored in {}", store.path().display());
    } else if rows.is_empty() {
        println!(
            "none of the {stored} runs stored in {} matches",
            store.path().display()
        );
    } else {
        print!("{}", terminal::runs(&rows));
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
        print!("{}", terminal::all_warnings(&run));
        return Ok(());
    }
    match format {
        ReportFormat::Json => println!("{}", json::to_string(vec![run])),
        ReportFormat::Csv => print!("{}", run_export::csv(&run)),
        ReportFormat::Markdown => print!("{}", run_export::markdown(&run)),
        ReportFormat::Table => print!(
            "{}\n{}{}",
            terminal::run_header(&run),
            terminal::measurements(&run.measurements),
            terminal::curves(&run.curves)
        ),
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
            println!("{text}");
            Ok(())
        }
        Some(path) => write_atomically(path, text.as_bytes()).map_err(|e| CliError::File {
            path: path.display().to_string(),
            message: format!("cannot write: {e}"),
        }),
    }
}

/// Write via a temporary file in the same directory and rename it into
/// place, so a reader never sees half a document and a failure leaves any
/// existing file untouched.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

pub fn import(store: &mut Store, files: &[PathBuf]) -> Result<(), CliError> {
    // Read and check every file before writing anything.
    let mut runs = Vec::new();
    for f in files {
        let path = f.display().to_string();
        let text = std::fs::read_to_string(f).map_err(|e| CliError::File {
            path: path.clone(),
            message: format!("cannot read: {e}"),
        })?;
        let doc = json::parse(&text).map_err(|source| CliError::Json { path, source })?;
        runs.extend(doc.runs);
    }
    let skipped = store.import_runs(&runs)?;
    println!(
        "imported {} run(s) into {}{}",
        runs.len() - skipped.len(),
        store.path().display(),
        if skipped.is_empty() {
            String::new()
        } else {
            format!(
                "; {} already present: {}",
                skipped.len(),
                skipped.join(", ")
            )
        }
    );
    Ok(())
}

/// The runs `ids`, skipping with a warning that names it (and how to
/// remove it) any run whose stored documents do not parse, so one damaged
/// run does not hide the others.
pub fn load_readable(store: &Store, ids: &[String]) -> Result<Vec<Run>, CliError> {
    let mut runs = Vec::with_capacity(ids.len());
    for id in ids {
        match store.load_run(id) {
            Ok(run) => runs.push(run),
            Err(e @ StoreError::Unreadable { .. }) => eprintln!("warning: skipped: {e}"),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(runs)
}

/// Ask before changing stored runs, when a person is there to answer
/// (standard input is a terminal) and `--yes` was not given.
fn confirm(question: &str, yes: bool) -> bool {
    // SAFETY: isatty only inspects the descriptor.
    if yes || unsafe { libc::isatty(libc::STDIN_FILENO) } != 1 {
        return true;
    }
    eprint!("{question} [y/N] ");
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
    eprint!("{}", terminal::runs(&rows));
    if !confirm(
        &format!(
            "delete these {} run(s) and their measurements from {}?",
            rows.len(),
            store.path().display()
        ),
        yes,
    ) {
        println!("nothing deleted");
        return Ok(());
    }
    let ids: Vec<String> = rows.into_iter().map(|r| r.id).collect();
    store.delete_runs(&ids)?;
    println!(
        "deleted {} run(s) from {}: {}",
        ids.len(),
        store.path().display(),
        ids.join(", ")
    );
    Ok(())
}

/// Longest label `relabel` accepts, in characters: a label names a run in
/// tables and headings.
const MAX_LABEL_CHARS: usize = 200;

pub fn relabel(store: &mut Store, spec: &str, label: &str, yes: bool) -> Result<(), CliError> {
    if label.chars().count() > MAX_LABEL_CHARS {
        return Err(CliError::Usage(format!(
            "the label is longer than {MAX_LABEL_CHARS} characters"
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
        println!("nothing changed");
        return Ok(());
    }
    store.relabel(&id, label)?;
    match label {
        Some(l) => println!("run {id} is now labelled '{l}'"),
        None => println!("run {id} has no label now"),
    }
    Ok(())
}
