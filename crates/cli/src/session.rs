//! One run session, shared by every command that measures (`run`, with its
//! micro-benchmarks and workloads, and `app`): after the command has checked
//! its plan, the session opens the store, calibrates the clock, collects the
//! host and its warnings, stores the run's header as `running`, stores each
//! measurement the moment it is finished and each workload's curve as each
//! of its points is (persist as you go), and always finishes the stored run:
//! - `complete` when everything was measured;
//! - `failed`, with the reason stored, when a measurement failed, a result
//!   could not be stored, or an error (e.g. a full disk) stopped the run —
//!   the cases it did not reach are named in the reason;
//! - `interrupted` on Ctrl-C, SIGTERM or SIGHUP.
//!
//! A result the store refuses (another process held the lock past the busy
//! timeout, an I/O error) is never dropped: it stays in memory, is tried
//! again before the next case and at the end, and the user is told. A full
//! disk stops the run instead: nothing more could be stored.
//!
//! A command hands its measuring code's result to `finish`, so every early
//! return (`?`) inside that code still finishes the run; a panic is caught
//! by the `Drop` guard, which stores the run as failed. A process that is
//! killed outright leaves its run `running`, which readers show as
//! `crashed` once the process is gone (the store records its owner).
//!
//! Fault injection for tests: `failpoint` (session/failpoint.rs).

use std::path::PathBuf;

use chrono::Utc;
use touchstone_harness::workload::{self, SweepPlan, Workload, WorkloadError};
use touchstone_harness::{
    calibrate, measure_case, scratch, signals, Benchmark, CaseLabel, CaseRounds, HarnessError,
    Plan, Shape,
};
use touchstone_report::run_summary::{fit_lines, run_summary};
use touchstone_report::terminal;
use touchstone_results::curve::Curve;
use touchstone_results::store::{Open, Store, StoreError};
use touchstone_results::{
    checks, host, json, Measurement, Run, RunOptions, RunStatus, Tool, WorkloadOptions,
};

use crate::error::CliError;
use crate::progress::Progress;

/// What a command asks of a session, after its own checks.
pub struct Request {
    /// The store's path (`--db`), or the default.
    pub db: Option<PathBuf>,
    /// Store the run (`--no-store` clears it).
    pub store: bool,
    pub label: Option<String>,
    /// The specs as typed, recorded in the run's options.
    pub selection: Vec<String>,
    pub parallel: Vec<u32>,
    pub quick: bool,
    /// Measurements and workload sweeps planned, for the failure count.
    pub planned: usize,
    /// Steps the progress bar counts: each round of each measurement, and
    /// each workload sweep.
    pub steps: usize,
    /// The seed of the run's shuffled case order, when it has one.
    pub seed: Option<u64>,
    /// How workloads are swept, when the command sweeps any.
    pub workload: Option<WorkloadOptions>,
    /// What the run says about where and how it measures before its first
    /// case: printed and kept with the run (`Run::notes`).
    pub notes: Vec<String>,
}

pub struct Session {
    run: Run,
    store: Option<Store>,
    progress: Progress,
    planned: usize,
    /// One line per failed case: what failed and why.
    failures: Vec<String>,
    interrupted: bool,
    /// Set by `finish`; a session dropped without it stores its run as failed.
    finished: bool,
    /// Measurements (indexes into the run's) the store has not taken yet,
    /// oldest first.
    unstored: Vec<usize>,
    /// Curves (indexes) whose newest points the store has not taken yet.
    unstored_curves: Vec<usize>,
    /// Why the store last refused a result; a full disk stops the run.
    store_error: Option<StoreError>,
    /// Attempts to store a measurement (for the `store_add` failpoint).
    store_attempts: usize,
    /// The cases the command plans, in order, and how many have started:
    /// the rest are named as not run when the run stops early.
    cases: Vec<String>,
    started: usize,
    /// How the run is printed at the end: None, its tables (`app`);
    /// Some(all), the summary (`run`), after the full tables only when
    /// `all` (--all) or standard output is not a terminal.
    summary: Option<bool>,
}

/// The width the closing summary is packed to off a terminal.
const DEFAULT_WIDTH: usize = 100;

/// The build profile, recorded with every run (debug builds measure the
/// harness, not the machine).
pub fn profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

/// touchstone's build for the fingerprint: the commit it was built from
/// and the compiler (see build.rs).
pub fn build() -> String {
    format!("{}, {}", env!("TOUCHSTONE_BUILD"), env!("TOUCHSTONE_RUSTC"))
}

pub fn new_run_id() -> String {
    let mut b = [0u8; 8];
    // SAFETY: filling a local buffer.
    let got = unsafe { libc::getrandom(b.as_mut_ptr() as *mut libc::c_void, b.len(), 0) };
    if got != b.len() as isize {
        let t = Utc::now().timestamp_nanos_opt().unwrap_or(0) as u64
            ^ ((std::process::id() as u64) << 32);
        b = t.to_le_bytes();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Most failed cases named one by one in a run's stored reason.
const REASONS_SHOWN: usize = 3;

impl Session {
    /// Open the store (before measuring, so a locked or foreign database is
    /// reported now, not after minutes of work), calibrate the clock into
    /// `plan`, collect the host and its warnings, and store the run as
    /// `running`.
    pub fn start(req: Request, plan: &mut Plan) -> Result<Session, CliError> {
        let mut store = if req.store {
            Some(crate::store::open(req.db, Open::CreateIfMissing)?)
        } else {
            None
        };
        signals::install();
        scratch::remove_stale();
        let clock = calibrate();
        plan.min_interval_ns = clock.min_interval_ns;
        let mut host = host::collect();
        host.fingerprint = host.fingerprint.map(|f| f.with_build(&build()));
        let warnings = checks::host_warnings(&host, profile());
        let run = Run {
            id: new_run_id(),
            label: req.label,
            host,
            tool: Tool {
                name: "touchstone".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                profile: profile().into(),
                rustc: Some(env!("TOUCHSTONE_RUSTC").into()),
            },
            clock,
            options: RunOptions {
                selection: req.selection,
                repetitions: plan.repetitions,
                parallel: req.parallel,
                quick: req.quick,
                target_interval_ns: plan.target_ns,
                parallel_interval_ns: plan.parallel_target_ns,
                warmup_ns: plan.warmup_ns,
                rounds: plan.rounds,
                seed: req.seed,
                workload: req.workload,
            },
            started_at: Utc::now(),
            ended_at: None,
            status: RunStatus::Running,
            reason: None,
            warnings,
            notes: req.notes,
            measurements: Vec::new(),
            curves: Vec::new(),
        };
        if let Some(s) = store.as_mut() {
            s.begin_run(&run)?;
        }
        // The run's warnings are printed once, in its header with the tables.
        let progress = Progress::new(req.steps);
        Ok(Session {
            run,
            store,
            progress,
            planned: req.planned,
            failures: Vec::new(),
            interrupted: false,
            finished: false,
            unstored: Vec::new(),
            unstored_curves: Vec::new(),
            store_error: None,
            store_attempts: 0,
            cases: Vec::new(),
            started: 0,
            summary: None,
        })
    }

    /// A line for the user that stays (a skipped family, a derived figure).
    /// What the run said before its first case (`Request::notes`).
    pub fn notes(&self) -> &[String] {
        &self.run.notes
    }

    pub fn note(&self, text: &str) {
        self.progress.line(text);
    }

    /// Whether the run has been interrupted: a signal arrived, or the
    /// harness stopped a measurement because of one.
    pub fn interrupted(&mut self) -> bool {
        self.interrupted |= signals::interrupted();
        self.interrupted
    }

    /// The expected cost of each planned case, in order, so the progress
    /// bar's ETA weighs them (see `Progress::set_costs_ns`).
    pub fn expect_costs_ns(&mut self, costs_ns: &[u64]) {
        self.progress.set_costs_ns(costs_ns);
    }

    /// The cases the command will measure, in order (one per measurement
    /// or sweep, as `start_case` is called), so that a run stopped early
    /// names those it did not reach.
    pub fn plan_cases(&mut self, names: Vec<String>) {
        self.cases = names;
    }

    /// The next case begins (advances the progress bar); results the store
    /// refused before are tried again first.
    pub fn start_case(&mut self, name: &str) {
        self.step(name, true);
    }

    /// The next step begins: a round of a case (`first`: the case's first
    /// round, which counts it as started) or a workload sweep.
    pub fn step(&mut self, name: &str, first: bool) {
        if first {
            self.started += 1;
        }
        // A full disk is remembered and stops the case (`stopped`).
        let _ = self.flush();
        self.progress.start_case(name);
    }

    /// The error that stops the run before its next case: a full disk.
    fn stopped(&self) -> Result<(), CliError> {
        match &self.store_error {
            Some(StoreError::Full(path)) => Err(StoreError::Full(path.clone()).into()),
            _ => Ok(()),
        }
    }

    /// Offer the store every result it has not taken yet, oldest first.
    /// A refusal keeps them (and says so once); only a full disk is an
    /// error, since nothing more can be stored.
    fn flush(&mut self) -> Result<(), CliError> {
        let Some(store) = self.store.as_mut() else {
            return Ok(());
        };
        let waiting = self.unstored.len() + self.unstored_curves.len();
        if waiting == 0 {
            return Ok(());
        }
        let mut refused = None;
        while let Some(&i) = self.unstored.first() {
            self.store_attempts += 1;
            let stored = if failpoint("store_add", self.store_attempts) {
                Err(StoreError::Io {
                    path: store.path().to_path_buf(),
                    source: std::io::Error::other("failpoint store_add"),
                })
            } else {
                store.put_measurement(&self.run.id, i, &self.run.measurements[i])
            };
            match stored {
                Ok(()) => {
                    self.unstored.remove(0);
                }
                Err(e) => {
                    refused = Some((self.run.measurements[i].name.clone(), e));
                    break;
                }
            }
        }
        while let (None, Some(&seq)) = (&refused, self.unstored_curves.first()) {
            let curve = &self.run.curves[seq];
            let stored = if failpoint("store_curve", curve.points.len()) {
                Err(StoreError::Io {
                    path: store.path().to_path_buf(),
                    source: std::io::Error::other("failpoint store_curve"),
                })
            } else {
                store.put_curve(&self.run.id, seq, curve)
            };
            match stored {
                Ok(()) => {
                    self.unstored_curves.remove(0);
                }
                Err(e) => refused = Some((curve.workload.clone(), e)),
            }
        }
        let left = self.unstored.len() + self.unstored_curves.len();
        match refused {
            None => {
                if self.store_error.take().is_some() {
                    self.progress.line(&format!(
                        "stored {waiting} result(s) that had waited for the store"
                    ));
                }
                Ok(())
            }
            Some((name, e)) => {
                let text = e.to_string();
                let full = e.is_full();
                if full {
                    self.progress.line(&format!(
                        "could not store {name}: {text}; the run stops here, and what it \
                         measured is printed below"
                    ));
                } else if self.store_error.as_ref().map(|e| e.to_string()) != Some(text.clone()) {
                    self.progress.line(&format!(
                        "could not store {name} yet: {text}; {left} result(s) kept in \
                         memory and tried again before the next case and at the end"
                    ));
                }
                self.store_error = Some(e);
                if full {
                    self.stopped()
                } else {
                    Ok(())
                }
            }
        }
    }

    /// The last failure noted (`fail`).
    pub fn last_failure(&self) -> Option<&str> {
        self.failures.last().map(String::as_str)
    }

    /// A case that could not be measured: reported now, counted, and named
    /// in the stored reason; the run goes on with the next case.
    pub fn fail(&mut self, error: String) {
        self.progress.case_line(&format!("error: {error}"));
        self.failures.push(error);
    }

    /// Measure one case and store its measurement. A measurement failure is
    /// noted (`fail`) and an interruption remembered: neither is an error
    /// here. An error is returned only when the disk is full: the run
    /// stops.
    pub fn measure(
        &mut self,
        label: &CaseLabel,
        bench: &mut dyn Benchmark,
        shape: &Shape,
        baseline: Option<(&str, &mut dyn Benchmark)>,
        plan: &Plan,
    ) -> Result<(), CliError> {
        self.stopped()?;
        match measure_case(label, bench, shape, baseline, plan, &mut self.progress) {
            Ok(m) => self.done(None, m, plan, &|_| {}),
            Err(HarnessError::Interrupted) => {
                self.interrupted = true;
                Ok(())
            }
            Err(e) => {
                self.fail(e.to_string());
                Ok(())
            }
        }
    }

    /// Measure one more round of a case. Ok(true) when it was measured; a
    /// failure is noted (`fail`) and an interruption remembered, both
    /// Ok(false). An error is returned only when the disk is full: the run
    /// stops.
    pub fn measure_round(
        &mut self,
        case: &mut CaseRounds,
        bench: &mut dyn Benchmark,
        baseline: Option<&mut dyn Benchmark>,
        plan: &Plan,
    ) -> Result<bool, CliError> {
        self.stopped()?;
        match case.round(bench, baseline, plan, &mut self.progress) {
            Ok(()) => Ok(true),
            Err(HarnessError::Interrupted) => {
                self.interrupted = true;
                Ok(false)
            }
            Err(e) => {
                self.fail(e.to_string());
                Ok(false)
            }
        }
    }

    /// A finished measurement: annotated, shown, kept and stored (at
    /// `slot`, replacing what its earlier rounds left there).
    pub fn done(
        &mut self,
        slot: Option<usize>,
        mut m: Measurement,
        plan: &Plan,
        annotate: &dyn Fn(&mut Measurement),
    ) -> Result<(), CliError> {
        annotate(&mut m);
        let [fig, _, rel] = terminal::figure_cells(&m);
        let par = if plan.parallel > 1 {
            format!(" ×{}", plan.parallel)
        } else {
            String::new()
        };
        self.progress
            .case_done(&format!("{}{par}: {fig} {rel}", m.name));
        self.keep(slot, m);
        self.flush()
    }

    /// Sweep one workload case into `curve` (its name, parameters and
    /// operation; no points yet), keeping the curve in the run and storing
    /// it as each point is measured. As with `measure`, a failed sweep is a
    /// failed case (its points so far kept) and an interruption is
    /// remembered; an error is returned only when the disk is full. A
    /// curve the store refuses is kept and stored whole later.
    pub fn sweep(
        &mut self,
        name: &str,
        w: &mut dyn Workload,
        curve: Curve,
        plan: &SweepPlan,
    ) -> Result<(), CliError> {
        self.stopped()?;
        let seq = self.run.curves.len();
        self.run.curves.push(curve);
        // The points the sweep will measure, as it counts them.
        let usable = workload::cpu::usable_cpus().map_or(1, |u| u.len());
        let loads = match &plan.loads {
            Some(l) => l.len(),
            None => w.default_loads(usable).len(),
        };
        let counts = workload::resolve_cpu_counts(&plan.cpu_counts, usable)
            .0
            .len();
        let mut sink = point_sink::PointSink {
            name,
            progress: &self.progress,
            store: self.store.as_mut(),
            run_id: &self.run.id,
            curve: &mut self.run.curves[seq],
            seq,
            stored: Ok(()),
            points_planned: (loads * counts).max(1),
            trials_expected: (plan.rule.min_trials + 1).min(plan.rule.max_trials.max(1)),
        };
        let result = workload::sweep(w, plan, &mut sink);
        let stored = sink.stored;
        // Stored from its first point on: a sweep that measured none has no
        // curve, in the store or in what is printed.
        if self.run.curves[seq].points.is_empty() {
            self.run.curves.pop();
        }
        match result {
            Ok(_) => {}
            Err(WorkloadError::Interrupted) => self.interrupted = true,
            Err(e) => self.fail(format!("{name}: {e}")),
        }
        if stored.is_err() {
            // The sink stopped storing at its first refusal: the whole
            // curve is offered again with the other waiting results.
            self.unstored_curves.push(seq);
            self.flush()?;
        }
        Ok(())
    }

    /// Keep a finished measurement and commit it to the store. It is kept
    /// (printed, in --json) whatever the store says, and offered to it
    /// again later if refused.
    pub fn record(&mut self, m: Measurement) -> Result<(), CliError> {
        self.keep(None, m);
        self.flush()
    }

    /// Keep a measurement in the run — at `slot` (replacing what a case's
    /// earlier rounds left there) or after the others — for the store's
    /// next `flush`; returns where it went.
    pub fn keep(&mut self, slot: Option<usize>, m: Measurement) -> usize {
        let i = match slot {
            Some(i) => {
                self.run.measurements[i] = m;
                i
            }
            None => {
                self.run.measurements.push(m);
                self.run.measurements.len() - 1
            }
        };
        if self.store.is_some() && !self.unstored.contains(&i) {
            self.unstored.push(i);
        }
        i
    }

    /// Offer the store what was kept since (see `keep`). Only a full disk
    /// is an error: the run stops.
    pub fn store_kept(&mut self) -> Result<(), CliError> {
        self.flush()
    }

    /// Whether the run is stored (not `--no-store`).
    pub fn stores(&self) -> bool {
        self.store.is_some()
    }

    /// The measurements kept so far.
    pub fn measurements(&self) -> &[Measurement] {
        &self.run.measurements
    }

    /// Why the run ends as it does: its status and reason, from the result
    /// of the command's measuring code and what the session saw.
    fn ending(&self, body: &Result<(), CliError>) -> (RunStatus, Option<String>) {
        let failed = (!self.failures.is_empty()).then(|| {
            let mut text = format!(
                "{} of {} measurements failed: {}",
                self.failures.len(),
                self.planned,
                self.failures[..self.failures.len().min(REASONS_SHOWN)].join("; ")
            );
            if self.failures.len() > REASONS_SHOWN {
                text += &format!("; and {} more", self.failures.len() - REASONS_SHOWN);
            }
            text
        });
        let waiting = self.unstored.len() + self.unstored_curves.len();
        let unstored = match (&self.store_error, waiting) {
            // The error that stopped the run says why already.
            (Some(_), n) if n > 0 && body.is_err() => {
                Some(format!("{n} result(s) printed but not stored"))
            }
            (Some(e), n) if n > 0 => Some(format!("{n} result(s) printed but not stored: {e}")),
            _ => None,
        };
        let not_run = (body.is_err() && self.started < self.cases.len()).then(|| {
            let rest = &self.cases[self.started..];
            let mut text = format!(
                "{} case(s) not run: {}",
                rest.len(),
                rest[..rest.len().min(REASONS_SHOWN)].join(", ")
            );
            if rest.len() > REASONS_SHOWN {
                text += &format!(" and {} more", rest.len() - REASONS_SHOWN);
            }
            text
        });
        let joined = |first: Option<String>| {
            let parts: Vec<String> = [first, unstored.clone(), not_run.clone(), failed.clone()]
                .into_iter()
                .flatten()
                .collect();
            (!parts.is_empty()).then(|| parts.join("; "))
        };
        match body {
            Err(e) => (RunStatus::Failed, joined(Some(e.to_string()))),
            Ok(()) if self.interrupted => {
                let points: usize = self.run.curves.iter().map(|c| c.points.len()).sum();
                let curves = if self.run.curves.is_empty() {
                    String::new()
                } else {
                    format!(" and {points} point(s) of load curves")
                };
                (
                    RunStatus::Interrupted,
                    joined(Some(format!(
                        "interrupted by a signal (Ctrl-C, SIGTERM or SIGHUP) after {} measurement(s){curves}",
                        self.run.measurements.len()
                    ))),
                )
            }
            Ok(()) if unstored.is_some() || failed.is_some() => (RunStatus::Failed, joined(None)),
            Ok(()) => (RunStatus::Complete, None),
        }
    }

    /// Close the stored run with its final status and reason.
    fn close(&mut self, status: RunStatus, reason: Option<String>) -> Result<(), StoreError> {
        self.finished = true;
        self.run.status = status;
        self.run.reason = reason;
        self.run.ended_at = Some(Utc::now());
        match self.store.as_mut() {
            Some(s) => s.finish_run(&self.run),
            None => Ok(()),
        }
    }

    /// Close the run with its summary (`run`): each family's headline and
    /// the warnings counted, on a terminal; with `all` (--tables) or off a
    /// terminal (a file or a pipe) the full tables instead, as before.
    pub fn close_with_summary(&mut self, all: bool) {
        self.summary = Some(all);
    }

    /// Finish the run whatever `body` (the command's measuring code)
    /// returned: store its final status and reason, print the run (JSON, or
    /// the header, the table and `notes(run)`), and return the command's
    /// result — `body`'s error first, then interruption, then failed cases.
    pub fn finish(
        mut self,
        body: Result<(), CliError>,
        as_json: bool,
        notes: impl FnOnce(&Run) -> String,
    ) -> Result<(), CliError> {
        let (status, closed) = self.close_out(&body);
        let run = &self.run;
        if as_json {
            crate::output::print_json(&format!("{}\n", json::to_string(vec![run.clone()])));
        } else {
            let terminal_width = touchstone_report::tables::terminal_width();
            let tables = match self.summary {
                None => true,
                Some(all) => all || terminal_width.is_none(),
            };
            let measurements = match (tables, self.summary, terminal_width) {
                (false, ..) => String::new(),
                (true, Some(_), Some(w)) => {
                    fit_lines(&terminal::measurements(&run.measurements), w)
                }
                (true, ..) => terminal::measurements(&run.measurements),
            };
            // The summary stands in for the tables: each figure is printed
            // once, in one or the other.
            let summary = match (self.summary, tables) {
                (Some(_), false) => {
                    run_summary(run, terminal_width.unwrap_or(DEFAULT_WIDTH), tables)
                }
                _ => String::new(),
            };
            let header = match (self.summary, terminal_width) {
                (Some(_), Some(w)) => fit_lines(&terminal::run_header(run), w),
                _ => terminal::run_header(run),
            };
            crate::output::print(&format!(
                "{header}\n{measurements}{}{}{summary}",
                terminal::render_curves(&touchstone_report::Model::run(run).curves[0], true),
                notes(run)
            ));
            let waiting = self.unstored.len() + self.unstored_curves.len();
            match (&self.store, &closed) {
                (Some(s), Ok(())) if waiting == 0 => crate::output::print(&format!(
                    "stored as run {} in {}\n",
                    run.id,
                    s.path().display()
                )),
                (Some(s), Ok(())) => crate::output::print(&format!(
                    "stored as run {} in {}, without {waiting} result(s) the store refused \
                     (shown above)\n",
                    run.id,
                    s.path().display()
                )),
                _ => {}
            }
        }
        self.outcome(body, status, closed)
    }

    /// End the run as `finish` does, printing nothing (progress aside),
    /// and hand it back with the measurements that failed ("name: why")
    /// and `finish`'s outcome: `touchstone check` judges what was measured
    /// also when a measurement failed.
    pub fn finish_quietly(mut self, body: Result<(), CliError>) -> Quiet {
        let (status, closed) = self.close_out(&body);
        let outcome = self.outcome(body, status, closed);
        Quiet {
            run: self.run.clone(),
            failures: std::mem::take(&mut self.failures),
            outcome,
        }
    }

    /// Store what is left, mark the stored run with how it ended.
    fn close_out(&mut self, body: &Result<(), CliError>) -> (RunStatus, Result<(), StoreError>) {
        // A last chance for results the store refused; on a full disk the
        // little room left is kept for closing the run.
        if !self.store_error.as_ref().is_some_and(StoreError::is_full) {
            let _ = self.flush();
        }
        let (status, reason) = self.ending(body);
        let closed = self.close(status, reason);
        self.progress.finish();
        if let (Err(e), Err(_)) = (&closed, body) {
            // The error that stopped the run is the one reported below.
            self.progress.line(&format!(
                "could not mark the stored run as {}: {e}",
                status.as_str()
            ));
        }
        (status, closed)
    }

    /// The run's outcome as the command's: the error that stopped it, the
    /// store's, an interruption, or failed measurements.
    fn outcome(
        &mut self,
        body: Result<(), CliError>,
        status: RunStatus,
        closed: Result<(), StoreError>,
    ) -> Result<(), CliError> {
        body?;
        closed?;
        if self.unstored.len() + self.unstored_curves.len() > 0 {
            if let Some(e) = self.store_error.take() {
                return Err(e.into());
            }
        }
        if status == RunStatus::Interrupted {
            return Err(if self.stores() {
                CliError::Interrupted(self.run.id.clone())
            } else {
                CliError::InterruptedUnstored
            });
        }
        if !self.failures.is_empty() {
            return Err(CliError::Failed(self.failures.len(), self.planned));
        }
        Ok(())
    }
}

/// A run ended quietly (`Session::finish_quietly`).
pub struct Quiet {
    pub run: Run,
    pub failures: Vec<String>,
    pub outcome: Result<(), CliError>,
}

impl Drop for Session {
    /// The backstop: a session that was never finished (a panic unwinding
    /// through the command) stores its run as failed rather than leaving it
    /// `running`, which reads as a crash.
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.close(
                RunStatus::Failed,
                Some("touchstone stopped before finishing the run (an internal error; see the message above)".into()),
            );
        }
    }
}

mod failpoint;
mod point_sink;

pub use failpoint::failpoint;
#[cfg(test)]
mod tests;
