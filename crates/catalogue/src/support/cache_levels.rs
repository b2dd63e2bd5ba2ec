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

/// Whether this machine is a virtual machine (its caches past L2 are then
/// the host's, shared with other guests).
pub fn os_is_guest() -> bool {
    host::virtualization_now().is_some()
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
    /// The plateau's points' latencies (read from the curve's lower
    /// envelope, see `detect_levels`).
    pub points: Vec<f64>,
    /// Where the transition after the plateau crosses the geometric
    /// midpoint between this plateau and the next (`halfway_size`): the
    /// largest size still below it for a sharp step, the nearest size to
    /// the crossing for a gradual one. The level's detected capacity.
    /// `None` for the last plateau (memory).
    pub size: Option<u64>,
    /// The largest size (of the plateau or the transition after it) whose
    /// latency has not yet gone `ONSET_FRACTION` of the way (on a log
    /// scale) to the next plateau's: where the latency starts to leave the
    /// plateau, the last size that fits. `None` for the last plateau.
    pub onset: Option<u64>,
    /// The largest size whose latency has not yet gone `BULK_FRACTION` of
    /// the way to the next plateau: where the bulk of the rise begins, past
    /// the conflicts that a set- or skew-associative structure shows before
    /// it is full. `None` for the last plateau.
    pub bulk: Option<u64>,
}

impl Level {
    /// A plateau of these latencies, not yet placed (`size`, `onset` and
    /// `bulk` are set once the transition after it is read).
    pub(crate) fn plateau(points: Vec<f64>) -> Level {
        Level {
            latency_ns: median(&points),
            points,
            size: None,
            onset: None,
            bulk: None,
        }
    }
}

/// How fast the latency must rise with the working set for a stretch of
/// the curve to be a transition between levels rather than part of a
/// plateau: by half again per doubling of the size (log2 of the latency
/// ratio per doubling above log2 1.5). Plateaus that slope (a VM's share
/// of the L3, TLB misses growing inside a level) rise 10-40 % per
/// doubling; the transitions between cache levels 2-4x over one or two
/// doublings. Per doubling, not per grid point, so that a dense grid does
/// not cut a transition into small rises that each look like a plateau
/// (between sizes more than a doubling apart, the rise between them).
pub const STEEP_PER_DOUBLING: f64 = 0.584_962_500_721_156_2; // log2(1.5)

/// How far (a fraction of the step, on a log scale) the latency may have
/// risen towards the next plateau at a size that still counts as on its
/// own: a tenth, +10 % for a 2.7x step. For a TLB of E entries over a
/// random chain a page misses with probability 1 − E/N past E, so a
/// tenth of the way lies within about 5 % past E.
pub const ONSET_FRACTION: f64 = 0.1;

/// How far (a fraction of the step, on a log scale) the latency may have
/// risen at a size that still counts as held by a level whose misses
/// begin before it is full (`Place::Bulk`): two fifths, 2x for a 5.6x
/// step. Zen 5's 4,096-entry L2 TLB (skewed-associative, shared with
/// 2 MiB pages and page-directory entries) starts to miss before 3,072
/// pages, by an amount that moves with each process's addresses. Over the
/// 104 quiet stored runs (the median of each run's rounds, over the
/// plateau at 1,024-2,048 pages): 3,072 pages 0-26 % up, 4,096 pages
/// 10-59 %, 6,144 pages 2.5-2.8x (a third of the pages missing, as
/// 1 - 4096/6144 says), 8,192 pages 3.1-5.7x. A tenth of the way (about
/// +20 %) cut through the overlap and read 3,072 in 100 runs, 4,096 in two,
/// 2,048 in one; from 0.35 to 0.45 all 104 read 4,096 (0.3 and 0.5 one
/// run each off).
pub const BULK_FRACTION: f64 = 0.4;

/// How far (a factor of the size) a plateau must hold after a small
/// transition (one that rises by less than `SHOULDER_RISE`) to be a level:
/// a doubling; a narrower one is a shoulder of the rise, and the two
/// transitions are one. Real levels lie 8x or more apart (L1d 32-64 KiB,
/// L2 0.5-2 MiB, L3 8 MiB and up; TLBs of 64-96 and 1-3 K entries). On the
/// guest the L2's rise (384 KiB to 1.5 MiB: L1 TLB misses, then L2
/// conflicts) has a shoulder at 768-896 KiB that some rounds read as a
/// plateau, cutting it into steps at 640-768 KiB and 1.25-1.5 MiB, so the
/// rounds disagreed and the default suite's L2 was not detected in three
/// runs of five; read as one transition it is 1 MiB in every stored run.
/// A large rise followed by a short plateau is left alone: when a busy
/// host leaves the guest 2-4 MiB of L3, the L2's step (3.2 to 10 ns) is
/// followed by a short L3 plateau, and merged with the fall to memory the
/// L2 would be placed at 2-3 MiB.
pub const MIN_PLATEAU: u64 = 2;

/// The rise below which a transition followed by a plateau narrower than
/// `MIN_PLATEAU` is a shoulder: half again (the guest's shoulder comes
/// 1.3-1.45x above the L2 plateau; a level's own step is 2x and more).
pub const SHOULDER_RISE: f64 = 1.5;

/// The curve's lower envelope from the right: each point's latency is at
/// most the latency of any larger size. A random chain over a larger
/// working set is never faster in the hardware, and interference (another
/// tenant, a preemption that hit every repetition of one size) only ever
/// adds time, so a point above a larger size's is read at that size's
/// latency, as the chase families read the fastest repetition.
fn lower_envelope(pts: &mut [(u64, f64)]) {
    let mut low = f64::INFINITY;
    for p in pts.iter_mut().rev() {
        low = low.min(p.1);
        p.1 = low;
    }
}

/// Find the plateaus of a latency curve (size, ns), sorted by size, in its
/// lower envelope (see `lower_envelope`). A transition is a run of
/// consecutive sizes over which the latency rises faster than
/// `STEEP_PER_DOUBLING`, and it separates two levels when it rises by more
/// than `rise` (e.g. 0.25 for 25 %) in all; a plateau is what lies between
/// two transitions, their end points included. A level's size is the
/// largest size in the transition after it whose latency is below the
/// geometric midpoint between its plateau and the next one.
pub fn detect_levels(curve: &[(u64, f64)], rise: f64) -> Vec<Level> {
    let mut pts: Vec<(u64, f64)> = curve
        .iter()
        .copied()
        .filter(|p| p.1.is_finite() && p.1 > 0.0 && p.0 > 0)
        .collect();
    pts.sort_by_key(|p| p.0);
    pts.dedup_by_key(|p| p.0);
    if pts.is_empty() {
        return Vec::new();
    }
    lower_envelope(&mut pts);
    // Per doubling between close sizes; between sizes more than a doubling
    // apart, the whole rise (the grid cannot show how steep it was).
    let steep = |i: usize| {
        let (a, b) = (pts[i], pts[i + 1]);
        let doublings = (b.0 as f64 / a.0 as f64).log2().min(1.0);
        (b.1 / a.1).log2() / doublings > STEEP_PER_DOUBLING
    };
    // Transitions: (first index, last index) of each steep run that rises
    // by more than `rise`.
    let mut transitions: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i + 1 < pts.len() {
        if !steep(i) {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j + 1 < pts.len() && steep(j) {
            j += 1;
        }
        if pts[j].1 > pts[i].1 * (1.0 + rise) {
            match transitions.last_mut() {
                // Less than a doubling of sizes after a small transition:
                // a shoulder of it, not a plateau (see `MIN_PLATEAU`).
                Some(last)
                    if pts[i].0 < MIN_PLATEAU * pts[last.1].0
                        && pts[last.1].1 < SHOULDER_RISE * pts[last.0].1 =>
                {
                    last.1 = j
                }
                _ => transitions.push((i, j)),
            }
        }
        i = j;
    }
    let mut levels: Vec<Level> = Vec::new();
    let mut starts: Vec<usize> = Vec::new();
    let mut from = 0;
    for &(a, b) in transitions
        .iter()
        .chain(std::iter::once(&(pts.len() - 1, 0)))
    {
        let vals: Vec<f64> = pts[from..=a].iter().map(|p| p.1).collect();
        levels.push(Level::plateau(vals));
        starts.push(from);
        from = b;
    }
    for (k, &(a, b)) in transitions.iter().enumerate() {
        let mid = (levels[k].latency_ns * levels[k + 1].latency_ns).sqrt();
        let below = pts[a..=b]
            .iter()
            .rposition(|p| p.1 < mid)
            .map_or(a, |i| a + i);
        levels[k].size = Some(halfway_size(&pts, a, b, below, mid));
        // The envelope does not fall, so the sizes still near the plateau
        // come first.
        let (low, high) = (levels[k].latency_ns, levels[k + 1].latency_ns);
        let held = |fraction: f64| {
            let within = low * (high / low).powf(fraction);
            pts[starts[k]..=b]
                .iter()
                .take_while(|p| p.1 <= within)
                .last()
                .or(Some(&pts[starts[k]]))
                .map(|p| p.0)
        };
        levels[k].onset = held(ONSET_FRACTION);
        levels[k].bulk = held(BULK_FRACTION);
    }
    levels
}

/// Where a transition (`pts[a..=b]`) is half done, `below` the last of its
/// sizes under the geometric midpoint `mid` between the plateaus. A sharp
/// step (the rise within one interval of the grid) is placed at `below`,
/// the largest size that still fits: the grid cannot say where inside the
/// interval the capacity lies, and the midpoint sits near the middle of
/// it, where rounding would flip with the noise. A gradual rise (over two
/// intervals or more: conflicts in a physically indexed cache, TLB misses
/// growing with the working set) crosses the midpoint at a place the
/// noise moves only a little, but "the last size below" rounds it down,
/// so a crossing just past a grid size (the guest's L2 halfway at
/// 1-1.06 MiB) gave that size in one run and the one before in the next
/// (768 KiB or 1 MiB): there the crossing, interpolated on a log-log
/// scale, is placed at the nearest size measured (where the sizes around
/// it are at most a doubling apart, as `resolved` asks).
fn halfway_size(pts: &[(u64, f64)], a: usize, b: usize, below: usize, mid: f64) -> u64 {
    if b < a + 2 || below >= b || pts[below].1 >= mid || pts[below + 1].0 > 2 * pts[below].0 {
        return pts[below].0;
    }
    let (lo, hi) = (pts[below], pts[below + 1]);
    let done = (mid / lo.1).ln() / (hi.1 / lo.1).ln();
    if done > 0.5 {
        hi.0
    } else {
        lo.0
    }
}

/// One point of a measured sweep: the working set (or page count), every
/// repetition's figure, and the headline the run reported.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    pub size: u64,
    pub samples: Vec<f64>,
    /// The round of each sample (`Measurement::rounds`); empty for one round.
    pub rounds: Vec<u32>,
    pub headline: f64,
}

/// A recorded sweep (size, every repetition's figure) as one round's
/// points with their minimum as the headline: the recorded curves the
/// lat_mem_rd and tlb tests replay.
#[cfg(test)]
pub fn recorded_sweep(c: &[(u64, Vec<f64>)]) -> Vec<SweepPoint> {
    c.iter()
        .map(|(s, v)| SweepPoint {
            size: *s,
            samples: v.clone(),
            rounds: Vec::new(),
            headline: min_of(v),
        })
        .collect()
}

/// Where a step is placed: where the curve crosses halfway (geometric)
/// between its plateaus (a cache's capacity, blurred by conflicts over a
/// range of sizes around it), or where the latency starts to leave the
/// plateau (a TLB's entries: pages up to the count fit, and the latency
/// rises from the next; halfway lies near 1.5 times the entries), or
/// where the bulk of the rise begins (a TLB that misses before it is full,
/// see `BULK_FRACTION`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Midpoint,
    Onset,
    Bulk,
}

/// A step of a curve (the end of a plateau) with how far it can be trusted.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The plateau the step ends (latency, its points, its size).
    pub level: Level,
    /// The step's size, placed as `steps` was asked (`Place`): on the
    /// headline curve, or, for a sweep measured in rounds, the median of
    /// the rounds' places (the lower one of an even count).
    pub size: u64,
    /// The first size measured past it: the step lies in (`size`, `next`].
    pub next: Option<u64>,
    /// Fraction of resampled curves (see `steps`) that show this step
    /// within one grid step, and, when a confirming curve is given, show it
    /// there too.
    pub confidence: f64,
    /// Whether the sweep is fine enough to place the step: a measured size
    /// at most 2× past its place on the headline curve, and at least two
    /// points on its plateau.
    pub resolved: bool,
    /// Of the rounds (fresh processes, fresh pages) the sweep was measured
    /// in, how many show the step within one grid step on their own curve,
    /// and how many there were; None for a sweep of one round.
    pub rounds_agreeing: Option<(usize, usize)>,
    /// The smallest and largest place the agreeing rounds give the step
    /// (each round's step nearest to it); None for one round.
    pub rounds_span: Option<(u64, u64)>,
    /// How many rounds place the step within one grid step of `size` (the
    /// median of their places); None for one round.
    pub rounds_near_size: Option<usize>,
    /// Every step of each round's own curve, sorted (the same for every
    /// step of a sweep); empty for one round. Where a round leaves the
    /// plateau this step ends can lie further from it than one grid step
    /// (`first_past`).
    pub rounds_places: Vec<Vec<u64>>,
}

impl Step {
    /// The smallest place at which any round leaves the plateau this step
    /// ends: each round's first step past `below` (the step of the level
    /// before, more than one grid step of `grid` above it; the first step
    /// of all with none), however far from this step. None for one round.
    pub fn first_past(&self, grid: &[u64], below: Option<u64>) -> Option<u64> {
        self.rounds_places
            .iter()
            .filter_map(|round| {
                round
                    .iter()
                    .copied()
                    .find(|&p| below.is_none_or(|b| p > b && !same_step(grid, p, b)))
            })
            .min()
    }

    /// Why the step is not confirmed, or None: fewer than
    /// `MIN_CONFIDENCE` of the resampled curves show it (`with`: the
    /// confirming chain, named in the reason), or fewer than that share
    /// of the rounds' own curves. Resampling repetitions shows how far
    /// the step moves with the noise inside one process; the rounds show
    /// whether it stays put with a fresh process's physical pages and
    /// CPU, which decides where it lands in the next run (a guest's
    /// shared L3 reads as memory in some rounds and as a cache in others).
    pub fn unconfirmed(&self, with: &str) -> Option<String> {
        self.unconfirmed_in(with, bytes_text)
    }

    /// `unconfirmed` for a sweep whose sizes are not bytes: `text` writes
    /// a size (the tlb family's page counts).
    pub fn unconfirmed_in(&self, with: &str, text: fn(u64) -> String) -> Option<String> {
        self.unconfirmed_needing(with, text, MIN_CONFIDENCE)
    }

    /// `unconfirmed_in` with the share `need` of resampled curves and of
    /// rounds in place of `MIN_CONFIDENCE` (`OS_WITNESSED`: a step where
    /// the OS reports a private cache).
    pub fn unconfirmed_needing(
        &self,
        with: &str,
        text: fn(u64) -> String,
        need: f64,
    ) -> Option<String> {
        let needs = if need < MIN_CONFIDENCE && need > 0.5 {
            "more than half".to_string()
        } else {
            format!("{:.0} %", need * 100.0)
        };
        if self.confidence < need {
            return Some(format!(
                "{:.0} % of resampled curves{with} show it within one grid step (needs {needs})",
                self.confidence * 100.0,
            ));
        }
        match (self.rounds_agreeing, self.rounds_span) {
            (Some((k, n)), _) if (k as f64) < need * n as f64 => Some(format!(
                "the curves of {k} of its {n} rounds show it within one grid step \
                 (needs {needs}): it moves between fresh processes"
            )),
            (Some((_, n)), Some((low, high)))
                if (self.rounds_near_size.unwrap_or(n) as f64) < need * n as f64 =>
            {
                Some(format!(
                    "its rounds place it from {} to {}, {} of {n} within one grid step \
                     of their median {} (needs {needs}): it moves between fresh processes",
                    text(low),
                    text(high),
                    self.rounds_near_size.unwrap_or(0),
                    text(self.size),
                ))
            }
            _ => None,
        }
    }
}

/// The step sizes of each round's own curve (each point's headline the
/// statistic `stat` of that round's repetitions), for a sweep measured in
/// more than one round; empty otherwise.
fn steps_per_round(
    points: &[&SweepPoint],
    rise: f64,
    stat: fn(&[f64]) -> f64,
    place: Place,
) -> Vec<Vec<u64>> {
    let mut rounds: Vec<u32> = points.iter().flat_map(|p| p.rounds.clone()).collect();
    rounds.sort_unstable();
    rounds.dedup();
    if rounds.len() < 2 {
        return Vec::new();
    }
    rounds
        .iter()
        .map(|&r| {
            let curve: Vec<(u64, f64)> = points
                .iter()
                .filter_map(|p| {
                    let of_round: Vec<f64> = p
                        .samples
                        .iter()
                        .zip(&p.rounds)
                        .filter(|(_, &k)| k == r)
                        .map(|(&x, _)| x)
                        .collect();
                    (!of_round.is_empty()).then(|| (p.size, stat(&of_round)))
                })
                .collect();
            step_places(&curve, rise, place)
        })
        .collect()
}

/// Resampled curves per detection: enough that a confidence of 0.8 is
/// read to within a few per cent.
pub const RESAMPLES: usize = 200;

/// The confidence a step needs to be reported as a level.
pub const MIN_CONFIDENCE: f64 = 0.8;

/// The confidence a step needs where the OS reports a cache private to
/// one CPU within one grid step of it: more than half of the resampled
/// curves and of the rounds (two of three), the OS being the second
/// witness. Such a cache does not move between processes as a share of a
/// shared one does; a round that misses its step is a round the host
/// disturbed (see lat_mem_rd's `derive_on`).
pub const OS_WITNESSED: f64 = 0.51;

/// Where `size` lies on the measured `grid` (sorted sizes), counted in grid
/// steps on a log scale: 3.0 at the fourth size, 3.5 halfway (in log size)
/// to the fifth. Past either end the outermost spacing is carried on, so a
/// capacity beyond the sweep still has a place.
pub fn grid_position(grid: &[u64], size: u64) -> f64 {
    let ln: Vec<f64> = grid.iter().map(|&g| (g as f64).ln()).collect();
    let x = (size as f64).ln();
    match ln.len() {
        0 => return 0.0,
        1 => return (x - ln[0]) / std::f64::consts::LN_2,
        _ => {}
    }
    let n = ln.len();
    let i = ln.partition_point(|&g| g <= x).clamp(1, n - 1);
    (i - 1) as f64 + (x - ln[i - 1]) / (ln[i] - ln[i - 1])
}

/// How many grid steps of the measured `grid` lie between sizes `a` and `b`.
pub fn grid_steps_apart(grid: &[u64], a: u64, b: u64) -> f64 {
    (grid_position(grid, a) - grid_position(grid, b)).abs()
}

/// Two steps are the same when they are at most one grid step apart: the
/// grid cannot place a step more finely.
pub fn same_step(grid: &[u64], a: u64, b: u64) -> bool {
    grid_steps_apart(grid, a, b) <= 1.0 + 1e-9
}

/// The step sizes of `RESAMPLES` curves rebuilt from `points`, each point's
/// headline taken as the statistic `stat` of half its repetitions drawn
/// without replacement. Half-sampling rather than the bootstrap's n draws
/// with replacement: the chase families' headline is the minimum, and the
/// bootstrap's minimum is the sample's own minimum in nearly two draws of
/// three, so it would hardly ever move; subsamples of half the size (Politis
/// and Romano's subsampling, which holds for extremes) show how far the
/// figure moves when some repetitions had gone otherwise.
fn resampled_steps(
    points: &[&SweepPoint],
    rise: f64,
    stat: fn(&[f64]) -> f64,
    place: Place,
    seed: u64,
) -> Vec<Vec<u64>> {
    let mut rng = super::memory::Rng::new(seed);
    let mut pool: Vec<f64> = Vec::new();
    (0..RESAMPLES)
        .map(|_| {
            let curve: Vec<(u64, f64)> = points
                .iter()
                .map(|p| {
                    if p.samples.is_empty() {
                        return (p.size, p.headline);
                    }
                    pool.clear();
                    pool.extend(&p.samples);
                    let half = p.samples.len().div_ceil(2);
                    for k in 0..half {
                        let j = k + rng.below(pool.len() - k);
                        pool.swap(k, j);
                    }
                    (p.size, stat(&pool[..half]))
                })
                .collect();
            step_places(&curve, rise, place)
        })
        .collect()
}

/// Where the steps of `curve` lie, placed as asked.
fn step_places(curve: &[(u64, f64)], rise: f64, place: Place) -> Vec<u64> {
    detect_levels(curve, rise)
        .iter()
        .filter_map(|l| placed(l, place))
        .collect()
}

fn placed(level: &Level, place: Place) -> Option<u64> {
    match place {
        Place::Midpoint => level.size,
        Place::Onset => level.onset,
        Place::Bulk => level.bulk,
    }
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
/// resampled curves (see `resampled_steps`) that show a step at most one
/// grid step away from it — and, when `confirm` (another chain measured in
/// the same run, e.g. the in-page random chain next to the fully random
/// one) is given, whose resampled twin shows it too. A step resting on a
/// lucky or unlucky repetition, or one that a second chain measured minutes
/// apart does not see (a burst of other work, a TLB effect that only one
/// chain has), scores low. The last plateau (no step after it) is not a
/// step.
pub fn steps(
    points: &[SweepPoint],
    confirm: Option<&[SweepPoint]>,
    rise: f64,
    stat: fn(&[f64]) -> f64,
    place: Place,
) -> Vec<Step> {
    let pts = usable(points);
    let headline: Vec<(u64, f64)> = pts.iter().map(|p| (p.size, p.headline)).collect();
    let levels = detect_levels(&headline, rise);
    let found = resampled_steps(&pts, rise, stat, place, 0x5eed_1e7e1);
    let twin = confirm.map(|c| resampled_steps(&usable(c), rise, stat, place, 0x7e1_5eed));
    let per_round = steps_per_round(&pts, rise, stat, place);
    let sizes: Vec<u64> = pts.iter().map(|p| p.size).collect();
    levels
        .into_iter()
        .filter_map(|level| {
            let size = placed(&level, place)?;
            let agree = (0..RESAMPLES)
                .filter(|&r| {
                    found[r].iter().any(|&b| same_step(&sizes, b, size))
                        && twin
                            .as_ref()
                            .is_none_or(|t| t[r].iter().any(|&b| same_step(&sizes, b, size)))
                })
                .count();
            let next = sizes.iter().copied().find(|&s| s > size);
            let resolved = next.is_some_and(|a| a <= size * 2) && level.points.len() >= 2;
            // Each round's step nearest this one, where within one grid step.
            let near: Vec<u64> = per_round
                .iter()
                .filter_map(|r| {
                    r.iter()
                        .copied()
                        .filter(|&b| same_step(&sizes, b, size))
                        .min_by(|&a, &b| {
                            grid_steps_apart(&sizes, a, size)
                                .total_cmp(&grid_steps_apart(&sizes, b, size))
                        })
                })
                .collect();
            let rounds_agreeing = (!per_round.is_empty()).then_some((near.len(), per_round.len()));
            let rounds_span = near
                .iter()
                .min()
                .zip(near.iter().max())
                .map(|(&a, &b)| (a, b));
            // Where rounds show it, the step is placed at the median of
            // their places: the pooled curve follows whichever rounds were
            // the extremes, and the smallest place whichever round was
            // slowed at the last size that fits (interference only adds
            // time), so either flipped between two grid sizes from run to
            // run (the L2 TLB at 2560 or 3072 pages where every other
            // round said 3072); the median moves only when half the
            // rounds do. It is confirmed when `MIN_CONFIDENCE` of the
            // rounds lie within one grid step of it.
            let mut sorted = near.clone();
            sorted.sort_unstable();
            let (size, next, rounds_near_size) =
                match sorted.get(sorted.len().saturating_sub(1) / 2) {
                    Some(&median) => (
                        median,
                        sizes.iter().copied().find(|&s| s > median),
                        Some(
                            near.iter()
                                .filter(|&&b| same_step(&sizes, b, median))
                                .count(),
                        ),
                    ),
                    None => (size, next, (!per_round.is_empty()).then_some(0)),
                };
            Some(Step {
                level,
                size,
                next,
                confidence: agree as f64 / RESAMPLES as f64,
                resolved,
                rounds_agreeing,
                rounds_span,
                rounds_near_size,
                rounds_places: per_round.clone(),
            })
        })
        .collect()
}

/// The level of each found step, by `name_steps` over the `candidates`
/// (indices of the steps that may be a level; `size_of` gives a step's
/// size), None for the others; a candidate left without a level and
/// without a reason already in `why` gets one: `source` reports that many
/// levels and the steps matched to them lie nearer.
pub fn name_candidates(
    candidates: &[usize],
    size_of: impl Fn(usize) -> u64,
    reported: &[(u32, u64)],
    source: &str,
    why: &mut [Option<String>],
) -> Vec<Option<u32>> {
    let sizes: Vec<u64> = candidates.iter().map(|&i| size_of(i)).collect();
    let mut names: Vec<Option<u32>> = vec![None; why.len()];
    for (&i, name) in candidates.iter().zip(name_steps(&sizes, reported)) {
        names[i] = name;
        if name.is_none() && why[i].is_none() {
            why[i] = Some(format!(
                "{source} reports {} levels, and the steps matched to them lie nearer",
                reported.len()
            ));
        }
    }
    names
}

/// The level each step stands for. Where the machine reports its levels
/// (`reported`: level and size, sorted, from sysfs or cpuid), each step
/// (`sizes`, sorted) goes to the reported level nearest it on a log scale;
/// when several go to one level, the nearest keeps it and each other moves
/// on, away from the one that kept it (a larger step to the next level up, a
/// smaller one down), until it finds a level of its own or runs out of
/// levels and is no level (`None`). So a step not confirmed in one run keeps
/// its level and does not hand it to the next, a level a VM shows at a
/// quarter of its reported size keeps its name, and a step between two
/// levels (a plateau that slopes, a level the machine does not report)
/// stands for none. Pass every step that could be a level, confirmed or
/// not, so each keeps its place. With nothing reported, steps are numbered
/// in order.
pub fn name_steps(sizes: &[u64], reported: &[(u32, u64)]) -> Vec<Option<u32>> {
    if reported.is_empty() {
        return (1..=sizes.len() as u32).map(Some).collect();
    }
    let distance = |i: usize, j: usize| (sizes[i] as f64 / reported[j].1 as f64).ln().abs();
    let mut at: Vec<Option<usize>> = (0..sizes.len())
        .map(|i| (0..reported.len()).min_by(|&a, &b| distance(i, a).total_cmp(&distance(i, b))))
        .collect();
    // The way each step was moved on (up or down); it never turns back.
    let mut moved: Vec<Option<bool>> = vec![None; sizes.len()];
    loop {
        let mut changed = false;
        for j in 0..reported.len() {
            let here: Vec<usize> = (0..sizes.len()).filter(|&i| at[i] == Some(j)).collect();
            let Some(&keep) = here
                .iter()
                .min_by(|&&a, &&b| distance(a, j).total_cmp(&distance(b, j)))
            else {
                continue;
            };
            for &i in here.iter().filter(|&&i| i != keep) {
                let up = sizes[i] > sizes[keep] || (sizes[i] == sizes[keep] && i > keep);
                at[i] = match moved[i] {
                    Some(way) if way != up => None,
                    _ if up => (j + 1 < reported.len()).then_some(j + 1),
                    _ => j.checked_sub(1),
                };
                moved[i] = Some(up);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // Levels rise with the steps' sizes.
    let mut last: Option<usize> = None;
    for slot in at.iter_mut() {
        if let Some(j) = *slot {
            if last.is_some_and(|l| j <= l) {
                *slot = None;
            } else {
                last = Some(j);
            }
        }
    }
    at.iter().map(|j| j.map(|j| reported[j].0)).collect()
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
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}

#[cfg(test)]
mod before_issue_32;
#[cfg(test)]
pub(crate) use before_issue_32::detect_levels_per_grid_point;

#[cfg(test)]
mod tests;
