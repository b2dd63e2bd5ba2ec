use super::*;
use crate::support::recorded_curves;

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
/// then the second-level TLB at 2048 (where the bulk of the rise to 4096
/// pages begins), and the cache step set aside.
#[test]
fn the_l1d_overflow_is_not_a_tlb_level() {
    let points = recorded("TLB_QUICK");
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
    // The guest's cpuid says 128 for the L2 TLB, under twice its L1's 96:
    // no TLB's size, so kept under its own name and not flagged against
    // (it was: every L2 figure on the guest carried tlb-disagrees).
    assert_eq!(d[1].extra["cpuid_entries_not_credible"], 128.0);
    assert!(!d[1].extra.contains_key("cpuid_entries"));
    let codes: Vec<&str> = d[1].warnings.iter().map(|w| w.code.as_str()).collect();
    assert!(!codes.contains(&"tlb-disagrees"), "{codes:?}");
    assert!(
        d[1].warnings
            .iter()
            .any(|w| w.code == "level-not-detected" && w.message.contains("512 pages")),
        "{:?}",
        d[1].warnings
    );
}

/// The levels of `points` on a page of 4 KiB with this file's caches, cpuid
/// reporting TLBs of `entries`.
fn derive_with_cpuid(points: &[SweepPoint], entries: &[u32]) -> Vec<Measurement> {
    derive_from(points, 4096, &LINES, "cpuid", &tlbs(entries))
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

fn recorded(name: &str) -> Vec<SweepPoint> {
    crate::support::cache_levels::recorded_sweep(&recorded_curves::tlb(name))
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
    let points = recorded("TLB_DEFAULT");
    let d = derive_with_cpuid(&points, &[96, 128]);
    let got: Vec<(&str, f64)> = d.iter().map(|m| (m.name.as_str(), m.value())).collect();
    assert_eq!(got, [("tlb/level:L1", 96.0), ("tlb/level:L2", 3072.0)]);
    assert_eq!(d[1].extra["next_pages"], 4096.0);
    let c = staircase_to_the_l2_cache();
    let d = derive_with_cpuid(&clean(&c), &[96, 3072]);
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
    let d = derive_with_cpuid(&staircase(&default, 64, 2048), &[72, 3072]);
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
    let d = derive_with_cpuid(&staircase(&quick, 64, 256), &[72, 3072]);
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
    let d = derive_with_cpuid(&staircase(&sparse, 64, 2048), &[64, 2048]);
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

/// A sweep measured in rounds from each round's minimum per point (one
/// figure per round; the headline their median, as the harness stores it).
fn rounds_of(name: &str) -> Vec<SweepPoint> {
    recorded_curves::tlb(name)
        .into_iter()
        .map(|(size, minima)| SweepPoint {
            size,
            rounds: (0..minima.len() as u32).collect(),
            headline: crate::support::cache_levels::median(&minima),
            samples: minima,
        })
        .collect()
}

/// Zen 5's 4,096-entry L2 TLB in four stored quiet runs: at its onset (a
/// tenth of the step, the rule before) it read 4096 in one default run and
/// 3072 in the next, 2048 and 3072 in two quick runs, as the rounds' rise
/// at 3,072 and 4,096 pages moved with each process's addresses. Where the
/// bulk of the rise begins it is 4096 in all four (the step lies before
/// 6144 pages, 8192 on the quick grid), and the L1 TLB stays at its onset.
#[test]
fn the_l2_tlb_reads_one_place_in_every_stored_run() {
    let runs = [
        ("TLB_ROUNDS_READ_4096", 4096, 6144),
        ("TLB_ROUNDS_READ_3072", 3072, 6144),
        ("TLB_QUICK_ROUNDS_READ_2048", 2048, 8192),
        ("TLB_QUICK_ROUNDS_READ_3072", 3072, 8192),
    ];
    for (curve, at_onset, next) in runs {
        let points = rounds_of(curve);
        let onset: Vec<u64> = steps(&points, None, 0.2, min_of, Place::Onset)
            .iter()
            .map(|s| s.size)
            .collect();
        assert_eq!(onset.last(), Some(&at_onset));
        let d = derive_with_cpuid(&points, &[96, 128]);
        let got: Vec<(&str, f64)> = d.iter().map(|m| (m.name.as_str(), m.value())).collect();
        assert_eq!(got, [("tlb/level:L1", 96.0), ("tlb/level:L2", 4096.0)]);
        let past_96 = points.iter().find(|p| p.size > 96).unwrap().size;
        assert_eq!(d[0].extra["next_pages"], past_96 as f64);
        assert_eq!(d[1].extra["next_pages"], next as f64);
    }
}

/// A virtual machine whose cpuid describes no TLB (the Intel guest's leaf
/// 0x18 reads zeros) read its L1 at 64 or 96 pages and its L2 at 1,536,
/// 2,048 or nowhere from run to run. There every step that would be a
/// level is stored as not detected, with why; on a machine of its own (or
/// a guest whose cpuid reports its TLBs) the same curve gives the levels.
#[test]
fn a_guest_that_reports_no_tlb_gets_no_tlb_level() {
    let points = staircase(&grid(false), 96, 2048);
    let on_its_own = derive_on(&points, 4096, &LINES, "cpuid", &[], false);
    assert!(
        on_its_own.iter().all(|m| m.invalid.is_none()),
        "{on_its_own:?}"
    );
    let guest = derive_on(&points, 4096, &LINES, "cpuid", &[], true);
    let names: Vec<&str> = guest.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["tlb/level:L1", "tlb/level:L2"], "{guest:?}");
    for m in &guest {
        let why = m.invalid.as_deref().expect("no figure");
        assert!(why.contains("reports no TLB"), "{why}");
    }
    assert_eq!(guest[1].extra["step_pages"], 2048.0);
    // A guest whose cpuid reports them keeps its levels.
    let reported = derive_on(&points, 4096, &LINES, "cpuid", &tlbs(&[96, 2048]), true);
    assert!(reported.iter().all(|m| m.invalid.is_none()), "{reported:?}");
}
