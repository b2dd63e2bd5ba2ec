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
    /// Summarise `samples`; `None` when there are none or any is not finite.
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

    /// The interval of the figure a statistic selects, with its achieved
    /// coverage: the median's interval for a median headline with at least
    /// two samples; `None` for one sample (a zero-width "interval" says
    /// nothing) and for a min or max headline (see the module's note).
    pub fn headline_interval(&self, stat: Statistic) -> Option<HeadlineInterval> {
        (stat == Statistic::Median && self.n >= 2 && self.ci_level > 0.0).then_some(
            HeadlineInterval {
                low: self.ci_low,
                high: self.ci_high,
                level: self.ci_level,
            },
        )
    }

    /// The figure a statistic selects.
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

    #[test]
    fn rejects_empty_and_non_finite() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }
}
