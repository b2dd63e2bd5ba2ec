//! `touchstone import FILE…` (`-` is standard input): every document is
//! read as it streams in, within the size limit, and every run checked
//! (`touchstone_results::validate`) before the store is opened; then all
//! the runs go in one transaction. A refused import leaves the store as it
//! was (and creates none).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use touchstone_results::json;
use touchstone_results::model::Run;
use touchstone_results::store::Open;

use crate::error::CliError;
use crate::output::print;
use crate::store;

/// Read and check one document; `-` is standard input.
fn read(file: &Path) -> Result<json::Document, CliError> {
    let stdin = file.as_os_str() == "-";
    let path = if stdin {
        "standard input".to_string()
    } else {
        file.display().to_string()
    };
    let failed = |message: String| CliError::File {
        path: path.clone(),
        message,
    };
    let doc = if stdin {
        json::read(std::io::stdin().lock())
    } else {
        let f = std::fs::File::open(file).map_err(|e| failed(format!("cannot read: {e}")))?;
        if f.metadata().is_ok_and(|m| m.is_dir()) {
            return Err(failed("is a directory, not a results document".into()));
        }
        json::read(f)
    };
    doc.map_err(|source| CliError::Json { path, source })
}

pub fn import(db: Option<PathBuf>, files: &[PathBuf]) -> Result<(), CliError> {
    let mut runs = Vec::new();
    for f in files {
        runs.extend(read(f)?.runs);
    }
    print(&format!("{}\n", store_runs(db, runs)?));
    Ok(())
}

/// Store checked runs (from `json::read`) in one transaction, each once,
/// and say what happened: the one way runs from elsewhere enter the store
/// (`import`, and `fleet` bringing results home).
pub fn store_runs(db: Option<PathBuf>, all: Vec<Run>) -> Result<String, CliError> {
    let mut runs = Vec::new();
    let mut seen = BTreeSet::new();
    let mut repeated = Vec::new();
    for run in all {
        // The same run twice in one import (two exports holding it) goes in once.
        if seen.insert(run.id.clone()) {
            runs.push(run);
        } else {
            repeated.push(run.id);
        }
    }
    let mut store = store::open(db, Open::CreateIfMissing)?;
    let mut skipped = store.import_runs(&runs)?;
    let imported = runs.len() - skipped.len();
    skipped.extend(repeated);
    let mut line = format!("imported {imported} run(s) into {}", store.path().display());
    if !skipped.is_empty() {
        line += &format!(
            "; {} already present: {}",
            skipped.len(),
            skipped.join(", ")
        );
    }
    Ok(line)
}
