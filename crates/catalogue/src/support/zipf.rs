//! A Zipf sampler over ranks 0..n: P(rank k) ∝ 1 / (k + 1)^s, the
//! popularity law of web files (Breslau et al. 1999; SPECweb99 draws its
//! directories and the files within a class this way). The cumulative
//! distribution is tabulated once, so a draw is one uniform number and a
//! binary search — exact for any n and s, no allocation per draw.

use super::memory::Rng;

/// Zipf-distributed ranks over 0..n with exponent s.
#[derive(Debug, Clone)]
pub struct Zipf {
    /// cdf[k] = P(rank ≤ k); the last entry is 1.
    cdf: Vec<f64>,
}

impl Zipf {
    /// Ranks 0..n (n ≥ 1) with exponent `s` ≥ 0 (0 is uniform; 1 is the
    /// classic law).
    pub fn new(n: usize, s: f64) -> Result<Zipf, String> {
        if n == 0 {
            return Err("a Zipf distribution needs at least one rank".into());
        }
        if !(s.is_finite() && s >= 0.0) {
            return Err(format!("a Zipf exponent of {s}: it must be 0 or more"));
        }
        let weights: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-s)).collect();
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let mut cdf: Vec<f64> = weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        // Rounding must not leave a sliver above the last rank.
        *cdf.last_mut().expect("n ≥ 1") = 1.0;
        Ok(Zipf { cdf })
    }

    /// How many ranks.
    pub fn len(&self) -> usize {
        self.cdf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cdf.is_empty()
    }

    /// The probability of rank `k`.
    pub fn probability(&self, k: usize) -> f64 {
        match k {
            0 => self.cdf[0],
            _ => self.cdf[k] - self.cdf[k - 1],
        }
    }

    /// One rank, drawn with `rng`.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> usize {
        let u = unit(rng);
        // The first rank whose cumulative probability exceeds u.
        self.cdf
            .partition_point(|&c| c <= u)
            .min(self.cdf.len() - 1)
    }
}

/// A uniform number in [0, 1) with 53 random bits.
#[inline]
pub fn unit(rng: &mut Rng) -> f64 {
    (rng.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pearson's chi-square statistic of `counts` against `z`.
    fn chi_square(z: &Zipf, counts: &[u64]) -> f64 {
        let n: u64 = counts.iter().sum();
        counts
            .iter()
            .enumerate()
            .map(|(k, &c)| {
                let e = z.probability(k) * n as f64;
                (c as f64 - e).powi(2) / e
            })
            .sum()
    }

    fn draw(z: &Zipf, n: usize, seed: u64) -> Vec<u64> {
        let mut rng = Rng::new(seed);
        let mut counts = vec![0u64; z.len()];
        for _ in 0..n {
            counts[z.sample(&mut rng)] += 1;
        }
        counts
    }

    // Upper 0.1 % points of the chi-square distribution (df = ranks − 1).
    const CHI2_999_DF8: f64 = 26.12;
    const CHI2_999_DF49: f64 = 85.35;

    #[test]
    fn frequencies_match_the_distribution() {
        for (n, s, crit) in [(9, 1.0, CHI2_999_DF8), (50, 1.0, CHI2_999_DF49)] {
            let z = Zipf::new(n, s).unwrap();
            let counts = draw(&z, 200_000, 42);
            let x2 = chi_square(&z, &counts);
            assert!(x2 < crit, "n {n} s {s}: chi-square {x2} ≥ {crit}");
            // The head follows 1/k: rank 0 is drawn about twice as often as
            // rank 1 (s = 1).
            let ratio = counts[0] as f64 / counts[1] as f64;
            assert!((ratio - 2.0).abs() < 0.1, "{ratio}");
        }
    }

    #[test]
    fn the_test_rejects_a_sampler_of_another_law() {
        // Draws from Zipf s = 0.8 judged against s = 1: the statistic must
        // be far above the critical value, or the test above proves nothing.
        let truth = Zipf::new(9, 0.8).unwrap();
        let claimed = Zipf::new(9, 1.0).unwrap();
        let x2 = chi_square(&claimed, &draw(&truth, 200_000, 42));
        assert!(x2 > 10.0 * CHI2_999_DF8, "{x2}");
    }

    #[test]
    fn probabilities_follow_the_law_and_bad_shapes_are_refused() {
        let z = Zipf::new(4, 1.0).unwrap();
        let h = 1.0 + 0.5 + 1.0 / 3.0 + 0.25;
        for k in 0..4 {
            assert!((z.probability(k) - 1.0 / (k as f64 + 1.0) / h).abs() < 1e-12);
        }
        let u = Zipf::new(5, 0.0).unwrap();
        assert!((u.probability(3) - 0.2).abs() < 1e-12, "s = 0 is uniform");
        assert_eq!(Zipf::new(1, 1.0).unwrap().sample(&mut Rng::new(7)), 0);
        assert!(Zipf::new(0, 1.0).is_err());
        assert!(Zipf::new(3, -1.0).is_err() && Zipf::new(3, f64::NAN).is_err());
    }
}
