//! Comparing two runs' load curves (`touchstone compare`): the curves of the
//! same workload with the same parameters, point by point at the same load
//! and CPU count — the ratio of throughput with a conservative confidence
//! interval and a verdict only where the intervals say so, and the ratio of
//! p99 latency — then their peaks and knees side by side. The verdict rule
//! is the one `compare.rs` applies to measurements (docs/reports.md).

use std::collections::BTreeMap;

use serde::Serialize;
use touchstone_results::convergence::mean_interval;
use touchstone_results::curve::{Curve, Point};

use crate::compare::{verdict, Ratio, Verdict, PER_MEDIAN_LEVEL};
use crate::curve_analysis::{Analysed, CurveAnalysis};

/// A throughput with the confidence interval used for comparing it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Throughput {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    /// Confidence of [low, high].
    pub level: f64,
}

/// The interval of a point's mean throughput for comparisons: the Student-t
/// interval at 97.5 % recomputed from its kept trials, so that two of them
/// give a ratio interval of at least 95 % (as `compare.rs` does with
/// medians); the stored interval at its own confidence when fewer than two
/// trials are stored. `None` when no finite interval exists.
pub fn comparison_interval(p: &Point) -> Option<Throughput> {
    let kept: Vec<f64> = p.kept_trials().map(|t| t.throughput).collect();
    let (half, level) = if kept.len() >= 2 {
        (mean_interval(&kept, PER_MEDIAN_LEVEL).1, PER_MEDIAN_LEVEL)
    } else {
        (p.throughput_half_width, p.convergence.rule.confidence)
    };
    (p.throughput.is_finite() && half.is_finite()).then_some(Throughput {
        mean: p.throughput,
        low: p.throughput - half,
        high: p.throughput + half,
        level,
    })
}

/// `other / base` of two throughputs with the interval
/// [other_low / base_high, other_high / base_low]; `None` when the base's
/// interval does not stay above 0 (no ratio to it can be bounded).
pub fn throughput_ratio(base: &Throughput, other: &Throughput) -> Option<Ratio> {
    if !(base.low > 0.0 && base.mean > 0.0) {
        return None;
    }
    let ratio = other.mean / base.mean;
    Some(Ratio {
        ratio,
        low: (other.low / base.high).min(ratio),
        high: (other.high / base.low).max(ratio),
        level: (1.0 - (1.0 - base.level) - (1.0 - other.level)).max(0.0),
    })
}

/// What one side shows at a point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PointSide {
    pub throughput: Throughput,
    pub p99_ns: u64,
    pub converged: bool,
}

/// One (load, CPUs) point of the two curves.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointComparison {
    pub load: u32,
    pub cpus: u32,
    pub base: Option<PointSide>,
    pub other: Option<PointSide>,
    /// Throughput other / base with its interval.
    pub ratio: Option<Ratio>,
    /// Faster / slower only where the ratio's interval excludes 1; `Same`
    /// ("~") otherwise; `Missing` / `BaseMissing` when a side lacks the point.
    pub verdict: Verdict,
    /// p99 latency other / base (no interval: a percentile of a merged
    /// histogram has none stored); lower is better.
    pub p99_ratio: Option<f64>,
}

/// One side's peak and knee at one CPU count, as text-free figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeakSide {
    /// The load of the peak (the plateau's lowest load) and the highest
    /// point's throughput with its comparison interval; `Err` with the
    /// reason when no peak exists.
    pub peak: Result<(f64, Throughput), String>,
    /// The knee's load, or why none was detected.
    pub knee: Result<f64, String>,
}

/// Peaks and knees of the two curves at one CPU count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeakComparison {
    pub cpus: u32,
    pub base: Option<PeakSide>,
    pub other: Option<PeakSide>,
    /// Peak throughput other / base with its interval.
    pub ratio: Option<Ratio>,
    pub verdict: Verdict,
}

/// Two runs' curves of one workload with one set of parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurveComparison {
    pub workload: String,
    pub params: BTreeMap<String, String>,
    pub operation: String,
    /// By CPUs, then load.
    pub points: Vec<PointComparison>,
    /// By CPUs.
    pub peaks: Vec<PeakComparison>,
}

impl CurveComparison {
    /// "tcp_rr size:4": the workload and its parameters.
    pub fn title(&self) -> String {
        curve_title(&self.workload, &self.params)
    }
}

/// A curve's workload with its parameters, e.g. "tcp_rr size:4 server:per-cpu".
pub fn curve_title(workload: &str, params: &BTreeMap<String, String>) -> String {
    std::iter::once(workload.to_string())
        .chain(params.iter().map(|(k, v)| format!("{k}:{v}")))
        .collect::<Vec<_>>()
        .join(" ")
}

fn side(p: &Point) -> Option<PointSide> {
    Some(PointSide {
        throughput: comparison_interval(p)?,
        p99_ns: p.latency.p99_ns,
        converged: p.convergence.converged,
    })
}

fn peak_side(curve: &Curve, a: &CurveAnalysis, cpus: u32) -> Option<PeakSide> {
    let k = a.cpus(cpus)?;
    let peak = match &k.summary {
        Err(e) => Err(e.to_string()),
        Ok(s) => comparison_interval(&curve.points[s.peak.index])
            .map(|t| (s.peak.load, t))
            .ok_or_else(|| "the peak point has no finite interval".to_string()),
    };
    let knee = match &k.summary {
        Err(e) => Err(e.to_string()),
        Ok(s) => s.knee.as_ref().map(|k| k.load).map_err(|e| e.reason()),
    };
    Some(PeakSide { peak, knee })
}

fn judged(base: Option<&Throughput>, other: Option<&Throughput>) -> (Option<Ratio>, Verdict) {
    match (base, other) {
        (_, None) => (None, Verdict::Missing),
        (None, Some(_)) => (None, Verdict::BaseMissing),
        (Some(b), Some(o)) => match throughput_ratio(b, o) {
            Some(r) => (Some(r), verdict(&r, Some(true))),
            None => (None, Verdict::Unranked),
        },
    }
}

/// The two curves compared, each with its analysis (peaks and knees are
/// read; `Analysed::peaks` is enough); either may be absent (the other run
/// did not measure the workload), and then every point says so.
pub fn compare_curve(base: Option<&Analysed>, other: Option<&Analysed>) -> Option<CurveComparison> {
    let analyses = [base, other].map(|a| a.map(|a| (a.curve, &a.analysis)));
    let [base, other] = analyses.map(|a| a.map(|a| a.0));
    let any = base.or(other)?;
    fn find(c: Option<&Curve>, load: u32, cpus: u32) -> Option<&Point> {
        c?.points
            .iter()
            .rev() // a point measured twice: the later one
            .find(|p| p.load == load && p.cpus == cpus)
    }
    let mut keys: Vec<(u32, u32)> = [base, other]
        .iter()
        .flatten()
        .flat_map(|c| c.points.iter().map(|p| (p.cpus, p.load)))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let points = keys
        .iter()
        .map(|&(cpus, load)| {
            let b = find(base, load, cpus).and_then(side);
            let o = find(other, load, cpus).and_then(side);
            let (ratio, verdict) = judged(
                b.as_ref().map(|s| &s.throughput),
                o.as_ref().map(|s| &s.throughput),
            );
            let p99_ratio = match (b, o) {
                (Some(b), Some(o)) if b.p99_ns > 0 => Some(o.p99_ns as f64 / b.p99_ns as f64),
                _ => None,
            };
            PointComparison {
                load,
                cpus,
                base: b,
                other: o,
                ratio,
                verdict,
                p99_ratio,
            }
        })
        .collect();
    let mut cpu_counts: Vec<u32> = keys.iter().map(|k| k.0).collect();
    cpu_counts.dedup();
    let peaks = cpu_counts
        .into_iter()
        .map(|cpus| {
            let [b, o] = analyses
                .each_ref()
                .map(|a| a.as_ref().and_then(|(c, a)| peak_side(c, a, cpus)));
            let throughput =
                |s: &Option<PeakSide>| s.as_ref().and_then(|s| s.peak.as_ref().ok().map(|p| p.1));
            let (ratio, verdict) = judged(throughput(&b).as_ref(), throughput(&o).as_ref());
            PeakComparison {
                cpus,
                base: b,
                other: o,
                ratio,
                verdict,
            }
        })
        .collect();
    Some(CurveComparison {
        workload: any.workload.clone(),
        params: any.params.clone(),
        operation: any.operation.clone(),
        points,
        peaks,
    })
}

/// Every curve of two runs (`base` and `other`: each run's curves with
/// their analyses), matched by workload and parameters: the base's curves
/// in their order, then curves only `other` has.
pub fn compare_runs(base: &[Analysed], other: &[Analysed]) -> Vec<CurveComparison> {
    let key = |c: &Curve| (c.workload.clone(), c.params.clone());
    let mut keys: Vec<(String, BTreeMap<String, String>)> = Vec::new();
    for a in base.iter().chain(other) {
        if !keys.contains(&key(a.curve)) {
            keys.push(key(a.curve));
        }
    }
    // A workload measured twice in one run: the later curve.
    fn find<'r, 'c>(
        run: &'r [Analysed<'c>],
        k: &(String, BTreeMap<String, String>),
    ) -> Option<&'r Analysed<'c>> {
        run.iter()
            .rev()
            .find(|a| a.curve.workload == k.0 && a.curve.params == k.1)
    }
    keys.iter()
        .filter_map(|k| compare_curve(find(base, k), find(other, k)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{curve, point, run};
    use touchstone_results::curve::{latency_histogram, Latency, Trial};
    use touchstone_results::Run;

    /// A point whose three kept trials are `mean · (1 − s, 1, 1 + s)` and
    /// whose p99 is `p99_ns`.
    fn pt(load: u32, cpus: u32, mean: f64, spread: f64, p99_ns: u64) -> Point {
        let mut p = point(load, cpus, mean, 0.0);
        let trial = p.trials[0].clone();
        p.trials = [1.0 - spread, 1.0, 1.0 + spread]
            .iter()
            .map(|f| Trial {
                throughput: mean * f,
                ..trial.clone()
            })
            .collect();
        let (_, half) = mean_interval(&[mean * (1.0 - spread), mean, mean * (1.0 + spread)], 0.95);
        p.throughput_half_width = half;
        let mut h = latency_histogram();
        h.record(p99_ns).unwrap();
        p.latency = Latency::of(&h);
        p
    }

    fn run_with(id: &str, curves: Vec<Curve>) -> Run {
        let mut r = run(id, id, vec![]);
        r.curves = curves;
        r
    }

    /// Two curves compared as a report compares them.
    fn compared(base: &Curve, other: &Curve) -> Option<CurveComparison> {
        compare_curve(Some(&Analysed::peaks(base)), Some(&Analysed::peaks(other)))
    }

    /// Two runs' curves compared as a report compares them.
    fn compared_runs(base: &Run, other: &Run) -> Vec<CurveComparison> {
        let [b, o] =
            [base, other].map(|r| r.curves.iter().map(Analysed::peaks).collect::<Vec<_>>());
        compare_runs(&b, &o)
    }

    #[test]
    fn the_interval_is_recomputed_at_97_5_percent_from_the_trials() {
        let p = pt(1, 1, 1000.0, 0.01, 10);
        let t = comparison_interval(&p).unwrap();
        assert_eq!(t.level, 0.975);
        // Three trials 990, 1000, 1010: s = 10, t(0.9875, 2) = 6.205.
        let half = 6.205 * 10.0 / 3f64.sqrt();
        assert!((t.high - 1000.0 - half).abs() < 0.01, "{t:?}");
        assert!(t.high - t.mean > p.throughput_half_width, "wider than 95 %");
        // Without two trials, the stored interval at its confidence.
        let mut one = p.clone();
        one.trials.truncate(1);
        let t = comparison_interval(&one).unwrap();
        assert_eq!(t.level, 0.95);
        assert!((t.high - t.mean - p.throughput_half_width).abs() < 1e-9);
    }

    #[test]
    fn points_are_judged_only_where_the_intervals_say_so() {
        let base = curve(vec![
            pt(1, 1, 1000.0, 0.005, 100_000),
            pt(2, 1, 2000.0, 0.005, 100_000),
            pt(4, 1, 3000.0, 0.05, 100_000),
            pt(8, 1, 3000.0, 0.005, 100_000),
        ]);
        let other = curve(vec![
            pt(1, 1, 1500.0, 0.005, 50_000),   // clearly faster
            pt(2, 1, 1500.0, 0.005, 200_000),  // clearly slower
            pt(4, 1, 3100.0, 0.05, 100_000),   // within the noise
            pt(16, 1, 3000.0, 0.005, 100_000), // base lacks load 16
        ]);
        let c = compared(&base, &other).unwrap();
        let by_load = |l: u32| c.points.iter().find(|p| p.load == l).unwrap();
        let p1 = by_load(1);
        assert_eq!(p1.verdict, Verdict::Faster);
        let r = p1.ratio.unwrap();
        assert!((r.ratio - 1.5).abs() < 1e-12 && r.low > 1.0 && r.low < 1.5);
        assert!(r.level >= 0.95 - 1e-12);
        // Histogram percentiles are exact to 0.1 %.
        assert!((p1.p99_ratio.unwrap() - 0.5).abs() < 0.001);
        assert_eq!(by_load(2).verdict, Verdict::Slower);
        assert!((by_load(2).p99_ratio.unwrap() - 2.0).abs() < 0.004);
        let p4 = by_load(4);
        assert_eq!(p4.verdict, Verdict::Same, "{p4:?}");
        assert!(p4.ratio.unwrap().low < 1.0 && p4.ratio.unwrap().high > 1.0);
        assert_eq!(by_load(8).verdict, Verdict::Missing);
        assert_eq!(by_load(8).ratio, None);
        assert_eq!(by_load(16).verdict, Verdict::BaseMissing);
        assert_eq!(
            c.points.iter().map(|p| p.load).collect::<Vec<_>>(),
            [1, 2, 4, 8, 16]
        );
    }

    #[test]
    fn peaks_and_knees_side_by_side() {
        // Base: steep to 8, then slowly on to 32 (knee 8, peak 3440 at
        // 32); other: the same shape 25 % higher, its knee also at 8.
        let shape = |scale: f64| {
            curve(
                [1u32, 2, 4, 8, 16, 32]
                    .iter()
                    .map(|&l| {
                        let x = 400.0 * f64::from(l.min(8)) + 10.0 * f64::from(l.max(8) - 8);
                        pt(l, 2, scale * x, 0.002, 1000)
                    })
                    .collect(),
            )
        };
        let c = compared(&shape(1.0), &shape(1.25)).unwrap();
        assert_eq!(c.peaks.len(), 1);
        let p = &c.peaks[0];
        assert_eq!(p.cpus, 2);
        let b = p.base.as_ref().unwrap();
        let (load, t) = b.peak.as_ref().unwrap();
        assert_eq!((*load, t.mean), (32.0, 3440.0));
        assert_eq!(b.knee, Ok(8.0));
        assert_eq!(p.other.as_ref().unwrap().knee, Ok(8.0));
        assert_eq!(p.verdict, Verdict::Faster);
        assert!((p.ratio.unwrap().ratio - 1.25).abs() < 1e-12);
        // A straight line has no knee: the reason travels.
        let line = curve(
            [1u32, 2, 4, 8]
                .iter()
                .map(|&l| pt(l, 2, 100.0 * f64::from(l), 0.002, 1000))
                .collect(),
        );
        let c = compared(&line, &shape(1.0)).unwrap();
        assert_eq!(
            c.peaks[0].base.as_ref().unwrap().knee,
            Err("the rise does not bend over".to_string())
        );
    }

    #[test]
    fn runs_are_matched_by_workload_and_parameters() {
        let mut a = curve(vec![pt(1, 1, 100.0, 0.01, 10)]);
        let mut b = a.clone();
        b.params.insert("size".into(), "64".into());
        let mut other_b = b.clone();
        other_b.points = vec![pt(1, 1, 200.0, 0.01, 10)];
        a.params.insert("size".into(), "4".into());
        let base = run_with("base", vec![a.clone(), b]);
        let other = run_with("other", vec![other_b]);
        let cs = compared_runs(&base, &other);
        assert_eq!(
            cs.iter().map(|c| c.title()).collect::<Vec<_>>(),
            ["synthetic_rr size:4", "synthetic_rr size:64"]
        );
        assert_eq!(cs[0].points[0].verdict, Verdict::Missing);
        assert!(cs[0].peaks[0].other.is_none());
        assert_eq!(cs[1].points[0].verdict, Verdict::Faster);
        assert!(compared_runs(&run_with("x", vec![]), &run_with("y", vec![])).is_empty());
    }
}
