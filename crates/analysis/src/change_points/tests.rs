//! E-divisive on seeded series: the fast scan against the definition,
//! shifts found where they were made, none in noise, the same answer for
//! the same seed.

use super::*;

/// Seeded normal noise (SplitMix64 and Box–Muller, as the USL tests draw it).
struct Noise(SplitMix64);

impl Noise {
    fn new(seed: u64) -> Noise {
        Noise(SplitMix64::new(seed))
    }
    fn unit(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let u = self.unit().max(1e-300);
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * self.unit()).cos()
    }
}

/// `n` values around `level` with relative noise `sd`, the level moved by
/// `shift` (relative) from each position of `at` on.
fn series(seed: u64, n: usize, sd: f64, at: &[(usize, f64)]) -> Vec<f64> {
    let mut noise = Noise::new(seed);
    (0..n)
        .map(|i| {
            let level: f64 = at
                .iter()
                .filter(|(p, _)| i >= *p)
                .map(|(_, s)| 1.0 + s)
                .product();
            100.0 * level * (1.0 + sd * noise.normal())
        })
        .collect()
}

/// Q of X = x[s..t), Y = x[t..k) straight from the definition.
fn q_by_definition(x: &[f64], s: usize, t: usize, k: usize) -> f64 {
    let (n, m) = ((t - s) as f64, (k - t) as f64);
    let mut cross = 0.0;
    for i in s..t {
        for j in t..k {
            cross += (x[i] - x[j]).abs();
        }
    }
    let pairs = |a: usize, b: usize| {
        let mut sum = 0.0;
        for i in a..b {
            for j in i + 1..b {
                sum += (x[i] - x[j]).abs();
            }
        }
        sum
    };
    let mut q = 2.0 / (n + m) * cross;
    if n > 1.0 {
        q -= 2.0 * m / ((n + m) * (n - 1.0)) * pairs(s, t);
    }
    if m > 1.0 {
        q -= 2.0 * n / ((n + m) * (m - 1.0)) * pairs(t, k);
    }
    q
}

/// Otava's matrix scan by the definition: rows τ, columns κ, cells with
/// κ ≤ τ zero, the first maximum in row-major order.
fn best_by_definition(x: &[f64], s: usize, e: usize) -> (usize, f64) {
    let mut best = (0, f64::NEG_INFINITY);
    for t in s + 1..e {
        for k in s + 2..=e {
            let q = if k > t {
                q_by_definition(x, s, t, k)
            } else {
                0.0
            };
            if q > best.1 {
                best = (t, q);
            }
        }
    }
    best
}

#[test]
fn the_scan_finds_the_split_the_definition_does() {
    let mut rows = Vec::new();
    for seed in 0..40 {
        let x = series(seed, 5 + seed as usize % 17, 0.05, &[(7, 0.1)]);
        for (s, e) in [(0, x.len()), (1, x.len()), (2, x.len() - 1), (0, 2)] {
            let c = best_split(&x, s, e, &mut rows);
            let (t, q) = best_by_definition(&x, s, e);
            assert_eq!(c.index, t, "seed {seed} [{s}, {e})");
            assert!(
                (c.qhat - q).abs() <= 1e-9 * q.abs().max(1.0),
                "{} {q}",
                c.qhat
            );
        }
    }
    // A series whose every split has a negative Q: Otava's zero cell.
    let flat = [1.0, 2.0, 1.0, 2.0, 1.0, 2.0];
    let c = best_split(&flat, 0, flat.len(), &mut rows);
    assert_eq!((c.index, c.qhat), best_by_definition(&flat, 0, flat.len()));
}

#[test]
fn one_shift_is_found_where_it_was_made() {
    for (seed, shift) in [(1, 0.10), (2, -0.10), (3, 0.5), (4, 0.04)] {
        let x = series(seed, 40, 0.01, &[(25, shift)]);
        let cps = e_divisive(&x, &Options::default());
        let at: Vec<usize> = cps.iter().map(|c| c.index).collect();
        assert_eq!(at, [25], "seed {seed}, shift {shift}");
        assert!(cps[0].pvalue > 0.0 && cps[0].pvalue <= 0.01);
    }
}

#[test]
fn two_shifts_are_both_found() {
    let x = series(7, 60, 0.01, &[(20, 0.2), (45, -0.1)]);
    let at: Vec<usize> = e_divisive(&x, &Options::default())
        .iter()
        .map(|c| c.index)
        .collect();
    assert_eq!(at, [20, 45]);
    assert_eq!(
        segments(60, &e_divisive(&x, &Options::default())),
        [0..20, 20..45, 45..60]
    );
}

#[test]
fn noise_alone_rarely_has_a_change_point() {
    // 1 % per series by construction (no shuffle may reach the observed Q).
    let with_any = (100..150)
        .filter(|&seed| !e_divisive(&series(seed, 30, 0.02, &[]), &Options::default()).is_empty())
        .count();
    assert!(with_any <= 3, "{with_any} of 50 shift-free series");
}

#[test]
fn the_same_seed_gives_the_same_answer_and_the_test_can_be_made_stricter() {
    let x = series(9, 30, 0.02, &[(12, 0.03)]);
    let a = e_divisive(&x, &Options::default());
    assert_eq!(a, e_divisive(&x, &Options::default()));
    let strict = Options {
        max_pvalue: 0.001,
        ..Options::default()
    };
    // 100 shuffles cannot give p ≤ 0.001 (the least is 1/101).
    assert!(e_divisive(&x, &strict).is_empty());
}

#[test]
fn short_or_broken_series_have_none() {
    assert!(e_divisive(&[], &Options::default()).is_empty());
    assert!(e_divisive(&[1.0], &Options::default()).is_empty());
    let mut x = series(5, 30, 0.01, &[(15, 0.5)]);
    x[3] = f64::NAN;
    assert!(e_divisive(&x, &Options::default()).is_empty());
}
