//! Memory for the memory-hierarchy families (lat_mem_rd, bw_mem, stream,
//! line, tlb, par_mem, lat_dram_page): page-aligned buffers from mmap,
//! touched before use; the free-memory check every `build` makes; and the
//! orders in which pointer chains visit a working set, laid out in a buffer.

use touchstone_harness::Fallible;
use touchstone_results::host;

use super::sys::map_anonymous;

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
    pub fn new(len: usize, pages: Pages) -> Fallible<Buf> {
        Buf::new_on(len, pages, None)
    }

    /// As `new`, its pages bound to NUMA `node` (mbind) before they are
    /// touched, so they are allocated there.
    pub fn new_on(len: usize, pages: Pages, node: Option<usize>) -> Fallible<Buf> {
        let len = len.max(1);
        let ptr = map_anonymous(len, libc::PROT_READ | libc::PROT_WRITE, false)?;
        if let Some(n) = node {
            if let Err(e) = crate::support::numa::bind_to_node(ptr, len, n) {
                // SAFETY: unmapping exactly what was mapped.
                unsafe { libc::munmap(ptr as *mut libc::c_void, len) };
                return Err(e);
            }
        }
        let advice = match pages {
            Pages::Default => None,
            Pages::Base => Some(libc::MADV_NOHUGEPAGE),
            Pages::Huge => Some(libc::MADV_HUGEPAGE),
        };
        if let Some(a) = advice {
            // SAFETY: advice on our own mapping; failure only loses the hint.
            unsafe { libc::madvise(ptr as *mut libc::c_void, len, a) };
        }
        let b = Buf { ptr, len };
        // Touch every page so the timed intervals see no page faults.
        // SAFETY: whole mapping is ours and writable.
        unsafe { libc::memset(ptr as *mut libc::c_void, 1, len) };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::pointer_chase::chase;

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
