//! bw_mem: memory bandwidth by working-set size, from L1 to DRAM (lmbench's
//! bw_mem): rd (read and sum every word), wr (write every word), rdwr (add
//! one to every word), cp (hand-unrolled copy), bcopy (libc memcpy), bzero
//! (libc memset). Bytes are counted as lmbench does: one pass over a buffer
//! of `size` is `size` bytes, also for the copies (which read `size` and
//! write `size`). On x86-64 with AVX2 (detected at run time) the hand-made
//! kernels use 256-bit loads and ordinary (cached) stores; otherwise plain
//! 64-bit word loops. Under --parallel N the harness sums the processes.

use touchstone_harness::{Benchmark, Context, Fallible, Shape};
use touchstone_results::Statistic;

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::memory::{check_memory, Buf, Pages};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Op {
    Rd,
    Wr,
    Rdwr,
    Cp,
    Bcopy,
    Bzero,
}

impl Op {
    pub fn parse(s: &str) -> Result<Op, String> {
        Ok(match s {
            "rd" => Op::Rd,
            "wr" => Op::Wr,
            "rdwr" => Op::Rdwr,
            "cp" => Op::Cp,
            "bcopy" => Op::Bcopy,
            "bzero" => Op::Bzero,
            o => return Err(format!("unknown op {o}")),
        })
    }
    /// Whether the op needs a second (destination) buffer.
    pub fn copies(self) -> bool {
        matches!(self, Op::Cp | Op::Bcopy)
    }
}

/// Granule of the hand-made kernels: sizes are rounded down to it.
pub const GRANULE: usize = 128;

/// Bytes one pass of `op` over `size` counts (lmbench's convention).
pub fn bytes_per_pass(_op: Op, size: usize) -> f64 {
    (size / GRANULE * GRANULE) as f64
}

/// Memory one process needs for `op` at `size`.
pub fn footprint(op: Op, size: usize) -> u64 {
    size as u64 * if op.copies() { 2 } else { 1 }
}

/// The kernels. Each makes one pass over `len` bytes (a multiple of
/// GRANULE) at page-aligned `src`/`dst`.
pub mod kernels {
    /// Sum every 64-bit word (portable).
    pub unsafe fn rd_words(src: *const u8, len: usize) -> u64 {
        let w = std::slice::from_raw_parts(src as *const u64, len / 8);
        let (mut a, mut b, mut c, mut d) = (0u64, 0u64, 0u64, 0u64);
        for q in w.chunks_exact(4) {
            a = a.wrapping_add(q[0]);
            b = b.wrapping_add(q[1]);
            c = c.wrapping_add(q[2]);
            d = d.wrapping_add(q[3]);
        }
        a ^ b ^ c ^ d
    }
    /// Write `v` to every word (portable; `v` opaque so it is no memset).
    pub unsafe fn wr_words(dst: *mut u8, len: usize, v: u64) {
        let w = std::slice::from_raw_parts_mut(dst as *mut u64, len / 8);
        for x in w.iter_mut() {
            *x = v;
        }
    }
    pub unsafe fn rdwr_words(dst: *mut u8, len: usize) {
        let w = std::slice::from_raw_parts_mut(dst as *mut u64, len / 8);
        for x in w.iter_mut() {
            *x = x.wrapping_add(1);
        }
    }
    pub unsafe fn cp_words(src: *const u8, dst: *mut u8, len: usize) {
        let s = std::slice::from_raw_parts(src as *const u64, len / 8);
        let d = std::slice::from_raw_parts_mut(dst as *mut u64, len / 8);
        for (o, i) in d.chunks_exact_mut(4).zip(s.chunks_exact(4)) {
            // Four words at a time through locals: a hand-unrolled copy
            // (volatile reads keep it from becoming a memcpy call).
            let (a, b, c, e) = (
                std::ptr::read_volatile(&i[0]),
                std::ptr::read_volatile(&i[1]),
                std::ptr::read_volatile(&i[2]),
                std::ptr::read_volatile(&i[3]),
            );
            o[0] = a;
            o[1] = b;
            o[2] = c;
            o[3] = e;
        }
    }

    #[cfg(target_arch = "x86_64")]
    pub mod avx2 {
        use std::arch::x86_64::*;

        #[target_feature(enable = "avx2")]
        pub unsafe fn rd(src: *const u8, len: usize) -> u64 {
            let mut a = _mm256_setzero_si256();
            let mut b = _mm256_setzero_si256();
            let mut c = _mm256_setzero_si256();
            let mut d = _mm256_setzero_si256();
            let mut p = src as *const __m256i;
            let end = src.add(len) as *const __m256i;
            while p < end {
                a = _mm256_add_epi64(a, _mm256_load_si256(p));
                b = _mm256_add_epi64(b, _mm256_load_si256(p.add(1)));
                c = _mm256_add_epi64(c, _mm256_load_si256(p.add(2)));
                d = _mm256_add_epi64(d, _mm256_load_si256(p.add(3)));
                p = p.add(4);
            }
            let s = _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d));
            let mut out = [0u64; 4];
            _mm256_storeu_si256(out.as_mut_ptr() as *mut __m256i, s);
            out[0] ^ out[1] ^ out[2] ^ out[3]
        }

        #[target_feature(enable = "avx2")]
        pub unsafe fn wr(dst: *mut u8, len: usize, v: u64) {
            let x = _mm256_set1_epi64x(v as i64);
            let mut p = dst as *mut __m256i;
            let end = dst.add(len) as *mut __m256i;
            while p < end {
                _mm256_store_si256(p, x);
                _mm256_store_si256(p.add(1), x);
                _mm256_store_si256(p.add(2), x);
                _mm256_store_si256(p.add(3), x);
                p = p.add(4);
            }
        }

        #[target_feature(enable = "avx2")]
        pub unsafe fn rdwr(dst: *mut u8, len: usize) {
            let one = _mm256_set1_epi64x(1);
            let mut p = dst as *mut __m256i;
            let end = dst.add(len) as *mut __m256i;
            while p < end {
                _mm256_store_si256(p, _mm256_add_epi64(_mm256_load_si256(p), one));
                _mm256_store_si256(p.add(1), _mm256_add_epi64(_mm256_load_si256(p.add(1)), one));
                _mm256_store_si256(p.add(2), _mm256_add_epi64(_mm256_load_si256(p.add(2)), one));
                _mm256_store_si256(p.add(3), _mm256_add_epi64(_mm256_load_si256(p.add(3)), one));
                p = p.add(4);
            }
        }

        #[target_feature(enable = "avx2")]
        pub unsafe fn cp(src: *const u8, dst: *mut u8, len: usize) {
            let mut s = src as *const __m256i;
            let mut d = dst as *mut __m256i;
            let end = src.add(len) as *const __m256i;
            while s < end {
                let (a, b, c, e) = (
                    _mm256_load_si256(s),
                    _mm256_load_si256(s.add(1)),
                    _mm256_load_si256(s.add(2)),
                    _mm256_load_si256(s.add(3)),
                );
                _mm256_store_si256(d, a);
                _mm256_store_si256(d.add(1), b);
                _mm256_store_si256(d.add(2), c);
                _mm256_store_si256(d.add(3), e);
                s = s.add(4);
                d = d.add(4);
            }
        }
    }
}

/// Whether the AVX2 kernels can run here.
pub fn have_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

pub struct BwMem {
    op: Op,
    len: usize,
    src: Option<Buf>,
    dst: Option<Buf>,
    avx2: bool,
    sink: u64,
}

impl BwMem {
    /// One pass of the kernel over the buffer(s). Never inlined: inlined
    /// into `run`'s loop, passes that are all alike (bzero's memset) were
    /// merged into one, and the loop could not be sized.
    #[inline(never)]
    fn pass(&mut self) {
        let src = self.src.as_ref().expect("setup").ptr();
        let dst = self.dst.as_ref().map_or(src, |b| b.ptr());
        let len = self.len;
        // SAFETY: buffers of at least `len` bytes, page-aligned, from setup;
        // the AVX2 kernels are only called when the CPU has AVX2.
        unsafe {
            match self.op {
                Op::Bcopy => {
                    libc::memcpy(dst as *mut libc::c_void, src as *const libc::c_void, len);
                }
                Op::Bzero => {
                    libc::memset(src as *mut libc::c_void, 0, len);
                }
                #[cfg(target_arch = "x86_64")]
                _ if self.avx2 => match self.op {
                    Op::Rd => self.sink ^= kernels::avx2::rd(src, len),
                    Op::Wr => kernels::avx2::wr(src, len, self.sink | 1),
                    Op::Rdwr => kernels::avx2::rdwr(src, len),
                    Op::Cp => kernels::avx2::cp(src, dst, len),
                    _ => unreachable!(),
                },
                Op::Rd => self.sink ^= kernels::rd_words(src, len),
                Op::Wr => kernels::wr_words(src, len, std::hint::black_box(self.sink | 1)),
                Op::Rdwr => kernels::rdwr_words(src, len),
                Op::Cp => kernels::cp_words(src, dst, len),
            }
        }
    }
}

impl Benchmark for BwMem {
    fn setup(&mut self, _: &Context) -> Fallible {
        self.src = Some(Buf::new(self.len, Pages::Default)?);
        if self.op.copies() {
            self.dst = Some(Buf::new(self.len, Pages::Default)?);
        }
        self.avx2 = have_avx2();
        // No untimed pass here: the harness's warm-up makes at least one
        // before timing, and every round sets up afresh.
        Ok(())
    }

    /// Timed: `n` whole passes of the kernel over the buffer (and, for the
    /// copies, into the second buffer). The read kernel's sum is kept in
    /// `sink` (and black_boxed) so its loads cannot be removed; the writes
    /// land in memory the process keeps. Nothing is subtracted.
    fn run(&mut self, n: u64) -> Fallible {
        for _ in 0..n {
            self.pass();
        }
        self.sink = std::hint::black_box(self.sink);
        Ok(())
    }

    fn cleanup(&mut self) {
        self.src = None;
        self.dst = None;
    }

    fn extras(&mut self) -> Vec<(String, f64)> {
        vec![("avx2".into(), if self.avx2 { 1.0 } else { 0.0 })]
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let op = Op::parse(p.text("op"))?;
    let size = p.num("size") as usize;
    let len = size / GRANULE * GRANULE;
    check_memory(
        &format!("bw_mem/{}/size:{}", p.text("op"), p.text("size")),
        footprint(op, size),
    )?;
    Ok(Built::new(
        BwMem {
            op,
            len,
            src: None,
            dst: None,
            avx2: false,
            sink: 0,
        },
        // The best interval, as STREAM reports its best time: interference
        // only ever takes bandwidth away.
        Shape::bandwidth(bytes_per_pass(op, size)).with_statistic(Statistic::Max),
    )
    .with_setup_bytes(footprint(op, size))
    .with_working_set(footprint(op, size)))
}

pub const FAMILY: Family = Family {
    params: &[
        Param::choice("op", &["rd", "wr", "rdwr", "cp", "bcopy", "bzero"])
            .positional()
            .help("rd, wr, rdwr (add 1 to each word), cp (hand-unrolled copy), bcopy (memcpy), bzero (memset)"),
        Param::size("size", 4 << 10, 64 << 30)
            .measured(&["16k", "64k", "512k", "2m", "8m", "32m", "256m"])
            // Quick's beyond-the-cache size is the other memory families'
            // (line_mix::beyond_llc_size): 128 MiB, four times this guest's
            // L3 as STREAM asks; faulting in 256 MiB afresh in each of three
            // rounds cost 2.2 s of quick's budget.
            .quick(&["16k", "512k", "8m", "128m"])
            .help("buffer size (each buffer, for the copies)"),
    ],
    ..Family::new(
        "bw_mem",
        "mem_bw",
        "memory bandwidth by size: read, write, read-modify-write, copy, memcpy, memset",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{measure_spec, tiny_plan};

    #[test]
    fn bytes_bookkeeping() {
        for op in ["rd", "wr", "rdwr", "cp", "bcopy", "bzero"] {
            let op = Op::parse(op).unwrap();
            assert_eq!(bytes_per_pass(op, 1 << 20), (1 << 20) as f64);
            assert_eq!(bytes_per_pass(op, 4096 + 100), 4096.0);
        }
        assert_eq!(footprint(Op::Cp, 1 << 20), 2 << 20);
        assert_eq!(footprint(Op::Bcopy, 1 << 20), 2 << 20);
        assert_eq!(footprint(Op::Rd, 1 << 20), 1 << 20);
    }

    /// Every kernel touches exactly the bytes it is credited with.
    #[test]
    fn kernels_do_what_they_count() {
        let len = 8192;
        let mut a = Buf::new(len + 4096, Pages::Default).unwrap();
        let mut b = Buf::new(len + 4096, Pages::Default).unwrap();
        let n = len / 8;
        for (i, w) in a.words().iter_mut().enumerate() {
            *w = i as u64;
        }
        let want: u64 = (0..n as u64).sum();
        let guard = b.words()[n];
        unsafe {
            // rd: the xor of 4 lane sums equals the fold over lanes.
            let words = kernels::rd_words(a.ptr(), len);
            let lanes: Vec<u64> = (0..4)
                .map(|l| (0..n as u64).filter(|i| i % 4 == l).sum())
                .collect();
            assert_eq!(words, lanes[0] ^ lanes[1] ^ lanes[2] ^ lanes[3]);
            assert_eq!(lanes.iter().sum::<u64>(), want);
            kernels::cp_words(a.ptr(), b.ptr(), len);
            assert_eq!(&a.words()[..n], &b.words()[..n]);
            kernels::rdwr_words(b.ptr(), len);
            assert!(b.words()[..n]
                .iter()
                .enumerate()
                .all(|(i, &w)| w == i as u64 + 1));
            kernels::wr_words(b.ptr(), len, 7);
            assert!(b.words()[..n].iter().all(|&w| w == 7));
            assert_eq!(b.words()[n], guard, "wrote past the counted bytes");
            #[cfg(target_arch = "x86_64")]
            if have_avx2() {
                let s = kernels::avx2::rd(a.ptr(), len);
                assert_eq!(s, lanes[0] ^ lanes[1] ^ lanes[2] ^ lanes[3]);
                kernels::avx2::cp(a.ptr(), b.ptr(), len);
                assert_eq!(&a.words()[..n], &b.words()[..n]);
                assert_eq!(b.words()[n], guard);
                kernels::avx2::rdwr(b.ptr(), len);
                assert!(b.words()[..n]
                    .iter()
                    .enumerate()
                    .all(|(i, &w)| w == i as u64 + 1));
                kernels::avx2::wr(b.ptr(), len, 9);
                assert!(b.words()[..n].iter().all(|&w| w == 9));
                assert_eq!(b.words()[n], guard, "wrote past the counted bytes");
            }
        }
    }

    /// The best interval, as STREAM reports its best time.
    #[test]
    fn the_best_interval_is_the_figure() {
        let sel = crate::select(&["bw_mem/size:16k".into()], &RunContext::default(), 1).unwrap();
        for c in sel.cases {
            let shape = FAMILY.make(&c.point, &RunContext::default()).unwrap().shape;
            assert_eq!(shape.statistic, Statistic::Max, "{}", c.name);
        }
    }

    #[test]
    fn parallel_is_summed() {
        let ms = measure_spec("bw_mem/rd/size:64k", &tiny_plan(2), &RunContext::default()).unwrap();
        let m = &ms[0];
        assert_eq!(m.per_process.len(), 2);
        for (r, s) in m.samples.iter().enumerate() {
            let sum: f64 = m.per_process.iter().map(|p| p[r]).sum();
            assert!((s - sum).abs() < 1e-6 * s);
        }
    }
}
