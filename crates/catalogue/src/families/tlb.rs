//! tlb: TLB entries and reach (lmbench's tlb). A chain loads one cache line
//! per page from `pages` base pages (huge pages refused with
//! MADV_NOHUGEPAGE) in random page order, the line's offset rotating so the
//! touched lines spread evenly over the L1 data cache's sets and stay in it
//! as long as they can: up to L1d size / line size pages (768 for 48 KiB
//! of 64-byte lines). The latency steps up when the pages exceed a TLB
//! level's entries, and once more where the lines outgrow L1d (and L2):
//! `derive` finds the steps (confirmed over resampled repetitions, as
//! lat_mem_rd's cache levels), sets aside those at a cache's line capacity,
//! and reports each remaining level's entries, reach and page size next to
//! the entries cpuid reports.

use touchstone_results::{Measurement, Unit, Warning, WarningCode};

use crate::family::{derived, Built, Family, Mode};
use crate::params::{Kind, Param, Point};
use crate::support::cache_levels::{
    min_of, os_caches, os_line_bytes, steps, SweepPoint, MIN_CONFIDENCE, SAME_STEP,
};
use crate::support::cpuid_tlb::{data_tlbs, Tlb};
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
    let mut points: Vec<SweepPoint> = ms
        .iter()
        .filter(|m| m.parallel == 1 && m.invalid.is_none())
        .filter_map(|m| {
            Some(SweepPoint {
                size: m.params.get("pages")?.parse().ok()?,
                samples: m.samples.clone(),
                headline: m.value(),
            })
        })
        .collect();
    points.sort_by_key(|p| p.size);
    let line = os_line_bytes().unwrap_or(64);
    let line_capacities: Vec<(u32, u64)> = os_caches()
        .iter()
        .map(|c| (c.level, c.size_bytes / c.line_bytes.unwrap_or(line)))
        .collect();
    derive_from(&points, page_size() as u64, &line_capacities, &data_tlbs())
}

/// Whether measured and reported entries agree: within the grid's step
/// and the blur that replacement gives a TLB step.
fn entries_agree(measured: u64, reported: u32) -> bool {
    let r = measured as f64 / reported as f64;
    (1.0 / SAME_STEP..=SAME_STEP).contains(&r)
}

/// The TLB levels in a pages sweep. `line_capacities` are (cache level,
/// lines it holds): a step within one grid step of one is where the touched
/// lines outgrow that cache, not a TLB, and is set aside (said in a
/// warning), as are steps that resampling does not confirm or that the
/// grid cannot place. `cpuid` is what the CPU reports, stored next to the
/// measured entries of the same level (`cpuid_entries`), flagged when they
/// disagree.
pub fn derive_from(
    points: &[SweepPoint],
    page: u64,
    line_capacities: &[(u32, u64)],
    cpuid: &[Tlb],
) -> Vec<Measurement> {
    if points.len() < 4 {
        return Vec::new();
    }
    let mut out: Vec<Measurement> = Vec::new();
    let mut set_aside: Vec<String> = Vec::new();
    let mut merged: Vec<f64> = Vec::new();
    for step in steps(points, None, 0.2, min_of) {
        merged.extend(&step.level.points);
        let entries = step.size;
        let cache = line_capacities.iter().find(|(_, lines)| {
            let (lo, hi) = (entries.min(*lines) as f64, entries.max(*lines) as f64);
            hi <= lo * SAME_STEP
        });
        let why = if let Some((lv, lines)) = cache {
            Some(format!(
                "the touched lines outgrow L{lv} ({lines} lines), not a TLB"
            ))
        } else if !step.resolved {
            Some("the page counts around it are too sparse to place it".to_string())
        } else if step.confidence < MIN_CONFIDENCE {
            Some(format!(
                "{:.0} % of resampled curves show it (needs {:.0} %)",
                step.confidence * 100.0,
                MIN_CONFIDENCE * 100.0
            ))
        } else {
            None
        };
        if let Some(why) = why {
            set_aside.push(format!("{entries} pages: {why}"));
            continue;
        }
        let lv = out.len() as u32 + 1;
        let mut extra: Vec<(&str, f64)> = vec![
            ("reach_bytes", (entries * page) as f64),
            ("page_bytes", page as f64),
            ("latency_ns", crate::support::cache_levels::median(&merged)),
            ("confidence", step.confidence),
        ];
        let mut warnings = Vec::new();
        if let Some(t) = cpuid.iter().find(|t| t.level == lv) {
            extra.push(("cpuid_entries", t.entries as f64));
            if !entries_agree(entries, t.entries) {
                warnings.push(Warning::new(
                    WarningCode::TlbDisagrees,
                    format!(
                        "L{lv} TLB measured at {entries} pages; cpuid reports {} entries",
                        t.entries
                    ),
                ));
            }
        }
        out.push(derived(
            &format!("tlb/level:L{lv}"),
            "tlb",
            "mem_lat",
            Unit::Count,
            entries as f64,
            &[],
            &extra,
            warnings,
        ));
        merged.clear();
    }
    if !set_aside.is_empty() {
        if let Some(last) = out.last_mut() {
            last.warnings.push(Warning::new(
                WarningCode::LevelNotDetected,
                format!("steps not reported as TLB levels: {}", set_aside.join("; ")),
            ));
        }
    }
    out
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
    use crate::support::recorded_tlb::TLB_QUICK;

    fn clean(curve: &[(u64, f64)]) -> Vec<SweepPoint> {
        curve
            .iter()
            .map(|&(size, lat)| SweepPoint {
                size,
                samples: vec![lat; 7],
                headline: lat,
            })
            .collect()
    }

    /// 48 KiB L1d of 64-byte lines and 1 MiB L2.
    const LINES: [(u32, u64); 2] = [(1, 768), (2, 16384)];

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
        let cpuid = [
            Tlb {
                level: 1,
                entries: 64,
            },
            Tlb {
                level: 2,
                entries: 2048,
            },
        ];
        let d = derive_from(&clean(&c), 4096, &LINES, &cpuid);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].value(), 64.0);
        assert_eq!(d[0].extra["reach_bytes"], (64 * 4096) as f64);
        assert_eq!(d[0].extra["cpuid_entries"], 64.0);
        assert_eq!(d[1].value(), 2048.0);
        assert!(d.iter().all(|m| m.warnings.is_empty()), "{d:?}");
        // cpuid saying otherwise is flagged, the measured figure kept.
        let other = [Tlb {
            level: 1,
            entries: 256,
        }];
        let d = derive_from(&clean(&c), 4096, &LINES, &other);
        assert_eq!(d[0].value(), 64.0);
        assert!(d[0].warnings.iter().any(|w| w.code == "tlb-disagrees"));
    }

    /// The recorded quick run on the development guest. Read step by step
    /// it gave L1 96, L2 512 and L3 4096 pages; the 512 step is where the
    /// 768 touched lines outgrow the 48 KiB L1d. Now: L1 96 (cpuid 96),
    /// then the second-level TLB at 4096, and the cache step set aside.
    #[test]
    fn the_l1d_overflow_is_not_a_tlb_level() {
        let points: Vec<SweepPoint> = TLB_QUICK
            .iter()
            .map(|(s, v)| SweepPoint {
                size: *s,
                samples: v.to_vec(),
                headline: min_of(v),
            })
            .collect();
        let old: Vec<u64> = crate::support::cache_levels::detect_levels(
            &points
                .iter()
                .map(|p| (p.size, p.headline))
                .collect::<Vec<_>>(),
            0.2,
        )
        .iter()
        .filter_map(|l| l.size)
        .collect();
        assert_eq!(old, [96, 512, 4096]);
        let cpuid = [
            Tlb {
                level: 1,
                entries: 96,
            },
            Tlb {
                level: 2,
                entries: 128,
            },
        ];
        let d = derive_from(&points, 4096, &LINES, &cpuid);
        let got: Vec<(&str, f64)> = d.iter().map(|m| (m.name.as_str(), m.value())).collect();
        assert_eq!(
            got,
            [("tlb/level:L1", 96.0), ("tlb/level:L2", 4096.0)],
            "{:?}",
            d.last().unwrap().warnings
        );
        assert!(d[0].warnings.is_empty(), "{:?}", d[0].warnings);
        // The guest's cpuid says 128 for the L2 TLB: kept, and flagged.
        assert_eq!(d[1].extra["cpuid_entries"], 128.0);
        let codes: Vec<&str> = d[1].warnings.iter().map(|w| w.code.as_str()).collect();
        assert!(codes.contains(&"tlb-disagrees"), "{codes:?}");
        assert!(
            d[1].warnings
                .iter()
                .any(|w| w.code == "level-not-detected" && w.message.contains("512 pages")),
            "{:?}",
            d[1].warnings
        );
    }
}
