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

use touchstone_harness::{BenchError, Benchmark, Context, Fallible, Shape};
use touchstone_results::Statistic;

use crate::family::{Built, Family, Parallel, RunContext};
use crate::params::{Kind, Param, Point};
use crate::support::line_mix::{
    beyond_llc_size, iterate_streams, pattern, Access, Streams, LINE, MIXES,
};
use crate::support::memory::check_memory;
use crate::support::placement::usable_cpus;

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
    beyond_llc_size(
        "each stream's buffer: well beyond the last-level cache (STREAM's rule: four times it)",
    ),
];

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
        self.streams = Some(Streams::start(&cpus, self.size, self.pattern, None)?);
        Ok(())
    }

    fn run(&mut self, n: u64) -> Fallible {
        iterate_streams(self.streams.as_ref(), NAME, n)
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
    )
    // Every stream's buffer is faulted in each round: at 256 MiB a round
    // took 200-270 ms for one stream and 370-500 ms for two beyond its
    // 32 ms of intervals (load 2, 2 CPUs), what SETUP_NS_PER_BYTE makes of
    // the streams' bytes together, so the threads' faults do not overlap.
    .with_setup_bytes((streams * size) as u64)
    .with_working_set((streams * size) as u64))
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
    use crate::testing::built;

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
        let weak = b.streams.as_ref().unwrap().watch();
        b.run(3).unwrap();
        b.run(1).unwrap();
        b.cleanup();
        assert!(weak.upgrade().is_none(), "a stream thread outlived cleanup");
    }

    #[test]
    fn one_stream_is_one_cpu_and_parallel_is_refused() {
        let built = built("bw_mix/rd/streams:one/size:1m");
        assert_eq!(built.shape.statistic, Statistic::Max);
        assert!(matches!(FAMILY.parallel, Parallel::No(_)));
        assert_eq!(built.cost.setup_bytes, 1 << 20);
    }

    /// `run --dry-run` counts every stream's buffer faulted in (it said
    /// 1.6 s for a default run that took 8.8 s when none was declared).
    #[test]
    fn every_streams_buffer_is_a_declared_cost() {
        let built = built("bw_mix/rd/streams:all/size:2m");
        let streams = usable_cpus().unwrap().len() as u64;
        assert_eq!(built.cost.setup_bytes, streams * (2 << 20));
    }
}
