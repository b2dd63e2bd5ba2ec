//! The embedded SQLite store of runs.
//!
//! Safety of stored results is the point of this file:
//! - every write is a transaction, and each measurement is committed the
//!   moment it is finished (persist as you go), so a crash or Ctrl-C loses at
//!   most the measurement in progress and never touches earlier runs;
//! - the database is marked with an application id; a SQLite file that is not
//!   ours is refused, never modified;
//! - a database locked by another process is reported as such after a short
//!   wait, never overwritten.
//!
//! A run's header, each measurement and each load curve are stored as JSON
//! documents of the results model (the exchange format), with the columns
//! needed to find them. A curve's row is rewritten as each of its points is
//! measured, so a crash mid-sweep keeps the points before it.
//!
//! Schema versions: 1, runs and measurements; 2 adds the `curves` table. A
//! version-1 store is brought to version 2 when opened (one transaction that
//! only adds the empty table); nothing already stored changes.

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, ErrorCode, OptionalExtension, TransactionBehavior};

use crate::curve::Curve;
pub use crate::model::RunRow;
use crate::model::{Measurement, Run};

/// "TSTN": marks a SQLite file as a touchstone store (PRAGMA application_id).
pub const APPLICATION_ID: i32 = 0x5453_544e;
pub const SCHEMA_VERSION: i32 = 2;
/// How long an operation waits for another process's lock before the store
/// is reported locked.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(2000);

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0}: not a SQLite database (is this the right file?)")]
    NotADatabase(PathBuf),
    #[error("{0}: a SQLite database that is not a touchstone store; refusing to touch it (choose another path with --db)")]
    Foreign(PathBuf),
    #[error(
        "{0}: the database is locked by another process; wait for it to finish or use another --db"
    )]
    Locked(PathBuf),
    #[error("{0}: store schema version {1} is newer than this touchstone understands ({SCHEMA_VERSION}); upgrade touchstone")]
    TooNew(PathBuf, i32),
    #[error(
        "{0}: no results database here yet (run `touchstone run` first, or name one with --db)"
    )]
    Missing(PathBuf),
    #[error("no stored run matches '{0}' (see `touchstone runs`)")]
    NoSuchRun(String),
    #[error("'{0}' matches several runs: {1}; give more of the id")]
    Ambiguous(String, String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Corrupt { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Sqlite {
        path: PathBuf,
        source: rusqlite::Error,
    },
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// Whether opening may create a new, empty store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Open {
    CreateIfMissing,
    MustExist,
}

impl Store {
    /// The per-user default: $XDG_DATA_HOME/touchstone/results.sqlite, else
    /// ~/.local/share/touchstone/results.sqlite.
    pub fn default_path() -> PathBuf {
        let base = std::env::var_os("XDG_DATA_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
            .unwrap_or_else(|| PathBuf::from("."));
        base.join("touchstone").join("results.sqlite")
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn open(path: &Path, mode: Open) -> Result<Store, StoreError> {
        let path = path.to_path_buf();
        if !path.exists() {
            if mode == Open::MustExist {
                return Err(StoreError::Missing(path));
            }
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
                    path: dir.to_path_buf(),
                    source,
                })?;
            }
        } else if path.is_dir() {
            return Err(StoreError::Io {
                path: path.clone(),
                source: std::io::Error::other("is a directory, not a database file"),
            });
        }
        let conn = Connection::open(&path).map_err(|e| map_err(&path, e))?;
        let mut store = Store { conn, path };
        store.prepare_schema()?;
        Ok(store)
    }

    /// The JSON documents a run keeps in `table` (measurements or curves),
    /// in the order they were stored.
    fn docs(&self, table: &'static str, id: &str) -> Result<Vec<String>, StoreError> {
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT doc FROM {table} WHERE run_id = ?1 ORDER BY seq"
            ))
            .map_err(|e| self.err(e))?;
        let docs = st
            .query_map([id], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(docs)
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        map_err(&self.path, e)
    }

    fn prepare_schema(&mut self) -> Result<(), StoreError> {
        self.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| self.err(e))?;
        // One read transaction, so the three are of one moment: read apart,
        // a store another process creates in between would look foreign
        // (no application id yet, then tables).
        let (app_id, tables, version) = {
            let tx = self
                .conn
                .transaction()
                .map_err(|e| map_err(&self.path, e))?;
            let read = |sql: &str| -> Result<i64, StoreError> {
                tx.query_row(sql, [], |r| r.get(0))
                    .map_err(|e| map_err(&self.path, e))
            };
            let got = (
                read("PRAGMA application_id")? as i32,
                read("SELECT count(*) FROM sqlite_master")?,
                read("PRAGMA user_version")? as i32,
            );
            tx.commit().map_err(|e| map_err(&self.path, e))?;
            got
        };
        if app_id == APPLICATION_ID {
            if version > SCHEMA_VERSION {
                return Err(StoreError::TooNew(self.path.clone(), version));
            }
        } else if app_id != 0 || tables != 0 {
            return Err(StoreError::Foreign(self.path.clone()));
        }
        // WAL keeps readers and the one writer apart, and a torn write can
        // never damage committed transactions; FULL sync makes each commit durable.
        // Switching a new file to WAL takes an exclusive lock without
        // SQLite's busy handler: when several processes open a store being
        // created, the switch is retried here for as long as the busy timeout.
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            match self.conn.pragma_update(None, "journal_mode", "WAL") {
                Ok(()) => break,
                Err(e)
                    if matches!(
                        e.sqlite_error_code(),
                        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
                    ) && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(e) => return Err(self.err(e)),
            }
        }
        self.conn
            .pragma_update(None, "synchronous", "FULL")
            .map_err(|e| self.err(e))?;
        self.conn
            .pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| self.err(e))?;
        if app_id == 0 {
            // Every write transaction begins as a writer (BEGIN IMMEDIATE):
            // a deferred one that upgrades from reading gets SQLITE_BUSY at
            // once, without the busy timeout, when another process creates
            // the same store or writes to it (SQLite's guidance for WAL).
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|e| map_err(&self.path, e))?;
            tx.execute_batch(&format!(
                "{SCHEMA_V1}
                 {CURVES_TABLE}
                 PRAGMA application_id = {APPLICATION_ID};
                 PRAGMA user_version = {SCHEMA_VERSION};"
            ))
            .map_err(|e| map_err(&self.path, e))?;
            tx.commit().map_err(|e| map_err(&self.path, e))?;
        } else if version < SCHEMA_VERSION {
            self.upgrade()?;
        }
        Ok(())
    }

    /// Bring an older store of ours to the current schema, in one
    /// transaction (another process may have upgraded it meanwhile: every
    /// step is idempotent).
    fn upgrade(&mut self) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| map_err(&self.path, e))?;
        tx.execute_batch(&format!(
            "{CURVES_TABLE}
             PRAGMA user_version = {SCHEMA_VERSION};"
        ))
        .map_err(|e| map_err(&self.path, e))?;
        tx.commit().map_err(|e| map_err(&self.path, e))
    }
}

/// The tables of schema version 1: runs and their measurements.
const SCHEMA_V1: &str = "CREATE TABLE IF NOT EXISTS runs (
                     id TEXT PRIMARY KEY,
                     seq INTEGER NOT NULL UNIQUE,
                     label TEXT,
                     hostname TEXT NOT NULL,
                     started_at TEXT NOT NULL,
                     status TEXT NOT NULL,
                     header TEXT NOT NULL
                 );
                 CREATE TABLE IF NOT EXISTS measurements (
                     run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                     seq INTEGER NOT NULL,
                     name TEXT NOT NULL,
                     doc TEXT NOT NULL,
                     PRIMARY KEY (run_id, seq)
                 );
                 CREATE INDEX IF NOT EXISTS measurements_by_name ON measurements(name);";

/// Added in schema version 2: the load curves of workloads, one row each.
const CURVES_TABLE: &str = "CREATE TABLE IF NOT EXISTS curves (
                     run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                     seq INTEGER NOT NULL,
                     workload TEXT NOT NULL,
                     doc TEXT NOT NULL,
                     PRIMARY KEY (run_id, seq)
                 );";

impl Store {
    /// Record a new run (its header, without measurements) as running.
    pub fn begin_run(&mut self, run: &Run) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| map_err(&self.path, e))?;
        insert_header(&tx, run).map_err(|e| map_err(&self.path, e))?;
        tx.commit().map_err(|e| map_err(&self.path, e))
    }

    /// Commit one finished measurement of a run.
    pub fn add_measurement(&mut self, run_id: &str, m: &Measurement) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| map_err(&self.path, e))?;
        let seq: i64 = tx
            .query_row(
                "SELECT coalesce(max(seq), -1) + 1 FROM measurements WHERE run_id = ?1",
                [run_id],
                |r| r.get(0),
            )
            .map_err(|e| map_err(&self.path, e))?;
        insert_measurement(&tx, run_id, seq, m).map_err(|e| map_err(&self.path, e))?;
        tx.commit().map_err(|e| map_err(&self.path, e))
    }

    /// Store the load curve `seq` (0-based, in the run's order) of a run, or
    /// replace what was stored of it: called as each point is measured, so
    /// the stored curve is never more than one point behind.
    pub fn put_curve(&mut self, run_id: &str, seq: usize, c: &Curve) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| map_err(&self.path, e))?;
        upsert_curve(&tx, run_id, seq as i64, c).map_err(|e| map_err(&self.path, e))?;
        tx.commit().map_err(|e| map_err(&self.path, e))
    }

    /// Close a run: its status, end time, reason and run-level warnings are
    /// taken from `run` (its measurements are already stored).
    pub fn finish_run(&mut self, run: &Run) -> Result<(), StoreError> {
        let run_id = run.id.as_str();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| map_err(&self.path, e))?;
        let header: String = tx
            .query_row("SELECT header FROM runs WHERE id = ?1", [run_id], |r| {
                r.get(0)
            })
            .map_err(|e| map_err(&self.path, e))?;
        let mut stored: Run = serde_json::from_str(&header).map_err(|e| StoreError::Corrupt {
            path: self.path.clone(),
            message: format!("run {run_id}: {e}"),
        })?;
        stored.status = run.status;
        stored.ended_at = run.ended_at;
        stored.reason = run.reason.clone();
        stored.warnings = run.warnings.clone();
        tx.execute(
            "UPDATE runs SET status = ?2, header = ?3 WHERE id = ?1",
            params![
                run_id,
                run.status.as_str(),
                serde_json::to_string(&stored).unwrap()
            ],
        )
        .map_err(|e| map_err(&self.path, e))?;
        tx.commit().map_err(|e| map_err(&self.path, e))
    }

    /// All runs, oldest first.
    pub fn list_runs(&self) -> Result<Vec<RunRow>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT r.id, r.label, r.hostname, r.started_at, r.status,
                        (SELECT count(*) FROM measurements m WHERE m.run_id = r.id),
                        (SELECT count(*) FROM curves c WHERE c.run_id = r.id)
                 FROM runs r ORDER BY r.seq",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([], |r| {
                let started: String = r.get(3)?;
                Ok(RunRow {
                    id: r.get(0)?,
                    label: r.get(1)?,
                    hostname: r.get(2)?,
                    started_at: started.parse().unwrap_or_default(),
                    status: r.get(4)?,
                    measurements: r.get::<_, i64>(5)? as u64,
                    curves: r.get::<_, i64>(6)? as u64,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// Resolve what a user typed to one run id: a unique id prefix, an exact
    /// label, or "last" (also "last~N", N runs before the last).
    pub fn resolve(&self, spec: &str) -> Result<String, StoreError> {
        let runs = self.list_runs()?;
        if let Some(rest) = spec.strip_prefix("last") {
            let back: usize = match rest.strip_prefix('~') {
                Some(n) => n.parse().map_err(|_| StoreError::NoSuchRun(spec.into()))?,
                None if rest.is_empty() => 0,
                None => return Err(StoreError::NoSuchRun(spec.into())),
            };
            return runs
                .iter()
                .rev()
                .nth(back)
                .map(|r| r.id.clone())
                .ok_or_else(|| StoreError::NoSuchRun(spec.into()));
        }
        if let Some(r) = runs.iter().find(|r| r.id == spec) {
            return Ok(r.id.clone());
        }
        let by_label: Vec<_> = runs
            .iter()
            .filter(|r| r.label.as_deref() == Some(spec))
            .collect();
        let by_prefix: Vec<_> = runs.iter().filter(|r| r.id.starts_with(spec)).collect();
        let hits = if !by_label.is_empty() {
            by_label
        } else {
            by_prefix
        };
        match hits.len() {
            0 => Err(StoreError::NoSuchRun(spec.into())),
            1 => Ok(hits[0].id.clone()),
            _ => Err(StoreError::Ambiguous(
                spec.into(),
                hits.iter()
                    .map(|r| r.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            )),
        }
    }

    /// A whole run with its measurements and curves.
    pub fn load_run(&self, id: &str) -> Result<Run, StoreError> {
        let header: Option<String> = self
            .conn
            .query_row("SELECT header FROM runs WHERE id = ?1", [id], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))?;
        let header = header.ok_or_else(|| StoreError::NoSuchRun(id.into()))?;
        let corrupt = |e: serde_json::Error| StoreError::Corrupt {
            path: self.path.clone(),
            message: format!("run {id}: {e}"),
        };
        let mut run: Run = serde_json::from_str(&header).map_err(corrupt)?;
        run.measurements = self
            .docs("measurements", id)?
            .iter()
            .map(|d| serde_json::from_str(d).map_err(corrupt))
            .collect::<Result<_, _>>()?;
        run.curves = self
            .docs("curves", id)?
            .iter()
            .map(|d| serde_json::from_str(d).map_err(corrupt))
            .collect::<Result<_, _>>()?;
        Ok(run)
    }

    /// Store whole runs (an import) in one transaction: all or nothing.
    /// Runs whose id is already stored are skipped and returned.
    pub fn import_runs(&mut self, runs: &[Run]) -> Result<Vec<String>, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| map_err(&self.path, e))?;
        let mut skipped = Vec::new();
        for run in runs {
            let exists: bool = tx
                .query_row("SELECT count(*) FROM runs WHERE id = ?1", [&run.id], |r| {
                    r.get::<_, i64>(0).map(|n| n > 0)
                })
                .map_err(|e| map_err(&self.path, e))?;
            if exists {
                skipped.push(run.id.clone());
                continue;
            }
            insert_header(&tx, run).map_err(|e| map_err(&self.path, e))?;
            for (seq, m) in run.measurements.iter().enumerate() {
                insert_measurement(&tx, &run.id, seq as i64, m)
                    .map_err(|e| map_err(&self.path, e))?;
            }
            for (seq, c) in run.curves.iter().enumerate() {
                upsert_curve(&tx, &run.id, seq as i64, c).map_err(|e| map_err(&self.path, e))?;
            }
        }
        tx.commit().map_err(|e| map_err(&self.path, e))?;
        Ok(skipped)
    }
}

fn insert_header(tx: &rusqlite::Transaction, run: &Run) -> rusqlite::Result<()> {
    // Measurements and curves have their own tables.
    let mut header = run.clone();
    header.measurements.clear();
    header.curves.clear();
    let seq: i64 = tx.query_row("SELECT coalesce(max(seq), 0) + 1 FROM runs", [], |r| {
        r.get(0)
    })?;
    tx.execute(
        "INSERT INTO runs (id, seq, label, hostname, started_at, status, header)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            run.id,
            seq,
            run.label,
            run.host.hostname,
            run.started_at.to_rfc3339(),
            run.status.as_str(),
            serde_json::to_string(&header).unwrap()
        ],
    )?;
    Ok(())
}

fn insert_measurement(
    tx: &rusqlite::Transaction,
    run_id: &str,
    seq: i64,
    m: &Measurement,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO measurements (run_id, seq, name, doc) VALUES (?1, ?2, ?3, ?4)",
        params![run_id, seq, m.name, serde_json::to_string(m).unwrap()],
    )?;
    Ok(())
}

fn upsert_curve(
    tx: &rusqlite::Transaction,
    run_id: &str,
    seq: i64,
    c: &Curve,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO curves (run_id, seq, workload, doc) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (run_id, seq) DO UPDATE SET workload = excluded.workload, doc = excluded.doc",
        params![run_id, seq, c.workload, serde_json::to_string(c).unwrap()],
    )?;
    Ok(())
}

fn map_err(path: &Path, e: rusqlite::Error) -> StoreError {
    let path = path.to_path_buf();
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => StoreError::NotADatabase(path),
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => StoreError::Locked(path),
        _ => StoreError::Sqlite { path, source: e },
    }
}
