//! `touchstone report` (the summary of many runs, optionally as HTML) and
//! `touchstone compare` (ratios to a base run and the index).

use std::path::Path;

use touchstone_analysis::compare;
use touchstone_analysis::index::indices;
use touchstone_analysis::table::Matrix;
use touchstone_report::{html, Format, Layout};
use touchstone_results::store::Store;
use touchstone_results::Run;

use super::stored::{load_each, none_readable, warn_skipped};
use crate::args::{CompareArgs, ReportArgs, ReportFormat};
use crate::error::CliError;
use crate::output;

fn format(f: ReportFormat) -> Format {
    match f {
        ReportFormat::Table => Format::Table,
        ReportFormat::Csv => Format::Csv,
        ReportFormat::Json => Format::Json,
        ReportFormat::Markdown => Format::Markdown,
    }
}

/// The runs the user named (each once, in the order named), or all.
pub(super) fn load(store: &Store, specs: &[String]) -> Result<Vec<Run>, CliError> {
    let mut ids: Vec<String> = Vec::new();
    if specs.is_empty() {
        ids = store.list_runs()?.into_iter().map(|r| r.id).collect();
        if ids.is_empty() {
            return Err(CliError::Usage(format!(
                "no runs stored in {}",
                store.path().display()
            )));
        }
    } else {
        for s in specs {
            let id = store.resolve(s)?;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    let (runs, unreadable) = load_each(store, &ids)?;
    if runs.is_empty() {
        return Err(none_readable("none of the runs can be read", &unreadable));
    }
    warn_skipped(&unreadable);
    Ok(runs)
}

/// To the file asked for (never the store), or to standard output.
fn emit(
    store: &Store,
    to: Option<&Path>,
    format: ReportFormat,
    text: &str,
) -> Result<(), CliError> {
    match to {
        Some(p) => output::write_file(p, text.as_bytes(), store.path()),
        None if format == ReportFormat::Json => {
            output::print_json(text);
            Ok(())
        }
        None => {
            output::print(text);
            Ok(())
        }
    }
}

/// The layout asked for, as wide as the terminal when printing to one.
pub(super) fn layout(wide: bool, output: Option<&Path>) -> Layout {
    let width = match output {
        None => touchstone_report::tables::terminal_width(),
        Some(_) => None,
    };
    Layout {
        wide,
        width: width.unwrap_or(touchstone_report::layout::DEFAULT_WIDTH),
    }
}

fn matrix(runs: &[Run]) -> Result<Matrix<'_>, CliError> {
    Matrix::build(runs).map_err(|e| CliError::Usage(e.to_string()))
}

pub fn report(store: &Store, a: &ReportArgs) -> Result<(), CliError> {
    // Both outputs are checked before either is written.
    for p in a.html.iter().chain(&a.output) {
        output::refuse_store(p, store.path())?;
    }
    let runs = load(store, &a.runs)?;
    let m = matrix(&runs)?;
    let order = match &a.sort {
        Some(spec) => {
            let key = m
                .sort_key(spec)
                .map_err(|e| CliError::Usage(e.to_string()))?;
            m.order(&key)
        }
        None => (0..m.runs.len()).collect(),
    };
    if let Some(path) = &a.html {
        let generated = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
        let page = html::render(&m, &order, &generated);
        output::write_file(path, page.as_bytes(), store.path())?;
        output::eprint_line(&format!("HTML report written to {}", path.display()));
    }
    emit(
        store,
        a.output.as_deref(),
        a.format,
        &touchstone_report::summary_with(
            &m,
            &order,
            format(a.format),
            layout(a.wide, a.output.as_deref()),
        ),
    )
}

pub fn compare(store: &Store, a: &CompareArgs) -> Result<(), CliError> {
    if let Some(p) = &a.output {
        output::refuse_store(p, store.path())?;
    }
    let base = store.resolve(&a.base)?;
    let mut runs = vec![store.load_run(&base)?];
    let others = a
        .others
        .iter()
        .map(|s| store.resolve(s))
        .collect::<Result<Vec<_>, _>>()?;
    // The base was read; each other run that cannot be is named, and
    // when none can the error says which and why.
    let (readable, unreadable) = load_each(store, &others)?;
    if readable.is_empty() {
        return Err(none_readable(
            &format!("nothing to compare run {base} with"),
            &unreadable,
        ));
    }
    warn_skipped(&unreadable);
    runs.extend(readable);
    let m = matrix(&runs)?;
    let others: Vec<usize> = (1..runs.len()).collect();
    let c = compare::compare(&m, 0, &others);
    let idx = indices(&m, &c);
    if a.output.is_some() {
        // Faster/slower are coloured on a terminal, never in a file.
        touchstone_report::colour::disable();
    }
    emit(
        store,
        a.output.as_deref(),
        a.format,
        &touchstone_report::comparison_with(
            &m,
            &c,
            &idx,
            format(a.format),
            layout(a.wide, a.output.as_deref()),
        ),
    )
}
