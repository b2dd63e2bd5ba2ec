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
//! Each index has a 95 % interval. Where every figure of both runs was
//! measured in rounds (results format 3), it is a bootstrap over rounds
//! (`IntervalMethod::Rounds`): each run's rounds are resampled with
//! replacement — the same draw for all its figures, so what moved one
//! round's figures together stays together — each figure's headline is
//! recomputed as the median of its resampled rounds' figures, the indices
//! are recomputed, and the interval is the 2.5th and 97.5th percentiles of
//! `BOOTSTRAP_RESAMPLES` such indices, from a fixed seed (the same interval
//! every time), widened by the spread between the figures of a group
//! (`widen_by_the_spread_between_figures`: what the rounds of one run
//! cannot see). Otherwise (runs stored before rounds, or one round) it is
//! the bound (`IntervalMethod::Bound`): the same geometric means taken of
//! the low ends of the figures' ratio intervals and of their high ends,
//! which holds whenever every ratio's interval holds whatever their
//! dependence, but is far too wide to tell anything (two quick runs of one
//! machine: 98.8 in [54.7, 178.6]). An index whose interval contains 100
//! is not significantly different from the base.

use serde::Serialize;

use touchstone_results::random::SplitMix64;
use touchstone_results::stats::{quantile_sorted, MACHINE_RUN_LEVEL_SPREAD};

use crate::compare::{speedup, Comparison, Row};
use crate::table::Matrix;

/// Resamples of the bootstrap over rounds, and its seed.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;
pub const BOOTSTRAP_SEED: u64 = 0x7063_6831_5f69_6478;

/// How an index's interval was built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalMethod {
    /// Percentile bootstrap over the runs' rounds (every figure has rounds).
    Rounds,
    /// Geometric means of the figures' interval ends (some figure of one round).
    Bound,
}

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
    /// How each interval was built (the same for every line of a run).
    pub methods: Vec<IntervalMethod>,
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
                methods: vec![IntervalMethod::Bound; c.others.len()],
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
        methods: vec![IntervalMethod::Bound; c.others.len()],
        counts: (0..c.others.len())
            .map(|k| lines.iter().map(|l| l.counts[k]).sum())
            .collect(),
    };
    lines.push(overall);
    for k in 0..c.others.len() {
        if let Some(per_line) = bootstrap(m, c, k, &lines) {
            for (l, iv) in lines.iter_mut().zip(per_line) {
                if let (Some(v), Some((a, b))) = (l.values[k], iv) {
                    l.intervals[k] = Some((a.min(v), b.max(v)));
                    l.methods[k] = IntervalMethod::Rounds;
                }
            }
            add_the_run_level_term(m, c, k, &mut lines);
            widen_by_the_spread_between_figures(m, c, k, &mut lines);
        }
    }
    lines
}

/// Add to each group's bootstrap interval of run `k` the run-level term
/// its figures were stored with (`RoundSummary::run_level`): what moves a
/// whole run and that no resampling of its rounds can show. The term is
/// taken as shared by the group's figures (in five quick runs of the
/// development VM, a group's mean shift per run was 1-5 %, about one
/// figure's run-level spread, not that spread over √figures), so the
/// group's log half-width gains z(0.975)·√(σ_base² + σ_other²), in
/// quadrature (σ² the mean over its figures). The overall interval follows in
/// `widen_by_the_spread_between_figures`, and gains the machine-wide
/// term (`MACHINE_RUN_LEVEL_SPREAD`: what moves every group of a run
/// together, which the groups' own terms, added as independent, would
/// average away) where any figure carries a run-level term. Runs stored
/// without the term are as before.
fn add_the_run_level_term(m: &Matrix, c: &Comparison, k: usize, lines: &mut [IndexLine]) {
    const Z_975: f64 = 1.959_963_984_540_054;
    let groups = lines.len() - 1;
    let mut any_term = false;
    for l in lines[..groups].iter_mut() {
        let (Some(v), Some((a, b))) = (l.values[k], l.intervals[k]) else {
            continue;
        };
        let terms: Vec<f64> = group_rows(m, c, &l.group)
            .filter(|r| r.cells[k].ratio.is_some())
            .filter(|r| m.columns[r.column].unit.higher_is_better().is_some())
            .map(|r| {
                let term = |row: usize| {
                    m.cell(row, r.column)
                        .and_then(|f| f.summary.rounds.as_ref())
                        .map_or(0.0, |x| x.run_level)
                };
                (term(c.base), term(c.others[k]))
            })
            .map(|(b, o)| b * b + o * o)
            .collect();
        if terms.is_empty() {
            continue;
        }
        let run = Z_975 * (terms.iter().sum::<f64>() / terms.len() as f64).sqrt();
        if run > 0.0 {
            any_term = true;
            l.intervals[k] = Some(widened(v, (a, b), run));
        }
    }
    let overall = &mut lines[groups];
    if let (true, Some(v), Some(iv)) = (any_term, overall.values[k], overall.intervals[k]) {
        let run = Z_975 * std::f64::consts::SQRT_2 * MACHINE_RUN_LEVEL_SPREAD;
        overall.intervals[k] = Some(widened(v, iv, run));
    }
}

/// The interval (a, b) around `v` with `run` added to each log half-width
/// in quadrature.
fn widened(v: f64, (a, b): (f64, f64), run: f64) -> (f64, f64) {
    let low = (v / a).ln().max(0.0).hypot(run);
    let high = (b / v).ln().max(0.0).hypot(run);
    (v * (-low).exp(), v * high.exp())
}

/// Widen run `k`'s bootstrap intervals by what the rounds cannot see: a
/// figure that moves between runs on its own (a file system's create
/// rate, 14.4 k/s in one quick run and 2.1 k/s in the next, each run's
/// rounds agreeing). Within a group, the figures' log speed-ups are taken
/// as draws around the group's common factor, and the interval of their
/// mean (Student t over the figures, as for a geometric-mean speed-up
/// over benchmarks) is the least the group's index is known to; its
/// interval is the wider of that and the bootstrap's. Overall, the groups'
/// log half-widths so widened are added in quadrature (the groups taken
/// as independent) and the overall interval widened to that. A change
/// that moves every figure together keeps a narrow interval; one figure
/// far off its group widens only its group's.
fn widen_by_the_spread_between_figures(
    m: &Matrix,
    c: &Comparison,
    k: usize,
    lines: &mut [IndexLine],
) {
    let groups = lines.len() - 1;
    let mut log_half_widths = Vec::new();
    for l in lines[..groups].iter_mut() {
        let (Some(v), Some((a, b))) = (l.values[k], l.intervals[k]) else {
            continue;
        };
        let logs: Vec<f64> = group_rows(m, c, &l.group)
            .filter_map(|r| {
                let hib = m.columns[r.column].unit.higher_is_better();
                r.cells[k].ratio.as_ref().and_then(|x| speedups(x, hib))
            })
            .map(|u| u.0.ln())
            .collect();
        let (mut low, mut high) = (a, b);
        if let Some(h) = mean_half_width(&logs) {
            low = low.min(v * (-h).exp());
            high = high.max(v * h.exp());
        }
        l.intervals[k] = Some((low, high));
        log_half_widths.push((v / low).ln().max((high / v).ln()));
    }
    let overall = &mut lines[groups];
    if let (Some(v), Some((a, b)), false) = (
        overall.values[k],
        overall.intervals[k],
        log_half_widths.is_empty(),
    ) {
        let h = log_half_widths.iter().map(|h| h * h).sum::<f64>().sqrt()
            / log_half_widths.len() as f64;
        overall.intervals[k] = Some((a.min(v * (-h).exp()), b.max(v * h.exp())));
    }
}

/// The compared rows of `group`'s columns.
fn group_rows<'a>(
    m: &'a Matrix,
    c: &'a Comparison,
    group: &'a str,
) -> impl Iterator<Item = &'a Row> + 'a {
    c.rows
        .iter()
        .filter(move |r| m.columns[r.column].group == group)
}

/// The 95 % half-width of the mean of `xs` (Student t over their sample
/// standard deviation); None for fewer than two.
fn mean_half_width(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let (_, sd) = touchstone_results::convergence::mean_sd(xs);
    let t = touchstone_results::convergence::t_quantile(0.95, xs.len() - 1);
    Some(t * sd / (xs.len() as f64).sqrt())
}

/// One figure of the bootstrap: its group's line, whether higher is
/// better, and the base's and the other run's round figures (a figure
/// without rounds of its own — one derived from a sweep, such as a cache
/// level's latency — enters as its one headline, resampled as a constant).
struct Resampled<'a> {
    line: usize,
    higher_is_better: bool,
    base: Rounds<'a>,
    other: Rounds<'a>,
}

enum Rounds<'a> {
    Figures(&'a [f64]),
    Headline(f64),
}

impl Rounds<'_> {
    fn resampled(&self, draw: &[usize], scratch: &mut Vec<f64>) -> f64 {
        match self {
            Rounds::Figures(f) => resampled_median(f, draw, scratch),
            Rounds::Headline(h) => *h,
        }
    }
    fn len(&self) -> usize {
        match self {
            Rounds::Figures(f) => f.len(),
            Rounds::Headline(_) => 0,
        }
    }
}

/// The median of `figures` at the drawn round indices (an index beyond a
/// figure with fewer rounds than the run wraps round).
fn resampled_median(figures: &[f64], draw: &[usize], scratch: &mut Vec<f64>) -> f64 {
    scratch.clear();
    scratch.extend(draw.iter().map(|&i| figures[i % figures.len()]));
    scratch.sort_by(f64::total_cmp);
    quantile_sorted(scratch, 0.5)
}

/// The bootstrap interval over rounds of each line's index for run `k`
/// (the lines as `indices` built them, "overall" last); None when either
/// run was not measured in rounds (the bound stands then).
fn bootstrap(
    m: &Matrix,
    c: &Comparison,
    k: usize,
    lines: &[IndexLine],
) -> Option<Vec<Option<(f64, f64)>>> {
    let (base_run, other_run) = (m.runs[c.base], m.runs[c.others[k]]);
    if base_run.options.rounds < 2 || other_run.options.rounds < 2 {
        return None;
    }
    let groups = lines.len() - 1;
    let mut figures = Vec::new();
    for r in &c.rows {
        let col = &m.columns[r.column];
        let Some(hib) = col.unit.higher_is_better() else {
            continue;
        };
        let Some(line) = lines[..groups].iter().position(|l| l.group == col.group) else {
            continue;
        };
        if r.cells[k].ratio.is_none() {
            continue;
        }
        let rounds = |row: usize| -> Option<Rounds> {
            let fig = m.cell(row, r.column)?;
            let positive = |x: &f64| x.is_finite() && *x > 0.0;
            Some(match fig.summary.rounds.as_ref().map(|x| &x.figures[..]) {
                Some(f) if f.len() >= 2 && f.iter().all(positive) => Rounds::Figures(f),
                _ if positive(&fig.value()) => Rounds::Headline(fig.value()),
                _ => return None,
            })
        };
        let (Some(base), Some(other)) = (rounds(c.base), rounds(c.others[k])) else {
            continue;
        };
        figures.push(Resampled {
            line,
            higher_is_better: hib,
            base,
            other,
        });
    }
    if figures.is_empty() {
        return None;
    }
    let n_base = figures.iter().map(|f| f.base.len()).max()?.max(1);
    let n_other = figures.iter().map(|f| f.other.len()).max()?.max(1);
    let mut rng = SplitMix64::new(BOOTSTRAP_SEED);
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(BOOTSTRAP_RESAMPLES); groups + 1];
    let (mut draw_b, mut draw_o, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
    let mut sums = vec![(0.0, 0usize); groups];
    for _ in 0..BOOTSTRAP_RESAMPLES {
        draw_b.clear();
        draw_b.extend((0..n_base).map(|_| rng.below(n_base)));
        draw_o.clear();
        draw_o.extend((0..n_other).map(|_| rng.below(n_other)));
        sums.iter_mut().for_each(|s| *s = (0.0, 0));
        for f in &figures {
            let b = f.base.resampled(&draw_b, &mut scratch);
            let o = f.other.resampled(&draw_o, &mut scratch);
            let up = if f.higher_is_better { o / b } else { b / o };
            sums[f.line].0 += up.ln();
            sums[f.line].1 += 1;
        }
        let mut overall = (0.0, 0usize);
        for (g, &(sum, n)) in sums.iter().enumerate() {
            if n > 0 {
                let log_index = sum / n as f64;
                samples[g].push(100.0 * log_index.exp());
                overall.0 += log_index;
                overall.1 += 1;
            }
        }
        if overall.1 > 0 {
            samples[groups].push(100.0 * (overall.0 / overall.1 as f64).exp());
        }
    }
    Some(
        samples
            .into_iter()
            .map(|mut xs| {
                (xs.len() == BOOTSTRAP_RESAMPLES).then(|| {
                    xs.sort_by(f64::total_cmp);
                    (quantile_sorted(&xs, 0.025), quantile_sorted(&xs, 0.975))
                })
            })
            .collect(),
    )
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
        // Both runs measure the same five figures.
        let figures = |values: [f64; 5]| {
            let kinds = [
                ("lat1", "proc", Unit::Ns),
                ("lat2", "proc", Unit::Ns),
                ("bw", "mem_bw", Unit::MBps),
                ("size", "mem_lat", Unit::Bytes),
                ("self", "harness", Unit::Ns),
            ];
            let figure = |(&(name, group, unit), v)| meas(name, group, unit, v);
            kinds.iter().zip(values).map(figure).collect()
        };
        let base = run("a", "base", figures([100.0, 100.0, 1000.0, 1000.0, 1.0]));
        // lat1 and lat2 2× and 8× faster: group speed-up √16 = 4; 4× the
        // bandwidth, and 100× on an unranked size.
        let other = run(
            "b",
            "other",
            figures([50.0, 12.5, 4000.0, 100_000.0, 100.0]),
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

    /// A figure measured in three rounds around `x`, each round off by
    /// `noise[k]` (relative), the same for every figure of a run: what
    /// moved one round's figures together.
    fn rounds_of(name: &str, unit: Unit, x: f64, noise: &[f64]) -> touchstone_results::Measurement {
        use crate::testdata::with_rounds;
        let rounds: Vec<Vec<f64>> = noise
            .iter()
            .map(|n| vec![x * (1.0 + n) * 0.999, x * (1.0 + n), x * (1.0 + n) * 1.001])
            .collect();
        with_rounds(name, "proc", unit, &rounds)
    }

    /// A run of five figures, each `scale` times the base's (the time
    /// figures divided by it), with rounds moved by `noise`, and each
    /// figure's own wobble `wobble[i]`.
    fn synthetic(id: &str, scale: f64, noise: &[f64], wobble: &[f64]) -> touchstone_results::Run {
        let figs = [
            ("lat1", Unit::Ns, 100.0),
            ("lat2", Unit::Ns, 50.0),
            ("lat3", Unit::Ns, 7.0),
        ];
        let mut ms: Vec<_> = figs
            .iter()
            .zip(wobble)
            .map(|((n, u, x), w)| rounds_of(n, *u, x / scale * (1.0 + w), noise))
            .collect();
        ms.push(rounds_of(
            "bw",
            Unit::MBps,
            1000.0 * scale * (1.0 + wobble[3]),
            noise,
        ));
        let mut mem = rounds_of("bw2", Unit::MBps, 400.0 * scale * (1.0 + wobble[4]), noise);
        mem.group = "mem_bw".into();
        ms.push(mem);
        let mut r = run(id, id, ms);
        r.options.rounds = 3;
        r
    }

    /// Two runs of one machine with rounds whose figures move a few per
    /// cent together: the bootstrap over rounds gives an overall interval
    /// that holds 100 and is a few per cent wide (the bound was tens of
    /// per cent); every figure 10 % faster gives one that excludes 100.
    #[test]
    fn the_bootstrap_over_rounds_holds_100_for_the_same_machine_and_tells_a_10_percent_shift() {
        let base = synthetic("a", 1.0, &[0.0, 0.02, -0.015], &[0.0, 0.0, 0.0, 0.0, 0.0]);
        let again = synthetic(
            "b",
            1.0,
            &[0.01, -0.02, 0.005],
            &[0.01, -0.005, 0.0, 0.005, -0.01],
        );
        let faster = synthetic(
            "c",
            1.1,
            &[0.01, -0.02, 0.005],
            &[0.01, -0.005, 0.0, 0.005, -0.01],
        );
        let runs = vec![base, again, faster];
        let m = Matrix::build(&runs).unwrap();
        let c = compare(&m, 0, &[1, 2]);
        let idx = indices(&m, &c);
        let overall = idx.last().unwrap();
        assert_eq!(overall.methods, [IntervalMethod::Rounds; 2]);
        let (lo, hi) = overall.intervals[0].unwrap();
        assert!(lo < 100.0 && 100.0 < hi, "{lo} {hi}");
        assert!(hi - lo < 10.0, "narrow: {lo} {hi}");
        assert!(overall.not_significant(0));
        let (v, (lo, hi)) = (overall.values[1].unwrap(), overall.intervals[1].unwrap());
        assert!(
            (v - 110.0).abs() < 2.0 && lo > 100.0 && hi - lo < 10.0,
            "{v} {lo} {hi}"
        );
        assert!(!overall.not_significant(1));
        // The same interval every time (fixed seed), and each brackets its index.
        assert_eq!(indices(&m, &c), idx);
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

    /// Two quick runs of one machine in which one figure moved on its own
    /// between the runs, every round of each run agreeing (the quiet
    /// sitting of 27 Nov: `lat_fs/create` 14.4 k/s, then 2.1 k/s): the
    /// bootstrap over rounds alone called the machine 8 % slower, 91.7 in
    /// [87.3, 97.3]; widened by the spread between figures, the index holds
    /// 100, and only that figure's group is wide. The same run with every
    /// figure 10 % faster is still told apart.
    #[test]
    fn a_figure_that_moves_on_its_own_between_runs_does_not_move_the_index() {
        let groups = ["proc", "ctx", "fs_lat", "mem_bw"];
        let make = |id: &str, scale: f64, alone: f64, noise: &[f64]| {
            let mut ms = Vec::new();
            for (g, group) in groups.iter().enumerate() {
                for i in 0..4 {
                    let wobble = 1.0 + 0.01 * ((g * 4 + i) as f64 * 0.7).sin();
                    let own = if *group == "fs_lat" && i == 0 {
                        alone
                    } else {
                        1.0
                    };
                    let mut f = rounds_of(
                        &format!("{group}/{i}"),
                        Unit::OpsPerSec,
                        1000.0 * scale * own * wobble,
                        noise,
                    );
                    f.group = group.to_string();
                    ms.push(f);
                }
            }
            let mut r = run(id, id, ms);
            r.options.rounds = 3;
            r
        };
        let runs = vec![
            make("a", 1.0, 1.0, &[0.0, 0.01, -0.01]),
            make("b", 1.0, 0.15, &[0.005, -0.01, 0.0]),
            make("c", 1.1, 0.15, &[0.005, -0.01, 0.0]),
        ];
        let m = Matrix::build(&runs).unwrap();
        let c = compare(&m, 0, &[1, 2]);
        let idx = indices(&m, &c);
        let overall = idx.last().unwrap();
        assert!(overall.not_significant(0), "{overall:?}");
        let fs = idx.iter().find(|l| l.group == "fs_lat").unwrap();
        assert!(fs.not_significant(0), "{fs:?}");
        for l in idx
            .iter()
            .filter(|l| l.group != "fs_lat" && l.group != "overall")
        {
            let (lo, hi) = l.intervals[0].unwrap();
            assert!(lo < 100.0 && 100.0 < hi && hi - lo < 6.0, "{l:?}");
            // Every figure 10 % faster: each such group says so.
            assert!(!l.not_significant(1), "{l:?}");
        }
    }

    /// Two quick runs of one machine in which a whole group moved by 3 %
    /// between the runs, each run's rounds agreeing (the shared L3 that the
    /// host's other tenants use, one minute and the next): the bootstrap
    /// over rounds alone calls the group faster; with the run-level term
    /// stored with the figures (1.44 %, mem_lat's) it holds 100, the
    /// overall index too, and every figure 10 % faster is still told.
    #[test]
    fn the_run_level_term_keeps_a_whole_run_shift_within_the_index_interval() {
        let make = |id: &str, scale: f64, shift: f64, noise: &[f64], term: f64| {
            let mut ms = Vec::new();
            for group in ["proc", "mem_lat"] {
                for i in 0..6 {
                    let wobble = 1.0 + 0.005 * (i as f64 * 1.3).sin();
                    let moved = if group == "mem_lat" { shift } else { 1.0 };
                    let mut f = rounds_of(
                        &format!("{group}/{i}"),
                        Unit::Ns,
                        10.0 * (i + 1) as f64 / scale / moved * wobble,
                        noise,
                    );
                    f.group = group.to_string();
                    f.summary.rounds = f.summary.rounds.map(|r| r.with_run_level(term));
                    ms.push(f);
                }
            }
            let mut r = run(id, id, ms);
            r.options.rounds = 3;
            r
        };
        let noise_a = [0.0, 0.004, -0.004];
        let noise_b = [0.002, -0.003, 0.001];
        for (term, holds) in [(0.0, false), (0.0144, true)] {
            let runs = vec![
                make("a", 1.0, 1.0, &noise_a, term),
                make("b", 1.0, 1.03, &noise_b, term),
                make("c", 1.1, 1.03, &noise_b, term),
            ];
            let m = Matrix::build(&runs).unwrap();
            let c = compare(&m, 0, &[1, 2]);
            let idx = indices(&m, &c);
            let mem = idx.iter().find(|l| l.group == "mem_lat").unwrap();
            assert_eq!(mem.not_significant(0), holds, "term {term}: {mem:?}");
            let overall = idx.last().unwrap();
            assert!(overall.not_significant(0) || !holds, "{overall:?}");
            let proc = idx.iter().find(|l| l.group == "proc").unwrap();
            assert!(!proc.not_significant(1), "term {term}: {proc:?}");
            assert!(!overall.not_significant(1), "term {term}: {overall:?}");
        }
    }

    /// Two quick runs of one machine in which every group moved by 4 %
    /// together (run 5 of the 07:53 sitting against its run 2: 95.3 [93.2,
    /// 97.1] "slower"): with the run-level terms stored the overall index
    /// holds 100 (the machine-wide term), and every figure 10 % faster is
    /// still told.
    #[test]
    fn the_machine_wide_term_keeps_a_whole_machine_shift_within_the_overall_interval() {
        let groups = ["proc", "ctx", "comm_lat", "mem_lat", "cpu", "mem_bw"];
        let make = |id: &str, scale: f64, noise: &[f64], term: bool| {
            let mut ms = Vec::new();
            for (g, group) in groups.iter().enumerate() {
                for i in 0..4 {
                    let wobble = 1.0 + 0.01 * ((g * 4 + i) as f64 * 0.7).sin();
                    let mut f = rounds_of(
                        &format!("{group}/{i}"),
                        Unit::Ns,
                        10.0 / scale * wobble,
                        noise,
                    );
                    f.group = group.to_string();
                    let sigma = touchstone_results::stats::run_level_spread(group, false);
                    f.summary.rounds = f
                        .summary
                        .rounds
                        .map(|r| r.with_run_level(if term { sigma } else { 0.0 }));
                    ms.push(f);
                }
            }
            let mut r = run(id, id, ms);
            r.options.rounds = 3;
            r
        };
        for (term, holds) in [(false, false), (true, true)] {
            let runs = vec![
                make("a", 1.0, &[0.0, 0.005, -0.005], term),
                make("b", 0.96, &[0.003, -0.004, 0.0], term),
                make("c", 1.1, &[0.003, -0.004, 0.0], term),
            ];
            let m = Matrix::build(&runs).unwrap();
            let c = compare(&m, 0, &[1, 2]);
            let idx = indices(&m, &c);
            let overall = idx.last().unwrap();
            assert_eq!(
                overall.not_significant(0),
                holds,
                "term {term}: {overall:?}"
            );
            assert!(!overall.not_significant(1), "term {term}: {overall:?}");
        }
    }

    /// Runs without rounds (stored before them) keep the bound, and say so.
    #[test]
    fn runs_without_rounds_keep_the_bound() {
        let base = run("a", "base", vec![meas("lat1", "proc", Unit::Ns, 100.0)]);
        let other = run("b", "other", vec![meas("lat1", "proc", Unit::Ns, 100.0)]);
        let runs = vec![base, other];
        let m = Matrix::build(&runs).unwrap();
        let c = compare(&m, 0, &[1]);
        let idx = indices(&m, &c);
        assert!(idx.iter().all(|l| l.methods == [IntervalMethod::Bound]));
        let (lo, hi) = idx.last().unwrap().intervals[0].unwrap();
        assert!(lo < 100.0 && 100.0 < hi);
    }
}
