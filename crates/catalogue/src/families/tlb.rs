//! tlb: TLB entries and reach (lmbench's tlb). A chain loads one cache line
//! per page from `pages` base pages (huge pages refused with
//! MADV_NOHUGEPAGE) in random page order, the line's offset rotating so the
//! touched lines spread evenly over the L1 data cache's sets and stay in it
//! as long as they can: up to L1d size / line size pages (768 for 48 KiB
//! of 64-byte lines). The latency steps up when the pages exceed a TLB
//! level's entries, and once more where the lines outgrow L1d (and L2):
//! `derive` finds the steps (confirmed over resampled repetitions, as
//! lat_mem_rd's cache levels), sets aside those within one grid step of a
//! cache's line capacity, names the rest after the levels cpuid (or the
//! device tree) reports (with none reported, by where they lie against the
//! caches' line capacities), and gives each level's entries, reach and page
//! size next to the reported entries, or "not detected" with the reason.

use touchstone_results::{Measurement, Unit, Warning, WarningCode};

use crate::family::{derived, not_detected_level, Built, Family, RunContext};
use crate::params::{Kind, Param, Point};
use crate::support::cache_levels::{
    grid_steps_apart, min_of, name_candidates, os_caches, os_line_bytes, steps, Place, Step,
    SweepPoint,
};
use crate::support::cpuid_tlb::{reported_tlbs, Tlb};
use crate::support::memory::{Order, Pages};
use crate::support::pointer_chase::Chase;
use crate::support::sys::page_size;

/// Each case chases one chain (`support::pointer_chase`): `n` × 100
/// dependent loads per interval, each in a different page.
fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
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
                rounds: m.rounds.clone(),
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
    let reported = reported_tlbs();
    let (source, tlbs) = reported
        .as_ref()
        .map_or(("cpuid", &[][..]), |(s, t)| (*s, t.as_slice()));
    derive_from(&points, page_size() as u64, &line_capacities, source, tlbs)
}

/// How far the reported entries may lie outside the grid's bracket of a
/// step and still agree: the blur that replacement and page walks give a
/// TLB step.
const REPORTED_SLACK: f64 = 1.1;

/// Whether the entries the CPU reports agree with a step measured at
/// `entries` pages, the next page count measured being `next`: the step
/// lies in (`entries`, `next`], so agreement is the reported count in that
/// bracket, widened by 10 % (3072 agrees with 3072 measured, 72 with a
/// step between 64 and 80 pages; 3072 does not with 256 and 512).
fn entries_agree(entries: u64, next: Option<u64>, reported: u32) -> bool {
    let lo = entries as f64 / REPORTED_SLACK;
    let hi = next.unwrap_or(entries) as f64 * REPORTED_SLACK;
    (lo..=hi).contains(&(reported as f64))
}

/// The TLB levels in a pages sweep. `line_capacities` are (cache level,
/// lines it holds): a step within one grid step (of the page counts
/// measured) of one is where the touched lines outgrow that cache, not a
/// TLB, and is set aside (said in a warning). Steps that resampling does
/// not confirm or that the grid cannot place are not detected. `tlbs` is
/// what the machine reports (`source`: "cpuid" or "devicetree"): each
/// confirmed step is named after the reported level nearest it
/// (`name_steps`; with none reported, `named_by_lines`), the reported
/// entries are stored next to the measured
/// ones (`cpuid_entries`, or `devicetree_entries`), and a disagreement is
/// flagged (`tlb-disagrees`) in every mode; a reported level that no
/// confirmed step stands for is stored as not detected (`invalid`), never
/// as a number.
pub fn derive_from(
    points: &[SweepPoint],
    page: u64,
    line_capacities: &[(u32, u64)],
    source: &str,
    tlbs: &[Tlb],
) -> Vec<Measurement> {
    if points.len() < 4 {
        return Vec::new();
    }
    let grid: Vec<u64> = points.iter().map(|p| p.size).collect();
    let found = steps(points, None, 0.2, min_of, Place::Onset);
    let mut set_aside: Vec<String> = Vec::new();
    let mut why: Vec<Option<String>> = Vec::new();
    let mut is_cache: Vec<bool> = Vec::new();
    for step in &found {
        // A cache's step is placed where a cache's is (halfway up), not
        // where a TLB's is (where it leaves the plateau).
        let halfway = step.level.size.unwrap_or(step.size);
        let cache = line_capacities
            .iter()
            .find(|(_, lines)| grid_steps_apart(&grid, halfway, *lines) <= 1.0 + 1e-9);
        is_cache.push(cache.is_some());
        why.push(if let Some((lv, lines)) = cache {
            Some(format!(
                "halfway up at {halfway} pages, the touched lines outgrow L{lv} ({lines} lines, \
                 within one grid step), not a TLB"
            ))
        } else if !step.resolved {
            Some("the page counts around it are too sparse to place it".to_string())
        } else {
            step.unconfirmed_in("", |pages| format!("{pages} pages"))
        });
    }
    let reported: Vec<(u32, u64)> = tlbs.iter().map(|t| (t.level, t.entries as u64)).collect();
    // The steps that could be TLB levels (all but the caches'), matched to
    // the reported levels confirmed or not, so each keeps its place; with
    // none reported, by the caches' line capacities (`named_by_lines`).
    let names = if reported.is_empty() && !line_capacities.is_empty() {
        named_by_lines(&found, line_capacities, &is_cache, &mut why)
    } else {
        let candidates: Vec<usize> = (0..found.len())
            .filter(|&i| !is_cache[i] && (!reported.is_empty() || why[i].is_none()))
            .collect();
        name_candidates(&candidates, |i| found[i].size, &reported, source, &mut why)
    };
    let reported_key = format!("{source}_entries");
    let mut out: Vec<Measurement> = Vec::new();
    let mut merged: Vec<f64> = Vec::new();
    for (i, step) in found.iter().enumerate() {
        merged.extend(&step.level.points);
        let entries = step.size;
        let (Some(lv), None) = (names[i], &why[i]) else {
            let reason = why[i].as_deref().unwrap_or("not confirmed");
            set_aside.push(format!("{entries} pages: {reason}"));
            // A level not detected keeps its plateau; a step that is no
            // level splits one, which goes on into the next.
            if names[i].is_some() {
                merged.clear();
            }
            continue;
        };
        let mut extra: Vec<(&str, f64)> = vec![
            ("reach_bytes", (entries * page) as f64),
            ("page_bytes", page as f64),
            ("latency_ns", crate::support::cache_levels::median(&merged)),
            ("confidence", step.confidence),
        ];
        if let Some(next) = step.next {
            extra.push(("next_pages", next as f64));
        }
        let mut warnings = Vec::new();
        if let Some(t) = tlbs.iter().find(|t| t.level == lv) {
            extra.push((reported_key.as_str(), t.entries as f64));
            if !entries_agree(entries, step.next, t.entries) {
                let bracket = step.next.map_or(String::new(), |n| {
                    format!(" (the step lies between {entries} and {n} pages)")
                });
                warnings.push(Warning::new(
                    WarningCode::TlbDisagrees,
                    format!(
                        "L{lv} TLB measured at {entries} pages{bracket}; {source} reports {} entries",
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
    // The levels the machine reports that no confirmed step stands for,
    // where the sweep reaches past them.
    let largest = grid.last().copied().unwrap_or(0);
    for t in tlbs {
        let figure = (0..found.len()).any(|i| names[i] == Some(t.level) && why[i].is_none());
        if figure || largest <= t.entries as u64 {
            continue;
        }
        let reason = match (0..found.len()).find(|&i| names[i] == Some(t.level)) {
            Some(i) => format!(
                "its step at {} pages: {}",
                found[i].size,
                why[i].as_deref().unwrap_or("")
            ),
            None => format!(
                "the pages sweep shows no step that can stand for the L{} TLB {source} reports \
                 ({} entries)",
                t.level, t.entries
            ),
        };
        out.push(not_detected_level(
            &format!("tlb/level:L{}", t.level),
            "mem_lat",
            Unit::Count,
            &reason,
            &[(reported_key.as_str(), t.entries as f64)],
        ));
    }
    // Every level in order, figure or not.
    out.sort_by(|a, b| a.params.get("level").cmp(&b.params.get("level")));
    out
}

/// The levels of the steps when the machine reports no TLB (the Intel
/// guest stored none from cpuid): a first-level data TLB holds fewer
/// entries than the L1d has lines (64-96 against 512-768 on x86-64, 48
/// against 1,024 on Neoverse N1), a second level more, but fewer than the
/// L2 cache's lines (1.5-4 K against 16-32 K). So a step below the L1d's
/// line capacity stands for L1 and one between it and the L2's for L2,
/// confirmed or not, each keeping its place: numbered in order, an L1
/// that one run did not confirm handed its name to the L2 step (the Intel
/// guest's "L1" at 96, 64 or 1,536 pages). The first of several in one
/// band keeps it: further up the touched lines start to outgrow the cache
/// (the Intel guest's L1d step begins at 256-512 pages); a step in no band
/// stands for none, with the reason in `why`.
fn named_by_lines(
    found: &[Step],
    line_capacities: &[(u32, u64)],
    is_cache: &[bool],
    why: &mut [Option<String>],
) -> Vec<Option<u32>> {
    let lines = |level: u32| {
        line_capacities
            .iter()
            .find(|(l, _)| *l == level)
            .map(|&(_, n)| n)
    };
    let (l1d, l2) = (lines(1).unwrap_or(u64::MAX), lines(2).unwrap_or(u64::MAX));
    let band = |size: u64| match size {
        s if s < l1d => Some(1),
        s if s < l2 => Some(2),
        _ => None,
    };
    let mut names: Vec<Option<u32>> = vec![None; found.len()];
    for level in [1u32, 2] {
        let first = (0..found.len()).find(|&i| !is_cache[i] && band(found[i].size) == Some(level));
        if let Some(k) = first {
            names[k] = Some(level);
        }
    }
    for i in 0..found.len() {
        if names[i].is_none() && !is_cache[i] && why[i].is_none() {
            why[i] = Some(format!(
                "no TLB is reported, and the first step between the caches' line capacities \
                 (under {l1d} lines for L1, under {l2} for L2) stands for the level"
            ));
        }
    }
    names
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
            "16", "32", "64", "96", "128", "256", "512", "1024", "1536", "2048", "3072", "4096",
            "8192",
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
    use crate::support::recorded_tlb::{TLB_DEFAULT, TLB_QUICK};

    fn clean(curve: &[(u64, f64)]) -> Vec<SweepPoint> {
        curve
            .iter()
            .map(|&(size, lat)| SweepPoint {
                size,
                samples: vec![lat; 7],
                rounds: Vec::new(),
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
        let d = derive_from(&clean(&c), 4096, &LINES, "cpuid", &cpuid);
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
        let d = derive_from(&clean(&c), 4096, &LINES, "cpuid", &other);
        assert_eq!(d[0].value(), 64.0);
        assert!(d[0].warnings.iter().any(|w| w.code == "tlb-disagrees"));
    }

    /// The recorded quick run on the development guest. Read step by step
    /// it gave L1 96, L2 512 and L3 4096 pages; the 512 step is where the
    /// 768 touched lines outgrow the 48 KiB L1d. Now: L1 96 (cpuid 96),
    /// then the second-level TLB at 2048 (the latency leaves its plateau
    /// on the way to 4096 pages), and the cache step set aside.
    #[test]
    fn the_l1d_overflow_is_not_a_tlb_level() {
        let points: Vec<SweepPoint> = TLB_QUICK
            .iter()
            .map(|(s, v)| SweepPoint {
                size: *s,
                samples: v.to_vec(),
                rounds: Vec::new(),
                headline: min_of(v),
            })
            .collect();
        let old = crate::support::cache_levels::detect_levels_per_grid_point(
            &points
                .iter()
                .map(|p| (p.size, p.headline))
                .collect::<Vec<_>>(),
            0.2,
        );
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
        let d = derive_from(&points, 4096, &LINES, "cpuid", &cpuid);
        let got: Vec<(&str, f64)> = d.iter().map(|m| (m.name.as_str(), m.value())).collect();
        assert_eq!(
            got,
            [("tlb/level:L1", 96.0), ("tlb/level:L2", 2048.0)],
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

    fn tlbs(entries: &[u32]) -> Vec<Tlb> {
        entries
            .iter()
            .enumerate()
            .map(|(i, &entries)| Tlb {
                level: i as u32 + 1,
                entries,
            })
            .collect()
    }

    fn recorded(c: crate::support::recorded_tlb::Curve) -> Vec<SweepPoint> {
        crate::support::cache_levels::recorded_sweep(c)
    }

    /// A staircase over `grid`: 1 ns up to `l1` pages, 3 ns up to `l2`,
    /// then 20 ns.
    fn staircase(grid: &[u64], l1: u64, l2: u64) -> Vec<SweepPoint> {
        let c: Vec<(u64, f64)> = grid
            .iter()
            .map(|&p| {
                (
                    p,
                    if p <= l1 {
                        1.0
                    } else if p <= l2 {
                        3.0
                    } else {
                        20.0
                    },
                )
            })
            .collect();
        clean(&c)
    }

    fn grid(mode_default: bool) -> Vec<u64> {
        let p = &FAMILY.params[0];
        let list = if mode_default { p.default } else { p.quick };
        list.iter().map(|s| s.parse().unwrap()).collect()
    }

    /// The default grid over a staircase of three steps: an L1 TLB of 96
    /// pages, an L2 of 3072, then the L2 cache's step at 8192 pages.
    fn staircase_to_the_l2_cache() -> Vec<(u64, f64)> {
        let ns = |p: u64| match p {
            0..=96 => 1.0,
            97..=3072 => 3.0,
            3073..=8192 => 9.0,
            _ => 40.0,
        };
        grid(true).iter().map(|&p| (p, ns(p))).collect()
    }

    /// The default sweep on the development guest (recorded, load 2.5): the
    /// step at 8192 pages is one grid step below the 16384 lines of the
    /// 1 MiB L2 cache, where the touched lines outgrow it. The old rule set
    /// steps aside only within a factor of 1.5 and reported it as a third
    /// TLB level. In this recording the plateau before it (6144 pages)
    /// spans less than a doubling, so it is part of the L2 TLB's rise; a
    /// staircase with a plateau from 4096 to 8192 pages shows the step
    /// itself set aside, one grid step away as promised.
    #[test]
    fn the_l2_cache_step_one_grid_step_away_is_no_tlb_level() {
        let points = recorded(TLB_DEFAULT);
        let d = derive_from(&points, 4096, &LINES, "cpuid", &tlbs(&[96, 128]));
        let got: Vec<(&str, f64)> = d.iter().map(|m| (m.name.as_str(), m.value())).collect();
        assert_eq!(got, [("tlb/level:L1", 96.0), ("tlb/level:L2", 2560.0)]);
        assert_eq!(d[1].extra["next_pages"], 3072.0);
        let c = staircase_to_the_l2_cache();
        let d = derive_from(&clean(&c), 4096, &LINES, "cpuid", &tlbs(&[96, 3072]));
        let got: Vec<(&str, f64)> = d.iter().map(|m| (m.name.as_str(), m.value())).collect();
        assert_eq!(got, [("tlb/level:L1", 96.0), ("tlb/level:L2", 3072.0)]);
        let aside = d[1]
            .warnings
            .iter()
            .find(|w| w.code == "level-not-detected")
            .expect("the set-aside steps are said");
        assert!(
            aside
                .message
                .contains("halfway up at 8192 pages, the touched lines outgrow L2"),
            "{}",
            aside.message
        );
        // Beyond the sweep the outermost spacing carries on: in the quick
        // sweep (…, 4096, 8192) the 16384 lines are one step past 8192 and
        // two past 4096.
        let quick = grid(false);
        assert_eq!(grid_steps_apart(&quick, 8192, 16384), 1.0);
        assert!(grid_steps_apart(&quick, 4096, 16384) > 1.5);
    }

    /// cpuid's entries against the measured step, within the grid's bracket
    /// (the step lies between the figure and the next page count measured)
    /// and 10 %: the check is the same in every mode.
    #[test]
    fn reported_entries_are_checked_against_the_grids_bracket() {
        // 72 entries (Zen 4's L1 DTLB) between 64 and 80 pages: agrees.
        assert!(entries_agree(64, Some(80), 72));
        // 3072 measured at 3072 (next 4096): agrees; at 2048 with 2560
        // measured next, it does not — the old rule (within 1.5×) let
        // 2048 against 3072 pass.
        assert!(entries_agree(3072, Some(4096), 3072));
        assert!(!entries_agree(2048, Some(2560), 3072));
        // A quick sweep's 256 against 3072: flagged.
        assert!(!entries_agree(256, Some(512), 3072));
        let default = grid(true);
        let d = derive_from(
            &staircase(&default, 64, 2048),
            4096,
            &LINES,
            "cpuid",
            &tlbs(&[72, 3072]),
        );
        assert_eq!(d[0].value(), 64.0);
        assert!(d[0].warnings.is_empty(), "{:?}", d[0].warnings);
        assert!(
            d[1].warnings
                .iter()
                .any(|w| w.code == "tlb-disagrees"
                    && w.message.contains("between 2048 and 2560 pages")),
            "{:?}",
            d[1].warnings
        );
        let quick = grid(false);
        let d = derive_from(
            &staircase(&quick, 64, 256),
            4096,
            &LINES,
            "cpuid",
            &tlbs(&[72, 3072]),
        );
        assert_eq!(d[1].value(), 256.0);
        assert!(d[1].warnings.iter().any(|w| w.code == "tlb-disagrees"));
    }

    /// Steps are named after the level the CPU reports nearest them, so a
    /// first level that the sweep cannot place does not hand its name to the
    /// second; it is stored as not detected, with no number. A step past
    /// the levels the CPU reports is no third level.
    #[test]
    fn names_follow_the_reported_levels_and_missing_ones_are_stored_as_such() {
        // Too few page counts around 64 to place the first step.
        let sparse = [
            16u64, 256, 512, 1024, 1536, 2048, 2560, 3072, 4096, 6144, 8192,
        ];
        let d = derive_from(
            &staircase(&sparse, 64, 2048),
            4096,
            &LINES,
            "cpuid",
            &tlbs(&[64, 2048]),
        );
        let names: Vec<&str> = d.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["tlb/level:L1", "tlb/level:L2"]);
        let why = d[0].invalid.as_deref().expect("L1 is no figure");
        assert!(
            why.starts_with("not detected: its step at 16 pages"),
            "{why}"
        );
        assert_eq!(d[0].valid_value(), None);
        assert_eq!(d[1].value(), 2048.0);
        assert!(d[1].invalid.is_none());
        // Three steps, two reported levels: the one nearest no level is none.
        let c = staircase_to_the_l2_cache();
        let d = derive_from(&clean(&c), 4096, &[], "cpuid", &tlbs(&[96, 128]));
        let got: Vec<(&str, f64)> = d.iter().map(|m| (m.name.as_str(), m.value())).collect();
        assert_eq!(got, [("tlb/level:L1", 96.0), ("tlb/level:L2", 3072.0)]);
        assert!(d[1].warnings.iter().any(|w| w.code == "level-not-detected"
            && w.message.contains("8192 pages: cpuid reports 2 levels")));
        // With nothing reported, the three are numbered in order.
        let d = derive_from(&clean(&c), 4096, &[], "cpuid", &[]);
        assert_eq!(d.len(), 3);
    }

    /// With no TLB reported (the Intel guest's cpuid), the steps were
    /// numbered in order, so a run that could not place the first level
    /// called the second-level step "L1" (the guest's L1 at 96, 64 or
    /// 1,536 pages), and a step the L1d's overflow starts with became "L2".
    /// The L1d's line capacity now separates the levels: the first step
    /// below it is L1, the first between it and the L2's is L2.
    #[test]
    fn with_no_tlb_reported_the_line_capacities_name_the_levels() {
        let sparse = [
            16u64, 256, 512, 1024, 1536, 2048, 2560, 3072, 4096, 6144, 8192,
        ];
        let d = derive_from(&staircase(&sparse, 64, 2048), 4096, &LINES, "cpuid", &[]);
        let got: Vec<(&str, f64)> = d.iter().map(|m| (m.name.as_str(), m.value())).collect();
        assert_eq!(got, [("tlb/level:L2", 2048.0)], "{d:?}");
        let c: Vec<(u64, f64)> = grid(false)
            .iter()
            .map(|&p| {
                let ns = match p {
                    0..=96 => 1.0,
                    97..=256 => 2.0,
                    257..=2048 => 3.5,
                    _ => 20.0,
                };
                (p, ns)
            })
            .collect();
        let d = derive_from(&clean(&c), 4096, &LINES, "cpuid", &[]);
        let got: Vec<(&str, f64)> = d.iter().map(|m| (m.name.as_str(), m.value())).collect();
        assert_eq!(got, [("tlb/level:L1", 96.0), ("tlb/level:L2", 2048.0)]);
        assert!(
            d[1].warnings.iter().any(|w| w.code == "level-not-detected"
                && w.message.contains("256 pages: no TLB is reported")),
            "{d:?}"
        );
    }

    /// A TLB of E entries over a random chain: every page fits up to E,
    /// then a page misses with probability 1 − E/N. Halfway (geometric)
    /// between the plateaus lies well past E, so reading the step there put
    /// Zen 4's 72-entry L1 TLB at 96 pages, out of its bracket; where the
    /// latency leaves the plateau puts it at 64 (next 80) and the 3072-entry
    /// L2 at 3072. (Halfway, rounded to the nearest page count on a
    /// gradual rise, is 112 and 4096.)
    #[test]
    fn entries_are_where_the_latency_leaves_the_plateau() {
        let lru = |n: u64| {
            let miss = |e: f64, n: f64| (1.0 - e / n).max(0.0);
            1.0 + 2.0 * miss(72.0, n as f64) + 12.0 * miss(3072.0, n as f64)
        };
        let default = grid(true);
        let c: Vec<(u64, f64)> = default.iter().map(|&p| (p, lru(p))).collect();
        let d = derive_from(&clean(&c), 4096, &[], "cpuid", &tlbs(&[72, 3072]));
        let got: Vec<(&str, f64)> = d.iter().map(|m| (m.name.as_str(), m.value())).collect();
        assert_eq!(got, [("tlb/level:L1", 64.0), ("tlb/level:L2", 3072.0)]);
        assert!(d.iter().all(|m| m.warnings.is_empty()), "{d:?}");
        let midpoint: Vec<u64> = steps(&clean(&c), None, 0.2, min_of, Place::Midpoint)
            .iter()
            .map(|s| s.size)
            .collect();
        assert_eq!(midpoint, [112, 4096]);
    }

    /// Five rounds (fresh processes) over the default grid, each with its
    /// L2 TLB step just past `ends[r]` pages: the L1 TLB at 96 entries and
    /// the L2 plateau, then the page walks. The headline is the median of
    /// the rounds' minima.
    fn in_rounds(ends: [u64; 5]) -> Vec<SweepPoint> {
        grid(true)
            .iter()
            .map(|&p| {
                let of = |end: u64| {
                    if p <= 96 {
                        0.95
                    } else if p <= end {
                        2.6
                    } else {
                        13.0
                    }
                };
                let mut minima: Vec<f64> = ends.iter().map(|&e| of(e)).collect();
                let samples: Vec<f64> = minima.iter().flat_map(|&v| [v; 3]).collect();
                let rounds: Vec<u32> = (0..5u32).flat_map(|r| [r; 3]).collect();
                minima.sort_by(f64::total_cmp);
                SweepPoint {
                    size: p,
                    samples,
                    rounds,
                    headline: minima[2],
                }
            })
            .collect()
    }

    /// The stored default runs on the development guest: the L2 TLB step
    /// at 3072 pages in most rounds, at 2560 in a round slowed at 3072
    /// (interference only adds time) and at 4096 in a round fast at 4096.
    /// The smallest of the rounds' places (the rule before) gave 2560 in
    /// runs with such a round, and rounds from 2560 to 4096 (two grid
    /// steps) were "not detected": 3072, 2560 or nothing from run to run.
    /// The median of the rounds' places is 3072 in each, every round
    /// within one grid step of it; rounds that scatter further are not
    /// confirmed.
    #[test]
    fn the_l2_tlb_is_placed_alike_when_a_round_straddles_a_page_count() {
        let reported = tlbs(&[96, 3072]);
        for ends in [
            [3072, 3072, 4096, 3072, 3072],
            [3072, 2560, 3072, 3072, 3072],
            [2560, 3072, 3072, 4096, 3072],
        ] {
            let d = derive_from(&in_rounds(ends), 4096, &LINES, "cpuid", &reported);
            let got: Vec<(&str, f64)> = d.iter().map(|m| (m.name.as_str(), m.value())).collect();
            assert_eq!(got, [("tlb/level:L1", 96.0), ("tlb/level:L2", 3072.0)]);
            assert_eq!(d[1].extra["next_pages"], 4096.0);
            assert!(d.iter().all(|m| m.warnings.is_empty()), "{d:?}");
        }
        let d = derive_from(
            &in_rounds([2048, 2048, 3072, 6144, 6144]),
            4096,
            &LINES,
            "cpuid",
            &reported,
        );
        let why = d[1].invalid.as_deref().expect("the rounds disagree");
        assert!(
            why.starts_with("not detected: its step at 3072 pages"),
            "{why}"
        );
    }
}
