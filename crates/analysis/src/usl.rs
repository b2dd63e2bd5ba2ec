//! The Universal Scalability Law (N. J. Gunther, "Guerrilla Capacity
//! Planning", Springer 2007, ch. 4–6) fitted to throughput against load or
//! CPUs: X(N) = λN / (1 + σ(N − 1) + κN(N − 1)), where λ is the throughput
//! of one unit of load, σ the contention (the serialised fraction, Amdahl's
//! term) and κ the coherency delay (the pairwise exchange cost that makes
//! throughput fall past a peak). Least-squares fit with σ, κ ≥ 0, the
//! predicted peak N* = √((1 − σ)/κ), residual-bootstrap confidence
//! intervals with a fixed seed, and R². Pure functions.
//!
//! Mapping from the results model: the input is (N, X) pairs: N = the load
//! of a [`crate::curve::CurvePoint`] (clients) for a load sweep, or the CPUs
//! of a [`crate::curve::ScalePoint`] for a CPU sweep; X = the point's mean
//! throughput. Several pairs may share an N (e.g. one pair per trial).

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Options of the fit's bootstrap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UslOptions {
    /// Bootstrap resamples; 0 skips the intervals.
    pub resamples: usize,
    /// Confidence level of the intervals, in (0, 1).
    pub level: f64,
    /// Seed of the resampling: a fixed seed makes the intervals of the same
    /// data the same on every run and every machine.
    pub seed: u64,
}

/// The seed used unless the caller picks one ("touchstn" in ASCII).
pub const DEFAULT_BOOTSTRAP_SEED: u64 = 0x746f_7563_6873_746e;

impl Default for UslOptions {
    /// 1000 resamples (Efron & Tibshirani, "An Introduction to the
    /// Bootstrap", 1993, ask for about 1000 to read percentiles in the tails), 95 %, the fixed default seed.
    fn default() -> Self {
        UslOptions {
            resamples: 1000,
            level: 0.95,
            seed: DEFAULT_BOOTSTRAP_SEED,
        }
    }
}

/// The three USL coefficients.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct UslParams {
    /// λ: throughput at N = 1 (the model's, not the measured one).
    pub lambda: f64,
    /// σ: contention, ≥ 0.
    pub sigma: f64,
    /// κ: coherency, ≥ 0.
    pub kappa: f64,
}

impl UslParams {
    /// The model's throughput at load `n`.
    pub fn throughput(&self, n: f64) -> f64 {
        self.lambda * n / self.denominator(n)
    }

    fn denominator(&self, n: f64) -> f64 {
        1.0 + self.sigma * (n - 1.0) + self.kappa * n * (n - 1.0)
    }

    fn log_throughput(&self, n: f64) -> f64 {
        self.lambda.ln() + log_capacity(n, self.sigma, self.kappa)
    }

    /// The load of highest throughput, N* = √((1 − σ)/κ) (where dX/dN ∝
    /// 1 − σ − κN² vanishes). `None` when the model predicts no finite peak:
    /// κ = 0 (throughput rises towards the ceiling λ/σ, or linearly when σ
    /// is 0 too) or σ ≥ 1 (throughput never rises above X(1)).
    pub fn peak_load(&self) -> Option<f64> {
        (self.kappa > 0.0 && self.sigma < 1.0).then(|| ((1.0 - self.sigma) / self.kappa).sqrt())
    }

    /// N* as a number for bootstrap percentiles: +∞ for κ = 0 with σ < 1 (no
    /// peak: the optimum is beyond any load), 0 for σ ≥ 1 (no rising part).
    fn peak_load_or_limit(&self) -> f64 {
        match self.peak_load() {
            Some(n) => n,
            None if self.sigma < 1.0 => f64::INFINITY,
            None => 0.0,
        }
    }
}

/// A two-sided interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// Bootstrap (expanded percentile) intervals of the fitted quantities.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UslIntervals {
    /// Confidence level (e.g. 0.95).
    pub level: f64,
    /// Resamples drawn.
    pub resamples: usize,
    pub lambda: Interval,
    pub sigma: Interval,
    pub kappa: Interval,
    /// Interval of N*; `high` is +∞ when enough resamples fit κ = 0 (no
    /// peak), `low` is 0 when enough fit σ ≥ 1 (no rise).
    pub peak_load: Interval,
    /// Fraction of resamples that predicted no finite peak (κ = 0).
    pub unbounded_peak_fraction: f64,
}

/// A fitted Universal Scalability Law.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UslFit {
    pub params: UslParams,
    /// N* = √((1 − σ)/κ), see [`UslParams::peak_load`].
    pub peak_load: Option<f64>,
    /// The model's throughput at N*.
    pub peak_throughput: Option<f64>,
    /// Coefficient of determination 1 − SSR/SST of the fitted curve against
    /// the measured throughputs (on their own scale, as a reader would
    /// judge it); `None` when all measured throughputs are equal (SST = 0:
    /// there is no variance to explain).
    pub r_squared: Option<f64>,
    /// Root-mean-square of the log residuals: about the model's typical
    /// relative miss (0.01 ≈ 1 %).
    pub rms_relative_error: f64,
    /// Pairs fitted and distinct loads among them.
    pub points: usize,
    pub distinct_loads: usize,
    /// Bootstrap intervals; `None` when resampling was not asked for or the
    /// data leave no residual degrees of freedom (≤ 3 pairs for 3
    /// coefficients: the fit passes through every point, and resampling
    /// zero residuals would claim a certainty the data do not have).
    pub intervals: Option<UslIntervals>,
    /// Whether κ was set to 0 (and the fit redone with κ held there): its
    /// interval contains 0, or its effect on the model at the loads fitted
    /// is below `NEGLIGIBLE_KAPPA_EFFECT` (rounding, as exact κ = 0 data
    /// give). Then no peak is predicted (`peak_load` is `None`).
    pub kappa_set_to_zero: bool,
}

/// The largest relative change κ may make to the model's throughput over
/// the loads fitted (κN(N − 1)/D(N)) and still be read as 0: far below any
/// measurement's resolution, where only the fit's rounding lives (exact
/// κ = 0 data leave a κ of 10⁻¹⁸, "N* 10⁹").
pub const NEGLIGIBLE_KAPPA_EFFECT: f64 = 1e-9;

/// Whether the fit may move κ (`Free`) or holds it at 0 (`HeldAtZero`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kappa {
    Free,
    HeldAtZero,
}

/// Why a USL fit was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UslError {
    #[error("the USL needs at least 3 distinct loads to fit 3 coefficients; got {distinct}")]
    TooFewLoads { distinct: usize },
    #[error("pair {index}: load or throughput is not a finite number")]
    NotFinite { index: usize },
    #[error("pair {index}: load {load} is below 1 (the USL counts whole clients or CPUs from 1)")]
    LoadBelowOne { index: usize, load: f64 },
    #[error(
        "pair {index}: throughput {throughput} is not positive (the fit works on relative \
         errors; leave out points where nothing completed)"
    )]
    NotPositive { index: usize, throughput: f64 },
    #[error("bootstrap level {0} is not in (0, 1)")]
    BadLevel(f64),
}

/// Fits the USL to (N, X) pairs.
///
/// Method. Nonlinear least squares on ln X, i.e. on relative errors, with
/// σ and κ constrained to ≥ 0. Relative, because a load curve's throughput
/// spans orders of magnitude and its noise is a fraction of its value (a
/// point converges to ±x % of its mean): ordinary least squares on X would
/// let the largest throughputs decide everything, and the residuals would
/// not be exchangeable for the bootstrap. For fixed (σ, κ), ln X(N) =
/// ln λ + ln C(N) with C(N) = N / (1 + σ(N−1) + κN(N−1)), so ln λ̂ is the
/// mean of ln X − ln C and the sum of squares depends on (σ, κ) alone. A
/// grid over (σ, κ) — 0 and log-spaced values from 10⁻⁵ to 10 for σ, from
/// 10⁻⁵/N_max² to 10 for κ — finds the basin, and Levenberg–Marquardt
/// (Marquardt 1963, with his diagonal scaling, so that σ and κ, which
/// differ by orders of magnitude, take steps of their own size) refines all
/// three, a coefficient at its bound of 0 being held there while the
/// gradient pushes it below. λ is pinned by the smallest loads, so a sweep
/// should include N = 1 or close to it; without it λ is an extrapolation.
///
/// Intervals: residual bootstrap (Efron & Tibshirani 1993, ch. 9; Davison &
/// Hinkley, "Bootstrap Methods and their Application", 1997, ch. 6), chosen over resampling pairs because a load ladder
/// is a designed experiment with few points: resampling pairs would often
/// drop the small loads that pin λ and σ, or leave fewer than 3 distinct
/// loads. The log residuals are divided by √(1 − h) (h: the point's
/// leverage in the fit linearised at the estimate, Davison & Hinkley's
/// modified residuals; √(n/(n − 3)) when that is singular) and
/// centred, resampled with replacement onto the fitted curve
/// (X* = X̂ · e^{r*}), and the model refitted. The intervals are percentiles
/// of the refits, expanded for few residual degrees of freedom (see
/// `expanded_tail`): with 12 loads and 1 % noise, the 95 % intervals held
/// the true σ, κ and N* in about 92 of 100 synthetic curves (tested).
/// The generator is SplitMix64 seeded from `options.seed`, so the same data
/// give the same intervals.
///
/// κ = 0: when κ's interval contains 0 (or, without intervals or with
/// exact data, when κ changes the model by less than
/// `NEGLIGIBLE_KAPPA_EFFECT` at every load fitted), the data cannot tell κ
/// from 0, and a tiny positive κ would predict a peak at an absurd load
/// ("N* 1.28e9" for exact κ = 0 data). κ is then reported as 0, σ and λ
/// (and their intervals) come from the fit with κ held at 0, κ keeps the
/// interval that contains 0, and no peak is predicted
/// (`kappa_set_to_zero`).
pub fn fit_usl(pairs: &[(f64, f64)], options: &UslOptions) -> Result<UslFit, UslError> {
    for (index, &(n, x)) in pairs.iter().enumerate() {
        if !n.is_finite() || !x.is_finite() {
            return Err(UslError::NotFinite { index });
        }
        if n < 1.0 {
            return Err(UslError::LoadBelowOne { index, load: n });
        }
        if x <= 0.0 {
            return Err(UslError::NotPositive {
                index,
                throughput: x,
            });
        }
    }
    let mut loads: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    loads.sort_by(f64::total_cmp);
    loads.dedup();
    if loads.len() < 3 {
        return Err(UslError::TooFewLoads {
            distinct: loads.len(),
        });
    }
    if options.resamples > 0 && !(options.level > 0.0 && options.level < 1.0) {
        return Err(UslError::BadLevel(options.level));
    }

    let ns: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let log_xs: Vec<f64> = pairs.iter().map(|p| p.1.ln()).collect();
    let (full, full_ss) = least_squares(&ns, &log_xs, Kappa::Free);
    let full_intervals = (options.resamples > 0 && pairs.len() > 3)
        .then(|| bootstrap(&ns, &log_xs, &full, options, Kappa::Free));
    // κ is read as 0 when the data cannot tell it from 0; then σ and λ are
    // refitted with κ held there (their intervals too), κ keeps the interval
    // that contains 0, and N* none.
    let negligible = ns
        .iter()
        .all(|&n| full.kappa * n * (n - 1.0) / full.denominator(n) < NEGLIGIBLE_KAPPA_EFFECT);
    let kappa_set_to_zero = full.kappa > 0.0
        && (negligible || full_intervals.as_ref().is_some_and(|i| i.kappa.low <= 0.0));
    let (params, log_ss, intervals) = if kappa_set_to_zero {
        let (held, held_ss) = least_squares(&ns, &log_xs, Kappa::HeldAtZero);
        let intervals = full_intervals.map(|full_iv| {
            let iv = bootstrap(&ns, &log_xs, &held, options, Kappa::HeldAtZero);
            UslIntervals {
                lambda: iv.lambda,
                sigma: iv.sigma,
                ..full_iv
            }
        });
        (held, held_ss, intervals)
    } else {
        (full, full_ss, full_intervals)
    };

    let xs = pairs.iter().map(|p| p.1);
    let mean = xs.clone().sum::<f64>() / pairs.len() as f64;
    let total_ss: f64 = xs.map(|x| (x - mean).powi(2)).sum();
    let residual_ss: f64 = pairs
        .iter()
        .map(|&(n, x)| (x - params.throughput(n)).powi(2))
        .sum();
    let r_squared = (total_ss > 0.0).then(|| 1.0 - residual_ss / total_ss);

    let peak_load = params.peak_load();
    Ok(UslFit {
        params,
        peak_load,
        peak_throughput: peak_load.map(|n| params.throughput(n)),
        r_squared,
        rms_relative_error: (log_ss / pairs.len() as f64).sqrt(),
        points: pairs.len(),
        distinct_loads: loads.len(),
        intervals,
        kappa_set_to_zero,
    })
}

/// Residual bootstrap of the fit on the log scale (see [`fit_usl`]).
fn bootstrap(
    ns: &[f64],
    log_xs: &[f64],
    fit: &UslParams,
    options: &UslOptions,
    kappa: Kappa,
) -> UslIntervals {
    let n = ns.len();
    let fitted: Vec<f64> = ns.iter().map(|&k| fit.log_throughput(k)).collect();
    let raw: Vec<f64> = log_xs.iter().zip(&fitted).map(|(y, f)| y - f).collect();
    let modified: Vec<f64> = match leverages(ns, fit) {
        Some(h) => raw
            .iter()
            .zip(&h)
            .map(|(r, h)| r / (1.0 - h).max(1e-6).sqrt())
            .collect(),
        None => {
            let inflate = (n as f64 / (n - 3) as f64).sqrt();
            raw.iter().map(|r| r * inflate).collect()
        }
    };
    let centre = modified.iter().sum::<f64>() / n as f64;
    let residuals: Vec<f64> = modified.iter().map(|r| r - centre).collect();

    let mut rng = SplitMix64::new(options.seed);
    let mut resampled = vec![0.0; n];
    let (mut lambdas, mut sigmas, mut kappas, mut peaks) = (
        Vec::with_capacity(options.resamples),
        Vec::with_capacity(options.resamples),
        Vec::with_capacity(options.resamples),
        Vec::with_capacity(options.resamples),
    );
    for _ in 0..options.resamples {
        for (slot, f) in resampled.iter_mut().zip(&fitted) {
            *slot = f + residuals[rng.below(n)];
        }
        let (p, _) = least_squares(ns, &resampled, kappa);
        lambdas.push(p.lambda);
        sigmas.push(p.sigma);
        kappas.push(p.kappa);
        peaks.push(p.peak_load_or_limit());
    }
    let unbounded = peaks.iter().filter(|p| p.is_infinite()).count();
    let tail = expanded_tail(options.level, n - 3);
    let interval = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        Interval {
            low: quantile(&v, tail),
            high: quantile(&v, 1.0 - tail),
        }
    };
    UslIntervals {
        level: options.level,
        resamples: options.resamples,
        lambda: interval(lambdas),
        sigma: interval(sigmas),
        kappa: interval(kappas),
        peak_load: interval(peaks),
        unbounded_peak_fraction: unbounded as f64 / options.resamples as f64,
    }
}

/// The tail probability at which to read the bootstrap percentiles so that
/// a `level` interval is not too narrow with few residual degrees of freedom:
/// Hesterberg's expanded percentile interval ("What Teachers Should Know
/// About the Bootstrap", The American Statistician 69(4), 2015), which reads
/// the percentiles at Φ(−t) instead of (1 − level)/2, t being the Student-t
/// quantile 1 − (1 − level)/2 with, here, the fit's n − 3 residual degrees
/// of freedom. A plain percentile interval behaves like a z interval and
/// covers noticeably less than `level` with a dozen points.
fn expanded_tail(level: f64, degrees_of_freedom: usize) -> f64 {
    let plain = (1.0 - level) / 2.0;
    match StudentsT::new(0.0, 1.0, degrees_of_freedom as f64) {
        Ok(t) => Normal::standard().cdf(t.inverse_cdf(plain)),
        Err(_) => plain,
    }
}

/// Leverages h_ii of the fit linearised at `fit`: the diagonal of
/// J (JᵀJ)⁻¹ Jᵀ, J the Jacobian of ln X in (ln λ, σ, κ). `None` when JᵀJ is
/// singular.
fn leverages(ns: &[f64], fit: &UslParams) -> Option<Vec<f64>> {
    let rows: Vec<[f64; 3]> = ns
        .iter()
        .map(|&n| {
            let d = fit.denominator(n);
            [1.0, -(n - 1.0) / d, -n * (n - 1.0) / d]
        })
        .collect();
    let mut jtj = [[0.0; 3]; 3];
    for j in &rows {
        for a in 0..3 {
            for b in 0..3 {
                jtj[a][b] += j[a] * j[b];
            }
        }
    }
    rows.iter()
        .map(|j| {
            let augmented = (0..3)
                .map(|a| vec![jtj[a][0], jtj[a][1], jtj[a][2], j[a]])
                .collect();
            let z = solve(augmented)?;
            Some(j[0] * z[0] + j[1] * z[1] + j[2] * z[2])
        })
        .collect()
}

/// Quantile of sorted values by linear interpolation between order
/// statistics (Hyndman & Fan type 7); an infinite neighbour gives infinity
/// rather than ∞ · 0 = NaN.
fn quantile(sorted: &[f64], p: f64) -> f64 {
    let h = p * (sorted.len() - 1) as f64;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    let frac = h - lo as f64;
    if frac == 0.0 || sorted[lo] == sorted[hi] {
        sorted[lo]
    } else if sorted[hi].is_infinite() {
        sorted[hi]
    } else {
        sorted[lo] + frac * (sorted[hi] - sorted[lo])
    }
}

/// ln C(N) = ln N − ln(1 + σ(N−1) + κN(N−1)): the log of the model's
/// relative capacity.
fn log_capacity(n: f64, sigma: f64, kappa: f64) -> f64 {
    n.ln() - (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0)).ln()
}

/// The least-squares ln λ for fixed σ, κ (the mean of g = ln X − ln C) and
/// the sum of squares it leaves, Σg² − (Σg)²/n in one pass: it only ranks
/// grid cells, where its rounding (about 10⁻¹⁶ · Σg²) does not matter; the
/// refinement uses the exact two-pass sum.
fn profile(ns: &[f64], log_xs: &[f64], sigma: f64, kappa: f64) -> (f64, f64) {
    let (mut sum, mut sum_sq) = (0.0, 0.0);
    for (&n, &y) in ns.iter().zip(log_xs) {
        let g = y - log_capacity(n, sigma, kappa);
        sum += g;
        sum_sq += g * g;
    }
    let count = ns.len() as f64;
    (sum / count, (sum_sq - sum * sum / count).max(0.0))
}

/// A 0, then `count` log-spaced values from `from` to `to` (none: just the 0).
fn zero_and_log_grid(from: f64, to: f64, count: usize) -> impl Iterator<Item = f64> {
    let step = (to / from).ln() / count.saturating_sub(1).max(1) as f64;
    std::iter::once(0.0).chain((0..count).map(move |i| from * (step * i as f64).exp()))
}

/// The constrained least-squares fit of ln X: grid over (σ, κ) with ln λ
/// profiled out, then Levenberg–Marquardt on (ln λ, σ, κ). Returns the
/// parameters and the sum of squared log residuals.
fn least_squares(ns: &[f64], log_xs: &[f64], hold: Kappa) -> (UslParams, f64) {
    let n_max = ns.iter().copied().fold(1.0, f64::max);
    let kappas = match hold {
        Kappa::Free => 41,
        Kappa::HeldAtZero => 0,
    };
    let mut best = ([0.0; 3], f64::INFINITY);
    for sigma in zero_and_log_grid(1e-5, 10.0, 31) {
        for kappa in zero_and_log_grid(1e-5 / (n_max * n_max), 10.0, kappas) {
            let (log_lambda, ssr) = profile(ns, log_xs, sigma, kappa);
            if ssr < best.1 {
                best = ([log_lambda, sigma, kappa], ssr);
            }
        }
    }
    let (p, ssr) = levenberg_marquardt(ns, log_xs, best.0, best.1, hold);
    (
        UslParams {
            lambda: p[0].exp(),
            sigma: p[1],
            kappa: p[2],
        },
        ssr,
    )
}

/// Sum of squared log residuals of (ln λ, σ, κ) on the data.
fn log_ssr(ns: &[f64], log_xs: &[f64], p: &[f64; 3]) -> f64 {
    ns.iter()
        .zip(log_xs)
        .map(|(&n, &y)| (y - p[0] - log_capacity(n, p[1], p[2])).powi(2))
        .sum()
}

/// Levenberg–Marquardt on (ln λ, σ, κ) from `start`, with σ, κ ≥ 0 held by
/// an active set: a coefficient at 0 whose gradient points below 0 is left
/// out of the step. Only steps that lower the sum of squares are taken, so
/// the result is never worse than the start.
fn levenberg_marquardt(
    ns: &[f64],
    log_xs: &[f64],
    start: [f64; 3],
    start_ssr: f64,
    hold: Kappa,
) -> ([f64; 3], f64) {
    let mut p = start;
    let mut ssr = start_ssr;
    let mut damping = 1e-3;
    for _ in 0..500 {
        // Normal equations JᵀJ and gradient Jᵀr of the residuals
        // r = ln X − ln λ − ln C(N); J is the Jacobian of the model's ln X.
        let mut jtj = [[0.0; 3]; 3];
        let mut jtr = [0.0; 3];
        for (&n, &y) in ns.iter().zip(log_xs) {
            let d = 1.0 + p[1] * (n - 1.0) + p[2] * n * (n - 1.0);
            let r = y - p[0] - log_capacity(n, p[1], p[2]);
            let j = [1.0, -(n - 1.0) / d, -n * (n - 1.0) / d];
            for a in 0..3 {
                jtr[a] += j[a] * r;
                for b in 0..3 {
                    jtj[a][b] += j[a] * j[b];
                }
            }
        }
        // ln λ is free; σ, κ at 0 with the descent direction (+Jᵀr) negative
        // stay at 0 for this step.
        let free: Vec<usize> = (0..3)
            .filter(|&a| (a == 0 || !(p[a] <= 0.0 && jtr[a] <= 0.0)) && jtj[a][a] > 0.0)
            .filter(|&a| a != 2 || hold == Kappa::Free)
            .collect();
        let mut improved = false;
        while damping < 1e16 {
            let m = free.len();
            let mut a = vec![vec![0.0; m + 1]; m];
            for (r, &i) in free.iter().enumerate() {
                for (c, &k) in free.iter().enumerate() {
                    a[r][c] = jtj[i][k];
                }
                a[r][r] += damping * jtj[i][i];
                a[r][m] = jtr[i];
            }
            let Some(step) = solve(a) else {
                damping *= 10.0;
                continue;
            };
            let mut next = p;
            for (r, &i) in free.iter().enumerate() {
                next[i] = p[i] + step[r];
                if i > 0 {
                    next[i] = next[i].max(0.0);
                }
            }
            let next_ssr = log_ssr(ns, log_xs, &next);
            if next_ssr < ssr {
                let gain = (ssr - next_ssr) / ssr;
                p = next;
                ssr = next_ssr;
                damping = (damping / 10.0).max(1e-12);
                improved = gain > 1e-14;
                break;
            }
            damping *= 10.0;
        }
        if !improved {
            break;
        }
    }
    (p, ssr)
}

/// Solves the m × m system given as rows of an augmented matrix [A | b] by
/// Gaussian elimination with partial pivoting; `None` if singular.
pub(crate) fn solve(mut a: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let m = a.len();
    for col in 0..m {
        let pivot = (col..m).max_by(|&r, &s| a[r][col].abs().total_cmp(&a[s][col].abs()))?;
        if a[pivot][col].abs() < 1e-300 || !a[pivot][col].is_finite() {
            return None;
        }
        a.swap(col, pivot);
        let (done, rest) = a.split_at_mut(col + 1);
        let pivot_row = &done[col];
        for row in rest {
            let factor = row[col] / pivot_row[col];
            for (target, source) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                *target -= factor * source;
            }
        }
    }
    let mut x = vec![0.0; m];
    for row in (0..m).rev() {
        let tail: f64 = (row + 1..m).map(|k| a[row][k] * x[k]).sum();
        x[row] = (a[row][m] - tail) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

pub(crate) use touchstone_results::random::SplitMix64;

#[cfg(test)]
mod tests;
