//! The fixed seeded offset sequences: one sequence on every machine (seed
//! 004), so that results compare.

use crate::support::memory::Rng;
use crate::support::zipf::{unit, Zipf};

/// The seed of every random offset sequence: the same blocks in the same
/// order on every machine, so that results compare (seed 004).
pub const SEED: u64 = 0x0004_d15c_0f15_5eed;
/// The Zipf exponent of the `zipf` pattern (fio's `random_distribution=zipf:1.2`).
pub const ZIPF_S: f64 = 1.2;

/// The order in which blocks of a file are visited.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pattern {
    /// Block 0, 1, 2, … to the end.
    Seq,
    /// Every block once, in one fixed shuffled order.
    Rand,
    /// Blocks drawn (with repeats) from a normal distribution of byte
    /// offsets about `centre` with deviation `sigma`, folded into the file.
    Gauss { centre: u64, sigma: u64 },
    /// Blocks drawn (with repeats) by a Zipf law over block ranks (rank 0
    /// is block 0), exponent `ZIPF_S`.
    Zipf,
}

/// The fixed sequence of block offsets of one pass over a file of `size`
/// bytes in blocks of `bs`: `size / bs` offsets, the same on every machine.
pub fn offsets(pattern: Pattern, size: u64, bs: u64) -> Vec<u64> {
    let blocks = (size / bs).max(1) as usize;
    let mut rng = Rng::new(SEED);
    match pattern {
        Pattern::Seq => (0..blocks as u64).map(|b| b * bs).collect(),
        Pattern::Rand => {
            let mut v: Vec<u64> = (0..blocks as u64).map(|b| b * bs).collect();
            rng.shuffle(&mut v);
            v
        }
        Pattern::Gauss { centre, sigma } => (0..blocks)
            .map(|_| {
                // Box–Muller: one normal deviate from two uniform ones.
                let u1 = unit(&mut rng).max(f64::MIN_POSITIVE);
                let u2 = unit(&mut rng);
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let at = centre as f64 + sigma as f64 * z;
                let block = (at / bs as f64).floor();
                block.clamp(0.0, (blocks - 1) as f64) as u64 * bs
            })
            .collect(),
        Pattern::Zipf => {
            let z = Zipf::new(blocks, ZIPF_S).expect("at least one block, s > 0");
            (0..blocks)
                .map(|_| z.sample(&mut rng) as u64 * bs)
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_are_fixed_and_cover_what_they_should() {
        let (size, bs) = (4 << 20, 8 << 10);
        let seq = offsets(Pattern::Seq, size, bs);
        assert_eq!(seq.len(), 512);
        assert!(seq.windows(2).all(|w| w[1] == w[0] + bs));
        let mut rand = offsets(Pattern::Rand, size, bs);
        assert_eq!(rand, offsets(Pattern::Rand, size, bs), "seeded");
        assert_ne!(rand, seq);
        rand.sort();
        assert_eq!(rand, seq, "every block once");
        let g = offsets(
            Pattern::Gauss {
                centre: 2 << 20,
                sigma: 160 << 10,
            },
            size,
            bs,
        );
        let mean = g.iter().sum::<u64>() as f64 / g.len() as f64;
        assert!((mean - (2 << 20) as f64).abs() < 40e3, "mean {mean}");
        let within = g
            .iter()
            .filter(|&&o| o.abs_diff(2 << 20) <= 330 << 10)
            .count();
        assert!(within as f64 / g.len() as f64 > 0.9, "±2σ holds ~95 %");
        let z = offsets(Pattern::Zipf, size, bs);
        let zeros = z.iter().filter(|&&o| o == 0).count();
        assert!(zeros > z.len() / 10, "rank 0 is the most popular: {zeros}");
        assert!(z.iter().all(|&o| o % bs == 0 && o < size));
    }
}
