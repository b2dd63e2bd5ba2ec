//! tlb: TLB entries and reach (lmbench's tlb). A chain loads one cache line
//! per page from `pages` base pages (huge pages refused with
//! MADV_NOHUGEPAGE) in random page order, the line's offset rotating so the
//! loads spread over cache sets. The latency steps up when the pages exceed
//! a TLB level's entries. `derive` finds the steps (as lat_mem_rd finds
//! cache levels) and reports entries, reach and the page size used. The
//! lines themselves outgrow L1 at (L1 size / line) pages, which can merge
//! with or mimic a TLB step: see docs/validation.md.

use touchstone_results::{Measurement, Unit};

use crate::family::{derived, Built, Family, Mode};
use crate::params::{Kind, Param, Point};
use crate::support::cache_levels::detect_levels;
use crate::support::memory::{Order, Pages};
use crate::support::pointer_chase::Chase;
use crate::support::sys::page_size;

/// Each case chases one chain (`support::pointer_chase`): `n` × 100
/// dependent loads per interval, each in a different page.
fn build(p: &Point, _: Mode) -> Result<Built, String> {
    let page = page_size();
    let pages = p.num("pages") as usize;
    let order = Order::PagePerLoad { elem: 64, page };
    Chase::case("tlb", pages * page, order, Pages::Base, 13)
}

pub fn derive(ms: &[Measurement]) -> Vec<Measurement> {
    let curve: Vec<(u64, f64)> = ms
        .iter()
        .filter(|m| m.parallel == 1)
        .filter_map(|m| Some((m.params.get("pages")?.parse().ok()?, m.value())))
        .collect();
    derive_from(&curve, page_size() as u64)
}

pub fn derive_from(curve: &[(u64, f64)], page: u64) -> Vec<Measurement> {
    if curve.len() < 4 {
        return Vec::new();
    }
    let levels = detect_levels(curve, 0.2);
    levels
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let entries = l.size?;
            Some(derived(
                &format!("tlb/level:L{}", i + 1),
                "tlb",
                "mem_lat",
                Unit::Count,
                entries as f64,
                &[],
                &[
                    ("reach_bytes", (entries * page) as f64),
                    ("page_bytes", page as f64),
                    ("latency_ns", l.latency_ns),
                ],
                Vec::new(),
            ))
        })
        .collect()
}

pub const FAMILY: Family = Family {
    params: &[Param {
        name: "pages",
        help: "pages in the chain",
        kind: Kind::Int {
            min: 4,
            max: 1 << 20,
        },
        default: &[
            "16", "32", "48", "64", "80", "96", "112", "128", "160", "192", "256", "384", "512",
            "768", "1024", "1536", "2048", "2560", "3072", "4096", "6144", "8192", "16384",
        ],
        quick: &[
            "16", "32", "64", "96", "128", "256", "512", "1024", "2048", "4096", "8192",
        ],
        positional: false,
    }],
    derive: Some(derive),
    ..Family::new(
        "tlb",
        "mem_lat",
        "TLB entries and reach: one load per base page over a growing number of pages",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_from_a_synthetic_curve() {
        let c: Vec<(u64, f64)> = [16u64, 32, 64, 96, 128, 256, 1024, 2048, 4096, 8192]
            .iter()
            .map(|&p| {
                (
                    p,
                    if p <= 64 {
                        1.0
                    } else if p <= 2048 {
                        3.0
                    } else {
                        20.0
                    },
                )
            })
            .collect();
        let d = derive_from(&c, 4096);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].value(), 64.0);
        assert_eq!(d[0].extra["reach_bytes"], (64 * 4096) as f64);
        assert_eq!(d[1].value(), 2048.0);
    }
}
