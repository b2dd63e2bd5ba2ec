//! Running a benchmark in N coordinated child processes (lmbench3's benchmp).
//!
//! Every measurement forks, even with N = 1: a benchmark that crashes, leaks
//! or installs signal handlers cannot harm touchstone or the next benchmark.
//! Resources are constant in N: four shared pipes and one shared mapping.
//! Each child leads its own process group and dies with the parent
//! (PR_SET_PDEATHSIG); the parent is a child subreaper, so helpers a
//! benchmark forks are killed and reaped with their group. Any failure —
//! a child's error, death or stall, or Ctrl-C — kills every group and reaps
//! every process before the error is returned: no hang, orphan or zombie.

pub(crate) mod pipes;
pub(crate) mod shared;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use touchstone_results::Interval;

use crate::bench::{Benchmark, Context, Fallible, Shape};
use crate::clock::Monotonic;
use crate::events::{Observer, Phase};
use crate::interval::{run_process, Link};
use crate::plan::{Plan, MAX_REPETITIONS};
use crate::scratch::ScratchDir;
use crate::signals;
use pipes::{Pipe, DONE, FAILED, READY, WARM};
use shared::Slots;

pub(crate) static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The one-measurement-at-a-time lock, for code (tests) that forks a
/// process which will run a measurement or trial: held across the fork,
/// the child's copy is not held by a thread the child does not have; each
/// side drops its guard after the fork.
pub fn hold_across_fork() -> std::sync::MutexGuard<'static, ()> {
    MEASURING.lock().unwrap_or_else(|p| p.into_inner())
}

#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error("{case}: process {process} of {parallel} failed: {message}")]
    Benchmark {
        case: String,
        process: u32,
        parallel: u32,
        message: String,
    },
    #[error("{case}: process {process} of {parallel} died: {how}")]
    Died {
        case: String,
        process: u32,
        parallel: u32,
        how: String,
    },
    #[error("{case}: process {process} of {parallel} made no progress for {secs} s; stopped it")]
    Stalled {
        case: String,
        process: u32,
        parallel: u32,
        secs: u64,
    },
    #[error("interrupted")]
    Interrupted,
    #[error("{case}: {message}")]
    Setup { case: String, message: String },
    #[error("{case}: {message}")]
    Invalid { case: String, message: String },
}

/// One process's timing record.
#[derive(Debug, Clone)]
pub struct ProcessTiming {
    pub process: u32,
    pub iterations: u64,
    /// From the start signal to the stop signal: the process was running the
    /// benchmark throughout (CLOCK_MONOTONIC ns).
    pub running_since: u64,
    pub running_until: u64,
    pub intervals: Vec<Interval>,
    /// Extra figures the benchmark reported in this process.
    pub extras: Vec<(String, f64)>,
}

#[derive(Debug, Clone)]
pub struct Timing {
    pub processes: Vec<ProcessTiming>,
}

/// Measure `bench` with `plan.parallel` coordinated processes.
pub fn measure(
    case: &str,
    bench: &mut dyn Benchmark,
    shape: &Shape,
    plan: &Plan,
    observer: &mut dyn Observer,
) -> Result<Timing, HarnessError> {
    let n = plan.parallel;
    if n == 0 {
        return Err(HarnessError::Invalid {
            case: case.into(),
            message: "parallel must be at least 1".into(),
        });
    }
    if plan.repetitions == 0 || plan.repetitions > MAX_REPETITIONS {
        return Err(HarnessError::Invalid {
            case: case.into(),
            message: format!("repetitions must be 1..={MAX_REPETITIONS}"),
        });
    }
    let setup_err = |e: std::io::Error| HarnessError::Setup {
        case: case.into(),
        message: e.to_string(),
    };
    // One measurement at a time per process: measurements that overlapped
    // would load each other, and children forked for one would inherit the
    // other's barrier pipes and hold them open, so its broadcast (closing the
    // write end) would never reach end-of-file.
    let _one_at_a_time = MEASURING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    signals::become_subreaper();
    quiet_panics_in_children();
    raise_realtime_floor();
    let scratch = ScratchDir::create().map_err(setup_err)?;
    let slots = Slots::new(n as usize, plan.repetitions as usize).map_err(setup_err)?;
    let mut up = Pipe::new().map_err(setup_err)?;
    let mut start = Pipe::new().map_err(setup_err)?;
    let mut go = Pipe::new().map_err(setup_err)?;
    let mut stop = Pipe::new().map_err(setup_err)?;

    observer.phase(case, Phase::Starting);
    let parent = unsafe { libc::getpid() };
    let mut kids = Kids {
        pids: Vec::new(),
        alive: Vec::new(),
    };
    for p in 0..n {
        // SAFETY: fork; the child only runs the benchmark and leaves with _exit.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            let e = std::io::Error::last_os_error();
            kids.kill_and_reap();
            return Err(setup_err(e));
        }
        if pid == 0 {
            let ctx = Context {
                process: p,
                parallel: n,
                scratch: scratch.path().to_path_buf(),
            };
            child_main(
                parent, bench, shape, plan, &ctx, &slots, &up, &start, &go, &stop,
            );
        }
        unsafe { libc::setpgid(pid, pid) };
        kids.pids.push(pid);
        kids.alive.push(true);
    }
    up.write = None; // only children hold the write end now
    pipes::set_nonblocking(up.read_fd());

    let result = supervise(
        case, n, shape, plan, &slots, &mut kids, &up, &mut start, &mut go, &mut stop, observer,
    );
    if result.is_err() {
        kids.kill_and_reap();
    }
    // Helpers a benchmark forked and forgot die with their group.
    kids.sweep_groups();
    drop(scratch);
    result.map(|()| collect(&slots, n))
}

/// A parent at the lowest real-time priority has no level below it for
/// its children; lift it one level (where permitted) so they can have one.
pub(crate) fn raise_realtime_floor() {
    // SAFETY: plain scheduler queries and a best-effort change of our own
    // priority; failure (no permission) leaves things as they were.
    unsafe {
        let policy = libc::sched_getscheduler(0);
        if policy == libc::SCHED_FIFO || policy == libc::SCHED_RR {
            let mut param: libc::sched_param = std::mem::zeroed();
            libc::sched_getparam(0, &mut param);
            if param.sched_priority <= libc::sched_get_priority_min(policy) {
                param.sched_priority += 1;
                libc::sched_setparam(0, &param);
            }
        }
    }
}

struct Kids {
    pids: Vec<libc::pid_t>,
    alive: Vec<bool>,
}

impl Kids {
    fn kill_and_reap(&mut self) {
        for (i, &pid) in self.pids.iter().enumerate() {
            if self.alive[i] {
                // SAFETY: signalling our own child's process group and itself.
                unsafe {
                    libc::kill(-pid, libc::SIGKILL);
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
        for (i, &pid) in self.pids.iter().enumerate() {
            if self.alive[i] {
                let mut st = 0;
                // SAFETY: waiting for our own child.
                unsafe { libc::waitpid(pid, &mut st, 0) };
                self.alive[i] = false;
            }
        }
    }

    /// Kill and reap whatever is left in the children's process groups
    /// (they were re-parented to us, the subreaper).
    fn sweep_groups(&self) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let mut left = false;
            for &pg in &self.pids {
                // Signal 0 to the group tells whether anything (a zombie
                // too) is left in it, without reading /proc for every
                // process of the machine: that scan cost each round
                // milliseconds on a busy machine.
                // SAFETY: probing our own children's process group.
                if unsafe { libc::kill(-pg, 0) } != 0 {
                    continue;
                }
                for pid in processes_in_group(pg) {
                    left = true;
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    let mut st = 0;
                    unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG) };
                }
            }
            if !left || Instant::now() > deadline {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Processes (including zombies) whose process group is `pg`.
pub(crate) fn processes_in_group(pg: libc::pid_t) -> Vec<libc::pid_t> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        let group = stat_fields(pid).and_then(|f| f.get(2)?.parse::<libc::pid_t>().ok());
        if group == Some(pg) {
            out.push(pid);
        }
    }
    out
}

/// The fields of `/proc/PID/stat` after the parenthesised command (which
/// may hold spaces and parentheses): state, ppid, pgrp, …; None when the
/// process is gone.
pub(crate) fn stat_fields(pid: libc::pid_t) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(String::from).collect())
}

#[allow(clippy::too_many_arguments)]
fn supervise(
    case: &str,
    n: u32,
    shape: &Shape,
    plan: &Plan,
    slots: &Slots,
    kids: &mut Kids,
    up: &Pipe,
    start: &mut Pipe,
    go: &mut Pipe,
    stop: &mut Pipe,
    observer: &mut dyn Observer,
) -> Result<(), HarnessError> {
    let (mut ready, mut warm, mut done, mut exited) = (0u32, 0u32, 0u32, 0u32);
    let stall = plan.stall_limit(shape);
    let mut beats: Vec<(u64, Instant)> = (0..n).map(|_| (0, Instant::now())).collect();
    let total = n * plan.repetitions;
    let mut last_progress = u32::MAX;
    let mut warming_reported = false;
    loop {
        if signals::interrupted() {
            return Err(HarnessError::Interrupted);
        }
        let mut pfd = libc::pollfd {
            fd: up.read_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd. EINTR (Ctrl-C) just loops to the check above.
        unsafe { libc::poll(&mut pfd, 1, 50) };
        let mut buf = [0u8; 256];
        loop {
            let r = pipes::read_waiting(up.read_fd(), &mut buf);
            if r == 0 {
                break;
            }
            for &b in &buf[..r] {
                match b {
                    READY => ready += 1,
                    WARM => warm += 1,
                    DONE => done += 1,
                    FAILED => {
                        let (process, message) = (0..n)
                            .find_map(|i| slots.error(i as usize).map(|m| (i, m)))
                            .unwrap_or((0, "unknown error".into()));
                        return Err(HarnessError::Benchmark {
                            case: case.into(),
                            process,
                            parallel: n,
                            message,
                        });
                    }
                    _ => {}
                }
            }
        }
        // Barriers: all ready → start; all warm → time; all done → stop.
        if ready == n && start.write.is_some() {
            start.write = None;
        }
        if warm == n && go.write.is_some() {
            go.write = None;
        }
        if done == n && stop.write.is_some() {
            stop.write = None;
        }
        if ready == n && !warming_reported {
            warming_reported = true;
            observer.phase(case, Phase::Warming);
        }

        // Children that ended: fine only after the stop broadcast.
        for i in 0..n as usize {
            if !kids.alive[i] {
                continue;
            }
            let mut st = 0;
            // SAFETY: polling our own child.
            let r = unsafe { libc::waitpid(kids.pids[i], &mut st, libc::WNOHANG) };
            if r == kids.pids[i] {
                kids.alive[i] = false;
                exited += 1;
                // A child leaves with 0 only after finishing the protocol,
                // which it marks by recording its running window.
                let finished = slots.header(i).running_until.load(Ordering::Acquire) != 0;
                let clean = libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0 && finished;
                if !clean {
                    if let Some(message) = slots.error(i) {
                        return Err(HarnessError::Benchmark {
                            case: case.into(),
                            process: i as u32,
                            parallel: n,
                            message,
                        });
                    }
                    return Err(HarnessError::Died {
                        case: case.into(),
                        process: i as u32,
                        parallel: n,
                        how: describe_status(st),
                    });
                }
            }
        }
        if exited == n {
            return Ok(());
        }

        // Stalls: a live child whose heartbeat has not moved for too long.
        let now = Instant::now();
        let mut progress = 0;
        for i in 0..n as usize {
            let h = slots.header(i);
            progress += h.recorded.load(Ordering::Relaxed);
            let beat = h.heartbeat.load(Ordering::Relaxed);
            // Waiting at the start barrier is not a stall until the barrier
            // has been broadcast; after that, a child still waiting is stuck.
            let waiting = h.waiting.load(Ordering::Acquire) == 1 && start.write.is_some();
            if beat != beats[i].0 || waiting {
                beats[i] = (beat, now);
            } else if kids.alive[i] && now.duration_since(beats[i].1) > stall {
                return Err(HarnessError::Stalled {
                    case: case.into(),
                    process: i as u32,
                    parallel: n,
                    secs: stall.as_secs(),
                });
            }
        }
        if progress != last_progress && warm == n {
            last_progress = progress;
            observer.phase(
                case,
                Phase::Measuring {
                    done: progress,
                    total,
                },
            );
        }
    }
}

pub(crate) fn describe_status(st: libc::c_int) -> String {
    if libc::WIFSIGNALED(st) {
        let sig = libc::WTERMSIG(st);
        // SAFETY: strsignal returns a static string for any number.
        let name = unsafe { std::ffi::CStr::from_ptr(libc::strsignal(sig)) };
        format!("killed by signal {sig} ({})", name.to_string_lossy())
    } else if libc::WIFEXITED(st) {
        format!(
            "exited with status {} before the run ended",
            libc::WEXITSTATUS(st)
        )
    } else {
        format!("ended with wait status {st}")
    }
}

fn collect(slots: &Slots, n: u32) -> Timing {
    let processes = (0..n as usize)
        .map(|i| {
            let h = slots.header(i);
            let recorded = h.recorded.load(Ordering::Acquire) as usize;
            let intervals = (0..recorded)
                .map(|r| {
                    let iv = slots.interval(i, r);
                    Interval {
                        process: i as u32,
                        start_ns: iv.start.load(Ordering::Relaxed),
                        end_ns: iv.end.load(Ordering::Relaxed),
                        iterations: iv.iterations.load(Ordering::Relaxed),
                        preemptions: iv.preemptions.load(Ordering::Relaxed),
                        // The caller numbers the rounds.
                        round: 0,
                    }
                })
                .collect();
            ProcessTiming {
                process: i as u32,
                iterations: h.iterations.load(Ordering::Relaxed),
                running_since: h.running_since.load(Ordering::Relaxed),
                running_until: h.running_until.load(Ordering::Relaxed),
                intervals,
                extras: slots.extras(i),
            }
        })
        .collect();
    Timing { processes }
}

/// The child side: its link to the parent is the pipes and its slot.
struct ChildLink<'a> {
    slot: usize,
    slots: &'a Slots,
    up: i32,
    start: i32,
    go: i32,
    stop: i32,
    solo: bool,
    go_seen: bool,
    stop_seen: bool,
    /// The machine-wide energy counters, in process 0 only.
    energy: Option<crate::energy::Probe>,
}

impl Link for ChildLink<'_> {
    fn energy(&self) -> Option<&crate::energy::Probe> {
        self.energy.as_ref()
    }
    fn ready(&mut self) -> Fallible {
        let h = self.slots.header(self.slot);
        h.waiting.store(1, Ordering::Release);
        pipes::send(self.up, READY)?;
        let r = pipes::wait_closed(self.start);
        h.waiting.store(0, Ordering::Release);
        Ok(r?)
    }
    fn warm(&mut self) -> Fallible {
        Ok(pipes::send(self.up, WARM)?)
    }
    fn may_measure(&mut self) -> bool {
        self.go_seen = self.go_seen || pipes::is_closed(self.go);
        self.go_seen
    }
    fn done(&mut self) -> Fallible {
        Ok(pipes::send(self.up, DONE)?)
    }
    fn may_stop(&mut self) -> bool {
        self.stop_seen = self.stop_seen || pipes::is_closed(self.stop);
        self.stop_seen
    }
    fn set_iterations(&mut self, n: u64) {
        self.slots
            .header(self.slot)
            .iterations
            .store(n, Ordering::Relaxed);
    }
    fn preemptions(&self) -> u64 {
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: filling a local rusage.
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        ru.ru_nivcsw as u64
    }
    fn record(&mut self, rep: u32, start_ns: u64, end_ns: u64, iterations: u64, preemptions: u32) {
        let iv = self.slots.interval(self.slot, rep as usize);
        iv.start.store(start_ns, Ordering::Relaxed);
        iv.end.store(end_ns, Ordering::Relaxed);
        iv.iterations.store(iterations, Ordering::Relaxed);
        iv.preemptions.store(preemptions, Ordering::Relaxed);
        self.slots
            .header(self.slot)
            .recorded
            .store(rep + 1, Ordering::Release);
    }
    fn running_window(&mut self, since_ns: u64, until_ns: u64) {
        let h = self.slots.header(self.slot);
        h.running_since.store(since_ns, Ordering::Relaxed);
        h.running_until.store(until_ns, Ordering::Release);
    }
    fn heartbeat(&mut self) {
        self.slots
            .header(self.slot)
            .heartbeat
            .fetch_add(1, Ordering::Relaxed);
    }
    fn extras(&mut self, extras: &[(String, f64)]) {
        self.slots.set_extras(self.slot, extras);
    }
    fn solo(&self) -> bool {
        self.solo
    }
}

#[allow(clippy::too_many_arguments)]
fn child_main(
    parent: libc::pid_t,
    bench: &mut dyn Benchmark,
    shape: &Shape,
    plan: &Plan,
    ctx: &Context,
    slots: &Slots,
    up: &Pipe,
    start: &Pipe,
    go: &Pipe,
    stop: &Pipe,
) -> ! {
    enter_child(parent);
    // SAFETY: closing descriptors this child does not use.
    unsafe {
        // This child only writes `up` and reads the barriers.
        libc::close(up.read_fd());
        libc::close(start.write_fd());
        libc::close(go.write_fd());
        libc::close(stop.write_fd());
    }
    pipes::set_nonblocking(go.read_fd());
    pipes::set_nonblocking(stop.read_fd());
    let mut link = ChildLink {
        slot: ctx.process as usize,
        slots,
        up: up.write_fd(),
        start: start.read_fd(),
        go: go.read_fd(),
        stop: stop.read_fd(),
        solo: ctx.parallel == 1,
        go_seen: false,
        stop_seen: false,
        energy: (ctx.process == 0 && !plan.energy.is_empty()).then(|| crate::energy::Probe {
            sources: plan.energy.clone(),
            read: Box::new(crate::energy::read_to_string),
        }),
    };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_process(bench, shape, plan, ctx, &Monotonic, &mut link)
    }));
    let code = match outcome {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            slots.set_error(ctx.process as usize, &e.0);
            let _ = pipes::send(link.up, FAILED);
            1
        }
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panicked".into());
            slots.set_error(ctx.process as usize, &format!("panicked: {msg}"));
            let _ = pipes::send(link.up, FAILED);
            101
        }
    };
    // _exit: no destructors or atexit handlers of the parent's state run here.
    unsafe { libc::_exit(code) }
}

/// Set in a forked child: its panics are reported through its slot, not
/// printed (the default hook takes the stderr lock, which another thread
/// of the parent may have held at the fork).
static IN_FORKED_CHILD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Install, once and in the parent before any fork, a panic hook that is
/// silent in forked children and otherwise defers to the hook it replaced.
/// Setting a hook in the child instead takes the hook's lock after the
/// fork — a hang if another thread was panicking at that moment.
pub(crate) fn quiet_panics_in_children() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_FORKED_CHILD.load(std::sync::atomic::Ordering::Relaxed) {
                previous(info);
            }
        }));
    });
}

/// What every child the harness forks does first (the parallel harness's
/// benchmark processes and the workload engine's clients and server): lead
/// its own process group, so it and its helpers are killed as one; die with
/// the parent (PR_SET_PDEATHSIG, and at once if the parent is already gone);
/// under a real-time policy (`chrt -f`) run round-robin one level below the
/// parent — children spin at their priority, and a parent of equal priority
/// with as many spinning children as CPUs would never run again to
/// broadcast the barriers (a livelock); round-robin so that more children
/// than CPUs time-share as under the normal policy; and leave Ctrl-C to the
/// parent (the child dies when told to).
pub(crate) fn enter_child(parent: libc::pid_t) {
    // No lock here: a panic hook set now could wait forever on a lock some
    // other thread of the parent held at the fork (see `quiet_panics_in_children`).
    IN_FORKED_CHILD.store(true, std::sync::atomic::Ordering::Relaxed);
    // SAFETY: plain syscalls in a freshly forked child.
    unsafe {
        libc::setpgid(0, 0);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::_exit(1);
        }
        let policy = libc::sched_getscheduler(0);
        if policy == libc::SCHED_FIFO || policy == libc::SCHED_RR {
            let mut param: libc::sched_param = std::mem::zeroed();
            libc::sched_getparam(0, &mut param);
            param.sched_priority =
                (param.sched_priority - 1).max(libc::sched_get_priority_min(libc::SCHED_RR));
            libc::sched_setscheduler(0, libc::SCHED_RR, &param);
        }
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::signal(libc::SIGTERM, libc::SIG_DFL);
        libc::signal(libc::SIGHUP, libc::SIG_DFL);
    }
}
