//! Reading stored runs: `runs`, `show`, `export`; changing them: `runs
//! delete`, `runs relabel` (bringing runs in is `import`).

use std::io::Write;
use std::path::Path;

use touchstone_analysis::table::{Matrix, MatrixBuilder};
use touchstone_report::{terminal, Format, Model};
use touchstone_results::store::{Store, StoreError};
use touchstone_results::{json, Run};

use crate::cmd::runs_filter::RunFilter;
use crate::error::CliError;
use crate::output::{self, print};

pub fn runs(store: &Store, as_json: bool, filter: &RunFilter) -> Result<(), CliError> {
    let all = store.list_runs()?;
    let stored = all.len();
    let rows: Vec<_> = all.into_iter().filter(|r| filter.matches(r)).collect();
    if as_json {
        // Each run's host inventory (price, power) where one is stored.
        let inventory = store.inventory()?;
        let listed: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                let mut v = serde_json::to_value(r).expect("serialisable");
                let found =
                    touchstone_results::inventory::find(&inventory, &r.identity(), &r.hostname);
                if let Some(c) = found {
                    v["inventory"] = serde_json::to_value(c).expect("serialisable");
                }
                v
            })
            .collect();
        output::print_json(&format!(
            "{}\n",
            serde_json::to_string_pretty(&listed).expect("serialisable")
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
        print(&inventory_lines(
            store,
            rows.iter().map(|r| r.hostname.as_str()),
        )?);
    }
    Ok(())
}

/// A line for each inventory entry of the hosts named `hostnames` (an
/// entry by identity counts for its name), each once: under `runs` and `show`.
fn inventory_lines<'h>(
    store: &Store,
    hostnames: impl Iterator<Item = &'h str>,
) -> Result<String, CliError> {
    let all = store.inventory()?;
    let names: std::collections::BTreeSet<&str> = hostnames.collect();
    let mut out = String::new();
    for c in &all {
        let name = c.host.split('#').next().unwrap_or(&c.host);
        if names.contains(name) {
            out += &format!(
                "inventory: {}: {}\n",
                c.host,
                touchstone_results::inventory::describe(c)
            );
        }
    }
    Ok(out)
}

pub fn show(store: &Store, spec: &str, format: Format, warnings: bool) -> Result<(), CliError> {
    let run = store.load_run(&store.resolve(spec)?)?;
    if warnings {
        print(&terminal::all_warnings(&run));
        return Ok(());
    }
    let inventory = store.inventory()?;
    let found =
        touchstone_results::inventory::find(&inventory, &run.host.identity(), &run.host.hostname);
    if format.name() == "json" {
        // The run as `export` writes it, its host's inventory with it.
        let text = json::to_string_with(vec![run], found.into_iter().cloned().collect());
        output::print_json(&format!("{text}\n"));
        return Ok(());
    }
    let r = format.renderer();
    output::print_as(r.media(), &r.run(&Model::run(&run)));
    // Table and Markdown end with a line; CSV and HTML stay one document.
    if let (Some(c), "table" | "markdown") = (found, format.name()) {
        print(&format!(
            "inventory: {}: {}\n",
            c.host,
            touchstone_results::inventory::describe(c)
        ));
    }
    Ok(())
}

/// `export`: the versioned document of the runs (default: all), written
/// one run at a time, so that a store of any size exports in the memory
/// of one run. A run too large for `import` to take is named before it
/// is written.
pub fn export(store: &Store, specs: &[String], output: Option<&Path>) -> Result<(), CliError> {
    let ids = if specs.is_empty() {
        store.list_runs()?.into_iter().map(|r| r.id).collect()
    } else {
        specs
            .iter()
            .map(|s| store.resolve(s))
            .collect::<Result<Vec<_>, _>>()?
    };
    match output {
        Some(path) => output::write_file_with(path, store.path(), |out| {
            write_document(store, &ids, out, |text| text.into(), warn_oversized)
                .map_err(|e| e.into_cli(|io| output::cannot_write(path, io)))
        }),
        None => {
            // Standard output's one door (`output::Stdout`): a reader that
            // has gone (`export | head`) ends the export quietly.
            let written = write_document(
                store,
                &ids,
                &mut output::Stdout,
                |text| touchstone_report::sanitize::json_text(text).into_owned(),
                warn_oversized,
            );
            output::print_raw(b"\n");
            written.map_err(|e| e.into_cli(|io| output::cannot_write(Path::new("-"), io)))
        }
    }
}

/// What stopped an export: the store, or writing.
enum Stop {
    Store(StoreError),
    Io(std::io::Error),
}

impl Stop {
    fn into_cli(self, io: impl FnOnce(std::io::Error) -> CliError) -> CliError {
        match self {
            Stop::Store(e) => e.into(),
            Stop::Io(e) => io(e),
        }
    }
}

/// Say that run `id`, `bytes` long in the document, is more than import
/// takes of one run.
fn warn_oversized(id: &str, bytes: usize) {
    output::eprint_line(&format!(
        "warning: run {id} is {} MiB as JSON, more than `touchstone import` takes of one run ({} MiB): the document will not import",
        bytes >> 20,
        json::MAX_RUN_BYTES >> 20
    ));
}

/// The document of runs `ids` into `out` (`json::DocumentWriter`), each
/// run's text through `shown` (a terminal's escapes), skipping with a
/// warning a run that cannot be read; `oversized` hears of a run larger
/// than import takes (`json::MAX_RUN_BYTES`) before it is written.
fn write_document(
    store: &Store,
    ids: &[String],
    out: &mut dyn Write,
    shown: impl Fn(&str) -> String,
    oversized: impl FnMut(&str, usize),
) -> Result<(), Stop> {
    write_document_within(store, ids, out, shown, oversized, json::MAX_RUN_BYTES)
}

fn write_document_within(
    store: &Store,
    ids: &[String],
    out: &mut dyn Write,
    shown: impl Fn(&str) -> String,
    mut oversized: impl FnMut(&str, usize),
    max_run: u64,
) -> Result<(), Stop> {
    let mut doc = json::DocumentWriter::begin(out).map_err(Stop::Io)?;
    let inventory = store.inventory().map_err(Stop::Store)?;
    let mut hosts: Vec<(String, String)> = Vec::new();
    for id in ids {
        if output::stdout_closed() {
            break;
        }
        let run = match store.load_run(id) {
            Ok(run) => run,
            Err(e @ StoreError::Unreadable { .. }) => {
                warn_skipped(&[e]);
                continue;
            }
            Err(e) => return Err(Stop::Store(e)),
        };
        let text = json::run_text(&run);
        if text.len() as u64 > max_run {
            oversized(id, text.len());
        }
        doc.write_run(&shown(&text)).map_err(Stop::Io)?;
        hosts.push((run.host.identity(), run.host.hostname.clone()));
    }
    // The inventory of the hosts whose runs went out, each entry once.
    let carried: Vec<_> = inventory
        .into_iter()
        .filter(|c| hosts.iter().any(|(id, name)| c.is_for(id, name)))
        .collect();
    doc.finish_with(&carried).map_err(Stop::Io)?;
    Ok(())
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
    each_readable(ids, |id| store.load_run(id))
}

/// What `read` gives of each of `ids` that can be read, and why each of
/// the others cannot; any other error stops.
fn each_readable<T>(
    ids: &[String],
    read: impl Fn(&str) -> Result<T, StoreError>,
) -> Result<(Vec<T>, Vec<StoreError>), CliError> {
    let mut read_ones = Vec::with_capacity(ids.len());
    let mut unreadable = Vec::new();
    for id in ids {
        if let Some(x) = readable(read(id), &mut unreadable)? {
            read_ones.push(x);
        }
    }
    Ok((read_ones, unreadable))
}

/// `what` failed because no run could be read: each one named, with why.
pub fn none_readable(what: &str, unreadable: &[StoreError]) -> CliError {
    let why: Vec<String> = unreadable.iter().map(|e| format!("\n  {e}")).collect();
    CliError::Usage(format!("{what}:{}", why.concat()))
}

/// What was read, or None for a run that cannot be read, why added to
/// `unreadable`; any other error stops.
pub fn readable<T>(
    read: Result<T, StoreError>,
    unreadable: &mut Vec<StoreError>,
) -> Result<Option<T>, CliError> {
    match read {
        Ok(x) => Ok(Some(x)),
        Err(e @ StoreError::Unreadable { .. }) => {
            unreadable.push(e);
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// The headers (with load curves) of the runs `ids` that can be read, and
/// why each of the others cannot (as `load_each`): what a summary of many
/// runs holds of each, their measurements read in brief (`matrix`).
pub fn load_headers(
    store: &Store,
    ids: &[String],
) -> Result<(Vec<Run>, Vec<StoreError>), CliError> {
    each_readable(ids, |id| store.load_header(id))
}

/// The matrix of `runs` (headers), each run's measurements read in brief
/// (`Store::briefs`): the figures only, never every sample of every run.
/// A run whose measurements cannot be read is left out, why added to
/// `unreadable`; None when no run is left.
pub fn matrix<'a>(
    store: &Store,
    runs: &'a [Run],
    unreadable: &mut Vec<StoreError>,
) -> Result<Option<Matrix<'a>>, CliError> {
    let mut b = MatrixBuilder::new();
    let mut rows = 0;
    for run in runs {
        if let Some(briefs) = readable(store.briefs(&run.id), unreadable)? {
            b.push(run, briefs);
            rows += 1;
        }
    }
    if rows == 0 {
        return Ok(None);
    }
    b.finish()
        .map(Some)
        .map_err(|e| CliError::Usage(e.to_string()))
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

#[cfg(test)]
mod tests {
    use super::*;
    use touchstone_results::store::Open;

    /// A run larger than import takes is named before a byte of it is
    /// written; the others are not.
    #[test]
    fn export_names_a_run_too_large_to_import_before_writing_it() {
        let dir = tempfile::tempdir().unwrap();
        let doc = json::parse(include_str!(
            "../../../../tests/data/import-corpus/micro-and-tcp_rr.json"
        ))
        .unwrap();
        let mut small = doc.runs[0].clone();
        small.id = "00000000000000aa".into();
        small.measurements.truncate(1);
        small.curves.clear();
        let large = doc.runs[0].clone();
        let mut store = Store::open(&dir.path().join("s.sqlite"), Open::CreateIfMissing).unwrap();
        store.import_runs(&[small.clone(), large.clone()]).unwrap();
        let limit = json::run_text(&small).len() as u64 + 1;
        assert!(json::run_text(&large).len() as u64 > limit);
        let written = std::cell::RefCell::new(Vec::new());
        let mut heard = Vec::new();
        struct Shared<'a>(&'a std::cell::RefCell<Vec<u8>>);
        impl Write for Shared<'_> {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.borrow_mut().write(b)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let ids = [small.id.clone(), large.id.clone()];
        let mut out = Shared(&written);
        let warned = |id: &str, bytes: usize| {
            let so_far = String::from_utf8(written.borrow().clone()).unwrap();
            heard.push((id.to_string(), bytes, so_far.contains(&large.id)));
        };
        let ok = write_document_within(&store, &ids, &mut out, |t| t.into(), warned, limit);
        assert!(ok.is_ok());
        assert_eq!(heard.len(), 1);
        let (id, bytes, already) = &heard[0];
        assert_eq!(id, &large.id);
        assert_eq!(*bytes, json::run_text(&large).len());
        assert!(!already, "named before it was written");
        let doc = json::parse(&String::from_utf8(written.into_inner()).unwrap()).unwrap();
        assert_eq!(doc.runs.len(), 2);
    }
}
