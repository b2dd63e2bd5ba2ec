//! Geometric-mean indices: how fast each run is against the base, per
//! report group and overall, with the base at 100 (method in
//! docs/reports.md).
//!
//! Within a group, the index is 100 × the geometric mean of the speed-ups
//! (ratio for higher-is-better units, inverse ratio for lower-is-better) of
//! every ranked measurement both runs have. Overall, it is the geometric
//! mean of the group indices, so that a group with many measurements (a
//! memory-latency sweep) weighs no more than one with few. The harness
//! self-check group measures touchstone, not the machine, and is left out.
//!
//! Each index has an interval: the same geometric means taken of the low
//! ends of the figures' ratio intervals and of their high ends. It holds
//! whenever every ratio's interval holds, whatever their dependence — and
//! the causes that move one run's figures together (the machine's state,
//! what else ran) are what makes them dependent. An index whose interval
//! contains 100 is not significantly different from the base.

use serde::Serialize;

use crate::compare::{speedup, Comparison};
use crate::table::Matrix;

/// Groups that never enter an index.
pub const EXCLUDED_GROUPS: &[&str] = &["harness"];

/// The geometric mean of positive, finite numbers; None if there are none
/// or any is not positive and finite.
pub fn geomean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || xs.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
        return None;
    }
    Some((xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

/// One line of the index table: a group (or "overall") and, per other run,
/// its index, its interval and how many figures went into it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IndexLine {
    pub group: String,
    pub values: Vec<Option<f64>>,
    /// Each index's interval (low, high), on the same scale (base 100).
    pub intervals: Vec<Option<(f64, f64)>>,
    pub counts: Vec<usize>,
}

impl IndexLine {
    /// Whether run `k`'s index cannot be told from the base's: its
    /// interval contains 100 (or it has none).
    pub fn not_significant(&self, k: usize) -> bool {
        match self.intervals.get(k).copied().flatten() {
            Some((low, high)) => low <= 100.0 && 100.0 <= high,
            None => true,
        }
    }
}

/// (speed-up, its low end, its high end) of a ratio, the ends ordered so
/// that low ≤ speed-up ≤ high whichever way the unit ranks.
fn speedups(r: &crate::compare::Ratio, hib: Option<bool>) -> Option<(f64, f64, f64)> {
    let s = speedup(r, hib)?;
    let (a, b) = match hib {
        Some(true) => (r.low, r.high),
        _ if r.low > 0.0 => (1.0 / r.high, 1.0 / r.low),
        _ => (1.0 / r.high, f64::INFINITY),
    };
    Some((s, a.min(s), b.max(s)))
}

/// Per-group indices in report order, then the overall index (group
/// "overall"). Groups where no run shares a ranked figure with the base
/// are left out.
pub fn indices(m: &Matrix, c: &Comparison) -> Vec<IndexLine> {
    let mut lines = Vec::new();
    for g in m.groups() {
        if EXCLUDED_GROUPS.contains(&g.as_str()) {
            continue;
        }
        let mut values = Vec::new();
        let mut intervals = Vec::new();
        let mut counts = Vec::new();
        for k in 0..c.others.len() {
            let ups: Vec<(f64, f64, f64)> = c
                .rows
                .iter()
                .filter(|r| m.columns[r.column].group == g)
                .filter_map(|r| {
                    let hib = m.columns[r.column].unit.higher_is_better();
                    r.cells[k].ratio.as_ref().and_then(|x| speedups(x, hib))
                })
                .collect();
            let (value, interval) = index_of(&ups);
            values.push(value);
            intervals.push(interval);
            counts.push(ups.len());
        }
        if counts.iter().any(|&n| n > 0) {
            lines.push(IndexLine {
                group: g,
                values,
                intervals,
                counts,
            });
        }
    }
    let overall_of = |k: usize| {
        let gs: Vec<(f64, f64, f64)> = lines
            .iter()
            .filter_map(|l| {
                let v = l.values[k]? / 100.0;
                let (a, b) = l.intervals[k].map_or((v, v), |(a, b)| (a / 100.0, b / 100.0));
                Some((v, a, b))
            })
            .collect();
        index_of(&gs)
    };
    let overall = IndexLine {
        group: "overall".into(),
        values: (0..c.others.len()).map(|k| overall_of(k).0).collect(),
        intervals: (0..c.others.len()).map(|k| overall_of(k).1).collect(),
        counts: (0..c.others.len())
            .map(|k| lines.iter().map(|l| l.counts[k]).sum())
            .collect(),
    };
    lines.push(overall);
    lines
}

/// 100 × the geometric mean of speed-ups, and of their interval's ends.
/// An end that is not positive and finite leaves the index without one.
fn index_of(ups: &[(f64, f64, f64)]) -> (Option<f64>, Option<(f64, f64)>) {
    let of = |f: fn(&(f64, f64, f64)) -> f64| {
        geomean(&ups.iter().map(f).collect::<Vec<_>>()).map(|x| 100.0 * x)
    };
    let value = of(|u| u.0);
    let interval = match (value, of(|u| u.1), of(|u| u.2)) {
        (Some(_), Some(a), Some(b)) => Some((a, b)),
        _ => None,
    };
    (value, interval)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::compare;
    use crate::testdata::{meas, run};
    use touchstone_results::Unit;

    #[test]
    fn index_is_geometric_mean_per_group_then_over_groups() {
        let base = run(
            "a",
            "base",
            vec![
                meas("lat1", "proc", Unit::Ns, 100.0),
                meas("lat2", "proc", Unit::Ns, 100.0),
                meas("bw", "mem_bw", Unit::MBps, 1000.0),
                meas("size", "mem_lat", Unit::Bytes, 1000.0),
                meas("self", "harness", Unit::Ns, 1.0),
            ],
        );
        let other = run(
            "b",
            "other",
            vec![
                // 2× and 8× faster: group speed-up √16 = 4.
                meas("lat1", "proc", Unit::Ns, 50.0),
                meas("lat2", "proc", Unit::Ns, 12.5),
                // 4× the bandwidth, and 100× on an unranked size.
                meas("bw", "mem_bw", Unit::MBps, 4000.0),
                meas("size", "mem_lat", Unit::Bytes, 100_000.0),
                meas("self", "harness", Unit::Ns, 100.0),
            ],
        );
        let runs = vec![base, other];
        let m = Matrix::build(&runs).unwrap();
        let c = compare(&m, 0, &[1]);
        let idx = indices(&m, &c);
        let groups: Vec<&str> = idx.iter().map(|l| l.group.as_str()).collect();
        assert_eq!(groups, ["proc", "mem_bw", "overall"]);
        assert!((idx[0].values[0].unwrap() - 400.0).abs() < 1e-9);
        assert!((idx[1].values[0].unwrap() - 400.0).abs() < 1e-9);
        assert!((idx[2].values[0].unwrap() - 400.0).abs() < 1e-9);
        assert_eq!(idx[2].counts[0], 3);
        // The base against itself is 100.
        let c = compare(&m, 0, &[0]);
        assert!((indices(&m, &c)[2].values[0].unwrap() - 100.0).abs() < 1e-9);
    }

    #[test]
    fn geomean_refuses_nonpositive() {
        assert_eq!(geomean(&[]), None);
        assert_eq!(geomean(&[1.0, 0.0]), None);
        assert!((geomean(&[2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
    }

    /// The index carries an interval: runs of one machine whose figures
    /// all moved a few per cent within their rounds' variation get an
    /// overall index whose interval holds 100 (not significant), where the
    /// bare geometric mean read as a 3 % loss; a real 30 % gain is told.
    #[test]
    fn the_index_has_an_interval_that_holds_100_for_the_same_machine() {
        use crate::testdata::with_rounds;
        let fig = |name: &str, unit: Unit, f: &[f64]| {
            let rounds: Vec<Vec<f64>> = f.iter().map(|&x| vec![x * 0.999, x, x * 1.001]).collect();
            with_rounds(name, "proc", unit, &rounds)
        };
        let base = run(
            "a",
            "base",
            vec![
                fig("lat1", Unit::Ns, &[100.0, 104.0, 98.0]),
                fig("lat2", Unit::Ns, &[50.0, 51.0, 49.0]),
                fig("bw", Unit::MBps, &[1000.0, 960.0, 1010.0]),
            ],
        );
        let again = run(
            "b",
            "again",
            vec![
                fig("lat1", Unit::Ns, &[103.0, 106.0, 101.0]),
                fig("lat2", Unit::Ns, &[51.5, 52.0, 50.5]),
                fig("bw", Unit::MBps, &[980.0, 950.0, 1000.0]),
            ],
        );
        let faster = run(
            "c",
            "faster",
            vec![
                fig("lat1", Unit::Ns, &[70.0, 72.0, 69.0]),
                fig("lat2", Unit::Ns, &[35.0, 36.0, 34.5]),
                fig("bw", Unit::MBps, &[1300.0, 1280.0, 1320.0]),
            ],
        );
        let runs = vec![base, again, faster];
        let m = Matrix::build(&runs).unwrap();
        let c = compare(&m, 0, &[1, 2]);
        let idx = indices(&m, &c);
        let overall = idx.last().unwrap();
        assert_eq!(overall.group, "overall");
        let (v, (lo, hi)) = (overall.values[0].unwrap(), overall.intervals[0].unwrap());
        assert!(v < 99.0, "{v}");
        assert!(lo < 100.0 && hi > 100.0, "{lo} {hi}");
        assert!(overall.not_significant(0));
        let (v, (lo, _)) = (overall.values[1].unwrap(), overall.intervals[1].unwrap());
        assert!(v > 125.0 && lo > 100.0, "{v} {lo}");
        assert!(!overall.not_significant(1));
        // Every line's interval brackets its index.
        for l in &idx {
            for k in 0..2 {
                let (a, b) = l.intervals[k].unwrap();
                assert!(
                    a <= l.values[k].unwrap() && l.values[k].unwrap() <= b,
                    "{l:?}"
                );
            }
        }
    }
}
