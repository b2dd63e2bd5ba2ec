//! oltp's transaction mix, defined once for both engines: the statements
//! (`STATEMENTS`, in SQLite's spelling), what the engines' SQL differs in
//! (`Dialect`), the connection either engine gives (`Conn`), and the ten
//! transactions themselves (`run`) with their random arguments (`Args`).

use super::{
    ACCOUNTS_PER_SCALE, AGGREGATE, AGGREGATE_ROWS, DELETE, INSERT, JOIN, JOIN_ROWS, POINT_READ,
    RANGE_READ, RANGE_ROWS, READ_MODIFY_WRITE, ROLLBACK, TRANSFER, UPDATE,
};
use crate::support::memory::Rng;

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
pub(super) const ST_READ_FOR_UPDATE: usize = 7;
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
