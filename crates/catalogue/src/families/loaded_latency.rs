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
//! It is a mean over the window: every moment a generator does not run
//! (another task, an interrupt) counts against it, where bw_mem's and
//! bw_mix's figures are their best short interval; and the chaser shares
//! the memory system with it. The bandwidth end is therefore compared with
//! them on the generator's CPU, in interleaved pairs (docs/validation.md).
//!
//! Mixes (`support::line_mix`: accesses in a repeating pattern along the
//! buffer, the loops bw_mix's peak figures run too; every access
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
use crate::support::line_mix::{beyond_llc_size, pattern, spin, Access, Stream, LINE, MIXES};
use crate::support::memory::{check_memory, Buf, Order, Pages};
use crate::support::placement::pin_self;
use crate::support::pointer_chase::{chain, chase, CHAIN_SEED, CHASE_LOADS};
use crate::support::sys::map_anonymous;

pub const NAME: &str = "loaded_latency";
pub const SUMMARY: &str =
    "memory latency of a random chase while the other CPUs stream memory at injected delays, against their bandwidth (Intel MLC's loaded latency)";
/// What one operation of the throughput is: one line moved by a generator.
pub const OPERATION: &str = "line";

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
/// The same at no delay: 256 KiB, about 6 µs of reading at 40 GB/s. A
/// 4 KiB chunk is about 100 ns there, and the call around it (its set-up,
/// the fold of the vector sum, the count's store) cost the bandwidth end
/// 6-7 %: in C, line_mix's loop in 4 KiB calls read 40.6 GB/s against
/// 43.5 for bw_mem's loop, interleaved on one CPU, and loaded_latency's
/// last level 6.4 % below bw_mix's one stream (the same loop in whole
/// passes) on the same CPU (quiet sitting, 27 Nov 04:49).
const NO_DELAY_CHUNK_LINES: u64 = 4096;
/// The control word's value that holds the generators idle.
const PAUSED: u64 = u64::MAX;

/// Warm-up and window of a trial, at most (the run's plan may ask for
/// less). The generators run from the sweep's start (held idle between
/// trials) and the chase's steady state is reached within milliseconds of
/// a trial's start, so 0.1 s of warm-up is ample; a 0.5 s window holds
/// about 30 000 of the chase's 100-load operations and 8 million lines of
/// the generators' at no delay. The default case is ten levels of at
/// least three trials (and one dropped) within 60 s: with 0.3 s and 1 s it
/// took 72 s (docs/validation.md), most levels needing four to six trials
/// on a 2-CPU machine, so now 10 × 4 × 0.6 s = 24 s at the fewest, 60 s at
/// ten trials a level.
const WARMUP_NS: u64 = 100_000_000;
const WINDOW_NS: u64 = 500_000_000;
const QUICK_WARMUP_NS: u64 = 50_000_000;
const QUICK_WINDOW_NS: u64 = 200_000_000;

pub const MIX: Param = Param {
    name: "mix",
    help: "the generators' accesses: rd (reads), rd3wr1, rd2wr1, rd1wr1 (line reads per line written), ntwr (non-temporal writes, x86-64)",
    kind: Kind::Choice(MIXES),
    default: MIXES,
    quick: &["rd"],
    positional: false,
};

pub const SIZE: Param = beyond_llc_size(
    "the chase's working set, and each generator's buffer: well beyond the last-level cache (lat_mem_rd's largest size, so the idle ends compare)",
);

pub const PARAMS: &[Param] = &[MIX, SIZE];

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
            let (buf, start) = chain(self.size, order, Pages::Default, None, CHAIN_SEED)?;
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
    /// The generator processes running: what makes the throughput, so
    /// what touchstone's check on itself reads (they must be gone after).
    fn traffic_pids(&self) -> Vec<libc::pid_t> {
        self.generators
            .as_ref()
            .map_or(Vec::new(), |g| g._running.pids().to_vec())
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

/// Spins per ns of `spin` on this CPU: the fastest of five runs of 200 000
/// spins (about 0.1-1 ms each, long beside the two clock reads around it;
/// interference only slows a run, so the fastest is the loop's own speed).
/// The delays are given in ns so that levels mean the same on machines
/// whose loop speeds differ; a generator converts once, on its own CPU.
/// What the compiler must not remove: `spin`'s counter goes through
/// `black_box` on every spin, so neither this timed run nor the delay after
/// each access can be folded into one addition or dropped, and the rate
/// found here is the same loop's as the delay's (both inlined `spin`).
///
/// What the calibration cannot promise: a delay of a few spins after an
/// access is not its nanoseconds exactly. The out-of-order core overlaps a
/// short spin with the line's load and with the next access's loop
/// overhead, so at 5-10 ns a generator's period is below access + delay,
/// and a C generator whose spin is a `volatile` counter overlaps
/// differently (10-24 % more bandwidth than ours at 100-5 ns, the
/// 26 Nov sitting). The level is therefore only the knob: what a point
/// reports, and what curves are compared at, is the achieved bandwidth
/// (lines counted over the window), never the nominal delay.
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

/// A generator, in its own pinned process: map and touch its buffer,
/// calibrate its delay, say it is ready, then forever: a chunk of 64
/// accesses (4096 at no delay) to consecutive lines in the mix's pattern,
/// each followed by the delay, then publish the lines moved. The accesses are
/// `support::line_mix`'s stream (bw_mix's too: its figures are the
/// bandwidth end of these curves with every CPU streaming). The strides:
/// the generators step one 64-byte line at a time in address order, every
/// byte of each line moved, so the prefetchers stream them as they stream
/// STREAM and no partial line is counted as a whole; the chaser's stride
/// is the random chain's, one line an element, so each of its loads misses
/// and no prefetcher can help it. Each generator has its own buffer, so no
/// line is shared between CPUs (no coherence traffic is counted as
/// bandwidth), and the count shares no line with another generator's
/// (`Control`). It reads the delay once a chunk; PAUSED holds it idle (1 ms
/// sleeps). Exit codes: 3, the buffer could not be mapped.
fn generate(control: &Control, me: usize, pattern: &'static [Access], size: usize) -> i32 {
    let Ok(buf) = Buf::new(size, Pages::Default) else {
        return 3;
    };
    let per_ns = spins_per_ns();
    control.ready(me).store(1, Ordering::Release);
    // SAFETY: the buffer is the generator's own, page-aligned, for its life.
    let mut stream = unsafe { Stream::new(buf.ptr(), size, pattern) };
    let (mut moved, mut last_delay, mut spins) = (0u64, PAUSED, 0u64);
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
        let chunk = if spins == 0 {
            NO_DELAY_CHUNK_LINES
        } else {
            CHUNK_LINES
        };
        stream.run(chunk, spins);
        moved += chunk;
        control.lines(me).store(moved, Ordering::Relaxed);
    }
}

pub const FAMILY: Family = Family {
    params: PARAMS,
    ..Family::workload(NAME, "workload", SUMMARY, OPERATION, build)
};

#[cfg(test)]
mod tests;
