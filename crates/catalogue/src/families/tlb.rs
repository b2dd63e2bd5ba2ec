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
    grid_steps_apart, min_of, name_candidates, os_caches, os_is_guest, os_line_bytes, steps, Place,
    Step, SweepPoint,
};
use crate::support::cpuid_tlb::{credible, reported_tlbs, Tlb};
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
    let guest = os_is_guest();
    derive_on(
        &points,
        page_size() as u64,
        &line_capacities,
        source,
        tlbs,
        guest,
    )
}

/// Why a TLB step is no level in a virtual machine that reports no TLB.
const GUEST_UNREPORTED: &str = "this virtual machine reports no TLB (its hypervisor hides \
     cpuid's description), and a guest's TLBs are shared with whatever the host runs on the \
     core's other thread: nothing tells a level from the share this run was left";

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
/// flagged (`tlb-disagrees`) in every mode, except for a report no TLB can
/// have (a second level under twice the first, `credible`): stored as
/// `cpuid_entries_not_credible`, unchecked; a reported level that no
/// confirmed step stands for is stored as not detected (`invalid`), never
/// as a number.
#[cfg(test)]
pub fn derive_from(
    points: &[SweepPoint],
    page: u64,
    line_capacities: &[(u32, u64)],
    source: &str,
    tlbs: &[Tlb],
) -> Vec<Measurement> {
    derive_on(points, page, line_capacities, source, tlbs, false)
}

/// `derive_from` on a machine that is (`guest`) or is not a virtual
/// machine. A guest that reports no TLB gets no TLB level: each step that
/// would be one is stored as not detected (`GUEST_UNREPORTED`). On the
/// 16-CPU Intel guest (cpuid leaf 0x18 reads zeros) the L1 read 64 or 96
/// pages and the L2 1,536, 2,048 or nothing in fifteen quick runs: at
/// 1,536-2,048 pages some rounds hit the second-level TLB at 9-11 ns and
/// others walked the page tables at 27-45 ns, as a TLB shared with
/// another tenant's thread would.
pub fn derive_on(
    points: &[SweepPoint],
    page: u64,
    line_capacities: &[(u32, u64)],
    source: &str,
    tlbs: &[Tlb],
    guest: bool,
) -> Vec<Measurement> {
    if points.len() < 4 {
        return Vec::new();
    }
    let grid: Vec<u64> = points.iter().map(|p| p.size).collect();
    let found = placed_steps(points, line_capacities);
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
    // A guest with nothing reported: the steps that would be levels are
    // stored as not detected, each with why.
    let mut hidden: Vec<(u32, u64)> = Vec::new();
    if guest && reported.is_empty() {
        for i in 0..found.len() {
            if let (Some(lv), None) = (names[i], &why[i]) {
                hidden.push((lv, found[i].size));
                why[i] = Some(GUEST_UNREPORTED.to_string());
            }
        }
    }
    let reported_key = format!("{source}_entries");
    // A report no TLB can have (`credible`) is stored under its own name
    // and checks nothing.
    let not_credible_key = format!("{source}_entries_not_credible");
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
            if !credible(tlbs, t) {
                extra.push((not_credible_key.as_str(), t.entries as f64));
            } else {
                extra.push((reported_key.as_str(), t.entries as f64));
                if !entries_agree(entries, step.next, t.entries) {
                    let bracket = step.next.map_or(String::new(), |n| {
                        format!(" (the step lies between {entries} and {n} pages)")
                    });
                    warnings.push(Warning::new(
                        WarningCode::TlbDisagrees,
                        format!(
                            "L{lv} TLB measured at {entries} pages{bracket}; {source} reports {} \
                             entries",
                            t.entries
                        ),
                    ));
                }
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
    for (lv, pages) in hidden {
        out.push(not_detected_level(
            &format!("tlb/level:L{lv}"),
            "mem_lat",
            Unit::Count,
            &format!("its step at {pages} pages: {GUEST_UNREPORTED}"),
            &[("step_pages", pages as f64)],
        ));
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
        let key = if credible(tlbs, t) {
            &reported_key
        } else {
            &not_credible_key
        };
        out.push(not_detected_level(
            &format!("tlb/level:L{}", t.level),
            "mem_lat",
            Unit::Count,
            &reason,
            &[(key.as_str(), t.entries as f64)],
        ));
    }
    // Every level in order, figure or not.
    out.sort_by(|a, b| a.params.get("level").cmp(&b.params.get("level")));
    out
}

/// The steps of the sweep, each placed as its kind of TLB fills. A
/// first-level data TLB (fewer entries than the L1d has lines, see
/// `named_by_lines`; the first step where no cache is reported) is fully
/// associative, or conflict-free for consecutive pages: every page fits up
/// to its entries and the chain's cycle misses from the next, so it is
/// placed where the latency leaves the plateau (`Place::Onset`). A larger
/// TLB is set- or skew-associative and shared with other page sizes and
/// page-directory entries: it starts to miss before it is full, by an
/// amount that moves with each process's addresses, so it is placed where
/// the bulk of its rise begins (`Place::Bulk`). Zen 5's 4,096-entry L2
/// read 3,072 or 4,096 from run to run at its onset, and 4,096 in every
/// quiet stored run at the bulk.
fn placed_steps(points: &[SweepPoint], line_capacities: &[(u32, u64)]) -> Vec<Step> {
    let onset = steps(points, None, 0.2, min_of, Place::Onset);
    let bulk = steps(points, None, 0.2, min_of, Place::Bulk);
    let l1d_lines = line_capacities
        .iter()
        .find(|(level, _)| *level == 1)
        .map(|&(_, lines)| lines);
    // Both come from the same headline curve's levels, one step each.
    onset
        .into_iter()
        .zip(bulk)
        .enumerate()
        .map(|(i, (at_onset, at_bulk))| {
            let first_level = l1d_lines.map_or(i == 0, |lines| at_onset.size < lines);
            if first_level {
                at_onset
            } else {
                at_bulk
            }
        })
        .collect()
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
mod tests;
