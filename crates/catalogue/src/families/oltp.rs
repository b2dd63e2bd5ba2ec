//! oltp: a FASTTRACK-like database transaction mix (seed 004, Section 2) on
//! the load-curve engine. Ten transactions — point read, range read, join,
//! aggregate scan, insert, update, delete, read-modify-write, one rolled
//! back and one multi-row transfer — run in a seeded random order (each
//! type a tenth of the mix) by N concurrent clients, each with its own
//! connection, against a small bank-like database made at a chosen scale:
//! per unit of `scale`, one branch and 10 000 accounts, and one history row
//! per account.
//!
//! Engines: the embedded SQLite (rusqlite's bundled library; a file in the
//! trial's scratch directory, WAL journal with `synchronous=NORMAL`, as
//! applications that share one file between processes run it), or, with
//! `--postgres URL` (`engine:postgres`), an existing PostgreSQL server the
//! user names, the clients connecting through libpq (`libpq.rs` says why):
//! each trial creates its own schema there
//! (`touchstone_<pid>_<random>`), makes the tables in it and drops it when
//! the trial ends, also after a failure or Ctrl-C; nothing else on the
//! server is touched. The mix is defined once (`STATEMENTS`, `run`) and
//! every difference of SQL dialect lies in `Dialect`.
//!
//! Timed (by the engine, per transaction): the whole transaction from the
//! client's side — BEGIN to COMMIT where it has several statements —
//! including the database's work and, for PostgreSQL, the round trips.
//! CPU time per transaction type (seed 004 reports mean elapsed and CPU
//! time per transaction): the client thread's CPU clock read around a
//! transaction (SQLite runs in that thread, so this is all of it); for
//! PostgreSQL that plus the server backend's CPU time from its
//! `/proc/PID/schedstat`, where the server runs on this machine and its
//! processes can be read — otherwise no CPU figure per type is given
//! rather than the client's share alone. Those four reads cost a few µs, a
//! fifth of the client's own work per transaction, and on a saturated
//! machine every µs the client spends is taken from the server; so they are
//! made around one transaction in `CPU_SAMPLE_EVERY` of each type (every
//! type's first and each sixteenth after it: types are drawn at random, so
//! the sample is as random as the mix, and every type that ran sixteen
//! times in a window has its figure). A database driver
//! allocates as it works; that cost is part of any client's transaction,
//! as in pgbench's.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

use touchstone_harness::workload::{
    cpu, default_loads_from, tasks_error, tasks_limit, Client, ClientContext, TrialContext,
    Workload,
};
use touchstone_harness::{BenchError, Fallible};

use crate::family::{Family, OptionValue, RunContext, RunOption};
use crate::params::{Kind, Param, Point};
use crate::support::memory::Rng;

pub const NAME: &str = "oltp";
pub const SUMMARY: &str =
    "a FASTTRACK-like mix of ten database transactions by N clients, on embedded SQLite or a PostgreSQL server (--postgres URL)";
pub const OPERATION: &str = "transaction";
/// The transaction types, in the order of `run`; each a tenth of the mix.
pub const OP_TYPES: &[&str] = &[
    "point_read",
    "range_read",
    "join",
    "aggregate",
    "insert",
    "update",
    "delete",
    "read_modify_write",
    "rollback",
    "transfer",
];
pub const POINT_READ: usize = 0;
pub const RANGE_READ: usize = 1;
pub const JOIN: usize = 2;
pub const AGGREGATE: usize = 3;
pub const INSERT: usize = 4;
pub const UPDATE: usize = 5;
pub const DELETE: usize = 6;
pub const READ_MODIFY_WRITE: usize = 7;
pub const ROLLBACK: usize = 8;
pub const TRANSFER: usize = 9;
/// Accounts per unit of scale (one branch each).
pub const ACCOUNTS_PER_SCALE: i64 = 10_000;
/// Rows a range read, a join and an aggregate scan cover.
pub const RANGE_ROWS: i64 = 100;
pub const JOIN_ROWS: i64 = 10;
pub const AGGREGATE_ROWS: i64 = 1000;
/// The most clients (one connection and process each).
pub const MAX_LOAD: u32 = 256;
/// CPU time is read around one transaction in this many (see above).
pub const CPU_SAMPLE_EVERY: u64 = 16;
/// The SQLite file under the trial's scratch directory.
pub const SQLITE_FILE: &str = "oltp.sqlite";
/// How long a client waits for another's write lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting to PostgreSQL may take before it is an error.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

pub const ENGINE: Param = Param {
    name: "engine",
    help: "sqlite: an embedded database in the scratch directory; postgres: the server named by --postgres URL",
    kind: Kind::Choice(&["sqlite", "postgres"]),
    default: &["sqlite"],
    quick: &[],
    positional: false,
};

pub const SCALE: Param = Param {
    name: "scale",
    help: "database size: per unit one branch and 10 000 accounts (pgbench's scale 1 is oltp's 10)",
    kind: Kind::Int { min: 1, max: 1000 },
    default: &["10"],
    quick: &["1"],
    positional: false,
};

pub const PARAMS: &[Param] = &[ENGINE, SCALE];

/// `--postgres URL`: the server `engine:postgres` runs against, which it
/// makes the engine's default. The URL, which may hold a password, stays
/// out of names and stored options.
pub const POSTGRES: RunOption = RunOption {
    name: "postgres",
    value: OptionValue::Text("URL"),
    help: "run the transaction mix against this PostgreSQL server (postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE, or 'host=… port=… user=… dbname=…') instead of the embedded SQLite; each trial creates its own schema there and drops it, touching nothing else",
    defaults: &[(ENGINE.name, "postgres")],
    check: None,
};

/// Build the workload; for PostgreSQL this connects and checks that the
/// user may create a schema, so that a wrong URL or missing right is
/// refused before anything is measured.
pub fn build(p: &Point, ctx: &RunContext) -> Result<Box<dyn Workload>, String> {
    let engine = match p.text(ENGINE.name) {
        "postgres" => {
            let url = ctx
                .text(&POSTGRES)?
                .ok_or("engine:postgres needs the server: give --postgres URL")?;
            let server = Server::parse(url)?;
            libpq::load()?;
            server.check()?;
            Engine::Postgres(Box::new(server))
        }
        _ => Engine::Sqlite,
    };
    Ok(Box::new(Oltp::new(p.num(SCALE.name), engine, ctx.quick)?))
}

/// Where the database lives.
pub enum Engine {
    Sqlite,
    Postgres(Box<Server>),
}

/// A PostgreSQL server named by the user.
#[derive(Clone)]
pub struct Server {
    config: postgres::Config,
    /// The URL as given: the timed clients' libpq connects with it.
    url: String,
    /// "user@host:port/database", never the password: for messages.
    shown: String,
}

impl Server {
    /// Parse a connection URL (`postgresql://user[:password]@host[:port]/db`)
    /// or key=value string (`host=/tmp port=5432 user=u dbname=d`).
    pub fn parse(url: &str) -> Result<Server, String> {
        let mut config = postgres::Config::from_str(url).map_err(|e| {
            format!(
                "--postgres: malformed connection URL ({e}); give postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE \
                 or 'host=HOST port=PORT user=USER dbname=DATABASE'"
            )
        })?;
        if config.get_hosts().is_empty() {
            return Err("--postgres: the connection URL names no host".into());
        }
        if config.get_user().is_none() {
            let user = std::env::var("USER").unwrap_or_else(|_| "postgres".into());
            config.user(&user);
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let host = match &config.get_hosts()[0] {
            postgres::config::Host::Tcp(h) => h.clone(),
            postgres::config::Host::Unix(p) => p.display().to_string(),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let user = config.get_user().unwrap_or("?").to_string();
        let db = config.get_dbname().unwrap_or(&user).to_string();
        Ok(Server {
            shown: format!("{user}@{host}:{port}/{db}"),
            config,
            url: url.to_string(),
        })
    }

    pub fn connect(&self) -> Result<postgres::Client, String> {
        self.config.connect(postgres::NoTls).map_err(|e| {
            format!(
                "cannot connect to PostgreSQL at {}: {}",
                self.shown,
                pg_text(&e)
            )
        })
    }

    /// Connect, and create a schema in a transaction that is rolled back:
    /// the user's right to do what each trial does, proved without leaving
    /// anything behind.
    pub fn check(&self) -> Result<(), String> {
        let mut c = self.connect()?;
        let name = schema_name();
        c.batch_execute(&format!("BEGIN; CREATE SCHEMA {name}; ROLLBACK"))
            .map_err(|e| self.cannot_create(&e))
    }

    fn cannot_create(&self, e: &postgres::Error) -> String {
        let user = self.config.get_user().unwrap_or("?");
        let db = self.config.get_dbname().unwrap_or(user);
        format!(
            "PostgreSQL at {}: user '{user}' cannot create a schema in database '{db}': {} \
             (grant it: GRANT CREATE ON DATABASE {db} TO {user})",
            self.shown,
            pg_text(e)
        )
    }
}

/// A PostgreSQL error's own message (the server's, where it sent one).
fn pg_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => d.message().to_string(),
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(inner) = src {
                let t = inner.to_string();
                if !s.contains(&t) {
                    s = format!("{s}: {t}");
                }
                src = inner.source();
            }
            s
        }
    }
}

/// A schema name unique to this process and trial: touchstone_<pid>_<random>.
fn schema_name() -> String {
    let mut b = [0u8; 4];
    // SAFETY: filling a local buffer.
    let got = unsafe { libc::getrandom(b.as_mut_ptr() as *mut libc::c_void, b.len(), 0) };
    let r = if got == 4 {
        u32::from_le_bytes(b)
    } else {
        touchstone_harness::clock::now_ns() as u32
    };
    format!("touchstone_{}_{r:08x}", std::process::id())
}

/// What the two engines' SQL differs in: the one place of each difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// A statement of `STATEMENTS` in this dialect: PostgreSQL numbers its
    /// parameters `$1`, SQLite `?1`; a read that will be written back locks
    /// its row (`FOR UPDATE`) in PostgreSQL, while SQLite's `BEGIN
    /// IMMEDIATE` has already taken the database's write lock.
    pub fn statement(self, st: usize) -> String {
        let (sql, locks) = (STATEMENTS[st], st == ST_READ_FOR_UPDATE);
        match self {
            Dialect::Sqlite => sql.to_string(),
            Dialect::Postgres => {
                let s = sql.replace('?', "$");
                if locks {
                    s + " FOR UPDATE"
                } else {
                    s
                }
            }
        }
    }
    /// Start a transaction that will write: SQLite takes the write lock at
    /// once (a reader that upgrades later could fail with SQLITE_BUSY
    /// without waiting), PostgreSQL locks rows as it goes.
    pub fn begin_write(self) -> &'static str {
        match self {
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN",
        }
    }
    /// An auto-numbered primary key.
    fn serial_key(self) -> &'static str {
        match self {
            Dialect::Sqlite => "INTEGER PRIMARY KEY",
            Dialect::Postgres => "BIGSERIAL PRIMARY KEY",
        }
    }
    /// The tables and their rows at `scale`.
    pub fn schema(self, scale: u64) -> String {
        let branches = scale;
        let accounts = scale as i64 * ACCOUNTS_PER_SCALE;
        let filler = "f".repeat(80);
        format!(
            "CREATE TABLE branches (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL, filler TEXT NOT NULL);
             CREATE TABLE accounts (id BIGINT PRIMARY KEY, branch_id BIGINT NOT NULL, balance BIGINT NOT NULL, filler TEXT NOT NULL);
             CREATE TABLE history (id {serial}, account_id BIGINT NOT NULL, delta BIGINT NOT NULL, note TEXT NOT NULL);
             WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {branches})
               INSERT INTO branches (id, balance, filler) SELECT i, 0, '{filler}' FROM s;
             WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {accounts})
               INSERT INTO accounts (id, branch_id, balance, filler)
               SELECT i, (i - 1) / {ACCOUNTS_PER_SCALE} + 1, 0, '{filler}' FROM s;
             INSERT INTO history (account_id, delta, note) SELECT id, 0, 'opened' FROM accounts ORDER BY id;
             CREATE INDEX history_account ON history (account_id, id);
             ANALYZE;",
            serial = self.serial_key()
        )
    }
}

/// The statements of the mix, in SQLite's spelling (`Dialect::statement`
/// gives PostgreSQL's); `COLUMNS` says how many integer columns each
/// query returns.
pub const STATEMENTS: &[&str] = &[
    "SELECT balance, branch_id FROM accounts WHERE id = ?1",
    "SELECT id, balance FROM accounts WHERE id BETWEEN ?1 AND ?2",
    "SELECT a.id, a.balance, b.id, b.balance FROM accounts a JOIN branches b ON b.id = a.branch_id \
     WHERE a.id BETWEEN ?1 AND ?2",
    "SELECT COUNT(*), CAST(SUM(balance) AS BIGINT), MIN(balance), MAX(balance) FROM accounts \
     WHERE id BETWEEN ?1 AND ?2",
    "INSERT INTO history (account_id, delta, note) VALUES (?1, ?2, 'insert')",
    "UPDATE accounts SET balance = balance + ?2 WHERE id = ?1",
    "DELETE FROM history WHERE id = (SELECT MIN(id) FROM history WHERE account_id = ?1)",
    "SELECT balance FROM accounts WHERE id = ?1",
    "UPDATE accounts SET balance = ?2 WHERE id = ?1",
    "INSERT INTO history (account_id, delta, note) VALUES (?1, ?2, 'rolled back')",
    "INSERT INTO history (account_id, delta, note) VALUES (?1, ?2, 'transfer'), (?3, ?4, 'transfer')",
];
const ST_POINT: usize = 0;
const ST_RANGE: usize = 1;
const ST_JOIN: usize = 2;
const ST_AGGREGATE: usize = 3;
const ST_INSERT: usize = 4;
const ST_ADD: usize = 5;
const ST_DELETE: usize = 6;
const ST_READ_FOR_UPDATE: usize = 7;
const ST_SET: usize = 8;
const ST_INSERT_ROLLED_BACK: usize = 9;
const ST_INSERT_TRANSFER: usize = 10;
/// Integer columns each statement returns (0: it returns no rows).
pub const COLUMNS: &[usize] = &[2, 2, 4, 4, 0, 0, 0, 1, 0, 0, 0];

/// One row of integers (unused columns 0).
pub type Row = [i64; 4];

/// One connection to either engine.
pub trait Conn {
    fn dialect(&self) -> Dialect;
    /// Run query `st` with `args`; `each` sees every row. Returns the rows.
    fn query(&mut self, st: usize, args: &[i64], each: &mut dyn FnMut(&Row))
        -> Result<u64, String>;
    /// Run statement `st`; returns the rows it changed.
    fn execute(&mut self, st: usize, args: &[i64]) -> Result<u64, String>;
    /// Run plain SQL without parameters (BEGIN, COMMIT, ROLLBACK).
    fn batch(&mut self, sql: &str) -> Result<(), String>;
}

/// The arguments of one transaction: accounts `a` (and `b`), an amount.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Args {
    pub a: i64,
    pub b: i64,
    pub delta: i64,
}

impl Args {
    /// Random arguments for a transaction of type `ty` over `accounts`:
    /// a range starts where it fits; a transfer's two accounts differ.
    pub fn draw(ty: usize, rng: &mut Rng, accounts: i64) -> Args {
        let span = match ty {
            RANGE_READ => RANGE_ROWS,
            JOIN => JOIN_ROWS,
            AGGREGATE => AGGREGATE_ROWS,
            _ => 1,
        }
        .min(accounts);
        let a = 1 + rng.below((accounts - span + 1) as usize) as i64;
        let mut b = 1 + rng.below(accounts as usize) as i64;
        if b == a {
            b = a % accounts + 1;
        }
        Args {
            a,
            b,
            delta: rng.below(1999) as i64 - 999,
        }
    }
}

/// What a transaction returned, for checking the mix: rows read or
/// changed, and one figure of what it read or wrote (`run` says which).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outcome {
    pub rows: u64,
    pub value: i64,
}

/// Run one transaction of type `ty`. Outcomes:
/// - point_read: 1 row, the account's balance;
/// - range_read: RANGE_ROWS rows from `a`, the sum of their balances;
/// - join: JOIN_ROWS accounts with their branch, the sum of branch ids;
/// - aggregate: the count over AGGREGATE_ROWS accounts, and their sum;
/// - insert, update, delete: rows changed (1; delete 0 when the account
///   has no history left), value 0;
/// - read_modify_write: 1, the new balance (old + delta);
/// - rollback: 0 rows kept, value 0 (an update and an insert, undone);
/// - transfer: 4 rows changed (two accounts, two history rows), value 0.
pub fn run(c: &mut dyn Conn, ty: usize, x: &Args) -> Result<Outcome, String> {
    let mut value = 0i64;
    let rows = match ty {
        POINT_READ => c.query(ST_POINT, &[x.a], &mut |r| value = r[0])?,
        RANGE_READ => c.query(ST_RANGE, &[x.a, x.a + RANGE_ROWS - 1], &mut |r| {
            value += r[1]
        })?,
        JOIN => c.query(ST_JOIN, &[x.a, x.a + JOIN_ROWS - 1], &mut |r| value += r[2])?,
        AGGREGATE => {
            let mut count = 0;
            c.query(ST_AGGREGATE, &[x.a, x.a + AGGREGATE_ROWS - 1], &mut |r| {
                (count, value) = (r[0] as u64, r[1])
            })?;
            count
        }
        INSERT => c.execute(ST_INSERT, &[x.a, x.delta])?,
        UPDATE => c.execute(ST_ADD, &[x.a, x.delta])?,
        DELETE => c.execute(ST_DELETE, &[x.a])?,
        READ_MODIFY_WRITE => in_transaction(c, true, |c| {
            let mut old = None;
            c.query(ST_READ_FOR_UPDATE, &[x.a], &mut |r| old = Some(r[0]))?;
            let new = old.ok_or_else(|| format!("account {} is missing", x.a))? + x.delta;
            value = new;
            c.execute(ST_SET, &[x.a, new])
        })?,
        ROLLBACK => {
            c.batch(c.dialect().begin_write())?;
            let done = c
                .execute(ST_ADD, &[x.a, x.delta])
                .and_then(|_| c.execute(ST_INSERT_ROLLED_BACK, &[x.a, x.delta]));
            c.batch("ROLLBACK")?;
            done?;
            0
        }
        TRANSFER => in_transaction(c, true, |c| {
            // Lower id first: two transfers never wait for each other in a cycle.
            let (from, to, d) = (x.a, x.b, x.delta.abs());
            let mut changed = 0;
            for (id, by) in if from < to {
                [(from, -d), (to, d)]
            } else {
                [(to, d), (from, -d)]
            } {
                changed += c.execute(ST_ADD, &[id, by])?;
            }
            Ok(changed + c.execute(ST_INSERT_TRANSFER, &[from, -d, to, d])?)
        })?,
        _ => return Err(format!("no transaction type {ty}")),
    };
    Ok(Outcome { rows, value })
}

/// Run `body` between BEGIN and COMMIT; roll back if it fails.
fn in_transaction(
    c: &mut dyn Conn,
    write: bool,
    body: impl FnOnce(&mut dyn Conn) -> Result<u64, String>,
) -> Result<u64, String> {
    c.batch(if write {
        c.dialect().begin_write()
    } else {
        "BEGIN"
    })?;
    match body(c) {
        Ok(n) => {
            c.batch("COMMIT")?;
            Ok(n)
        }
        Err(e) => {
            let _ = c.batch("ROLLBACK");
            Err(e)
        }
    }
}

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

/// A connection to PostgreSQL, in the trial's schema, with the mix's
/// statements prepared.
/// A timed client's connection: libpq (`libpq.rs`), statements prepared.
pub struct PgConn(libpq::Connection);

impl PgConn {
    pub fn open(server: &Server, schema: &str) -> Result<PgConn, String> {
        let mut c = libpq::Connection::connect(&server.url)
            .map_err(|e| format!("cannot connect to PostgreSQL at {}: {e}", server.shown))?;
        c.exec(&format!("SET search_path TO {schema}"))?;
        for st in 0..STATEMENTS.len() {
            c.prepare(st, &Dialect::Postgres.statement(st))
                .map_err(|e| format!("PostgreSQL at {}: {e}", server.shown))?;
        }
        Ok(PgConn(c))
    }

    pub fn backend_pid(&self) -> i32 {
        self.0.backend_pid()
    }
}

impl Conn for PgConn {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }
    fn query(
        &mut self,
        st: usize,
        args: &[i64],
        each: &mut dyn FnMut(&Row),
    ) -> Result<u64, String> {
        self.0.run(st, args, COLUMNS[st], each)
    }
    fn execute(&mut self, st: usize, args: &[i64]) -> Result<u64, String> {
        self.0.run(st, args, 0, &mut |_| {})
    }
    fn batch(&mut self, sql: &str) -> Result<(), String> {
        self.0.exec(sql)
    }
}

/// Make the trial's schema on `server` with its rows at `scale`; on any
/// failure the schema is dropped again before the error returns. Returns
/// the connection that made it (kept to drop the schema at the end).
pub fn create_schema(
    server: &Server,
    schema: &str,
    scale: u64,
) -> Result<postgres::Client, String> {
    let mut admin = server.connect()?;
    admin
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .map_err(|e| server.cannot_create(&e))?;
    let made = admin.batch_execute(&format!(
        "SET search_path TO {schema}; BEGIN; {} COMMIT;",
        Dialect::Postgres.schema(scale).replace("ANALYZE;", "")
    ));
    // ANALYZE outside the transaction, on this schema's tables only.
    let made = made.and_then(|_| admin.batch_execute("ANALYZE branches, accounts, history"));
    if let Err(e) = made {
        let _ = admin.batch_execute(&format!("ROLLBACK; DROP SCHEMA IF EXISTS {schema} CASCADE"));
        return Err(format!(
            "PostgreSQL at {}: cannot make the tables: {}",
            server.shown,
            pg_text(&e)
        ));
    }
    Ok(admin)
}

/// Drop the trial's schema and everything in it.
pub fn drop_schema(admin: &mut postgres::Client, schema: &str) -> Result<(), String> {
    admin
        .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .map_err(|e| pg_text(&e))
}

/// What a trial made, to be removed by `release`.
enum Made {
    Sqlite(PathBuf),
    Postgres {
        /// The connection that made the schema, kept to drop it (a Mutex:
        /// the client is not Sync, and a workload is shared by threads).
        admin: Box<Mutex<postgres::Client>>,
        schema: String,
    },
}

/// The workload: its parameters and what the current trial made.
pub struct Oltp {
    pub scale: u64,
    pub engine: Engine,
    quick: bool,
    made: Option<Made>,
}

impl Oltp {
    pub fn new(scale: u64, engine: Engine, quick: bool) -> Result<Oltp, String> {
        if scale == 0 {
            return Err("scale:0: the database would have no accounts; scale is at least 1".into());
        }
        Ok(Oltp {
            scale,
            engine,
            quick,
            made: None,
        })
    }

    pub fn accounts(&self) -> i64 {
        self.scale as i64 * ACCOUNTS_PER_SCALE
    }
}

impl Drop for Oltp {
    fn drop(&mut self) {
        self.release();
    }
}

impl Workload for Oltp {
    fn op_types(&self) -> &[&str] {
        OP_TYPES
    }
    fn max_load(&self) -> Option<u32> {
        Some(MAX_LOAD)
    }
    /// Quick: one client and one per CPU.
    fn default_loads(&self, usable: usize) -> Vec<u32> {
        if self.quick {
            let mut l = vec![1, (usable as u32).clamp(1, MAX_LOAD)];
            l.dedup();
            l
        } else {
            default_loads_from(1, usable, Some(MAX_LOAD))
        }
    }
    fn check_load(&self, load: u32) -> Result<(), String> {
        match tasks_error(load, tasks_limit()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn prepare(&mut self, ctx: &TrialContext) -> Fallible {
        self.release();
        self.made = Some(match &self.engine {
            Engine::Sqlite => {
                let path = ctx.scratch.join(SQLITE_FILE);
                create_sqlite(&path, self.scale)?;
                Made::Sqlite(path)
            }
            Engine::Postgres(server) => {
                let schema = schema_name();
                let admin = create_schema(server, &schema, self.scale)?;
                Made::Postgres {
                    admin: Box::new(Mutex::new(admin)),
                    schema,
                }
            }
        });
        Ok(())
    }

    /// Drop the PostgreSQL schema (the SQLite file goes with the trial's
    /// scratch directory; removing it here too leaves nothing if the
    /// workload is used outside a trial).
    fn release(&mut self) {
        match self.made.take() {
            Some(Made::Sqlite(path)) => {
                for suffix in ["", "-wal", "-shm"] {
                    let mut p = path.clone().into_os_string();
                    p.push(suffix);
                    let _ = std::fs::remove_file(p);
                }
            }
            Some(Made::Postgres { admin, schema }) => {
                let mut admin = admin.into_inner().unwrap_or_else(|p| p.into_inner());
                // A lost connection (the server restarted): one more try.
                if drop_schema(&mut admin, &schema).is_err() {
                    if let Engine::Postgres(server) = &self.engine {
                        if let Ok(mut c) = server.connect() {
                            let _ = drop_schema(&mut c, &schema);
                        }
                    }
                }
            }
            None => {}
        }
    }

    fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        let (conn, backend): (Box<dyn Conn>, Option<Schedstat>) = match (&self.engine, &self.made) {
            (Engine::Sqlite, Some(Made::Sqlite(path))) => (Box::new(SqliteConn::open(path)?), None),
            (Engine::Postgres(server), Some(Made::Postgres { schema, .. })) => {
                let c = PgConn::open(server, schema)?;
                let pid = c.backend_pid();
                (Box::new(c), Schedstat::open(pid))
            }
            _ => {
                return Err(BenchError(
                    "oltp: no database was made for this trial".into(),
                ))
            }
        };
        Ok(Box::new(OltpClient {
            pg: matches!(self.engine, Engine::Postgres(_)),
            conn,
            backend,
            rng: Rng::new(ctx.seed),
            accounts: self.accounts(),
            cpu: None,
            done: [0; OP_TYPES.len()],
        }))
    }
}

/// One client: its connection, its random order, its last transaction's CPU.
struct OltpClient {
    pg: bool,
    conn: Box<dyn Conn>,
    /// The PostgreSQL backend's CPU clock, when it can be read here.
    backend: Option<Schedstat>,
    rng: Rng,
    accounts: i64,
    cpu: Option<u64>,
    /// Transactions run of each type, to pick the ones whose CPU time is read.
    done: [u64; OP_TYPES.len()],
}

impl Client for OltpClient {
    /// Timed: one transaction of a type drawn at random, BEGIN to COMMIT.
    fn op(&mut self) -> Fallible<usize> {
        let ty = self.rng.below(OP_TYPES.len());
        let args = Args::draw(ty, &mut self.rng, self.accounts);
        let sampled = self.done[ty].is_multiple_of(CPU_SAMPLE_EVERY);
        self.done[ty] += 1;
        if !sampled {
            self.cpu = None;
            run(&mut *self.conn, ty, &args)
                .map_err(|e| BenchError(format!("{}: {e}", OP_TYPES[ty])))?;
            return Ok(ty);
        }
        let (c0, s0) = (thread_cpu_ns(), self.backend.as_mut().and_then(|b| b.ns()));
        run(&mut *self.conn, ty, &args)
            .map_err(|e| BenchError(format!("{}: {e}", OP_TYPES[ty])))?;
        let own = thread_cpu_ns().saturating_sub(c0);
        let server = match (s0, self.backend.as_mut().and_then(|b| b.ns())) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        };
        self.cpu = match (self.pg, server) {
            (false, _) => Some(own),
            (true, Some(s)) => Some(own + s),
            (true, None) => None,
        };
        Ok(ty)
    }
    fn cpu_ns(&self) -> Option<u64> {
        self.cpu
    }
}

/// This thread's CPU time, ns.
fn thread_cpu_ns() -> u64 {
    cpu::cpu_time_ns(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0)
}

/// Another process's CPU time from `/proc/PID/schedstat` (its first field,
/// ns): a local PostgreSQL backend's, read around each transaction.
struct Schedstat {
    file: std::fs::File,
    buf: [u8; 128],
}

impl Schedstat {
    /// The backend's clock, if `pid` is a PostgreSQL process on this
    /// machine that we may read (a remote server's pid is no process here,
    /// or another one: its name tells).
    fn open(pid: i32) -> Option<Schedstat> {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
        if !comm.trim_end().starts_with("postgres") {
            return None;
        }
        let file = std::fs::File::open(format!("/proc/{pid}/schedstat")).ok()?;
        let mut s = Schedstat {
            file,
            buf: [0; 128],
        };
        s.ns()?;
        Some(s)
    }
    fn ns(&mut self) -> Option<u64> {
        use std::os::unix::fs::FileExt;
        let n = self.file.read_at(&mut self.buf, 0).ok()?;
        let text = std::str::from_utf8(&self.buf[..n]).ok()?;
        text.split_whitespace().next()?.parse().ok()
    }
}

pub const FAMILY: Family = Family {
    params: PARAMS,
    options: &[POSTGRES],
    ..Family::workload(NAME, "workload", SUMMARY, OPERATION, build)
};

mod libpq;

#[cfg(test)]
mod tests;
