//! System workloads on the load-curve engine (DESIGN.md "Workloads", seeds
//! 003 and 004). A micro-benchmark times one operation in a loop; a workload
//! runs L clients — and a server side where it has one — concurrently, and
//! every client records every operation's latency in an HDR histogram.
//!
//! The engine in layers:
//! - `client`: what one client does (closed loop, or open loop at a target
//!   rate with latency from each operation's intended start), generic over
//!   its clock and its link to the supervisor so tests run it without a
//!   real clock;
//! - `trial`: one trial at a load level — the server started first, then L
//!   client processes (or L threads in one process), a warm-up, then one
//!   measurement window during which all L are running; coordination is two
//!   pipes and one shared mapping whatever L is; nothing it starts outlives
//!   it, also on Ctrl-C or when a client dies;
//! - `cpu`: CPU sets (confining a point to k CPUs) and the accounting of a
//!   window: /proc/stat split and each side's CPU time per operation;
//! - `topology`: which k CPUs a point runs on (whole cores before SMT
//!   siblings, one NUMA node before the next) and why;
//! - `threads`: every thread's time on and waiting for a CPU over the
//!   window, for touchstone's check on itself (was one of its own threads
//!   the limit?);
//! - `sweep`: the load ladder and the CPU counts, and at each point trials
//!   repeated until the mean throughput converges (`results::convergence`),
//!   giving the results model's `curve::Point`s.

pub mod board;
mod children;
pub mod client;
pub mod cpu;
pub mod plan;
pub mod sweep;
pub mod threads;
pub mod topology;
pub mod trial;

#[cfg(test)]
mod energy_tests;
#[cfg(test)]
mod self_check_tests;
#[cfg(test)]
mod sweep_tests;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use crate::bench::Fallible;

pub use client::{drive, ClientRecord, OpCpu, Schedule};
pub use plan::{Budget, Pacing, SweepPlan, TrialPlan};
pub use sweep::{
    default_loads, default_loads_from, loads_from, measure_point, point_from_trials,
    quick_loads_from, resolve_cpu_counts, sweep, validate, validate_trial, Sweep, SweepObserver,
};
pub use trial::{run_trial, TrialOutcome};

/// The most operation types a workload's mix may have (each has its own
/// histogram in every client's slot).
pub const MAX_OP_TYPES: usize = 16;

/// How a workload's clients run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    /// One forked process per client (netperf's N processes).
    Processes,
    /// One thread per client, all in one forked process (a Java-style
    /// client, or where thread creation is part of what is stressed).
    Threads,
}

/// What a client knows about where it runs.
#[derive(Debug, Clone)]
pub struct ClientContext {
    /// 0-based index among `clients`.
    pub client: u32,
    /// Client processes or threads in this trial (`Workload::clients`).
    pub clients: u32,
    /// The load level: clients, or connections when each client
    /// multiplexes several (client i drives those j with j % clients == i).
    pub load: u32,
    /// The CPUs the whole workload is confined to at this point; a
    /// workload's own placement chooses among these only.
    pub cpus: Vec<usize>,
    /// The trial's scratch directory (removed after the trial).
    pub scratch: PathBuf,
    /// A seed for the client's random choices (an operation mix), different
    /// for every client and trial, reproducible from the trial number.
    pub seed: u64,
}

/// What the server side knows about where it runs.
#[derive(Debug, Clone)]
pub struct ServerContext {
    /// Clients that will connect in this trial.
    pub load: u32,
    pub cpus: Vec<usize>,
    pub scratch: PathBuf,
}

/// What the supervisor hands to `Workload::prepare`.
#[derive(Debug, Clone)]
pub struct TrialContext {
    pub load: u32,
    pub cpus: Vec<usize>,
    pub scratch: PathBuf,
}

/// The server side's link to the supervisor.
pub trait ServerLink {
    /// The server can take clients now; they are started after this.
    fn ready(&mut self) -> Fallible;
    /// The trial is over: the server should return soon (otherwise it is
    /// killed after a short grace period, which is not an error).
    fn should_stop(&self) -> bool;
}

/// One client of a workload: performs one operation per call.
pub trait Client {
    /// Perform one operation (the timed body: the engine reads the clock
    /// just before and just after this call) and return the index of its
    /// type in `Workload::op_types`. Must not allocate in a workload's hot
    /// path; resources belong in `Workload::client`.
    fn op(&mut self) -> Fallible<usize>;
    /// When the operation `op` just returned really began, on
    /// CLOCK_MONOTONIC (`clock::now_ns`), if not at the call: for a client
    /// that keeps several operations in flight (one per connection it
    /// multiplexes), or one whose operation began elsewhere (chat: the
    /// send time a delivered message carries). None (the default): the
    /// engine's clock read just before the call, the right start for one
    /// at a time. Closed loop only: an open loop measures from the
    /// intended start.
    fn started_ns(&self) -> Option<u64> {
        None
    }
    /// Bytes the operation `op` just returned moved (request and response
    /// payload), for a workload whose operations differ in size (web: a
    /// 100-byte page or a 900 KB file) and that says so with
    /// `Workload::counts_bytes`. The engine sums it over the window.
    fn bytes(&self) -> u64 {
        0
    }
    /// The CPU time the operation `op` just returned cost, when the client
    /// measures it (its thread's CPU clock read around the operation, and
    /// a server's share where it can see it): the engine keeps the mean
    /// per operation type over the window (seed 004's CPU time per
    /// transaction). None (the default): not measured.
    fn cpu_ns(&self) -> Option<u64> {
        None
    }
    /// How many equal dependent steps one operation is (1, the default:
    /// the operation itself). A client whose step is too short to time
    /// alone — one load of a pointer chase, shorter than the two clock
    /// reads around it — makes each operation a batch of `steps` of them,
    /// and the engine records the batch's time over `steps` (rounded to
    /// the nearest ns): each step's mean latency over its batch, so the
    /// percentiles are those of batch means.
    fn steps(&self) -> u64 {
        1
    }
}

/// A system workload: an optional server side and L clients.
///
/// Order in one trial: `prepare` in the supervising process; `serve` in a
/// forked server process (if `has_server`), which calls `ready`; `client`
/// in each client process or thread, then `op` in a loop until the trial
/// ends; the client is dropped; the server is asked to stop, then killed;
/// `release` in the supervising process. Everything `prepare` made is
/// inherited by the forked processes (e.g. a listening socket).
pub trait Workload: Sync {
    /// Processes or threads.
    fn client_kind(&self) -> ClientKind {
        ClientKind::Processes
    }
    /// Names of the operation types of the mix (one histogram each).
    fn op_types(&self) -> &[&str] {
        &["op"]
    }
    /// How many client processes or threads drive `load` on a point of
    /// `cpus` CPUs: `load` (the default, one each), or fewer when each
    /// multiplexes several connections. Clamped to 1..=load.
    fn clients(&self, load: u32, _cpus: usize) -> u32 {
        load
    }
    /// The workload's own pacing, when one of its parameters sets it (an
    /// open-loop rate): it replaces the plan's. None: the plan's.
    fn pacing(&self) -> Option<Pacing> {
        None
    }
    /// The most clients this workload supports.
    fn max_load(&self) -> Option<u32> {
        None
    }
    /// The fewest clients this workload can run with (a chat room needs
    /// two); the default ladder starts here.
    fn min_load(&self) -> u32 {
        1
    }
    /// The ladder measured when the spec names no loads, on `usable` CPUs:
    /// doubling from `min_load` to 4 × the CPUs, within `max_load`. A
    /// workload may shorten it (a quick run of one that is flat past one
    /// client per CPU); loads named in the spec are never bounded by it.
    fn default_loads(&self, usable: usize) -> Vec<u32> {
        sweep::default_loads_from(self.min_load(), usable, self.max_load())
    }
    /// Bytes one operation moves, when the workload is a bandwidth (one
    /// read of a fixed buffer): reports then show throughput in MB/s.
    fn bytes_per_op(&self) -> Option<u64> {
        None
    }
    /// Whether its clients count the bytes of each operation
    /// (`Client::bytes`): points then carry the bytes per second moved,
    /// and reports the bit rate per connection (SPECweb99's measure).
    fn counts_bytes(&self) -> bool {
        false
    }
    /// Refuse a load this machine cannot run (descriptor limits, memory),
    /// with the limit and the remedy named. Called before anything runs.
    fn check_load(&self, _load: u32) -> Result<(), String> {
        Ok(())
    }
    /// Untimed, in the supervising process before each trial's processes
    /// start: make what the server and the clients share.
    fn prepare(&mut self, _ctx: &TrialContext) -> Fallible {
        Ok(())
    }
    /// In the supervising process after every process of the trial ended
    /// (also after a failure): release what `prepare` made.
    fn release(&mut self) {}
    /// The trial plan this workload runs under at `load`, given the run's.
    /// A workload that is itself a schedule (a wake-up every interval for
    /// a duration: `rt_wake`) sets its pacing and window here. Must be
    /// idempotent. Default: the run's plan, with the workload's own pacing
    /// (`pacing`) if it has one.
    fn trial_plan(&self, run: &TrialPlan, _load: u32) -> TrialPlan {
        TrialPlan {
            pacing: self.pacing().unwrap_or(run.pacing),
            ..run.clone()
        }
    }
    fn has_server(&self) -> bool {
        false
    }
    /// CPU time, ns, that a server outside the trial (on another host:
    /// `touchstone serve`) has used so far, as that server reports it; the
    /// supervisor reads it at the window's edges for the server's CPU per
    /// operation. None: no such server, or it did not answer.
    fn remote_server_cpu_ns(&self) -> Option<u64> {
        None
    }
    /// Operations done so far by traffic the workload runs beside its
    /// clients, when it has such traffic and its throughput is that
    /// traffic's, not the clients' (`loaded_latency`: memory traffic from
    /// generator processes, counted as they go; its one client, a pointer
    /// chase, gives the latency). The supervisor reads it at the window's
    /// edges, as it reads the CPU clocks: the trial's operations and
    /// throughput are then the count's rise over that wall-clock span,
    /// while the clients' operations still give the latency histograms.
    /// None (the default): the clients' operations are the throughput.
    fn traffic_ops(&self) -> Option<u64> {
        None
    }
    /// The processes beside the clients that make the traffic
    /// `traffic_ops` counts (loaded_latency's generators). The supervisor
    /// reads their threads at the window's edges too, for touchstone's
    /// check on itself: with traffic counted the clients are probes, and
    /// these are the threads that could bound the figure. Empty (the
    /// default) where the clients make the throughput.
    fn traffic_pids(&self) -> Vec<libc::pid_t> {
        Vec::new()
    }
    /// The server side, in its own forked process (it may start threads).
    /// Call `link.ready()` once clients can be served; return when
    /// `link.should_stop()` or when every client has gone.
    fn serve(&self, _ctx: &ServerContext, _link: &mut dyn ServerLink) -> Fallible {
        Err("this workload has no server side".into())
    }
    /// Make one client (connect, open files) in its process or thread.
    fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>>;
}

/// Why a trial or sweep did not produce a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkloadError {
    /// Bad input, refused before anything ran.
    #[error("{0}")]
    Invalid(String),
    /// The engine could not make its pipes, mapping or scratch directory.
    #[error("cannot start the trial: {0}")]
    Setup(String),
    #[error("load {load}: client {client} failed: {message}")]
    ClientFailed {
        load: u32,
        client: u32,
        message: String,
    },
    #[error("load {load}: client {client} died: {how}")]
    ClientDied { load: u32, client: u32, how: String },
    #[error("load {load}: the server failed: {message}")]
    ServerFailed { load: u32, message: String },
    #[error("load {load}: the server died: {how}")]
    ServerDied { load: u32, how: String },
    #[error("load {load}: {who} made no progress for {secs} s; stopped the trial")]
    Stalled { load: u32, who: String, secs: u64 },
    #[error("interrupted")]
    Interrupted,
}

/// The soft limit on open files (`ulimit -n`) of processes started now.
pub fn open_files_limit() -> u64 {
    soft_limit(libc::RLIMIT_NOFILE)
}

/// The soft limit on processes and threads of this user (`ulimit -u`).
pub fn tasks_limit() -> u64 {
    soft_limit(libc::RLIMIT_NPROC)
}

/// The soft limit on `resource`; u64::MAX when unlimited or unknown.
fn soft_limit(resource: libc::__rlimit_resource_t) -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills a local struct.
    if unsafe { libc::getrlimit(resource, &mut r) } != 0 || r.rlim_cur == libc::RLIM_INFINITY {
        return u64::MAX;
    }
    r.rlim_cur
}

/// The refusal for a load whose clients and server (processes or threads)
/// would exceed `limit` tasks, if any.
pub fn tasks_error(load: u32, limit: u64) -> Option<String> {
    let needed = load as u64 + 2;
    (needed > limit).then(|| {
        format!(
            "load {load} needs at least {needed} processes or threads, above this user's limit \
             of {limit} (`ulimit -u`); raise it or use a smaller load"
        )
    })
}

/// Refuse a load whose process `who` would need `needed` descriptors, over
/// the open-files limit, naming the limit and the remedy.
pub fn check_open_files(load: u32, needed: u64, who: &str) -> Result<(), String> {
    match open_files_error(load, needed, open_files_limit(), who) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The refusal `check_open_files` gives under `limit`, if any.
pub fn open_files_error(load: u32, needed: u64, limit: u64, who: &str) -> Option<String> {
    (needed > limit).then(|| {
        format!(
            "load {load} needs {needed} open files in {who}, above this shell's limit of {limit} \
             (`ulimit -n`); raise it (e.g. `ulimit -n {}`) or use a smaller load",
            needed.next_power_of_two().max(1024)
        )
    })
}
