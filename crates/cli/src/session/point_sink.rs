//! A workload sweep's observer: progress, the run's curve and the store.

use touchstone_harness::workload::topology::CpuChoice;
use touchstone_harness::workload::SweepObserver;
use touchstone_results::curve::{Curve, Point};
use touchstone_results::store::{Store, StoreError};

use super::failpoint;
use crate::curve_lines;
use crate::progress::Progress;

/// What a sweep reports to the session: progress on stderr (the trial under
/// way and then each point on the bar), and each point into the run's
/// curve and the store the moment it is measured.
pub(super) struct PointSink<'s> {
    pub(super) name: &'s str,
    pub(super) progress: &'s Progress,
    pub(super) store: Option<&'s mut Store>,
    pub(super) run_id: &'s str,
    pub(super) curve: &'s mut Curve,
    pub(super) seq: usize,
    /// The first store error; later points are still kept in the run.
    pub(super) stored: Result<(), StoreError>,
    /// The sweep's points (loads × CPU counts) and the trials a point is
    /// expected to take: the bar advances per trial within the sweep.
    pub(super) points_planned: usize,
    pub(super) trials_expected: usize,
}

impl PointSink<'_> {
    /// The share of the sweep done when `trials` of the next point are.
    fn fraction(&self, trials: usize) -> f64 {
        let within = (trials as f64 / self.trials_expected.max(1) as f64).min(0.9);
        (self.curve.points.len() as f64 + within) / self.points_planned as f64
    }
}

impl SweepObserver for PointSink<'_> {
    fn cpus_chosen(&mut self, choice: &CpuChoice) {
        let ids: Vec<String> = choice.cpus.iter().map(usize::to_string).collect();
        self.progress.case_line(&format!(
            "{}: {} CPU(s) {} — {}",
            self.name,
            choice.cpus.len(),
            ids.join(","),
            choice.why
        ));
    }

    fn trial_started(&mut self, load: u32, cpus: usize, trial: u32) {
        self.progress.case_fraction(self.fraction(trial as usize));
        self.progress.status(&format!(
            "{}: point {}/{}, load {load} on {cpus} CPU(s), trial {}",
            self.name,
            (self.curve.points.len() + 1).min(self.points_planned),
            self.points_planned,
            trial + 1
        ));
    }

    fn point(&mut self, point: &Point) {
        // On a terminal the bar shows the point's figures until the next;
        // without one a short line says a point was measured (points take
        // seconds: a log shows the sweep is alive), and the figures are
        // printed once, in the curve's tables.
        if self.progress.is_terminal() {
            self.progress.case_done(&format!(
                "{} {}",
                self.name,
                curve_lines::point_line(&self.curve.operation, self.curve.bytes_per_op, point)
            ));
        } else {
            let bound = point
                .touchstone_bound()
                .map(|b| format!("; {b}"))
                .unwrap_or_default();
            self.progress.case_line(&format!(
                "{} load {} on {} CPU(s): measured ({} trials){bound}",
                self.name,
                point.load,
                point.cpus,
                point.trials.len()
            ));
        }
        self.curve.points.push(point.clone());
        self.progress.case_fraction(self.fraction(0));
        if let (Ok(()), Some(store)) = (&self.stored, self.store.as_mut()) {
            self.stored = if failpoint("store_curve", self.curve.points.len()) {
                Err(StoreError::Io {
                    path: store.path().to_path_buf(),
                    source: std::io::Error::other("failpoint store_curve"),
                })
            } else {
                store.put_curve(self.run_id, self.seq, self.curve)
            };
        }
    }
}
