//! The cache-level detection as it was before issue 32, kept for the tests
//! that show what it got wrong (test builds only).

use super::{median, Level};

/// The detection as it was before issue 32 (a new level wherever a point
/// rose `rise` above the plateau's median and the next stayed up, the
/// transition skipped while each point rose `rise` over the last: per grid
/// point, so a dense grid cut slow transitions into phantom plateaus), kept
/// for the tests that show what it got wrong. Returns the step sizes.
pub(crate) fn detect_levels_per_grid_point(curve: &[(u64, f64)], rise: f64) -> Vec<u64> {
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
        let stays = pts.get(i + 1).is_none_or(|q| q.1 > level * (1.0 + rise));
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
        levels.push(Level::plateau(vals));
    }
    for k in 0..levels.len().saturating_sub(1) {
        let mid = (levels[k].latency_ns * levels[k + 1].latency_ns).sqrt();
        let start = starts[k];
        let end = starts[k + 1];
        let size = pts[start..end]
            .iter()
            .rfind(|p| p.1 < mid)
            .map(|p| p.0)
            .unwrap_or(pts[start].0);
        levels[k].size = Some(size);
    }
    levels.iter().filter_map(|l| l.size).collect()
}
