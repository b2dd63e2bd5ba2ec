//! oltp's embedded engine: SQLite (rusqlite's bundled library), one file
//! in the trial's scratch directory, WAL journal, `synchronous=NORMAL`.

use std::path::Path;
use std::time::Duration;

use super::mix::{Conn, Dialect, Row, COLUMNS, STATEMENTS};

/// How long a client waits for another's write lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// A connection to the embedded SQLite file.
pub struct SqliteConn(rusqlite::Connection);

impl SqliteConn {
    /// Open the trial's database (made by `create_sqlite`).
    pub fn open(path: &Path) -> Result<SqliteConn, String> {
        let c = rusqlite::Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| format!("cannot open the SQLite database {}: {e}", path.display()))?;
        c.busy_timeout(BUSY_TIMEOUT).map_err(|e| e.to_string())?;
        // Per connection: WAL's usual setting, a sync at checkpoints only.
        c.execute_batch("PRAGMA synchronous = NORMAL")
            .map_err(|e| e.to_string())?;
        c.set_prepared_statement_cache_capacity(STATEMENTS.len() + 4);
        Ok(SqliteConn(c))
    }
}

/// Make the SQLite database at `path` with its rows at `scale`.
pub fn create_sqlite(path: &Path, scale: u64) -> Result<(), String> {
    let bad =
        |e: rusqlite::Error| format!("cannot make the SQLite database {}: {e}", path.display());
    let c = rusqlite::Connection::open(path).map_err(bad)?;
    c.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
        .map_err(bad)?;
    c.execute_batch(&format!("BEGIN; {} COMMIT;", Dialect::Sqlite.schema(scale)))
        .map_err(bad)
}

impl Conn for SqliteConn {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }
    fn query(
        &mut self,
        st: usize,
        args: &[i64],
        each: &mut dyn FnMut(&Row),
    ) -> Result<u64, String> {
        let mut s = self
            .0
            .prepare_cached(STATEMENTS[st])
            .map_err(|e| e.to_string())?;
        let mut rows = s
            .query(rusqlite::params_from_iter(args))
            .map_err(|e| e.to_string())?;
        let mut n = 0;
        while let Some(r) = rows.next().map_err(|e| e.to_string())? {
            let mut row: Row = [0; 4];
            for (k, v) in row.iter_mut().enumerate().take(COLUMNS[st]) {
                *v = r
                    .get::<_, Option<i64>>(k)
                    .map_err(|e| e.to_string())?
                    .unwrap_or(0);
            }
            each(&row);
            n += 1;
        }
        Ok(n)
    }
    fn execute(&mut self, st: usize, args: &[i64]) -> Result<u64, String> {
        let mut s = self
            .0
            .prepare_cached(STATEMENTS[st])
            .map_err(|e| e.to_string())?;
        s.execute(rusqlite::params_from_iter(args))
            .map(|n| n as u64)
            .map_err(|e| e.to_string())
    }
    fn batch(&mut self, sql: &str) -> Result<(), String> {
        self.0.execute_batch(sql).map_err(|e| e.to_string())
    }
}
