//! sieve: the sieve of Eratosthenes as the BYTE benchmark popularised it
//! (Gilbreath, BYTE, September 1981): an array of `flags` bytes stands for
//! the odd numbers 3, 5, 7, …, 2·flags+1; each still-marked entry is a
//! prime p, whose odd multiples from 3p on are struck out. One iteration is
//! one whole sieve (clearing included); the figure is the time per sieve.
//! With the classic 8190 flags the count is 1899 (the odd primes up to
//! 16381). Every interval's count is checked against an independent count
//! (a plain sieve over all integers, made once in `build`): a wrong count
//! fails the measurement.

use std::hint::black_box;

use touchstone_harness::{Benchmark, Fallible, Shape};

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};

/// One sieve over `flags` (which it re-marks first); returns the primes found.
#[inline(never)]
pub fn sieve(flags: &mut [u8]) -> u64 {
    flags.fill(1);
    let size = flags.len();
    let mut count = 0;
    for i in 0..size {
        if flags[i] != 0 {
            let prime = i + i + 3;
            let mut k = i + prime;
            while k < size {
                flags[k] = 0;
                k += prime;
            }
            count += 1;
        }
    }
    count
}

/// The odd primes in 3..=2·size+1, counted another way.
pub fn reference_count(size: usize) -> u64 {
    let limit = 2 * size + 1;
    let mut composite = vec![false; limit + 1];
    let mut count = 0;
    for m in 2..=limit {
        if !composite[m] {
            if m != 2 {
                count += 1;
            }
            let mut k = m * m;
            while k <= limit {
                composite[k] = true;
                k += m;
            }
        }
    }
    count
}

pub struct Sieve {
    flags: Vec<u8>,
    want: u64,
    got: u64,
}

impl Benchmark for Sieve {
    /// Timed: `n` sieves over the same flag array. The array (allocated in
    /// `build`) is passed through `black_box` each time, so no sieve can be
    /// hoisted as loop-invariant, and every count is kept and checked.
    fn run(&mut self, n: u64) -> Fallible {
        let mut bad = 0u64;
        for _ in 0..n {
            let c = sieve(black_box(&mut self.flags));
            if c != self.want {
                bad = c;
            }
        }
        self.got = if bad != 0 { bad } else { self.want };
        Ok(())
    }

    /// Untimed: a wrong count fails the measurement.
    fn conclude(&mut self, _n: u64) -> Fallible {
        if self.got != self.want {
            return Err(format!(
                "sieve: counted {} primes, expected {}; refusing to report a figure",
                self.got, self.want
            )
            .into());
        }
        Ok(())
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let size = p.num("flags") as usize;
    Ok(Built::new(
        Sieve {
            flags: vec![0; size],
            want: reference_count(size),
            got: 0,
        },
        Shape::latency(1.0),
    ))
}

pub const FAMILY: Family = Family {
    params: &[Param::int("flags", 16, 1 << 28)
        .measured(&["8190", "1048576"])
        .quick(&["8190"])
        .help("flag bytes (odd numbers up to 2·flags+1); BYTE's classic is 8190")],
    ..Family::new(
        "sieve",
        "cpu",
        "sieve of Eratosthenes (BYTE's, odd numbers only): time per sieve, count checked",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_classic_count() {
        let mut flags = vec![0; 8190];
        assert_eq!(sieve(&mut flags), 1899);
        assert_eq!(reference_count(8190), 1899);
        for size in [16, 100, 1000, 12345] {
            assert_eq!(sieve(&mut vec![0; size]), reference_count(size), "{size}");
        }
    }

    #[test]
    fn a_wrong_count_is_refused() {
        let mut s = Sieve {
            flags: vec![0; 8190],
            want: 1900,
            got: 0,
        };
        s.run(2).unwrap();
        assert!(s.conclude(2).is_err());
    }
}
