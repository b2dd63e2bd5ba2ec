//! linpack: solve a dense system A x = b of order 100 or 1000 in double
//! precision by LU factorisation with partial pivoting (Gaussian
//! elimination, column oriented, unblocked, as the LINPACK benchmark
//! report of Dongarra describes it) followed by forward and back
//! substitution. Reported in MFLOPS with the benchmark's standard operation
//! count 2/3 n³ + 2 n², whatever the code really executes.
//!
//! The matrix is the benchmark's: entries from the linear congruential
//! sequence s ← 3125 s mod 65536 (s₀ = 1325), scaled to (s − 32768)/16384,
//! stored column by column; b holds the row sums, so the exact solution is
//! all ones. After every interval each solution is checked with the
//! normalised residual ‖A x − b‖∞ / (n ‖A‖∞ ‖x‖∞ ε), which is of order one
//! for a correct solve; above `RESIDUAL_LIMIT` the measurement fails.

use touchstone_harness::{Benchmark, Fallible, Shape};
use touchstone_results::Unit;

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};

/// A normalised residual above this means a wrong answer (LINPACK runs
/// print values of about 1 to 10; HPL's own limit is 16 for its slightly
/// different normalisation).
pub const RESIDUAL_LIMIT: f64 = 100.0;

/// The benchmark's operation count for order `n`.
pub fn flops(n: usize) -> f64 {
    let n = n as f64;
    2.0 / 3.0 * n * n * n + 2.0 * n * n
}

/// The benchmark matrix (column-major, leading dimension n) and right-hand side.
pub fn matgen(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut a = vec![0.0; n * n];
    let mut seed: u32 = 1325;
    for j in 0..n {
        for i in 0..n {
            seed = (3125 * seed) % 65536;
            a[j * n + i] = (seed as f64 - 32768.0) / 16384.0;
        }
    }
    let mut b = vec![0.0; n];
    for j in 0..n {
        for i in 0..n {
            b[i] += a[j * n + i];
        }
    }
    (a, b)
}

/// y += t x, the inner kernel of both factorisation and solve.
#[inline(always)]
fn axpy(t: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += t * xi;
    }
}

/// LU factorisation in place with partial pivoting (column oriented):
/// for each column, pick the largest remaining entry as pivot, swap it to
/// the diagonal, scale the column below by −1/pivot, and eliminate it from
/// every later column with an axpy. Returns the pivot rows, or the column
/// at which an exact zero pivot made the matrix singular.
pub fn factor(a: &mut [f64], n: usize, pivots: &mut [usize]) -> Result<(), usize> {
    for k in 0..n {
        let col = &a[k * n..(k + 1) * n];
        let mut l = k;
        let mut best = col[k].abs();
        for (i, v) in col.iter().enumerate().skip(k + 1) {
            if v.abs() > best {
                best = v.abs();
                l = i;
            }
        }
        pivots[k] = l;
        if best == 0.0 {
            return Err(k);
        }
        if l != k {
            a.swap(k * n + l, k * n + k);
        }
        let t = -1.0 / a[k * n + k];
        for v in &mut a[k * n + k + 1..(k + 1) * n] {
            *v *= t;
        }
        let (left, right) = a.split_at_mut((k + 1) * n);
        let multipliers = &left[k * n + k + 1..(k + 1) * n];
        for colj in right.chunks_exact_mut(n) {
            let t = colj[l];
            if l != k {
                colj[l] = colj[k];
                colj[k] = t;
            }
            axpy(t, multipliers, &mut colj[k + 1..]);
        }
    }
    Ok(())
}

/// Solve with the factors: apply the row swaps and L (forward), then U
/// (backward), overwriting `b` with x.
pub fn solve(a: &[f64], n: usize, pivots: &[usize], b: &mut [f64]) {
    for k in 0..n {
        let l = pivots[k];
        let t = b[l];
        if l != k {
            b[l] = b[k];
            b[k] = t;
        }
        axpy(t, &a[k * n + k + 1..(k + 1) * n], &mut b[k + 1..]);
    }
    for k in (0..n).rev() {
        b[k] /= a[k * n + k];
        let t = -b[k];
        axpy(t, &a[k * n..k * n + k], &mut b[..k]);
    }
}

/// ‖A x − b‖∞ / (n ‖A‖∞ ‖x‖∞ ε) for the original A and b.
pub fn normalised_residual(a: &[f64], b: &[f64], x: &[f64], n: usize) -> f64 {
    let mut r: Vec<f64> = b.iter().map(|v| -v).collect();
    for j in 0..n {
        axpy(x[j], &a[j * n..(j + 1) * n], &mut r);
    }
    let norm = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let mut row_sums = vec![0.0; n];
    for j in 0..n {
        for i in 0..n {
            row_sums[i] += a[j * n + i].abs();
        }
    }
    let norm_a = norm(&row_sums);
    norm(&r) / (n as f64 * norm_a * norm(x) * f64::EPSILON)
}

pub struct Linpack {
    n: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    /// One working copy of (A, b, pivots) per iteration of an interval.
    work: Vec<(Vec<f64>, Vec<f64>, Vec<usize>)>,
    worst_residual: f64,
}

impl Benchmark for Linpack {
    /// Untimed: one fresh copy of A and b for each of the `n` solves.
    fn prepare(&mut self, n: u64) -> Fallible {
        while self.work.len() < n as usize {
            self.work.push((Vec::new(), Vec::new(), vec![0; self.n]));
        }
        for (a, b, _) in self.work.iter_mut().take(n as usize) {
            a.clear();
            a.extend_from_slice(&self.a);
            b.clear();
            b.extend_from_slice(&self.b);
        }
        Ok(())
    }

    /// Timed: `n` solves, each the factorisation and the substitutions of
    /// its own copy, and nothing else (no copying or allocation). The
    /// factors and solutions stay in memory that `conclude` reads, so the
    /// optimiser cannot remove any of the work.
    fn run(&mut self, n: u64) -> Fallible {
        let order = self.n;
        for (a, b, p) in self.work.iter_mut().take(n as usize) {
            factor(a, order, p).map_err(|k| {
                format!("linpack: the matrix is singular (zero pivot in column {k})")
            })?;
            solve(a, order, p, b);
        }
        Ok(())
    }

    /// Untimed: the normalised residual of every solution; too large a
    /// residual means a wrong answer and fails the measurement.
    fn conclude(&mut self, n: u64) -> Fallible {
        for (_, x, _) in self.work.iter().take(n as usize) {
            let r = normalised_residual(&self.a, &self.b, x, self.n);
            if !(r.is_finite() && r <= RESIDUAL_LIMIT) {
                return Err(format!(
                    "linpack n={}: normalised residual {r:.3} exceeds {RESIDUAL_LIMIT}: wrong solution, refusing to report a figure",
                    self.n
                )
                .into());
            }
            self.worst_residual = self.worst_residual.max(r);
        }
        Ok(())
    }

    fn extras(&mut self) -> Vec<(String, f64)> {
        vec![("normalised_residual".into(), self.worst_residual)]
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let n = p.num("n") as usize;
    let (a, b) = matgen(n);
    Ok(Built::new(
        Linpack {
            n,
            a,
            b,
            work: Vec::new(),
            worst_residual: 0.0,
        },
        Shape::rate(flops(n), Unit::Mflops, 1e6),
    ))
}

pub const FAMILY: Family = Family {
    params: &[Param::int("n", 2, 5000)
        .measured(&["100", "1000"])
        .quick(&["100"])
        .help("order of the system (the benchmark's are 100 and 1000)")],
    ..Family::new(
        "linpack",
        "cpu",
        "LINPACK: LU solve of a dense order-n system (partial pivoting), MFLOPS, residual-checked",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_sane, measure_tiny};

    #[test]
    fn solves_the_benchmark_system() {
        for n in [2, 3, 10, 100] {
            let (a, b) = matgen(n);
            let mut lu = a.clone();
            let mut x = b.clone();
            let mut p = vec![0; n];
            factor(&mut lu, n, &mut p).unwrap();
            solve(&lu, n, &p, &mut x);
            let r = normalised_residual(&a, &b, &x, n);
            assert!(r < 10.0, "n={n}: residual {r}");
            for v in x {
                assert!((v - 1.0).abs() < 1e-9, "n={n}: x = {v}");
            }
        }
    }

    #[test]
    fn pivots_where_elimination_without_them_fails() {
        // A zero on the diagonal: only a row swap solves this.
        let a = vec![0.0, 1.0, 1.0, 1.0]; // columns (0,1), (1,1)
        let b = vec![1.0, 2.0];
        let (mut lu, mut x, mut p) = (a.clone(), b.clone(), vec![0; 2]);
        factor(&mut lu, 2, &mut p).unwrap();
        solve(&lu, 2, &p, &mut x);
        assert!(
            (x[0] - 1.0).abs() < 1e-12 && (x[1] - 1.0).abs() < 1e-12,
            "{x:?}"
        );
        assert!(normalised_residual(&a, &b, &x, 2) < 10.0);
    }

    #[test]
    fn a_wrong_solution_is_refused() {
        let (a, b) = matgen(50);
        let mut bench = Linpack {
            n: 50,
            a,
            b,
            work: Vec::new(),
            worst_residual: 0.0,
        };
        bench.prepare(1).unwrap();
        bench.run(1).unwrap();
        bench.conclude(1).unwrap();
        bench.work[0].1[7] += 1e-6;
        assert!(bench.conclude(1).is_err());
    }

    #[test]
    fn singular_is_an_error() {
        let mut a = vec![1.0, 2.0, 2.0, 4.0];
        let mut p = vec![0; 2];
        assert_eq!(factor(&mut a, 2, &mut p), Err(1));
    }

    #[test]
    fn measures_order_100() {
        let ms = measure_tiny("linpack/n:100").unwrap();
        assert_sane(&ms[0]);
        assert!(ms[0].extra["normalised_residual"] < RESIDUAL_LIMIT);
    }
}
