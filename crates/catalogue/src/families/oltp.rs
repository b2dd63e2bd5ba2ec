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
//! every difference of SQL dialect lies in `Dialect` (`mix.rs`); each engine
//! is a file of its own (`sqlite.rs`, `postgresql.rs`).
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

use std::path::PathBuf;
use std::sync::Mutex;

use touchstone_harness::workload::{
    cpu, tasks_error, tasks_limit, Client, ClientContext, TrialContext, Workload,
};
use touchstone_harness::{BenchError, Fallible};

use crate::family::{one_and_per_cpu_when_quick, Family, OptionValue, RunContext, RunOption};
use crate::params::{Param, Point};
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

pub const ENGINE: Param = Param::choice("engine", &["sqlite", "postgres"])
    .measured(&["sqlite"])
    .help("sqlite: an embedded database in the scratch directory; postgres: the server named by --postgres URL");

pub const SCALE: Param = Param::int("scale", 1, 1000)
    .measured(&["10"])
    .quick(&["1"])
    .help(
        "database size: per unit one branch and 10 000 accounts (pgbench's scale 1 is oltp's 10)",
    );

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
        one_and_per_cpu_when_quick(self.quick, usable, MAX_LOAD)
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
mod mix;
mod postgresql;
mod sqlite;

use mix::{run, Args, Conn};
use postgresql::{create_schema, drop_schema, schema_name, PgConn, Server};
use sqlite::{create_sqlite, SqliteConn};

#[cfg(test)]
mod tests;
