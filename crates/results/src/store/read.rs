//! Reading runs out of the store in the pieces a command needs: a run
//! whole (`load_run`: `show`, `compare`, `export`), or its header with its
//! load curves and its measurements in brief (`load_header`, `briefs`:
//! what the summary of a farm's runs reads, so that it never parses every
//! sample and interval of every run). A `running` run whose owner is gone
//! reads as `crashed`, with the reason; a stored document that does not
//! parse is `StoreError::Unreadable`, naming the run.

use rusqlite::OptionalExtension;

use super::{running_or_crashed, Store, StoreError};
use crate::brief::Brief;
use crate::model::{Run, RunStatus};

impl Store {
    fn unreadable(&self, id: &str, message: String) -> StoreError {
        StoreError::Unreadable {
            path: self.path.clone(),
            id: id.into(),
            message,
        }
    }

    /// The JSON documents a run keeps in `table` (measurements or curves),
    /// in the order they were stored.
    fn docs(&self, table: &'static str, id: &str) -> Result<Vec<String>, StoreError> {
        if table == "curves" && self.version < 2 {
            return Ok(Vec::new());
        }
        self.texts(
            &format!("SELECT doc FROM {table} WHERE run_id = ?1 ORDER BY seq"),
            id,
        )
    }

    /// A run's header with its load curves, without its measurements (see
    /// `briefs` for those in brief, `load_run` for the run whole).
    pub fn load_header(&self, id: &str) -> Result<Run, StoreError> {
        let found = self
            .conn
            .prepare_cached(&format!(
                "SELECT r.header, r.hostname, {} FROM runs r WHERE r.id = ?1",
                self.owner_columns()
            ))
            .and_then(|mut st| {
                st.query_row([id], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        Store::owner_at(r, 2)?,
                    ))
                })
                .optional()
            })
            .map_err(|e| self.err(e))?;
        let (header, hostname, owner) = found.ok_or_else(|| StoreError::NoSuchRun(id.into()))?;
        let mut run: Run = serde_json::from_str(&header)
            .map_err(|e| self.unreadable(id, format!("its stored header does not parse ({e})")))?;
        if run.status == RunStatus::Running {
            let (status, why) = running_or_crashed(owner, &hostname);
            run.status = status;
            if run.reason.is_none() {
                run.reason = why;
            }
        }
        for (n, doc) in self.docs("curves", id)?.iter().enumerate() {
            run.curves.push(serde_json::from_str(doc).map_err(|e| {
                self.unreadable(
                    id,
                    format!("its stored load curve #{} does not parse ({e})", n + 1),
                )
            })?);
        }
        Ok(run)
    }

    /// A whole run with its measurements and curves.
    pub fn load_run(&self, id: &str) -> Result<Run, StoreError> {
        let mut run = self.load_header(id)?;
        for (n, doc) in self.docs("measurements", id)?.iter().enumerate() {
            run.measurements
                .push(serde_json::from_str(doc).map_err(|e| {
                    self.unreadable(
                        id,
                        format!("its stored measurement #{} does not parse ({e})", n + 1),
                    )
                })?);
        }
        Ok(run)
    }

    /// A run's measurements in brief, in their stored order: their stored
    /// briefs (schema version 4), or, for a run stored before briefs were,
    /// the brief of each whole document.
    pub fn briefs(&self, id: &str) -> Result<Vec<Brief>, StoreError> {
        let parsed = |n: usize, text: &str, whole: bool| {
            let brief = match whole {
                false => serde_json::from_str::<Brief>(text),
                true => serde_json::from_str(text).map(|m| Brief::of(&m)),
            };
            brief.map_err(|e| {
                self.unreadable(
                    id,
                    format!("its stored measurement #{n} does not parse ({e})"),
                )
            })
        };
        if self.version >= 4 {
            let stored = self.texts(
                "SELECT brief FROM briefs WHERE run_id = ?1 ORDER BY seq",
                id,
            )?;
            // Counted on the key's index: the documents are not read.
            let measured: usize = self
                .conn
                .prepare_cached("SELECT count(*) FROM measurements WHERE run_id = ?1")
                .and_then(|mut st| st.query_row([id], |r| r.get::<_, i64>(0)))
                .map_err(|e| self.err(e))? as usize;
            if stored.len() == measured {
                return stored
                    .iter()
                    .enumerate()
                    .map(|(n, t)| parsed(n + 1, t, false))
                    .collect();
            }
        }
        self.docs("measurements", id)?
            .iter()
            .enumerate()
            .map(|(n, t)| parsed(n + 1, t, true))
            .collect()
    }

    /// The text column a one-column query of a run's rows returns.
    fn texts(&self, sql: &str, id: &str) -> Result<Vec<String>, StoreError> {
        let mut st = self.conn.prepare_cached(sql).map_err(|e| self.err(e))?;
        let texts = st
            .query_map([id], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(texts)
    }
}
