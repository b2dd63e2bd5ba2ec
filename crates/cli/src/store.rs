//! Which results store a command uses (`--db`, `$TOUCHSTONE_DB`, or the
//! default path) and opening it, passing on what the store says about how
//! it could be read.

use std::path::PathBuf;

use touchstone_results::store::{Open, Store};

use crate::error::CliError;

/// Open the store (reading commands with `Open::ReadOnly`: they work on a
/// read-only or full disk), passing on what the store says about how it
/// could be read. A store named with --db (or TOUCHSTONE_DB) must lie in a
/// directory that exists, so a mistyped path makes nothing; only the
/// default store's own directory is made, by a command that writes.
pub fn open(db: Option<PathBuf>, mode: Open) -> Result<Store, CliError> {
    let path = match db {
        Some(path) => path,
        None => {
            let path = Store::default_path();
            if let (Open::CreateIfMissing, Some(dir)) = (mode, path.parent()) {
                std::fs::create_dir_all(dir).map_err(|e| CliError::File {
                    path: dir.display().to_string(),
                    message: format!("cannot make the default store's directory: {e}"),
                })?;
            }
            path
        }
    };
    let store = Store::open(&path, mode)?;
    for notice in store.notices() {
        crate::output::eprint_line(&format!("warning: {notice}"));
    }
    Ok(store)
}
