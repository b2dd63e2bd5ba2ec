//! The engine driven end to end with fake workloads in real processes:
//! every client runs through the whole window, histograms merge exactly,
//! the CPUs are confined, and nothing started by a trial outlives it —
//! after success, a client's death, failure or stall, the server's death,
//! or Ctrl-C. Operations sleep rather than spin, to spare the shared CPUs;
//! no test asserts how long anything took.

use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use super::*;
use crate::clock::now_ns;
use crate::parallel::shared::map_shared;

/// Pids the fake workload's processes record, in memory shared across fork.
pub(super) struct SharedPids {
    base: *mut AtomicI32,
    n: usize,
}
unsafe impl Send for SharedPids {}
unsafe impl Sync for SharedPids {}

impl SharedPids {
    pub(super) fn new(n: usize) -> SharedPids {
        SharedPids {
            base: map_shared(n * 4, 0).unwrap() as *mut AtomicI32,
            n,
        }
    }
    fn set(&self, i: usize, pid: i32) {
        assert!(i < self.n);
        unsafe { &*self.base.add(i) }.store(pid, Ordering::SeqCst);
    }
    /// Add one to slot `i`, returning its value before.
    fn bump(&self, i: usize) -> i32 {
        assert!(i < self.n);
        unsafe { &*self.base.add(i) }.fetch_add(1, Ordering::SeqCst)
    }
    pub(super) fn all(&self) -> Vec<i32> {
        (0..self.n)
            .map(|i| unsafe { &*self.base.add(i) }.load(Ordering::SeqCst))
            .filter(|&p| p != 0)
            .collect()
    }
}

impl Drop for SharedPids {
    fn drop(&mut self) {
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.n * 4) };
    }
}

/// Whether `pid` is gone as a child of this process (reaped, not a zombie
/// or a live process of ours).
pub(super) fn gone(pid: i32) -> bool {
    // SAFETY: getpid has no preconditions.
    let ours = unsafe { libc::getpid() };
    crate::parallel::stat_fields(pid).is_none_or(|f| f[1].parse::<i32>().unwrap() != ours)
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Fault {
    None,
    /// Client `c` kills itself with SIGKILL after some operations.
    Dies(u32),
    /// Client `c`'s operation returns an error.
    Fails(u32),
    /// Client `c` panics.
    Panics(u32),
    /// Client `c` blocks forever in an operation.
    Stalls(u32),
    /// Client `c` cannot set up.
    SetupFails(u32),
    /// The server process dies once the clients are running.
    ServerDies,
}

/// Operations sleep `op_ns`; types go round the mix.
pub(super) struct Fake {
    pub(super) kind: ClientKind,
    pub(super) types: Vec<&'static str>,
    pub(super) server: bool,
    pub(super) op_ns: u64,
    fault: Fault,
    pub(super) pids: SharedPids,
    pub(super) max: Option<u32>,
    /// When set, counts the clients created so far (across forks), and
    /// each new client's operations take longer than the last one's: no
    /// two trials can have the same throughput, so no trial series
    /// converges by chance.
    pub(super) slowing: Option<SharedPids>,
}

impl Fake {
    pub(super) fn new(kind: ClientKind) -> Fake {
        Fake {
            kind,
            types: vec!["op"],
            server: false,
            op_ns: 200_000,
            fault: Fault::None,
            pids: SharedPids::new(64),
            max: None,
            slowing: None,
        }
    }
}

pub(super) fn sleep_ns(ns: u64) {
    std::thread::sleep(Duration::from_nanos(ns));
}

struct FakeClient<'a> {
    w: &'a Fake,
    client: u32,
    k: u64,
    op_ns: u64,
}

impl Client for FakeClient<'_> {
    fn op(&mut self) -> Fallible<usize> {
        self.k += 1;
        let me = self.client;
        if self.k == 20 {
            match self.w.fault {
                Fault::Dies(c) if c == me => unsafe {
                    libc::raise(libc::SIGKILL);
                },
                Fault::Fails(c) if c == me => return Err("the fake op broke".into()),
                Fault::Panics(c) if c == me => panic!("fake client {me} panicked"),
                Fault::Stalls(c) if c == me => loop {
                    sleep_ns(1_000_000_000);
                },
                _ => {}
            }
        }
        sleep_ns(self.op_ns);
        Ok((self.k % self.w.types.len() as u64) as usize)
    }
}

impl Workload for Fake {
    fn client_kind(&self) -> ClientKind {
        self.kind
    }
    fn op_types(&self) -> &[&str] {
        &self.types
    }
    fn max_load(&self) -> Option<u32> {
        self.max
    }
    fn check_load(&self, load: u32) -> Result<(), String> {
        if load == 7 {
            return Err("load 7 needs too many open files; raise `ulimit -n`".into());
        }
        Ok(())
    }
    fn has_server(&self) -> bool {
        self.server
    }
    fn serve(&self, ctx: &ServerContext, link: &mut dyn ServerLink) -> Fallible {
        self.pids.set(63, unsafe { libc::getpid() });
        if cpu::usable_cpus()? != ctx.cpus {
            return Err("the server is not confined to the point's CPUs".into());
        }
        link.ready()?;
        let t0 = now_ns();
        while !link.should_stop() {
            if self.fault == Fault::ServerDies && now_ns() - t0 > 20_000_000 {
                unsafe { libc::raise(libc::SIGKILL) };
            }
            sleep_ns(1_000_000);
        }
        Ok(())
    }
    fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        self.pids
            .set(ctx.client as usize, unsafe { libc::getpid() });
        if self.fault == Fault::SetupFails(ctx.client) {
            return Err("cannot reach the fake server".into());
        }
        if cpu::usable_cpus()? != ctx.cpus {
            return Err("the client is not confined to the point's CPUs".into());
        }
        let nth = self.slowing.as_ref().map_or(0, |c| c.bump(0) as u64);
        Ok(Box::new(FakeClient {
            w: self,
            client: ctx.client,
            k: 0,
            op_ns: self.op_ns * (1 + nth),
        }))
    }
}

pub(super) fn short() -> TrialPlan {
    TrialPlan {
        warmup_ns: 50_000_000,
        window_ns: 150_000_000,
        stall_timeout: Duration::from_secs(20),
        ..TrialPlan::default()
    }
}

pub(super) fn all_cpus() -> Vec<usize> {
    cpu::usable_cpus().unwrap()
}

pub(super) fn assert_sound(o: &TrialOutcome, load: u32) {
    assert_eq!(o.clients.len(), load as usize);
    assert!(
        o.every_client_ran_through(),
        "window {:?}, clients {:?}",
        o.window,
        o.clients
    );
    let window_ops: u64 = o.clients.iter().map(|c| c.window_ops).sum();
    assert_eq!(o.ops, window_ops);
    // Merged histograms hold exactly the operations counted.
    assert_eq!(o.latency().len(), o.ops);
    assert!(o.ops > 0);
    assert_eq!(o.throughput, o.ops as f64 * 1e9 / o.window_ns() as f64);
    assert_eq!(o.window_ns(), short().window_ns);
    let l = o.latency();
    assert!(l.value_at_quantile(0.5) <= l.value_at_quantile(0.99));
    assert!(l.value_at_quantile(0.99) <= l.max());
    // Each op sleeps 200 µs at least.
    assert!(l.min() >= 200_000, "{}", l.min());
    // Little's law: L clients in a closed loop = throughput × mean latency
    // (less the time between operations; the window's edges add at most
    // one operation per client).
    let busy = o.throughput * l.mean() / 1e9 / load as f64;
    let edge = l.max() as f64 / o.window_ns() as f64;
    assert!(busy <= 1.0 + edge + 1e-3 && busy > 0.5, "X·R/L = {busy}");
    // Samples taken near the window's edges.
    assert!(o.sampled.0 >= o.window.0 && o.sampled.1 >= o.window.1);
    assert!(o.client_cpu_ns >= 0.0);
    for &pid in &o.pids {
        assert!(gone(pid), "process {pid} outlived the trial");
    }
}

#[test]
fn client_processes_and_a_server_run_through_the_window_and_leave_nothing() {
    let mut w = Fake::new(ClientKind::Processes);
    w.server = true;
    let o = run_trial(&mut w, 3, &all_cpus(), &short(), 0).unwrap();
    assert_sound(&o, 3);
    assert_eq!(o.pids.len(), 4);
    assert!(o.server_cpu_ns.is_some());
    let recorded = w.pids.all();
    assert_eq!(recorded.len(), 4, "three clients and the server");
    for pid in recorded {
        assert!(o.pids.contains(&pid));
    }
}

#[test]
fn client_threads_run_through_the_window_and_leave_nothing() {
    let mut w = Fake::new(ClientKind::Threads);
    w.types = vec!["get", "put", "scan"];
    let o = run_trial(&mut w, 4, &all_cpus(), &short(), 0).unwrap();
    assert_sound(&o, 4);
    assert_eq!(o.pids.len(), 1, "one process holds the threads");
    assert!(o.server_cpu_ns.is_none());
    assert_eq!(o.histograms.len(), 3);
    for h in &o.histograms {
        assert!(!h.is_empty(), "every type of the mix was recorded");
    }
    // All four threads ran in the one process.
    assert!(w.pids.all().iter().all(|&p| p == o.pids[0]));
}

#[test]
fn a_point_confined_to_one_cpu_runs_there() {
    // The fake's client and server refuse to run unconfined.
    let mut w = Fake::new(ClientKind::Processes);
    w.server = true;
    let first = vec![all_cpus()[0]];
    let o = run_trial(&mut w, 2, &first, &short(), 0).unwrap();
    assert_sound(&o, 2);
    assert_eq!(o.cpus, first);
}

#[test]
fn open_loop_clients_follow_the_rate() {
    let mut w = Fake::new(ClientKind::Threads);
    // 2000 ops/s over 2 clients: 1000 each, 1 ms apart, ops of 200 µs.
    let plan = TrialPlan {
        pacing: Pacing::Open { rate: 2000.0 },
        ..short()
    };
    let o = run_trial(&mut w, 2, &all_cpus(), &plan, 0).unwrap();
    assert!(o.every_client_ran_through());
    // The schedule, not the operations' speed, sets the count: no more
    // operations end in the window than were scheduled to start from the
    // start broadcast to the window's end (a client behind schedule
    // catches up), while a closed loop would do several times more.
    let most = 2 * ((o.window.1 - o.started_ns) / 1_000_000 + 1);
    assert!(o.ops <= most, "{} ops above the schedule's {most}", o.ops);
    assert!(o.ops > 0);
}

fn expect_error(w: &mut Fake, load: u32) -> WorkloadError {
    let e = run_trial(w, load, &all_cpus(), &short(), 0).unwrap_err();
    for pid in w.pids.all() {
        assert!(gone(pid), "process {pid} outlived the failed trial ({e})");
    }
    e
}

#[test]
fn a_client_that_dies_ends_the_trial_with_an_error() {
    for kind in [ClientKind::Processes, ClientKind::Threads] {
        let mut w = Fake::new(kind);
        w.server = true;
        w.fault = Fault::Dies(1);
        match expect_error(&mut w, 3) {
            WorkloadError::ClientDied { load, client, how } => {
                assert_eq!(load, 3);
                if kind == ClientKind::Processes {
                    assert_eq!(client, 1);
                }
                assert!(how.contains("signal 9"), "{how}");
            }
            e => panic!("{kind:?}: {e}"),
        }
    }
}

#[test]
fn a_failing_or_panicking_client_names_itself_and_its_error() {
    for (kind, fault, text) in [
        (ClientKind::Processes, Fault::Fails(2), "the fake op broke"),
        (ClientKind::Threads, Fault::Fails(2), "the fake op broke"),
        (
            ClientKind::Threads,
            Fault::Panics(2),
            "panicked: fake client 2",
        ),
        (ClientKind::Processes, Fault::SetupFails(2), "cannot reach"),
    ] {
        let mut w = Fake::new(kind);
        w.fault = fault;
        match expect_error(&mut w, 3) {
            WorkloadError::ClientFailed {
                client, message, ..
            } => {
                assert_eq!(client, 2, "{fault:?}");
                assert!(message.contains(text), "{fault:?}: {message}");
            }
            e => panic!("{kind:?} {fault:?}: {e}"),
        }
    }
}

#[test]
fn a_stalled_client_is_stopped_not_waited_for() {
    let mut w = Fake::new(ClientKind::Processes);
    w.fault = Fault::Stalls(0);
    let plan = TrialPlan {
        stall_timeout: Duration::from_secs(1),
        ..short()
    };
    let e = run_trial(&mut w, 2, &all_cpus(), &plan, 0).unwrap_err();
    assert!(
        matches!(&e, WorkloadError::Stalled { who, .. } if who.contains("client 0") || who.contains("waiting")),
        "{e}"
    );
    for pid in w.pids.all() {
        assert!(gone(pid));
    }
}

#[test]
fn a_server_that_dies_ends_the_trial_with_an_error() {
    let mut w = Fake::new(ClientKind::Processes);
    w.server = true;
    w.fault = Fault::ServerDies;
    match expect_error(&mut w, 2) {
        WorkloadError::ServerDied { how, .. } => assert!(how.contains("signal 9"), "{how}"),
        e => panic!("{e}"),
    }
}

/// Ctrl-C during a trial: the supervisor (a forked copy of this test)
/// stops, and before returning has reaped every process of the trial.
#[test]
fn ctrl_c_stops_the_trial_and_reaps_everything() {
    let w = {
        let mut w = Fake::new(ClientKind::Processes);
        w.server = true;
        w
    };
    // Hold the trial lock across the fork, so the child's copy of it is
    // not held by a thread the child does not have; the child releases it.
    let guard = crate::parallel::MEASURING
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        drop(guard);
        crate::signals::install();
        let mut w = w;
        let plan = TrialPlan {
            warmup_ns: 10_000_000_000,
            ..short()
        };
        let code = match run_trial(&mut w, 3, &all_cpus(), &plan, 0) {
            Err(WorkloadError::Interrupted) if w.pids.all().into_iter().all(gone) => 42,
            Err(WorkloadError::Interrupted) => 43,
            _ => 1,
        };
        unsafe { libc::_exit(code) };
    }
    drop(guard);
    // Wait until the trial's clients and server are running.
    let t0 = now_ns();
    while w.pids.all().len() < 4 && now_ns() - t0 < 20_000_000_000 {
        sleep_ns(10_000_000);
    }
    assert_eq!(w.pids.all().len(), 4, "the trial never started");
    unsafe { libc::kill(pid, libc::SIGINT) };
    let mut st = 0;
    let t1 = now_ns();
    loop {
        let r = unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG) };
        if r == pid {
            break;
        }
        if now_ns() - t1 > 20_000_000_000 {
            unsafe { libc::kill(pid, libc::SIGKILL) };
            unsafe { libc::waitpid(pid, &mut st, 0) };
            panic!("the interrupted trial did not end");
        }
        sleep_ns(10_000_000);
    }
    assert!(libc::WIFEXITED(st), "status {st}");
    assert_eq!(
        libc::WEXITSTATUS(st),
        42,
        "43: interrupted but left processes"
    );
}

#[test]
fn client_seeds_differ_and_repeat() {
    use super::trial::client_seed;
    let mut seen = std::collections::HashSet::new();
    for t in 0..10 {
        for c in 0..100 {
            assert!(seen.insert(client_seed(t, c)));
        }
    }
    assert_eq!(client_seed(3, 7), client_seed(3, 7));
}
