//! The hosts' inventory (`crate::inventory`): one row per host, its entry
//! as a JSON document (schema version 5). A store older than that has
//! none, and reads as an empty inventory.

use rusqlite::{params, Connection, OptionalExtension};

use super::{map_err, writing, Store, StoreError};
use crate::inventory::HostCost;

/// The entry stored for `host`, if any.
fn stored(conn: &Connection, host: &str) -> rusqlite::Result<Option<HostCost>> {
    let doc: Option<String> = conn
        .query_row("SELECT doc FROM inventory WHERE host = ?1", [host], |r| {
            r.get(0)
        })
        .optional()?;
    Ok(doc.and_then(|d| serde_json::from_str(&d).ok()))
}

fn put(conn: &Connection, entry: &HostCost) -> rusqlite::Result<()> {
    let doc = serde_json::to_string(entry).expect("an entry serialises");
    conn.execute(
        "INSERT INTO inventory (host, doc) VALUES (?1, ?2)
         ON CONFLICT(host) DO UPDATE SET doc = excluded.doc",
        params![entry.host, doc],
    )?;
    Ok(())
}

/// Merge `entries` into the inventory in the transaction open on `conn`
/// (each entry's figures over those stored for its host), each merged
/// entry checked before anything is written: all or none.
fn merge_all(conn: &Connection, entries: &[HostCost]) -> Result<Vec<HostCost>, String> {
    let mut merged = Vec::new();
    for e in entries {
        let mut m = stored(conn, &e.host)
            .map_err(|err| err.to_string())?
            .unwrap_or_else(|| HostCost {
                host: e.host.clone(),
                ..HostCost::default()
            });
        m.merge(e);
        m.check()
            .map_err(|why| format!("host '{}': {why}", e.host))?;
        merged.push(m);
    }
    Ok(merged)
}

impl Store {
    /// Every host's entry, by host.
    pub fn inventory(&self) -> Result<Vec<HostCost>, StoreError> {
        if self.version < 5 {
            return Ok(Vec::new());
        }
        let mut st = self
            .conn
            .prepare("SELECT host, doc FROM inventory ORDER BY host")
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (host, doc) = row.map_err(|e| self.err(e))?;
            let entry = serde_json::from_str(&doc).map_err(|e| StoreError::Corrupt {
                path: self.path.clone(),
                message: format!("the inventory of host '{host}' cannot be read: {e}"),
            })?;
            out.push(entry);
        }
        Ok(out)
    }

    /// Set the figures `entries` give (`inventory set`, `inventory
    /// import`), keeping a host's other figures: in one transaction, and
    /// only if every merged entry passes its checks (`Err(Ok(why))`
    /// otherwise, nothing written). The merged entries are returned.
    pub fn set_inventory(
        &mut self,
        entries: &[HostCost],
    ) -> Result<Result<Vec<HostCost>, String>, StoreError> {
        let path = self.path.clone();
        let tx = writing(&mut self.conn, &path)?;
        let merged = match merge_all(&tx, entries) {
            Ok(m) => m,
            Err(why) => return Ok(Err(why)),
        };
        for m in &merged {
            put(&tx, m).map_err(|e| map_err(&path, e))?;
        }
        tx.commit().map_err(|e| map_err(&path, e))?;
        Ok(Ok(merged))
    }

    /// An imported entry, in the import `begin_import` began: stored where
    /// the host has none; one already here is kept (false returned when it
    /// differs).
    pub fn import_inventory(&mut self, entry: &HostCost) -> Result<bool, StoreError> {
        let err = |e| map_err(&self.path, e);
        match stored(&self.conn, &entry.host).map_err(err)? {
            Some(here) => Ok(here == *entry),
            None => put(&self.conn, entry).map(|()| true).map_err(err),
        }
    }
}
