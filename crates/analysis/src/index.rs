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
/// its index and how many figures went into it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IndexLine {
    pub group: String,
    pub values: Vec<Option<f64>>,
    pub counts: Vec<usize>,
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
        let mut counts = Vec::new();
        for k in 0..c.others.len() {
            let ups: Vec<f64> = c
                .rows
                .iter()
                .filter(|r| m.columns[r.column].group == g)
                .filter_map(|r| {
                    let hib = m.columns[r.column].unit.higher_is_better();
                    r.cells[k].ratio.as_ref().and_then(|x| speedup(x, hib))
                })
                .collect();
            values.push(geomean(&ups).map(|x| 100.0 * x));
            counts.push(ups.len());
        }
        if counts.iter().any(|&n| n > 0) {
            lines.push(IndexLine {
                group: g,
                values,
                counts,
            });
        }
    }
    let overall = IndexLine {
        group: "overall".into(),
        values: (0..c.others.len())
            .map(|k| {
                let gs: Vec<f64> = lines.iter().filter_map(|l| l.values[k]).collect();
                geomean(&gs.iter().map(|v| v / 100.0).collect::<Vec<_>>()).map(|x| 100.0 * x)
            })
            .collect(),
        counts: (0..c.others.len())
            .map(|k| lines.iter().map(|l| l.counts[k]).sum())
            .collect(),
    };
    lines.push(overall);
    lines
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
}
