//! Cache levels: what the OS reports about the caches (sysfs), and the
//! detection of levels (plateaus and steps) in a measured latency curve.

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
