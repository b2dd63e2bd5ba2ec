//! From raw intervals to a results-model `Measurement`: per-interval figures,
//! combined across processes per repetition (sum for throughput, mean for
//! latency), summarised, with a measured overhead subtracted when the
//! benchmark has one, and the warnings the figures deserve.

use std::collections::BTreeMap;

use chrono::Utc;
use touchstone_results::convergence::{assess_median, MedianConvergence, Rule, Verdict};
use touchstone_results::{checks, host, Baseline, Measurement, Statistic, Summary};

use crate::bench::{Benchmark, Report, Shape};
use crate::events::Observer;
use crate::parallel::{measure, HarnessError, Timing};
use crate::plan::Plan;

/// The identity of a case, opaque to the harness.
#[derive(Debug, Clone)]
pub struct CaseLabel {
    pub name: String,
    pub benchmark: String,
    pub group: String,
    pub params: BTreeMap<String, String>,
}

/// Per-repetition figures: (combined over processes, per process).
pub fn samples(shape: &Shape, timing: &Timing) -> (Vec<f64>, Vec<Vec<f64>>) {
    let per_process: Vec<Vec<f64>> = timing
        .processes
        .iter()
        .map(|p| {
            p.intervals
                .iter()
                .map(|iv| shape.figure(iv.iterations, iv.elapsed_ns()))
                .collect()
        })
        .collect();
    let reps = per_process.iter().map(Vec::len).min().unwrap_or(0);
    let combined = (0..reps)
        .map(|r| {
            let sum: f64 = per_process.iter().map(|p| p[r]).sum();
            if shape.sums_across_processes() {
                sum
            } else {
                sum / per_process.len() as f64
            }
        })
        .collect();
    (combined, per_process)
}

/// Each extra figure's mean over the processes that reported it.
fn mean_extras(timing: &Timing) -> BTreeMap<String, f64> {
    let mut sums: BTreeMap<String, (f64, u32)> = BTreeMap::new();
    for (k, v) in timing.processes.iter().flat_map(|p| p.extras.iter()) {
        let e = sums.entry(k.clone()).or_default();
        e.0 += v;
        e.1 += 1;
    }
    sums.into_iter()
        .map(|(k, (s, n))| (k, s / n as f64))
        .collect()
}

/// Subtract a measured overhead's median from every sample (`raw`
/// summarises the samples before). A difference the two intervals cannot
/// tell from zero earns a warning; a headline that would go to or below
/// zero is no figure at all: the reason is returned, to be stored as the
/// measurement's `invalid`, so that no report sorts, compares or indexes a
/// 0 (a loaded machine once made lat_ctx's one-process overhead, 11.5 µs,
/// exceed its 16-process ring, 4.8 µs). Samples are never shown negative.
pub fn subtract_baseline(
    combined: &mut [f64],
    per_process: &mut [Vec<f64>],
    raw: &Summary,
    base: &Summary,
    headline: Statistic,
) -> (Vec<touchstone_results::Warning>, Option<String>) {
    let mut warnings = Vec::new();
    let noise = (raw.ci_high - raw.ci_low) / 2.0 + (base.ci_high - base.ci_low) / 2.0;
    let difference = raw.median - base.median;
    if difference <= noise {
        let message = format!(
            "the measured overhead ({:.4} ns) swamps the signal ({:.4} ns before subtraction)",
            base.median, raw.median
        );
        warnings.push(touchstone_results::Warning::new(
            touchstone_results::WarningCode::OverheadSwamps,
            message,
        ));
    }
    for x in combined.iter_mut().chain(per_process.iter_mut().flatten()) {
        *x = (*x - base.median).max(0.0);
    }
    let after = Summary::of(combined).map_or(0.0, |s| s.get(headline));
    let invalid = (after <= 0.0).then(|| {
        format!(
            "the subtracted overhead ({:.4} ns, median) is at least the measured time \
             ({:.4} ns {} before subtraction): the difference is no figure; \
             re-run on a quiet machine",
            base.median,
            raw.get(headline),
            match headline {
                Statistic::Median => "median",
                Statistic::Min => "minimum",
                Statistic::Max => "maximum",
            }
        )
    });
    (warnings, invalid)
}

/// `run --converge` for a micro-benchmark: while the median's interval
/// (after subtracting the overhead's median, as the figure will be) is
/// wider than the rule asks, measure another round of the plan's
/// repetitions — fresh processes, warmed up again — and append its
/// intervals to `timing`, up to `rule.max_trials` rounds.
#[allow(clippy::too_many_arguments)]
fn converge(
    label: &CaseLabel,
    bench: &mut dyn Benchmark,
    shape: &Shape,
    plan: &Plan,
    rule: &Rule,
    overhead: Option<f64>,
    timing: &mut Timing,
    observer: &mut dyn Observer,
) -> Result<MedianConvergence, HarnessError> {
    let mut rounds = 1;
    loop {
        let (raw, _) = samples(shape, timing);
        let figures: Vec<f64> = match overhead {
            Some(o) => raw.iter().map(|x| (x - o).max(0.0)).collect(),
            None => raw,
        };
        let assessment = assess_median(rule, &figures, rounds);
        if assessment.verdict != Verdict::More {
            return Ok(assessment);
        }
        let more = measure(&label.name, bench, shape, plan, observer)?;
        for (mine, theirs) in timing.processes.iter_mut().zip(more.processes) {
            mine.intervals.extend(theirs.intervals);
            mine.extras.extend(theirs.extras);
            mine.iterations += theirs.iterations;
        }
        rounds += 1;
    }
}

/// Measure a case, and its baseline first if it has one, into a Measurement.
pub fn measure_case(
    label: &CaseLabel,
    bench: &mut dyn Benchmark,
    shape: &Shape,
    baseline: Option<(&str, &mut dyn Benchmark)>,
    plan: &Plan,
    observer: &mut dyn Observer,
) -> Result<Measurement, HarnessError> {
    let started_at = Utc::now();
    let invalid_error = |message: String| HarnessError::Invalid {
        case: label.name.clone(),
        message,
    };
    let base = match baseline {
        Some((name, b)) => {
            if shape.report != Report::Latency {
                return Err(invalid_error(
                    "a baseline can only be subtracted from a latency".into(),
                ));
            }
            let t = measure(
                &format!("{} (overhead)", label.name),
                b,
                shape,
                plan,
                observer,
            )?;
            let (s, _) = samples(shape, &t);
            let summary = Summary::of(&s)
                .ok_or_else(|| invalid_error("overhead produced no samples".into()))?;
            Some(Baseline {
                name: name.to_string(),
                summary,
                samples: s,
            })
        }
        None => None,
    };
    let mut timing = measure(&label.name, bench, shape, plan, observer)?;
    let convergence = match &plan.converge {
        Some(rule) => Some(converge(
            label,
            bench,
            shape,
            plan,
            rule,
            base.as_ref().map(|b| b.summary.median),
            &mut timing,
            observer,
        )?),
        None => None,
    };
    let (mut combined, mut per_process) = samples(shape, &timing);
    let mut warnings = Vec::new();
    let mut invalid = None;
    if let Some(b) = &base {
        let raw = Summary::of(&combined).ok_or_else(|| invalid_error("no samples".into()))?;
        let (w, why) = subtract_baseline(
            &mut combined,
            &mut per_process,
            &raw,
            &b.summary,
            shape.statistic,
        );
        warnings.extend(w);
        invalid = why;
    }
    let summary = Summary::of(&combined)
        .ok_or_else(|| invalid_error("the benchmark produced no samples".into()))?;
    warnings.extend(checks::check_ci(&summary));
    warnings.extend(checks::check_few_repetitions(&summary));
    if let Some(c) = convergence.filter(|c| c.verdict == Verdict::NotConverged) {
        let width = c.width.map_or("has no interval yet".to_string(), |w| {
            format!("is {:.1} % wide", w * 100.0)
        });
        warnings.push(touchstone_results::Warning::new(
            touchstone_results::WarningCode::NotConverged,
            format!(
                "after {} rounds of {} repetitions the median's {:.0} % interval {width}, not {:.1} %",
                c.rounds,
                plan.repetitions,
                c.rule.confidence * 100.0,
                c.rule.width * 100.0
            ),
        ));
    }
    let cpus = host::usable_cpus();
    warnings.extend(checks::check_oversubscribed(plan.parallel, cpus));
    if plan.parallel <= cpus && !shape.switches_by_design {
        // With more processes than CPUs, time-sharing is what is measured;
        // a ping-pong's own switches are part of its operation.
        let all = timing.processes.iter().flat_map(|p| &p.intervals);
        let preempted = all.clone().filter(|iv| iv.preemptions > 0).count();
        warnings.extend(checks::check_preempted(preempted, all.count()));
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
        per_process: if plan.parallel > 1 {
            per_process
        } else {
            Vec::new()
        },
        summary,
        intervals: timing
            .processes
            .iter()
            .flat_map(|p| p.intervals.iter().copied())
            .collect(),
        baseline: base,
        warnings,
        extra: mean_extras(&timing),
        invalid,
        started_at,
        ended_at: Utc::now(),
        convergence,
    })
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

    /// The recorded case: under load lat_ctx's one-process overhead
    /// (11.5 µs) exceeded its 16-process ring (4.8 µs) and a 0 ns context
    /// switch was stored as a figure. It is now marked invalid, with both
    /// figures in the reason.
    #[test]
    fn an_overhead_larger_than_the_ring_is_invalid_not_zero() {
        let mut ring = around(4_800.0);
        let raw = Summary::of(&ring).unwrap();
        let overhead = Summary::of(&around(11_500.0)).unwrap();
        let (warnings, invalid) =
            subtract_baseline(&mut ring, &mut [], &raw, &overhead, Statistic::Median);
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
        let (_, invalid) = subtract_baseline(&mut ring, &mut [], &raw, &raw, Statistic::Median);
        assert!(invalid.is_some());
    }

    /// A clear positive difference stays a figure, with no warning.
    #[test]
    fn a_small_overhead_is_subtracted_and_valid() {
        let mut ring = around(4_800.0);
        let mut per_process = vec![around(4_800.0)];
        let raw = Summary::of(&ring).unwrap();
        let overhead = Summary::of(&around(1_000.0)).unwrap();
        let (warnings, invalid) = subtract_baseline(
            &mut ring,
            &mut per_process,
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
}
