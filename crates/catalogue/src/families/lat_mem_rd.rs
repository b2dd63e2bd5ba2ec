//! lat_mem_rd: dependent-load latency over working sets from 512 B to past
//! the last-level cache (lmbench's lat_mem_rd), one measurement per
//! (chain, size) so the whole curve is kept. Chains: a fixed stride of
//! 16..512 B in address order (what lmbench measures, prefetchers and all),
//! `rand_page` (pages in order, cache lines in random order inside each page:
//! defeats the stride prefetchers, one TLB miss per 64 loads) and `rand`
//! (lines in random order across the working set: defeats prefetchers and,
//! past its reach, the TLB). `derive` reads the cache levels from the
//! random chains (only steps that resampling and the second chain confirm)
//! and the memory latency from the fully random chain past the last cache,
//! and sets them next to the sizes the OS reports.

use touchstone_results::{groups, Measurement, Unit, Warning, WarningCode};

use crate::family::{derived, not_detected_level, Built, Family, RunContext};
use crate::params::{Kind, Param, Point};
use touchstone_results::Statistic;

use crate::support::cache_levels::{
    bytes_text, median, min_of, name_candidates, os_caches, os_is_guest, same_step, steps, Place,
    SweepPoint, MIN_CONFIDENCE, OS_WITNESSED,
};
use crate::support::memory::{Order, Pages};
use crate::support::pointer_chase::{Chase, CHAIN_SEED};
use crate::support::sys::page_size;
use crate::support::tenants::guest_llc;

/// Element size of the random chains: one cache line on current machines.
const ELEM: usize = 64;

/// The chain order a `stride` parameter names.
pub fn order(chain: &str) -> Result<Order, String> {
    Ok(match chain {
        "rand_page" => Order::RandInPage {
            elem: ELEM,
            page: page_size(),
        },
        "rand" => Order::Rand { elem: ELEM },
        s => Order::Stride(s.parse().map_err(|_| format!("unknown chain '{s}'"))?),
    })
}

/// Each case chases one chain (`support::pointer_chase`): `n` × 100
/// dependent loads per interval, the fastest interval its figure.
fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let size = p.num("size") as usize;
    let order = order(p.text("stride"))?;
    if let Order::Stride(s) = order {
        if s > size {
            return Err(format!("stride {s} is larger than the working set {size}"));
        }
    }
    Chase::case(
        &format!("lat_mem_rd/size:{}", p.text("size")),
        size,
        order,
        Pages::Default,
        CHAIN_SEED,
    )
    .map(|b| b.with_working_set(size as u64))
}

/// The chains whose steps are read as cache levels, in order of
/// preference: the fully random chain (prefetchers defeated, every page
/// touched at random: what lmbench's `lat_mem_rd -t` and a plain random
/// pointer chase measure), then the random-in-page one as its confirmation.
/// Strided chains are not read: their steps are the prefetchers' (see
/// docs/validation.md).
const RANDOM_CHAINS: [&str; 2] = ["rand", "rand_page"];

/// The only chain a memory latency is taken from: inside a page the
/// spatial prefetcher and the TLB still help `rand_page` (45 ns against
/// 150-160 ns on the development guest), so its far plateau is not memory.
const MEMORY_CHAIN: &str = "rand";

/// One curve: (size, headline latency) for single-process measurements.
#[cfg(test)]
pub fn curve(ms: &[Measurement], chain: &str) -> Vec<(u64, f64)> {
    sweep(ms, chain)
        .into_iter()
        .map(|p| (p.size, p.headline))
        .collect()
}

/// One chain's sweep: size, every repetition and the headline, for the
/// single-process measurements.
pub fn sweep(ms: &[Measurement], chain: &str) -> Vec<SweepPoint> {
    let size_param = Param {
        name: "size",
        help: "",
        kind: Kind::Size {
            min: 0,
            max: u64::MAX,
        },
        default: &[],
        quick: &[],
        positional: false,
    };
    let mut v: Vec<SweepPoint> = ms
        .iter()
        .filter(|m| m.parallel == 1 && m.invalid.is_none())
        .filter(|m| m.params.get("stride").map(String::as_str) == Some(chain))
        .filter_map(|m| {
            Some(SweepPoint {
                size: size_param.parse(m.params.get("size")?).ok()?.num,
                samples: m.samples.clone(),
                rounds: m.rounds.clone(),
                headline: m.value(),
            })
        })
        .collect();
    v.sort_by_key(|p| p.size);
    v
}

/// The statistic the chase reports, applied to a resample.
fn statistic_of(ms: &[Measurement]) -> fn(&[f64]) -> f64 {
    match ms.first().map(|m| m.statistic) {
        Some(Statistic::Median) => median,
        Some(Statistic::Max) => |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        _ => min_of,
    }
}

/// Whether a detected size agrees with the OS's: within the grid's
/// resolution and the effects of replacement, sharing and exclusive caches.
pub fn sizes_agree(detected: u64, os: u64) -> bool {
    let r = detected as f64 / os as f64;
    (0.7..=1.5).contains(&r)
}

/// A step at no more than 1/`SHARE` of the size the OS reports for the
/// level it is named after is a share of that cache, not a level (see
/// `derive_from`); 2 leaves the grid's resolution and replacement
/// (`sizes_agree` flags from 0.7) room, and takes in the guest's L3 step
/// when it lands at 16 MiB of 32.
const SHARE: u64 = 2;

/// Why a guest's last-level cache is no figure (see `guest_llc`).
const GUEST_LLC: &str =
    "a virtual machine's last-level cache is the host's, shared with its other \
     tenants: the share this guest holds moves between runs, so its capacity is not measured here";

/// Cache levels and the memory latency found in the random chains, next to
/// the OS's caches.
pub fn derive(ms: &[Measurement]) -> Vec<Measurement> {
    let sweeps: Vec<(&str, Vec<SweepPoint>)> = RANDOM_CHAINS
        .iter()
        .map(|&c| (c, sweep(ms, c)))
        .filter(|(_, s)| !s.is_empty())
        .collect();
    derive_on(&sweeps, &os_caches(), os_is_guest(), statistic_of(ms))
}

/// The smallest working set that is surely past the last cache: twice the
/// LLC the OS reports (64 MiB when it reports none).
fn memory_from(os: &[touchstone_results::host::Cache]) -> u64 {
    os.iter()
        .map(|c| c.size_bytes)
        .max()
        .map_or(64 << 20, |llc| 2 * llc)
}

/// `derive_on` on a machine of its own (not a virtual machine).
#[cfg(test)]
pub fn derive_from(
    sweeps: &[(&str, Vec<SweepPoint>)],
    os: &[touchstone_results::host::Cache],
    stat: fn(&[f64]) -> f64,
) -> Vec<Measurement> {
    derive_on(sweeps, os, false, stat)
}

/// The derived figures from the random chains' sweeps (`sweeps`: chain name
/// and its points, the preferred chain first). Each is named after the chain
/// it was read from (`lat_mem_rd/level:L2/stride:rand`), so figures read
/// from different chains never meet in a comparison.
///
/// - Cache levels: the steps of the first chain with at least four points,
///   each reported only when it is `resolved` by the grid, lies within the
///   OS's last-level cache, and reaches `MIN_CONFIDENCE` over resampled
///   repetitions and (when the second chain was measured) in that chain
///   too, and over the rounds — more than half (`OS_WITNESSED`) where the
///   OS reports a cache private to one CPU within one grid step of it; its
///   confidence is stored. A confirmed step is named after the
///   level the OS reports nearest to it (`name_steps`), so a level missed
///   in one run does not rename the next; levels are named only when the
///   sweep starts inside L1. A confirmed step within one grid step of the
///   size the OS reports for its level is that size (the step as found is
///   kept as `step_bytes`). In a cache that more than one CPU uses (or
///   where the OS does not say), a step at no more than half the size the
///   OS reports for its level (in any of its rounds), or whose plateau any
///   round leaves before half, is that cache's share left to this process,
///   not a level (`SHARE`). In a virtual machine (`guest`) the L3 or
///   whatever cache is last is the host's: never a figure (`guest_llc`).
///   A step that fails is "not detected" (a warning
///   says which and why), and its plateau merges with the next. A level the
///   OS reports that no confirmed step stands for is stored as such: the
///   measurement is `invalid`, "not detected" with the reason, never a
///   number.
/// - Memory: the fully random chain's median latency over the sizes past
///   twice the last-level cache, with the sizes it covers; absent when
///   that chain did not reach so far, and never taken from `rand_page`.
pub fn derive_on(
    sweeps: &[(&str, Vec<SweepPoint>)],
    os: &[touchstone_results::host::Cache],
    guest: bool,
    stat: fn(&[f64]) -> f64,
) -> Vec<Measurement> {
    let Some(k) = sweeps.iter().position(|(_, s)| s.len() >= 4) else {
        return Vec::new();
    };
    let (chain, points) = (sweeps[k].0, &sweeps[k].1);
    let confirm = sweeps
        .iter()
        .enumerate()
        .find(|(i, (_, s))| *i != k && s.len() >= 4)
        .map(|(_, (c, s))| (*c, s.as_slice()));
    let group = groups::GROUPS
        .iter()
        .find(|g| g.name == "mem_lat")
        .map_or("mem_lat", |g| g.name);
    let llc = os.iter().map(|c| c.size_bytes).max();
    let l1 = os
        .iter()
        .find(|c| c.level == 1)
        .map_or(32 << 10, |c| c.size_bytes);
    let smallest = points.first().map_or(0, |p| p.size);
    let starts_in_l1 = smallest <= l1 / 2;
    let mut reported: Vec<(u32, u64)> = os.iter().map(|c| (c.level, c.size_bytes)).collect();
    reported.sort_unstable();
    let found = steps(points, confirm.map(|c| c.1), 0.25, stat, Place::Midpoint);
    let grid: Vec<u64> = points.iter().map(|p| p.size).collect();
    // Where the OS reports a cache private to one CPU within one grid step
    // of a step, the OS is a second witness and more than half of the
    // resampled curves and of the rounds confirm it (`OS_WITNESSED`): such
    // a cache is no share that moves between processes, and on a busy
    // host one round in three can miss its step (the 16-CPU Intel guest's
    // 48 KiB L1 and 2 MiB L2 were not detected in three quick runs of five
    // at 13:12, 27 Nov, each for one round or 72 % of resampled curves).
    let witnessed = |size: u64| {
        os.iter()
            .any(|c| c.shared_by == Some(1) && same_step(&grid, size, c.size_bytes))
    };
    let mut why: Vec<Option<String>> = found
        .iter()
        .map(|step| {
            if !starts_in_l1 {
                Some(format!(
                    "the sweep starts at {}, not inside L1 ({}): levels cannot be numbered",
                    bytes_text(smallest),
                    bytes_text(l1)
                ))
            } else if !step.resolved {
                Some("the sizes around it are too sparse to place it".to_string())
            } else if llc.is_some_and(|llc| step.size > llc) {
                Some(
                    "past the last-level cache the OS reports (a TLB or page-walk effect)"
                        .to_string(),
                )
            } else {
                let with =
                    confirm.map_or(String::new(), |(c, _)| format!(" (with the {c} chain's)"));
                let need = if witnessed(step.size) {
                    OS_WITNESSED
                } else {
                    MIN_CONFIDENCE
                };
                step.unconfirmed_needing(&with, bytes_text, need)
            }
        })
        .collect();
    // The steps that could be levels (inside the LLC, in a sweep that
    // starts inside L1) are matched to the OS's levels, confirmed or not,
    // so that each keeps its place; with no OS levels, the confirmed ones
    // are numbered in order.
    let candidates: Vec<usize> = (0..found.len())
        .filter(|&i| {
            starts_in_l1
                && llc.is_none_or(|llc| found[i].size <= llc)
                && (!reported.is_empty() || why[i].is_none())
        })
        .collect();
    let names = name_candidates(
        &candidates,
        |i| found[i].size,
        &reported,
        "the OS",
        &mut why,
    );
    // A step at no more than half the size the OS reports for its level is not
    // that level's capacity but the share of it this process was left (a
    // guest's shared L3 at 4-12 MiB of 32 MiB, other tenants taking the
    // rest), which moves from one run to the next: no figure. So is one
    // that any of its rounds (a fresh process) places there: the share
    // moves between processes, and a run whose median round lands at
    // 24 MiB would otherwise print the figure the next run calls a share.
    // And so is one whose plateau any round leaves before half the OS's
    // size (`first_past`), however far below the step: on the guest some
    // rounds fall from the L3 in two steps (to 40 ns at 6-12 MiB, to
    // memory at 24-32 MiB), so the step nearest 32 MiB was a figure in the
    // runs whose median round fell in one step and not in the others (2 of
    // 5 quick runs). Before half, not at it: a physically indexed cache's
    // conflicts start from about half its size (the guest's L2 rise from
    // 512 KiB in some rounds), where the level is still the whole cache.
    let host_llc = guest.then(|| guest_llc(os)).flatten();
    for (i, step) in found.iter().enumerate() {
        let Some(lv) = names[i] else { continue };
        let Some(&(_, os_size)) = reported.iter().find(|(l, _)| *l == lv) else {
            continue;
        };
        if Some(lv) == host_llc {
            why[i] = Some(GUEST_LLC.to_string());
            continue;
        }
        // In a cache private to one CPU a round that leaves its plateau
        // early was slowed in that round (the host's other vCPU on the
        // core's sibling thread, a preemption): only the median of the
        // rounds places a share. On the 16-CPU Intel guest one round in
        // three read the private 48 KiB L1 at 24 KiB and the 2 MiB L2 at
        // 384 KiB (the rule on any round made them not detected in one run
        // of five each); in another run every round's L2 ended at 1 MiB —
        // half of it, what a tenant on the core's other thread left — and
        // was printed as a 1 MiB L2.
        let private = os
            .iter()
            .find(|c| c.level == lv)
            .is_some_and(|c| c.shared_by == Some(1));
        if why[i].is_some() {
            continue;
        }
        let placed = match step.rounds_span {
            Some((low, _)) if !private => low.min(step.size),
            _ => step.size,
        };
        let below = (0..i).rev().find_map(|j| names[j].map(|_| found[j].size));
        let leaves = step
            .first_past(&grid, below)
            .filter(|&p| p.saturating_mul(SHARE) < os_size);
        let round = if placed.saturating_mul(SHARE) <= os_size {
            if placed < step.size {
                format!("a round places it at {}, at most", bytes_text(placed))
            } else {
                "at most".to_string()
            }
        } else if let Some(p) = leaves.filter(|_| !private) {
            format!("a round leaves its plateau at {}, under", bytes_text(p))
        } else {
            continue;
        };
        why[i] = Some(format!(
            "{round} 1/{SHARE} of the {} the OS reports for L{lv}: the share of the cache this \
             process was left (by a guest's other tenants, or by whatever runs on the core's \
             other thread), which moves between runs, not its capacity",
            bytes_text(os_size)
        ));
    }
    let mut out = Vec::new();
    let mut not_detected: Vec<String> = Vec::new();
    let mut merged: Vec<f64> = Vec::new();
    for (i, step) in found.iter().enumerate() {
        merged.extend(&step.level.points);
        let (Some(lv), None) = (names[i], &why[i]) else {
            let reason = why[i].as_deref().unwrap_or("not confirmed");
            not_detected.push(format!("{}: {reason}", bytes_text(step.size)));
            // A level not detected keeps its plateau; a step that is no
            // level splits one, which goes on into the next.
            if names[i].is_some() {
                merged.clear();
            }
            continue;
        };
        let mut warnings = Vec::new();
        // Where the OS's size lies within one grid step of the step, the
        // curve confirms it and the level is the OS's size: the grid
        // cannot place a capacity more finely, and a random chain over
        // exactly a cache's capacity fits in some processes and not in
        // others (the Intel guest's 48 KiB L1 read at 32 or 48 KiB, its
        // 2 MiB L2 at 1.5 or 2 MiB, from run to run). The step as
        // detected is kept beside it.
        let os_level = os.iter().find(|c| c.level == lv);
        let size = os_level
            .map(|c| c.size_bytes)
            .filter(|&o| same_step(&grid, step.size, o))
            .unwrap_or(step.size);
        let mut extra: Vec<(&str, f64)> = vec![
            ("size_bytes", size as f64),
            ("step_bytes", step.size as f64),
            ("confidence", step.confidence),
        ];
        if let Some(next) = step.next {
            extra.push(("next_size_bytes", next as f64));
        }
        if let Some(o) = os_level {
            extra.push(("os_size_bytes", o.size_bytes as f64));
            if !sizes_agree(size, o.size_bytes) {
                warnings.push(Warning::new(
                    WarningCode::CacheSizeDisagrees,
                    format!(
                        "L{lv} detected at {} in the {chain} curve; the OS reports {}",
                        bytes_text(step.size),
                        bytes_text(o.size_bytes)
                    ),
                ));
            }
        } else {
            warnings.push(Warning::new(
                WarningCode::CacheLevelUnreported,
                format!(
                    "a level ending at {} was found but the OS reports no L{lv}",
                    bytes_text(step.size)
                ),
            ));
        }
        out.push(derived(
            &format!("lat_mem_rd/level:L{lv}/stride:{chain}"),
            "lat_mem_rd",
            group,
            Unit::Ns,
            median(&merged),
            &merged,
            &extra,
            warnings,
        ));
        merged.clear();
    }
    let levels_found = out.len();
    // The OS's levels no confirmed step stands for, where the sweep spans
    // them (it starts inside L1 and reaches past the level's size): stored
    // as not detected.
    let largest = points.last().map_or(0, |p| p.size);
    for &(lv, size) in &reported {
        let figure = (0..found.len()).any(|i| names[i] == Some(lv) && why[i].is_none());
        if figure || !starts_in_l1 || largest <= size {
            continue;
        }
        let reason = match (0..found.len()).find(|&i| names[i] == Some(lv)) {
            _ if Some(lv) == host_llc => GUEST_LLC.to_string(),
            Some(i) => format!(
                "its step at {}: {}",
                bytes_text(found[i].size),
                why[i].as_deref().unwrap_or("")
            ),
            None => format!("the {chain} curve shows no step that can stand for it"),
        };
        out.push(not_detected_level(
            &format!("lat_mem_rd/level:L{lv}/stride:{chain}"),
            group,
            Unit::Ns,
            &reason,
            &[("os_size_bytes", size as f64)],
        ));
    }
    // Every level in order, figure or not.
    out.sort_by(|a, b| a.params.get("level").cmp(&b.params.get("level")));
    let far: Vec<&SweepPoint> = points
        .iter()
        .filter(|p| p.size >= memory_from(os))
        .collect();
    let mut memory_warnings = Vec::new();
    if !not_detected.is_empty() {
        // One warning for them all: which steps, and why each is not a level.
        memory_warnings.push(Warning::new(
            WarningCode::LevelNotDetected,
            format!(
                "steps of the {chain} curve not reported as cache levels (not detected): {}",
                not_detected.join("; ")
            ),
        ));
    }
    if levels_found != os.len() && starts_in_l1 {
        memory_warnings.push(Warning::new(
            WarningCode::CacheLevelsDiffer,
            format!(
                "{levels_found} cache levels found in the {chain} curve; the OS reports {}",
                os.len()
            ),
        ));
    }
    if chain == MEMORY_CHAIN && !far.is_empty() {
        let lat: Vec<f64> = far.iter().map(|p| p.headline).collect();
        out.push(derived(
            &format!("lat_mem_rd/level:mem/stride:{chain}"),
            "lat_mem_rd",
            group,
            Unit::Ns,
            median(&lat),
            &lat,
            &[
                ("from_bytes", far[0].size as f64),
                ("to_bytes", far[far.len() - 1].size as f64),
            ],
            memory_warnings,
        ));
    } else if let Some(last) = out.iter_mut().rev().find(|m| m.invalid.is_none()) {
        // No memory figure to carry them: the last level does, with why.
        let why = if chain != MEMORY_CHAIN {
            format!(
                "no memory latency: the {chain} chain is helped by the prefetcher and the TLB; \
                 measure stride:{MEMORY_CHAIN} past {}",
                bytes_text(memory_from(os))
            )
        } else {
            format!(
                "no memory latency: the {chain} curve stops at {}, under twice the last-level cache",
                bytes_text(points.last().map_or(0, |p| p.size))
            )
        };
        memory_warnings.push(Warning::new(WarningCode::CurveShort, why));
        last.warnings.extend(memory_warnings);
    }
    out
}

const SIZES: &[&str] = &[
    "512", "640", "768", "896", "1k", "1280", "1536", "1792", "2k", "2560", "3k", "3584", "4k",
    "5k", "6k", "7k", "8k", "10k", "12k", "14k", "16k", "20k", "24k", "28k", "32k", "40k", "48k",
    "56k", "64k", "80k", "96k", "112k", "128k", "160k", "192k", "224k", "256k", "320k", "384k",
    "448k", "512k", "640k", "768k", "896k", "1m", "1280k", "1536k", "1792k", "2m", "2560k", "3m",
    "3584k", "4m", "5m", "6m", "7m", "8m", "10m", "12m", "14m", "16m", "20m", "24m", "28m", "32m",
    "40m", "48m", "56m", "64m", "80m", "96m", "112m", "128m", "160m", "192m", "224m", "256m",
];

const QUICK_SIZES: &[&str] = &[
    "512", "768", "1k", "1536", "2k", "3k", "4k", "6k", "8k", "12k", "16k", "24k", "32k", "48k",
    "64k", "96k", "128k", "192k", "256k", "384k", "512k", "768k", "1m", "1536k", "2m", "3m", "4m",
    "6m", "8m", "12m", "16m", "24m", "32m", "48m", "64m", "96m", "128m",
];

pub const FAMILY: Family = Family {
    params: &[
        Param {
            name: "stride",
            help: "chain: a stride in bytes (address order), rand_page (random lines within each page) or rand (random lines)",
            kind: Kind::Choice(&["16", "32", "64", "128", "256", "512", "rand_page", "rand"]),
            default: &["16", "32", "64", "128", "256", "512", "rand_page", "rand"],
            quick: &["64", "rand_page", "rand"],
            positional: false,
        },
        Param {
            name: "size",
            help: "working set",
            kind: Kind::Size {
                min: 512,
                max: 64 << 30,
            },
            default: SIZES,
            quick: QUICK_SIZES,
            positional: false,
        },
    ],
    derive: Some(derive),
    ..Family::new(
        "lat_mem_rd",
        "mem_lat",
        "memory read latency by working-set size: strided and random pointer chains; cache levels derived",
        build,
    )
};

#[cfg(test)]
mod tests;
