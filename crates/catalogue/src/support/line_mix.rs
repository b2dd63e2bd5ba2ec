//! Streams of 64-byte lines in a read/write mix: the loops of loaded_latency's
//! generators and of bw_mix's streams, one code so that the peak of one is
//! the bandwidth end of the other.
//!
//! Every access moves one whole line and counts 64 bytes (STREAM's
//! convention: the read for ownership and the write-back an ordinary store
//! causes are not counted). Lines are visited in address order, wrapping
//! round the buffer: a stream the prefetchers recognise, as STREAM's and
//! bw_mem's are, so with no delay one stream draws what a core can draw.
//!
//! What the compiler must not remove: the reads' sum goes to a sink that is
//! black-boxed after every run of accesses, the ordinary stores are
//! volatile, the non-temporal stores are intrinsics (never elided) fenced
//! at the end of each run, and the delay loop goes through `black_box` on
//! every spin. Reads use 256-bit loads where the CPU has AVX2 (detected at
//! run time; two loads a line, summed into a vector accumulator): with
//! 64-bit loads (eight a line, summed in a tree) one stream drew 24 % less
//! than bw_mem's AVX2 `rd` at one process (docs/validation.md), so the
//! bandwidth end would have been the loop's, not the memory's. Elsewhere
//! the 64-bit loop. The straight read loop (eight 256-bit loads per four
//! lines, two accumulators) and bw_mem's `rd` (four per two lines, four
//! accumulators) draw the same: a C copy of both, alternating pass by pass
//! over one buffer in one pinned thread, read alike within 2 % (medians,
//! 27 Nov, load 4), calls of 64 lines as the generators make them
//! included. So when a stream reads below bw_mem, what differs lies
//! around the loop (its CPU, the moment: this VM's bandwidth flips between
//! rounds), which is why docs/validation.md compares them interleaved, on
//! one CPU.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::thread::JoinHandle;

use touchstone_harness::{BenchError, Fallible};

use crate::params::Param;
use crate::support::memory::{Buf, Pages};
use crate::support::placement::pin_self;

/// The unit a stream moves per access, and a cache line on current
/// machines.
pub const LINE: usize = 64;

/// One access of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    /// A write that bypasses the caches (x86-64 `movnti`).
    StreamWrite,
}

/// The mixes, by name: `rd` (reads), `rd3wr1`, `rd2wr1`, `rd1wr1` (that
/// many line reads for each line written with ordinary stores), `ntwr`
/// (every line written with non-temporal stores; x86-64).
pub const MIXES: &[&str] = &["rd", "rd3wr1", "rd2wr1", "rd1wr1", "ntwr"];

/// The repeating access pattern of a mix.
pub fn pattern(mix: &str) -> Result<&'static [Access], String> {
    use Access::*;
    Ok(match mix {
        "rd" => &[Read],
        "rd3wr1" => &[Read, Read, Read, Write],
        "rd2wr1" => &[Read, Read, Write],
        "rd1wr1" => &[Read, Write],
        "ntwr" if cfg!(target_arch = "x86_64") => &[StreamWrite],
        "ntwr" => return Err("mix:ntwr needs x86-64 non-temporal stores".into()),
        m => return Err(format!("unknown mix '{m}'")),
    })
}

/// The `size` of the buffers streamed (and the chain chased) beyond the
/// last-level cache by bw_mix, loaded_latency and numa_matrix: 1 MiB to
/// 64 GiB, 256 MiB measured and 128 MiB in quick mode — lat_mem_rd's
/// largest size, so their idle and peak ends compare with it.
pub const fn beyond_llc_size(help: &'static str) -> Param {
    Param::size("size", 1 << 20, 64 << 30)
        .measured(&["256m"])
        .quick(&["128m"])
        .help(help)
}

/// The delay loop: `spins` increments of a counter that goes through
/// `black_box` each time, so the compiler can neither drop the loop nor
/// fold it into one addition; it touches no memory beyond the stack.
#[inline(always)]
pub fn spin(spins: u64) {
    let mut i = 0u64;
    while i < spins {
        i = std::hint::black_box(i) + 1;
    }
}

/// Read one line: its eight words summed in a tree (one addition on the
/// path to the running sum per line, so the sum is no bottleneck).
///
/// # Safety
/// `p` points to a 64-byte line of the stream's buffer.
#[inline(always)]
pub unsafe fn read_line(p: *const u64) -> u64 {
    let w = |i| p.add(i).read();
    (w(0).wrapping_add(w(1)))
        .wrapping_add(w(2).wrapping_add(w(3)))
        .wrapping_add((w(4).wrapping_add(w(5))).wrapping_add(w(6).wrapping_add(w(7))))
}

/// Write one whole line with ordinary (cached) stores, volatile so none is
/// dropped as a store nobody reads.
///
/// # Safety
/// As `read_line`.
#[inline(always)]
pub unsafe fn write_line(p: *mut u64, v: u64) {
    for i in 0..8 {
        p.add(i).write_volatile(v);
    }
}

/// Write one whole line with non-temporal stores (`movnti`): they go to
/// memory through the write-combining buffers without reading the line
/// first or filling the caches. `Stream::run` fences them (`sfence`) at
/// the end of each run of accesses.
///
/// # Safety
/// As `read_line`.
#[inline(always)]
pub unsafe fn stream_line(p: *mut u64, v: u64) {
    #[cfg(target_arch = "x86_64")]
    for i in 0..8 {
        std::arch::x86_64::_mm_stream_si64(p.add(i) as *mut i64, v as i64);
    }
    #[cfg(not(target_arch = "x86_64"))]
    write_line(p, v); // refused by `pattern` before anything runs
}

/// A stream's position in its buffer and in its mix's pattern.
pub struct Stream {
    base: *mut u64,
    lines: u64,
    pattern: &'static [Access],
    line: u64,
    k: usize,
    sink: u64,
    avx2: bool,
}

// SAFETY: a stream is the only user of its buffer's lines.
unsafe impl Send for Stream {}

impl Stream {
    /// A stream over the `len` bytes at `base` (whole lines, at least one).
    ///
    /// # Safety
    /// `base` is 64-byte aligned and `len` bytes from it are the stream's
    /// alone for as long as it runs.
    pub unsafe fn new(base: *mut u8, len: usize, pattern: &'static [Access]) -> Stream {
        assert!(len >= LINE && !pattern.is_empty());
        Stream {
            base: base as *mut u64,
            lines: (len / LINE) as u64,
            pattern,
            line: 0,
            k: 0,
            sink: 0,
            avx2: have_avx2(),
        }
    }

    /// `accesses` accesses to consecutive lines in the mix's pattern, each
    /// followed by `spins` of the delay loop; then the non-temporal stores
    /// fenced and the sink black-boxed.
    pub fn run(&mut self, accesses: u64, spins: u64) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: the CPU has AVX2 (checked when the stream was made).
            return unsafe { self.run_avx2(accesses, spins) };
        }
        self.run_words(accesses, spins)
    }

    /// `run` with 64-bit loads.
    #[inline(never)]
    fn run_words(&mut self, accesses: u64, spins: u64) {
        let (base, lines, pattern) = (self.base, self.lines, self.pattern);
        let (mut line, mut k, mut sink) = (self.line, self.k, self.sink);
        for _ in 0..accesses {
            // SAFETY: line < lines, so the line lies inside the buffer.
            let p = unsafe { base.add((line as usize) * (LINE / 8)) };
            match pattern[k] {
                // SAFETY: as above, for all three.
                Access::Read => sink = sink.wrapping_add(unsafe { read_line(p) }),
                Access::Write => unsafe { write_line(p, sink | 1) },
                Access::StreamWrite => unsafe { stream_line(p, sink | 1) },
            }
            k = if k + 1 == pattern.len() { 0 } else { k + 1 };
            line = if line + 1 == lines { 0 } else { line + 1 };
            if spins > 0 {
                spin(spins);
            }
        }
        #[cfg(target_arch = "x86_64")]
        if pattern.contains(&Access::StreamWrite) {
            // SAFETY: a fence; orders the run's streaming stores.
            unsafe { std::arch::x86_64::_mm_sfence() };
        }
        self.sink = std::hint::black_box(sink);
        (self.line, self.k) = (line, k);
    }

    /// `run` with 256-bit loads: a line is two loads added into a vector
    /// accumulator, folded into the sink (the same sum as `run_words`'s) at
    /// the end of the run.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline(never)]
    unsafe fn run_avx2(&mut self, accesses: u64, spins: u64) {
        use std::arch::x86_64::*;
        let (base, lines, pattern) = (self.base, self.lines, self.pattern);
        let (mut line, mut k, sink) = (self.line, self.k, self.sink);
        let mut acc = _mm256_setzero_si256();
        if spins == 0 && pattern == [Access::Read] {
            // Reads at no delay (bw_mix/rd, loaded_latency's last level):
            // straight runs of lines up to the wrap, with nothing else in
            // the loop, which the compiler unrolls: with the per-access
            // pattern and delay checks one stream drew a fifth less than
            // bw_mem's `rd`.
            let (mut left, mut other) = (accesses, _mm256_setzero_si256());
            while left > 0 {
                let n = left.min(lines - line);
                // SAFETY: lines line..line + n lie inside the buffer.
                let mut v = unsafe { base.add((line as usize) * (LINE / 8)) } as *const __m256i;
                for _ in 0..n {
                    // SAFETY: as above.
                    unsafe {
                        acc = _mm256_add_epi64(acc, _mm256_load_si256(v));
                        other = _mm256_add_epi64(other, _mm256_load_si256(v.add(1)));
                        v = v.add(2);
                    }
                }
                line = if line + n == lines { 0 } else { line + n };
                left -= n;
            }
            acc = _mm256_add_epi64(acc, other);
        }
        let accesses = if spins == 0 && pattern == [Access::Read] {
            0
        } else {
            accesses
        };
        for _ in 0..accesses {
            // SAFETY: line < lines, so the line lies inside the buffer,
            // 64-byte aligned (the buffer is page-aligned).
            let p = unsafe { base.add((line as usize) * (LINE / 8)) };
            match pattern[k] {
                Access::Read => unsafe {
                    let v = p as *const __m256i;
                    let two = _mm256_add_epi64(_mm256_load_si256(v), _mm256_load_si256(v.add(1)));
                    acc = _mm256_add_epi64(acc, two);
                },
                // SAFETY: as above, for both.
                Access::Write => unsafe { write_line(p, sink | 1) },
                Access::StreamWrite => unsafe { stream_line(p, sink | 1) },
            }
            k = if k + 1 == pattern.len() { 0 } else { k + 1 };
            line = if line + 1 == lines { 0 } else { line + 1 };
            if spins > 0 {
                spin(spins);
            }
        }
        if pattern.contains(&Access::StreamWrite) {
            _mm_sfence();
        }
        let mut lanes = [0u64; 4];
        // SAFETY: four u64s are one 256-bit store's room.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, acc) };
        let sum = lanes.iter().fold(sink, |a, &l| a.wrapping_add(l));
        self.sink = std::hint::black_box(sum);
        (self.line, self.k) = (line, k);
    }

    /// The line the next access moves (tests).
    pub fn position(&self) -> u64 {
        self.line
    }
}

/// Whether the 256-bit read loop can run here.
fn have_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Streams on several CPUs at once, started together (bw_mix,
/// numa_matrix): one thread per CPU, each over its own buffer.
/// What the streams' threads share: the passes each makes in the next
/// iteration, whether to end, one barrier to start an iteration together
/// and the same to end it, and the first error a thread met setting up.
struct Shared {
    passes: AtomicU64,
    stop: AtomicBool,
    barrier: Barrier,
    failed: Mutex<Option<String>>,
}

/// The streams' threads, parked at the barrier between iterations (a
/// futex wait: they take no CPU from the harness).
pub struct Streams {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Streams {
    /// A thread per CPU, each pinned, its buffer mapped and touched; they
    /// then wait for the first iteration.
    pub fn start(
        cpus: &[usize],
        size: usize,
        pattern: &'static [Access],
        node: Option<usize>,
    ) -> Fallible<Streams> {
        let shared = Arc::new(Shared {
            passes: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            barrier: Barrier::new(cpus.len() + 1),
            failed: Mutex::new(None),
        });
        let mut threads = Vec::new();
        for &cpu in cpus {
            let s = Arc::clone(&shared);
            let t = std::thread::Builder::new()
                .name(format!("stream-{cpu}"))
                .spawn(move || stream_on(cpu, size, pattern, node, &s))
                .map_err(|e| BenchError(format!("cannot start a stream thread: {e}")))?;
            threads.push(t);
        }
        let mut streams = Streams { shared, threads };
        streams.shared.barrier.wait(); // every thread set up (or failed)
        let failed = streams.shared.failed.lock().unwrap().take();
        if let Some(e) = failed {
            streams.stop();
            return Err(BenchError(e));
        }
        Ok(streams)
    }

    /// One iteration: every stream makes `passes` passes; returns when the
    /// last has finished.
    pub fn iterate(&self, passes: u64) {
        self.shared.passes.store(passes, Ordering::Relaxed);
        self.shared.barrier.wait(); // go
        self.shared.barrier.wait(); // all done
    }

    /// Gone once every thread has ended (tests).
    pub fn watch(&self) -> std::sync::Weak<impl Sized> {
        Arc::downgrade(&self.shared)
    }

    fn stop(&mut self) {
        if self.threads.is_empty() {
            return;
        }
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.barrier.wait();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// One timed iteration of the streams a family's setup started (the
/// `Benchmark::run` of bw_mix and numa_matrix): every stream makes
/// `passes` passes; an error naming `family` when setup started none.
pub fn iterate_streams(streams: Option<&Streams>, family: &str, passes: u64) -> Fallible {
    streams
        .ok_or_else(|| BenchError(format!("{family}: no streams")))?
        .iterate(passes);
    Ok(())
}

impl Drop for Streams {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One stream's thread: pin, map and touch its buffer, then at each
/// iteration its passes over the whole buffer (bound to `node` if given). A thread that cannot set up
/// says why and still keeps to the barrier, so the others are not stranded.
fn stream_on(cpu: usize, size: usize, pattern: &'static [Access], node: Option<usize>, s: &Shared) {
    let set_up = pin_self(cpu).and_then(|()| Buf::new_on(size, Pages::Default, node));
    let mut stream = match set_up {
        Ok(buf) => {
            // SAFETY: the buffer is this thread's alone and lives as long
            // as the stream (both dropped at the end of this function).
            let st = unsafe { Stream::new(buf.ptr(), size, pattern) };
            Some((buf, st))
        }
        Err(e) => {
            let mut f = s.failed.lock().unwrap();
            f.get_or_insert(format!("a stream on CPU {cpu}: {}", e.0));
            None
        }
    };
    let lines = (size / LINE) as u64;
    s.barrier.wait();
    loop {
        s.barrier.wait();
        if s.stop.load(Ordering::Relaxed) {
            return;
        }
        if let Some((_, st)) = stream.as_mut() {
            for _ in 0..s.passes.load(Ordering::Relaxed) {
                st.run(lines, 0);
            }
        }
        s.barrier.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_are_patterns_of_reads_and_writes() {
        use Access::*;
        assert_eq!(pattern("rd").unwrap(), &[Read]);
        assert_eq!(pattern("rd3wr1").unwrap(), &[Read, Read, Read, Write]);
        assert_eq!(pattern("rd2wr1").unwrap(), &[Read, Read, Write]);
        assert_eq!(pattern("rd1wr1").unwrap(), &[Read, Write]);
        if cfg!(target_arch = "x86_64") {
            assert_eq!(pattern("ntwr").unwrap(), &[StreamWrite]);
        } else {
            assert!(pattern("ntwr").unwrap_err().contains("x86-64"));
        }
        assert!(pattern("wr").unwrap_err().contains("unknown mix"));
        for m in MIXES {
            assert!(pattern(m).is_ok() || *m == "ntwr");
        }
    }

    /// The line kernels move what they say: a read sums the line's words, a
    /// write (cached or streaming) fills all eight.
    #[test]
    fn line_kernels_read_and_write_whole_lines() {
        let mut b = Buf::new(4096, Pages::Default).unwrap();
        let w = b.words();
        for (i, x) in w.iter_mut().enumerate() {
            *x = i as u64;
        }
        let p = w.as_mut_ptr();
        // SAFETY: lines inside the 4 KiB buffer.
        unsafe {
            assert_eq!(read_line(p.add(8)), (8..16).sum::<u64>());
            write_line(p.add(16), 7);
            stream_line(p.add(24), 9);
            #[cfg(target_arch = "x86_64")]
            std::arch::x86_64::_mm_sfence();
        }
        let w = b.words();
        assert!(w[16..24].iter().all(|&x| x == 7) && w[24..32].iter().all(|&x| x == 9));
        assert_eq!(w[15], 15);
        assert_eq!(w[32], 32);
    }

    /// A 1:1 stream writes every second line, wraps round its buffer, and
    /// writes nothing beyond it.
    #[test]
    fn a_stream_walks_its_pattern_and_wraps() {
        let mut b = Buf::new(8192, Pages::Default).unwrap();
        b.words().fill(0);
        // SAFETY: the first 4 KiB of the buffer are the stream's.
        let mut s = unsafe { Stream::new(b.ptr(), 4096, pattern("rd1wr1").unwrap()) };
        s.run(64 + 3, 0);
        assert_eq!(s.position(), 3);
        let w = b.words();
        for line in 0..64 {
            let written = w[line * 8..line * 8 + 8].iter().all(|&x| x != 0);
            assert_eq!(written, line % 2 == 1, "line {line}");
        }
        assert!(w[512..].iter().all(|&x| x == 0), "wrote past the stream");
    }

    /// Both read loops read every word of every line: their sums are the
    /// buffer's sum, once per pass.
    #[test]
    fn both_read_loops_sum_every_word() {
        let mut b = Buf::new(4096, Pages::Default).unwrap();
        for (i, x) in b.words().iter_mut().enumerate() {
            *x = i as u64 * 3 + 1;
        }
        let want: u64 = b.words().iter().sum::<u64>() * 2;
        for wide in [false, true] {
            if wide && !have_avx2() {
                continue;
            }
            // SAFETY: the buffer is this stream's.
            let mut s = unsafe { Stream::new(b.ptr(), 4096, pattern("rd").unwrap()) };
            s.avx2 = wide;
            s.run(64, 0);
            s.run(64, 0);
            assert_eq!(s.sink, want, "avx2: {wide}");
            // Across the wrap, and with a delay (the general loop).
            s.run(32, 0);
            s.run(96, 1);
            assert_eq!(s.sink, 2 * want, "avx2: {wide}, wrapping");
            assert_eq!(s.position(), 0);
        }
    }
}
