//! Summary statistics of a measurement's samples.
//!
//! The headline is the median (timing samples are skewed by scheduling, see
//! the lmbench3 paper, "Data analysis"). Its 95 % confidence interval is
//! distribution-free: the order statistics x(j) and x(n-j+1) bracket the
//! median with probability P(j <= B <= n-j), B ~ Binomial(n, 1/2) — the
//! classic sign-test interval, which assumes nothing about the shape of the
//! distribution. With fewer than 6 samples no pair reaches 95 %; the widest
//! pair (min, max) is used and its real coverage is recorded (75 % at n = 3,
//! 50 % at n = 2). touchstone honours the repetitions asked for rather than
//! silently taking more: the achieved level is stored (`ci_level`) and
//! printed beside the interval whenever it falls below the nominal 95 %.
//! One sample has no interval at all (`ci_level` 0).
//!
//! The interval is the median's. A headline that is a minimum or a maximum
//! (a physical limit: the fastest pass, the highest clock) has no
//! distribution-free interval from its own samples — the extreme of n draws
//! is not bracketed by any pair of them with a known probability — so such
//! a figure is shown with none (`Summary::headline_interval`), never with the
//! median's under its heading.
//!
//! Measured in rounds (fresh processes, fresh memory, the cases interleaved
//! in a shuffled order: `RoundSummary`), a figure's headline is the median
//! of its rounds' figures and its interval is built over those rounds, so
//! that it covers what another run of the same machine would report — the
//! variation between rounds (where memory landed, which CPUs the scheduler
//! chose, what ran just before) is in it, not only the noise within one
//! process. The rounds of one run still share what the next run does not
//! (what the host's other tenants do to the shared cache, the frequency and
//! CPUs of that minute): a run-level term measured on the development
//! machine (`run_level_spread`) is added to the interval and stored with
//! the figure (`RoundSummary::run_level`).

use serde::{Deserialize, Serialize};

/// Which statistic is a measurement's headline figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Statistic {
    /// The representative figure (default, as lmbench).
    #[default]
    Median,
    /// The best case, for benchmarks that look for a physical limit (mhz).
    Min,
    Max,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// First and third quartiles (linear interpolation between order statistics).
    pub q1: f64,
    pub q3: f64,
    pub mean: f64,
    /// Distribution-free confidence interval of the median.
    pub ci_low: f64,
    pub ci_high: f64,
    /// The interval's actual coverage probability (>= 0.95 when n >= 6).
    pub ci_level: f64,
    /// The figure measured in rounds: each round's figure, the headline
    /// over rounds and its interval. Absent for one round (and in documents
    /// written before rounds existed): the headline is then the statistic
    /// of the samples above, and its interval the median's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<RoundSummary>,
}

/// A figure measured in rounds (results format 3): each round its own
/// processes and memory, the cases of a run interleaved in a shuffled order,
/// so that each round samples anew what differs from one run to the next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundSummary {
    /// Each round's figure (the measurement's statistic of that round's
    /// samples), in round order.
    pub figures: Vec<f64>,
    /// The median of the rounds' figures: the measurement's headline.
    pub headline: f64,
    /// The interval over the rounds alone (a prediction interval over
    /// rounds, see `RoundSummary::of_figures`): what the rounds of this run
    /// see. The interval shown and compared adds `run_level` to it
    /// (`RoundSummary::interval`).
    pub low: f64,
    pub high: f64,
    /// Its nominal level (0.95).
    pub level: f64,
    /// The run-level spread: the standard deviation, on a log scale (0.0144
    /// is 1.44 %), of what moves a whole run's figures and that its rounds
    /// cannot see, for the figure's report group (`run_level_spread`). 0 in
    /// documents written before it (their interval is the rounds' alone).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub run_level: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// The run-level spread of each report group (a log-scale standard
/// deviation), measured on the 2-CPU development VM: six sittings of five
/// back-to-back `run --quick` (3 rounds each; /tmp/quiet-quick.{HWz0JR,
/// qBPteT,xt45Wy} 07:42–07:55 and quiet-repeat.{Wz5E1d,cnt1H5,FB7dwb}
/// 23:32, 02:05, 04:40 on 26–27 Nov 2026; /work/notes/runvar/fit.py). Per
/// figure, two runs' headlines differ by d with variance
/// 2·((π/2)·s_w²/k + σ²), s_w the rounds' spread within a run; σ is the
/// least value at which the 95th percentile of d² / that variance, over
/// the group's pairs, is χ²(1)'s (3.84): the spread between runs in the
/// tail the rounds miss, not in the bulk they already cover (there the
/// rounds' term alone fits: the median of the same ratio needs σ = 0). A
/// group whose rounds already cover the runs' differences has none
/// (comm_bw, ctx). `fs_lat` leaves out `lat_fs/create`, which fell run by
/// run (state one run leaves to the next, a drift rather than a spread: its
/// fit alone would be 14.9 %). Groups the quick suite does not measure
/// (file_io, workload, app) have none. Fitted on five of the six sittings,
/// the term raised the sixth's coverage from 88.4–93.3 % to 93.2–97.0 %
/// (docs/validation.md).
pub const RUN_LEVEL_SPREAD: &[(&str, f64)] = &[
    ("comm_bw", 0.0),
    ("comm_lat", 0.0037),
    ("cpu", 0.0068),
    ("ctx", 0.0),
    ("fs_lat", 0.0178),
    ("harness", 0.0097),
    ("mem_bw", 0.0263),
    ("mem_lat", 0.0144),
    ("proc", 0.0083),
];

/// The machine-wide part of the run-level spread (a log-scale standard
/// deviation): what moves every group of a run together, so that it does
/// not average out over groups as their own terms do. Per run, the mean over
/// report groups (harness left out) of each group's mean log speed-up from
/// its sitting's mean; its standard deviation across the five runs was 0.93,
/// 2.45, 2.55, 0.83, 0.83 and 1.26 % in the six sittings of
/// `RUN_LEVEL_SPREAD` (/work/notes/runvar/machine.py); this is their root
/// mean square. The overall index adds it (`touchstone_analysis::index`)
/// where the runs' figures carry a run-level term.
pub const MACHINE_RUN_LEVEL_SPREAD: f64 = 0.0165;

/// The run-level spread of figures whose working set lies in a cache that a
/// virtual machine shares with the host's other tenants (past the guest's
/// largest cache below its last-level cache, within twice the last-level
/// cache: `Shape::tenants_share_cache`), per report group. The rounds of one
/// run share what the other tenants are doing to that cache that minute; the
/// next run does not: on the development VM (private L2 1 MiB, L3 32 MiB
/// shared with the host) a random chain over 8 or 12 MiB read 6-8 times
/// faster in one run than in the next, every round alike. Fitted as
/// `RUN_LEVEL_SPREAD` (the 95th percentile of the pairs' d² over their
/// variance is χ²(1)'s) on the figures of that region in ten sittings of
/// five quick runs, 27 Nov 2026 02:05-12:30 (/tmp/quiet-repeat.{cnt1H5,
/// FB7dwb}, /tmp/quiet-runvar.{RTscDX,fXI35E,uJxh8t,IsYq66,HzRpEt,tPDGhM,
/// 0m961S,t2MEep}; /work/notes/pool/llc.py). Each sitting left out of the
/// fit in turn, the region's coverage rose from 90.0-95.1 % to 94.3-98.3 %
/// (the rest's, unchanged, 93.1-98.8 %); on the 16-CPU Intel guest (L2
/// 2 MiB private, L3 300 MiB), no part of the fit, from 95.8 and 90.8 % to
/// 99.1 and 97.4 % (docs/validation.md).
pub const SHARED_CACHE_RUN_LEVEL_SPREAD: &[(&str, f64)] =
    &[("mem_bw", 0.0362), ("mem_lat", 0.1035)];

/// The run-level spread of a figure of report group `group`
/// (`RUN_LEVEL_SPREAD`; 0 for a group not measured there), or, when its
/// working set lies in a cache the host's other tenants share
/// (`tenants_share_cache`), the group's `SHARED_CACHE_RUN_LEVEL_SPREAD`
/// where one was measured.
pub fn run_level_spread(group: &str, tenants_share_cache: bool) -> f64 {
    let of = |table: &[(&str, f64)]| table.iter().find(|(g, _)| *g == group).map(|&(_, s)| s);
    let shared = tenants_share_cache
        .then(|| of(SHARED_CACHE_RUN_LEVEL_SPREAD))
        .flatten();
    shared.or_else(|| of(RUN_LEVEL_SPREAD)).unwrap_or(0.0)
}

/// √(π/2): the standard error of a median of k draws is about this many
/// times that of their mean (exactly so as k grows; 1.16–1.22 at k = 3–9,
/// so the factor errs wide).
const MEDIAN_EFFICIENCY: f64 = 1.253_314_137_315_500_3;

impl RoundSummary {
    /// The rounds of `samples` (`rounds[i]` is the round of `samples[i]`):
    /// each round's figure is `stat` of its samples. None with fewer than
    /// two rounds, or when the lists differ in length.
    pub fn of(samples: &[f64], rounds: &[u32], stat: Statistic) -> Option<RoundSummary> {
        if rounds.len() != samples.len() {
            return None;
        }
        let mut by_round: std::collections::BTreeMap<u32, Vec<f64>> = Default::default();
        for (&x, &r) in samples.iter().zip(rounds) {
            by_round.entry(r).or_default().push(x);
        }
        let figures: Vec<f64> = by_round
            .into_values()
            .map(|mut v| {
                v.sort_by(f64::total_cmp);
                match stat {
                    Statistic::Median => quantile_sorted(&v, 0.5),
                    Statistic::Min => v[0],
                    Statistic::Max => v[v.len() - 1],
                }
            })
            .collect();
        RoundSummary::of_figures(figures)
    }

    /// The headline and interval of rounds' figures. The headline H is
    /// their median. The interval is where another run of as many rounds
    /// should put its headline H′, at 95 %: H and H′ each vary as the
    /// median of k round figures, so ln H − ln H′ has about
    /// 2 · (π/2) · s² / k variance, s² the variance of the log figures
    /// between rounds, estimated from the k figures (Student's t with k − 1
    /// degrees of freedom):
    ///
    ///   H · exp(± t(0.975, k − 1) · s · √(π/k))
    ///
    /// Logarithms because the spread of a time or a rate scales with it (a
    /// ratio interval then follows by subtraction); a figure that is zero
    /// or negative in any round takes the same interval on the linear
    /// scale. Identical rounds give a zero-width interval: a count that
    /// never changed.
    pub fn of_figures(figures: Vec<f64>) -> Option<RoundSummary> {
        let (headline, low, high) = interval(&figures, NOMINAL_LEVEL, 0.0)?;
        Some(RoundSummary {
            figures,
            headline,
            low,
            high,
            level: NOMINAL_LEVEL,
            run_level: 0.0,
        })
    }

    /// The same rounds with a run-level spread `sigma` (see `run_level`):
    /// `low` and `high` stay the rounds' own.
    pub fn with_run_level(mut self, sigma: f64) -> RoundSummary {
        self.run_level = if sigma.is_finite() {
            sigma.max(0.0)
        } else {
            0.0
        };
        self
    }

    /// The interval shown and compared: the rounds' term and the run-level
    /// term added in quadrature on the log scale,
    ///
    ///   H · exp(± √((t(0.975, k − 1) · s · √(π/k))² + (z(0.975) · √2 · σ)²))
    ///
    /// σ the run-level spread (two runs each add their own: √2). With no
    /// run-level term it is `low`, `high`. Identical rounds keep no width:
    /// a count that never changed.
    pub fn interval(&self) -> (f64, f64) {
        match interval(&self.figures, self.level, self.run_level) {
            Some((_, low, high)) if self.run_level > 0.0 => (low, high),
            _ => (self.low, self.high),
        }
    }

    /// Adopt `stored`'s run-level spread (a document read back: the rounds
    /// are recomputed from the samples, the run-level term is not theirs to
    /// give). An error names a spread that is not a finite share in [0, 1).
    pub fn keep_run_level_of(&mut self, stored: &RoundSummary) -> Result<(), String> {
        let s = stored.run_level;
        if !(s.is_finite() && (0.0..1.0).contains(&s)) {
            return Err(format!("{s} is not a run-level spread (0 to 1)"));
        }
        self.run_level = s;
        Ok(())
    }

    /// The total width of the interval `of_figures` builds, at `confidence`
    /// instead of 95 %, as a fraction of the headline (`run --converge`);
    /// None below two rounds or for a headline of zero.
    pub fn width_at(figures: &[f64], confidence: f64) -> Option<f64> {
        let (headline, low, high) = interval(figures, confidence, 0.0)?;
        (headline != 0.0).then(|| (high - low) / headline.abs())
    }

    /// (headline, low, high) of the interval `RoundSummary::interval`
    /// builds, at `confidence` instead of 95 %, with run-level spread
    /// `run_level` (0: the rounds' alone).
    pub fn interval_at(
        figures: &[f64],
        confidence: f64,
        run_level: f64,
    ) -> Option<(f64, f64, f64)> {
        interval(figures, confidence, run_level)
    }
}

/// (headline, low, high) of rounds' figures at `confidence` with a
/// run-level spread `run_level` (see `RoundSummary::of_figures` and
/// `RoundSummary::interval`).
fn interval(figures: &[f64], confidence: f64, run_level: f64) -> Option<(f64, f64, f64)> {
    let k = figures.len();
    if k < 2 || figures.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mut sorted = figures.to_vec();
    sorted.sort_by(f64::total_cmp);
    let headline = quantile_sorted(&sorted, 0.5);
    if sorted[0] == sorted[k - 1] {
        // Exactly: the logarithms would leave a rounding error's width.
        return Some((headline, headline, headline));
    }
    let t = crate::convergence::t_quantile(confidence, k - 1);
    let factor = t * MEDIAN_EFFICIENCY * (2.0 / k as f64).sqrt();
    // Two runs each move by the run-level term: √2 σ, at the normal quantile.
    let run = normal_quantile(confidence) * std::f64::consts::SQRT_2 * run_level.max(0.0);
    let with_run = |rounds: f64| rounds.hypot(run);
    Some(if figures.iter().all(|&x| x > 0.0) {
        let logs: Vec<f64> = figures.iter().map(|x| x.ln()).collect();
        let (_, sd) = crate::convergence::mean_sd(&logs);
        let half = with_run(factor * sd);
        (headline, headline * (-half).exp(), headline * half.exp())
    } else {
        // On the linear scale the run-level term is a share of the headline.
        let (_, sd) = crate::convergence::mean_sd(figures);
        let half = (factor * sd).hypot(run * headline.abs());
        (headline, headline - half, headline + half)
    })
}

/// The two-sided normal quantile for `confidence` (1.96 at 95 %).
fn normal_quantile(confidence: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::new(0.0, 1.0)
        .expect("the standard normal")
        .inverse_cdf(0.5 + confidence / 2.0)
}

/// The nominal level of every interval touchstone prints: the narrowest
/// order-statistic pair reaching at least this coverage is chosen.
pub const NOMINAL_LEVEL: f64 = 0.95;

/// A headline figure's confidence interval and the coverage it reaches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeadlineInterval {
    pub low: f64,
    pub high: f64,
    /// Achieved coverage (a fraction): at least `NOMINAL_LEVEL` from six
    /// samples on, less below.
    pub level: f64,
}

impl HeadlineInterval {
    /// Whether the interval falls short of the nominal level (too few
    /// samples), so the level must be printed beside it.
    pub fn below_nominal(&self) -> bool {
        self.level + 1e-12 < NOMINAL_LEVEL
    }
}

impl Summary {
    /// Summarise `samples` measured in `rounds` (the round of each sample;
    /// empty: one round), each round's figure being `stat` of its samples.
    pub fn of_rounds(samples: &[f64], rounds: &[u32], stat: Statistic) -> Option<Summary> {
        let mut s = Summary::of(samples)?;
        s.rounds = RoundSummary::of(samples, rounds, stat);
        Some(s)
    }

    /// Summarise `samples` of one round; `None` when there are none or any
    /// is not finite.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let (lo, hi, level) = median_ci_ranks(n, NOMINAL_LEVEL);
        Some(Summary {
            n,
            median: quantile_sorted(&s, 0.5),
            min: s[0],
            max: s[n - 1],
            q1: quantile_sorted(&s, 0.25),
            q3: quantile_sorted(&s, 0.75),
            mean: s.iter().sum::<f64>() / n as f64,
            ci_low: s[lo],
            ci_high: s[hi],
            ci_level: level,
            rounds: None,
        })
    }

    /// Half the confidence interval's width relative to the median, the
    /// figure the "CI wider than 5 %" check uses.
    pub fn relative_ci_halfwidth(&self) -> f64 {
        if self.median == 0.0 {
            return f64::INFINITY;
        }
        (self.ci_high - self.ci_low) / 2.0 / self.median.abs()
    }

    /// The interval of the headline, with its level: measured in rounds,
    /// the interval over rounds (whatever the statistic); otherwise the
    /// median's interval for a median headline with at least two samples,
    /// and `None` for one sample (a zero-width "interval" says nothing) and
    /// for a min or max headline (see the module's note).
    pub fn headline_interval(&self, stat: Statistic) -> Option<HeadlineInterval> {
        if let Some(r) = &self.rounds {
            let (low, high) = r.interval();
            return Some(HeadlineInterval {
                low,
                high,
                level: r.level,
            });
        }
        (stat == Statistic::Median && self.n >= 2 && self.ci_level > 0.0).then_some(
            HeadlineInterval {
                low: self.ci_low,
                high: self.ci_high,
                level: self.ci_level,
            },
        )
    }

    /// The headline: over rounds, the median of the rounds' figures;
    /// otherwise the figure `stat` selects among the samples.
    pub fn headline(&self, stat: Statistic) -> f64 {
        match &self.rounds {
            Some(r) => r.headline,
            None => self.get(stat),
        }
    }

    /// The figure a statistic selects among the samples (all rounds pooled).
    pub fn get(&self, stat: Statistic) -> f64 {
        match stat {
            Statistic::Median => self.median,
            Statistic::Min => self.min,
            Statistic::Max => self.max,
        }
    }
}

/// Quantile `p` of sorted data by linear interpolation (Hyndman & Fan type 7).
pub fn quantile_sorted(s: &[f64], p: f64) -> f64 {
    let n = s.len();
    if n == 1 {
        return s[0];
    }
    let h = (n - 1) as f64 * p;
    let i = h.floor() as usize;
    let frac = h - i as f64;
    if i + 1 >= n {
        s[n - 1]
    } else {
        s[i] + frac * (s[i + 1] - s[i])
    }
}

/// Zero-based ranks (lo, hi) of the narrowest symmetric order-statistic
/// interval covering the median with probability >= `level`, and its coverage.
/// Below the sample count that reaches `level`, the widest pair (min, max)
/// and its smaller coverage; one sample: (0, 0) with coverage 0.
pub fn median_ci_ranks(n: usize, level: f64) -> (usize, usize, f64) {
    if n < 2 {
        return (0, 0, 0.0);
    }
    // coverage(j) = P(j <= B <= n - j) for 1-based rank j.
    let pmf = binomial_half_pmf(n);
    let coverage = |j: usize| -> f64 { (j..=n - j).map(|i| pmf[i]).sum() };
    let mut best = (1usize, coverage(1));
    let mut j = 2;
    while 2 * j <= n + 1 {
        let c = coverage(j);
        if c + 1e-12 < level {
            break;
        }
        best = (j, c);
        j += 1;
    }
    (best.0 - 1, n - best.0, best.1)
}

/// P(B = i) for B ~ Binomial(n, 1/2), computed in log space so large n is fine.
fn binomial_half_pmf(n: usize) -> Vec<f64> {
    let ln_fact: Vec<f64> = std::iter::once(0.0)
        .chain((1..=n).scan(0.0, |acc, k| {
            *acc += (k as f64).ln();
            Some(*acc)
        }))
        .collect();
    let ln_half_n = n as f64 * 0.5f64.ln();
    (0..=n)
        .map(|i| (ln_fact[n] - ln_fact[i] - ln_fact[n - i] + ln_half_n).exp())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eleven_samples_use_second_and_tenth_order_statistics() {
        let (lo, hi, level) = median_ci_ranks(11, 0.95);
        assert_eq!((lo, hi), (1, 9));
        assert!((level - (1.0 - 24.0 / 2048.0)).abs() < 1e-9, "{level}");
    }

    #[test]
    fn small_samples_fall_back_to_min_max_with_true_coverage() {
        let (lo, hi, level) = median_ci_ranks(5, 0.95);
        assert_eq!((lo, hi), (0, 4));
        assert!((level - 0.9375).abs() < 1e-9);
    }

    #[test]
    fn coverage_is_at_least_95_percent_from_six_samples() {
        for n in 6..200 {
            let (lo, hi, level) = median_ci_ranks(n, NOMINAL_LEVEL);
            assert!(level >= 0.95, "n={n} level={level}");
            assert!(lo <= hi && hi < n);
            // and the next narrower interval would fall short
            if lo + 1 < hi - 1 {
                let pmf = binomial_half_pmf(n);
                let narrower: f64 = (lo + 2..=n - lo - 2).map(|i| pmf[i]).sum();
                assert!(narrower < 0.95, "n={n}");
            }
        }
    }

    #[test]
    fn summary_of_known_data() {
        let s = Summary::of(&[5.0, 1.0, 4.0, 2.0, 3.0, 9.0, 7.0, 6.0, 8.0, 10.0, 11.0]).unwrap();
        assert_eq!(s.median, 6.0);
        assert_eq!((s.min, s.max), (1.0, 11.0));
        assert_eq!((s.q1, s.q3), (3.5, 8.5));
        assert_eq!((s.ci_low, s.ci_high), (2.0, 10.0));
        assert_eq!(s.mean, 6.0);
    }

    /// Recorded from the issue: at `-r 3` the printed "95 % CI of median"
    /// covered only 75 %; the summary must carry that level.
    #[test]
    fn three_samples_reach_only_75_percent_and_say_so() {
        let s = Summary::of(&[10.0, 12.0, 11.0]).unwrap();
        assert!((s.ci_level - 0.75).abs() < 1e-12, "{}", s.ci_level);
        let i = s.headline_interval(Statistic::Median).unwrap();
        assert_eq!((i.low, i.high), (10.0, 12.0));
        assert!(i.below_nominal());
        let seven = Summary::of(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]).unwrap();
        assert!(!seven
            .headline_interval(Statistic::Median)
            .unwrap()
            .below_nominal());
    }

    #[test]
    fn one_sample_has_no_interval() {
        let s = Summary::of(&[42.0]).unwrap();
        assert_eq!(s.ci_level, 0.0);
        assert_eq!(s.headline_interval(Statistic::Median), None);
    }

    #[test]
    fn a_min_or_max_headline_has_no_interval_of_the_median() {
        let s = Summary::of(&[5.0, 1.0, 4.0, 2.0, 3.0, 9.0, 7.0, 6.0, 8.0, 10.0, 11.0]).unwrap();
        assert!(s.headline_interval(Statistic::Median).is_some());
        assert_eq!(s.headline_interval(Statistic::Min), None);
        assert_eq!(s.headline_interval(Statistic::Max), None);
    }

    /// A small seeded generator of normal draws (SplitMix64 and
    /// Box–Muller), so the coverage tests need no dependency and never change.
    struct Normal(crate::random::SplitMix64);
    impl Normal {
        fn new(seed: u64) -> Normal {
            Normal(crate::random::SplitMix64::new(seed))
        }
        /// Uniform in (0, 1): never 0, whose logarithm Box–Muller takes.
        fn uniform(&mut self) -> f64 {
            ((self.0.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        fn draw(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
    }

    /// The interval over rounds is what it claims: with round figures that
    /// vary between rounds (5 % on a log scale), one run's interval holds
    /// another run's headline in about 95 % of pairs, at 3, 5 and 9 rounds.
    #[test]
    fn the_interval_over_rounds_covers_another_runs_headline() {
        let mut g = Normal::new(0x9e37_79b9_7f4a_7c15);
        for k in [3usize, 5, 9] {
            let mut run = || {
                let figures = (0..k).map(|_| 100.0 * (0.05 * g.draw()).exp()).collect();
                RoundSummary::of_figures(figures).unwrap()
            };
            let pairs = 4000;
            let covered = (0..pairs)
                .filter(|_| {
                    let (a, b) = (run(), run());
                    a.low <= b.headline && b.headline <= a.high
                })
                .count();
            let share = covered as f64 / pairs as f64;
            assert!((0.93..=0.99).contains(&share), "k={k}: {share}");
        }
    }

    /// Runs whose figures all move by a run-level shift (2 % on a log
    /// scale) that their rounds (1 %) cannot see: the rounds' interval
    /// alone holds another run's headline far below 95 %; with the
    /// run-level term it holds it at about its level.
    #[test]
    fn the_run_level_term_covers_a_shift_the_rounds_cannot_see() {
        let mut g = Normal::new(0x2545_f491_4f6c_dd1d);
        let mut run = || {
            let shift = 0.02 * g.draw();
            let figures = (0..3)
                .map(|_| 100.0 * (shift + 0.01 * g.draw()).exp())
                .collect();
            RoundSummary::of_figures(figures).unwrap()
        };
        let pairs = 4000;
        let (mut rounds_only, mut with_term) = (0, 0);
        for _ in 0..pairs {
            let (a, b) = (run(), run());
            rounds_only += (a.low <= b.headline && b.headline <= a.high) as usize;
            let (low, high) = a.with_run_level(0.02).interval();
            with_term += (low <= b.headline && b.headline <= high) as usize;
        }
        let before = rounds_only as f64 / pairs as f64;
        let after = with_term as f64 / pairs as f64;
        assert!(before < 0.90, "the rounds alone: {before}");
        assert!(
            (0.93..=0.995).contains(&after),
            "with the run-level term: {after}"
        );
    }

    /// The run-level term widens the shown interval in quadrature, keeps
    /// the rounds' own `low` and `high`, and is stored only when there is
    /// one: a document written before it reads back with none, its
    /// interval as before.
    #[test]
    fn the_run_level_term_is_stored_beside_the_rounds_interval() {
        let r = RoundSummary::of_figures(vec![99.0, 100.0, 101.0]).unwrap();
        assert_eq!(r.run_level, 0.0);
        assert_eq!(r.interval(), (r.low, r.high));
        let json = serde_json::to_string(&r).unwrap();
        assert!(!json.contains("run_level"), "{json}");
        let old: RoundSummary = serde_json::from_str(&json).unwrap();
        assert_eq!(old, r);
        let w = r.clone().with_run_level(0.02);
        assert_eq!((w.low, w.high), (r.low, r.high));
        let (low, high) = w.interval();
        let rounds_half = (r.high / r.headline).ln();
        let run_half = 1.959_964 * std::f64::consts::SQRT_2 * 0.02;
        let half = rounds_half.hypot(run_half);
        assert!(((high / w.headline).ln() - half).abs() < 1e-6, "{high}");
        assert!(((w.headline / low).ln() - half).abs() < 1e-6, "{low}");
        let back: RoundSummary = serde_json::from_str(&serde_json::to_string(&w).unwrap()).unwrap();
        assert_eq!(back.run_level, 0.02);
        // The shown interval is the one with the term.
        let s = Summary {
            rounds: Some(w.clone()),
            ..Summary::of(&[99.0, 100.0, 101.0]).unwrap()
        };
        let i = s.headline_interval(Statistic::Median).unwrap();
        assert_eq!((i.low, i.high), (low, high));
        // Read back, the term is the stored one's, and must be a spread.
        let mut fresh = RoundSummary::of_figures(vec![99.0, 100.0, 101.0]).unwrap();
        fresh.keep_run_level_of(&w).unwrap();
        assert_eq!(fresh, w);
        let bad = RoundSummary {
            run_level: f64::NAN,
            ..w.clone()
        };
        assert!(fresh.keep_run_level_of(&bad).is_err());
        // Identical rounds stay a count that never changed.
        let same = RoundSummary::of_figures(vec![7.0; 3])
            .unwrap()
            .with_run_level(0.02);
        assert_eq!(same.interval(), (7.0, 7.0));
        // Every group the quick suite measures has its term; others none.
        assert_eq!(run_level_spread("mem_bw", false), 0.0263);
        assert_eq!(run_level_spread("workload", false), 0.0);
        // A working set in a cache the host's other tenants share takes the
        // term measured for such figures, where there is one.
        assert_eq!(run_level_spread("mem_lat", true), 0.1035);
        assert_eq!(run_level_spread("mem_bw", true), 0.0362);
        assert_eq!(
            run_level_spread("proc", true),
            run_level_spread("proc", false)
        );
        assert_eq!(run_level_spread("workload", true), 0.0);
        for (g, _) in RUN_LEVEL_SPREAD {
            assert!(crate::groups::GROUPS.iter().any(|x| x.name == *g), "{g}");
        }
    }

    #[test]
    fn rounds_are_summarised_by_their_own_statistic() {
        // Three rounds of three: round figures 2, 12, 22 by median; 1, 11,
        // 21 by minimum. The headline is their median.
        let samples = [1.0, 2.0, 3.0, 11.0, 12.0, 13.0, 21.0, 22.0, 23.0];
        let rounds = [0, 0, 0, 1, 1, 1, 2, 2, 2];
        let med = Summary::of_rounds(&samples, &rounds, Statistic::Median).unwrap();
        let r = med.rounds.as_ref().unwrap();
        assert_eq!(r.figures, [2.0, 12.0, 22.0]);
        assert_eq!(med.headline(Statistic::Median), 12.0);
        let min = Summary::of_rounds(&samples, &rounds, Statistic::Min).unwrap();
        assert_eq!(min.rounds.as_ref().unwrap().figures, [1.0, 11.0, 21.0]);
        assert_eq!(min.headline(Statistic::Min), 11.0);
        // The pooled figures are kept beside them.
        assert_eq!((min.min, min.median), (1.0, 12.0));
        // A min headline measured in rounds has an interval: the rounds'.
        let i = min.headline_interval(Statistic::Min).unwrap();
        assert!(i.low < 11.0 && i.high > 11.0 && i.level == 0.95, "{i:?}");
        // One round is no rounds: as before.
        let one = Summary::of_rounds(&samples, &[0; 9], Statistic::Min).unwrap();
        assert_eq!(one.rounds, None);
        assert_eq!(one.headline_interval(Statistic::Min), None);
        assert_eq!(
            Summary::of_rounds(&samples, &[], Statistic::Min),
            Summary::of(&samples)
        );
    }

    #[test]
    fn identical_rounds_have_an_interval_of_no_width() {
        let s = Summary::of_rounds(&[6.0; 6], &[0, 0, 1, 1, 2, 2], Statistic::Median).unwrap();
        let r = s.rounds.unwrap();
        assert_eq!((r.low, r.headline, r.high), (6.0, 6.0, 6.0));
        // A figure of zero in a round: the same interval on a linear scale.
        let z = RoundSummary::of_figures(vec![0.0, 1.0, 2.0]).unwrap();
        assert!(z.low < 0.0 && z.high > 2.0, "{z:?}");
    }

    #[test]
    fn rejects_empty_and_non_finite() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }
}
