//! Tests of the level detection: synthetic curves, rounds that agree or
//! not, grid positions and the naming of steps.
use super::*;

/// A sweep measured in three rounds of five repetitions each, round
/// `r` following `rounds[r]` (its own levels), the headline the median
/// of the rounds' minima as the chase reports it.
fn in_rounds(rounds: [&[(u64, f64)]; 3], mem: f64) -> Vec<SweepPoint> {
    let curves: Vec<Vec<(u64, f64)>> = rounds.iter().map(|l| synthetic(l, mem)).collect();
    (0..curves[0].len())
        .map(|i| {
            let mut samples = Vec::new();
            let mut of_round = Vec::new();
            let mut minima = Vec::new();
            for (r, c) in curves.iter().enumerate() {
                samples.extend([c[i].1; 5]);
                of_round.extend([r as u32; 5]);
                minima.push(c[i].1);
            }
            SweepPoint {
                size: curves[0][i].0,
                samples,
                rounds: of_round,
                headline: median(&minima),
            }
        })
        .collect()
}

/// A level every round places alike is confirmed; one that a fresh
/// process finds two grid steps away (a guest's shared L3 that other
/// tenants shrink) is not, with the reason, though each round's own
/// repetitions agree perfectly.
#[test]
fn a_step_the_rounds_place_apart_is_not_confirmed() {
    let l2 = (1u64 << 20, 3.5);
    let steady = in_rounds(
        [
            &[(48 << 10, 1.0), l2],
            &[(48 << 10, 1.0), l2],
            &[(48 << 10, 1.0), l2],
        ],
        100.0,
    );
    let found = steps(&steady, None, 0.25, min_of, Place::Midpoint);
    assert_eq!(found.len(), 2, "{found:?}");
    for s in &found {
        assert_eq!(s.rounds_agreeing, Some((3, 3)), "{s:?}");
        assert_eq!(s.unconfirmed(""), None, "{s:?}");
    }
    let moving = in_rounds(
        [
            &[(48 << 10, 1.0), l2, (4 << 20, 13.0)],
            &[(48 << 10, 1.0), l2, (12 << 20, 13.0)],
            &[(48 << 10, 1.0), l2, (6 << 20, 13.0)],
        ],
        140.0,
    );
    // The median: half-samples of the pooled rounds then follow the
    // middle round, as the headline does, so the resampling alone
    // passes the step (with the minimum it fails there already).
    let found = steps(&moving, None, 0.25, median, Place::Midpoint);
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(found[2].confidence >= MIN_CONFIDENCE, "{:?}", found[2]);
    assert_eq!(found[0].unconfirmed(""), None);
    assert_eq!(found[1].unconfirmed(""), None);
    let why = found[2]
        .unconfirmed("")
        .expect("the L3 step moves between rounds");
    assert!(why.contains("moves between fresh processes"), "{why}");
    // Without rounds (an older run) the same headline passes as before.
    let one: Vec<SweepPoint> = moving
        .iter()
        .map(|p| SweepPoint {
            rounds: Vec::new(),
            samples: vec![p.headline; 5],
            ..p.clone()
        })
        .collect();
    let found = steps(&one, None, 0.25, median, Place::Midpoint);
    assert!(found
        .iter()
        .all(|s| s.rounds_agreeing.is_none() && s.unconfirmed("").is_none()));
}

/// Rounds that each give the step a place of their own, the headline
/// the median of the rounds' minima; `curves[r]` is round `r`'s curve.
fn from_rounds(curves: &[Vec<(u64, f64)>]) -> Vec<SweepPoint> {
    (0..curves[0].len())
        .map(|i| {
            let minima: Vec<f64> = curves.iter().map(|c| c[i].1).collect();
            SweepPoint {
                size: curves[0][i].0,
                samples: minima.iter().flat_map(|&v| [v; 5]).collect(),
                rounds: (0..curves.len() as u32).flat_map(|r| [r; 5]).collect(),
                headline: median(&minima),
            }
        })
        .collect()
}

/// A step that one round of three (a fresh process slowed at the last
/// size that fits: interference only adds time) places a grid step
/// lower than the others. The smallest of the rounds' places, as before,
/// moved the step to 896 KiB in the run with such a round and left it at
/// 1 MiB in the next; the median of the rounds' places is 1 MiB in both.
#[test]
fn one_odd_round_does_not_move_the_step() {
    let l1 = (48u64 << 10, 1.0);
    let (odd, usual) = ((896u64 << 10, 3.5), (1u64 << 20, 3.5));
    let l3 = (8u64 << 20, 12.0);
    let runs = [
        in_rounds([&[l1, usual, l3], &[l1, odd, l3], &[l1, usual, l3]], 150.0),
        in_rounds(
            [&[l1, usual, l3], &[l1, usual, l3], &[l1, usual, l3]],
            150.0,
        ),
    ];
    let smallest: Vec<u64> = runs
        .iter()
        .map(|run| {
            let s = &steps(run, None, 0.25, min_of, Place::Midpoint)[1];
            s.rounds_span.unwrap().0
        })
        .collect();
    assert_eq!(
        smallest,
        [896 << 10, 1 << 20],
        "the smallest round's place flips"
    );
    for run in &runs {
        let found = steps(run, None, 0.25, min_of, Place::Midpoint);
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(found[1].size, 1 << 20, "{:?}", found[1]);
        assert_eq!(found[1].next, Some(1280 << 10), "{:?}", found[1]);
        assert_eq!(found[1].unconfirmed(""), None, "{:?}", found[1]);
        assert_eq!(found[0].size, 48 << 10);
    }
}

/// The guest's L2 in the default suite: the rise from 512 KiB to 2 MiB
/// (L1 TLB misses, then L2 conflicts) is smooth in most rounds and has a
/// shoulder at 768-896 KiB in others. Read as a plateau, the shoulder cut
/// those rounds' rise into steps at 512 KiB and 1.5 MiB, neither within
/// one grid step of the others' 1 MiB, so the L2 was "not detected: 3 of
/// its 5 rounds" in three default runs of five. A plateau narrower than a
/// doubling is a shoulder of one transition: every round then places the
/// step at 1 MiB.
#[test]
fn a_shoulder_narrower_than_a_doubling_is_no_plateau() {
    let k = |s: u64| s << 10;
    let round = |shoulder: bool| -> Vec<(u64, f64)> {
        synthetic(&[], 0.0)
            .into_iter()
            .map(|(s, _)| {
                let rise: &[(u64, f64, f64)] = &[
                    (k(640), 3.8, 4.2),
                    (k(768), 4.4, 4.6),
                    (k(896), 5.2, 4.7),
                    (k(1024), 6.0, 5.2),
                    (k(1280), 7.8, 6.2),
                    (k(1536), 9.0, 7.2),
                    (k(1792), 9.6, 9.6),
                ];
                let ns = if s <= k(48) {
                    1.0
                } else if s <= k(512) {
                    3.2
                } else if let Some(&(_, smooth, shouldered)) = rise.iter().find(|r| r.0 == s) {
                    if shoulder {
                        shouldered
                    } else {
                        smooth
                    }
                } else if s <= 8 << 20 {
                    10.0
                } else {
                    150.0
                };
                (s, ns)
            })
            .collect()
    };
    let run = from_rounds(&[
        round(false),
        round(true),
        round(false),
        round(true),
        round(false),
    ]);
    let cut = detect_levels(&round(true), 0.25);
    let sizes: Vec<Option<u64>> = cut.iter().map(|l| l.size).collect();
    assert_eq!(sizes, [Some(48 << 10), Some(1 << 20), Some(8 << 20), None]);
    let found = steps(&run, None, 0.25, median, Place::Midpoint);
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(found[1].size, 1 << 20, "{:?}", found[1]);
    assert_eq!(found[1].rounds_agreeing, Some((5, 5)), "{:?}", found[1]);
    assert_eq!(found[1].unconfirmed(""), None, "{:?}", found[1]);
}

fn synthetic(levels: &[(u64, f64)], mem: f64) -> Vec<(u64, f64)> {
    // 4 points per doubling from 512 B to 256 MB.
    let mut out = Vec::new();
    let mut base = 512u64;
    while base <= 256 << 20 {
        for q in [4, 5, 6, 7] {
            let s = base * q / 4;
            let lat = levels
                .iter()
                .find(|(cap, _)| s <= *cap)
                .map_or(mem, |l| l.1);
            out.push((s, lat));
        }
        base *= 2;
    }
    out
}

#[test]
fn finds_three_levels_on_a_clean_curve() {
    let c = synthetic(&[(48 << 10, 0.8), (1 << 20, 3.5), (32 << 20, 12.0)], 90.0);
    let l = detect_levels(&c, 0.25);
    assert_eq!(l.len(), 4, "{l:?}");
    assert_eq!(l[0].size, Some(48 << 10));
    assert_eq!(l[1].size, Some(1 << 20));
    assert_eq!(l[2].size, Some(32 << 20));
    assert_eq!(l[3].size, None);
    assert!((l[0].latency_ns - 0.8).abs() < 1e-9);
    assert!((l[3].latency_ns - 90.0).abs() < 1e-9);
    // Latency rises past each level.
    assert!(l.windows(2).all(|w| w[1].latency_ns > w[0].latency_ns));
}

#[test]
fn gradual_transitions_and_noise() {
    // Latency ramps over two points after each capacity, with ±3 % noise.
    let mut c = synthetic(&[(32 << 10, 1.0), (512 << 10, 4.0)], 60.0);
    for (i, p) in c.iter_mut().enumerate() {
        p.1 *= 1.0 + 0.03 * ((i as f64 * 1.7).sin());
    }
    // A level between L2 and memory, over a doubling and more (a
    // narrower one is a shoulder of one transition: see
    // `a_shoulder_narrower_than_a_doubling_is_no_plateau`).
    for p in c.iter_mut() {
        if p.0 > 512 << 10 && p.0 <= 2 << 20 {
            p.1 = 15.0;
        }
    }
    let l = detect_levels(&c, 0.25);
    assert_eq!(l[0].size, Some(32 << 10), "{l:?}");
    assert_eq!(l[1].size, Some(512 << 10), "{l:?}");
    assert!(l.last().unwrap().latency_ns > 50.0);
}

#[test]
fn a_single_spike_is_not_a_level() {
    let mut c = synthetic(&[(64 << 10, 1.0)], 10.0);
    c[3].1 = 5.0;
    let l = detect_levels(&c, 0.25);
    assert_eq!(l.len(), 2, "{l:?}");
    assert_eq!(l[0].size, Some(64 << 10));
}

/// The development guest's fully random chain on a dense grid (four
/// sizes per doubling): L1 ends sharply at 48 KiB; L2 turns into L3 over
/// 512 KiB to 1.5 MiB (x1.1-1.5 per grid point); the L3 plateau slopes
/// up 15 % per doubling to 8 MiB, then memory. Read per grid point (the
/// old rule) the slow transition and the slope cut into extra levels —
/// the phantom L3 at 1 MiB and L4 at 7 MiB of issue 32's full runs; read
/// per doubling there are three steps, each where the curve crosses
/// halfway between its plateaus (the gradual L2 one rounded to the
/// nearest size measured: the crossing lies a little past 896 KiB,
/// nearer 1 MiB).
#[test]
fn a_dense_grid_does_not_cut_slow_transitions_into_levels() {
    let lat = |s: u64| -> f64 {
        let x = s as f64;
        let (k, m) = (1024.0, 1024.0 * 1024.0);
        if x <= 48.0 * k {
            0.95
        } else if x <= 512.0 * k {
            3.4
        } else if x <= 1.5 * m {
            // 3.4 at 512 KiB to 9.4 at 1.5 MiB, even in log-log.
            3.4 * (x / (512.0 * k)).powf((9.4f64 / 3.4).ln() / 3f64.ln())
        } else if x <= 8.0 * m {
            9.4 * (x / (1.5 * m)).powf(1.15f64.log2())
        } else {
            150.0
        }
    };
    let c: Vec<(u64, f64)> = synthetic(&[], 0.0)
        .into_iter()
        .map(|(s, _)| (s, lat(s)))
        .collect();
    let old = detect_levels_per_grid_point(&c, 0.25);
    assert!(old.len() > 3, "the old reading: {old:?}");
    let l = detect_levels(&c, 0.25);
    let sizes: Vec<Option<u64>> = l.iter().map(|l| l.size).collect();
    assert_eq!(sizes, [Some(48 << 10), Some(1 << 20), Some(8 << 20), None]);
    assert!((l[1].latency_ns - 3.4).abs() < 1e-9);
    assert!(l[2].latency_ns > 9.4 && l[2].latency_ns < 12.0, "{l:?}");
}

/// Interference that slowed every repetition of one size (a burst of
/// other work) is read at the next sizes' latency: the lower envelope,
/// since a larger working set is never faster.
#[test]
fn one_slowed_size_makes_no_level() {
    let mut c = synthetic(&[(48 << 10, 1.0), (1 << 20, 3.5), (8 << 20, 12.0)], 150.0);
    let at = c.iter().position(|p| p.0 == 3 << 20).unwrap();
    c[at].1 = 130.0;
    c[at + 1].1 = 40.0;
    let sizes: Vec<Option<u64>> = detect_levels(&c, 0.25).iter().map(|l| l.size).collect();
    assert_eq!(sizes, [Some(48 << 10), Some(1 << 20), Some(8 << 20), None]);
}

#[test]
fn grid_positions_count_measured_steps_and_carry_on_past_the_ends() {
    let grid = [16u64, 32, 64, 96, 128];
    assert_eq!(grid_position(&grid, 64), 2.0);
    assert!((grid_position(&grid, 80) - 2.0 - (80f64 / 64.0).ln() / 1.5f64.ln()).abs() < 1e-12);
    // Past the end by the last spacing (x4/3), before the start by the first (x2).
    assert!((grid_position(&grid, 512) - 4.0 - 4f64.ln() / (4.0f64 / 3.0).ln()).abs() < 1e-12);
    assert_eq!(grid_position(&grid, 8), -1.0);
    assert_eq!(grid_steps_apart(&grid, 32, 128), 3.0);
    assert!(same_step(&grid, 64, 96) && !same_step(&grid, 32, 96));
}

/// Steps take the reported level nearest them; a second step nearest
/// one level moves on, away from the one that kept it, or is none.
#[test]
fn steps_are_named_after_the_nearest_reported_level() {
    let k = 1u64 << 10;
    let m = 1u64 << 20;
    let os = [(1, 48 * k), (2, m), (3, 32 * m)];
    let name = |steps: &[u64]| name_steps(steps, &os);
    assert_eq!(name(&[48 * k, 768 * k, 8 * m]), [Some(1), Some(2), Some(3)]);
    // L2 not among the steps: the 8 MiB step is still L3.
    assert_eq!(name(&[48 * k, 8 * m]), [Some(1), Some(3)]);
    // A guest's L3 at a quarter or an eighth of what sysfs says keeps
    // its name when the L2 step is there (confirmed or not).
    assert_eq!(name(&[48 * k, 896 * k, 4 * m]), [Some(1), Some(2), Some(3)]);
    // A step in a sloping plateau between two levels is none.
    assert_eq!(
        name(&[48 * k, 768 * k, 3 * m, 8 * m]),
        [Some(1), Some(2), None, Some(3)]
    );
    assert_eq!(name(&[48 * k, 384 * k, 768 * k]), [Some(1), None, Some(2)]);
    // Past the last level reported: none.
    assert_eq!(
        name_steps(&[96, 3072, 6144], &[(1, 96), (2, 128)]),
        [Some(1), Some(2), None]
    );
    // Nothing reported: in order.
    assert_eq!(name_steps(&[5, 50, 500], &[]), [Some(1), Some(2), Some(3)]);
}

/// The guest's L2 on the quick grid, as two quick runs measured it: a
/// gradual rise from 768 KiB to 1.5 MiB that crosses halfway just past
/// 1 MiB in one run (1 MiB reads 5.8 ns) and just before it in the next
/// (6.2 ns). The last size below halfway gave 1 MiB in the one and
/// 768 KiB in the other; the crossing rounded to the nearest size
/// measured gives 1 MiB in both. The sharp L1 step (within one interval)
/// stays at the last size that fits.
#[test]
fn a_gradual_step_is_placed_alike_when_its_halfway_point_sits_at_a_grid_size() {
    let run = |at_1m: f64| -> Vec<(u64, f64)> {
        let k = |s: u64| s << 10;
        [
            (k(16), 0.92),
            (k(24), 0.92),
            (k(32), 0.92),
            (k(48), 0.92),
            (k(64), 3.2),
            (k(96), 3.2),
            (k(128), 3.2),
            (k(192), 3.2),
            (k(256), 3.2),
            (k(384), 3.2),
            (k(512), 3.6),
            (k(768), 4.1),
            (k(1024), at_1m),
            (k(1536), 9.0),
            (k(2048), 10.0),
            (k(3072), 10.6),
            (k(4096), 11.5),
            (k(6144), 12.0),
            (k(8192), 12.4),
            (k(12288), 18.0),
            (k(16384), 90.0),
            (k(24576), 140.0),
            (k(32768), 140.0),
        ]
        .to_vec()
    };
    let old = |c: &[(u64, f64)]| -> u64 {
        // The last size of the transition below halfway, as before.
        let l = detect_levels(c, 0.25);
        let mid = (l[1].latency_ns * l[2].latency_ns).sqrt();
        c.iter()
            .filter(|p| p.0 >= 768 << 10 && p.0 <= 1536 << 10 && p.1 < mid)
            .map(|p| p.0)
            .max()
            .unwrap()
    };
    assert_eq!(
        [old(&run(5.8)), old(&run(6.2))],
        [1 << 20, 768 << 10],
        "the last size below halfway flips"
    );
    for at_1m in [5.8, 6.2] {
        let l = detect_levels(&run(at_1m), 0.25);
        assert_eq!(l[0].size, Some(48 << 10), "{l:?}");
        assert_eq!(l[1].size, Some(1 << 20), "{l:?}");
    }
}

/// A busy host leaves the guest 2-3 MiB of L3: the L2's full step (3.2 to
/// 10 ns) is followed by a plateau narrower than a doubling, then memory.
/// That plateau comes after a large rise, not a shoulder: merged with the
/// fall to memory, the L2 would be placed at 2.5 MiB; it stays at 1 MiB.
#[test]
fn a_short_plateau_after_a_full_step_is_no_shoulder() {
    let k = |s: u64| s << 10;
    let c: Vec<(u64, f64)> = synthetic(&[], 0.0)
        .into_iter()
        .map(|(s, _)| {
            let rise: &[(u64, f64)] = &[
                (k(640), 3.8),
                (k(768), 4.4),
                (k(896), 5.2),
                (k(1024), 6.0),
                (k(1280), 7.8),
                (k(1536), 9.0),
                (k(1792), 9.6),
                (k(2048), 10.0),
                (k(2560), 10.2),
            ];
            let ns = if s <= k(48) {
                1.0
            } else if s <= k(512) {
                3.2
            } else if let Some(&(_, ns)) = rise.iter().find(|r| r.0 == s) {
                ns
            } else {
                150.0
            };
            (s, ns)
        })
        .collect();
    let sizes: Vec<Option<u64>> = detect_levels(&c, 0.25).iter().map(|l| l.size).collect();
    assert_eq!(
        sizes,
        [Some(48 << 10), Some(1 << 20), Some(2560 << 10), None]
    );
}
