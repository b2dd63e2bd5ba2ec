//! One trial of a workload at one load level, supervised by the calling
//! process (which runs no workload code itself).
//!
//! Order: `prepare`; the server process is forked and reports ready; the
//! clients are forked (L processes, or one process with L threads), set up
//! (connect) and report ready; the start barrier is broadcast; once every
//! client has completed an operation and the warm-up has passed, the
//! window [w0, w1) is published a little ahead of time in the shared
//! mapping; the supervisor samples /proc/stat and every process's CPU clock
//! at w0 and at w1; when every client has completed an operation at or
//! after w1 (so each was running throughout the window) the clients are
//! told to stop, write their records and histograms and exit; the server is
//! asked to stop and, after a short grace, killed; `release`.
//!
//! Coordination is constant in L: one pipe up (one-byte messages: writes of
//! one byte are atomic), one barrier pipe (broadcast by closing its write
//! end) and one shared mapping (`board`). Every process leads its own
//! process group and dies with the supervisor (PR_SET_PDEATHSIG); the
//! supervisor is a child subreaper, so helpers a workload forks die with
//! their group. A client's or the server's error, death or stall, and
//! Ctrl-C, kill every group and reap every process before the error is
//! returned: no hang, orphan or zombie.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use touchstone_results::curve::{latency_histogram, CpuSplit, ServiceDemand, Trial};
use touchstone_results::self_check::SelfCheck;

use crate::clock::{now_ns, Monotonic};
use crate::parallel::pipes::{self, Pipe, DONE, FAILED, READY, WARM};
use crate::parallel::{describe_status, processes_in_group, raise_realtime_floor, MEASURING};
use crate::scratch::ScratchDir;
use crate::signals;

use super::board::Board;
use super::children::{child_preamble, client_main, fail_client, server_main, SERVER_READY};
use super::client::{ClientRecord, Schedule, Timer};
use super::cpu::{self, CpuTicks};
use super::plan::TrialPlan;
use super::threads::{self, ProcessThreads};
use super::{
    ClientContext, ClientKind, ServerContext, TrialContext, Workload, WorkloadError, MAX_OP_TYPES,
};

/// How far ahead of its start the window is published, so that no client
/// completes an operation after w0 before it can see w0.
const PUBLISH_AHEAD_NS: u64 = 2_000_000;
/// The supervisor's longest sleep between looks at its children.
const TICK_MS: u64 = 50;

/// What one trial measured.
#[derive(Debug, Clone)]
pub struct TrialOutcome {
    pub load: u32,
    pub cpus: Vec<usize>,
    /// When the start was broadcast: every client's loop began after it.
    pub started_ns: u64,
    /// The measurement window [w0, w1), CLOCK_MONOTONIC ns.
    pub window: (u64, u64),
    /// Operations completed inside the window, all clients — or, when
    /// `traffic`, the workload's traffic beside them.
    pub ops: u64,
    /// `ops` and `throughput` are the workload's traffic beside its
    /// clients (`Workload::traffic_ops`), not the clients' operations.
    pub traffic: bool,
    /// ops / window, per second.
    pub throughput: f64,
    /// Bytes the window's operations moved, all clients (0 unless the
    /// workload counts bytes).
    pub bytes: u64,
    /// Every client's record, in client order.
    pub clients: Vec<ClientRecord>,
    /// Per operation type, merged over the clients.
    pub histograms: Vec<Histogram<u64>>,
    /// The point's CPUs over the sampled span.
    pub cpu: CpuSplit,
    /// CPU time of the client processes over the window, ns (scaled from
    /// the sampled span to the window).
    pub client_cpu_ns: f64,
    /// Same for the server process, if any.
    pub server_cpu_ns: Option<f64>,
    /// When the supervisor actually sampled (close to w0 and w1).
    pub sampled: (u64, u64),
    /// touchstone's own threads over the window: was one of them the
    /// limit? None when the kernel gave no thread account.
    pub self_check: Option<SelfCheck>,
    /// Every process the trial started; all are reaped when this returns.
    pub pids: Vec<libc::pid_t>,
    /// The machine's energy over the window (`Probe::trial_extras`);
    /// empty where no source is readable.
    pub energy: Vec<(String, f64)>,
}

impl TrialOutcome {
    pub fn window_ns(&self) -> u64 {
        self.window.1 - self.window.0
    }

    /// Whether every client was running throughout the window.
    pub fn every_client_ran_through(&self) -> bool {
        self.clients
            .iter()
            .all(|c| c.ran_through(self.window.0, self.window.1))
    }

    /// All operation types merged.
    pub fn latency(&self) -> Histogram<u64> {
        let mut all = latency_histogram();
        for h in &self.histograms {
            all.add(h).expect("latency histograms share their bounds");
        }
        all
    }

    /// CPU time per operation on each side.
    pub fn service_demand(&self) -> ServiceDemand {
        let per_op = |ns: f64| {
            if self.ops == 0 {
                0.0
            } else {
                ns / self.ops as f64
            }
        };
        ServiceDemand {
            client_ns_per_op: per_op(self.client_cpu_ns),
            server_ns_per_op: self.server_cpu_ns.map(per_op),
        }
    }

    /// The results model's record of this trial (`counts_bytes`: the
    /// workload's clients count bytes, so the trial carries them).
    pub fn to_trial(&self, counts_bytes: bool) -> Trial {
        Trial {
            throughput: self.throughput,
            ops: self.ops,
            window_ns: self.window_ns(),
            bytes: counts_bytes.then_some(self.bytes),
            dropped: false,
            cpu: self.cpu,
            service_demand: self.service_demand(),
            self_check: self.self_check.clone(),
            extra: self.energy.iter().cloned().collect(),
        }
    }
}

/// Run one trial of `workload` with `load` clients confined to `cpus`.
/// `trial` numbers the trial at its point (it seeds the clients' choices).
pub fn run_trial(
    workload: &mut dyn Workload,
    load: u32,
    cpus: &[usize],
    plan: &TrialPlan,
    trial: u32,
) -> Result<TrialOutcome, WorkloadError> {
    let probe = (!plan.energy.is_empty()).then(|| crate::energy::Probe {
        sources: plan.energy.clone(),
        read: Box::new(crate::energy::read_to_string),
    });
    run_trial_probed(workload, load, cpus, plan, trial, probe.as_ref())
}

/// `run_trial` with the energy sources and their reader given (tests
/// inject recorded counters).
pub(crate) fn run_trial_probed(
    workload: &mut dyn Workload,
    load: u32,
    cpus: &[usize],
    plan: &TrialPlan,
    trial: u32,
    energy: Option<&crate::energy::Probe>,
) -> Result<TrialOutcome, WorkloadError> {
    let own = workload.trial_plan(plan, load);
    let plan = &own;
    let types = workload.op_types().len();
    if load == 0 {
        return Err(WorkloadError::Invalid("load must be at least 1".into()));
    }
    if !(1..=MAX_OP_TYPES).contains(&types) {
        return Err(WorkloadError::Invalid(format!(
            "a workload has 1 to {MAX_OP_TYPES} operation types, not {types}"
        )));
    }
    if cpus.is_empty() {
        return Err(WorkloadError::Invalid("no CPUs to run on".into()));
    }
    // One trial or measurement at a time per process: children forked for
    // one would inherit the other's barrier pipe and hold it open.
    let _one_at_a_time = MEASURING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    signals::become_subreaper();
    crate::parallel::quiet_panics_in_children();
    raise_realtime_floor();
    let setup = |e: std::io::Error| WorkloadError::Setup(e.to_string());
    let scratch = ScratchDir::create().map_err(setup)?;
    // The processes or threads that drive the load (fewer than `load` when
    // each multiplexes several connections, as neper's flows).
    let clients = workload.clients(load, cpus.len()).clamp(1, load);
    let board = Board::new(clients as usize, types).map_err(setup)?;
    let up = Pipe::new().map_err(setup)?;
    let start = Pipe::new().map_err(setup)?;
    let tctx = TrialContext {
        load,
        cpus: cpus.to_vec(),
        scratch: scratch.path().to_path_buf(),
    };
    workload
        .prepare(&tctx)
        .map_err(|e| WorkloadError::Setup(e.0))?;
    let mut sup = Supervisor {
        load,
        clients,
        cpus,
        plan,
        board: &board,
        up,
        start,
        procs: Vec::new(),
        counts: Counts::default(),
        started: false,
        beats: Vec::new(),
        energy,
    };
    let result = sup.run(&*workload, &tctx, trial);
    if result.is_err() {
        sup.kill_and_reap();
    }
    sup.sweep_groups();
    workload.release();
    drop(scratch);
    result
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Server,
    /// One client process.
    Client(u32),
    /// The process holding every client thread.
    Threads,
}

struct Proc {
    pid: libc::pid_t,
    role: Role,
    alive: bool,
    clock: Option<libc::clockid_t>,
}

#[derive(Debug, Default)]
struct Counts {
    server_ready: u32,
    ready: u32,
    warm: u32,
    done: u32,
}

struct Sample {
    t: u64,
    stat: Vec<(usize, CpuTicks)>,
    clients: u64,
    server: Option<u64>,
    /// Every thread of every process of the trial.
    threads: Vec<ProcessThreads>,

    /// `Workload::traffic_ops` at this moment.
    traffic: Option<u64>,
    /// The energy counters, with when they were read.
    energy: Option<(crate::energy::Snapshot, u64)>,
}

struct Supervisor<'a> {
    load: u32,
    /// Client processes or threads (board slots): `Workload::clients`.
    clients: u32,
    cpus: &'a [usize],
    plan: &'a TrialPlan,
    board: &'a Board,
    up: Pipe,
    start: Pipe,
    procs: Vec<Proc>,
    counts: Counts,
    /// The start barrier has been broadcast.
    started: bool,
    /// Each client's last progress count and when it moved.
    beats: Vec<(u64, Instant)>,
    /// The machine's energy counters, read at w0 and w1 with the CPUs.
    energy: Option<&'a crate::energy::Probe>,
}

impl Supervisor<'_> {
    fn run(
        &mut self,
        w: &dyn Workload,
        tctx: &TrialContext,
        trial: u32,
    ) -> Result<TrialOutcome, WorkloadError> {
        let load = self.load;
        if w.has_server() {
            let ctx = ServerContext {
                load,
                cpus: tctx.cpus.clone(),
                scratch: tctx.scratch.clone(),
            };
            let (board, up) = (self.board, self.up.write_fd());
            self.fork(Role::Server, || server_main(w, &ctx, board, up))?;
            self.wait_for("the server to become ready", |c| c.server_ready == 1)?;
        }
        let clients = self.clients;
        let ctx = |i: u32| ClientContext {
            client: i,
            clients,
            load,
            cpus: tctx.cpus.clone(),
            scratch: tctx.scratch.clone(),
            seed: client_seed(trial, i),
        };
        let (board, up, start) = (self.board, self.up.write_fd(), self.start.read_fd());
        let pacing = self.plan.pacing;
        match w.client_kind() {
            ClientKind::Processes => {
                for i in 0..clients {
                    let c = ctx(i);
                    let schedule = Schedule::for_client(pacing, i, clients);
                    self.fork(Role::Client(i), || {
                        client_main(w, &c, schedule, board, up, start)
                    })?;
                }
            }
            ClientKind::Threads => {
                self.fork(Role::Threads, || {
                    std::thread::scope(|s| {
                        for i in 0..clients {
                            let c = ctx(i);
                            let schedule = Schedule::for_client(pacing, i, clients);
                            let spawned = std::thread::Builder::new()
                                .name(format!("client-{i}"))
                                .spawn_scoped(s, move || {
                                    client_main(w, &c, schedule, board, up, start)
                                });
                            if let Err(e) = spawned {
                                fail_client(board, i, &format!("cannot start its thread: {e}"), up);
                                break;
                            }
                        }
                    });
                    0
                })?;
            }
        }
        // Only the children write the up pipe now.
        self.up.write = None;
        pipes::set_nonblocking(self.up.read_fd());

        self.wait_for("every client to set up", |c| c.ready == clients)?;
        self.start.write = None; // the start broadcast
        let started_at = now_ns();
        self.started = true;
        self.beats = (0..clients).map(|_| (0, Instant::now())).collect();
        self.wait_for("every client's first operation", |c| c.warm == clients)?;

        let w0 = (started_at + self.plan.warmup_ns).max(now_ns() + PUBLISH_AHEAD_NS);
        let w1 = w0 + self.plan.window_ns;
        self.board.publish_window(w0, w1);
        self.sleep_until(w0)?;
        let a = self.sample(w);
        self.sleep_until(w1)?;
        let b = self.sample(w);
        self.wait_for("every client to run past the window", |c| c.done == clients)?;

        self.board.header().stop.store(1, Ordering::Release);
        let has_clients = |s: &Self| s.procs.iter().any(|p| p.alive && p.role != Role::Server);
        let deadline = Instant::now() + self.plan.stall_timeout;
        while has_clients(self) {
            if Instant::now() > deadline {
                return Err(self.stalled("clients leaving after the trial"));
            }
            self.tick(TICK_MS)?;
        }
        self.stop_server()?;

        let mut records = Vec::with_capacity(clients as usize);
        let mut histograms = vec![latency_histogram(); w.op_types().len()];
        for i in 0..clients as usize {
            records.push(self.board.record(i));
            for (ty, merged) in histograms.iter_mut().enumerate() {
                let h = self.board.histogram(i, ty).map_err(WorkloadError::Setup)?;
                merged
                    .add(&h)
                    .expect("latency histograms share their bounds");
            }
        }
        let sampled_ns = b.t.saturating_sub(a.t).max(1) as f64;
        let scale = (w1 - w0) as f64 / sampled_ns;
        let split = cpu::split(&a.stat, &b.stat, self.cpus);
        let own = threads::check(
            &a.threads,
            &b.threads,
            b.t.saturating_sub(a.t),
            self.cpus.len() as u32,
            &split,
        );

        // Traffic beside the clients is counted over the sampled span and
        // scaled to the window, as the CPU clocks are.
        let ops: u64 = match a.traffic.zip(b.traffic) {
            Some((x, y)) => (y.saturating_sub(x) as f64 * scale).round() as u64,
            None => records.iter().map(|c| c.window_ops).sum(),
        };
        Ok(TrialOutcome {
            load,
            cpus: self.cpus.to_vec(),
            started_ns: started_at,
            window: (w0, w1),
            ops,
            traffic: a.traffic.is_some() && b.traffic.is_some(),
            throughput: ops as f64 * 1e9 / (w1 - w0) as f64,
            bytes: records.iter().map(|c| c.window_bytes).sum(),
            clients: records,
            histograms,
            cpu: split,
            client_cpu_ns: b.clients.saturating_sub(a.clients) as f64 * scale,
            server_cpu_ns: a
                .server
                .zip(b.server)
                .map(|(x, y)| y.saturating_sub(x) as f64 * scale),
            sampled: (a.t, b.t),
            self_check: own,
            pids: self.procs.iter().map(|p| p.pid).collect(),
            energy: match (self.energy, a.energy, b.energy) {
                (Some(p), Some((x, t0)), Some((y, t1))) => {
                    p.trial_extras(&x, &y, t1.saturating_sub(t0), w1 - w0, ops)
                }
                _ => Vec::new(),
            },
        })
    }

    /// Fork a child of the trial: its own process group, dies with us,
    /// confined to the point's CPUs, then `body`, then `_exit`.
    fn fork(&mut self, role: Role, body: impl FnOnce() -> i32) -> Result<(), WorkloadError> {
        let parent = unsafe { libc::getpid() };
        // SAFETY: fork; the child runs `body` and leaves with _exit.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(WorkloadError::Setup(format!(
                "fork: {}",
                std::io::Error::last_os_error()
            )));
        }
        if pid == 0 {
            child_preamble(parent, &self.up, &self.start);
            let code = match cpu::confine(self.cpus) {
                Err(e) => {
                    let msg = e.to_string();
                    match role {
                        Role::Server => self.board.set_server_error(&msg),
                        Role::Client(i) => self.board.set_client_error(i as usize, &msg),
                        Role::Threads => self.board.set_client_error(0, &msg),
                    }
                    let _ = pipes::send(self.up.write_fd(), FAILED);
                    1
                }
                Ok(()) => {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or(101)
                }
            };
            // _exit: none of the supervisor's destructors run here.
            unsafe { libc::_exit(code) };
        }
        // SAFETY: our own fresh child.
        unsafe { libc::setpgid(pid, pid) };
        self.procs.push(Proc {
            pid,
            role,
            alive: true,
            clock: cpu::process_clock(pid).ok(),
        });
        Ok(())
    }

    /// Wait until `done(counts)`, watching for failures; a phase that takes
    /// longer than the stall timeout is a stall.
    fn wait_for(
        &mut self,
        what: &str,
        done: impl Fn(&Counts) -> bool,
    ) -> Result<(), WorkloadError> {
        let deadline = Instant::now() + self.plan.stall_timeout;
        while !done(&self.counts) {
            if Instant::now() > deadline {
                return Err(self.stalled(&format!("waiting for {what}")));
            }
            self.tick(TICK_MS)?;
        }
        Ok(())
    }

    /// Sleep until `t` (CLOCK_MONOTONIC), watching for failures meanwhile.
    fn sleep_until(&mut self, t: u64) -> Result<(), WorkloadError> {
        loop {
            let now = now_ns();
            if now >= t {
                return Ok(());
            }
            let left_ms = (t - now) / 1_000_000;
            if left_ms >= 2 {
                self.tick((left_ms - 1).min(TICK_MS))?;
            } else {
                Monotonic.sleep_until(t);
            }
        }
    }

    fn stalled(&self, who: &str) -> WorkloadError {
        WorkloadError::Stalled {
            load: self.load,
            who: who.to_string(),
            secs: self.plan.stall_timeout.as_secs(),
        }
    }

    /// One look at the children: messages, failures, deaths, stalls, Ctrl-C.
    fn tick(&mut self, wait_ms: u64) -> Result<(), WorkloadError> {
        if signals::interrupted() {
            return Err(WorkloadError::Interrupted);
        }
        let mut pfd = libc::pollfd {
            fd: self.up.read_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; EINTR (Ctrl-C) is seen on the next tick.
        unsafe { libc::poll(&mut pfd, 1, wait_ms as libc::c_int) };
        let mut buf = [0u8; 256];
        loop {
            // Before the clients are forked the pipe may block, but poll
            // said ready or we skip: a read only follows POLLIN.
            if pfd.revents & libc::POLLIN == 0 {
                break;
            }
            let r = pipes::read_waiting(self.up.read_fd(), &mut buf);
            if r == 0 {
                break;
            }
            for &b in &buf[..r] {
                match b {
                    SERVER_READY => self.counts.server_ready += 1,
                    READY => self.counts.ready += 1,
                    WARM => self.counts.warm += 1,
                    DONE => self.counts.done += 1,
                    FAILED => return Err(self.failure()),
                    _ => {}
                }
            }
            if r < buf.len() {
                break;
            }
            // More may be waiting; poll again without blocking.
            pfd.revents = 0;
            unsafe { libc::poll(&mut pfd, 1, 0) };
        }
        self.reap_exits()?;
        self.check_stalls()
    }

    /// The error a FAILED message stands for: the server's, else the first
    /// client's that wrote one.
    fn failure(&self) -> WorkloadError {
        let load = self.load;
        if let Some(message) = self.board.server_error() {
            return WorkloadError::ServerFailed { load, message };
        }
        (0..self.clients)
            .find_map(|i| {
                self.board
                    .client_error(i as usize)
                    .map(|message| WorkloadError::ClientFailed {
                        load,
                        client: i,
                        message,
                    })
            })
            .unwrap_or(WorkloadError::ClientFailed {
                load,
                client: 0,
                message: "failed without saying why".into(),
            })
    }

    /// Children that ended: fine only after the trial told them to.
    fn reap_exits(&mut self) -> Result<(), WorkloadError> {
        let load = self.load;
        let stopping = self.board.header().stop.load(Ordering::Relaxed) == 1;
        for k in 0..self.procs.len() {
            if !self.procs[k].alive {
                continue;
            }
            let mut st = 0;
            // SAFETY: polling our own child.
            let r = unsafe { libc::waitpid(self.procs[k].pid, &mut st, libc::WNOHANG) };
            if r != self.procs[k].pid {
                continue;
            }
            self.procs[k].alive = false;
            let exited_0 = libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0;
            match self.procs[k].role {
                Role::Server => {
                    if exited_0 && stopping {
                        continue;
                    }
                    if let Some(message) = self.board.server_error() {
                        return Err(WorkloadError::ServerFailed { load, message });
                    }
                    let how = if exited_0 {
                        "returned before the trial ended".to_string()
                    } else {
                        describe_status(st)
                    };
                    return Err(WorkloadError::ServerDied { load, how });
                }
                Role::Client(i) => {
                    if exited_0 && self.board.finished(i as usize) {
                        continue;
                    }
                    if let Some(message) = self.board.client_error(i as usize) {
                        return Err(WorkloadError::ClientFailed {
                            load,
                            client: i,
                            message,
                        });
                    }
                    return Err(WorkloadError::ClientDied {
                        load,
                        client: i,
                        how: describe_status(st),
                    });
                }
                Role::Threads => {
                    let unfinished = (0..self.clients).find(|&i| !self.board.finished(i as usize));
                    let Some(i) = unfinished else { continue };
                    if exited_0 {
                        if let Some(e) = (0..self.clients)
                            .find_map(|i| self.board.client_error(i as usize).map(|m| (i, m)))
                        {
                            return Err(WorkloadError::ClientFailed {
                                load,
                                client: e.0,
                                message: e.1,
                            });
                        }
                    }
                    return Err(WorkloadError::ClientDied {
                        load,
                        client: i,
                        how: format!("the process of the client threads {}", describe_status(st)),
                    });
                }
            }
        }
        Ok(())
    }

    /// After the start: a running client whose progress has not moved for
    /// the stall timeout has stalled.
    fn check_stalls(&mut self) -> Result<(), WorkloadError> {
        if !self.started {
            return Ok(());
        }
        let now = Instant::now();
        for i in 0..self.clients as usize {
            if self.board.finished(i) {
                continue;
            }
            let p = self.board.slot(i).progress.load(Ordering::Relaxed);
            if p != self.beats[i].0 {
                self.beats[i] = (p, now);
            } else if now.duration_since(self.beats[i].1) > self.plan.stall_timeout {
                return Err(self.stalled(&format!("client {i}")));
            }
        }
        Ok(())
    }

    fn sample(&self, w: &dyn Workload) -> Sample {
        let t = now_ns();
        let read = |p: &Proc| p.clock.and_then(cpu::cpu_time_ns).unwrap_or(0);
        // Read once: the count beside the clients, and whether there is one
        // (then the clients are probes).
        let traffic = w.traffic_ops();
        Sample {
            t,
            stat: cpu::read_proc_stat().unwrap_or_default(),
            clients: self
                .procs
                .iter()
                .filter(|p| p.role != Role::Server)
                .map(read)
                .sum(),
            server: match self.procs.iter().find(|p| p.role == Role::Server) {
                Some(p) => Some(read(p)),
                None => w.remote_server_cpu_ns(),
            },
            threads: self
                .procs
                .iter()
                .map(|p| ProcessThreads {
                    role: match p.role {
                        Role::Server => "server".to_string(),
                        Role::Client(i) => format!("client {i}"),
                        Role::Threads => "client process".to_string(),
                    },
                    threads: threads::thread_times(p.pid),
                    probe: p.role != Role::Server && traffic.is_some(),
                })
                .chain(
                    w.traffic_pids()
                        .into_iter()
                        .enumerate()
                        .map(|(i, pid)| ProcessThreads {
                            role: format!("generator {i}"),
                            threads: threads::thread_times(pid),
                            probe: false,
                        }),
                )
                .collect(),
            traffic,
            // Read by the supervisor, which runs no workload code: the
            // clients' timing never includes it.
            energy: self.energy.map(|p| (p.snapshot(), now_ns())),
        }
    }

    /// Ask the server to return; kill it after the grace period.
    fn stop_server(&mut self) -> Result<(), WorkloadError> {
        self.board.header().server_stop.store(1, Ordering::Release);
        let deadline = Instant::now() + self.plan.server_grace;
        while self.procs.iter().any(|p| p.alive) && Instant::now() < deadline {
            self.tick(5)?;
        }
        self.kill_and_reap();
        Ok(())
    }

    fn kill_and_reap(&mut self) {
        for p in self.procs.iter().filter(|p| p.alive) {
            // SAFETY: signalling our own child's process group and itself.
            unsafe {
                libc::kill(-p.pid, libc::SIGKILL);
                libc::kill(p.pid, libc::SIGKILL);
            }
        }
        for p in self.procs.iter_mut().filter(|p| p.alive) {
            let mut st = 0;
            // SAFETY: waiting for our own child.
            unsafe { libc::waitpid(p.pid, &mut st, 0) };
            p.alive = false;
        }
    }

    /// Kill and reap whatever is left in the children's process groups
    /// (helpers re-parented to us, the subreaper).
    fn sweep_groups(&self) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let mut left = false;
            for p in &self.procs {
                for pid in processes_in_group(p.pid) {
                    left = true;
                    // SAFETY: a process of our child's group, ours to reap.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                        libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
                    }
                }
            }
            if !left || Instant::now() > deadline {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// A distinct, reproducible seed per trial and client (splitmix64).
pub(super) fn client_seed(trial: u32, client: u32) -> u64 {
    let mut z = ((trial as u64) << 32 | client as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
