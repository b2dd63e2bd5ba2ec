//! The embedded SQLite store of runs.
//!
//! Safety of stored results is the point of this file:
//! - every write is a transaction, and each measurement is committed the
//!   moment it is finished (persist as you go), so a crash or Ctrl-C loses at
//!   most the measurement in progress and never touches earlier runs;
//! - the database is marked with an application id; a SQLite file that is not
//!   ours is refused, never modified;
//! - several processes share one store: every transaction that writes
//!   begins as a writer (`BEGIN IMMEDIATE`, SQLite's guidance for WAL: a
//!   read that later upgrades gets SQLITE_BUSY at once, past the busy
//!   handler), so a writer waits up to `BUSY_TIMEOUT` for another and only
//!   then reports the store locked;
//! - each run records the process that owns it (`owner`): a `running` run
//!   whose owner is gone reads as `crashed`;
//! - reading needs no write access: `Open::ReadOnly` reads a store on a
//!   read-only file or file system, or on a full disk whose `-shm` file
//!   cannot be grown (see `open_read_only`);
//! - a full disk is reported as such (`StoreError::Full`), and a stored
//!   document that does not parse is reported naming its run
//!   (`StoreError::Unreadable`), so readers can skip it and
//!   `delete_runs` can remove it.
//!
//! A run's header, each measurement and each load curve are stored as JSON
//! documents of the results model (the exchange format), with the columns
//! needed to find them. A curve's row is rewritten as each of its points is
//! measured, so a crash mid-sweep keeps the points before it.
//!
//! Schema versions: 1, runs and measurements; 2 adds the `curves` table; 3
//! adds the owner columns of `runs` (`owner_pid`, `owner_boot`,
//! `owner_start`, `owner_pidns`); 4 the `briefs` table, each measurement
//! in brief (what reports of many runs read: `crate::brief`). An older
//! store is brought to the current version when opened for writing (one
//! transaction that only adds the empty table and the empty columns);
//! nothing already stored changes, and a measurement stored without a
//! brief is read in brief from its document; 5 the `inventory` table
//! (`crate::inventory`: each host's price and power). Opened read-only,
//! an older store is read as it is.

mod import;
mod inventory;
mod owner;
pub mod place;
mod read;
mod reserve;
mod write;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior};

use crate::brief::Brief;
use crate::curve::Curve;
pub use crate::model::RunRow;
use crate::model::{Measurement, Run, RunStatus};
pub use owner::{Liveness, Owner};

/// "TSTN": marks a SQLite file as a touchstone store (PRAGMA application_id).
pub const APPLICATION_ID: i32 = 0x5453_544e;
pub const SCHEMA_VERSION: i32 = 5;
/// How long an operation waits for another process's lock before the store
/// is reported locked. Writers hold the lock for milliseconds (one
/// measurement, one run header); generous, so that a farm node's several
/// runs and a report read during them never see each other.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0}: not a SQLite database (is this the right file?)")]
    NotADatabase(PathBuf),
    #[error("{0}: a SQLite database that is not a touchstone store; refusing to touch it (choose another path with --db)")]
    Foreign(PathBuf),
    #[error(
        "{0}: the database is locked by another process (waited {secs} s); wait for it to finish or use another --db",
        secs = BUSY_TIMEOUT.as_secs()
    )]
    Locked(PathBuf),
    #[error("{0}: disk full — no space left on the file system that holds the store; free some space and run again")]
    Full(PathBuf),
    #[error("{0}: the store cannot be written here (a read-only file or file system); reading commands still work")]
    ReadOnly(PathBuf),
    #[error("{0}: store schema version {1} is newer than this touchstone understands ({SCHEMA_VERSION}); upgrade touchstone")]
    TooNew(PathBuf, i32),
    #[error(
        "{0}: no results database here yet (run `touchstone run` first, or name one with --db)"
    )]
    Missing(PathBuf),
    #[error("{path}: the directory {dir} {why}; create it first, or name a store in an existing directory with --db (nothing was created)", dir = dir.display(), path = path.display())]
    NoDirectory {
        path: PathBuf,
        dir: PathBuf,
        why: String,
    },
    #[error("{path}: a {kind}, not a database file; a store is a regular file or a new path (choose another --db)", path = path.display())]
    NotAFile { path: PathBuf, kind: &'static str },
    #[error("no stored run matches '{0}' (see `touchstone runs`)")]
    NoSuchRun(String),
    #[error("'{0}' matches several runs: {1}; give more of the id")]
    Ambiguous(String, String),
    #[error("run {0} is still running (process {1}); let it finish or stop it first")]
    StillRunning(String, i64),
    #[error(
        "{path}: run {id} cannot be read: {message}; `touchstone runs delete {id}` removes it"
    )]
    Unreadable {
        path: PathBuf,
        id: String,
        message: String,
    },
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

impl StoreError {
    /// Whether the disk is full: a run stops measuring (what it measures
    /// next could not be stored either) and finishes with what it has.
    pub fn is_full(&self) -> bool {
        matches!(self, StoreError::Full(_))
    }
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// The schema version of the file (older than `SCHEMA_VERSION` only when
    /// opened read-only: writers upgrade it).
    version: i32,
    /// What the reader should know about how the store was read (e.g. recent
    /// results that could not be read from a full or read-only disk).
    notices: Vec<String>,
}

/// How a store is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Open {
    /// For writing; a new, empty store is created if there is none.
    CreateIfMissing,
    /// For writing an existing store.
    MustExist,
    /// For reading an existing store: never writes, works on read-only
    /// files and file systems.
    ReadOnly,
}

/// How a read-only connection reaches the file, in the order tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadAccess {
    /// Read-only, sharing the WAL index (`-shm`) with writers: sees
    /// everything, needs the `-shm` file usable.
    Shared,
    /// Read-write with `locking_mode=EXCLUSIVE`: the WAL index is kept in
    /// the process's memory, no `-shm` needed (SQLite's wal.html, "Use of
    /// WAL without shared memory"); sees the WAL. Blocks writers while open.
    Exclusive,
    /// `immutable=1`: reads the database file alone, no locks, no `-shm`
    /// (SQLite's uri.html); what is still only in the WAL is not seen.
    Immutable,
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

    /// Where the store really is: the name it was opened by with every
    /// link followed (SQLite keeps its -wal and -shm beside this file).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Notes on how the store was read, for the user (empty normally).
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// Open the store named `path`: where its links lead (`place::locate`),
    /// a regular file, or a new one in an existing directory.
    pub fn open(path: &Path, mode: Open) -> Result<Store, StoreError> {
        let path = place::locate(path, mode == Open::CreateIfMissing)?;
        if mode == Open::ReadOnly {
            return Store::open_read_only(path);
        }
        let conn = Connection::open(&path).map_err(|e| map_err(&path, e))?;
        let mut store = Store {
            conn,
            path,
            version: 0,
            notices: Vec::new(),
        };
        match store.prepare_schema() {
            // SQLite opens a file it may not write read-only without a
            // word, and fails later on the -shm file or the first write:
            // say plainly that this store cannot be written here.
            Err(e) if is_access_error(&e) && !place::writable(&store.path) => {
                Err(StoreError::ReadOnly(store.path.clone()))
            }
            Err(e) => Err(e),
            Ok(()) => Ok(store),
        }
    }

    /// Open for reading, never writing. The normal way shares the WAL
    /// index (`-shm`) with writers; where that file cannot be created or
    /// grown — a read-only directory or file system, a full disk that left
    /// a 3-byte `-shm` behind — SQLite's own remedies are tried: the WAL
    /// index in private memory (exclusive locking), then the database file
    /// alone (`immutable=1`), saying what the latter cannot see.
    fn open_read_only(path: PathBuf) -> Result<Store, StoreError> {
        let first = match Store::connect_read_only(&path, ReadAccess::Shared) {
            Ok(s) => return Ok(s),
            Err(e) if !is_access_error(&e) => return Err(e),
            Err(e) => e,
        };
        let wal = std::fs::metadata(place::companion(&path, "-wal")).map_or(0, |m| m.len());
        if wal > 0 {
            if let Ok(s) = Store::connect_read_only(&path, ReadAccess::Exclusive) {
                return Ok(s);
            }
        }
        let mut store =
            Store::connect_read_only(&path, ReadAccess::Immutable).map_err(|_| first)?;
        if wal > 0 {
            store.notices.push(format!(
                "{}: {wal} bytes of the newest results are in its write-ahead log, which \
                 cannot be read here; they are not shown (free space on, or allow writing \
                 to, the store's directory, and read again)",
                store.path.display()
            ));
        }
        Ok(store)
    }

    fn connect_read_only(path: &Path, access: ReadAccess) -> Result<Store, StoreError> {
        let flags = OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        let conn = match access {
            ReadAccess::Shared => {
                Connection::open_with_flags(path, flags | OpenFlags::SQLITE_OPEN_READ_ONLY)
            }
            ReadAccess::Exclusive => {
                Connection::open_with_flags(path, flags | OpenFlags::SQLITE_OPEN_READ_WRITE)
            }
            ReadAccess::Immutable => Connection::open_with_flags(
                format!("{}?immutable=1", place::file_uri(path)),
                flags | OpenFlags::SQLITE_OPEN_READ_ONLY,
            ),
        }
        .map_err(|e| map_err(path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| map_err(path, e))?;
        if access == ReadAccess::Exclusive {
            // Must precede the first access to take effect.
            conn.pragma_update(None, "locking_mode", "EXCLUSIVE")
                .map_err(|e| map_err(path, e))?;
        }
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
            version: 0,
            notices: Vec::new(),
        };
        let (app_id, tables, version) = store.read_identity()?;
        if app_id != APPLICATION_ID {
            return Err(if app_id == 0 && tables == 0 {
                // Created but never initialised: nothing stored yet.
                StoreError::Missing(store.path.clone())
            } else {
                StoreError::Foreign(store.path.clone())
            });
        }
        if version > SCHEMA_VERSION {
            return Err(StoreError::TooNew(store.path.clone(), version));
        }
        store.version = version;
        // A query, not just the header: the reading that fails on a broken
        // `-shm` happens here, while the fallbacks can still be tried.
        store
            .conn
            .query_row("SELECT count(*) FROM runs", [], |r| r.get::<_, i64>(0))
            .map_err(|e| store.err(e))?;
        Ok(store)
    }

    /// The application id, table count and schema version, in one read
    /// transaction so the three are of one moment: read apart, a store
    /// another process creates in between would look foreign (no
    /// application id yet, then tables).
    fn read_identity(&mut self) -> Result<(i32, i64, i32), StoreError> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| map_err(&path, e))?;
        let read = |sql: &str| -> Result<i64, StoreError> {
            tx.query_row(sql, [], |r| r.get(0))
                .map_err(|e| map_err(&path, e))
        };
        let got = (
            read("PRAGMA application_id")? as i32,
            read("SELECT count(*) FROM sqlite_master")?,
            read("PRAGMA user_version")? as i32,
        );
        tx.commit().map_err(|e| map_err(&path, e))?;
        Ok(got)
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        map_err(&self.path, e)
    }

    fn prepare_schema(&mut self) -> Result<(), StoreError> {
        self.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| self.err(e))?;
        let (app_id, tables, version) = self.read_identity()?;
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
        if app_id == 0 || version < SCHEMA_VERSION {
            self.upgrade()?;
        }
        self.version = SCHEMA_VERSION;
        Ok(())
    }

    /// Create the schema in a new file, or bring an older store of ours to
    /// the current version: one write transaction that reads again which
    /// version it starts from, since another process may have created or
    /// upgraded the store between our first look and our lock.
    fn upgrade(&mut self) -> Result<(), StoreError> {
        let path = self.path.clone();
        let tx = writing(&mut self.conn, &path)?;
        let app_id: i32 = tx
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .map_err(|e| map_err(&path, e))?;
        let from: i32 = if app_id == APPLICATION_ID {
            tx.query_row("PRAGMA user_version", [], |r| r.get(0))
                .map_err(|e| map_err(&path, e))?
        } else {
            0
        };
        if from < SCHEMA_VERSION {
            let mut steps = String::new();
            if from < 1 {
                steps += SCHEMA_V1;
            }
            if from < 2 {
                steps += CURVES_TABLE;
            }
            if from < 3 {
                steps += OWNER_COLUMNS;
            }
            if from < 4 {
                steps += BRIEFS_TABLE;
            }
            if from < 5 {
                steps += INVENTORY_TABLE;
            }
            tx.execute_batch(&format!(
                "{steps}
                 PRAGMA application_id = {APPLICATION_ID};
                 PRAGMA user_version = {SCHEMA_VERSION};"
            ))
            .map_err(|e| map_err(&path, e))?;
        }
        tx.commit().map_err(|e| map_err(&path, e))
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

/// Added in schema version 3: the process that writes a run (see `Owner`);
/// empty for imported runs and runs stored before.
const OWNER_COLUMNS: &str = "ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
                 ALTER TABLE runs ADD COLUMN owner_boot TEXT;
                 ALTER TABLE runs ADD COLUMN owner_start INTEGER;
                 ALTER TABLE runs ADD COLUMN owner_pidns TEXT;";

/// Added in schema version 4: each measurement in brief (`Brief`), apart
/// from the documents so that reading them all reads little; none for
/// measurements stored before.
const BRIEFS_TABLE: &str = "CREATE TABLE IF NOT EXISTS briefs (
                     run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                     seq INTEGER NOT NULL,
                     brief TEXT NOT NULL,
                     PRIMARY KEY (run_id, seq)
                 ) WITHOUT ROWID;";

/// Added in schema version 5: each host's price and power, by its
/// identity or name (`crate::inventory::HostCost` as JSON).
const INVENTORY_TABLE: &str = "CREATE TABLE IF NOT EXISTS inventory (
                     host TEXT PRIMARY KEY,
                     doc TEXT NOT NULL
                 ) WITHOUT ROWID;";

/// The families and workloads a run measured, from the store's two
/// comma-joined lists, each once and in name order.
fn names_of(families: Option<String>, workloads: Option<String>) -> Vec<String> {
    let mut names: Vec<String> = [families, workloads]
        .into_iter()
        .flatten()
        .flat_map(|list| list.split(',').map(String::from).collect::<Vec<_>>())
        .filter(|n| !n.is_empty())
        .collect();
    names.sort();
    names.dedup();
    names
}

fn running_or_crashed(owner: Option<Owner>, hostname: &str) -> (RunStatus, Option<String>) {
    match owner {
        None => (
            RunStatus::Crashed,
            Some(
                "no process owns it (stored by an older touchstone, or imported) and it \
                 never finished"
                    .into(),
            ),
        ),
        Some(o) => match o.liveness(hostname) {
            Liveness::Gone(why) => (RunStatus::Crashed, Some(why)),
            Liveness::Alive | Liveness::Unknown => (RunStatus::Running, None),
        },
    }
}

impl Store {
    /// The owner columns as a SELECT list over `runs r` (NULLs before
    /// schema version 3).
    fn owner_columns(&self) -> &'static str {
        if self.version >= 3 {
            "r.owner_pid, r.owner_boot, r.owner_start, r.owner_pidns"
        } else {
            "NULL, NULL, NULL, NULL"
        }
    }

    /// The owner of a run, from four columns starting at `at`.
    fn owner_at(r: &rusqlite::Row, at: usize) -> rusqlite::Result<Option<Owner>> {
        let pid: Option<i64> = r.get(at)?;
        let boot: Option<String> = r.get(at + 1)?;
        let start: Option<i64> = r.get(at + 2)?;
        let ns: Option<String> = r.get(at + 3)?;
        Ok(match (pid, boot, start, ns) {
            (Some(pid), Some(boot), Some(start), Some(pid_namespace)) => Some(Owner {
                pid,
                boot,
                start,
                pid_namespace,
            }),
            _ => None,
        })
    }

    /// All runs, oldest first. A `running` run whose owner is gone is listed
    /// as `crashed`.
    pub fn list_runs(&self) -> Result<Vec<RunRow>, StoreError> {
        let (curves, workloads) = if self.version >= 2 {
            (
                "(SELECT count(*) FROM curves c WHERE c.run_id = r.id)",
                "(SELECT group_concat(DISTINCT c.workload) FROM curves c WHERE c.run_id = r.id)",
            )
        } else {
            ("0", "NULL")
        };
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT r.id, r.label, r.hostname, r.started_at, r.status,
                        (SELECT count(*) FROM measurements m WHERE m.run_id = r.id),
                        {curves}, {},
                        (SELECT group_concat(DISTINCT substr(m.name, 1, instr(m.name || '/', '/') - 1))
                         FROM measurements m WHERE m.run_id = r.id),
                        {workloads},
                        CASE WHEN json_valid(r.header)
                             THEN json_extract(r.header, '$.host.machine_id') END
                 FROM runs r ORDER BY r.seq",
                self.owner_columns()
            ))
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([], |r| {
                let started: String = r.get(3)?;
                let hostname: String = r.get(2)?;
                let mut status: String = r.get(4)?;
                if status == RunStatus::Running.as_str() {
                    status = running_or_crashed(Store::owner_at(r, 7)?, &hostname)
                        .0
                        .as_str()
                        .into();
                }
                Ok(RunRow {
                    id: r.get(0)?,
                    label: r.get(1)?,
                    hostname,
                    started_at: started.parse().unwrap_or_default(),
                    status,
                    measurements: r.get::<_, i64>(5)? as u64,
                    curves: r.get::<_, i64>(6)? as u64,
                    measured: names_of(r.get(11)?, r.get(12)?),
                    machine_id: r.get::<_, Option<String>>(13).ok().flatten(),
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

    /// Delete runs (ids as stored) with their measurements and curves, in
    /// one transaction: all or none. A run whose owning process is alive is
    /// refused. Works on runs whose documents do not parse.
    pub fn delete_runs(&mut self, ids: &[String]) -> Result<(), StoreError> {
        let path = self.path.clone();
        let owner_columns = self.owner_columns();
        let tx = writing(&mut self.conn, &path)?;
        for id in ids {
            let found = tx
                .query_row(
                    &format!(
                        "SELECT r.status, r.hostname, {owner_columns} FROM runs r WHERE r.id = ?1"
                    ),
                    [id],
                    |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, String>(1)?,
                            Store::owner_at(r, 2)?,
                        ))
                    },
                )
                .optional()
                .map_err(|e| map_err(&path, e))?;
            let Some((status, hostname, owner)) = found else {
                return Err(StoreError::NoSuchRun(id.clone()));
            };
            if let (true, Some(o)) = (status == RunStatus::Running.as_str(), &owner) {
                if o.liveness(&hostname) == Liveness::Alive {
                    return Err(StoreError::StillRunning(id.clone(), o.pid));
                }
            }
            tx.execute("DELETE FROM measurements WHERE run_id = ?1", [id])
                .map_err(|e| map_err(&path, e))?;
            if self.version >= 4 {
                tx.execute("DELETE FROM briefs WHERE run_id = ?1", [id])
                    .map_err(|e| map_err(&path, e))?;
            }
            tx.execute("DELETE FROM curves WHERE run_id = ?1", [id])
                .map_err(|e| map_err(&path, e))?;
            tx.execute("DELETE FROM runs WHERE id = ?1", [id])
                .map_err(|e| map_err(&path, e))?;
        }
        tx.commit().map_err(|e| map_err(&path, e))?;
        for id in ids {
            reserve::release(&path, id);
        }
        Ok(())
    }

    /// Give a run a new label (`None` removes it), in its column and its
    /// stored header alike. A header that is not JSON keeps its text.
    pub fn relabel(&mut self, id: &str, label: Option<&str>) -> Result<(), StoreError> {
        let path = self.path.clone();
        let tx = writing(&mut self.conn, &path)?;
        let header: String = tx
            .query_row("SELECT header FROM runs WHERE id = ?1", [id], |r| r.get(0))
            .optional()
            .map_err(|e| map_err(&path, e))?
            .ok_or_else(|| StoreError::NoSuchRun(id.into()))?;
        // Edited as a JSON value, so fields this version does not know stay.
        let header = match serde_json::from_str::<serde_json::Value>(&header) {
            Ok(mut v) if v.is_object() => {
                v["label"] = label.map_or(serde_json::Value::Null, |l| l.into());
                v.to_string()
            }
            _ => header,
        };
        tx.execute(
            "UPDATE runs SET label = ?2, header = ?3 WHERE id = ?1",
            params![id, label, header],
        )
        .map_err(|e| map_err(&path, e))?;
        tx.commit().map_err(|e| map_err(&path, e))
    }
}

/// Whether a read-only open failed for want of access to the files (not for
/// what the file holds): the cases another way of reading may pass.
fn is_access_error(e: &StoreError) -> bool {
    match e {
        StoreError::Full(_) | StoreError::ReadOnly(_) => true,
        StoreError::Sqlite { source, .. } => matches!(
            source.sqlite_error_code(),
            Some(
                ErrorCode::CannotOpen
                    | ErrorCode::ReadOnly
                    | ErrorCode::SystemIoFailure
                    | ErrorCode::DiskFull
                    | ErrorCode::PermissionDenied
            )
        ),
        _ => false,
    }
}

/// A transaction that writes: it begins as a writer (`BEGIN IMMEDIATE`, so
/// that the busy timeout waits for another writer; see the module's notes).
fn writing<'c>(
    conn: &'c mut Connection,
    path: &Path,
) -> Result<rusqlite::Transaction<'c>, StoreError> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| map_err(path, e))
}

fn map_err(path: &Path, e: rusqlite::Error) -> StoreError {
    let path = path.to_path_buf();
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => StoreError::NotADatabase(path),
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => StoreError::Locked(path),
        Some(ErrorCode::DiskFull) => StoreError::Full(path),
        Some(ErrorCode::ReadOnly) => StoreError::ReadOnly(path),
        // SQLite reports ENOSPC on some paths (growing the -shm file, a
        // sync) as a generic I/O error: name it when the disk is full.
        Some(ErrorCode::SystemIoFailure) if place::file_system_full(&path) => {
            StoreError::Full(path)
        }
        _ => StoreError::Sqlite { path, source: e },
    }
}
