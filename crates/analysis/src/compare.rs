//! Comparing runs with a base run: each figure as a ratio to the base's, a
//! conservative confidence interval of that ratio built from the two
//! headlines' intervals — over rounds where the runs measured in rounds
//! (what varies from one run to the next is in them), else the medians'
//! distribution-free intervals — and a verdict (faster, slower, or "~" when
//! the intervals cannot tell). The method is in docs/reports.md.

use serde::Serialize;
use touchstone_results::stats::{median_ci_ranks, quantile_sorted, RoundSummary};
use touchstone_results::{Figure, Statistic};

use crate::table::Matrix;

/// Confidence asked of each median's interval. Two intervals at 97.5 %
/// give a ratio interval that covers the true ratio with probability at
/// least 95 % (Bonferroni: 1 − 0.025 − 0.025), whatever their dependence.
pub const PER_MEDIAN_LEVEL: f64 = 0.975;

/// A ratio `other / base` of two figures with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ratio {
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    /// Lower bound of the interval's joint coverage (may fall below 0.95
    /// when either measurement has fewer than 7 samples).
    pub level: f64,
}

/// The noise band of a verdict: a ratio within ×/÷ (1 + this) of 1 is `~`
/// however narrow its interval (as criterion's noise threshold; the 1 %
/// floor of `fleet report` and `check`). The band applies to the ratio, not
/// its whole interval: three rounds give wide intervals, and a 30 %
/// difference whose interval reaches down to 1.004 is still a difference. A
/// sleep, a timer or a plateau derived from many points of one curve
/// measures to 0.1 % within a run, but no machine repeats to 0.1 % from one
/// run to the next: in ten pairs of five quick runs of the development VM,
/// 0.05 % on `lat_usleep/select/time:10ms` and 0.2–0.9 % on
/// `lat_mem_rd/level:L1` were marked before this band.
pub const NOISE_THRESHOLD: f64 = 0.01;

impl Ratio {
    /// Whether the interval excludes 1: the two figures really differ.
    pub fn differs(&self) -> bool {
        self.low > 1.0 || self.high < 1.0
    }

    /// Whether the interval excludes 1 and the ratio lies beyond the noise
    /// band (`NOISE_THRESHOLD`): a difference worth a verdict.
    pub fn beyond_noise(&self) -> bool {
        self.differs()
            && (self.ratio > 1.0 + NOISE_THRESHOLD || self.ratio < 1.0 / (1.0 + NOISE_THRESHOLD))
    }
}

/// What a reader should conclude from one figure against the base's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Better than the base, and the interval excludes equality.
    Faster,
    /// Worse than the base, and the interval excludes equality.
    Slower,
    /// The interval includes equality (or the figures are equal, whatever
    /// the unit): no difference can be claimed ("~").
    Same,
    /// The unit does not rank (a size, a count) and the figures differ:
    /// shown, not judged better or worse.
    Unranked,
    /// The base run lacks this measurement: nothing to compare with.
    BaseMissing,
    /// This run lacks the measurement.
    Missing,
    /// Either figure is marked invalid (e.g. a subtracted overhead swamped
    /// it): there is no figure to compare, whatever its stored value.
    Invalid,
}

impl Verdict {
    /// The short mark printed beside a ratio.
    pub fn mark(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "~",
            Verdict::Unranked => "",
            Verdict::BaseMissing => "no base",
            Verdict::Missing => "missing",
            Verdict::Invalid => "invalid",
        }
    }
}

/// A distribution-free confidence interval (low, high, coverage) of a
/// measurement's median at `level`, from its raw samples; the stored
/// 95 % interval when the samples are not there.
pub fn median_interval(m: &Figure, level: f64) -> (f64, f64, f64) {
    if m.samples.is_empty() || m.samples.iter().any(|x| !x.is_finite()) {
        return (m.summary.ci_low, m.summary.ci_high, m.summary.ci_level);
    }
    let mut s = m.samples.clone();
    s.sort_by(f64::total_cmp);
    let (lo, hi, cov) = median_ci_ranks(s.len(), level);
    (s[lo], s[hi], cov)
}

/// The interval (low, high, coverage) of a measurement's headline as an
/// estimate of what the machine gives, at `level`. Measured in rounds: the
/// interval over rounds with its stored run-level term (which covers
/// another run's headline, so it holds the variation of two runs) at
/// `level`, narrowed by √2 to hold one run's: the headline's own. Otherwise
/// None (see `median_interval`).
pub fn rounds_interval(m: &Figure, level: f64) -> Option<(f64, f64, f64)> {
    let r = m.summary.rounds.as_ref()?;
    let (h, low, high) = RoundSummary::interval_at(&r.figures, level, r.run_level)?;
    if low > 0.0 {
        // Symmetric on a log scale: h·exp(± half).
        let narrowed = (high / low).ln() / 2.0 / std::f64::consts::SQRT_2;
        Some((h * (-narrowed).exp(), h * narrowed.exp(), level))
    } else {
        let narrowed = (high - low) / 2.0 / std::f64::consts::SQRT_2;
        Some((h - narrowed, h + narrowed, level))
    }
}

/// The ratio of `other`'s headline figure to `base`'s, with a conservative
/// interval: [other_low / base_high, other_high / base_low], the extreme
/// ratios of the two headlines' intervals at 97.5 % (`rounds_interval`, or
/// the medians' distribution-free intervals for a figure of one round). For
/// figures of one round that are a minimum or maximum rather than a median,
/// the medians' relative interval is carried over to the headline ratio.
/// Equal headlines are a ratio of exactly 1. None when the base figure is
/// not positive.
pub fn ratio(base: &Figure, other: &Figure) -> Option<Ratio> {
    let (b, o) = (base.value(), other.value());
    if !(b > 0.0 && b.is_finite() && o.is_finite() && o >= 0.0) {
        return None;
    }
    let r = o / b;
    let interval = |m: &Figure| -> (f64, f64, f64, bool) {
        match rounds_interval(m, PER_MEDIAN_LEVEL) {
            Some((l, h, c)) => (l, h, c, true),
            None => {
                let (l, h, c) = median_interval(m, PER_MEDIAN_LEVEL);
                (l, h, c, false)
            }
        }
    };
    let (bl, bh, bc, b_rounds) = interval(base);
    let (ol, oh, oc, o_rounds) = interval(other);
    // Each interval relative to its own headline, so that carrying a
    // median's interval over to a min or max headline is one scaling.
    let rel = |l: f64, h: f64, m: &Figure, rounds: bool| {
        let centre = if rounds || m.statistic == Statistic::Median {
            m.value()
        } else {
            median_of(m)
        };
        if centre > 0.0 && centre.is_finite() {
            (l / centre, h / centre)
        } else {
            (1.0, 1.0)
        }
    };
    let (bl, bh) = rel(bl, bh, base, b_rounds);
    let (ol, oh) = rel(ol, oh, other, o_rounds);
    let low = r * ol / bh;
    let high = if bl > 0.0 { r * oh / bl } else { f64::INFINITY };
    Some(Ratio {
        ratio: r,
        low: low.min(r),
        high: high.max(r),
        level: (1.0 - (1.0 - bc) - (1.0 - oc)).max(0.0),
    })
}

fn median_of(m: &Figure) -> f64 {
    if m.samples.is_empty() {
        return m.summary.median;
    }
    let mut s = m.samples.clone();
    s.sort_by(f64::total_cmp);
    quantile_sorted(&s, 0.5)
}

/// The verdict for a ratio of figures in a unit that ranks one way or not:
/// faster or slower only beyond the noise band (`Ratio::beyond_noise`).
/// Equal figures are the same, whatever the unit; so are figures whose
/// ratio has no interval at all (a figure of one sample on either side,
/// e.g. one derived from a sweep): with nothing to tell noise from a
/// difference, none is claimed.
pub fn verdict(r: &Ratio, higher_is_better: Option<bool>) -> Verdict {
    match higher_is_better {
        _ if (r.ratio - 1.0).abs() <= 1e-12 || r.level <= 0.0 => Verdict::Same,
        None if r.differs() => Verdict::Unranked,
        None => Verdict::Same,
        Some(_) if !r.beyond_noise() => Verdict::Same,
        Some(hib) => {
            if (r.ratio > 1.0) == hib {
                Verdict::Faster
            } else {
                Verdict::Slower
            }
        }
    }
}

/// How much faster `other` is than the base, as a factor > 1 when faster
/// (the ratio itself when higher is better, its inverse when lower is).
/// None for units that do not rank.
pub fn speedup(r: &Ratio, higher_is_better: Option<bool>) -> Option<f64> {
    match higher_is_better {
        Some(true) => Some(r.ratio),
        Some(false) if r.ratio > 0.0 => Some(1.0 / r.ratio),
        _ => None,
    }
}

/// One run's figure against the base's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cell {
    pub value: Option<f64>,
    pub ratio: Option<Ratio>,
    pub verdict: Verdict,
}

/// One measurement column compared across runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Index into the matrix's columns.
    pub column: usize,
    pub base: Option<f64>,
    /// One per other run, in the order asked.
    pub cells: Vec<Cell>,
}

/// Every column compared: the base run's row index in the matrix, the
/// other runs' row indices, and one `Row` per column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub base: usize,
    pub others: Vec<usize>,
    pub rows: Vec<Row>,
}

/// Compare the runs at matrix rows `others` with the run at row `base`.
pub fn compare(m: &Matrix, base: usize, others: &[usize]) -> Comparison {
    let rows = (0..m.columns.len())
        .map(|col| {
            let hib = m.columns[col].unit.higher_is_better();
            let b = m.cell(base, col);
            let cells = others
                .iter()
                .map(|&o| {
                    let om = m.cell(o, col);
                    let value = om.map(|x| x.value());
                    match (b, om) {
                        (_, None) => Cell {
                            value,
                            ratio: None,
                            verdict: Verdict::Missing,
                        },
                        (None, Some(_)) => Cell {
                            value,
                            ratio: None,
                            verdict: Verdict::BaseMissing,
                        },
                        (Some(bm), Some(om)) if bm.invalid.is_some() || om.invalid.is_some() => {
                            Cell {
                                value: om.valid_value(),
                                ratio: None,
                                verdict: Verdict::Invalid,
                            }
                        }
                        (Some(bm), Some(om)) => match ratio(bm, om) {
                            Some(r) => Cell {
                                value,
                                ratio: Some(r),
                                verdict: verdict(&r, hib),
                            },
                            None => Cell {
                                value,
                                ratio: None,
                                verdict: Verdict::Unranked,
                            },
                        },
                    }
                })
                .collect();
            Row {
                column: col,
                base: b.and_then(|x| x.valid_value()),
                cells,
            }
        })
        .collect();
    Comparison {
        base,
        others: others.to_vec(),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{meas, run, with_rounds, with_samples};
    use touchstone_results::Unit;

    #[test]
    fn clear_differences_are_marked_by_direction() {
        let base = meas("lat", "proc", Unit::Ns, 100.0);
        let fast = meas("lat", "proc", Unit::Ns, 50.0);
        let r = ratio(&base.figure(), &fast.figure()).unwrap();
        assert!((r.ratio - 0.5).abs() < 1e-12);
        assert!(r.low < 0.5 && r.high > 0.5 && r.high < 0.52, "{r:?}");
        assert!(r.level >= 0.95);
        assert_eq!(verdict(&r, Unit::Ns.higher_is_better()), Verdict::Faster);
        assert_eq!(verdict(&r, Unit::MBps.higher_is_better()), Verdict::Slower);
        assert_eq!(
            verdict(&r, Unit::Bytes.higher_is_better()),
            Verdict::Unranked
        );
        assert!((speedup(&r, Some(false)).unwrap() - 2.0).abs() < 1e-12);
    }

    #[test]
    fn overlapping_intervals_are_not_a_difference() {
        // Medians differ by 2 %, but the samples spread ±10 %.
        let spread = |c: f64| (0..11).map(|i| c * (0.9 + 0.02 * i as f64)).collect();
        let base = with_samples("lat", "proc", Unit::Ns, spread(100.0));
        let other = with_samples("lat", "proc", Unit::Ns, spread(102.0));
        let r = ratio(&base.figure(), &other.figure()).unwrap();
        assert!(r.low < 1.0 && r.high > 1.0, "{r:?}");
        assert_eq!(verdict(&r, Some(false)), Verdict::Same);
    }

    #[test]
    fn missing_figures_are_marked_not_zeroed() {
        let runs = vec![
            run("a", "base", vec![meas("x", "proc", Unit::Ns, 10.0)]),
            run(
                "b",
                "other",
                vec![
                    meas("x", "proc", Unit::Ns, 20.0),
                    meas("y", "proc", Unit::Ns, 5.0),
                ],
            ),
        ];
        let m = Matrix::build(&runs).unwrap();
        let c = compare(&m, 0, &[1]);
        assert_eq!(c.rows[0].cells[0].verdict, Verdict::Slower);
        assert_eq!(c.rows[1].base, None);
        assert_eq!(c.rows[1].cells[0].verdict, Verdict::BaseMissing);
        assert_eq!(c.rows[1].cells[0].ratio, None);
        let c = compare(&m, 1, &[0]);
        assert_eq!(c.rows[1].cells[0].verdict, Verdict::Missing);
    }

    /// The recorded lat_ctx case: a ring whose one-process overhead (11.5 µs)
    /// exceeded it (4.8 µs) was stored as 0 ns, and compare called it
    /// "faster, ratio 0 [0–0]". Marked invalid, it is neither faster nor a
    /// ratio, in either direction, and it enters no index.
    #[test]
    fn an_invalid_figure_is_not_compared_or_indexed() {
        let name = "lat_ctx/procs:16/size:0";
        let mut zero = with_samples(name, "ctx", Unit::Ns, vec![0.0; 11]);
        zero.invalid =
            Some("the subtracted overhead (11500 ns) is at least the ring (4800 ns)".into());
        let runs = vec![
            run("a", "base", vec![meas(name, "ctx", Unit::Ns, 3_000.0)]),
            run("b", "loaded", vec![zero]),
        ];
        let m = Matrix::build(&runs).unwrap();
        for (base, other) in [(0, 1), (1, 0)] {
            let c = compare(&m, base, &[other]);
            let cell = c.rows[0].cells[0];
            assert_eq!(cell.verdict, Verdict::Invalid);
            assert_eq!(cell.ratio, None);
            let idx = crate::index::indices(&m, &c);
            assert!(idx.iter().all(|l| l.counts == [0]), "{idx:?}");
        }
        assert_eq!(compare(&m, 0, &[1]).rows[0].cells[0].value, None);
        assert_eq!(compare(&m, 1, &[0]).rows[0].base, None);
    }

    /// Three rounds of three samples around each of `figures`.
    fn rounds_around(name: &str, unit: Unit, figures: &[f64]) -> touchstone_results::Measurement {
        let rounds: Vec<Vec<f64>> = figures
            .iter()
            .map(|&f| vec![f * 0.999, f, f * 1.001])
            .collect();
        with_rounds(name, "proc", unit, &rounds)
    }

    /// The recorded complaint: `compare` marked equal counts (`6.000 │
    /// 6.000`) as "differs". Equal figures are "~" whatever the unit, and
    /// so are figures of one sample each (derived from a sweep: no interval,
    /// so no difference can be claimed), which read "differs" or "faster".
    #[test]
    fn equal_figures_and_figures_without_an_interval_are_the_same() {
        let six = with_samples("tlb/entries", "mem_lat", Unit::Count, vec![6.0]);
        let r = ratio(&six.figure(), &six.figure()).unwrap();
        assert_eq!(verdict(&r, Unit::Count.higher_is_better()), Verdict::Same);
        assert_eq!(Verdict::Same.mark(), "~");
        let a = with_samples(
            "par_ops/parallelism:int64_add",
            "proc",
            Unit::Count,
            vec![4.395],
        );
        let b = with_samples(
            "par_ops/parallelism:int64_add",
            "proc",
            Unit::Count,
            vec![4.481],
        );
        let r = ratio(&a.figure(), &b.figure()).unwrap();
        assert_eq!(r.level, 0.0);
        assert_eq!(verdict(&r, None), Verdict::Same);
        let x = with_samples("mhz/source:os", "cpu", Unit::Mhz, vec![2600.0]);
        let y = with_samples("mhz/source:os", "cpu", Unit::Mhz, vec![2650.0]);
        assert_eq!(
            verdict(&ratio(&x.figure(), &y.figure()).unwrap(), Some(true)),
            Verdict::Same
        );
        // A count that differs beyond its samples' spread still differs.
        let few = with_samples(
            "n",
            "proc",
            Unit::Count,
            vec![6.0, 6.0, 6.0, 6.0, 6.0, 6.0, 6.0],
        );
        let more = with_samples(
            "n",
            "proc",
            Unit::Count,
            vec![8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0],
        );
        assert_eq!(
            verdict(&ratio(&few.figure(), &more.figure()).unwrap(), None),
            Verdict::Unranked
        );
    }

    /// A figure whose rounds agree within each run while the whole run
    /// moved by 3 % (the run-level component of the quick suite's groups):
    /// the rounds' interval alone calls it slower; with the run-level term
    /// stored with both figures (1.44 %, mem_lat's) it is "~", and a 10 %
    /// difference is still told.
    #[test]
    fn the_run_level_term_keeps_a_run_shift_the_same_and_tells_a_10_percent_one() {
        let with_term = |m: touchstone_results::Measurement, term: f64| {
            let mut m = m;
            m.summary.rounds = m.summary.rounds.map(|r| r.with_run_level(term));
            m
        };
        for (term, same) in [(0.0, false), (0.0144, true)] {
            let base = with_term(rounds_around("lat", Unit::Ns, &[100.0, 100.4, 99.7]), term);
            let moved = with_term(rounds_around("lat", Unit::Ns, &[103.0, 103.3, 102.8]), term);
            let r = ratio(&base.figure(), &moved.figure()).unwrap();
            let v = verdict(&r, Some(false));
            assert_eq!(v == Verdict::Same, same, "term {term}: {r:?}");
            let slower = with_term(rounds_around("lat", Unit::Ns, &[110.0, 110.3, 109.8]), term);
            let r = ratio(&base.figure(), &slower.figure()).unwrap();
            assert_eq!(
                verdict(&r, Some(false)),
                Verdict::Slower,
                "term {term}: {r:?}"
            );
        }
    }

    /// Over rounds, each run's interval holds the run-to-run variation:
    /// two runs of one machine whose rounds moved by a few per cent are
    /// "~" (their medians' intervals of one round each said "slower");
    /// a 30 % difference is still told.
    #[test]
    fn runs_whose_rounds_vary_alike_are_the_same_and_a_real_difference_is_told() {
        let base = rounds_around("lat", Unit::Ns, &[100.0, 104.0, 98.0]);
        let same = rounds_around("lat", Unit::Ns, &[103.0, 106.0, 101.0]);
        let r = ratio(&base.figure(), &same.figure()).unwrap();
        assert!(r.low < 1.0 && r.high > 1.0, "{r:?}");
        assert_eq!(verdict(&r, Some(false)), Verdict::Same);
        assert!((r.level - 0.95).abs() < 1e-12, "{r:?}");
        // Each run's first round alone, as a run of one round: its tight
        // interval of the median calls the 3 % between them a difference.
        let first = |m: &touchstone_results::Measurement| {
            with_samples("lat", "proc", Unit::Ns, m.samples[..3].to_vec())
        };
        let one = ratio(&first(&base).figure(), &first(&same).figure()).unwrap();
        assert!(one.differs(), "{one:?}");
        let slower = rounds_around("lat", Unit::Ns, &[130.0, 135.0, 128.0]);
        let r = ratio(&base.figure(), &slower.figure()).unwrap();
        assert_eq!(verdict(&r, Some(false)), Verdict::Slower, "{r:?}");
        // A min headline over rounds takes its rounds' interval as is.
        let mut min_base = base.clone();
        min_base.statistic = Statistic::Min;
        min_base.summary = touchstone_results::Summary::of_rounds(
            &min_base.samples,
            &min_base.rounds,
            Statistic::Min,
        )
        .unwrap();
        let r = ratio(&min_base.figure(), &min_base.figure()).unwrap();
        assert_eq!(r.ratio, 1.0);
        assert!(r.low < 1.0 && r.high > 1.0, "{r:?}");
    }

    /// A difference the interval is sure of but which lies inside the 1 %
    /// noise band is no verdict; one beyond it is.
    #[test]
    fn a_sure_difference_inside_the_noise_band_is_the_same() {
        let r = |ratio: f64, low: f64, high: f64| Ratio {
            ratio,
            low,
            high,
            level: 0.95,
        };
        // lat_usleep/select/time:10ms between two quick runs: 0.05 %.
        let sleep = r(0.99953, 0.99931, 0.99976);
        assert!(sleep.differs() && !sleep.beyond_noise());
        assert_eq!(verdict(&sleep, Some(false)), Verdict::Same);
        // The band holds the ratio, not its interval: a 3 % shift whose
        // interval reaches into the band is told; 0.8 % is not.
        let edge = r(1.03, 1.007, 1.099);
        assert_eq!(verdict(&edge, Some(false)), Verdict::Slower);
        let level = r(0.992, 0.9881, 0.9985);
        assert_eq!(verdict(&level, Some(false)), Verdict::Same);
        let real = r(0.83, 0.74, 0.93);
        assert_eq!(verdict(&real, Some(false)), Verdict::Faster);
        assert_eq!(verdict(&real, Some(true)), Verdict::Slower);
        // Units that do not rank keep "differs" on the interval alone.
        assert_eq!(verdict(&sleep, None), Verdict::Unranked);
    }
}
