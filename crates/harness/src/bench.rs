//! The benchmark contract. `&mut self` is lmbench's cookie: plain data built
//! in the parent before the fork, per-process resources acquired in `setup`.

use std::path::PathBuf;

use touchstone_results::{Statistic, Unit};

/// What a benchmark reports when it cannot go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchError(pub String);

impl std::fmt::Display for BenchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for BenchError {}
impl From<std::io::Error> for BenchError {
    fn from(e: std::io::Error) -> Self {
        BenchError(e.to_string())
    }
}
impl From<String> for BenchError {
    fn from(s: String) -> Self {
        BenchError(s)
    }
}
impl From<&str> for BenchError {
    fn from(s: &str) -> Self {
        BenchError(s.to_string())
    }
}

pub type Fallible<T = ()> = Result<T, BenchError>;

/// What a benchmark process knows about where it runs.
#[derive(Debug, Clone)]
pub struct Context {
    /// 0-based index of this process among `parallel`.
    pub process: u32,
    pub parallel: u32,
    /// A private scratch directory, removed by the harness after the
    /// measurement whatever happens (also on Ctrl-C or a crash).
    pub scratch: PathBuf,
}

/// A benchmark, after lmbench's benchmp(initialize, benchmark, cleanup).
///
/// Call order in each process: `setup` once; then for every interval
/// (autosizing, warm-up, timed, and the keep-loaded intervals of a parallel
/// run) `prepare(n)`, `run(n)` timed, `conclude(n)`; finally `cleanup` once.
pub trait Benchmark: Send {
    /// Once in each process after it starts (lmbench: initialize(0)).
    fn setup(&mut self, _ctx: &Context) -> Fallible {
        Ok(())
    }
    /// Untimed, before an interval of `n` iterations: make exactly what the
    /// interval will consume (e.g. the files a delete benchmark removes).
    fn prepare(&mut self, _n: u64) -> Fallible {
        Ok(())
    }
    /// The timed body: perform the operation `n` times.
    fn run(&mut self, n: u64) -> Fallible;
    /// Untimed, after an interval of `n` iterations: undo what it made.
    fn conclude(&mut self, _n: u64) -> Fallible {
        Ok(())
    }
    /// Once at exit (lmbench: cleanup(0)); also reached after an error.
    fn cleanup(&mut self) {}
    /// Extra named figures this process observed (e.g. CPU seconds per MB,
    /// peak memory), read after the timed intervals and before `cleanup`.
    /// The measurement keeps each name's mean over processes. At most
    /// `MAX_EXTRAS` names of up to 47 bytes.
    fn extras(&mut self) -> Vec<(String, f64)> {
        Vec::new()
    }
}

/// How many extra figures one process can report.
pub const MAX_EXTRAS: usize = 16;

/// What one iteration of `run` is worth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Work {
    /// This many operations (latency is reported per operation).
    Ops(f64),
    /// This many bytes moved (bandwidth).
    Bytes(f64),
}

/// How a sample is reported.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Report {
    /// Nanoseconds per operation; processes' figures are averaged.
    Latency,
    /// MB/s (10^6 bytes); processes' figures are summed.
    Bandwidth,
    /// Operations per second divided by `scale` (e.g. 1e6 for MFLOPS), in
    /// `unit`; processes' figures are summed (system throughput).
    Rate { unit: Unit, scale: f64 },
}

/// A benchmark's shape: the size of an iteration, how to report it, the
/// minimum interval it needs (`enough`), and the headline statistic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    pub work: Work,
    pub report: Report,
    pub enough_ns: u64,
    pub statistic: Statistic,
    /// Skip autosizing and run exactly this many iterations per interval
    /// (e.g. one whole program run per interval when timing an application).
    pub fixed_iterations: Option<u64>,
    /// The operation itself switches between the benchmark's own processes
    /// or threads (ping-pong, context switches): a woken partner may preempt
    /// the timed process, so involuntary context switches are part of the
    /// operation, not a sign of other work, and are not warned about.
    pub switches_by_design: bool,
    /// The least warm-up this benchmark needs before its first timed
    /// interval, whatever the plan's (e.g. cross-CPU wake-ups on a virtual
    /// machine, whose cost settles only after the host has adapted).
    pub warmup_ns: u64,
    /// The timed loop's working set lies in a cache that a virtual
    /// machine shares with the host's other tenants (its last-level
    /// cache): what they do moves the figure from run to run, so it takes
    /// the run-level term measured for such figures
    /// (`touchstone_results::stats::run_level_spread`).
    pub tenants_share_cache: bool,
}

impl Shape {
    /// `work` reported as `report`, with every other setting at its default.
    fn of(work: Work, report: Report) -> Shape {
        Shape {
            work,
            report,
            enough_ns: 0,
            statistic: Statistic::Median,
            fixed_iterations: None,
            switches_by_design: false,
            warmup_ns: 0,
            tenants_share_cache: false,
        }
    }
    /// Latency of `ops` operations per iteration.
    pub fn latency(ops: f64) -> Shape {
        Shape::of(Work::Ops(ops), Report::Latency)
    }
    /// Bandwidth of `bytes` per iteration.
    pub fn bandwidth(bytes: f64) -> Shape {
        Shape::of(Work::Bytes(bytes), Report::Bandwidth)
    }
    /// A rate of `ops` per iteration, in `unit` after dividing ops/s by `scale`.
    pub fn rate(ops: f64, unit: Unit, scale: f64) -> Shape {
        Shape::of(Work::Ops(ops), Report::Rate { unit, scale })
    }
    pub fn with_enough_ns(mut self, ns: u64) -> Shape {
        self.enough_ns = ns;
        self
    }
    pub fn with_statistic(mut self, s: Statistic) -> Shape {
        self.statistic = s;
        self
    }
    /// See `switches_by_design`.
    pub fn with_switches_by_design(mut self) -> Shape {
        self.switches_by_design = true;
        self
    }
    /// See `warmup_ns`.
    pub fn with_warmup_ns(mut self, ns: u64) -> Shape {
        self.warmup_ns = ns;
        self
    }
    /// See `tenants_share_cache`.
    pub fn with_tenants_share_cache(mut self, shared: bool) -> Shape {
        self.tenants_share_cache = shared;
        self
    }
    pub fn with_fixed_iterations(mut self, n: u64) -> Shape {
        self.fixed_iterations = Some(n.max(1));
        self
    }

    pub fn unit(&self) -> Unit {
        match self.report {
            Report::Latency => Unit::Ns,
            Report::Bandwidth => Unit::MBps,
            Report::Rate { unit, .. } => unit,
        }
    }

    /// Whether the processes' figures of one repetition add up (throughput)
    /// rather than average (latency).
    pub fn sums_across_processes(&self) -> bool {
        !matches!(self.report, Report::Latency)
    }

    /// Operations or bytes per iteration.
    pub fn amount(&self) -> f64 {
        match self.work {
            Work::Ops(x) | Work::Bytes(x) => x,
        }
    }

    /// The figure of one interval of `iterations` lasting `elapsed_ns`.
    pub fn figure(&self, iterations: u64, elapsed_ns: u64) -> f64 {
        self.figure_of(iterations as f64, elapsed_ns as f64)
    }

    /// `figure` for a part of an interval's iterations (a window's share).
    pub fn figure_of(&self, iterations: f64, elapsed_ns: f64) -> f64 {
        let amount = self.amount() * iterations;
        let ns = elapsed_ns.max(1.0);
        match self.report {
            Report::Latency => ns / amount,
            // bytes / (ns * 1e-9) / 1e6 = bytes * 1e3 / ns
            Report::Bandwidth => amount * 1e3 / ns,
            Report::Rate { scale, .. } => amount * 1e9 / ns / scale,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_per_report_kind() {
        // 1000 iterations of 2 ops in 4000 ns: 2 ns per op
        assert_eq!(Shape::latency(2.0).figure(1000, 4000), 2.0);
        // 1e6 bytes in 1 ms: 1000 MB/s
        assert_eq!(Shape::bandwidth(1000.0).figure(1000, 1_000_000), 1000.0);
        // 2e6 flops in 1 s: 2 MFLOPS
        let s = Shape::rate(2.0, Unit::Mflops, 1e6);
        assert!((s.figure(1_000_000, 1_000_000_000) - 2.0).abs() < 1e-12);
    }
}
