//! `touchstone import FILE…` (`-` is standard input): each document is
//! read as it streams in, one run at a time (`json::read_each`: the size
//! limit bounds one run, so a document of any size imports, its own
//! exports included), every run checked (`touchstone_results::validate`)
//! and stored as soon as it is read, all of them in one transaction: a
//! refused import leaves the store as it was, and creates none (the store
//! is opened when the first run has passed its checks; one this import
//! created is removed again if a later run is refused).

use std::io::Read;
use std::path::{Path, PathBuf};

use touchstone_results::inventory::HostCost;
use touchstone_results::json::{self, Streamed};
use touchstone_results::model::Run;
use touchstone_results::store::{Open, Store};

use crate::error::CliError;
use crate::output::print;
use crate::store;

/// An input named on the command line: its name for messages, and its
/// bytes (`-`: standard input).
fn input(file: &Path) -> Result<(String, Box<dyn Read>), CliError> {
    if file.as_os_str() == "-" {
        return Ok(("standard input".into(), Box::new(std::io::stdin().lock())));
    }
    let path = file.display().to_string();
    let failed = |message: String| CliError::File {
        path: path.clone(),
        message,
    };
    let f = std::fs::File::open(file).map_err(|e| failed(format!("cannot read: {e}")))?;
    if f.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(failed("is a directory, not a results document".into()));
    }
    Ok((path, Box::new(f)))
}

/// What an import stored so far.
#[derive(Default)]
struct Tally {
    imported: usize,
    /// Runs whose id was stored already (also earlier in this import).
    present: Vec<String>,
    /// Hosts whose inventory the documents carried and was stored.
    inventory: usize,
    /// Hosts whose inventory here differs from the documents' (kept).
    kept: Vec<String>,
}

impl Tally {
    fn add(&mut self, store: &mut Store, run: &Run) -> Result<(), CliError> {
        match store.import_run(run)? {
            true => self.imported += 1,
            false => self.present.push(run.id.clone()),
        }
        Ok(())
    }

    fn add_inventory(&mut self, store: &mut Store, inventory: &[HostCost]) -> Result<(), CliError> {
        for entry in inventory {
            match store.import_inventory(entry)? {
                true => self.inventory += 1,
                false => self.kept.push(entry.host.clone()),
            }
        }
        Ok(())
    }

    fn line(&self, store: &Store) -> String {
        let mut line = format!(
            "imported {} run(s) into {}",
            self.imported,
            store.path().display()
        );
        if !self.present.is_empty() {
            line += &format!(
                "; {} already present: {}",
                self.present.len(),
                self.present.join(", ")
            );
        }
        if self.inventory > 0 {
            line += &format!("; the inventory of {} host(s)", self.inventory);
        }
        if !self.kept.is_empty() {
            line += &format!(
                "; the inventory stored here kept for {} (it differs from the document's)",
                self.kept.join(", ")
            );
        }
        line
    }
}

pub fn import(db: Option<PathBuf>, files: &[PathBuf]) -> Result<(), CliError> {
    // Every input opens before anything is read.
    let inputs = files
        .iter()
        .map(|f| input(f))
        .collect::<Result<Vec<_>, _>>()?;
    let path = db.clone().unwrap_or_else(Store::default_path);
    let existed = path.exists();
    let mut store: Option<Store> = None;
    let mut tally = Tally::default();
    let read_all = || -> Result<(), CliError> {
        let open = |store: &mut Option<Store>| -> Result<(), CliError> {
            if store.is_none() {
                let mut s = store::open(db.clone(), Open::CreateIfMissing)?;
                s.begin_import()?;
                *store = Some(s);
            }
            Ok(())
        };
        for (name, reader) in inputs {
            let head = json::read_each(reader, |run| {
                open(&mut store)?;
                tally.add(store.as_mut().expect("opened"), &run)
            })
            .map_err(|e| match e {
                Streamed::Json(source) => CliError::Json { path: name, source },
                Streamed::Refused(e) => e,
            })?;
            if !head.inventory.is_empty() {
                open(&mut store)?;
                tally.add_inventory(store.as_mut().expect("opened"), &head.inventory)?;
            }
        }
        Ok(())
    };
    match (read_all(), store) {
        (Ok(()), Some(mut s)) => {
            s.commit_import()?;
            print(&format!("{}\n", tally.line(&s)));
            Ok(())
        }
        // Documents without runs: the store is made as an import makes it.
        (Ok(()), None) => {
            let s = store::open(db, Open::CreateIfMissing)?;
            print(&format!("{}\n", tally.line(&s)));
            Ok(())
        }
        (Err(e), Some(mut s)) => {
            let _ = s.rollback_import();
            let empty = s.list_runs().is_ok_and(|r| r.is_empty());
            drop(s);
            if !existed && empty {
                // Made by this import for runs it then refused.
                let _ = std::fs::remove_file(&path);
            }
            Err(e)
        }
        (Err(e), None) => Err(e),
    }
}

/// Store checked runs (from `json::read`) in one transaction, each once,
/// and say what happened: the way runs a fleet brings home enter the store.
pub fn store_runs(db: Option<PathBuf>, all: Vec<Run>) -> Result<String, CliError> {
    let mut store = store::open(db, Open::CreateIfMissing)?;
    store.begin_import()?;
    let mut tally = Tally::default();
    for run in &all {
        if let Err(e) = tally.add(&mut store, run) {
            let _ = store.rollback_import();
            return Err(e);
        }
    }
    store.commit_import()?;
    Ok(tally.line(&store))
}
