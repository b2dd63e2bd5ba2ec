//! Writing a run as it is measured: its header when it begins (running,
//! owned by this process, with room set aside for closing it on a full
//! disk), each measurement and load curve the moment it is done, and the
//! close with its status and reason.

use super::*;

impl Store {
    /// Record a new run (its header, without measurements) as running,
    /// owned by this process.
    pub fn begin_run(&mut self, run: &Run) -> Result<(), StoreError> {
        let owner = Owner::current();
        let tx = writing(&mut self.conn, &self.path)?;
        insert_header(&tx, run, Some(&owner)).map_err(|e| map_err(&self.path, e))?;
        tx.commit().map_err(|e| map_err(&self.path, e))?;
        for id in reserve::held(&self.path) {
            if !self.may_be_running(&id) {
                reserve::release(&self.path, &id);
            }
        }
        reserve::make(&self.path, &run.id);
        Ok(())
    }

    /// Whether run `id` is stored as running by a process that is (or may
    /// be: another machine's) alive.
    pub(super) fn may_be_running(&self, id: &str) -> bool {
        self.conn
            .query_row(
                &format!(
                    "SELECT r.status, r.hostname, {} FROM runs r WHERE r.id = ?1",
                    self.owner_columns()
                ),
                [id],
                |r| {
                    let status: String = r.get(0)?;
                    let hostname: String = r.get(1)?;
                    Ok(status == RunStatus::Running.as_str()
                        && running_or_crashed(Store::owner_at(r, 2)?, &hostname).0
                            == RunStatus::Running)
                },
            )
            .unwrap_or(false)
    }

    /// Commit one finished measurement of a run.
    /// Store measurement `seq` (0-based, in the run's order) of a run, or
    /// replace what was stored of it: a case measured in rounds is stored
    /// after its first rounds and replaced as more are measured.
    pub fn put_measurement(
        &mut self,
        run_id: &str,
        seq: usize,
        m: &Measurement,
    ) -> Result<(), StoreError> {
        let tx = writing(&mut self.conn, &self.path)?;
        tx.execute(
            "INSERT INTO measurements (run_id, seq, name, doc) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (run_id, seq) DO UPDATE SET name = excluded.name, doc = excluded.doc",
            params![
                run_id,
                seq as i64,
                m.name,
                serde_json::to_string(m).unwrap()
            ],
        )
        .map_err(|e| map_err(&self.path, e))?;
        tx.commit().map_err(|e| map_err(&self.path, e))
    }

    pub fn add_measurement(&mut self, run_id: &str, m: &Measurement) -> Result<(), StoreError> {
        let tx = writing(&mut self.conn, &self.path)?;
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
        let tx = writing(&mut self.conn, &self.path)?;
        upsert_curve(&tx, run_id, seq as i64, c).map_err(|e| map_err(&self.path, e))?;
        tx.commit().map_err(|e| map_err(&self.path, e))
    }

    /// Close a run: its status, end time, reason and run-level warnings are
    /// taken from `run` (its measurements are already stored).
    /// On a full disk, the room set aside when the run began is given back
    /// and the close tried again.
    pub fn finish_run(&mut self, run: &Run) -> Result<(), StoreError> {
        let mut closed = self.close_run(run);
        if closed.as_ref().is_err_and(StoreError::is_full) {
            reserve::release(&self.path, &run.id);
            closed = self.close_run(run);
        }
        reserve::release(&self.path, &run.id);
        closed
    }

    fn close_run(&mut self, run: &Run) -> Result<(), StoreError> {
        let run_id = run.id.as_str();
        let tx = writing(&mut self.conn, &self.path)?;
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
}

pub(super) fn insert_header(
    tx: &rusqlite::Connection,
    run: &Run,
    owner: Option<&Owner>,
) -> rusqlite::Result<()> {
    // Measurements and curves have their own tables.
    let mut header = run.clone();
    header.measurements.clear();
    header.curves.clear();
    let seq: i64 = tx.query_row("SELECT coalesce(max(seq), 0) + 1 FROM runs", [], |r| {
        r.get(0)
    })?;
    tx.execute(
        "INSERT INTO runs (id, seq, label, hostname, started_at, status, header,
                           owner_pid, owner_boot, owner_start, owner_pidns)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            run.id,
            seq,
            run.label,
            run.host.hostname,
            run.started_at.to_rfc3339(),
            run.status.as_str(),
            serde_json::to_string(&header).unwrap(),
            owner.map(|o| o.pid),
            owner.map(|o| o.boot.as_str()),
            owner.map(|o| o.start),
            owner.map(|o| o.pid_namespace.as_str()),
        ],
    )?;
    Ok(())
}

pub(super) fn insert_measurement(
    tx: &rusqlite::Connection,
    run_id: &str,
    seq: i64,
    m: &Measurement,
) -> rusqlite::Result<()> {
    // Prepared once per connection: an import inserts a farm's thousands.
    tx.prepare_cached("INSERT INTO measurements (run_id, seq, name, doc) VALUES (?1, ?2, ?3, ?4)")?
        .execute(params![
            run_id,
            seq,
            m.name,
            serde_json::to_string(m).unwrap()
        ])?;
    tx.prepare_cached("INSERT INTO briefs (run_id, seq, brief) VALUES (?1, ?2, ?3)")?
        .execute(params![
            run_id,
            seq,
            serde_json::to_string(&Brief::of(m)).unwrap()
        ])?;
    Ok(())
}

pub(super) fn upsert_curve(
    tx: &rusqlite::Connection,
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
