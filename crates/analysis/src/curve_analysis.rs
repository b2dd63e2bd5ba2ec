//! From a stored load curve (`touchstone_results::curve::Curve`) to what a
//! report says about it: for each CPU count, the peak, the knee, the
//! crossover and the USL fitted over load; across CPU counts, scalability
//! S(k) at each load and at the peak, and the USL fitted over CPUs. One pure
//! function, [`analyse`], mapping the results model onto the inputs of
//! `curve.rs` and `usl.rs`.
//!
//! Every derived figure is either computed from the data or absent with its
//! reason (a knee "not detected" and why, a USL fit refused and why): the
//! adapter never fills a gap with a number.

use serde::Serialize;
use touchstone_results::curve::{Curve, Point};

use crate::curve::{
    scalability, summarise, CurveError, CurvePoint, CurveSummary, ScalePoint, Scaling,
    KNEEDLE_DEFAULT_SENSITIVITY,
};
use crate::usl::{fit_usl, UslError, UslFit, UslOptions};

/// How the curve is analysed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnalysisOptions {
    /// Kneedle's sensitivity S.
    pub sensitivity: f64,
    /// The USL fits' bootstrap (resamples 0: no intervals, much faster).
    pub usl: UslOptions,
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions {
            sensitivity: KNEEDLE_DEFAULT_SENSITIVITY,
            usl: UslOptions::default(),
        }
    }
}

/// A point of the curve that the analysis could not use, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Excluded {
    /// Index into `curve.points`.
    pub index: usize,
    pub load: u32,
    pub reason: String,
}

/// The load curve at one CPU count.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuCountAnalysis {
    pub cpus: u32,
    /// Indices into `curve.points` of the points analysed, by increasing load.
    pub points: Vec<usize>,
    /// Points of this CPU count left out (no finite throughput or interval).
    pub excluded: Vec<Excluded>,
    /// Peak, knee and crossover; every index inside (peak, plateau, knee,
    /// crossover) is an index into `curve.points`.
    pub summary: Result<CurveSummary, CurveError>,
    /// The USL fitted to (load, mean throughput), one pair per point.
    pub usl: Result<UslFit, UslError>,
    /// Indices into `curve.points` of the analysed points that are
    /// touchstone-bound (one of its own threads was the limit: the
    /// point's `self_check`), by increasing load.
    pub bound: Vec<usize>,
}

impl CpuCountAnalysis {
    /// The touchstone-bound points among `indices` (into `curve.points`).
    fn bound_among(&self, indices: &[usize]) -> Vec<usize> {
        self.bound
            .iter()
            .copied()
            .filter(|i| indices.contains(i))
            .collect()
    }

    /// The touchstone-bound points the peak rests on: its highest point
    /// and the plateau of points it cannot be told from.
    pub fn peak_rests_on_bound(&self) -> Vec<usize> {
        match &self.summary {
            Ok(s) => {
                let mut on = s.peak.plateau.clone();
                on.push(s.peak.index);
                self.bound_among(&on)
            }
            Err(_) => Vec::new(),
        }
    }

    /// Whether the knee found lies on a touchstone-bound point, or on
    /// the rise to one (a knee is where a curve bends: a bound point
    /// after it bends it too).
    pub fn knee_rests_on_bound(&self, curve: &Curve) -> bool {
        match self.summary.as_ref().map(|s| &s.knee) {
            Ok(Ok(k)) => {
                let knee_load = curve.points[k.index].load;
                let next_bound = self
                    .points
                    .iter()
                    .filter(|&&i| curve.points[i].load > knee_load)
                    .take(1)
                    .any(|i| self.bound.contains(i));
                self.bound.contains(&k.index) || next_bound
            }
            _ => false,
        }
    }
}

/// S(k) at one load, over the CPU counts measured at that load.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadScaling {
    pub load: u32,
    pub scaling: Result<Vec<Scaling>, CurveError>,
    /// The CPU counts whose S(k) rests on a touchstone-bound point (its
    /// own, or the 1-CPU baseline's).
    pub bound_cpus: Vec<u32>,
}

/// Scalability across CPU counts (seed 003: X(k) / X(1)).
#[derive(Debug, Clone, PartialEq)]
pub struct ScalingAnalysis {
    /// The CPU counts measured, ascending.
    pub cpus: Vec<u32>,
    /// S(k) at each load measured at 1 CPU and at least one other count,
    /// ascending by load. Empty when nothing was measured at 1 CPU.
    pub at_load: Vec<LoadScaling>,
    /// Each CPU count's peak throughput against the 1-CPU peak (the peaks
    /// may lie at different loads). Absent with a reason when no 1-CPU
    /// peak exists.
    pub at_peak: Result<Vec<Scaling>, CurveError>,
    /// The USL fitted to (CPUs, peak throughput), one pair per CPU count.
    pub usl: Result<UslFit, UslError>,
    /// The CPU counts whose peak rests on touchstone-bound points: S(k)
    /// at the peak for those (and for every k, when it is the 1-CPU
    /// peak) and the USL over CPUs rest on them.
    pub bound_peaks: Vec<u32>,
}

impl ScalingAnalysis {
    /// Whether S(k) at (`load`, `cpus`) rests on a touchstone-bound point.
    pub fn bound_at(&self, load: u32, cpus: u32) -> bool {
        self.at_load
            .iter()
            .any(|l| l.load == load && l.bound_cpus.contains(&cpus))
    }

    /// Whether S(k) of the peaks at `cpus` rests on a touchstone-bound peak.
    pub fn peak_bound(&self, cpus: u32) -> bool {
        self.bound_peaks.contains(&cpus) || self.bound_peaks.contains(&1)
    }

    /// S(k) of the point at (`load`, `cpus`), when that load has one.
    pub fn at(&self, load: u32, cpus: u32) -> Option<&Scaling> {
        let at_load = self.at_load.iter().find(|l| l.load == load)?;
        at_load
            .scaling
            .as_ref()
            .ok()?
            .iter()
            .find(|s| s.cpus == cpus)
    }
}

/// Everything a report says about one curve.
#[derive(Debug, Clone, PartialEq)]
pub struct CurveAnalysis {
    pub workload: String,
    pub operation: String,
    /// One per CPU count measured, ascending.
    pub by_cpus: Vec<CpuCountAnalysis>,
    /// Across CPU counts; `None` when only one CPU count was measured.
    pub scaling: Option<ScalingAnalysis>,
}

impl CurveAnalysis {
    /// The analysis of CPU count `cpus`.
    pub fn cpus(&self, cpus: u32) -> Option<&CpuCountAnalysis> {
        self.by_cpus.iter().find(|c| c.cpus == cpus)
    }
}

/// The analysis input of a point: its mean throughput and the interval
/// mean ± half-width; `Err` with the reason when those are not finite.
pub fn curve_point(p: &Point) -> Result<CurvePoint, String> {
    if !p.throughput.is_finite() {
        return Err("its throughput is not a finite number".into());
    }
    if !p.throughput_half_width.is_finite() || p.throughput_half_width < 0.0 {
        return Err(format!(
            "its throughput has no finite interval ({} trial(s) kept)",
            p.kept_trials().count()
        ));
    }
    Ok(CurvePoint {
        load: f64::from(p.load),
        throughput: p.throughput,
        ci_low: p.throughput - p.throughput_half_width,
        ci_high: p.throughput + p.throughput_half_width,
    })
}

/// The CPU counts of a curve, ascending, each once.
pub fn cpu_counts(curve: &Curve) -> Vec<u32> {
    let mut cpus: Vec<u32> = curve.points.iter().map(|p| p.cpus).collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// A curve with its analysis, as a report holds it: analysed once per
/// command, read by every table, chart and comparison of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysed<'a> {
    pub curve: &'a Curve,
    pub analysis: CurveAnalysis,
}

impl<'a> Analysed<'a> {
    /// `curve` analysed with the default options (`analyse`).
    pub fn new(curve: &'a Curve) -> Analysed<'a> {
        Analysed {
            curve,
            analysis: analyse(curve),
        }
    }

    /// `curve`'s peaks, knees and crossovers only, without the USL's
    /// bootstrap (what comparing two curves reads: `compare_curves`).
    pub fn peaks(curve: &'a Curve) -> Analysed<'a> {
        let options = AnalysisOptions {
            usl: UslOptions {
                resamples: 0,
                ..UslOptions::default()
            },
            ..AnalysisOptions::default()
        };
        Analysed {
            curve,
            analysis: analyse_with(curve, &options),
        }
    }
}

/// Analyse `curve` with the default options (Kneedle S = 1, 1000 bootstrap
/// resamples at 95 % with the fixed seed).
pub fn analyse(curve: &Curve) -> CurveAnalysis {
    analyse_with(curve, &AnalysisOptions::default())
}

/// Analyse `curve`: per CPU count, the points by load → peak, knee,
/// crossover, USL over load; across CPU counts → S(k) at each load and at
/// the peaks, USL over CPUs.
pub fn analyse_with(curve: &Curve, options: &AnalysisOptions) -> CurveAnalysis {
    let counts = cpu_counts(curve);
    let by_cpus: Vec<CpuCountAnalysis> = counts
        .iter()
        .map(|&k| one_cpu_count(curve, k, options))
        .collect();
    let scaling = (counts.len() > 1).then(|| across_cpus(curve, &counts, &by_cpus, options));
    CurveAnalysis {
        workload: curve.workload.clone(),
        operation: curve.operation.clone(),
        by_cpus,
        scaling,
    }
}

fn one_cpu_count(curve: &Curve, cpus: u32, options: &AnalysisOptions) -> CpuCountAnalysis {
    let mut points: Vec<(usize, CurvePoint)> = Vec::new();
    let mut excluded = Vec::new();
    for (index, p) in curve.points.iter().enumerate() {
        if p.cpus != cpus {
            continue;
        }
        match curve_point(p) {
            Ok(cp) => points.push((index, cp)),
            Err(reason) => excluded.push(Excluded {
                index,
                load: p.load,
                reason,
            }),
        }
    }
    points.sort_by(|a, b| a.1.load.total_cmp(&b.1.load));
    let inputs: Vec<CurvePoint> = points.iter().map(|p| p.1).collect();
    let to_curve = |i: usize| points[i].0;
    let summary = if inputs.is_empty() {
        Err(CurveError::Empty)
    } else {
        summarise(&inputs, options.sensitivity).map(|mut s| {
            s.peak.index = to_curve(s.peak.index);
            for i in &mut s.peak.plateau {
                *i = to_curve(*i);
            }
            if let Ok(k) = &mut s.knee {
                k.index = to_curve(k.index);
            }
            if let Some(c) = &mut s.crossover {
                c.index = to_curve(c.index);
            }
            s
        })
    };
    let pairs: Vec<(f64, f64)> = inputs.iter().map(|p| (p.load, p.throughput)).collect();
    CpuCountAnalysis {
        cpus,
        points: points.iter().map(|p| p.0).collect(),
        excluded,
        summary,
        usl: fit_usl(&pairs, &options.usl),
        bound: points
            .iter()
            .map(|p| p.0)
            .filter(|&i| curve.points[i].is_touchstone_bound())
            .collect(),
    }
}

fn across_cpus(
    curve: &Curve,
    counts: &[u32],
    by_cpus: &[CpuCountAnalysis],
    options: &AnalysisOptions,
) -> ScalingAnalysis {
    // At each load: the analysed points of every CPU count at that load.
    let mut loads: Vec<u32> = by_cpus
        .iter()
        .flat_map(|c| c.points.iter().map(|&i| curve.points[i].load))
        .collect();
    loads.sort_unstable();
    loads.dedup();
    let has_baseline = |load: u32| {
        by_cpus
            .iter()
            .filter(|c| c.cpus == 1)
            .flat_map(|c| &c.points)
            .any(|&i| curve.points[i].load == load)
    };
    let at_load = loads
        .into_iter()
        .filter_map(|load| {
            let scale: Vec<ScalePoint> = by_cpus
                .iter()
                .flat_map(|c| c.points.iter().map(move |&i| (c.cpus, i)))
                .filter(|&(_, i)| curve.points[i].load == load)
                .filter_map(|(cpus, i)| {
                    let p = curve_point(&curve.points[i]).ok()?;
                    Some(ScalePoint {
                        cpus,
                        throughput: p.throughput,
                        ci_low: p.ci_low,
                        ci_high: p.ci_high,
                    })
                })
                .collect();
            let bound_at = |cpus: u32| {
                by_cpus
                    .iter()
                    .filter(|c| c.cpus == cpus)
                    .flat_map(|c| &c.bound)
                    .any(|&i| curve.points[i].load == load)
            };
            let bound_cpus = if bound_at(1) {
                scale.iter().map(|p| p.cpus).collect()
            } else {
                scale
                    .iter()
                    .map(|p| p.cpus)
                    .filter(|&k| bound_at(k))
                    .collect()
            };
            (scale.len() > 1 && has_baseline(load)).then(|| LoadScaling {
                load,
                scaling: scalability(&scale),
                bound_cpus,
            })
        })
        .collect();
    let peaks: Vec<ScalePoint> = by_cpus
        .iter()
        .filter_map(|c| {
            let peak = &c.summary.as_ref().ok()?.peak;
            Some(ScalePoint {
                cpus: c.cpus,
                throughput: peak.throughput,
                ci_low: peak.ci_low,
                ci_high: peak.ci_high,
            })
        })
        .collect();
    let pairs: Vec<(f64, f64)> = peaks
        .iter()
        .map(|p| (f64::from(p.cpus), p.throughput))
        .collect();
    ScalingAnalysis {
        cpus: counts.to_vec(),
        at_load,
        at_peak: if peaks.is_empty() {
            Err(CurveError::Empty)
        } else {
            scalability(&peaks)
        },
        usl: fit_usl(&pairs, &options.usl),
        bound_peaks: by_cpus
            .iter()
            .filter(|c| !c.peak_rests_on_bound().is_empty())
            .map(|c| c.cpus)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::NoKnee;
    use crate::testdata::{curve, point};
    use crate::usl::UslParams;

    /// A quick bootstrap: enough resamples to exercise the intervals.
    fn quick() -> AnalysisOptions {
        AnalysisOptions {
            usl: UslOptions {
                resamples: 200,
                ..UslOptions::default()
            },
            ..AnalysisOptions::default()
        }
    }

    const LADDER: [u32; 8] = [1, 2, 4, 8, 16, 32, 64, 128];

    /// Points of a USL curve with known coefficients at `cpus`, with a
    /// deterministic ±0.5 % wiggle and a ±1 % interval.
    fn usl_points(truth: UslParams, cpus: u32, loads: &[u32]) -> Vec<Point> {
        loads
            .iter()
            .enumerate()
            .map(|(i, &l)| {
                let x = truth.throughput(f64::from(l)) * (1.0 + 0.005 * [1.0, -1.0][i % 2]);
                point(l, cpus, x, 0.01 * x)
            })
            .collect()
    }

    const TRUTH: UslParams = UslParams {
        lambda: 10_000.0,
        sigma: 0.02,
        kappa: 0.0005,
    };

    #[test]
    fn one_cpu_count_gives_peak_knee_crossover_and_usl() {
        let c = curve(usl_points(TRUTH, 2, &LADDER));
        let a = analyse_with(&c, &quick());
        assert_eq!(a.workload, "synthetic_rr");
        assert!(a.scaling.is_none(), "one CPU count: no scalability");
        assert_eq!(a.by_cpus.len(), 1);
        let k = &a.by_cpus[0];
        assert_eq!(k.cpus, 2);
        assert_eq!(k.points, (0..8).collect::<Vec<_>>());
        let s = k.summary.as_ref().unwrap();
        // N* = √((1 − σ)/κ) ≈ 44.3: the ladder's highest point is 32 or 64.
        let peak_load = c.points[s.peak.index].load;
        assert!(peak_load == 32 || peak_load == 64, "peak at {peak_load}");
        assert_eq!(s.peak.throughput, c.points[s.peak.index].throughput);
        // Past N* the model falls to about 0.57 of its peak at 128.
        let cross = s.crossover.as_ref().expect("falls past the peak");
        assert_eq!(c.points[cross.index].load, 128);
        let knee = s.knee.as_ref().expect("the rise bends over");
        // On the rise 1..32 the model's normalised slope is 1 near N = 15
        // (λ(1 − σ − κN²)/D² = (X(32) − X(1))/31): the ladder's 16.
        assert_eq!(knee.load, 16.0, "{knee:?}");
        assert_eq!(c.points[knee.index].load as f64, knee.load);
        let fit = k.usl.as_ref().unwrap();
        assert!((fit.params.sigma - 0.02).abs() < 0.01, "{fit:?}");
        assert!((fit.params.kappa - 0.0005).abs() < 0.0002, "{fit:?}");
        let n_star = fit.peak_load.unwrap();
        assert!((n_star - 44.3).abs() < 8.0, "N* {n_star}");
        let iv = fit.intervals.as_ref().expect("8 loads leave residuals");
        assert!(iv.sigma.contains(fit.params.sigma));
        assert!(iv.peak_load.contains(n_star));
    }

    #[test]
    fn indices_point_into_the_curve_whatever_its_order() {
        // Sweep order: CPUs 1 then 2, each by load; then shuffled.
        let mut points = usl_points(TRUTH, 1, &[1, 2, 4, 8]);
        points.extend(usl_points(TRUTH, 2, &[1, 2, 4, 8]));
        points.reverse();
        let c = curve(points);
        let a = analyse_with(&c, &quick());
        for k in &a.by_cpus {
            let loads: Vec<u32> = k.points.iter().map(|&i| c.points[i].load).collect();
            assert_eq!(loads, [1, 2, 4, 8]);
            assert!(k.points.iter().all(|&i| c.points[i].cpus == k.cpus));
            let s = k.summary.as_ref().unwrap();
            assert_eq!(c.points[s.peak.index].cpus, k.cpus);
            assert_eq!(c.points[s.peak.index].load, 8);
            assert!(s.peak.plateau.iter().all(|&i| c.points[i].cpus == k.cpus));
        }
    }

    #[test]
    fn a_straight_line_has_no_knee_and_says_why() {
        let points: Vec<Point> = LADDER
            .iter()
            .map(|&l| point(l, 4, 1000.0 * f64::from(l), 10.0))
            .collect();
        let a = analyse_with(&curve(points), &quick());
        let s = a.by_cpus[0].summary.as_ref().unwrap();
        assert_eq!(s.knee, Err(NoKnee::NotConcave));
        assert_eq!(s.crossover, None);
        let fit = a.by_cpus[0].usl.as_ref().unwrap();
        assert_eq!(fit.peak_load, None, "linear: no predicted peak");
    }

    #[test]
    fn too_few_loads_refuse_the_fit_and_the_knee() {
        let c = curve(vec![point(1, 1, 100.0, 2.0), point(2, 1, 190.0, 3.0)]);
        let a = analyse_with(&c, &quick());
        let k = &a.by_cpus[0];
        assert_eq!(k.usl, Err(UslError::TooFewLoads { distinct: 2 }));
        let s = k.summary.as_ref().unwrap();
        assert_eq!(s.knee, Err(NoKnee::TooFewPoints { rising: 2 }));
        assert_eq!(c.points[s.peak.index].load, 2);
        // Three loads: a fit, but no intervals (no residual left).
        let c = curve(vec![
            point(1, 1, 100.0, 2.0),
            point(2, 1, 190.0, 3.0),
            point(4, 1, 330.0, 3.0),
        ]);
        let fit = analyse_with(&c, &quick()).by_cpus[0].usl.clone().unwrap();
        assert_eq!(fit.intervals, None);
    }

    #[test]
    fn points_without_a_finite_interval_are_left_out_with_the_reason() {
        let mut points = usl_points(TRUTH, 1, &[1, 2, 4, 8]);
        points[2].throughput_half_width = f64::INFINITY;
        points[3].throughput = f64::NAN;
        let c = curve(points);
        let a = analyse_with(&c, &quick());
        let k = &a.by_cpus[0];
        assert_eq!(k.points, [0, 1]);
        assert_eq!(k.excluded.len(), 2);
        assert_eq!(k.excluded[0].load, 4);
        assert!(k.excluded[0].reason.contains("no finite interval"), "{k:?}");
        assert!(k.excluded[1].reason.contains("not a finite number"));
        assert_eq!(k.usl, Err(UslError::TooFewLoads { distinct: 2 }));
        // Nothing usable at all: the summary says the curve is empty.
        let c = curve(vec![point(1, 1, f64::NAN, 1.0)]);
        assert_eq!(analyse(&c).by_cpus[0].summary, Err(CurveError::Empty));
    }

    #[test]
    fn scalability_across_cpu_counts_at_each_load_and_at_the_peak() {
        // X(k, L) = 1000 · min(L, 4k) · 0.9^(k−1): each CPU count
        // saturates at 4k clients, and each doubling of CPUs loses 10 %.
        let mut points = Vec::new();
        for k in [1u32, 2, 4] {
            for l in [1u32, 2, 4, 8, 16] {
                let v = 1000.0 * f64::from(l.min(4 * k)) * 0.9f64.powi(k as i32 - 1);
                points.push(point(l, k, v, 0.01 * v));
            }
        }
        let c = curve(points);
        let a = analyse_with(&c, &quick());
        let s = a.scaling.as_ref().expect("three CPU counts");
        assert_eq!(s.cpus, [1, 2, 4]);
        assert_eq!(
            s.at_load.iter().map(|l| l.load).collect::<Vec<_>>(),
            [1, 2, 4, 8, 16]
        );
        let at = |load: u32, cpus: u32| {
            let want = c
                .points
                .iter()
                .find(|p| p.load == load && p.cpus == cpus)
                .unwrap()
                .throughput
                / c.points
                    .iter()
                    .find(|p| p.load == load && p.cpus == 1)
                    .unwrap()
                    .throughput;
            let got = s.at(load, cpus).unwrap();
            assert!((got.speedup - want).abs() < 1e-12, "S({cpus}) at {load}");
            assert!(got.speedup_low < got.speedup && got.speedup < got.speedup_high);
            got.speedup
        };
        assert_eq!(at(1, 1), 1.0);
        at(8, 2);
        at(16, 4);
        assert!(s.at(3, 2).is_none());
        // At the peaks: each count's highest point against the 1-CPU one.
        let peaks = s.at_peak.as_ref().unwrap();
        assert_eq!(peaks.iter().map(|p| p.cpus).collect::<Vec<_>>(), [1, 2, 4]);
        for p in peaks {
            let mine = a
                .cpus(p.cpus)
                .unwrap()
                .summary
                .as_ref()
                .unwrap()
                .peak
                .throughput;
            let one = a.cpus(1).unwrap().summary.as_ref().unwrap().peak.throughput;
            assert!((p.speedup - mine / one).abs() < 1e-12);
            assert!((p.efficiency - p.speedup / f64::from(p.cpus)).abs() < 1e-12);
        }
        // Three CPU counts: the USL over CPUs fits, without intervals.
        let fit = s.usl.as_ref().unwrap();
        assert_eq!(fit.distinct_loads, 3);
        assert_eq!(fit.intervals, None);
    }

    #[test]
    fn without_a_one_cpu_point_there_is_no_scalability() {
        let mut points = usl_points(TRUTH, 2, &[1, 2, 4]);
        points.extend(usl_points(TRUTH, 4, &[1, 2, 4]));
        let a = analyse_with(&curve(points), &quick());
        let s = a.scaling.unwrap();
        assert!(s.at_load.is_empty());
        assert_eq!(s.at_peak, Err(CurveError::NoBaseline));
        assert_eq!(s.usl, Err(UslError::TooFewLoads { distinct: 2 }));
    }
}
