//! When to stop repeating trials of a load point (seed 003: "Trials are
//! repeated until the tests have converged"). The rule is netperf's
//! `-I lvl,width` convention: the Student-t confidence interval of the MEAN
//! throughput over trials, at `confidence`, must have a total width (upper
//! minus lower bound) of at most `width` of the mean. A pure function of the
//! series so far, so the engine and the tests ask the same question.
//!
//! A first trial that still shows warm-up (caches, the host's idle
//! handling, TCP autotuning settling) is dropped once: it must lie below the
//! rest's one-sided prediction bound at the same confidence (statistically
//! below) and by more than half the target width (practically below: a
//! deviation smaller than that could not decide convergence anyway).

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// How trials are repeated at one point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// Confidence level as a fraction, e.g. 0.95.
    pub confidence: f64,
    /// Target total width of the interval as a fraction of the mean, e.g. 0.05.
    pub width: f64,
    /// Trials kept (after a dropped warm-up trial) before convergence may be declared.
    pub min_trials: usize,
    /// Trials run at most, a dropped one included.
    pub max_trials: usize,
}

pub const DEFAULT_MIN_TRIALS: usize = 3;
pub const DEFAULT_MAX_TRIALS: usize = 10;

impl Default for Rule {
    /// `95,5`: 95 % confidence, 5 % total width; 3 to 10 trials.
    fn default() -> Rule {
        Rule {
            confidence: 0.95,
            width: 0.05,
            min_trials: DEFAULT_MIN_TRIALS,
            max_trials: DEFAULT_MAX_TRIALS,
        }
    }
}

impl Rule {
    /// Parse `confidence,width` in percent, as netperf's `-I 95,5`.
    pub fn parse(text: &str) -> Result<Rule, String> {
        let (c, w) = text.split_once(',').ok_or_else(|| {
            format!("convergence '{text}': expected CONFIDENCE,WIDTH in percent, e.g. 95,5")
        })?;
        let num = |s: &str, what: &str| {
            s.trim()
                .trim_end_matches('%')
                .parse::<f64>()
                .map_err(|_| format!("convergence '{text}': {what} '{s}' is not a number"))
        };
        let rule = Rule {
            confidence: num(c, "confidence")? / 100.0,
            width: num(w, "width")? / 100.0,
            ..Rule::default()
        };
        rule.validate()?;
        Ok(rule)
    }

    /// Check the bounds once, before anything runs.
    pub fn validate(&self) -> Result<(), String> {
        // At 50 % or less an interval says less than a coin toss would.
        if !(self.confidence > 0.5 && self.confidence < 1.0) {
            return Err(format!(
                "convergence confidence {} % must lie strictly between 50 and 100 % (e.g. 95,5)",
                self.confidence * 100.0
            ));
        }
        if !(self.width > 0.0 && self.width <= 1.0) {
            return Err(format!(
                "convergence width {} % must be above 0 and at most 100 % of the mean",
                self.width * 100.0
            ));
        }
        if self.min_trials < 2 {
            return Err("convergence needs at least 2 trials for an interval".into());
        }
        if self.max_trials < self.min_trials {
            return Err(format!(
                "at most {} trials is fewer than the minimum of {}",
                self.max_trials, self.min_trials
            ));
        }
        Ok(())
    }
}

/// What to do after the trials so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Run another trial.
    More,
    /// The interval is narrow enough.
    Converged,
    /// `max_trials` ran and the interval is still too wide: flag the point.
    NotConverged,
}

/// The rule applied to a series of trial throughputs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Assessment {
    pub verdict: Verdict,
    /// The first trial was set aside as warm-up.
    pub dropped_first: bool,
    /// Trials the figures below are computed from.
    pub kept: usize,
    /// Mean throughput of the kept trials.
    pub mean: f64,
    /// Half the confidence interval, in the series' unit (infinite below 2 trials).
    pub half_width: f64,
    /// The interval's total width as a fraction of the mean (what `Rule::width` bounds).
    pub width: f64,
}

/// The two-sided Student-t quantile for `confidence` with `df` degrees of freedom.
pub fn t_quantile(confidence: f64, df: usize) -> f64 {
    let t = StudentsT::new(0.0, 1.0, df.max(1) as f64).expect("df >= 1 is a valid t distribution");
    t.inverse_cdf(0.5 + confidence / 2.0)
}

/// Mean and sample standard deviation.
pub fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, f64::NAN);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// The Student-t confidence interval of the mean: (mean, half width).
pub fn mean_interval(xs: &[f64], confidence: f64) -> (f64, f64) {
    let (mean, sd) = mean_sd(xs);
    if xs.len() < 2 {
        return (mean, f64::INFINITY);
    }
    let half = t_quantile(confidence, xs.len() - 1) * sd / (xs.len() as f64).sqrt();
    (mean, half)
}

/// Whether `first` shows warm-up against `rest`: below the rest's one-sided
/// lower prediction bound for a new trial (mean − t·s·√(1 + 1/n)) and more
/// than half the target width below the rest's mean.
pub fn is_warmup(first: f64, rest: &[f64], rule: &Rule) -> bool {
    if rest.len() < 2 {
        return false;
    }
    let (mean, sd) = mean_sd(rest);
    let n = rest.len() as f64;
    // One-sided at `confidence` = two-sided at 2·confidence − 1.
    let t = t_quantile(2.0 * rule.confidence - 1.0, rest.len() - 1);
    let lower = mean - t * sd * (1.0 + 1.0 / n).sqrt();
    first < lower && first < mean * (1.0 - rule.width / 2.0)
}

/// Apply `rule` to the throughputs of the trials run so far, in order.
pub fn assess(rule: &Rule, series: &[f64]) -> Assessment {
    let dropped_first = series.len() > rule.min_trials && is_warmup(series[0], &series[1..], rule);
    let kept = if dropped_first { &series[1..] } else { series };
    let (mean, half_width) = if kept.is_empty() {
        (f64::NAN, f64::INFINITY)
    } else {
        mean_interval(kept, rule.confidence)
    };
    // Every trial exactly 0 (a loaded_latency point with its traffic
    // idle) is exact, not unconverged: there is nothing more to learn.
    let width = if mean > 0.0 {
        2.0 * half_width / mean
    } else if mean == 0.0 && half_width == 0.0 {
        0.0
    } else {
        f64::INFINITY
    };
    let verdict = if kept.len() >= rule.min_trials && width <= rule.width {
        Verdict::Converged
    } else if series.len() >= rule.max_trials {
        Verdict::NotConverged
    } else {
        Verdict::More
    };
    Assessment {
        verdict,
        dropped_first,
        kept: kept.len(),
        mean,
        half_width,
        width,
    }
}

/// How many trials like `kept` the rule's width would take at their
/// spread (coefficient of variation c): the least n with
/// 2·t(n−1)·c/√n ≤ `rule.width`, searched up to 1000; None when the trials
/// give no spread to go by (fewer than 2, a mean of 0). Said beside a
/// point that did not converge, so that a short, noisy window reads as
/// what it would cost to settle, not as a mystery.
pub fn trials_needed(rule: &Rule, kept: &[f64]) -> Option<usize> {
    let (mean, sd) = mean_sd(kept);
    if kept.len() < 2 || mean.is_nan() || mean <= 0.0 || !sd.is_finite() {
        return None;
    }
    let cv = sd / mean;
    (2..=1000)
        .find(|&n| 2.0 * t_quantile(rule.confidence, n - 1) * cv / (n as f64).sqrt() <= rule.width)
}

/// How a micro-benchmark's repetitions were extended until its median's
/// interval was narrow enough (`run --converge`): stored with the
/// measurement, absent when it was not asked for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MedianConvergence {
    /// `confidence` and `width` as for workloads; `max_trials` bounds the
    /// rounds (`min_trials` does not apply: one round of R repetitions
    /// already has an interval).
    pub rule: Rule,
    /// Rounds of the plan's repetitions that were run (each a fresh set of
    /// processes, warmed up again).
    pub rounds: usize,
    /// Total width of the median's distribution-free interval at
    /// `rule.confidence`, as a fraction of the median, after the last
    /// round; null when none exists (too few samples, a median of zero).
    pub width: Option<f64>,
    pub verdict: Verdict,
}

/// Apply `rule` to a micro-benchmark's samples after `rounds` rounds: the
/// sign-test interval of the median (`stats::median_ci_ranks`) at
/// `rule.confidence` must reach that confidence and have a total width of
/// at most `rule.width` of the median. The same question the workloads ask
/// of their trials' mean, asked of the statistic micro-benchmarks report.
pub fn assess_median(rule: &Rule, samples: &[f64], rounds: usize) -> MedianConvergence {
    let mut s: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    s.sort_by(f64::total_cmp);
    let width = (s.len() >= 2).then(|| {
        let (lo, hi, level) = crate::stats::median_ci_ranks(s.len(), rule.confidence);
        let median = crate::stats::quantile_sorted(&s, 0.5);
        (level + 1e-12 >= rule.confidence && median != 0.0).then(|| (s[hi] - s[lo]) / median.abs())
    });
    MedianConvergence::judged(rule, rounds, width.flatten())
}

impl MedianConvergence {
    /// The verdict on an interval `width` wide after `rounds`: converged
    /// within the rule's width, not converged at its most rounds, else more.
    pub fn judged(rule: &Rule, rounds: usize, width: Option<f64>) -> MedianConvergence {
        let verdict = if width.is_some_and(|w| w <= rule.width) {
            Verdict::Converged
        } else if rounds >= rule.max_trials {
            Verdict::NotConverged
        } else {
            Verdict::More
        };
        MedianConvergence {
            rule: *rule,
            rounds,
            width,
            verdict,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Trials that all measured exactly nothing (traffic held idle) have
    /// converged on 0; ones that scatter around 0 have not.
    #[test]
    fn trials_all_exactly_zero_have_converged() {
        let rule = Rule::parse("95,5").unwrap();
        let a = assess(&rule, &[0.0, 0.0, 0.0]);
        assert_eq!((a.verdict, a.width), (Verdict::Converged, 0.0), "{a:?}");
        assert_eq!(assess(&rule, &[0.0, 0.0]).verdict, Verdict::More);
        let scattered = assess(&rule, &[0.0, 1.0, 0.0]);
        assert_eq!(scattered.verdict, Verdict::More, "{scattered:?}");
    }

    #[test]
    fn trials_needed_follows_the_spread() {
        let rule = Rule::default();
        // A spread of 1 %: three trials would do (2·4.30·0.01/√3 = 4.97 %).
        let tight = [99.0, 100.0, 101.0];
        assert_eq!(trials_needed(&rule, &tight), Some(3));
        assert_eq!(assess(&rule, &tight).verdict, Verdict::Converged);
        // A spread of 10 %: dozens (2·t·0.1/√n ≤ 0.05 from n = 64).
        let wide = [90.0, 100.0, 110.0];
        let n = trials_needed(&rule, &wide).unwrap();
        assert!((60..=70).contains(&n), "{n}");
        assert_eq!(trials_needed(&rule, &[100.0]), None);
        assert_eq!(trials_needed(&rule, &[0.0, 0.0]), None);
        assert_eq!(
            trials_needed(&rule, &[5.0, 5.0]),
            Some(2),
            "no spread at all"
        );
    }

    #[test]
    fn a_median_converges_when_its_interval_is_narrow_enough() {
        let rule = Rule::parse("95,5").unwrap();
        // Seven samples: the 95 % interval is min … max (98.4 %): 4 % wide.
        let tight = [100.0, 101.0, 102.0, 103.0, 99.0, 100.5, 101.5];
        let a = assess_median(&rule, &tight, 1);
        assert_eq!(a.verdict, Verdict::Converged, "{a:?}");
        assert!((a.width.unwrap() - 0.04 / 1.01).abs() < 1e-9, "{a:?}");
        // One wild sample of seven stretches min … max past 5 %: more.
        let wild = [100.0, 101.0, 102.0, 103.0, 150.0, 100.5, 101.5];
        assert_eq!(assess_median(&rule, &wild, 1).verdict, Verdict::More);
        // Fourteen samples: x(3) … x(12) leaves the wild one out.
        let both: Vec<f64> = wild.iter().chain(&tight).copied().collect();
        assert_eq!(assess_median(&rule, &both, 2).verdict, Verdict::Converged);
    }

    #[test]
    fn three_samples_never_reach_95_percent_so_rounds_continue() {
        // The issue's -r 3: min … max covers 75 %, whatever its width.
        let rule = Rule::parse("95,50").unwrap();
        let a = assess_median(&rule, &[100.0, 100.0, 100.0], 1);
        assert_eq!((a.verdict, a.width), (Verdict::More, None));
        let six = [100.0; 6];
        assert_eq!(assess_median(&rule, &six, 2).verdict, Verdict::Converged);
    }

    #[test]
    fn a_median_that_stays_wide_stops_at_the_maximum_rounds() {
        let rule = Rule {
            max_trials: 3,
            ..Rule::parse("95,1").unwrap()
        };
        let noisy = [100.0, 130.0, 80.0, 120.0, 90.0, 110.0, 70.0];
        assert_eq!(assess_median(&rule, &noisy, 2).verdict, Verdict::More);
        let a = assess_median(&rule, &noisy, 3);
        assert_eq!(a.verdict, Verdict::NotConverged);
        assert!(a.width.unwrap() > 0.01);
    }

    /// Run the rule as the engine does: one trial at a time until it stops.
    fn stops_after(rule: &Rule, series: &[f64]) -> (usize, Assessment) {
        for n in 1..=series.len() {
            let a = assess(rule, &series[..n]);
            if a.verdict != Verdict::More {
                return (n, a);
            }
        }
        panic!("the rule never stopped on {series:?}");
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        // Two-sided 95 %: df 2 → 4.303, df 9 → 2.262; 99 % df 4 → 4.604.
        assert!((t_quantile(0.95, 2) - 4.303).abs() < 1e-3);
        assert!((t_quantile(0.95, 9) - 2.262).abs() < 1e-3);
        assert!((t_quantile(0.99, 4) - 4.604).abs() < 1e-3);
    }

    #[test]
    fn stops_at_the_first_trial_whose_interval_is_narrow_enough() {
        let rule = Rule::default();
        // 100, 101, 99: sd 1, half 4.303/√3 = 2.484, total 4.97 % ≤ 5 %.
        let (n, a) = stops_after(&rule, &[100.0, 101.0, 99.0, 150.0]);
        assert_eq!(n, 3);
        assert_eq!(a.verdict, Verdict::Converged);
        assert!((a.width - 0.04968).abs() < 1e-4, "{a:?}");
        // 100, 102, 98: total width 9.9 % at 3; the fourth (100) makes it
        // sd 1.633, half 3.182·1.633/2 = 2.598 → 5.2 %; the fifth (100)
        // sd 1.414, half 2.776·1.414/√5 = 1.756 → 3.5 %: stops at 5.
        let (n, a) = stops_after(&rule, &[100.0, 102.0, 98.0, 100.0, 100.0, 100.0]);
        assert_eq!(n, 5, "{a:?}");
        assert!(!a.dropped_first);
        assert_eq!(a.kept, 5);
    }

    #[test]
    fn never_converging_series_is_flagged_at_the_maximum() {
        let rule = Rule::default();
        let noisy = [
            100.0, 130.0, 80.0, 120.0, 90.0, 110.0, 70.0, 125.0, 95.0, 105.0, 100.0,
        ];
        let (n, a) = stops_after(&rule, &noisy);
        assert_eq!(n, rule.max_trials);
        assert_eq!(a.verdict, Verdict::NotConverged);
        assert!(a.width > rule.width);
        assert!(a.width.is_finite());
    }

    #[test]
    fn a_warm_up_first_trial_is_dropped_and_the_rest_converge() {
        let rule = Rule::default();
        let (n, a) = stops_after(&rule, &[60.0, 100.0, 101.0, 99.0]);
        assert_eq!(n, 4);
        assert!(a.dropped_first);
        assert_eq!(a.kept, 3);
        assert_eq!(a.verdict, Verdict::Converged);
        assert!((a.mean - 100.0).abs() < 1e-9);
        // Not before min_trials others exist to judge it by.
        assert!(!assess(&rule, &[60.0, 100.0, 101.0]).dropped_first);
    }

    #[test]
    fn a_first_trial_within_the_noise_is_kept() {
        let rule = Rule::default();
        // 1 % low on a tight series: statistically below, practically not.
        let a = assess(&rule, &[99.0, 100.0, 100.01, 99.99]);
        assert!(!a.dropped_first);
        // A high first trial is never "warm-up".
        let a = assess(&rule, &[140.0, 100.0, 101.0, 99.0]);
        assert!(!a.dropped_first);
    }

    #[test]
    fn rule_parses_netperf_style_and_refuses_bad_bounds() {
        let r = Rule::parse("99,2").unwrap();
        assert_eq!((r.confidence, r.width), (0.99, 0.02));
        assert!(Rule::parse("95,0").unwrap_err().contains("width"));
        assert!(Rule::parse("95,101").unwrap_err().contains("width"));
        assert!(Rule::parse("100,5").unwrap_err().contains("confidence"));
        assert!(Rule::parse("95").is_err());
        assert!(Rule::parse("x,5").unwrap_err().contains("not a number"));
        assert!(Rule::parse("95,100").is_ok());
    }
}
