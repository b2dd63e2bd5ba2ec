//! What a virtual machine shares with the host's other tenants: its
//! last-level cache. The share of it this guest holds moves with what they
//! do, so that cache is never one of lat_mem_rd's levels and a working set
//! in it takes a run-level term of its own (`tenants_share`).

use touchstone_results::host;

use crate::support::cache_levels::{os_caches, os_is_guest};

/// The level of a virtual machine's last-level cache when it is the host's
/// (L3 or beyond, or shared by more than one CPU): its tenants take what
/// they use of it, so the plateau this guest sees ends wherever they left
/// it, from run to run. On the 2-CPU development guest the 32 MiB L3 read
/// as a level in one quick run of five (a minute when the tenants were
/// quiet, every round agreeing) and as a share in the others; no rule on
/// one run's curve can tell that minute from a dedicated cache.
pub fn guest_llc(os: &[host::Cache]) -> Option<u32> {
    let llc = os.iter().max_by_key(|c| c.level)?;
    (llc.level >= 3 || llc.shared_by.is_some_and(|n| n > 1)).then_some(llc.level)
}

/// Whether a working set of `bytes` lies in a cache that this virtual
/// machine shares with the host's other tenants (`os` its caches, `guest`
/// whether it is one): past the largest cache below the guest's last-level
/// cache (`guest_llc`) and within twice the last-level cache, where a
/// random chain still finds half its lines. What the other tenants do to
/// that cache moves such a figure from run to run (a random chain over
/// 8-12 MiB of the development guest's 32 MiB L3 read 6-8 times faster in
/// one quick run than in the next), so it takes a run-level term of its own
/// (`Shape::tenants_share_cache`).
pub fn tenants_share_on(os: &[host::Cache], guest: bool, bytes: u64) -> bool {
    let Some(llc) = guest.then(|| guest_llc(os)).flatten() else {
        return false;
    };
    let size_at = |level: u32| {
        os.iter()
            .filter(|c| c.level == level)
            .map(|c| c.size_bytes)
            .max()
            .unwrap_or(0)
    };
    let below = (1..llc).map(size_at).max().unwrap_or(0);
    bytes > below && bytes <= 2 * size_at(llc)
}

/// `tenants_share_on` for this machine.
pub fn tenants_share(bytes: u64) -> bool {
    tenants_share_on(&os_caches(), os_is_guest(), bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The caches of the development guest (private 48 KiB L1 and 1 MiB L2,
    /// 32 MiB L3 shared) and of the 16-CPU Intel guest (2 MiB L2, 300 MiB L3).
    fn guest_caches(l2: u64, l3: u64) -> Vec<host::Cache> {
        [(1, 48 << 10, 1), (2, l2, 1), (3, l3, 2)]
            .into_iter()
            .map(|(level, size_bytes, shared)| host::Cache {
                level,
                kind: if level == 1 { "data" } else { "unified" }.into(),
                size_bytes,
                line_bytes: Some(64),
                ways: None,
                shared_by: Some(shared),
            })
            .collect()
    }

    #[test]
    fn a_working_set_in_a_guests_last_level_cache_is_shared_with_its_tenants() {
        let dev = guest_caches(1 << 20, 32 << 20);
        let shared = |bytes: u64| tenants_share_on(&dev, true, bytes);
        // The private caches are this guest's own; past the L2 the host's L3,
        // up to twice its size, where a random chain still finds it.
        assert!(!shared(48 << 10));
        assert!(!shared(1 << 20));
        assert!(shared(1536 << 10));
        assert!(shared(12 << 20));
        assert!(shared(64 << 20));
        assert!(!shared(96 << 20));
        // Not in a virtual machine: the last-level cache is the machine's own.
        assert!(!tenants_share_on(&dev, false, 12 << 20));
        // The Intel guest's L3 is 300 MiB: 256 MiB is still in it.
        let intel = guest_caches(2 << 20, 300 << 20);
        assert!(!tenants_share_on(&intel, true, 2 << 20));
        assert!(tenants_share_on(&intel, true, 256 << 20));
        // No caches reported: nothing to place a working set in.
        assert!(!tenants_share_on(&[], true, 12 << 20));
    }
}
