//! Reading a load curve (throughput against load, seed 004's "Transaction
//! Rate curve ... will increase with each added user up to a knee, and then
//! decrease"): the peak with its interval, the knee on the rising part
//! (Kneedle), the crossover where more load gives significantly less
//! throughput, and scalability over CPUs as seed 003 defines it. Pure
//! functions over small input types of their own, so that the results model
//! can be mapped onto them without this module depending on its layout.
//!
//! Mapping from the results model: one [`CurvePoint`] per point of a load
//! sweep (load L, mean throughput, the Student-t interval of that mean); one
//! [`ScalePoint`] per point of a `--cpus` sweep at one load (k CPUs, same
//! three figures). Throughput is in any unit (operations/s), the same for all
//! points of one curve; intervals are at one confidence level for the curve.

use serde::Serialize;

/// One point of a load curve: throughput at a load level with the
/// confidence interval of that throughput (`ci_low ≤ throughput ≤ ci_high`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CurvePoint {
    /// The load level: number of clients (or offered rate) at this point.
    pub load: f64,
    /// Mean throughput over the point's trials.
    pub throughput: f64,
    /// Lower bound of the throughput's confidence interval.
    pub ci_low: f64,
    /// Upper bound of the throughput's confidence interval.
    pub ci_high: f64,
}

impl CurvePoint {
    /// Whether this point's interval and `other`'s share at least one value.
    pub fn overlaps(&self, other: &CurvePoint) -> bool {
        self.ci_low <= other.ci_high && other.ci_low <= self.ci_high
    }
}

/// Input a curve function cannot read. Reported before any analysis, so a
/// malformed curve never yields a figure.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CurveError {
    #[error("the curve has no points")]
    Empty,
    #[error("point {index}: {what} is not a finite number")]
    NotFinite { index: usize, what: &'static str },
    #[error("point {index}: the interval [{low}, {high}] does not contain the throughput {value}")]
    BadInterval {
        index: usize,
        value: f64,
        low: f64,
        high: f64,
    },
    #[error("load {load} appears twice: a curve has one point per load")]
    DuplicateLoad { load: f64 },
    #[error("no point at 1 CPU: scalability S(k) = X(k)/X(1) needs the uniprocessor figure")]
    NoBaseline,
    #[error("the 1-CPU throughput interval reaches {low} (≤ 0): no ratio to it can be bounded")]
    BaselineNotPositive { low: f64 },
}

/// The order of `points` by increasing load, after checking that every
/// figure is finite, every interval holds its value and no load repeats.
pub(crate) fn sorted_by_load(points: &[CurvePoint]) -> Result<Vec<usize>, CurveError> {
    if points.is_empty() {
        return Err(CurveError::Empty);
    }
    for (index, p) in points.iter().enumerate() {
        for (what, v) in [
            ("load", p.load),
            ("throughput", p.throughput),
            ("ci_low", p.ci_low),
            ("ci_high", p.ci_high),
        ] {
            if !v.is_finite() {
                return Err(CurveError::NotFinite { index, what });
            }
        }
        if !(p.ci_low <= p.throughput && p.throughput <= p.ci_high) {
            return Err(CurveError::BadInterval {
                index,
                value: p.throughput,
                low: p.ci_low,
                high: p.ci_high,
            });
        }
    }
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| points[a].load.total_cmp(&points[b].load));
    for w in order.windows(2) {
        if points[w[0]].load == points[w[1]].load {
            return Err(CurveError::DuplicateLoad {
                load: points[w[0]].load,
            });
        }
    }
    Ok(order)
}

/// The peak of a load curve.
///
/// Measured throughput near saturation is often flat within noise: several
/// neighbouring loads have intervals that overlap the highest one's, and
/// which of them happened to measure highest is chance. So the peak reports
/// both the highest point and the *plateau*: the run of consecutive loads
/// (in load order, around the highest point) whose intervals overlap the
/// highest point's interval. The load a reader should quote as "the load at
/// the peak" is [`Peak::load`], the lowest load of that plateau: the least
/// load that reaches peak throughput, as far as the measurements can tell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Peak {
    /// Index (into the input slice) of the point with the highest mean throughput.
    pub index: usize,
    /// The highest mean throughput and its interval.
    pub throughput: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// The lowest load whose throughput cannot be told apart from the
    /// highest (the first load of the plateau): the load at the peak.
    pub load: f64,
    /// The load at which the highest mean was measured (≥ `load`).
    pub load_at_max: f64,
    /// Indices (into the input slice) of the plateau's points, by increasing
    /// load; just `[index]` when no neighbour's interval overlaps the peak's.
    pub plateau: Vec<usize>,
}

impl Peak {
    /// Whether the peak is a plateau of several statistically equal points.
    pub fn is_plateau(&self) -> bool {
        self.plateau.len() > 1
    }
}

/// The peak of a load curve: the point of highest mean throughput, and the
/// plateau of consecutive points whose intervals overlap it (see [`Peak`]).
/// Ties in the mean go to the lower load.
pub fn peak(points: &[CurvePoint]) -> Result<Peak, CurveError> {
    let order = sorted_by_load(points)?;
    // Position (in load order) of the highest mean; strict `>` keeps the
    // lowest load among exact ties.
    let mut top = 0;
    for (pos, &i) in order.iter().enumerate() {
        if points[i].throughput > points[order[top]].throughput {
            top = pos;
        }
    }
    let best = &points[order[top]];
    let mut first = top;
    while first > 0 && points[order[first - 1]].overlaps(best) {
        first -= 1;
    }
    let mut last = top;
    while last + 1 < order.len() && points[order[last + 1]].overlaps(best) {
        last += 1;
    }
    Ok(Peak {
        index: order[top],
        throughput: best.throughput,
        ci_low: best.ci_low,
        ci_high: best.ci_high,
        load: points[order[first]].load,
        load_at_max: best.load,
        plateau: order[first..=last].to_vec(),
    })
}

/// The crossover: the lowest load beyond the peak where more load gives
/// significantly less throughput.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Crossover {
    /// Index of the point in the input slice.
    pub index: usize,
    pub load: f64,
    pub throughput: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// The lowest load above the load of the highest mean ([`Peak::load_at_max`])
/// whose whole interval lies below the peak's interval (`ci_high` below the
/// peak's `ci_low`): from there on, adding load costs throughput, and the
/// intervals say so. Two intervals that do not overlap is the same
/// conservative test `compare` uses for a difference. `None` when no point
/// beyond the peak is significantly lower (the curve saturates, or was not
/// swept far enough to show the fall).
pub fn crossover(points: &[CurvePoint]) -> Result<Option<Crossover>, CurveError> {
    let top = peak(points)?;
    let order = sorted_by_load(points)?;
    let found = order
        .into_iter()
        .filter(|&i| points[i].load > top.load_at_max)
        .find(|&i| points[i].ci_high < top.ci_low);
    Ok(found.map(|index| {
        let p = points[index];
        Crossover {
            index,
            load: p.load,
            throughput: p.throughput,
            ci_low: p.ci_low,
            ci_high: p.ci_high,
        }
    }))
}

pub use crate::knee::{knee, Knee, NoKnee, KNEEDLE_DEFAULT_SENSITIVITY};

/// What a report prints after a load curve's table: its peak, knee and
/// crossover, each by the function of the same name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurveSummary {
    pub peak: Peak,
    pub knee: Result<Knee, NoKnee>,
    pub crossover: Option<Crossover>,
}

/// The peak, the knee (Kneedle at `sensitivity`) and the crossover of one
/// load curve.
pub fn summarise(points: &[CurvePoint], sensitivity: f64) -> Result<CurveSummary, CurveError> {
    Ok(CurveSummary {
        peak: peak(points)?,
        knee: knee(points, sensitivity)?,
        crossover: crossover(points)?,
    })
}

/// One point of a CPU sweep: throughput at k CPUs (the whole workload
/// confined to k CPUs) with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScalePoint {
    pub cpus: u32,
    pub throughput: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// Scalability at k CPUs, seed 003's "ratio of the benchmark statistic for an
/// SMP system to the corresponding benchmark statistic for a UP system".
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Scaling {
    pub cpus: u32,
    /// S(k) = X(k) / X(1).
    pub speedup: f64,
    /// Conservative interval of S(k): [low(k) / high(1), high(k) / low(1)].
    pub speedup_low: f64,
    pub speedup_high: f64,
    /// Efficiency E(k) = S(k) / k (1 = perfectly linear), and its interval
    /// (the speedup's divided by k).
    pub efficiency: f64,
    pub efficiency_low: f64,
    pub efficiency_high: f64,
    /// Efficiency above [`SUPERLINEAR_EFFICIENCY`]: more than k CPUs'
    /// worth from k CPUs, which is not the workload scaling but something
    /// else changing with k (`SUPERLINEAR_CAUSES`); reports flag it
    /// instead of printing it as a plain figure.
    pub superlinear: bool,
}

/// An efficiency S(k)/k above this is flagged as superlinear: 10 % more
/// than linear is beyond what noise in two converged points gives.
pub const SUPERLINEAR_EFFICIENCY: f64 = 1.1;

/// What makes k CPUs do more than k times the work of one, said beside a
/// superlinear S(k): it is not the workload scaling.
pub const SUPERLINEAR_CAUSES: &str = "more than linear is not the workload scaling: the working set may fit the caches the added CPUs bring (each has its own L1/L2, and a share of L3), one CPU may run at a lower frequency or its processes contend for it (the 1-CPU baseline is then slow), or placement differs between the counts (SMT siblings, another socket or NUMA node)";

/// Scalability S(k) = X(k)/X(1) and efficiency S(k)/k for every point of a
/// CPU sweep, ordered by CPUs.
///
/// Interval propagation: the ratio of bounds. If X(k) lies in [a, b] and
/// X(1) in [c, d] with c > 0, then X(k)/X(1) lies in [a/d, b/c]. When each
/// input interval covers its value with probability 1 − α, the ratio
/// interval covers with probability at least 1 − 2α whatever the two
/// estimates' dependence (Bonferroni), so it errs on the wide side: two 95 %
/// intervals give at least 90 %. For k = 1 the result is exactly 1 with an
/// interval that still reflects X(1)'s own spread ([c/d, d/c]), since the
/// baseline is itself a measurement.
pub fn scalability(points: &[ScalePoint]) -> Result<Vec<Scaling>, CurveError> {
    let as_curve: Vec<CurvePoint> = points
        .iter()
        .map(|p| CurvePoint {
            load: f64::from(p.cpus),
            throughput: p.throughput,
            ci_low: p.ci_low,
            ci_high: p.ci_high,
        })
        .collect();
    let order = sorted_by_load(&as_curve)?;
    let base = points
        .iter()
        .find(|p| p.cpus == 1)
        .ok_or(CurveError::NoBaseline)?;
    if base.ci_low <= 0.0 {
        return Err(CurveError::BaselineNotPositive { low: base.ci_low });
    }
    Ok(order
        .into_iter()
        .map(|i| {
            let p = points[i];
            let k = f64::from(p.cpus);
            let speedup = p.throughput / base.throughput;
            let speedup_low = p.ci_low / base.ci_high;
            let speedup_high = p.ci_high / base.ci_low;
            Scaling {
                cpus: p.cpus,
                speedup,
                speedup_low,
                speedup_high,
                efficiency: speedup / k,
                efficiency_low: speedup_low / k,
                efficiency_high: speedup_high / k,
                superlinear: speedup / k > SUPERLINEAR_EFFICIENCY,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{on_ladder, pt, LADDER};

    /// Rises linearly to 8 clients, holds, then falls: 100/client up to 8,
    /// a plateau 800 ± noise at 16, then 600 and 400.
    fn rise_then_fall() -> Vec<CurvePoint> {
        on_ladder(
            &[100.0, 200.0, 400.0, 790.0, 810.0, 780.0, 600.0, 400.0],
            &[5.0, 8.0, 10.0, 15.0, 15.0, 30.0, 20.0, 20.0],
        )
    }

    #[test]
    fn peak_of_a_rise_then_fall_curve_is_its_highest_point_and_plateau() {
        let points = rise_then_fall();
        let p = peak(&points).unwrap();
        assert_eq!(p.index, 4);
        assert_eq!(p.throughput, 810.0);
        assert_eq!((p.ci_low, p.ci_high), (795.0, 825.0));
        assert_eq!(p.load_at_max, 16.0);
        // 8 (775..805) and 32 (750..810) overlap 795..825; 4 and 64 do not.
        assert_eq!(p.plateau, vec![3, 4, 5]);
        assert!(p.is_plateau());
        assert_eq!(p.load, 8.0);
    }

    #[test]
    fn a_sharp_peak_is_no_plateau_and_input_order_does_not_matter() {
        let mut points = vec![
            pt(4.0, 400.0, 1.0),
            pt(1.0, 100.0, 1.0),
            pt(8.0, 500.0, 1.0),
            pt(2.0, 200.0, 1.0),
            pt(16.0, 300.0, 1.0),
        ];
        let p = peak(&points).unwrap();
        assert_eq!(p.index, 2);
        assert_eq!(p.load, 8.0);
        assert_eq!(p.plateau, vec![2]);
        assert!(!p.is_plateau());
        points.reverse();
        assert_eq!(peak(&points).unwrap().index, 2);
    }

    #[test]
    fn crossover_is_the_first_load_past_the_peak_significantly_below_it() {
        let points = rise_then_fall();
        // 32 (750..810) overlaps the peak's 795..825; 64 (580..620) is below.
        let c = crossover(&points).unwrap().unwrap();
        assert_eq!(c.index, 6);
        assert_eq!(c.load, 64.0);
        assert_eq!(c.throughput, 600.0);
    }

    #[test]
    fn a_saturating_curve_has_no_crossover() {
        let points: Vec<CurvePoint> = LADDER
            .iter()
            .map(|&l| pt(l, 1000.0 * (1.0 - (-l / 8.0).exp()), 30.0))
            .collect();
        assert_eq!(crossover(&points).unwrap(), None);
        // Nor does a curve whose only lower tail point still overlaps.
        let mut falling = rise_then_fall();
        falling.truncate(6);
        assert_eq!(crossover(&falling).unwrap(), None);
    }

    #[test]
    fn malformed_curves_are_refused() {
        assert_eq!(peak(&[]), Err(CurveError::Empty));
        let dup = [pt(1.0, 1.0, 0.1), pt(1.0, 2.0, 0.1)];
        assert_eq!(peak(&dup), Err(CurveError::DuplicateLoad { load: 1.0 }));
        let bad = [CurvePoint {
            load: 1.0,
            throughput: 5.0,
            ci_low: 6.0,
            ci_high: 7.0,
        }];
        assert!(matches!(peak(&bad), Err(CurveError::BadInterval { .. })));
        let nan = [pt(f64::NAN, 1.0, 0.1)];
        assert!(matches!(
            knee(&nan, 1.0),
            Err(CurveError::NotFinite { what: "load", .. })
        ));
    }

    #[test]
    fn a_summary_gathers_peak_knee_and_crossover() {
        let points = rise_then_fall();
        let s = summarise(&points, KNEEDLE_DEFAULT_SENSITIVITY).unwrap();
        assert_eq!(s.peak, peak(&points).unwrap());
        assert_eq!(s.crossover.unwrap().load, 64.0);
        // Rising part 1, 2, 4, 8, 16 is linear to 8 then flat: knee at 8.
        assert_eq!(s.knee.unwrap().load, 8.0);
        let line: Vec<CurvePoint> = LADDER.iter().map(|&l| pt(l, l, 0.1)).collect();
        let none = summarise(&line, 1.0).unwrap();
        assert_eq!(
            none.knee.unwrap_err().to_string(),
            "not detected: the rise does not bend over"
        );
        assert_eq!(none.crossover, None);
    }

    fn sp(cpus: u32, throughput: f64, half: f64) -> ScalePoint {
        ScalePoint {
            cpus,
            throughput,
            ci_low: throughput - half,
            ci_high: throughput + half,
        }
    }

    #[test]
    fn scalability_of_known_data() {
        let points = [
            sp(4, 360.0, 12.0),
            sp(1, 100.0, 2.0),
            sp(2, 190.0, 5.0),
            sp(8, 560.0, 20.0),
        ];
        let s = scalability(&points).unwrap();
        assert_eq!(
            s.iter().map(|x| x.cpus).collect::<Vec<_>>(),
            vec![1, 2, 4, 8]
        );
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(s[0].speedup, 1.0));
        assert!(close(s[0].speedup_low, 98.0 / 102.0));
        assert!(close(s[0].speedup_high, 102.0 / 98.0));
        assert!(close(s[2].speedup, 3.6));
        assert!(close(s[2].speedup_low, 348.0 / 102.0));
        assert!(close(s[2].speedup_high, 372.0 / 98.0));
        assert!(close(s[2].efficiency, 0.9));
        assert!(close(s[2].efficiency_low, 348.0 / 102.0 / 4.0));
        assert!(close(s[3].speedup, 5.6));
        assert!(close(s[3].efficiency, 0.7));
        for x in &s {
            assert!(x.speedup_low <= x.speedup && x.speedup <= x.speedup_high);
        }
    }

    #[test]
    fn more_than_linear_is_flagged_not_passed_as_a_figure() {
        // Issue 24's fscache memcpy baseline: S(4) = 5.9 on 16 CPUs.
        let s = scalability(&[sp(1, 100.0, 2.0), sp(2, 215.0, 5.0), sp(4, 590.0, 10.0)]).unwrap();
        assert!(!s[0].superlinear);
        assert!(!s[1].superlinear, "efficiency 1.075 is within the bar");
        assert!(s[2].superlinear, "efficiency 1.475");
        // Exactly at the bar is not above it; linear and sublinear never are.
        let at = scalability(&[sp(1, 100.0, 1.0), sp(2, 220.0, 1.0), sp(8, 700.0, 5.0)]).unwrap();
        assert!(!at[1].superlinear && !at[2].superlinear);
        assert!(SUPERLINEAR_CAUSES.contains("caches") && SUPERLINEAR_CAUSES.contains("frequency"));
    }

    #[test]
    fn scalability_needs_a_positive_one_cpu_point() {
        assert_eq!(
            scalability(&[sp(2, 10.0, 1.0), sp(4, 20.0, 1.0)]),
            Err(CurveError::NoBaseline)
        );
        assert_eq!(
            scalability(&[sp(1, 1.0, 2.0), sp(2, 20.0, 1.0)]),
            Err(CurveError::BaselineNotPositive { low: -1.0 })
        );
        assert_eq!(
            scalability(&[sp(1, 1.0, 0.1), sp(1, 2.0, 0.1)]),
            Err(CurveError::DuplicateLoad { load: 1.0 })
        );
    }
}
