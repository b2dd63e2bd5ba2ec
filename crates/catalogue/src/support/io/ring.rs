//! The io_uring submission path for queue depths beyond one.

use std::os::fd::RawFd;

use hdrhistogram::Histogram;
use touchstone_harness::clock::now_ns;
use touchstone_harness::{BenchError, Fallible};

/// Whether this kernel lets this process make an io_uring; the reason when not.
pub fn io_uring_refused() -> Option<String> {
    match io_uring::IoUring::new(2) {
        Ok(_) => None,
        Err(e) => {
            let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
                .map(|s| format!(" (kernel.io_uring_disabled = {})", s.trim()))
                .unwrap_or_default();
            Some(format!(
                "depth beyond 1 needs io_uring, which this kernel or its seccomp filter refuses: {e}{disabled}; use depth:1"
            ))
        }
    }
}

/// The time-weighted mean of the number of blocks in flight: its
/// integral over time, advanced at each submission and completion from the
/// clock reads that time the blocks anyway (no extra read on the hot path).
#[derive(Debug, Default, Clone, Copy)]
struct InFlight {
    now: usize,
    /// When `now` last changed, ns.
    since: u64,
    /// ∫ in-flight dt over the passes, in block·ns.
    area: f64,
    /// The passes' time, first submission to last completion, ns.
    span: u64,
}

impl InFlight {
    fn start(&mut self, t: u64) {
        self.since = t;
    }
    fn submitted(&mut self, t: u64) {
        self.advance(t);
        self.now += 1;
    }
    fn completed(&mut self, t: u64) {
        self.advance(t);
        self.now -= 1;
    }
    fn advance(&mut self, t: u64) {
        let dt = t.saturating_sub(self.since);
        self.area += self.now as f64 * dt as f64;
        self.span += dt;
        self.since = t;
    }
    fn mean(&self) -> Option<f64> {
        (self.span > 0).then(|| self.area / self.span as f64)
    }
}

/// Blocks read or written through io_uring with up to `depth` in flight;
/// each block's latency is submission to completion.
pub struct Ring {
    ring: io_uring::IoUring,
    depth: usize,
    /// Submission time of the block in each slot.
    started: Vec<u64>,
    in_flight: InFlight,
}

impl Ring {
    pub fn new(depth: usize) -> Fallible<Ring> {
        let ring = io_uring::IoUring::new(depth.next_power_of_two() as u32)
            .map_err(|e| BenchError(format!("io_uring_setup: {e}")))?;
        Ok(Ring {
            ring,
            depth,
            started: vec![0; depth],
            in_flight: InFlight::default(),
        })
    }

    /// The mean number of blocks in flight over every pass so far
    /// (time-weighted: submitted and not yet reaped), or None before any.
    pub fn depth_achieved(&self) -> Option<f64> {
        self.in_flight.mean()
    }

    /// One pass: every offset of `offs`, `bs` bytes each, slot k using
    /// `buf + k * bs`, `depth` in flight, as fio keeps them with its
    /// defaults (`iodepth_batch_submit=1`, `iodepth_batch_complete_min`
    /// and `_max` 1, `iodepth_low` = the depth): one block submitted per
    /// io_uring_enter while a slot is free, and nothing reaped until every
    /// slot is taken; then one completion reaped (waited for if none has
    /// come) and its slot refilled at once. So `depth` blocks are always
    /// submitted and not yet reaped, and a block's latency runs to the
    /// moment the loop reaps it. Reaping everything between submissions,
    /// as this loop did first, kept about 25 of 32 in flight on a virtio
    /// disk and 1 of 16 on cached reads (docs/validation.md, I/O; test
    /// `the_ring_keeps_depth_blocks_in_flight`). Every completion must
    /// have moved the whole block; after a failed one the rest are
    /// reaped before the error returns, as the buffer is the caller's.
    pub fn pass(
        &mut self,
        fd: RawFd,
        write: bool,
        buf: *mut u8,
        bs: usize,
        offs: &[u64],
        hist: &mut Histogram<u64>,
    ) -> Fallible {
        let mut next = 0usize;
        let mut in_flight = 0usize;
        let mut free: u64 = if self.depth >= 64 {
            u64::MAX
        } else {
            (1u64 << self.depth) - 1
        };
        let mut failed: Option<BenchError> = None;
        self.in_flight.start(now_ns());
        loop {
            if failed.is_none() && next < offs.len() && in_flight < self.depth {
                let slot = free.trailing_zeros() as usize;
                // slot < depth, and the caller's buffer holds depth blocks.
                let p = buf.wrapping_add(slot * bs);
                let fdt = io_uring::types::Fd(fd);
                let e = if write {
                    io_uring::opcode::Write::new(fdt, p, bs as u32)
                        .offset(offs[next])
                        .build()
                } else {
                    io_uring::opcode::Read::new(fdt, p, bs as u32)
                        .offset(offs[next])
                        .build()
                };
                let t = now_ns();
                self.started[slot] = t;
                self.in_flight.submitted(t);
                // SAFETY: the buffer outlives the operation (every
                // completion is reaped before returning). The ring holds
                // depth entries or more and at most depth are in flight,
                // so there is room.
                unsafe { self.ring.submission().push(&e.user_data(slot as u64)) }
                    .map_err(|_| BenchError("io_uring: submission queue full".into()))?;
                free &= !(1u64 << slot);
                next += 1;
                in_flight += 1;
                self.ring
                    .submit()
                    .map_err(|e| BenchError(format!("io_uring_enter: {e}")))?;
                continue;
            }
            if in_flight == 0 {
                break;
            }
            // Every slot taken, or nothing left to submit: one completion.
            let c = loop {
                // The completion queue gives its head back when dropped.
                if let Some(c) = self.ring.completion().next() {
                    break c;
                }
                self.ring
                    .submit_and_wait(1)
                    .map_err(|e| BenchError(format!("io_uring_enter: {e}")))?;
            };
            let done = now_ns();
            self.in_flight.completed(done);
            let slot = c.user_data() as usize;
            in_flight -= 1;
            free |= 1u64 << slot;
            if c.result() != bs as i32 {
                failed.get_or_insert_with(|| {
                    BenchError(if c.result() < 0 {
                        format!(
                            "io_uring {}: {}",
                            if write { "write" } else { "read" },
                            std::io::Error::from_raw_os_error(-c.result())
                        )
                    } else {
                        format!("io_uring: short transfer of {} of {bs} bytes", c.result())
                    })
                });
            }
            let _ = hist.record(done.saturating_sub(self.started[slot]).max(1));
        }
        failed.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::io::{create_unlinked, scratch_parent, SEED};
    use crate::support::memory::{Buf, Pages, Rng};
    use crate::support::sys;

    /// The ring keeps `depth` blocks in flight: the time-weighted mean of
    /// blocks submitted and not yet reaped, over a pass of 4096 blocks of a
    /// file in the page cache (reads that complete as they are submitted,
    /// so a loop that reaps between submissions keeps about one), is
    /// within 10 % of the depth; and within it, never above.
    #[test]
    fn the_ring_keeps_depth_blocks_in_flight() {
        if let Some(why) = io_uring_refused() {
            crate::testing::skip::not_supported_here(&why);
            return;
        }
        let (bs, blocks, depth) = (4096usize, 4096u64, 16usize);
        let dir = tempfile::tempdir_in(scratch_parent()).unwrap();
        let fd = create_unlinked(dir.path(), "depth", 0).unwrap();
        crate::support::io::fill(fd, blocks * bs as u64, &[0x5a; 1 << 16], dir.path()).unwrap();
        let mut offs: Vec<u64> = (0..blocks).map(|b| b * bs as u64).collect();
        Rng::new(SEED).shuffle(&mut offs);
        let buf = Buf::new(bs * depth, Pages::Default).unwrap();
        let mut hist = touchstone_results::curve::latency_histogram();
        let mut ring = Ring::new(depth).unwrap();
        assert_eq!(ring.depth_achieved(), None);
        let pass = ring.pass(fd, false, buf.ptr(), bs, &offs, &mut hist);
        sys::close(fd);
        pass.unwrap();
        let got = ring.depth_achieved().unwrap();
        assert!(
            got >= 0.9 * depth as f64 && got <= depth as f64,
            "{got:.2} in flight on average at depth {depth}"
        );
    }

    /// Through the ring, every block goes to its own offset, each once,
    /// with no more than `depth` in flight, and each completion is
    /// recorded once; blocks not in the sequence are not touched.
    #[test]
    fn the_ring_writes_each_block_at_its_offset() {
        if let Some(why) = io_uring_refused() {
            crate::testing::skip::not_supported_here(&why);
            return;
        }
        let bs = 4096usize;
        let dir = tempfile::tempdir_in(scratch_parent()).unwrap();
        let fd = create_unlinked(dir.path(), "ring", 0).unwrap();
        // SAFETY: our descriptor.
        assert_eq!(unsafe { libc::ftruncate(fd, 64 * bs as libc::off_t) }, 0);
        let mut offs: Vec<u64> = (0..64).step_by(2).map(|b| b * bs as u64).collect();
        Rng::new(SEED).shuffle(&mut offs);
        let depth = 4;
        let mut buf = Buf::new(bs * depth, Pages::Default).unwrap();
        buf.words().fill(0xabab_abab_abab_abab);
        let mut hist = touchstone_results::curve::latency_histogram();
        let mut ring = Ring::new(depth).unwrap();
        ring.pass(fd, true, buf.ptr(), bs, &offs, &mut hist)
            .unwrap();
        ring.pass(fd, true, buf.ptr(), bs, &offs, &mut hist)
            .unwrap();
        assert_eq!(hist.len(), 2 * offs.len() as u64, "each completion once");
        let mut file = vec![0u8; 64 * bs];
        let r = sys::read_at(fd, &mut file, 0);
        sys::close(fd);
        assert_eq!(r, file.len() as isize);
        for (b, block) in file.chunks(bs).enumerate() {
            let want = if b % 2 == 0 { 0xab } else { 0 };
            assert!(block.iter().all(|&x| x == want), "block {b}");
        }
    }
}
