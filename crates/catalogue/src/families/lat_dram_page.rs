//! lat_dram_page: open versus closed DRAM page (lmbench's lat_dram_page),
//! where measurable. Two random chains over 4× the last-level cache in huge
//! pages (no TLB misses to speak of): `open` visits the lines of each 4 KiB
//! block in random order before moving to a random next block, so
//! consecutive misses tend to hit a DRAM row already open; `closed` visits
//! every line in random order, so consecutive misses land in different rows.
//! The difference bounds the open-page benefit from above: the spatial
//! prefetchers also favour `open`, and physical-to-DRAM address mapping is
//! unknown (inside a VM, unknowable). `derive` reports the difference.

use touchstone_results::{Measurement, Unit};

use crate::family::{derived, Built, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::cache_levels::beyond_llc;
use crate::support::memory::{Order, Pages};
use crate::support::pointer_chase::Chase;

/// Each case chases one chain (`support::pointer_chase`): `n` × 100
/// dependent loads per interval.
fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let order = if p.text("page") == "open" {
        Order::RandBlocks {
            elem: 64,
            block: 4096,
        }
    } else {
        Order::Rand { elem: 64 }
    };
    Chase::case("lat_dram_page", beyond_llc(), order, Pages::Huge, 19)
}

pub fn derive(ms: &[Measurement]) -> Vec<Measurement> {
    let get = |p: &str| {
        ms.iter()
            .find(|m| m.parallel == 1 && m.params.get("page").map(String::as_str) == Some(p))
            .map(|m| m.value())
    };
    let (Some(open), Some(closed)) = (get("open"), get("closed")) else {
        return Vec::new();
    };
    let mut m = derived(
        "lat_dram_page/difference",
        "lat_dram_page",
        "mem_lat",
        Unit::Ns,
        (closed - open).max(0.0),
        &[],
        &[("open_ns", open), ("closed_ns", closed)],
        Vec::new(),
    );
    // Noise (or a VM's page placement) can make the open-page chain the
    // slower: no benefit is then measured, and a negative difference is
    // no latency — stored invalid with the reason, never as a figure.
    if closed <= open {
        m.invalid = Some(format!(
            "the closed-page chain ({closed:.1} ns) was not slower than the open-page chain \
             ({open:.1} ns): no open-page benefit measured; re-run on a quiet machine"
        ));
    }
    vec![m]
}

pub const FAMILY: Family = Family {
    params: &[Param::choice("page", &["open", "closed"])
        .positional()
        .help("open: misses clustered by 4 KiB block; closed: scattered")],
    derive: Some(derive),
    ..Family::new(
        "lat_dram_page",
        "mem_lat",
        "DRAM latency with consecutive misses in the same 4 KiB block (open page) or not (closed)",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::derived as measured;

    fn chain(page: &str, ns: f64) -> Measurement {
        let mut m = measured(
            "lat_dram_page",
            "lat_dram_page",
            "mem_lat",
            Unit::Ns,
            ns,
            &[],
            &[],
            Vec::new(),
        );
        m.params.insert("page".into(), page.into());
        m
    }

    #[test]
    fn a_difference_at_or_below_zero_is_invalid_not_negative() {
        let d = &derive(&[chain("open", 90.0), chain("closed", 120.0)])[0];
        assert_eq!((d.value(), d.invalid.is_none()), (30.0, true));
        let d = &derive(&[chain("open", 120.0), chain("closed", 110.0)])[0];
        assert!(d.value() >= 0.0 && d.samples.iter().all(|&x| x >= 0.0));
        assert!(d
            .invalid
            .as_deref()
            .is_some_and(|r| r.contains("not slower")));
    }
}
