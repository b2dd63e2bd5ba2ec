//! Reading stored runs: `runs`, `show`, `export`, and bringing runs in: `import`.

use std::io::Write;
use std::path::{Path, PathBuf};

use touchstone_report::terminal;
use touchstone_results::json;
use touchstone_results::store::Store;

use crate::error::CliError;

pub fn runs(store: &Store, as_json: bool) -> Result<(), CliError> {
    let rows = store.list_runs()?;
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).expect("serialisable")
        );
    } else if rows.is_empty() {
        println!("no runs stored in {}", store.path().display());
    } else {
        print!("{}", terminal::runs(&rows));
    }
    Ok(())
}

pub fn show(store: &Store, spec: &str, as_json: bool, warnings: bool) -> Result<(), CliError> {
    let run = store.load_run(&store.resolve(spec)?)?;
    if warnings {
        print!("{}", terminal::all_warnings(&run));
    } else if as_json {
        println!("{}", json::to_string(vec![run]));
    } else {
        print!(
            "{}\n{}{}",
            terminal::run_header(&run),
            terminal::measurements(&run.measurements),
            terminal::curves(&run.curves)
        );
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
    let runs = ids
        .iter()
        .map(|id| store.load_run(id))
        .collect::<Result<Vec<_>, _>>()?;
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
