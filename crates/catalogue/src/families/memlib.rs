//! Shared by the memory-hierarchy families (lat_mem_rd, bw_mem, stream, line,
//! tlb, par_mem, lat_dram_page): page-aligned buffers from mmap, touched
//! before use; pointer chains laid out in them; what the OS says about the
//! caches; the free-memory check every `build` makes; and the detection of
//! cache levels (plateaus and steps) in a latency curve.

use std::path::Path;

use chrono::Utc;
use touchstone_results::{host, Measurement, Statistic, Summary, Unit, Warning};

/// Whether a buffer should be backed by transparent huge pages.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Pages {
    /// The kernel's default for anonymous memory (what malloc gives lmbench).
    Default,
    /// Base pages only (MADV_NOHUGEPAGE): the TLB benchmark's page size.
    Base,
    /// Ask for huge pages (MADV_HUGEPAGE), to take the TLB out of a figure.
    Huge,
}

/// A page-aligned, private anonymous mapping, every page touched (written)
/// at creation so no page fault lands in a timed interval. Unmapped on drop.
pub struct Buf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is owned by one Buf and only used by its owner.
unsafe impl Send for Buf {}

impl Buf {
    pub fn new(len: usize, pages: Pages) -> Result<Buf, String> {
        let len = len.max(1);
        // SAFETY: a fresh anonymous mapping; checked for failure below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(format!(
                "cannot map {len} bytes: {}",
                std::io::Error::last_os_error()
            ));
        }
        let advice = match pages {
            Pages::Default => None,
            Pages::Base => Some(libc::MADV_NOHUGEPAGE),
            Pages::Huge => Some(libc::MADV_HUGEPAGE),
        };
        if let Some(a) = advice {
            // SAFETY: advice on our own mapping; failure only loses the hint.
            unsafe { libc::madvise(ptr, len, a) };
        }
        let b = Buf {
            ptr: ptr as *mut u8,
            len,
        };
        // Touch every page so the timed intervals see no page faults.
        // SAFETY: whole mapping is ours and writable.
        unsafe { libc::memset(ptr, 1, len) };
        Ok(b)
    }
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The buffer as 64-bit words (page-aligned, so aligned for any type).
    pub fn words(&mut self) -> &mut [u64] {
        // SAFETY: mapping is page-aligned, len/8 whole words are ours.
        unsafe { std::slice::from_raw_parts_mut(self.ptr as *mut u64, self.len / 8) }
    }
    pub fn doubles(&mut self) -> &mut [f64] {
        // SAFETY: as `words`; any bit pattern is a valid f64.
        unsafe { std::slice::from_raw_parts_mut(self.ptr as *mut f64, self.len / 8) }
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what `new` mapped.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// The system page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(4096) as usize
}

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

/// Refuse, before anything runs, a case needing more memory than the
/// machine has free: a clear error instead of an out-of-memory kill.
pub fn check_memory(what: &str, bytes: u64) -> Result<(), String> {
    check_memory_against(what, bytes, host::available_memory_bytes())
}

pub fn check_memory_against(what: &str, bytes: u64, avail: Option<u64>) -> Result<(), String> {
    let Some(avail) = avail else { return Ok(()) };
    // Keep some headroom for the harness, page tables and the rest of the system.
    let headroom = 64 << 20;
    if bytes.saturating_add(headroom) > avail {
        return Err(format!(
            "{what} needs {} MB per process but only {} MB is available (MemAvailable); \
             ask for a smaller size",
            bytes >> 20,
            avail >> 20
        ));
    }
    Ok(())
}

/// Deterministic xorshift64* generator for chain orders (no allocation, no
/// dependency; the same chain on every run).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in 0..n (n > 0), with negligible bias for our n.
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next() >> 11) % n as u64) as usize
    }
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

/// How a chain visits a working set.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Order {
    /// Every `stride` bytes in address order (lmbench's lat_mem_rd).
    Stride(usize),
    /// Pages in address order, the `elem`-byte elements within each page in
    /// random order: the stride prefetchers see no pattern, and each TLB
    /// entry serves a whole page of loads.
    RandInPage { elem: usize, page: usize },
    /// Every `elem`-byte element in random order across the working set:
    /// defeats the prefetchers and, past the TLB's reach, the TLB too.
    Rand { elem: usize },
    /// One element per page, pages in random order, the element's offset in
    /// its page rotating by `elem` so the loads spread over cache sets
    /// (the TLB benchmark).
    PagePerLoad { elem: usize, page: usize },
    /// Blocks of `block` bytes in random order, the elements within each
    /// block in random order (lat_dram_page's open-page chain).
    RandBlocks { elem: usize, block: usize },
}

/// The byte offsets a chain visits in `size` bytes, in visiting order.
pub fn chain_offsets(size: usize, order: Order, seed: u64) -> Vec<usize> {
    let mut rng = Rng::new(seed);
    match order {
        Order::Stride(s) => (0..size / s).map(|i| i * s).collect(),
        Order::RandInPage { elem, page } => {
            let page = page.min(size);
            let per = (page / elem).max(1);
            let mut out = Vec::with_capacity(size / elem);
            let mut idx: Vec<usize> = (0..per).collect();
            for p in 0..size / page {
                rng.shuffle(&mut idx);
                out.extend(idx.iter().map(|&i| p * page + i * elem));
            }
            out
        }
        Order::Rand { elem } => {
            let mut v: Vec<usize> = (0..size / elem).map(|i| i * elem).collect();
            rng.shuffle(&mut v);
            v
        }
        Order::RandBlocks { elem, block } => {
            let per = (block / elem).max(1);
            let mut blocks: Vec<usize> = (0..size / block).collect();
            rng.shuffle(&mut blocks);
            let mut idx: Vec<usize> = (0..per).collect();
            let mut out = Vec::with_capacity(size / elem);
            for b in blocks {
                rng.shuffle(&mut idx);
                out.extend(idx.iter().map(|&i| b * block + i * elem));
            }
            out
        }
        Order::PagePerLoad { elem, page } => {
            let pages = size / page;
            let per = (page / elem).max(1);
            let mut v: Vec<usize> = (0..pages).map(|p| p * page + (p % per) * elem).collect();
            rng.shuffle(&mut v);
            v
        }
    }
}

/// Lay a circular pointer chain through `buf` at `offsets`: the word at each
/// offset holds the address of the next. Returns the first element's address.
pub fn lay_chain(buf: &mut Buf, offsets: &[usize]) -> *const usize {
    assert!(!offsets.is_empty());
    let base = buf.ptr();
    for (i, &o) in offsets.iter().enumerate() {
        let next = offsets[(i + 1) % offsets.len()];
        assert!(o + 8 <= buf.len() && next + 8 <= buf.len());
        // SAFETY: both offsets lie inside the buffer (asserted), 8-aligned
        // because every element size and stride is a multiple of 8.
        unsafe { *(base.add(o) as *mut usize) = base.add(next) as usize };
    }
    base.wrapping_add(offsets[0]) as *const usize
}

/// Follow a chain 100 loads at a time, `n` times; returns where it stopped.
/// Each load's address is the previous load's value, so the loads cannot
/// overlap or be removed; the caller keeps the final pointer (black_box).
#[inline(never)]
pub fn chase(mut p: *const usize, n: u64) -> *const usize {
    macro_rules! ten {
        () => {
            // SAFETY: every chain element holds the address of another one.
            unsafe {
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
            }
        };
    }
    for _ in 0..n {
        ten!();
        ten!();
        ten!();
        ten!();
        ten!();
        ten!();
        ten!();
        ten!();
        ten!();
        ten!();
    }
    std::hint::black_box(p)
}

/// Loads per `chase` iteration.
pub const CHASE_LOADS: f64 = 100.0;

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

/// A measurement derived from others (not timed itself): its samples are
/// the figures it was computed from, its headline `value`.
pub fn derived(
    name: &str,
    family: &str,
    group: &str,
    unit: Unit,
    value: f64,
    from: &[f64],
    extra: &[(&str, f64)],
    warnings: Vec<Warning>,
) -> Measurement {
    let samples = if from.is_empty() {
        vec![value]
    } else {
        from.to_vec()
    };
    let mut summary = Summary::of(&samples).unwrap_or_else(|| Summary::of(&[value]).unwrap());
    summary.median = value;
    let params = name
        .split('/')
        .skip(1)
        .filter_map(|seg| seg.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Measurement {
        name: name.to_string(),
        benchmark: family.to_string(),
        group: group.to_string(),
        params,
        parallel: 1,
        unit,
        statistic: Statistic::Median,
        samples,
        per_process: Vec::new(),
        summary,
        intervals: Vec::new(),
        baseline: None,
        warnings,
        extra: extra.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        started_at: Utc::now(),
        ended_at: Utc::now(),
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

    #[test]
    fn chains_visit_every_element_once() {
        for order in [
            Order::Stride(64),
            Order::RandInPage {
                elem: 64,
                page: 4096,
            },
            Order::Rand { elem: 64 },
        ] {
            let mut v = chain_offsets(1 << 16, order, 7);
            assert_eq!(v.len(), 1024, "{order:?}");
            v.sort();
            v.dedup();
            assert_eq!(v.len(), 1024, "{order:?}");
        }
        // Within-page order keeps pages in address order.
        let v = chain_offsets(
            1 << 16,
            Order::RandInPage {
                elem: 64,
                page: 4096,
            },
            7,
        );
        assert!(v[..64].iter().all(|&o| o < 4096));
        assert!(v[64..128].iter().all(|&o| (4096..8192).contains(&o)));
        let v = chain_offsets(
            1 << 20,
            Order::PagePerLoad {
                elem: 64,
                page: 4096,
            },
            7,
        );
        assert_eq!(v.len(), 256);
        let mut pages: Vec<usize> = v.iter().map(|o| o / 4096).collect();
        pages.sort();
        pages.dedup();
        assert_eq!(pages.len(), 256);
    }

    #[test]
    fn a_laid_chain_is_one_cycle() {
        let mut b = Buf::new(1 << 16, Pages::Default).unwrap();
        let offs = chain_offsets(1 << 16, Order::Rand { elem: 64 }, 3);
        let start = lay_chain(&mut b, &offs);
        let mut p = start;
        for i in 1..=offs.len() {
            p = unsafe { *p as *const usize };
            if p == start {
                assert_eq!(i, offs.len());
            }
        }
        assert_eq!(p, start);
        // chase: 100 loads per iteration; 1024 elements, so after 1024
        // iterations (102400 loads, a multiple of 1024) we are back.
        assert_eq!(chase(start, 1024), start);
    }

    #[test]
    fn memory_refusal_is_clear() {
        let e = check_memory_against("x/size:1g", 1 << 30, Some(512 << 20)).unwrap_err();
        assert!(e.contains("needs 1024 MB") && e.contains("512 MB"), "{e}");
        assert!(check_memory_against("x", 1 << 20, Some(1 << 30)).is_ok());
        assert!(check_memory_against("x", 1 << 40, None).is_ok());
    }
}
