//! `touchstone report` (the summary of many runs, optionally as HTML) and
//! `touchstone compare` (ratios to a base run and the index).

use std::path::Path;

use touchstone_analysis::compare;
use touchstone_analysis::index::indices;
use touchstone_analysis::table::Matrix;
use touchstone_report::{html, Format};
use touchstone_results::store::Store;
use touchstone_results::Run;

use super::stored::{load_readable, write_atomically};
use crate::args::{CompareArgs, ReportArgs, ReportFormat};
use crate::error::CliError;

fn format(f: ReportFormat) -> Format {
    match f {
        ReportFormat::Table => Format::Table,
        ReportFormat::Csv => Format::Csv,
        ReportFormat::Json => Format::Json,
        ReportFormat::Markdown => Format::Markdown,
    }
}

/// The runs the user named (each once, in the order named), or all.
fn load(store: &Store, specs: &[String]) -> Result<Vec<Run>, CliError> {
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
    let runs = load_readable(store, &ids)?;
    if runs.is_empty() {
        return Err(CliError::Usage(
            "none of the runs can be read (see the warnings above)".into(),
        ));
    }
    Ok(runs)
}

fn write(path: &Path, text: &str) -> Result<(), CliError> {
    write_atomically(path, text.as_bytes()).map_err(|e| CliError::File {
        path: path.display().to_string(),
        message: format!("cannot write: {e}"),
    })
}

fn emit(output: Option<&Path>, text: &str) -> Result<(), CliError> {
    match output {
        Some(p) => write(p, text),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

fn matrix(runs: &[Run]) -> Result<Matrix<'_>, CliError> {
    Matrix::build(runs).map_err(|e| CliError::Usage(e.to_string()))
}

pub fn report(store: &Store, a: &ReportArgs) -> Result<(), CliError> {
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
        write(path, &html::render(&m, &order, &generated))?;
        eprintln!("HTML report written to {}", path.display());
    }
    emit(
        a.output.as_deref(),
        &touchstone_report::summary(&m, &order, format(a.format)),
    )
}

pub fn compare(store: &Store, a: &CompareArgs) -> Result<(), CliError> {
    let base = store.resolve(&a.base)?;
    let mut runs = vec![store.load_run(&base)?];
    let others = a
        .others
        .iter()
        .map(|s| store.resolve(s))
        .collect::<Result<Vec<_>, _>>()?;
    runs.extend(load_readable(store, &others)?);
    if runs.len() == 1 {
        return Err(CliError::Usage(
            "none of the runs to compare can be read (see the warnings above)".into(),
        ));
    }
    let m = matrix(&runs)?;
    let others: Vec<usize> = (1..runs.len()).collect();
    let c = compare::compare(&m, 0, &others);
    let idx = indices(&m, &c);
    if a.output.is_some() {
        // Faster/slower are coloured on a terminal, never in a file.
        touchstone_report::colour::disable();
    }
    emit(
        a.output.as_deref(),
        &touchstone_report::comparison(&m, &c, &idx, format(a.format)),
    )
}
