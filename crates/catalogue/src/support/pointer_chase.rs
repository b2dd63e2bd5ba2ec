//! The pointer chase, the benchmark the memory-latency families share
//! (lat_mem_rd, line, tlb, lat_dram_page, numa_matrix's latency cells): a
//! circular chain of pointers laid through a buffer in the family's order,
//! followed one dependent load after another.

use touchstone_harness::{Benchmark, Context, Fallible, Shape};
use touchstone_results::Statistic;

use super::memory::{chain_offsets, check_memory, lay_chain, Buf, Order, Pages};
use super::placement::pin_self;
use crate::family::Built;

/// A chain of `size` bytes visited in `order`, in memory backed by `pages`.
/// Each process lays its own chain, shuffled from the seed plus its index.
pub struct Chase {
    size: usize,
    order: Order,
    pages: Pages,
    seed: u64,
    /// Where a numa_matrix cell runs: the CPU the chase is pinned to and
    /// the NUMA node its memory is bound to; `None`: where the harness puts it.
    placed: Option<(usize, usize)>,
    buf: Option<Buf>,
    cur: *const usize,
}

// SAFETY: `cur` points into `buf`, owned by the same value.
unsafe impl Send for Chase {}

impl Chase {
    /// A case chasing such a chain. Refused here, before anything runs,
    /// when the machine has less memory free than `size` (`what` names the
    /// case in the refusal).
    pub fn case(
        what: &str,
        size: usize,
        order: Order,
        pages: Pages,
        seed: u64,
    ) -> Result<Built, String> {
        Chase::placed_case(what, size, order, pages, seed, None)
    }

    /// As `case`, pinned to CPU `placed.0` with the chain's memory bound to
    /// NUMA node `placed.1` (numa_matrix's latency cells).
    pub fn placed_case(
        what: &str,
        size: usize,
        order: Order,
        pages: Pages,
        seed: u64,
        placed: Option<(usize, usize)>,
    ) -> Result<Built, String> {
        check_memory(what, size as u64)?;
        Ok(Built::new(
            Chase {
                size,
                order,
                pages,
                seed,
                placed,
                buf: None,
                cur: std::ptr::null(),
            },
            // The physical limit: interference (preemption, other tenants)
            // only ever adds time, so the fastest interval is the figure.
            Shape::latency(CHASE_LOADS).with_statistic(Statistic::Min),
        )
        .with_setup_bytes(size as u64))
    }
}

impl Benchmark for Chase {
    fn setup(&mut self, ctx: &Context) -> Fallible {
        let mut node = None;
        if let Some((cpu, on)) = self.placed {
            pin_self(cpu)?;
            node = Some(on);
        }
        let (buf, cur) = chain(
            self.size,
            self.order,
            self.pages,
            node,
            self.seed + ctx.process as u64,
        )?;
        self.cur = cur;
        self.buf = Some(buf);
        Ok(())
    }

    /// Timed: `n` × 100 dependent loads along the chain (each address is the
    /// previous load's value, so neither the optimiser nor the CPU can
    /// overlap or drop them). The chain resumes where the last interval
    /// stopped. Nothing is subtracted: the loop counter runs beside the
    /// chain, off its critical path.
    fn run(&mut self, n: u64) -> Fallible {
        self.cur = chase(self.cur, n);
        Ok(())
    }

    fn cleanup(&mut self) {
        self.buf = None;
    }
}

/// The seed lat_mem_rd's chains are shuffled from (process i: seed + i);
/// loaded_latency lays its chase from it too, so that its idle end chases
/// the very chain lat_mem_rd's `rand` chain measures at the same size.
pub const CHAIN_SEED: u64 = 0x5eed;

/// A chain of `size` bytes in `order`, shuffled from `seed`, in a buffer
/// backed by `pages` (bound to NUMA `node` if given); returns the buffer and the chain's start. Laid, the
/// chain is where the caches and page tables leave it: the caller's warm-up
/// chases it before any interval is timed. (A whole lap here cost more than
/// all the timed intervals of a chain past the caches — 0.3 s at 128 MiB —
/// and every round lays its chain in fresh memory.)
pub fn chain(
    size: usize,
    order: Order,
    pages: Pages,
    node: Option<usize>,
    seed: u64,
) -> Fallible<(Buf, *const usize)> {
    let mut buf = Buf::new_on(size, pages, node)?;
    let offs = chain_offsets(size, order, seed);
    let start = lay_chain(&mut buf, &offs);
    Ok((buf, start))
}

/// Follow a chain 100 loads at a time, `n` times; returns where it stopped.
/// Each load's address is the previous load's value, so the loads cannot
/// overlap or be removed; the caller keeps the final pointer (black_box).
///
/// On x86-64 the loop is fixed machine code at the start of a 4 KiB page
/// of its own (`touchstone_chase100` below), not whatever the compiler
/// lays out where the rest of the binary leaves it: an address-order
/// chain is partly prefetched, and how far the prefetchers run ahead
/// depends on the loads' instruction addresses. When an unrelated merge
/// moved the compiled loop across a page boundary, `lat_mem_rd
/// stride:64` from 96 KiB to 4 MiB read 11-17 % faster on the same
/// machine (2.36 against 2.79 ns at 192 KiB, alternating the binaries).
#[inline(never)]
// Safe to call with any pointer the chain families hand it: each lays the
// chain (`chain`) before the first call and keeps the buffer alive.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn chase(p: *const usize, n: u64) -> *const usize {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: every chain element holds the address of another one, and
        // the routine reads only through them (System V: p in rdi, n in rsi,
        // the pointer back in rax; it touches rdi, rsi and rax alone).
        let end = unsafe { touchstone_chase100(p, n) };
        std::hint::black_box(end)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        chase_compiled(p, n)
    }
}

#[cfg(target_arch = "x86_64")]
extern "sysv64" {
    fn touchstone_chase100(p: *const usize, n: u64) -> *const usize;
}

// The chase loop, page-aligned in a section of its own: 100 dependent
// loads (`mov rdi, [rdi]`), then the count.
#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".pushsection .text.touchstone_chase100,\"ax\",@progbits",
    ".globl touchstone_chase100",
    ".type touchstone_chase100,@function",
    ".p2align 12",
    "touchstone_chase100:",
    "    test rsi, rsi",
    "    je 3f",
    "    .p2align 6",
    "2:",
    "    .rept 100",
    "    mov rdi, qword ptr [rdi]",
    "    .endr",
    "    dec rsi",
    "    jne 2b",
    "3:",
    "    mov rax, rdi",
    "    ret",
    ".size touchstone_chase100, .-touchstone_chase100",
    ".popsection",
);

/// `chase` as compiled Rust, where there is no fixed routine.
#[cfg(not(target_arch = "x86_64"))]
fn chase_compiled(mut p: *const usize, n: u64) -> *const usize {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// The chase ends where the chain says: after whole laps it is back at
    /// the start, after part of one it has gone that far along.
    #[test]
    fn a_chase_follows_its_chain() {
        let ctx = Context {
            process: 0,
            parallel: 1,
            scratch: PathBuf::new(),
        };
        // 4096 bytes in 64-byte steps: a chain of 64 elements.
        let mut b = Chase {
            size: 4096,
            order: Order::Stride(64),
            pages: Pages::Default,
            seed: 1,
            placed: None,
            buf: None,
            cur: std::ptr::null(),
        };
        b.setup(&ctx).unwrap();
        let base = b.buf.as_ref().unwrap().ptr() as usize;
        assert_eq!(b.cur as usize, base);
        // 1 × 100 loads: 100 mod 64 = 36 elements along.
        b.run(1).unwrap();
        assert_eq!(b.cur as usize - base, 36 * 64);
        // 16 × 100 loads = 25 laps.
        b.run(16).unwrap();
        assert_eq!(b.cur as usize - base, 36 * 64);
        b.run(1).unwrap();
        assert_eq!(b.cur as usize - base, (136 % 64) * 64);
        b.cleanup();
        assert!(b.buf.is_none());
    }
}
