//! From rounds of raw intervals to a results-model `Measurement`. A case is
//! measured in rounds (`CaseRounds`): each round forks fresh processes —
//! the benchmark's memory allocated anew, its CPUs chosen anew — and times
//! the plan's repetitions; the first round sizes the loop and later ones
//! reuse it. Each round's samples come from its intervals
//! (`windows::samples`), a measured overhead is subtracted round by round
//! when the benchmark has one, and the summary's headline and interval are
//! built over the rounds, with the warnings the figures deserve.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use touchstone_results::convergence::{assess_median, MedianConvergence, Rule, Verdict};
use touchstone_results::stats::{run_level_spread, RoundSummary};
use touchstone_results::{checks, host, Baseline, Measurement, Statistic, Summary};

use crate::bench::{Benchmark, Report, Shape};
use crate::events::Observer;
use crate::parallel::{measure, HarnessError, Timing};
use crate::plan::Plan;
use crate::windows::samples;

/// The identity of a case, opaque to the harness.
#[derive(Debug, Clone)]
pub struct CaseLabel {
    pub name: String,
    pub benchmark: String,
    pub group: String,
    pub params: BTreeMap<String, String>,
}

/// Each extra figure's mean over the processes (and rounds) that reported it.
fn mean_extras(rounds: &[Timing]) -> BTreeMap<String, f64> {
    let mut sums: BTreeMap<String, (f64, u32)> = BTreeMap::new();
    for (k, v) in rounds
        .iter()
        .flat_map(|t| t.processes.iter())
        .flat_map(|p| p.extras.iter())
    {
        let e = sums.entry(k.clone()).or_default();
        e.0 += v;
        e.1 += 1;
    }
    sums.into_iter()
        .map(|(k, (s, n))| (k, s / n as f64))
        .collect()
}

/// Every round's samples in round order, with the round of each:
/// (combined, per process, rounds).
fn all_samples(shape: &Shape, rounds: &[Timing]) -> (Vec<f64>, Vec<Vec<f64>>, Vec<u32>) {
    let mut combined = Vec::new();
    let mut per_process: Vec<Vec<f64>> = Vec::new();
    let mut of_round = Vec::new();
    for (k, t) in rounds.iter().enumerate() {
        let (c, pp) = samples(shape, t);
        of_round.extend(std::iter::repeat_n(k as u32, c.len()));
        if per_process.is_empty() {
            per_process = vec![Vec::new(); pp.len()];
        }
        for (mine, theirs) in per_process.iter_mut().zip(pp) {
            // Only as many per process as were combined.
            mine.extend(theirs.into_iter().take(c.len()));
        }
        combined.extend(c);
    }
    (combined, per_process, of_round)
}

/// Subtract a measured overhead from every sample, round by round: each
/// round's samples lose the overhead's median of the same round (what that
/// round's processes, memory and CPUs made of the overhead), or its
/// headline where that round has none. `raw` summarises the samples
/// before. A difference the two intervals cannot tell from zero earns a
/// warning; a headline that would go to or below zero is no figure at all:
/// the reason is returned, to be stored as the measurement's `invalid`, so
/// that no report sorts, compares or indexes a 0 (a loaded machine once
/// made lat_ctx's one-process overhead, 11.5 µs, exceed its 16-process
/// ring, 4.8 µs). Samples are never shown negative.
pub fn subtract_baseline(
    combined: &mut [f64],
    per_process: &mut [Vec<f64>],
    rounds: &[u32],
    raw: &Summary,
    base: &Baseline,
    headline: Statistic,
) -> (Vec<touchstone_results::Warning>, Option<String>) {
    let mut warnings = Vec::new();
    let half = |s: &Summary, stat: Statistic| {
        s.headline_interval(stat)
            .map_or((s.ci_high - s.ci_low) / 2.0, |i| (i.high - i.low) / 2.0)
    };
    let (raw_figure, base_figure) = (
        raw.headline(headline),
        base.summary.headline(Statistic::Median),
    );
    let noise = half(raw, headline) + half(&base.summary, Statistic::Median);
    let difference = raw_figure - base_figure;
    if difference <= noise {
        let message = format!(
            "the measured overhead ({base_figure:.4} ns) swamps the signal ({raw_figure:.4} ns before subtraction)"
        );
        warnings.push(touchstone_results::Warning::new(
            touchstone_results::WarningCode::OverheadSwamps,
            message,
        ));
    }
    let base_of_round: BTreeMap<u32, f64> = match &base.summary.rounds {
        Some(r) if base.rounds.len() == base.samples.len() => {
            let ids: std::collections::BTreeSet<u32> = base.rounds.iter().copied().collect();
            ids.into_iter().zip(r.figures.iter().copied()).collect()
        }
        _ => BTreeMap::new(),
    };
    let overhead = |i: usize| {
        rounds
            .get(i)
            .and_then(|r| base_of_round.get(r))
            .copied()
            .unwrap_or(base_figure)
    };
    for (i, x) in combined.iter_mut().enumerate() {
        *x = (*x - overhead(i)).max(0.0);
    }
    for p in per_process.iter_mut() {
        for (i, x) in p.iter_mut().enumerate() {
            *x = (*x - overhead(i)).max(0.0);
        }
    }
    let after =
        Summary::of_rounds(combined, rounds, headline).map_or(0.0, |s| s.headline(headline));
    let invalid = (after <= 0.0).then(|| {
        format!(
            "the subtracted overhead ({base_figure:.4} ns) is at least the measured time \
             ({raw_figure:.4} ns {} before subtraction): the difference is no figure; \
             re-run on a quiet machine",
            match headline {
                Statistic::Median => "median",
                Statistic::Min => "minimum",
                Statistic::Max => "maximum",
            }
        )
    });
    (warnings, invalid)
}

/// A case measured round by round: the rounds so far and what the first
/// one found, so that a run can interleave its cases' rounds (`rounds::
/// order`) and build the measurement when the last is done.
pub struct CaseRounds {
    label: CaseLabel,
    shape: Shape,
    baseline_name: Option<String>,
    started_at: DateTime<Utc>,
    rounds: Vec<Timing>,
    baseline_rounds: Vec<Timing>,
    sizing: Option<u64>,
    baseline_sizing: Option<u64>,
}

impl CaseRounds {
    /// A case about to be measured; `baseline` names its overhead, when it
    /// has one (measured before it in every round).
    pub fn new(label: &CaseLabel, shape: &Shape, baseline: Option<&str>) -> CaseRounds {
        CaseRounds {
            label: label.clone(),
            shape: *shape,
            baseline_name: baseline.map(str::to_string),
            started_at: Utc::now(),
            rounds: Vec::new(),
            baseline_rounds: Vec::new(),
            sizing: None,
            baseline_sizing: None,
        }
    }

    pub fn label(&self) -> &CaseLabel {
        &self.label
    }

    /// Rounds measured so far.
    pub fn rounds(&self) -> usize {
        self.rounds.len()
    }

    /// Measure one more round: the overhead (when the case has one), then
    /// the case, each in fresh processes. The first round sizes the loop;
    /// later rounds reuse its sizing (warm-up may still grow it).
    pub fn round(
        &mut self,
        bench: &mut dyn Benchmark,
        baseline: Option<&mut dyn Benchmark>,
        plan: &Plan,
        observer: &mut dyn Observer,
    ) -> Result<(), HarnessError> {
        let k = self.rounds.len() as u32;
        if let Some(b) = baseline {
            if self.shape.report != Report::Latency {
                return Err(HarnessError::Invalid {
                    case: self.label.name.clone(),
                    message: "a baseline can only be subtracted from a latency".into(),
                });
            }
            let at = Plan {
                sizing: self.baseline_sizing,
                ..plan.clone()
            };
            let t = measure(
                &format!("{} (overhead)", self.label.name),
                b,
                &self.shape,
                &at,
                observer,
            )?;
            self.baseline_sizing = self.baseline_sizing.or(sizing_of(&t));
            self.baseline_rounds.push(tagged(t, k));
        }
        let at = Plan {
            sizing: self.sizing,
            ..plan.clone()
        };
        let t = measure(&self.label.name, bench, &self.shape, &at, observer)?;
        self.sizing = self.sizing.or(sizing_of(&t));
        self.rounds.push(tagged(t, k));
        Ok(())
    }

    /// `run --converge`: whether the headline's interval over the rounds so
    /// far (after subtracting the overhead, as the figure will be) is as
    /// narrow as `rule` asks, at `rule.confidence`; `More` while it is not
    /// and fewer than `rule.max_trials` rounds ran. With one round, the
    /// median's sign-test interval of its samples.
    pub fn convergence(&self, rule: &Rule) -> MedianConvergence {
        let (figures, of_round) = self.figures();
        let rounds = self.rounds.len();
        let mut by_round: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
        for (x, r) in figures.iter().zip(&of_round) {
            by_round.entry(*r).or_default().push(*x);
        }
        if by_round.len() < 2 {
            return assess_median(rule, &figures, rounds);
        }
        let round_figures: Vec<f64> = by_round
            .into_values()
            .map(|v| Summary::of(&v).map_or(f64::NAN, |s| s.get(self.shape.statistic)))
            .collect();
        let width = RoundSummary::width_at(&round_figures, rule.confidence);
        MedianConvergence::judged(rule, rounds, width)
    }

    /// The samples as the figure will have them (the overhead's round
    /// median subtracted) and the round of each.
    fn figures(&self) -> (Vec<f64>, Vec<u32>) {
        let (mut combined, _, rounds) = all_samples(&self.shape, &self.rounds);
        if !self.baseline_rounds.is_empty() {
            let (b, _, br) = all_samples(&self.shape, &self.baseline_rounds);
            if let Some(summary) = Summary::of_rounds(&b, &br, Statistic::Median) {
                let base = Baseline {
                    name: String::new(),
                    summary,
                    samples: b,
                    rounds: br,
                };
                if let Some(raw) = Summary::of_rounds(&combined, &rounds, self.shape.statistic) {
                    subtract_baseline(
                        &mut combined,
                        &mut [],
                        &rounds,
                        &raw,
                        &base,
                        self.shape.statistic,
                    );
                }
            }
        }
        (combined, rounds)
    }

    /// The measurement of the rounds so far, with its warnings (and the
    /// convergence, when it was asked for).
    pub fn measurement(
        &self,
        plan: &Plan,
        convergence: Option<MedianConvergence>,
    ) -> Result<Measurement, HarnessError> {
        let label = &self.label;
        let shape = &self.shape;
        let invalid_error = |message: String| HarnessError::Invalid {
            case: label.name.clone(),
            message,
        };
        let one_round = self.rounds.len() <= 1;
        let keep = |r: Vec<u32>| if one_round { Vec::new() } else { r };
        let base = match &self.baseline_name {
            Some(name) => {
                let (s, _, r) = all_samples(shape, &self.baseline_rounds);
                let r = keep(r);
                let summary = Summary::of_rounds(&s, &r, Statistic::Median)
                    .ok_or_else(|| invalid_error("overhead produced no samples".into()))?;
                Some(Baseline {
                    name: name.clone(),
                    summary,
                    samples: s,
                    rounds: r,
                })
            }
            None => None,
        };
        let (mut combined, mut per_process, rounds) = all_samples(shape, &self.rounds);
        let rounds = keep(rounds);
        let mut warnings = Vec::new();
        let mut invalid = None;
        if let Some(b) = &base {
            let raw = Summary::of_rounds(&combined, &rounds, shape.statistic)
                .ok_or_else(|| invalid_error("no samples".into()))?;
            let (w, why) = subtract_baseline(
                &mut combined,
                &mut per_process,
                &rounds,
                &raw,
                b,
                shape.statistic,
            );
            warnings.extend(w);
            invalid = why;
        }
        let mut summary = Summary::of_rounds(&combined, &rounds, shape.statistic)
            .ok_or_else(|| invalid_error("the benchmark produced no samples".into()))?;
        // What moves a whole run and its rounds cannot see, for the group
        // (and for a working set in a cache the host's other tenants share).
        let run_level = run_level_spread(&label.group, shape.tenants_share_cache);
        summary.rounds = summary.rounds.map(|r| r.with_run_level(run_level));
        warnings.extend(checks::check_ci(&summary));
        if summary.rounds.is_none() {
            // Over rounds the headline's interval comes from the rounds,
            // not from the sign test of the samples.
            warnings.extend(checks::check_few_repetitions(&summary));
        }
        if let Some(c) = convergence.filter(|c| c.verdict == Verdict::NotConverged) {
            let width = c.width.map_or("has no interval yet".to_string(), |w| {
                format!("is {:.1} % wide", w * 100.0)
            });
            warnings.push(touchstone_results::Warning::new(
                touchstone_results::WarningCode::NotConverged,
                format!(
                    "after {} rounds of {} repetitions the headline's {:.0} % interval {width}, not {:.1} %",
                    c.rounds,
                    plan.repetitions,
                    c.rule.confidence * 100.0,
                    c.rule.width * 100.0
                ),
            ));
        }
        let cpus = host::usable_cpus();
        warnings.extend(checks::check_oversubscribed(plan.parallel, cpus));
        let all = self
            .rounds
            .iter()
            .flat_map(|t| t.processes.iter())
            .flat_map(|p| &p.intervals);
        if plan.parallel <= cpus && !shape.switches_by_design {
            // With more processes than CPUs, time-sharing is what is measured;
            // a ping-pong's own switches are part of its operation.
            let preempted = all.clone().filter(|iv| iv.preemptions > 0).count();
            warnings.extend(checks::check_preempted(preempted, all.clone().count()));
        }
        Ok(Measurement {
            name: label.name.clone(),
            benchmark: label.benchmark.clone(),
            group: label.group.clone(),
            params: label.params.clone(),
            parallel: plan.parallel,
            unit: shape.unit(),
            statistic: shape.statistic,
            samples: combined,
            rounds,
            per_process: if plan.parallel > 1 {
                per_process
            } else {
                Vec::new()
            },
            summary,
            intervals: all.copied().collect(),
            baseline: base,
            warnings,
            extra: mean_extras(&self.rounds),
            invalid,
            started_at: self.started_at,
            ended_at: Utc::now(),
            convergence,
        })
    }
}

/// The iterations per interval a round's processes settled on.
fn sizing_of(t: &Timing) -> Option<u64> {
    t.processes
        .iter()
        .map(|p| p.iterations)
        .max()
        .filter(|&n| n > 0)
}

/// A round's timing with its intervals marked as round `k`.
fn tagged(mut t: Timing, k: u32) -> Timing {
    for iv in t.processes.iter_mut().flat_map(|p| p.intervals.iter_mut()) {
        iv.round = k;
    }
    t
}

/// Measure a case in `plan.rounds` rounds (its overhead first in each, when
/// it has one), then, with `plan.converge`, in more until the headline's
/// interval is narrow enough, into a Measurement. A run that interleaves
/// several cases drives `CaseRounds` itself.
pub fn measure_case(
    label: &CaseLabel,
    bench: &mut dyn Benchmark,
    shape: &Shape,
    mut baseline: Option<(&str, &mut dyn Benchmark)>,
    plan: &Plan,
    observer: &mut dyn Observer,
) -> Result<Measurement, HarnessError> {
    let mut case = CaseRounds::new(label, shape, baseline.as_ref().map(|(n, _)| *n));
    let mut round = |case: &mut CaseRounds| {
        let overhead = baseline
            .as_mut()
            .map(|(_, b)| &mut **b as &mut dyn Benchmark);
        case.round(bench, overhead, plan, observer)
    };
    for _ in 0..plan.rounds.max(1) {
        round(&mut case)?;
    }
    let convergence = match &plan.converge {
        Some(rule) => loop {
            let c = case.convergence(rule);
            if c.verdict != Verdict::More {
                break Some(c);
            }
            round(&mut case)?;
        },
        None => None,
    };
    case.measurement(plan, convergence)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eleven samples within ±1 % of `v`.
    fn around(v: f64) -> Vec<f64> {
        (0..11)
            .map(|i| v * (1.0 + (i as f64 - 5.0) * 0.002))
            .collect()
    }

    fn baseline(samples: Vec<f64>, rounds: Vec<u32>) -> Baseline {
        Baseline {
            name: "overhead".into(),
            summary: Summary::of_rounds(&samples, &rounds, Statistic::Median).unwrap(),
            samples,
            rounds,
        }
    }

    /// The recorded case: under load lat_ctx's one-process overhead
    /// (11.5 µs) exceeded its 16-process ring (4.8 µs) and a 0 ns context
    /// switch was stored as a figure. It is now marked invalid, with both
    /// figures in the reason.
    /// A working set in a cache the host's other tenants share takes the
    /// run-level term measured for such figures, others their group's.
    #[test]
    fn a_working_set_the_tenants_share_takes_its_own_run_level_term() {
        use crate::{Fallible, NoObserver};
        struct Spin(u64);
        impl Benchmark for Spin {
            fn run(&mut self, n: u64) -> Fallible {
                for i in 0..n * 20 {
                    self.0 = std::hint::black_box(self.0.wrapping_add(i));
                }
                Ok(())
            }
        }
        let label = CaseLabel {
            name: "lat_mem_rd/size:12m".into(),
            benchmark: "lat_mem_rd".into(),
            group: "mem_lat".into(),
            params: BTreeMap::new(),
        };
        let plan = Plan {
            repetitions: 2,
            rounds: 2,
            target_ns: 200_000,
            min_interval_ns: 50_000,
            warmup_ns: 0,
            ..Plan::default()
        };
        let term = |shared: bool| {
            let shape = Shape::latency(1.0).with_tenants_share_cache(shared);
            let m =
                measure_case(&label, &mut Spin(0), &shape, None, &plan, &mut NoObserver).unwrap();
            m.summary.rounds.expect("two rounds").run_level
        };
        assert_eq!(term(false), run_level_spread("mem_lat", false));
        assert_eq!(term(true), run_level_spread("mem_lat", true));
        assert!(term(true) > term(false));
    }

    #[test]
    fn an_overhead_larger_than_the_ring_is_invalid_not_zero() {
        let mut ring = around(4_800.0);
        let raw = Summary::of(&ring).unwrap();
        let overhead = baseline(around(11_500.0), Vec::new());
        let (warnings, invalid) =
            subtract_baseline(&mut ring, &mut [], &[], &raw, &overhead, Statistic::Median);
        let why = invalid.expect("marked invalid");
        assert!(why.contains("11500") && why.contains("4800"), "{why}");
        assert!(warnings.iter().any(|w| w.code == "overhead-swamps"));
        assert!(ring.iter().all(|&x| x == 0.0), "{ring:?}");
    }

    /// An overhead equal to the figure also leaves nothing: invalid.
    #[test]
    fn a_difference_of_exactly_zero_is_invalid() {
        let mut ring = vec![5_000.0; 11];
        let raw = Summary::of(&ring).unwrap();
        let same = baseline(ring.clone(), Vec::new());
        let (_, invalid) =
            subtract_baseline(&mut ring, &mut [], &[], &raw, &same, Statistic::Median);
        assert!(invalid.is_some());
    }

    /// A clear positive difference stays a figure, with no warning.
    #[test]
    fn a_small_overhead_is_subtracted_and_valid() {
        let mut ring = around(4_800.0);
        let mut per_process = vec![around(4_800.0)];
        let raw = Summary::of(&ring).unwrap();
        let overhead = baseline(around(1_000.0), Vec::new());
        let (warnings, invalid) = subtract_baseline(
            &mut ring,
            &mut per_process,
            &[],
            &raw,
            &overhead,
            Statistic::Median,
        );
        assert_eq!(invalid, None);
        assert!(warnings.is_empty(), "{warnings:?}");
        let m = Summary::of(&ring).unwrap().median;
        assert!((m - 3_800.0).abs() < 1e-6, "{m}");
        assert!((per_process[0][5] - 3_800.0).abs() < 1e-6);
    }

    /// Over rounds, each round loses its own round's overhead: a round
    /// whose processes landed badly for both keeps the same difference.
    #[test]
    fn each_round_loses_its_own_overhead() {
        // Rounds 0 and 1: overhead 1000 and 1500, ring 4000 and 4500.
        let mut ring = vec![4_000.0, 4_000.0, 4_500.0, 4_500.0];
        let rounds = vec![0, 0, 1, 1];
        let raw = Summary::of_rounds(&ring, &rounds, Statistic::Median).unwrap();
        let overhead = baseline(vec![1_000.0, 1_000.0, 1_500.0, 1_500.0], rounds.clone());
        let (_, invalid) = subtract_baseline(
            &mut ring,
            &mut [],
            &rounds,
            &raw,
            &overhead,
            Statistic::Median,
        );
        assert_eq!(invalid, None);
        assert_eq!(ring, [3_000.0; 4]);
    }
}
