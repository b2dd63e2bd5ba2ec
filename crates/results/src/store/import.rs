//! Runs from elsewhere coming in (`import`, `fleet` bringing results
//! home): all of them in one transaction, one run at a time, so that an
//! import of any size holds one run in memory and goes in whole or not at
//! all (`begin_import`, `import_run`…, `commit_import`; `import_runs` for
//! runs already in memory).

use rusqlite::Connection;

use super::write::{insert_header, insert_measurement, upsert_curve};
use super::{map_err, writing, Store, StoreError};
use crate::model::Run;

/// Store `run` in the transaction open on `conn` unless a run of its id is
/// stored already (also earlier in this import): whether it was stored.
/// No owner is recorded: no process here writes an imported run.
fn add(conn: &Connection, path: &std::path::Path, run: &Run) -> Result<bool, StoreError> {
    let err = |e| map_err(path, e);
    let exists: bool = conn
        .query_row("SELECT count(*) FROM runs WHERE id = ?1", [&run.id], |r| {
            r.get::<_, i64>(0).map(|n| n > 0)
        })
        .map_err(err)?;
    if exists {
        return Ok(false);
    }
    insert_header(conn, run, None).map_err(err)?;
    for (seq, m) in run.measurements.iter().enumerate() {
        insert_measurement(conn, &run.id, seq as i64, m).map_err(err)?;
    }
    for (seq, c) in run.curves.iter().enumerate() {
        upsert_curve(conn, &run.id, seq as i64, c).map_err(err)?;
    }
    Ok(true)
}

impl Store {
    /// Begin an import: `import_run` each run as it is read, then
    /// `commit_import`. Until then the store is locked for writing; a
    /// store closed before (an import refused half way) is left as it was:
    /// SQLite rolls back what a closed connection did not commit.
    pub fn begin_import(&mut self) -> Result<(), StoreError> {
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| map_err(&self.path, e))
    }

    /// One run of the import `begin_import` began: whether it was stored
    /// (false: a run of its id is stored already).
    pub fn import_run(&mut self, run: &Run) -> Result<bool, StoreError> {
        add(&self.conn, &self.path, run)
    }

    /// Store every run of the import.
    pub fn commit_import(&mut self) -> Result<(), StoreError> {
        self.conn
            .execute_batch("COMMIT")
            .map_err(|e| map_err(&self.path, e))
    }

    /// Leave the store as it was before `begin_import`.
    pub fn rollback_import(&mut self) -> Result<(), StoreError> {
        self.conn
            .execute_batch("ROLLBACK")
            .map_err(|e| map_err(&self.path, e))
    }

    /// Store whole runs (an import) in one transaction: all or nothing.
    /// Runs whose id is already stored are skipped and returned.
    pub fn import_runs(&mut self, runs: &[Run]) -> Result<Vec<String>, StoreError> {
        let tx = writing(&mut self.conn, &self.path)?;
        let mut skipped = Vec::new();
        for run in runs {
            if !add(&tx, &self.path, run)? {
                skipped.push(run.id.clone());
            }
        }
        tx.commit().map_err(|e| map_err(&self.path, e))?;
        Ok(skipped)
    }
}
