//! oltp's server engine: a PostgreSQL server the user names
//! (`--postgres URL`). The schema is made, checked and dropped through the
//! `postgres` crate; the timed clients connect through libpq (`libpq.rs`
//! says why), with the mix's statements prepared.

use std::str::FromStr;
use std::time::Duration;

use super::libpq;
use super::mix::{Conn, Dialect, Row, COLUMNS, STATEMENTS};

/// How long connecting to PostgreSQL may take before it is an error.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

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
pub(super) fn pg_text(e: &postgres::Error) -> String {
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
pub(super) fn schema_name() -> String {
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
/// A timed client's connection to PostgreSQL: libpq (`libpq.rs`), in the
/// trial's schema, with the mix's statements prepared.
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
