//! The knee of a load curve: Kneedle's candidate on the rising part, kept
//! only when the rise is significantly bent — when two straight segments
//! fit it better than one straight line by more than the points' own noise
//! allows. Pure functions over `curve::CurvePoint`.

use serde::Serialize;

use crate::curve::{peak, sorted_by_load, CurveError, CurvePoint};

/// Default Kneedle sensitivity S: the paper's recommendation for offline
/// data ("S = 1 ... performs well"), the most aggressive setting that still
/// rejects noise-only bumps.
pub const KNEEDLE_DEFAULT_SENSITIVITY: f64 = 1.0;

/// A knee found by Kneedle on the rising part of a load curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Knee {
    /// Index of the knee point in the input slice.
    pub index: usize,
    pub load: f64,
    pub throughput: f64,
    /// The difference curve's value at the knee: how far (in normalised
    /// units, 0..1) the curve stands above the straight line from its first
    /// point to the peak.
    pub difference: f64,
    /// The threshold the difference curve fell below after the knee:
    /// `difference − S · (mean spacing of normalised loads)`.
    pub threshold: f64,
    /// The sensitivity S used.
    pub sensitivity: f64,
    /// How much better two straight segments fit the rising part than one
    /// straight line, in χ² units of the points' own noise (see
    /// [`bend_chi2`]); at least [`BEND_CHI2_NEEDED`] for a knee.
    pub bend_chi2: f64,
}

/// Why no knee is reported. A knee is only ever a point the data support;
/// every other outcome names its reason so a report can say "not detected
/// (…)" instead of printing a number.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum NoKnee {
    /// Kneedle needs at least three points from the first load to the peak.
    TooFewPoints { rising: usize },
    /// The rising part never stands above the line from its first point to
    /// the peak (a straight line, or a curve that bends upwards): nothing
    /// bends over, so there is no knee.
    NotConcave,
    /// The difference curve's local maxima never drop by the threshold
    /// before the next maximum: the bend is not distinct from the data's
    /// spacing at sensitivity S. `best` is the largest local maximum of the
    /// difference curve, `needed` the drop S · (mean spacing) it had to show.
    BelowThreshold { best: f64, needed: f64 },
    /// The throughputs of the rising part are all equal: nothing rises.
    Flat,
    /// Kneedle found a bend at `load`, but two straight segments fit the
    /// rising part better than one straight line by only `chi2` (χ² in the
    /// points' own noise), less than the `needed` [`BEND_CHI2_NEEDED`]: a
    /// straight line with that much noise bends as much by chance.
    NotSignificant { load: f64, chi2: f64, needed: f64 },
}

impl NoKnee {
    /// Why no knee was found, without the "not detected" a report puts in
    /// front of it.
    pub fn reason(&self) -> String {
        match self {
            NoKnee::TooFewPoints { rising } => {
                format!("{rising} point(s) up to the peak, Kneedle needs 3")
            }
            NoKnee::NotConcave => "the rise does not bend over".to_string(),
            NoKnee::BelowThreshold { best, needed } => {
                format!("the bend ({best:.3}) never drops by {needed:.3} (sensitivity)")
            }
            NoKnee::Flat => "throughput does not rise".to_string(),
            NoKnee::NotSignificant { load, chi2, needed } => format!(
                "the bend at load {load} is within the noise: two straight segments fit the rise \
                 better than one by χ² {chi2:.1}, {needed:.2} needed"
            ),
        }
    }
}

impl std::fmt::Display for NoKnee {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not detected: {}", self.reason())
    }
}

/// The knee of a load curve by Kneedle (V. Satopää, J. Albrecht, D. Irwin,
/// B. Raghavan, "Finding a 'Kneedle' in a Haystack: Detecting Knee Points in
/// System Behavior", ICDCS workshops 2011), applied to the rising part: the
/// points from the lowest load up to and including the point of highest mean
/// throughput — or, when fewer than three points lead there and that peak
/// is a plateau, up to the plateau's last point: a curve that rises to the
/// CPU count and then stays flat (a machine saturated at once) bends over
/// at the plateau's start, and its flat points are what show it.
///
/// The steps follow the paper's offline algorithm, without its optional
/// smoothing (a load ladder has a handful of points, each already a mean of
/// converged trials):
/// 1. normalise loads and throughputs to [0, 1] (x_s, y_s);
/// 2. for a concave increasing curve, the difference curve is y_d = y_s − x_s;
/// 3. its local maxima are the knee candidates (only those above the chord,
///    y_d > 0, since a knee bends *over*);
/// 4. each candidate sets a threshold T = y_d(candidate) − S · Σ(x_s[i+1] −
///    x_s[i]) / (n − 1), i.e. S times the mean spacing of normalised loads;
/// 5. the candidate is declared the knee if the difference curve falls below
///    T before the next local maximum; the first one declared is the knee.
///
/// Kneedle alone finds a "knee" on most noisy straight lines (on 372 of
/// 400 with 5 % noise over loads 1..24; see the tests), so its candidate is
/// reported only when the rise is significantly bent: two straight segments
/// must fit it better than one straight line by at least
/// [`BEND_CHI2_NEEDED`] in χ² units of the points' own noise
/// ([`bend_chi2`]); otherwise `NoKnee::NotSignificant`.
///
/// Returns `Err(NoKnee)` when the data do not support a knee; never an
/// invented point.
pub fn knee(points: &[CurvePoint], sensitivity: f64) -> Result<Result<Knee, NoKnee>, CurveError> {
    let order = sorted_by_load(points)?;
    let top = peak(points)?;
    let mut rising: Vec<usize> = order
        .iter()
        .copied()
        .take_while(|&i| points[i].load <= top.load_at_max)
        .collect();
    if rising.len() < 3 && top.is_plateau() && rising.len() > 1 {
        let end = top
            .plateau
            .iter()
            .map(|&i| points[i].load)
            .fold(f64::NEG_INFINITY, f64::max);
        rising = order
            .into_iter()
            .take_while(|&i| points[i].load <= end)
            .collect();
    }
    let xs: Vec<f64> = rising.iter().map(|&i| points[i].load).collect();
    let ys: Vec<f64> = rising.iter().map(|&i| points[i].throughput).collect();
    let half_widths: Vec<f64> = rising
        .iter()
        .map(|&i| (points[i].ci_high - points[i].ci_low) / 2.0)
        .collect();
    let (pos, difference, threshold) = match kneedle(&xs, &ys, sensitivity) {
        Ok(found) => found,
        Err(no) => return Ok(Err(no)),
    };
    let i = rising[pos];
    let chi2 = bend_chi2(&xs, &ys, &half_widths);
    if chi2 < BEND_CHI2_NEEDED {
        return Ok(Err(NoKnee::NotSignificant {
            load: points[i].load,
            chi2,
            needed: BEND_CHI2_NEEDED,
        }));
    }
    Ok(Ok(Knee {
        index: i,
        load: points[i].load,
        throughput: points[i].throughput,
        difference,
        threshold,
        sensitivity,
        bend_chi2: chi2,
    }))
}

/// Kneedle on a concave increasing curve given as strictly increasing `xs`
/// and their `ys`; returns (position of the knee, y_d there, threshold).
fn kneedle(xs: &[f64], ys: &[f64], sensitivity: f64) -> Result<(usize, f64, f64), NoKnee> {
    let n = xs.len();
    if n < 3 {
        return Err(NoKnee::TooFewPoints { rising: n });
    }
    let (x0, x1) = (xs[0], xs[n - 1]);
    let y_min = ys.iter().copied().fold(f64::INFINITY, f64::min);
    let y_max = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if y_max <= y_min {
        return Err(NoKnee::Flat);
    }
    let x_norm: Vec<f64> = xs.iter().map(|x| (x - x0) / (x1 - x0)).collect();
    let diff: Vec<f64> = ys
        .iter()
        .zip(&x_norm)
        .map(|(y, xn)| (y - y_min) / (y_max - y_min) - xn)
        .collect();
    // Σ(x_s[i+1] − x_s[i]) telescopes to x_s[n−1] − x_s[0] = 1.
    let mean_spacing = 1.0 / (n - 1) as f64;
    let drop_needed = sensitivity * mean_spacing;

    // Local maxima of the difference curve: interior points not lower than
    // the next and strictly higher than the previous (a flat top counts once,
    // at its first point).
    let maxima: Vec<usize> = (1..n - 1)
        .filter(|&i| diff[i] > diff[i - 1] && diff[i] >= diff[i + 1] && diff[i] > 0.0)
        .collect();
    if maxima.is_empty() {
        return Err(NoKnee::NotConcave);
    }
    for (m, &candidate) in maxima.iter().enumerate() {
        let threshold = diff[candidate] - drop_needed;
        let next_max = maxima.get(m + 1).copied().unwrap_or(n);
        if (candidate + 1..next_max).any(|j| diff[j] < threshold) {
            return Ok((candidate, diff[candidate], threshold));
        }
    }
    let best = maxima.iter().map(|&i| diff[i]).fold(f64::MIN, f64::max);
    Err(NoKnee::BelowThreshold {
        best,
        needed: drop_needed,
    })
}

/// The χ² (with 2 degrees of freedom: the second segment's slope and where
/// it starts) a bent rise must gain over a straight line: its 99th
/// percentile. The search over where the bend lies makes the largest gain
/// of a straight line larger than one χ²₂ draw; on 400 noisy straight lines
/// per case (loads 1..24 and 1..64, 2 and 5 % noise, see the tests) this
/// threshold keeps the false knees under 1 %, and it keeps all but a few of
/// the knees Kneedle finds on bent curves.
pub const BEND_CHI2_NEEDED: f64 = 9.21;

/// The two-sided 95 % normal quantile: a point's interval is read as a
/// 95 % one (the default `--converge` level), so its half width is 1.96
/// standard errors. A Student-t interval over few trials is wider than that,
/// which only makes the test more cautious.
const Z95: f64 = 1.959_963_984_540_054;

/// How much better the rising part (`xs` loads, `ys` throughputs,
/// `half_widths` their intervals' half widths) is fitted by two straight
/// segments joined at one of its inner points (a hinge: a + b·x +
/// c·max(0, x − x_k), the best k) than by one straight line, as the drop in
/// χ² = Σ ((y − fit) / σ)². The noise σ is relative: the median of the
/// points' relative half widths over 1.96, times each point's throughput
/// (throughput noise grows with throughput, and a median keeps one point
/// whose few trials agreed by chance from setting the scale). Zero for
/// fewer than three points or when no fit can be made.
pub fn bend_chi2(xs: &[f64], ys: &[f64], half_widths: &[f64]) -> f64 {
    let n = xs.len();
    if n < 3 || ys.len() != n || half_widths.len() != n {
        return 0.0;
    }
    let mut relative: Vec<f64> = half_widths
        .iter()
        .zip(ys)
        .map(|(h, y)| h.abs() / y.abs().max(f64::MIN_POSITIVE))
        .collect();
    relative.sort_by(f64::total_cmp);
    let mid = relative.len() / 2;
    let median = if relative.len() % 2 == 1 {
        relative[mid]
    } else {
        (relative[mid - 1] + relative[mid]) / 2.0
    };
    let noise = (median / Z95).max(1e-9);
    let weights: Vec<f64> = ys.iter().map(|y| (noise * y.abs()).powi(-2)).collect();
    // Loads scaled to [0, 1] keep the normal equations well conditioned.
    let (x0, span) = (xs[0], (xs[n - 1] - xs[0]).max(f64::MIN_POSITIVE));
    let x: Vec<f64> = xs.iter().map(|v| (v - x0) / span).collect();
    let line = weighted_chi2(&x, ys, &weights, None);
    let bent = (1..n - 1)
        .map(|k| weighted_chi2(&x, ys, &weights, Some(x[k])))
        .fold(line, f64::min);
    (line - bent).max(0.0)
}

/// χ² of the weighted least-squares fit of a + b·x (+ c·max(0, x − hinge)).
fn weighted_chi2(x: &[f64], y: &[f64], w: &[f64], hinge: Option<f64>) -> f64 {
    let basis = |v: f64| -> Vec<f64> {
        let mut b = vec![1.0, v];
        if let Some(h) = hinge {
            b.push((v - h).max(0.0));
        }
        b
    };
    let m = if hinge.is_some() { 3 } else { 2 };
    let mut normal = vec![vec![0.0; m + 1]; m];
    for ((&v, &yv), &wv) in x.iter().zip(y).zip(w) {
        let b = basis(v);
        for r in 0..m {
            for c in 0..m {
                normal[r][c] += wv * b[r] * b[c];
            }
            normal[r][m] += wv * b[r] * yv;
        }
    }
    let Some(beta) = crate::usl::solve(normal) else {
        return f64::INFINITY;
    };
    x.iter()
        .zip(y)
        .zip(w)
        .map(|((&v, &yv), &wv)| {
            let fit: f64 = basis(v).iter().zip(&beta).map(|(b, c)| b * c).sum();
            wv * (yv - fit).powi(2)
        })
        .sum()
}

#[cfg(test)]
mod tests;
