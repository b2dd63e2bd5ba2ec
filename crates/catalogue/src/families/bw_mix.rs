//! bw_mix: peak memory bandwidth by read/write mix (Intel MLC's
//! `--max_bandwidth`), as figures of their own: the bandwidth end of
//! loaded_latency's curves without the chaser.
//!
//! `streams:all` (the default) runs one stream on every CPU the run may
//! use, each a thread pinned to its CPU with a buffer of its own of `size`
//! bytes (mapped and touched by that thread, so on a NUMA machine its pages
//! are the CPU's node's); `streams:one` runs one, on the first CPU: what one
//! core can draw, the figure bw_mem's `rd` and stream's give at one
//! process. An iteration is one pass of every stream over its whole buffer
//! in the mix's pattern (`support::line_mix`, loaded_latency's generators'
//! loop: every access one 64-byte line, 64 bytes counted); the threads
//! start together and the iteration ends when the last has finished, as
//! STREAM's threads are timed. The figure is the best interval
//! (interference only takes bandwidth away). `--parallel` is refused: the
//! family places its streams itself.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::thread::JoinHandle;

use touchstone_harness::{BenchError, Benchmark, Context, Fallible, Shape};
use touchstone_results::Statistic;

use crate::family::{Built, Family, Parallel, RunContext};
use crate::params::{Kind, Param, Point};
use crate::support::line_mix::{pattern, Access, Stream, LINE, MIXES};
use crate::support::memory::{check_memory, Buf, Pages};
use crate::support::placement::{pin_self, usable_cpus};

pub const NAME: &str = "bw_mix";

pub const PARAMS: &[Param] = &[
    Param {
        name: "mix",
        help: "rd (reads), rd3wr1, rd2wr1, rd1wr1 (line reads per line written), ntwr (non-temporal writes, x86-64)",
        kind: Kind::Choice(MIXES),
        default: MIXES,
        quick: &["rd"],
        positional: true,
    },
    Param {
        name: "streams",
        help: "all (one stream on every usable CPU: the machine's peak) or one (one core's)",
        kind: Kind::Choice(&["all", "one"]),
        default: &["all", "one"],
        quick: &["all"],
        positional: false,
    },
    Param {
        name: "size",
        help: "each stream's buffer: well beyond the last-level cache (STREAM's rule: four times it)",
        kind: Kind::Size {
            min: 1 << 20,
            max: 64 << 30,
        },
        default: &["256m"],
        quick: &["128m"],
        positional: false,
    },
];

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
struct Streams {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Streams {
    /// A thread per CPU, each pinned, its buffer mapped and touched; they
    /// then wait for the first iteration.
    fn start(cpus: &[usize], size: usize, pattern: &'static [Access]) -> Fallible<Streams> {
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
                .name(format!("bw_mix-{cpu}"))
                .spawn(move || stream_on(cpu, size, pattern, &s))
                .map_err(|e| BenchError(format!("{NAME}: cannot start a stream thread: {e}")))?;
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
    fn iterate(&self, passes: u64) {
        self.shared.passes.store(passes, Ordering::Relaxed);
        self.shared.barrier.wait(); // go
        self.shared.barrier.wait(); // all done
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

impl Drop for Streams {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One stream's thread: pin, map and touch its buffer, then at each
/// iteration its passes over the whole buffer. A thread that cannot set up
/// says why and still keeps to the barrier, so the others are not stranded.
fn stream_on(cpu: usize, size: usize, pattern: &'static [Access], s: &Shared) {
    let set_up = pin_self(cpu).and_then(|()| Buf::new(size, Pages::Default));
    let mut stream = match set_up {
        Ok(buf) => {
            // SAFETY: the buffer is this thread's alone and lives as long
            // as the stream (both dropped at the end of this function).
            let st = unsafe { Stream::new(buf.ptr(), size, pattern) };
            Some((buf, st))
        }
        Err(e) => {
            let mut f = s.failed.lock().unwrap();
            f.get_or_insert(format!("{NAME}: a stream on CPU {cpu}: {}", e.0));
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

pub struct BwMix {
    pattern: &'static [Access],
    size: usize,
    one: bool,
    streams: Option<Streams>,
    cpus: usize,
}

impl Benchmark for BwMix {
    fn setup(&mut self, _: &Context) -> Fallible {
        let mut cpus = usable_cpus()?;
        if self.one {
            cpus.truncate(1);
        }
        check_memory(
            &format!("{NAME}: {} streams of {} MB", cpus.len(), self.size >> 20),
            (self.size * cpus.len()) as u64,
        )
        .map_err(BenchError)?;
        self.cpus = cpus.len();
        self.streams = Some(Streams::start(&cpus, self.size, self.pattern)?);
        Ok(())
    }

    fn run(&mut self, n: u64) -> Fallible {
        let s = self
            .streams
            .as_ref()
            .ok_or_else(|| BenchError(format!("{NAME}: no streams")))?;
        s.iterate(n);
        Ok(())
    }

    fn cleanup(&mut self) {
        self.streams = None;
    }

    fn extras(&mut self) -> Vec<(String, f64)> {
        vec![("streams".into(), self.cpus as f64)]
    }
}

/// Bytes one iteration counts: every stream's whole lines, once.
pub fn bytes_per_iteration(streams: usize, size: usize) -> f64 {
    (streams * (size / LINE * LINE)) as f64
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let pattern = pattern(p.text("mix"))?;
    let size = p.num("size") as usize;
    let one = p.text("streams") == "one";
    let streams = if one {
        1
    } else {
        usable_cpus().map_err(|e| e.0)?.len()
    };
    check_memory(
        &format!("{NAME}/{}/size:{}", p.text("mix"), p.text("size")),
        (size * streams) as u64,
    )?;
    Ok(Built::new(
        BwMix {
            pattern,
            size,
            one,
            streams: None,
            cpus: 0,
        },
        Shape::bandwidth(bytes_per_iteration(streams, size)).with_statistic(Statistic::Max),
    ))
}

pub const FAMILY: Family = Family {
    params: PARAMS,
    parallel: Parallel::No("bw_mix places its own streams: give streams:all or streams:one"),
    ..Family::new(
        NAME,
        "mem_bw",
        "peak memory bandwidth by read/write mix, every CPU streaming (Intel MLC's max bandwidth)",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_iteration_counts_every_streams_lines() {
        assert_eq!(bytes_per_iteration(2, 1 << 20), (2 << 20) as f64);
        assert_eq!(bytes_per_iteration(1, (1 << 20) + 10), (1 << 20) as f64);
    }

    /// Streams run on every usable CPU, an iteration moves every stream's
    /// buffer (the writes land), and the threads are gone after cleanup.
    #[test]
    fn streams_run_on_every_cpu_and_end() {
        let cpus = usable_cpus().unwrap();
        let mut b = BwMix {
            pattern: pattern("rd1wr1").unwrap(),
            size: 1 << 20,
            one: false,
            streams: None,
            cpus: 0,
        };
        let ctx = Context {
            process: 0,
            parallel: 1,
            scratch: std::env::temp_dir(),
        };
        b.setup(&ctx).unwrap();
        assert_eq!(b.extras(), vec![("streams".to_string(), cpus.len() as f64)]);
        let weak = Arc::downgrade(&b.streams.as_ref().unwrap().shared);
        b.run(3).unwrap();
        b.run(1).unwrap();
        b.cleanup();
        assert!(weak.upgrade().is_none(), "a stream thread outlived cleanup");
    }

    #[test]
    fn one_stream_is_one_cpu_and_parallel_is_refused() {
        let p = crate::select(
            &["bw_mix/rd/streams:one/size:1m".into()],
            &RunContext::default(),
            1,
        )
        .unwrap();
        let built = FAMILY
            .make(&p.cases[0].point, &RunContext::default())
            .unwrap();
        assert_eq!(built.shape.statistic, Statistic::Max);
        assert!(matches!(FAMILY.parallel, Parallel::No(_)));
    }
}
