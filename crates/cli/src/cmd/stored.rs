//! Reading stored runs: `runs`, `show`, `export` (bringing runs in is `import`).

use std::path::Path;

use touchstone_report::terminal;
use touchstone_results::json;
use touchstone_results::store::Store;

use crate::error::CliError;
use crate::output::{self, print};

pub fn runs(store: &Store, as_json: bool) -> Result<(), CliError> {
    let rows = store.list_runs()?;
    if as_json {
        output::print_json(&format!(
            "{}\n",
            serde_json::to_string_pretty(&rows).expect("serialisable")
        ));
    } else if rows.is_empty() {
        print(&format!("no runs stored in {}\n", store.path().display()));
    } else {
        print(&terminal::runs(&rows));
    }
    Ok(())
}

pub fn show(store: &Store, spec: &str, as_json: bool) -> Result<(), CliError> {
    let run = store.load_run(&store.resolve(spec)?)?;
    if as_json {
        output::print_json(&format!("{}\n", json::to_string(vec![run])));
    } else {
        print(&format!(
            "{}\n{}{}",
            terminal::run_header(&run),
            terminal::measurements(&run.measurements),
            terminal::curves(&run.curves)
        ));
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
            output::print_json(&format!("{text}\n"));
            Ok(())
        }
        Some(path) => output::write_file(path, text.as_bytes(), store.path()),
    }
}
