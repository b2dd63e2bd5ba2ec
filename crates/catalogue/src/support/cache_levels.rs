//! Cache levels: what the OS reports about the caches (sysfs), the
//! detection of levels (plateaus and steps) in a measured latency curve,
//! and how far a detected step can be trusted: how often it reappears when
//! the curve is rebuilt from resampled repetitions, and whether the sweep
//! is dense enough around it to show it at all.

use std::path::Path;

use touchstone_results::host;

/// The data caches CPU 0 sees, as the OS reports them (sysfs).
pub fn os_caches() -> Vec<host::Cache> {
    host::caches(Path::new("/sys/devices/system/cpu/cpu0/cache"))
        .into_iter()
        .filter(|c| c.kind != "instruction")
        .collect()
}

/// The last-level cache's size, if the OS reports one.
pub fn llc_bytes() -> Option<u64> {
    os_caches()
        .iter()
        .max_by_key(|c| c.level)
        .map(|c| c.size_bytes)
}

/// The OS's cache line size (coherency_line_size of the L1 data cache).
pub fn os_line_bytes() -> Option<u64> {
    os_caches().iter().find_map(|c| c.line_bytes)
}

/// A working set well past the last-level cache, so nearly every load of a
/// random chain goes to memory: 4× the cache, at least 64 MiB.
pub fn beyond_llc() -> usize {
    (4 * llc_bytes().unwrap_or(16 << 20)).max(64 << 20) as usize
}

/// A cache level found in a latency curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Latency of the plateau (median of its points), ns.
    pub latency_ns: f64,
    /// The plateau's points' latencies.
    pub points: Vec<f64>,
    /// The largest size still on (or below the midpoint after) the plateau:
    /// the level's detected capacity. `None` for the last plateau (memory).
    pub size: Option<u64>,
}

/// Find the plateaus of a latency curve (size, ns), sorted by size. A new
/// level starts where the latency has risen by more than `rise` (e.g. 0.25
/// for 25 %) over the current plateau's median and stays up; a level's size
/// is the largest measured size whose latency is below the geometric
/// midpoint between its plateau and the next one.
pub fn detect_levels(curve: &[(u64, f64)], rise: f64) -> Vec<Level> {
    let mut pts: Vec<(u64, f64)> = curve
        .iter()
        .copied()
        .filter(|p| p.1.is_finite() && p.1 > 0.0)
        .collect();
    pts.sort_by_key(|p| p.0);
    if pts.is_empty() {
        return Vec::new();
    }
    // Segment: indices where plateaus start.
    let mut starts = vec![0usize];
    let mut i = 1;
    while i < pts.len() {
        let s = *starts.last().unwrap();
        let level = median(&pts[s..i].iter().map(|p| p.1).collect::<Vec<_>>());
        let up = pts[i].1 > level * (1.0 + rise);
        // Stays up: the next point (if any) is up as well, so a single
        // noisy point does not make a level.
        let stays = pts.get(i + 1).map_or(true, |q| q.1 > level * (1.0 + rise));
        if up && stays {
            // The transition points (between plateaus) are skipped: the new
            // plateau starts where the latency stops rising fast.
            let mut j = i;
            while j + 1 < pts.len() && pts[j + 1].1 > pts[j].1 * (1.0 + rise) {
                j += 1;
            }
            starts.push(j);
            i = j + 1;
        } else {
            i += 1;
        }
    }
    let mut levels: Vec<Level> = Vec::new();
    for (k, &s) in starts.iter().enumerate() {
        let e = starts.get(k + 1).copied().unwrap_or(pts.len());
        // A plateau's own points: from its start until the latency first
        // leaves it upwards (the rise to the next level is excluded).
        let mut vals: Vec<f64> = Vec::new();
        for p in &pts[s..e] {
            if !vals.is_empty() && p.1 > median(&vals) * (1.0 + rise) {
                break;
            }
            vals.push(p.1);
        }
        levels.push(Level {
            latency_ns: median(&vals),
            points: vals,
            size: None,
        });
    }
    for k in 0..levels.len().saturating_sub(1) {
        let mid = (levels[k].latency_ns * levels[k + 1].latency_ns).sqrt();
        let start = starts[k];
        let end = starts[k + 1];
        let size = pts[start..end]
            .iter()
            .filter(|p| p.1 < mid)
            .last()
            .map(|p| p.0)
            .unwrap_or(pts[start].0);
        levels[k].size = Some(size);
    }
    levels
}

/// One point of a measured sweep: the working set (or page count), every
/// repetition's figure, and the headline the run reported.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    pub size: u64,
    pub samples: Vec<f64>,
    pub headline: f64,
}

/// A step of a curve (the end of a plateau) with how far it can be trusted.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The plateau the step ends (latency, its points, its size).
    pub level: Level,
    /// The step's size (the plateau's last size below the midpoint).
    pub size: u64,
    /// Fraction of resampled curves (see `steps`) that show this step (at
    /// most one grid point away), and
    /// when a confirming curve is given, show it there too.
    pub confidence: f64,
    /// Whether the sweep is fine enough to place the step: a measured size
    /// at most 2× past it, and at least two points on its plateau.
    pub resolved: bool,
}

/// Resampled curves per detection: enough that a confidence of 0.8 is
/// read to within a few per cent.
pub const RESAMPLES: usize = 200;

/// The confidence a step needs to be reported as a level.
pub const MIN_CONFIDENCE: f64 = 0.8;

/// How far apart (as a ratio of sizes) two figures may be and still be
/// the same step: one point of a grid with 2-3 points per doubling.
pub const SAME_STEP: f64 = 1.5;

/// The position in `grid` (sorted sizes) nearest to `size` on a log scale.
fn grid_index(grid: &[u64], size: u64) -> usize {
    let d = |g: u64| ((g as f64).ln() - (size as f64).ln()).abs();
    (0..grid.len())
        .min_by(|&a, &b| d(grid[a]).total_cmp(&d(grid[b])))
        .unwrap_or(0)
}

/// Two steps are the same when they are at most one grid point apart (the
/// grid cannot place a step more finely), or within `SAME_STEP`.
fn same_step(grid: &[u64], a: u64, b: u64) -> bool {
    let (lo, hi) = (a.min(b) as f64, a.max(b) as f64);
    hi <= lo * SAME_STEP || grid_index(grid, a).abs_diff(grid_index(grid, b)) <= 1
}

/// The step sizes of `RESAMPLES` curves rebuilt from `points` by drawing
/// each point's repetitions with replacement (the bootstrap) and taking
/// the same statistic `stat` of the draw as the headline.
fn resampled_steps(
    points: &[&SweepPoint],
    rise: f64,
    stat: fn(&[f64]) -> f64,
    seed: u64,
) -> Vec<Vec<u64>> {
    let mut rng = super::memory::Rng::new(seed);
    let mut draw = Vec::new();
    (0..RESAMPLES)
        .map(|_| {
            let curve: Vec<(u64, f64)> = points
                .iter()
                .map(|p| {
                    if p.samples.is_empty() {
                        return (p.size, p.headline);
                    }
                    draw.clear();
                    for _ in 0..p.samples.len() {
                        draw.push(p.samples[rng.below(p.samples.len())]);
                    }
                    (p.size, stat(&draw))
                })
                .collect();
            detect_levels(&curve, rise)
                .iter()
                .filter_map(|l| l.size)
                .collect()
        })
        .collect()
}

fn usable(points: &[SweepPoint]) -> Vec<&SweepPoint> {
    let mut pts: Vec<&SweepPoint> = points
        .iter()
        .filter(|p| p.headline.is_finite() && p.headline > 0.0)
        .collect();
    pts.sort_by_key(|p| p.size);
    pts
}

/// The steps of a sweep, each with its confidence. The headline curve is
/// segmented by `detect_levels`. Its confidence is the fraction of
/// resampled curves (the repetitions drawn with replacement, `stat` of
/// each draw as the headline) that show a step at most one grid point (or
/// `SAME_STEP`) away from it —
/// and, when `confirm` (another chain measured in the same run, e.g. the
/// in-page random chain next to the fully random one) is given, whose
/// resampled twin shows it too. A step resting on a lucky or unlucky
/// repetition, or one that a second chain measured minutes apart does not
/// see (a burst of other work, a TLB effect that only one chain has), scores
/// low. The last plateau (no step after it) is not a step.
pub fn steps(
    points: &[SweepPoint],
    confirm: Option<&[SweepPoint]>,
    rise: f64,
    stat: fn(&[f64]) -> f64,
) -> Vec<Step> {
    let pts = usable(points);
    let headline: Vec<(u64, f64)> = pts.iter().map(|p| (p.size, p.headline)).collect();
    let levels = detect_levels(&headline, rise);
    let found = resampled_steps(&pts, rise, stat, 0x5eed_1e7e1);
    let twin = confirm.map(|c| resampled_steps(&usable(c), rise, stat, 0x7e1_5eed));
    let sizes: Vec<u64> = pts.iter().map(|p| p.size).collect();
    levels
        .into_iter()
        .filter_map(|level| {
            let size = level.size?;
            let agree = (0..RESAMPLES)
                .filter(|&r| {
                    found[r].iter().any(|&b| same_step(&sizes, b, size))
                        && twin
                            .as_ref()
                            .is_none_or(|t| t[r].iter().any(|&b| same_step(&sizes, b, size)))
                })
                .count();
            let after = sizes.iter().find(|&&s| s > size);
            let resolved = after.is_some_and(|&a| a <= size * 2) && level.points.len() >= 2;
            Some(Step {
                level,
                size,
                confidence: agree as f64 / RESAMPLES as f64,
                resolved,
            })
        })
        .collect()
}

/// The minimum of a non-empty slice (the chase families' headline).
pub fn min_of(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Human text for a byte count ("48 KiB", "1 MiB").
pub fn bytes_text(b: u64) -> String {
    if b >= 1 << 20 && b % (1 << 20) == 0 {
        format!("{} MiB", b >> 20)
    } else if b >= 1 << 10 && b % (1 << 10) == 0 {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // A soft ramp between L2 and memory.
        for p in c.iter_mut() {
            if p.0 > 512 << 10 && p.0 <= 1 << 20 {
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
}
