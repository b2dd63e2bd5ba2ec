//! The order a run measures its cases in, round by round (after
//! google/benchmark's random interleaving): every round measures every case
//! once, each round in its own shuffled order, so that no case always
//! follows the same one (what ran just before — a case that filled the
//! caches or the page cache, one that heated a CPU — lands on every case
//! alike) and a slow drift of the machine spreads over all cases' rounds
//! instead of moving some of them together. The order is a pure function of
//! the seed, which the run records: `run --seed` repeats it.

use touchstone_results::random::SplitMix64;

/// For each round, the cases' indices (0..cases) in the order measured.
pub fn order(cases: usize, rounds: u32, seed: u64) -> Vec<Vec<usize>> {
    let mut rng = SplitMix64::new(seed);
    (0..rounds)
        .map(|_| {
            let mut v: Vec<usize> = (0..cases).collect();
            // Fisher–Yates.
            for i in (1..v.len()).rev() {
                let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                v.swap(i, j);
            }
            v
        })
        .collect()
}

/// A seed for a run that was not given one: from the kernel's random
/// source, else the clock and the process id.
pub fn fresh_seed() -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: filling a local buffer.
    let got = unsafe { libc::getrandom(b.as_mut_ptr() as *mut libc::c_void, b.len(), 0) };
    if got == b.len() as isize {
        return u64::from_le_bytes(b);
    }
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: filling a local timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut t) };
    (t.tv_sec as u64).wrapping_mul(1_000_000_007)
        ^ t.tv_nsec as u64
        ^ u64::from(std::process::id()) << 40
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_round_measures_every_case_once_in_its_own_order() {
        let o = order(20, 5, 42);
        assert_eq!(o.len(), 5);
        for round in &o {
            let mut sorted = round.clone();
            sorted.sort();
            assert_eq!(sorted, (0..20).collect::<Vec<_>>());
        }
        // Shuffled, and not the same shuffle every round.
        assert_ne!(o[0], (0..20).collect::<Vec<_>>());
        assert!(o.windows(2).any(|w| w[0] != w[1]));
    }

    /// The seed recorded with a run gives its order back.
    #[test]
    fn the_same_seed_gives_the_same_order() {
        assert_eq!(order(50, 3, 7), order(50, 3, 7));
        assert_ne!(order(50, 3, 7), order(50, 3, 8));
        assert_eq!(order(0, 2, 1), vec![Vec::<usize>::new(); 2]);
    }

    /// Over many rounds each case follows many different cases (what ran
    /// just before is sampled, not fixed).
    #[test]
    fn predecessors_vary() {
        let o = order(10, 30, 3);
        let before: std::collections::BTreeSet<usize> = o
            .iter()
            .filter_map(|r| {
                let at = r.iter().position(|&c| c == 5)?;
                at.checked_sub(1).map(|i| r[i])
            })
            .collect();
        assert!(before.len() >= 6, "{before:?}");
    }
}
