//! Change points of a series by E-divisive means (Matteson & James, "A
//! Nonparametric Approach for Multiple Change Point Analysis of
//! Multivariate Data", JASA 2014), as MongoDB's signal-processing library
//! and Apache Otava (formerly Hunter; `compute_change_points_orig`) define
//! it, univariate with α = 1:
//!
//! ```text
//! Q(τ, κ) = 2/(n+m) Σᵢⱼ|Xᵢ−Yⱼ| − 2m/((n+m)(n−1)) Σ_{i<k}|Xᵢ−X_k|
//!                             − 2n/((n+m)(m−1)) Σ_{j<k}|Yⱼ−Y_k|
//! ```
//!
//! * Q splits Z[s..e) into X = Z[s..τ) (n values) and Y = Z[τ..κ) (m
//!   values), s < τ < κ ≤ e: the scaled energy distance between X and Y
//!   (a within-sum over one value is 0). The candidate of an interval is
//!   the τ of the largest Q over (τ, κ); of several intervals, the one
//!   whose Q is largest.
//! * The candidate is tested by permutation: each interval between the
//!   change points found so far is shuffled within itself, the best Q of
//!   the shuffled series found the same way, `permutations` times; p =
//!   (#{shuffled Q ≥ observed Q} + 1) / (permutations + 1), the usual
//!   Monte-Carlo p-value (it is never 0). Significant when p ≤ `max_pvalue`:
//!   the candidate is a change point and the search goes on in the
//!   intervals it makes; else it stops.
//!
//! Otava writes p = #{…}/(permutations + 1) and tests it against 0.001 with
//! 100 permutations, which accepts a candidate exactly when no shuffle
//! reaches it; this module's defaults (100 permutations, 0.01) make the same
//! decision. The shuffles come from a seeded generator (SplitMix64), so the
//! same series always gives the same change points. Pure function; O(n²)
//! per permutation, with no n³ step.

use serde::Serialize;

use crate::usl::SplitMix64;

/// How the permutation test decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// A candidate is a change point when its p-value is at most this.
    pub max_pvalue: f64,
    /// Shuffles per test.
    pub permutations: usize,
    /// Seed of the shuffles: the same seed, the same change points.
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_pvalue: 0.01,
            permutations: 100,
            seed: 0x7475_6368_7374_6f6e,
        }
    }
}

/// A change point: the series changed between `index − 1` and `index`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChangePoint {
    /// The first position of the new segment.
    pub index: usize,
    /// Q of the split (see the module's header).
    pub qhat: f64,
    /// The permutation test's p-value.
    pub pvalue: f64,
}

/// The best split of one interval: its τ and Q.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Candidate {
    index: usize,
    qhat: f64,
}

/// The best split of `x[start..end)` (at least two values): the τ that
/// maximises Q(τ, κ) over start < τ < κ ≤ end. Cells with κ ≤ τ count as
/// Q = 0, scanned in order of τ and then κ, the first maximum kept —
/// exactly the order of Otava's matrix, so both pick the same τ on ties
/// and neither reports a negative Q.
fn best_split(x: &[f64], start: usize, end: usize, rows: &mut Vec<f64>) -> Candidate {
    let len = end - start;
    debug_assert!(len >= 2);
    // rows[tri(y) + t] = Σ_{i ∈ [0, t)} |x[start+i] − x[start+y]| for t ≤ y:
    // each value's distances to those before it, as prefix sums.
    let tri = |y: usize| y * (y + 1) / 2;
    rows.clear();
    rows.resize(tri(len), 0.0);
    for y in 0..len {
        let xy = x[start + y];
        let base = tri(y);
        let mut acc = 0.0;
        for t in 0..y {
            rows[base + t] = acc;
            acc += (x[start + t] - xy).abs();
        }
        rows[base + y] = acc;
    }
    let mut best = Candidate {
        index: start + 1,
        qhat: f64::NEG_INFINITY,
    };
    // Within-X sum for the current τ.
    let mut within_x = 0.0;
    for tau in 1..len {
        within_x += rows[tri(tau - 1) + tau - 1];
        let n = tau as f64;
        if tau >= 2 && 0.0 > best.qhat {
            // Otava's zero cells (κ ≤ τ) of this row come before its splits.
            best = Candidate {
                index: start + tau,
                qhat: 0.0,
            };
        }
        let (mut cross, mut within_y) = (0.0, 0.0);
        for kappa in tau + 1..=len {
            let y = kappa - 1;
            let to_x = rows[tri(y) + tau];
            cross += to_x;
            within_y += rows[tri(y) + y] - to_x;
            let m = (kappa - tau) as f64;
            let nm = n + m;
            let mut q = 2.0 / nm * cross;
            if tau > 1 {
                q -= 2.0 * m / (nm * (n - 1.0)) * within_x;
            }
            if kappa - tau > 1 {
                q -= 2.0 * n / (nm * (m - 1.0)) * within_y;
            }
            if q > best.qhat {
                best = Candidate {
                    index: start + tau,
                    qhat: q,
                };
            }
        }
    }
    best
}

/// The intervals between sorted change points, as (start, end).
fn intervals(n: usize, points: &[usize]) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(points.len() + 1);
    let mut start = 0;
    for &p in points.iter().chain(std::iter::once(&n)) {
        if p > start {
            out.push((start, p));
        }
        start = p;
    }
    out
}

/// The best candidate over the intervals of at least two values (the first
/// of equal ones); None when every interval holds one value.
fn next_candidate(x: &[f64], spans: &[(usize, usize)], rows: &mut Vec<f64>) -> Option<Candidate> {
    let mut best: Option<Candidate> = None;
    for &(s, e) in spans.iter().filter(|(s, e)| e - s > 1) {
        let c = best_split(x, s, e, rows);
        if best.is_none_or(|b| c.qhat > b.qhat) {
            best = Some(c);
        }
    }
    best
}

/// The change points of `series` by E-divisive means (see the module's
/// header), in order of position. A series with a value that is not finite
/// has none (nothing can be said of it).
pub fn e_divisive(series: &[f64], options: &Options) -> Vec<ChangePoint> {
    if series.len() < 2 || series.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let mut rng = SplitMix64::new(options.seed);
    let mut rows = Vec::new();
    let mut found: Vec<ChangePoint> = Vec::new();
    let mut shuffled = series.to_vec();
    loop {
        let positions: Vec<usize> = found.iter().map(|c| c.index).collect();
        let spans = intervals(series.len(), &positions);
        let Some(candidate) = next_candidate(series, &spans, &mut rows) else {
            break;
        };
        let mut reached = 0usize;
        for _ in 0..options.permutations {
            shuffled.copy_from_slice(series);
            for &(s, e) in &spans {
                shuffle(&mut shuffled[s..e], &mut rng);
            }
            let q = next_candidate(&shuffled, &spans, &mut rows).map_or(0.0, |c| c.qhat);
            if q >= candidate.qhat {
                reached += 1;
            }
        }
        let pvalue = (reached + 1) as f64 / (options.permutations + 1) as f64;
        if pvalue > options.max_pvalue {
            break;
        }
        found.push(ChangePoint {
            index: candidate.index,
            qhat: candidate.qhat,
            pvalue,
        });
        found.sort_by_key(|c| c.index);
    }
    found
}

/// Fisher–Yates.
fn shuffle(xs: &mut [f64], rng: &mut SplitMix64) {
    for i in (1..xs.len()).rev() {
        xs.swap(i, rng.below(i + 1));
    }
}

/// The segments the change points cut `n` positions into, as ranges.
pub fn segments(n: usize, points: &[ChangePoint]) -> Vec<std::ops::Range<usize>> {
    let positions: Vec<usize> = points.iter().map(|c| c.index).collect();
    intervals(n, &positions)
        .into_iter()
        .map(|(s, e)| s..e)
        .collect()
}

#[cfg(test)]
#[path = "change_points/tests.rs"]
mod tests;
