//! loaded_latency: memory latency as a loaded machine sees it, against the
//! bandwidth the other CPUs draw (Intel MLC's `--loaded_latency`), a
//! workload on the load-curve engine.
//!
//! One client, the chaser, pinned to the first CPU of the point, follows
//! the same fully random pointer chain as lat_mem_rd's `rand` chain at the
//! same working set (`size`; the chain, its seed and its pages are
//! `support::pointer_chase`'s), 100 dependent loads per operation; the
//! engine records each operation's time over its 100 loads
//! (`Client::steps`), so a point's latency is ns per load, with the
//! percentiles of those 100-load means.
//!
//! Every other CPU of the point (all of them by default; `--cpus` as for
//! any workload) runs a generator: a helper process pinned there that
//! streams through a buffer of its own of `size` bytes, one 64-byte line
//! per access, in the read/write `mix`, with a calibrated delay after each
//! access. The load axis is the injection level: load 1 holds the
//! generators idle (paused), loads 2..=10 give them the delays of
//! [`DELAYS_NS`], down to none at load 10. The generators count the lines
//! they move in shared memory; the engine reads the count at the edges of
//! the window in which the chaser is measured (`Workload::traffic_ops`),
//! so a point's throughput is the bandwidth of all generators over that
//! one wall-clock window (64 bytes an operation: reports show MB/s), and
//! its latency is the chase's during it. The knee of (load, bandwidth) is
//! the existing curve analysis's: the injection level past which less
//! delay buys no more bandwidth, where the latency turns up; the peak of
//! each mix's curve is that mix's peak bandwidth beside one chasing CPU.
//!
//! Mixes (accesses in a repeating pattern along the buffer; every access
//! moves one 64-byte line and counts 64 bytes, STREAM's convention: the
//! read for ownership and the write-back an ordinary store causes are not
//! counted): `rd` (reads), `rd3wr1`, `rd2wr1`, `rd1wr1` (that many line
//! reads for each line written with ordinary stores), `ntwr` (every line
//! written with non-temporal stores, which bypass the caches; x86-64).
//!
//! Generators and the chase's chain live for the whole sweep (made in the
//! first trial's `prepare`, gone when the workload is dropped; the
//! generators die with the run, `support::background_load`), so a trial
//! costs only its warm-up and window.

use std::sync::atomic::{AtomicU64, Ordering};

use touchstone_harness::clock::now_ns;
use touchstone_harness::workload::{Client, ClientContext, TrialContext, TrialPlan, Workload};
use touchstone_harness::{BenchError, Fallible};

use crate::family::{Family, RunContext};
use crate::params::{Kind, Param, Point};
use crate::support::background_load::Running;
use crate::support::memory::{check_memory, Buf, Order, Pages};
use crate::support::placement::pin_self;
use crate::support::pointer_chase::{chain, chase, CHAIN_SEED, CHASE_LOADS};
use crate::support::sys::map_anonymous;

pub const NAME: &str = "loaded_latency";
pub const SUMMARY: &str =
    "memory latency of a random chase while the other CPUs stream memory at injected delays, against their bandwidth (Intel MLC's loaded latency)";
/// What one operation of the throughput is: one line moved by a generator.
pub const OPERATION: &str = "line";

/// The unit a generator moves per access, and a cache line on current
/// machines: the chase's chain elements are lines too.
pub const LINE: usize = 64;

/// The delay after each access of a generator, ns, at loads 2..=10 (load 1:
/// idle). Halving steps from 2 µs (a generator then moves 32 MB/s, nothing
/// to a memory system) to none, denser near none where the bandwidth
/// saturates and the latency turns up (MLC's delays span 0 to 20000 cycles
/// likewise).
pub const DELAYS_NS: [u64; 9] = [2000, 500, 200, 100, 50, 20, 10, 5, 0];
/// The most injection levels: idle, then one per delay.
pub const LEVELS: u32 = DELAYS_NS.len() as u32 + 1;
/// Quick mode's levels: idle, a middle delay (50 ns) and none.
const QUICK_LOADS: [u32; 3] = [1, 6, LEVELS];

/// Lines a generator moves between looks at the control word and updates
/// of its count: 4 KiB, so the count's error is a few µs of traffic and the
/// shared line is touched once per 64 accesses.
const CHUNK_LINES: u64 = 64;
/// The control word's value that holds the generators idle.
const PAUSED: u64 = u64::MAX;

/// Warm-up and window of a trial, at most (the run's plan may ask for
/// less). The chase and the generators reach their steady state within
/// milliseconds of the start; the engine's defaults (1 s, 3 s) are sized
/// for servers, and ten levels of three trials must fit in a minute.
const WARMUP_NS: u64 = 300_000_000;
const WINDOW_NS: u64 = 1_000_000_000;
const QUICK_WARMUP_NS: u64 = 50_000_000;
const QUICK_WINDOW_NS: u64 = 200_000_000;

pub const MIX: Param = Param {
    name: "mix",
    help: "the generators' accesses: rd (reads), rd3wr1, rd2wr1, rd1wr1 (line reads per line written), ntwr (non-temporal writes, x86-64)",
    kind: Kind::Choice(&["rd", "rd3wr1", "rd2wr1", "rd1wr1", "ntwr"]),
    default: &["rd", "rd3wr1", "rd2wr1", "rd1wr1", "ntwr"],
    quick: &["rd"],
    positional: false,
};

pub const SIZE: Param = Param {
    name: "size",
    help: "the chase's working set, and each generator's buffer: well beyond the last-level cache (lat_mem_rd's largest size, so the idle ends compare)",
    kind: Kind::Size {
        min: 1 << 20,
        max: 64 << 30,
    },
    default: &["256m"],
    quick: &["128m"],
    positional: false,
};

pub const PARAMS: &[Param] = &[MIX, SIZE];

/// One access of a generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    /// A write that bypasses the caches (x86-64 `movnti`).
    StreamWrite,
}

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

/// The delay after each access at injection level `load`: None at 1 (idle).
pub fn delay_ns(load: u32) -> Option<u64> {
    (load >= 2).then(|| DELAYS_NS[(load - 2) as usize])
}

pub fn build(p: &Point, ctx: &RunContext) -> Result<Box<dyn Workload>, String> {
    let size = p.num(SIZE.name) as usize;
    let pattern = pattern(p.text(MIX.name))?;
    check_memory(&format!("{NAME}/size:{}", p.text(SIZE.name)), size as u64)?;
    Ok(Box::new(LoadedLatency {
        pattern,
        size,
        quick: ctx.quick,
        chain: None,
        control: None,
        generators: None,
    }))
}

/// The chase's chain, laid once in the supervising process; the chaser's
/// process inherits it (copy-on-write, and it only reads it).
struct Chain {
    _buf: Buf,
    start: *const usize,
}

// SAFETY: the chain is written once, before any process or thread reads
// it, and only read afterwards.
unsafe impl Sync for Chain {}
unsafe impl Send for Chain {}

/// The memory the supervisor and the generators share: word 0 the delay
/// (ns, or PAUSED); then one 64-byte line per generator, its first word the
/// lines it has moved, its second 1 once it is ready (buffer touched,
/// delay calibrated). One line each, so no generator's count shares a line
/// with another's.
struct Control {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: a shared mapping accessed only through atomics.
unsafe impl Sync for Control {}
unsafe impl Send for Control {}

impl Control {
    fn new(generators: usize) -> Fallible<Control> {
        let len = LINE * (1 + generators);
        let ptr = map_anonymous(len, libc::PROT_READ | libc::PROT_WRITE, true)?;
        let c = Control { ptr, len };
        c.delay().store(PAUSED, Ordering::Relaxed);
        Ok(c)
    }
    fn word(&self, i: usize) -> &AtomicU64 {
        assert!(8 * (i + 1) <= self.len);
        // SAFETY: inside the mapping, 8-aligned (page-aligned base).
        unsafe { &*(self.ptr.add(8 * i) as *const AtomicU64) }
    }
    fn delay(&self) -> &AtomicU64 {
        self.word(0)
    }
    fn lines(&self, generator: usize) -> &AtomicU64 {
        self.word(8 * (1 + generator))
    }
    fn ready(&self, generator: usize) -> &AtomicU64 {
        self.word(8 * (1 + generator) + 1)
    }
    fn generators(&self) -> usize {
        self.len / LINE - 1
    }
    fn total_lines(&self) -> u64 {
        (0..self.generators())
            .map(|g| self.lines(g).load(Ordering::Relaxed))
            .sum()
    }
}

impl Drop for Control {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what was mapped.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// Generators running on these CPUs.
struct Generators {
    cpus: Vec<usize>,
    /// Held, not read: dropping it stops and reaps the generators.
    _running: Running,
}

pub struct LoadedLatency {
    pattern: &'static [Access],
    size: usize,
    quick: bool,
    chain: Option<Chain>,
    control: Option<Control>,
    generators: Option<Generators>,
}

impl LoadedLatency {
    /// The generator processes running (tests: they must be gone after).
    #[cfg(test)]
    fn generator_pids(&self) -> Vec<libc::pid_t> {
        self.generators
            .as_ref()
            .map_or(Vec::new(), |g| g._running.pids().to_vec())
    }

    /// Start a generator on each of `cpus` (none on a one-CPU point) and
    /// wait until each has touched its buffer and calibrated its delay.
    fn start_generators(&mut self, cpus: &[usize]) -> Fallible {
        self.generators = None; // stops the ones on other CPUs, if any
        self.control = None;
        check_memory(
            &format!("{NAME}: the chain and {} generator buffers", cpus.len()),
            (self.size * (1 + cpus.len())) as u64,
        )
        .map_err(BenchError)?;
        let control = Control::new(cpus.len())?;
        let mut running = Running::idle();
        for (g, &cpu) in cpus.iter().enumerate() {
            let (c, pattern, size) = (&control, self.pattern, self.size);
            running.spawn_pinned(cpu, move || generate(c, g, pattern, size))?;
        }
        let deadline = now_ns() + 60_000_000_000;
        while (0..cpus.len()).any(|g| control.ready(g).load(Ordering::Acquire) == 0) {
            if !running.all_alive() {
                return Err(BenchError(format!(
                    "{NAME}: a generator ended before it was ready (its buffer of {} MB could \
                     not be mapped, or it could not be pinned)",
                    self.size >> 20
                )));
            }
            if now_ns() > deadline {
                return Err(BenchError(format!(
                    "{NAME}: the generators were not ready after 60 s"
                )));
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        self.control = Some(control);
        self.generators = Some(Generators {
            cpus: cpus.to_vec(),
            _running: running,
        });
        Ok(())
    }
}

impl Workload for LoadedLatency {
    fn op_types(&self) -> &[&str] {
        &["chase"]
    }
    /// One client, the chaser, at every level: the load is the generators'
    /// injection level, not a number of clients.
    fn clients(&self, _load: u32, _cpus: usize) -> u32 {
        1
    }
    fn max_load(&self) -> Option<u32> {
        Some(LEVELS)
    }
    fn default_loads(&self, _usable: usize) -> Vec<u32> {
        if self.quick {
            QUICK_LOADS.to_vec()
        } else {
            (1..=LEVELS).collect()
        }
    }
    fn bytes_per_op(&self) -> Option<u64> {
        Some(LINE as u64)
    }
    fn check_load(&self, load: u32) -> Result<(), String> {
        if load > LEVELS {
            return Err(format!(
                "{NAME}: load {load} is no injection level: 1 (idle) to {LEVELS} (no delay)"
            ));
        }
        Ok(())
    }
    fn trial_plan(&self, run: &TrialPlan, _load: u32) -> TrialPlan {
        let (warmup, window) = if self.quick {
            (QUICK_WARMUP_NS, QUICK_WINDOW_NS)
        } else {
            (WARMUP_NS, WINDOW_NS)
        };
        TrialPlan {
            warmup_ns: run.warmup_ns.min(warmup),
            window_ns: run.window_ns.min(window),
            ..run.clone()
        }
    }

    /// The chain once; the generators once per set of CPUs; then the
    /// level's delay (paused at level 1).
    fn prepare(&mut self, ctx: &TrialContext) -> Fallible {
        if self.chain.is_none() {
            // One line per element in random order, lat_mem_rd's `rand`
            // chain: the same seed, the same pages, the same chain.
            let order = Order::Rand { elem: LINE };
            let (buf, start) = chain(self.size, order, Pages::Default, CHAIN_SEED)?;
            self.chain = Some(Chain { _buf: buf, start });
        }
        let others = ctx.cpus.get(1..).unwrap_or(&[]);
        if self.generators.as_ref().is_none_or(|g| g.cpus != others) {
            self.start_generators(others)?;
        }
        let delay = delay_ns(ctx.load).unwrap_or(PAUSED);
        if let Some(c) = &self.control {
            c.delay().store(delay, Ordering::Release);
        }
        Ok(())
    }

    /// Between trials and after the last the generators are held idle.
    fn release(&mut self) {
        if let Some(c) = &self.control {
            c.delay().store(PAUSED, Ordering::Release);
        }
    }

    fn traffic_ops(&self) -> Option<u64> {
        Some(self.control.as_ref().map_or(0, Control::total_lines))
    }

    fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        let chain = self
            .chain
            .as_ref()
            .ok_or_else(|| BenchError(format!("{NAME}: no chain (prepare did not run)")))?;
        pin_self(ctx.cpus[0])?;
        Ok(Box::new(Chaser { cur: chain.start }))
    }
}

/// The chaser: 100 dependent loads an operation (`pointer_chase::chase`,
/// whose loads neither the compiler nor the CPU can drop or overlap).
struct Chaser {
    cur: *const usize,
}

impl Client for Chaser {
    fn op(&mut self) -> Fallible<usize> {
        self.cur = chase(self.cur, 1);
        Ok(0)
    }
    fn steps(&self) -> u64 {
        CHASE_LOADS as u64
    }
}

/// The delay loop: `spins` increments of a counter that goes through
/// `black_box` each time, so the compiler can neither drop the loop nor
/// fold it into one addition; it touches no memory beyond the stack.
#[inline(always)]
fn spin(spins: u64) {
    let mut i = 0u64;
    while i < spins {
        i = std::hint::black_box(i) + 1;
    }
}

/// Spins per ns of `spin` on this CPU: the fastest of five runs of 200 000
/// spins (about 0.1-1 ms each; interference only slows a run). The delays
/// are given in ns so that levels mean the same on machines whose loop
/// speeds differ; a generator converts once, on its own CPU.
fn spins_per_ns() -> f64 {
    const SPINS: u64 = 200_000;
    let best = (0..5)
        .map(|_| {
            let t0 = now_ns();
            spin(SPINS);
            now_ns() - t0
        })
        .min()
        .unwrap_or(1)
        .max(1);
    SPINS as f64 / best as f64
}

/// Read one line: its eight words summed in a tree (one addition on the
/// path to the running sum per line, so the sum is no bottleneck), the
/// result folded into the generator's sink, which is black-boxed after
/// every chunk: the loads cannot be removed.
///
/// # Safety
/// `p` points to a 64-byte line of the generator's buffer.
#[inline(always)]
unsafe fn read_line(p: *const u64) -> u64 {
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
unsafe fn write_line(p: *mut u64, v: u64) {
    for i in 0..8 {
        p.add(i).write_volatile(v);
    }
}

/// Write one whole line with non-temporal stores (`movnti`): they go to
/// memory through the write-combining buffers without reading the line
/// first or filling the caches. The generator fences them (`sfence`) at
/// the end of each chunk, before counting it.
///
/// # Safety
/// As `read_line`.
#[inline(always)]
unsafe fn stream_line(p: *mut u64, v: u64) {
    #[cfg(target_arch = "x86_64")]
    for i in 0..8 {
        std::arch::x86_64::_mm_stream_si64(p.add(i) as *mut i64, v as i64);
    }
    #[cfg(not(target_arch = "x86_64"))]
    write_line(p, v); // refused by `pattern` before anything runs
}

/// A generator, in its own pinned process: map and touch its buffer,
/// calibrate its delay, say it is ready, then forever: a chunk of 64
/// accesses to consecutive lines in the mix's pattern, each followed by the
/// delay, then publish the lines moved. Lines are visited in address
/// order, wrapping round the buffer: a stream the prefetchers recognise, as
/// STREAM's and bw_mem's are, so at no delay a generator draws what a core
/// can draw, and the bandwidth end compares with theirs. It reads the
/// delay once a chunk; PAUSED holds it idle (1 ms sleeps). Exit codes: 3,
/// the buffer could not be mapped.
fn generate(control: &Control, me: usize, pattern: &[Access], size: usize) -> i32 {
    let Ok(buf) = Buf::new(size, Pages::Default) else {
        return 3;
    };
    let lines = (size / LINE) as u64;
    let per_ns = spins_per_ns();
    control.ready(me).store(1, Ordering::Release);
    let base = buf.ptr() as *mut u64;
    let (mut line, mut k, mut moved, mut sink) = (0u64, 0usize, 0u64, 0u64);
    let mut last_delay = PAUSED;
    let mut spins = 0u64;
    loop {
        let delay = control.delay().load(Ordering::Acquire);
        if delay == PAUSED {
            std::thread::sleep(std::time::Duration::from_millis(1));
            continue;
        }
        if delay != last_delay {
            spins = (delay as f64 * per_ns).round() as u64;
            last_delay = delay;
        }
        for _ in 0..CHUNK_LINES {
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
            spin(spins);
        }
        #[cfg(target_arch = "x86_64")]
        if pattern[0] == Access::StreamWrite {
            // SAFETY: a fence; orders the chunk's streaming stores.
            unsafe { std::arch::x86_64::_mm_sfence() };
        }
        sink = std::hint::black_box(sink);
        moved += CHUNK_LINES;
        control.lines(me).store(moved, Ordering::Relaxed);
    }
}

pub const FAMILY: Family = Family {
    params: PARAMS,
    ..Family::workload(NAME, "workload", SUMMARY, OPERATION, build)
};

#[cfg(test)]
mod tests;
