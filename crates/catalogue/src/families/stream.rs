//! stream: McCalpin's STREAM kernels on arrays of doubles at least 4× the
//! last-level cache (STREAM's own rule), counted as STREAM counts bytes.
//! v1: copy c=a (16 B per element), scale b=q·c (16), add c=a+b (24),
//! triad a=b+q·c (24); v2: fill a=q (8), daxpy a=a+q·b (24), sum s+=a (8)
//! (v2's copy is v1's). The figure is the best interval, as STREAM reports
//! its best time. On x86-64 with AVX2 (+FMA), detected at run time, the
//! kernels use 256-bit aligned loads and, by default, ordinary cached stores
//! as gcc emits for STREAM, and copy calls libc memcpy as gcc turns STREAM's
//! copy loop into (non-temporal stores for large arrays); `stores:nt` uses
//! non-temporal stores in every kernel instead.
//! Under --parallel N each process has its own arrays and the figure is the
//! system's bandwidth (the sum); the per-process samples are kept.

use touchstone_harness::{Benchmark, Context, Fallible, Shape};
use touchstone_results::Statistic;

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::cache_levels::llc_bytes;
use crate::support::memory::{check_memory, Buf, Pages};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Op {
    Copy,
    Scale,
    Add,
    Triad,
    Fill,
    Daxpy,
    Sum,
}

pub const OPS: &[&str] = &["copy", "scale", "add", "triad", "fill", "daxpy", "sum"];

impl Op {
    pub fn parse(s: &str) -> Result<Op, String> {
        Ok(match s {
            "copy" => Op::Copy,
            "scale" => Op::Scale,
            "add" => Op::Add,
            "triad" => Op::Triad,
            "fill" => Op::Fill,
            "daxpy" => Op::Daxpy,
            "sum" => Op::Sum,
            o => return Err(format!("unknown op {o}")),
        })
    }
    /// STREAM's count: bytes read plus bytes written per element, not
    /// counting the write-allocate read of a cached store.
    pub fn bytes_per_element(self) -> usize {
        match self {
            Op::Copy | Op::Scale => 16,
            Op::Add | Op::Triad | Op::Daxpy => 24,
            Op::Fill | Op::Sum => 8,
        }
    }
    /// Arrays the kernel touches.
    pub fn arrays(self) -> usize {
        match self {
            Op::Fill | Op::Sum => 1,
            Op::Copy | Op::Scale | Op::Daxpy => 2,
            Op::Add | Op::Triad => 3,
        }
    }
}

/// The scalar of scale, triad and daxpy (STREAM's).
pub const Q: f64 = 3.0;
/// Elements per unrolled step; array lengths are multiples of it.
#[cfg(test)]
pub const STEP: usize = 16;

/// Elements per array: 4× the last-level cache (at least 32 MiB when the OS
/// reports no cache), rounded to a whole number of pages.
pub fn elements(llc: Option<u64>) -> usize {
    let bytes = (4 * llc.unwrap_or(8 << 20)).max(32 << 20) as usize;
    bytes / 8 / 512 * 512
}

/// The kernels: one pass over `n` elements (a multiple of STEP).
pub mod kernels {
    use super::Op;

    /// Portable versions (what the compiler makes of plain loops).
    pub fn pass_scalar(op: Op, a: &mut [f64], b: &mut [f64], c: &mut [f64], q: f64) -> f64 {
        let mut s = 0.0;
        match op {
            Op::Copy => c.iter_mut().zip(a.iter()).for_each(|(c, a)| *c = *a),
            Op::Scale => b.iter_mut().zip(c.iter()).for_each(|(b, c)| *b = q * *c),
            Op::Add => c
                .iter_mut()
                .zip(a.iter().zip(b.iter()))
                .for_each(|(c, (a, b))| *c = *a + *b),
            Op::Triad => a
                .iter_mut()
                .zip(b.iter().zip(c.iter()))
                .for_each(|(a, (b, c))| *a = *b + q * *c),
            Op::Fill => a.iter_mut().for_each(|a| *a = q),
            Op::Daxpy => a.iter_mut().zip(b.iter()).for_each(|(a, b)| *a += q * *b),
            Op::Sum => {
                let mut acc = [0.0f64; 4];
                for ch in a.chunks_exact(4) {
                    for k in 0..4 {
                        acc[k] += ch[k];
                    }
                }
                s = acc.iter().sum();
            }
        }
        s
    }

    #[cfg(target_arch = "x86_64")]
    pub mod avx2 {
        use super::Op;
        use std::arch::x86_64::*;

        #[inline(always)]
        unsafe fn st<const NT: bool>(p: *mut f64, v: __m256d) {
            if NT {
                _mm256_stream_pd(p, v)
            } else {
                _mm256_store_pd(p, v)
            }
        }

        /// One pass; `NT` selects non-temporal stores. Pointers are 32-byte
        /// aligned, `n` a multiple of 16.
        #[target_feature(enable = "avx2,fma")]
        pub unsafe fn pass<const NT: bool>(
            op: Op,
            a: *mut f64,
            b: *mut f64,
            c: *mut f64,
            n: usize,
            q: f64,
        ) -> f64 {
            let qv = _mm256_set1_pd(q);
            let mut j = 0;
            let mut s0 = _mm256_setzero_pd();
            let mut s1 = _mm256_setzero_pd();
            let mut s2 = _mm256_setzero_pd();
            let mut s3 = _mm256_setzero_pd();
            macro_rules! each4 {
                (|$k:ident| $e:expr) => {
                    while j < n {
                        {
                            let $k = j;
                            $e;
                        }
                        {
                            let $k = j + 4;
                            $e;
                        }
                        {
                            let $k = j + 8;
                            $e;
                        }
                        {
                            let $k = j + 12;
                            $e;
                        }
                        j += 16;
                    }
                };
            }
            match op {
                Op::Copy => each4!(|k| st::<NT>(c.add(k), _mm256_load_pd(a.add(k)))),
                Op::Scale => {
                    each4!(|k| st::<NT>(b.add(k), _mm256_mul_pd(qv, _mm256_load_pd(c.add(k)))))
                }
                Op::Add => each4!(|k| st::<NT>(
                    c.add(k),
                    _mm256_add_pd(_mm256_load_pd(a.add(k)), _mm256_load_pd(b.add(k)))
                )),
                Op::Triad => each4!(|k| st::<NT>(
                    a.add(k),
                    _mm256_fmadd_pd(qv, _mm256_load_pd(c.add(k)), _mm256_load_pd(b.add(k)))
                )),
                Op::Fill => each4!(|k| st::<NT>(a.add(k), qv)),
                Op::Daxpy => each4!(|k| st::<NT>(
                    a.add(k),
                    _mm256_fmadd_pd(qv, _mm256_load_pd(b.add(k)), _mm256_load_pd(a.add(k)))
                )),
                Op::Sum => {
                    while j < n {
                        s0 = _mm256_add_pd(s0, _mm256_load_pd(a.add(j)));
                        s1 = _mm256_add_pd(s1, _mm256_load_pd(a.add(j + 4)));
                        s2 = _mm256_add_pd(s2, _mm256_load_pd(a.add(j + 8)));
                        s3 = _mm256_add_pd(s3, _mm256_load_pd(a.add(j + 12)));
                        j += 16;
                    }
                }
            }
            if NT {
                _mm_sfence();
            }
            let s = _mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3));
            let mut out = [0.0f64; 4];
            _mm256_storeu_pd(out.as_mut_ptr(), s);
            out.iter().sum()
        }
    }
}

fn have_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

pub struct Stream {
    op: Op,
    n: usize,
    nt: bool,
    arrays: Vec<Buf>,
    simd: bool,
    sink: f64,
}

impl Stream {
    /// One pass of the kernel. Never inlined, so that the passes of `run`'s
    /// loop stay passes (fill's are all alike: merged, they would be one).
    #[inline(never)]
    fn pass(&mut self) {
        let n = self.n;
        let p = |i: usize| {
            self.arrays
                .get(i)
                .map_or(std::ptr::null_mut(), |b| b.ptr() as *mut f64)
        };
        // Which array is which: a is 0; b is 1 (daxpy, scale, add, triad);
        // c is the last (copy's and scale's second array).
        let (a, b, c) = match self.op {
            Op::Copy => (p(0), std::ptr::null_mut(), p(1)),
            Op::Scale => (std::ptr::null_mut(), p(0), p(1)),
            Op::Daxpy => (p(0), p(1), std::ptr::null_mut()),
            Op::Add | Op::Triad => (p(0), p(1), p(2)),
            Op::Fill | Op::Sum => (p(0), std::ptr::null_mut(), std::ptr::null_mut()),
        };
        // gcc -O3 compiles STREAM's copy loop into a call to libc memcpy,
        // which for arrays past the cache uses non-temporal stores (no
        // write-allocate read): the default copy does the same, so its
        // figure is the one STREAM prints. `stores:nt` keeps the explicit
        // streaming-store kernel.
        if self.op == Op::Copy && !self.nt {
            // SAFETY: a and c are distinct arrays of n doubles (setup).
            unsafe { libc::memcpy(c as *mut libc::c_void, a as *const libc::c_void, n * 8) };
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if self.simd {
            // SAFETY: every array the op uses has n aligned doubles (setup);
            // the CPU has AVX2 and FMA (checked in setup).
            self.sink += unsafe {
                if self.nt {
                    kernels::avx2::pass::<true>(self.op, a, b, c, n, Q)
                } else {
                    kernels::avx2::pass::<false>(self.op, a, b, c, n, Q)
                }
            };
            return;
        }
        let sl = |x: *mut f64| {
            if x.is_null() {
                &mut [][..]
            } else {
                // SAFETY: n doubles of an array from setup, not aliased:
                // a, b and c are distinct buffers.
                unsafe { std::slice::from_raw_parts_mut(x, n) }
            }
        };
        self.sink += kernels::pass_scalar(self.op, sl(a), sl(b), sl(c), Q);
    }
}

impl Benchmark for Stream {
    fn setup(&mut self, _: &Context) -> Fallible {
        // STREAM's initial values: a = 1, b = 2, c = 0.
        for (i, init) in [1.0, 2.0, 0.0].iter().take(self.op.arrays()).enumerate() {
            let mut buf = Buf::new(self.n * 8, Pages::Default)?;
            buf.doubles().iter_mut().for_each(|x| *x = *init);
            let _ = i;
            self.arrays.push(buf);
        }
        self.simd = have_avx2_fma();
        // No untimed pass here: the harness's warm-up makes at least one
        // before timing, and every round sets up afresh.
        Ok(())
    }

    /// Timed: `n` passes of the kernel over whole arrays. Every store lands
    /// in an array the process keeps and sum's total is kept in `sink`
    /// (black_boxed), so no pass can be removed. Nothing is subtracted.
    fn run(&mut self, n: u64) -> Fallible {
        for _ in 0..n {
            self.pass();
        }
        self.sink = std::hint::black_box(self.sink);
        Ok(())
    }

    fn cleanup(&mut self) {
        self.arrays.clear();
    }

    fn extras(&mut self) -> Vec<(String, f64)> {
        vec![
            ("array_bytes".into(), (self.n * 8) as f64),
            ("avx2".into(), if self.simd { 1.0 } else { 0.0 }),
        ]
    }
}

/// Bytes one pass counts (STREAM's convention).
pub fn bytes_per_pass(op: Op, n: usize) -> f64 {
    (op.bytes_per_element() * n) as f64
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let op = Op::parse(p.text("op"))?;
    let n = elements(llc_bytes());
    check_memory(
        &format!("stream/{}", p.text("op")),
        (n * 8 * op.arrays()) as u64,
    )?;
    Ok(Built::new(
        Stream {
            op,
            n,
            nt: p.text("stores") == "nt",
            arrays: Vec::new(),
            simd: false,
            sink: 0.0,
        },
        // STREAM reports the best of its repetitions.
        Shape::bandwidth(bytes_per_pass(op, n)).with_statistic(Statistic::Max),
    )
    .with_setup_bytes((n * 8 * op.arrays()) as u64)
    .with_working_set((n * 8 * op.arrays()) as u64))
}

pub const FAMILY: Family = Family {
    params: &[
        Param::choice("op", OPS).positional().quick(&["copy", "triad"]).help("the kernel"),
        Param::choice("stores", &["cached", "nt"])
            .measured(&["cached"])
            .help("cached (as gcc compiles STREAM: cached stores, copy via libc memcpy) or nt (non-temporal stores, no write-allocate)"),
    ],
    ..Family::new(
        "stream",
        "mem_bw",
        "STREAM v1 (copy, scale, add, triad) and v2 (fill, daxpy, sum) on arrays 4x the last-level cache",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_byte_counting() {
        let per = |s: &str| Op::parse(s).unwrap().bytes_per_element();
        assert_eq!(
            OPS.iter().map(|o| per(o)).collect::<Vec<_>>(),
            [16, 16, 24, 24, 8, 24, 8]
        );
        assert_eq!(bytes_per_pass(Op::Triad, 1000), 24000.0);
        // 4x the LLC, whole pages.
        assert_eq!(elements(Some(32 << 20)) * 8, 128 << 20);
        assert_eq!(elements(None) * 8, 32 << 20);
        assert_eq!(elements(Some(3 << 20)) % STEP, 0);
    }

    /// Each kernel computes STREAM's result over exactly n elements.
    #[test]
    fn kernels_compute_stream() {
        let n = 64;
        let mk = |v: f64| {
            let mut b = Buf::new(4096, Pages::Default).unwrap();
            b.doubles().iter_mut().for_each(|x| *x = v);
            b
        };
        for simd in [false, true] {
            if simd && !have_avx2_fma() {
                continue;
            }
            for nt in [false, true] {
                for name in OPS {
                    let op = Op::parse(name).unwrap();
                    let mut s = Stream {
                        op,
                        n,
                        nt,
                        arrays: Vec::new(),
                        simd,
                        sink: 0.0,
                    };
                    for (i, v) in [1.0, 2.0, 0.5].iter().take(op.arrays()).enumerate() {
                        let _ = i;
                        s.arrays.push(mk(*v));
                    }
                    s.pass();
                    let (want, arr) = match op {
                        Op::Copy => (1.0, 1),
                        Op::Scale => (Q * 2.0, 0),
                        Op::Add => (3.0, 2),
                        Op::Triad => (2.0 + Q * 0.5, 0),
                        Op::Fill => (Q, 0),
                        Op::Daxpy => (1.0 + Q * 2.0, 0),
                        Op::Sum => {
                            assert_eq!(s.sink, n as f64, "{name} simd={simd}");
                            continue;
                        }
                    };
                    let got = s.arrays[arr].doubles()[..n + 1].to_vec();
                    assert!(
                        got[..n].iter().all(|&x| x == want),
                        "{name} simd={simd} nt={nt}: {got:?}"
                    );
                    assert_ne!(got[n], want, "{name} wrote past n elements");
                }
            }
        }
    }
}
