//! The engine driven end to end with fake workloads in real processes:
//! every client runs through the whole window, histograms merge exactly,
//! the CPUs are confined, and nothing started by a trial outlives it —
//! after success, a client's death, failure or stall, the server's death,
//! or Ctrl-C. Operations sleep rather than spin, to spare the shared CPUs;
//! no test asserts how long anything took.

use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use touchstone_results::convergence::{assess, Rule};
use touchstone_results::curve::latency_histogram;

use super::*;
use crate::clock::now_ns;

/// Pids the fake workload's processes record, in memory shared across fork.
struct SharedPids {
    base: *mut AtomicI32,
    n: usize,
}
unsafe impl Send for SharedPids {}
unsafe impl Sync for SharedPids {}

impl SharedPids {
    fn new(n: usize) -> SharedPids {
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                n * 4,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        SharedPids {
            base: p as *mut AtomicI32,
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
    fn all(&self) -> Vec<i32> {
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
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            let rest = &stat[stat.rfind(')').unwrap() + 1..];
            let ppid: i32 = rest.split_whitespace().nth(1).unwrap().parse().unwrap();
            ppid != unsafe { libc::getpid() }
        }
    }
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
struct Fake {
    kind: ClientKind,
    types: Vec<&'static str>,
    server: bool,
    op_ns: u64,
    fault: Fault,
    pids: SharedPids,
    max: Option<u32>,
    /// When set, counts the clients created so far (across forks), and
    /// each new client's operations take longer than the last one's: no
    /// two trials can have the same throughput, so no trial series
    /// converges by chance.
    slowing: Option<SharedPids>,
}

impl Fake {
    fn new(kind: ClientKind) -> Fake {
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

fn sleep_ns(ns: u64) {
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

fn short() -> TrialPlan {
    TrialPlan {
        warmup_ns: 50_000_000,
        window_ns: 150_000_000,
        stall_timeout: Duration::from_secs(20),
        ..TrialPlan::default()
    }
}

fn all_cpus() -> Vec<usize> {
    cpu::usable_cpus().unwrap()
}

fn assert_sound(o: &TrialOutcome, load: u32) {
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

#[derive(Default)]
struct Recorder {
    outcomes: Vec<TrialOutcome>,
    started: Vec<(u32, usize, u32)>,
    points: usize,
}

impl SweepObserver for Recorder {
    fn trial_started(&mut self, load: u32, cpus: usize, trial: u32) {
        self.started.push((load, cpus, trial));
    }
    fn trial_finished(&mut self, outcome: &TrialOutcome) {
        self.outcomes.push(outcome.clone());
    }
    fn point(&mut self, _: &touchstone_results::curve::Point) {
        self.points += 1;
    }
}

#[test]
fn a_sweep_measures_every_load_at_every_cpu_count_with_every_client_through_the_window() {
    let mut w = Fake::new(ClientKind::Processes);
    w.server = true;
    let usable = all_cpus().len() as u32;
    let plan = SweepPlan {
        loads: Some(vec![1, 3]),
        cpu_counts: vec![1, usable + 1],
        trial: short(),
        rule: Rule {
            confidence: 0.95,
            width: 1.0,
            min_trials: 2,
            max_trials: 3,
        },
        budget: None,
    };
    let mut rec = Recorder::default();
    let s = sweep(&mut w, &plan, &mut rec).unwrap();
    assert_eq!(s.unmeasured_cpus, vec![usable + 1]);
    let counts: Vec<u32> = if usable == 1 {
        vec![1]
    } else {
        vec![1, usable]
    };
    assert_eq!(s.points.len(), 2 * counts.len());
    assert_eq!(rec.points, s.points.len());
    let mut k = 0;
    for &c in &counts {
        for load in [1, 3] {
            let p = &s.points[k];
            k += 1;
            assert_eq!((p.load, p.cpus), (load, c));
            assert_eq!(p.cpu_ids.len(), c as usize);
            assert!((2..=3).contains(&p.trials.len()));
            assert!(p.throughput > 0.0);
            assert!(p.latency.p50_ns <= p.latency.p99_ns && p.latency.p99_ns <= p.latency.max_ns);
            assert!(p.service_demand.server_ns_per_op.is_some());
            let split = p.cpu;
            let sum =
                split.user + split.system + split.irq + split.softirq + split.steal + split.idle;
            assert!((sum - 1.0).abs() < 1e-9 || sum == 0.0, "{split:?}");
            // The point's histogram holds exactly its kept trials' operations.
            let kept_ops: u64 = p.kept_trials().map(|t| t.ops).sum();
            assert_eq!(p.latency.count, kept_ops);
            assert_eq!(p.latency.histogram.decode().unwrap().len(), kept_ops);
        }
    }
    // The curve of real points survives the results model's JSON: counts
    // and histograms exactly, floats to their last digit or so (serde_json
    // parses floats without its `float_roundtrip` feature).
    let curve = s.clone().into_curve("fake", Default::default(), "op");
    assert_eq!(curve.unmeasured_cpus, vec![usable + 1]);
    let back: touchstone_results::curve::Curve =
        serde_json::from_str(&serde_json::to_string(&curve).unwrap()).unwrap();
    assert_eq!(back.points.len(), curve.points.len());
    for (b, p) in back.points.iter().zip(&curve.points) {
        assert_eq!(b.latency.histogram, p.latency.histogram);
        let ints = |l: &touchstone_results::curve::Latency| {
            (
                l.count, l.min_ns, l.p50_ns, l.p90_ns, l.p99_ns, l.p999_ns, l.max_ns,
            )
        };
        assert_eq!(ints(&b.latency), ints(&p.latency));
        assert_eq!(b.latency.histogram.decode().unwrap().len(), p.latency.count);
        assert_eq!(
            (b.load, b.cpus, b.trials.len()),
            (p.load, p.cpus, p.trials.len())
        );
        assert!((b.throughput - p.throughput).abs() <= 1e-12 * p.throughput);
        assert_eq!(b.convergence.converged, p.convergence.converged);
    }
    assert_eq!(rec.outcomes.len(), rec.started.len());
    for o in &rec.outcomes {
        assert!(
            o.every_client_ran_through(),
            "{:?} {:?}",
            o.window,
            o.clients
        );
        assert!(o.pids.iter().all(|&p| gone(p)));
    }
}

#[test]
fn a_time_budget_stops_trials_at_the_minimum_and_flags_the_point() {
    // A width no trial series reaches: without a budget every point runs
    // to max_trials; with a budget already spent, each runs its minimum
    // and says the budget cut it.
    let rule = Rule {
        confidence: 0.95,
        width: 1e-12,
        min_trials: 2,
        max_trials: 4,
    };
    let mut w = Fake::new(ClientKind::Processes);
    w.op_ns = 100_000;
    let cpus = all_cpus().len() as u32;
    let plan = |budget| SweepPlan {
        loads: Some(vec![1, 2]),
        cpu_counts: vec![cpus],
        trial: short(),
        rule,
        budget,
    };
    let spent = sweep(
        &mut w,
        &plan(Some(Budget::Total(Duration::from_millis(1)))),
        &mut Recorder::default(),
    )
    .unwrap();
    for p in &spent.points {
        assert_eq!(p.trials.len(), 2, "load {}", p.load);
        assert!(!p.convergence.converged && p.convergence.cut_by_budget);
    }
    // Two trials with equal throughputs would converge at any width.
    w.slowing = Some(SharedPids::new(1));
    let free = sweep(&mut w, &plan(None), &mut Recorder::default()).unwrap();
    for p in &free.points {
        assert_eq!(p.trials.len(), 4, "load {}", p.load);
        assert!(!p.convergence.converged && !p.convergence.cut_by_budget);
    }
    assert_eq!(
        Budget::PerPoint(Duration::from_secs(22)).total(4),
        Duration::from_secs(88)
    );
}

#[test]
fn bad_input_is_refused_before_anything_runs() {
    let mut w = Fake::new(ClientKind::Processes);
    w.max = Some(8);
    let err = |plan: &SweepPlan| validate(&w, plan, 2).unwrap_err().to_string();
    let base = SweepPlan::quick();
    assert!(err(&SweepPlan {
        loads: Some(vec![1, 0]),
        ..base.clone()
    })
    .contains("load 0"));
    assert!(err(&SweepPlan {
        loads: Some(vec![9]),
        ..base.clone()
    })
    .contains("maximum of 8"));
    assert!(err(&SweepPlan {
        loads: Some(vec![7]),
        ..base.clone()
    })
    .contains("ulimit -n"));
    assert!(err(&SweepPlan {
        cpu_counts: vec![0],
        ..base.clone()
    })
    .contains("CPU count of 0"));
    let mut zero_width = base.clone();
    zero_width.rule.width = 0.0;
    assert!(err(&zero_width).contains("width"));
    let mut no_rate = base.clone();
    no_rate.trial.pacing = Pacing::Open { rate: 0.0 };
    assert!(err(&no_rate).contains("rate"));
    let mut slow = base.clone();
    slow.loads = Some(vec![4]);
    slow.trial.pacing = Pacing::Open { rate: 0.1 };
    assert!(err(&slow).contains("every 40.0 s"), "{}", err(&slow));
    let e = tasks_error(100, 64).unwrap();
    assert!(e.contains("ulimit -u") && e.contains("102"), "{e}");
    assert!(tasks_error(10, 64).is_none());
    // The default ladder is bounded by the workload.
    assert_eq!(validate(&w, &base, 4).unwrap(), vec![1, 2, 4, 8]);
    // Nothing ran: no process was ever recorded.
    assert!(w.pids.all().is_empty());
    assert!(run_trial(&mut w, 0, &all_cpus(), &short(), 0).is_err());
}

/// A point from synthetic trials, no clock involved: histograms merge
/// exactly, a dropped warm-up trial is left out of every figure.
#[test]
fn a_point_merges_its_kept_trials_exactly() {
    let outcome = |values: &[u64], throughput: f64, client_cpu: f64| {
        let mut hs = vec![latency_histogram(), latency_histogram()];
        for (i, &v) in values.iter().enumerate() {
            hs[i % 2].record(v).unwrap();
        }
        TrialOutcome {
            load: 2,
            cpus: vec![0],
            started_ns: 0,
            window: (1_000, 1_000_000_001_000),
            ops: values.len() as u64,
            traffic: false,
            throughput,
            // 1 KB per operation.
            bytes: 1000 * values.len() as u64,
            clients: Vec::new(),
            histograms: hs,
            cpu: touchstone_results::curve::CpuSplit {
                user: 0.5,
                idle: 0.5,
                ..Default::default()
            },
            client_cpu_ns: client_cpu,
            server_cpu_ns: Some(client_cpu / 2.0),
            sampled: (0, 0),
            self_check: None,
            pids: Vec::new(),
        }
    };
    let warm = outcome(&[9_000_000; 10], 10.0, 1e9);
    let a = outcome(&[100, 200, 300, 400], 100.0, 400.0);
    let b = outcome(&[150, 250, 350, 450, 550, 650], 101.0, 600.0);
    let c = outcome(&[1000, 2000], 99.0, 200.0);
    let outcomes = vec![warm, a, b, c];
    let rule = Rule::default();
    let series: Vec<f64> = outcomes.iter().map(|o| o.throughput).collect();
    let assessment = assess(&rule, &series);
    assert!(assessment.dropped_first);
    let names = vec!["even".to_string(), "odd".to_string()];
    let p = point_from_trials(2, &[0], &outcomes, &assessment, &rule, &names, true);
    let mut all = latency_histogram();
    for v in [100, 200, 300, 400, 150, 250, 350, 450, 550, 650, 1000, 2000] {
        all.record(v).unwrap();
    }
    let merged = p.latency.histogram.decode().unwrap();
    assert_eq!(merged, all);
    assert_eq!(p.latency.count, 12);
    assert_eq!(p.latency.max_ns, 2000);
    assert_eq!(p.latency.p50_ns, all.value_at_quantile(0.5));
    assert_eq!(p.by_type.len(), 2);
    assert_eq!(p.by_type[0].latency.count + p.by_type[1].latency.count, 12);
    assert!(p.trials[0].dropped && !p.trials[1].dropped);
    assert_eq!(p.throughput, 100.0);
    assert!(p.convergence.converged);
    // (400 + 600 + 200) ns of client CPU over 12 operations.
    assert_eq!(p.service_demand.client_ns_per_op, 100.0);
    assert_eq!(p.service_demand.server_ns_per_op, Some(50.0));
    assert_eq!(p.cpu.user, 0.5);
    // 12 KB over three windows of 1000 s; the warm-up trial's 10 KB left out.
    assert_eq!(p.bytes_per_s, Some(4.0));
    assert_eq!(p.trials[1].bytes, Some(4000));
    let none = point_from_trials(2, &[0], &outcomes, &assessment, &rule, &names, false);
    assert!(none.bytes_per_s.is_none() && none.trials.iter().all(|t| t.bytes.is_none()));
}

/// A workload whose own parameters set an open-loop rate (`pacing`).
struct Paced {
    rate: f64,
    multiplexed: bool,
}
impl Workload for Paced {
    fn pacing(&self) -> Option<Pacing> {
        Some(Pacing::Open { rate: self.rate })
    }
    fn clients(&self, load: u32, _cpus: usize) -> u32 {
        if self.multiplexed {
            1
        } else {
            load
        }
    }
    fn client(&self, _ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        Err("not run".into())
    }
}

#[test]
fn a_workloads_own_rate_replaces_the_plans_pacing_and_is_checked() {
    let w = Paced {
        rate: 500.0,
        multiplexed: false,
    };
    let plan = SweepPlan {
        loads: Some(vec![2]),
        ..SweepPlan::quick()
    };
    assert_eq!(plan.trial.pacing, Pacing::Closed);
    assert_eq!(
        w.trial_plan(&plan.trial, 1).pacing,
        Pacing::Open { rate: 500.0 }
    );
    assert_eq!(validate(&w, &plan, 2).unwrap(), vec![2]);
    // Its rate is held to the same bounds as the plan's…
    let zero = Paced {
        rate: 0.0,
        multiplexed: false,
    };
    let e = validate(&zero, &plan, 2).unwrap_err().to_string();
    assert!(e.contains("rate"), "{e}");
    // …and multiplexed clients cannot keep each connection to a schedule.
    let muxed = Paced {
        rate: 500.0,
        multiplexed: true,
    };
    let e = validate(&muxed, &plan, 2).unwrap_err().to_string();
    assert!(e.contains("one client per connection"), "{e}");
}

/// Counts one operation of traffic per µs of the clock, beside Fake's
/// clients.
struct Traffic(Fake);
impl Workload for Traffic {
    fn traffic_ops(&self) -> Option<u64> {
        Some(crate::clock::now_ns() / 1000)
    }
    fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        self.0.client(ctx)
    }
}

#[test]
fn traffic_beside_the_clients_is_the_throughput_and_the_clients_the_latency() {
    let mut w = Traffic(Fake::new(ClientKind::Processes));
    let o = run_trial(&mut w, 2, &all_cpus(), &short(), 0).unwrap();
    // A million a second, read at the window's edges and scaled to it.
    assert!(o.traffic);
    assert!((o.throughput / 1e6 - 1.0).abs() < 0.01, "{}", o.throughput);
    assert_eq!(
        o.ops,
        (o.throughput * o.window_ns() as f64 / 1e9).round() as u64
    );
    // The clients' 200 µs operations are still what the histograms hold.
    let clients: u64 = o.clients.iter().map(|c| c.window_ops).sum();
    assert_eq!(o.latency().len(), clients);
    assert!(o.latency().value_at_quantile(0.5) >= 200_000);
    assert!(o.every_client_ran_through());
}
