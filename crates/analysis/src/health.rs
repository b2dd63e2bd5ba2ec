//! Is this host healthy? (`touchstone check`): one run's figures judged
//! against the host's own history and against hosts of the same hardware
//! (`outliers::Hardware`). A figure is a finding — the host is degraded —
//! only when both hold, in the slow direction of its unit:
//!
//! 1. **significance**: the ratio of the figure to the baseline (the
//!    median of the reference figures) has a confidence interval, built as
//!    `compare` builds one from two medians' intervals at 97.5 % each,
//!    that excludes 1;
//! 2. **size**: the figure lies more than `THRESHOLD` (3.5) spreads from
//!    the baseline — the modified z-score of `fleet report`
//!    (`outliers::robust_scores`) — where the spread is the largest of the
//!    reference's 1.4826·MAD, the benchmark's own run-to-run spread on this
//!    host (1.4826·MAD of its figures since its last change point, taken at
//!    its upper 95 % confidence bound for that many runs:
//!    `own_spread_bound`) and `MIN_SPREAD` (1 %) of the baseline.
//!
//! The own history is the host's figures since the last change point
//! E-divisive finds in them (`change_points`), the newest `MAX_OWN_RUNS`
//! of them, and at least `MIN_OWN_RUNS`; the class is the newest run of
//! each other host of the same hardware, at least `outliers::MIN_HOSTS`.
//! docs/reports.md says why these thresholds. Pure functions.

pub mod assess;
pub mod confirm;

use serde::Serialize;
use touchstone_results::Unit;

use crate::change_points::{e_divisive, Options};
use crate::compare::{Ratio, PER_MEDIAN_LEVEL};
use crate::history::median_interval_of;
pub use crate::outliers::{MAD_SCALE, MIN_HOSTS, MIN_SPREAD, THRESHOLD};

/// Fewer figures of the host's own since its last change point than this:
/// its history does not judge (a MAD of fewer says little).
pub const MIN_OWN_RUNS: usize = 5;
/// The own history is at most this many of the newest figures.
pub const MAX_OWN_RUNS: usize = 50;

/// What a figure is judged against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Against {
    /// The host's own figures since its last change point.
    History,
    /// The newest figure of each other host of the same hardware.
    Class,
}

impl Against {
    pub fn name(self) -> &'static str {
        match self {
            Against::History => "history",
            Against::Class => "class",
        }
    }
}

/// The judged figure: its headline and that headline's interval at
/// `PER_MEDIAN_LEVEL` (97.5 %).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Headline {
    pub value: f64,
    pub low: f64,
    pub high: f64,
    pub level: f64,
}

/// One figure against one reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judgement {
    pub against: Against,
    pub value: f64,
    /// The median of the reference figures, and how many there are.
    pub baseline: f64,
    pub n: usize,
    /// The spread the size was judged with, as a fraction of the baseline,
    /// and the host's own run-to-run spread that went into it (if known).
    pub spread: f64,
    pub own_spread: Option<f64>,
    /// figure / baseline, with its interval.
    pub ratio: Ratio,
    /// (figure − baseline) / spread, positive in the slow direction.
    pub score: f64,
    /// Condition 1: the interval excludes 1 on the slow side.
    pub significant: bool,
    /// Condition 2: the score exceeds `THRESHOLD`.
    pub beyond_spread: bool,
}

impl Judgement {
    /// Both conditions: the host is degraded on this figure.
    pub fn degraded(&self) -> bool {
        self.significant && self.beyond_spread
    }

    /// The shift as a fraction (0.31: 31 % above the baseline).
    pub fn shift(&self) -> f64 {
        self.ratio.ratio - 1.0
    }
}

/// The median of sorted figures (the 0.5 quantile: the mean of the middle
/// two of an even count).
fn median(sorted: &[f64]) -> f64 {
    touchstone_results::stats::quantile_sorted(sorted, 0.5)
}

/// 1.4826·MAD of `figures` as a fraction of their median: the robust
/// spread of one host's figures from run to run. None below two figures or
/// a median that is not positive.
pub fn relative_spread(figures: &[f64]) -> Option<f64> {
    if figures.len() < 2 {
        return None;
    }
    let mut s = figures.to_vec();
    s.sort_by(f64::total_cmp);
    let med = median(&s);
    let mut dev: Vec<f64> = s.iter().map(|x| (x - med).abs()).collect();
    dev.sort_by(f64::total_cmp);
    (med > 0.0).then(|| MAD_SCALE * median(&dev) / med)
}

/// Asymptotic efficiency of 1.4826·MAD against the standard deviation as
/// an estimate of a normal spread (Hampel, Rousseeuw and Croux): n figures'
/// MAD says as much about the spread as 0.3675·n figures' standard
/// deviation, so its upper bound takes a chi-square of 0.3675·(n − 1)
/// degrees of freedom.
pub const MAD_EFFICIENCY: f64 = 0.3675;

/// Confidence of the upper bound put on a host's own run-to-run spread.
pub const OWN_SPREAD_BOUND_LEVEL: f64 = 0.95;

/// The host's own run-to-run spread as the history vouches for it: the
/// 1.4826·MAD of its `reference` figures raised to the spread's upper
/// `OWN_SPREAD_BOUND_LEVEL` confidence bound for that many figures
/// (σ̂·√(ν / χ²₀.₀₅(ν)), ν = `MAD_EFFICIENCY`·(n − 1)). A short history
/// cannot vouch for a tight spread: ten runs taken within minutes read
/// `lat_mem_rd/stride:rand/size:64m` at 1.3 % on the development VM while
/// the next check read it 5.6 % slow (and the one after it too) — ten
/// figures' MAD can be a third of the spread the host really has. The bound
/// is about 2.7 × the MAD's spread at 10 runs, 1.6 × at 30, 1.4 × at 50.
/// None as `relative_spread`.
pub fn own_spread_bound(reference: &[f64]) -> Option<f64> {
    let spread = relative_spread(reference)?;
    let nu = MAD_EFFICIENCY * (reference.len() as f64 - 1.0);
    let low = statrs::distribution::ChiSquared::new(nu)
        .ok()
        .map(|c| {
            use statrs::distribution::ContinuousCDF;
            c.inverse_cdf(1.0 - OWN_SPREAD_BOUND_LEVEL)
        })
        .filter(|q| *q > 0.0 && q.is_finite())?;
    Some(spread * (nu / low).sqrt())
}

/// The host's own reference among its figures in time order: those since
/// the last change point, the newest `MAX_OWN_RUNS`. Err with why when
/// fewer than `MIN_OWN_RUNS` remain.
pub fn own_reference(series: &[f64]) -> Result<&[f64], String> {
    let cps = e_divisive(series, &Options::default());
    let start = cps.last().map_or(0, |c| c.index);
    let since = &series[start..];
    let since = &since[since.len().saturating_sub(MAX_OWN_RUNS)..];
    if since.len() < MIN_OWN_RUNS {
        return Err(match cps.last() {
            Some(_) => format!(
                "{} run(s) since its history changed (need {MIN_OWN_RUNS})",
                since.len()
            ),
            None => format!("{} run(s) of this host (need {MIN_OWN_RUNS})", since.len()),
        });
    }
    Ok(since)
}

/// `figure` of a benchmark in `unit` judged against `reference` (see the
/// module's header); `own_spread` the host's run-to-run spread where its
/// history gives one (`own_spread_bound`). None when the unit does not rank (sizes, counts),
/// the reference is empty or its median is not positive.
pub fn judge(
    figure: &Headline,
    unit: Unit,
    reference: &[f64],
    against: Against,
    own_spread: Option<f64>,
) -> Option<Judgement> {
    let higher_is_better = unit.higher_is_better()?;
    let (baseline, b_low, b_high, b_level) = median_interval_of(reference, PER_MEDIAN_LEVEL)?;
    if baseline <= 0.0 || !figure.value.is_finite() {
        return None;
    }
    let r = figure.value / baseline;
    let ratio = Ratio {
        ratio: r,
        low: (if b_high > 0.0 {
            figure.low / b_high
        } else {
            0.0
        })
        .min(r),
        high: (if b_low > 0.0 {
            figure.high / b_low
        } else {
            f64::INFINITY
        })
        .max(r),
        level: (1.0 - (1.0 - b_level) - (1.0 - figure.level)).max(0.0),
    };
    // Against its own history the reference is the host's run-to-run
    // spread, bounded for how few runs there are; against the class it is
    // the hosts' spread as `fleet report` takes it.
    let reference_spread = match against {
        Against::History => own_spread_bound(reference),
        Against::Class => relative_spread(reference),
    };
    let spread = [reference_spread, own_spread, Some(MIN_SPREAD)]
        .into_iter()
        .flatten()
        .fold(0.0, f64::max);
    let slow = if higher_is_better { -1.0 } else { 1.0 };
    let score = slow * (figure.value - baseline) / (spread * baseline);
    let significant = if higher_is_better {
        ratio.high < 1.0
    } else {
        ratio.low > 1.0
    };
    Some(Judgement {
        against,
        value: figure.value,
        baseline,
        n: reference.len(),
        spread,
        own_spread,
        ratio,
        score,
        significant,
        beyond_spread: score > THRESHOLD,
    })
}

#[cfg(test)]
#[path = "health/tests.rs"]
mod tests;
