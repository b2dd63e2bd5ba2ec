//! rt_dispatch: process dispatch latency under a defined background load
//! (seed 004 section 5: "how quickly a waiting process can be dispatched in
//! response to some event"), a workload on the load-curve engine. Each of
//! the L clients is a waiting process; the server side is the sender, one
//! process that every `interval` takes a timestamp and wakes each waiter in
//! turn `via` a pipe (1 byte), a futex, a System V semaphore, a signal
//! (SIGUSR1, taken with sigwaitinfo), or a 1- or 80-byte message on a UNIX
//! SOCK_SEQPACKET socket pair (004's message sizes). The 80-byte message
//! carries the timestamp itself; the others find it in a slot of shared
//! memory written just before the wake-up. The waiter's operation blocks
//! until woken and returns; the engine reads the clock just after it, and
//! the operation's start is the sender's timestamp (`Client::started_ns`),
//! so each latency runs from the sender's event to the waiter running.
//!
//! Placement (`cpus`, within the point's CPUs c0 … c(k−1)): `same` — the
//! sender and every waiter on c0; `spread` — the sender on c0, waiter i on
//! c((i+1) mod k). The waiters run at `policy`/`priority` (rt_wake's
//! parameters), the sender at normal priority. `background` is the load
//! running meanwhile (`support::background_load`), and `duration` the
//! measured time per point, split over the rule's minimum of 3 trials.
//!
//! A sender that dies ends the trial with the engine's "the server died"
//! error; blocked waiters are killed with it, never left waiting.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};

use touchstone_harness::scratch::sysv;
use touchstone_harness::workload::client::Timer;
use touchstone_harness::workload::{
    Client, ClientContext, Pacing, ServerContext, ServerLink, TrialContext, TrialPlan, Workload,
};
use touchstone_harness::{Clock, Fallible, Monotonic};

use crate::family::{Family, RunContext};
use crate::params::{Param, Point};
use crate::support::background_load::{self, Running};
use crate::support::placement::pin_self;
use crate::support::realtime::{self, lock_memory, RtMeasure, POLICY, PRIORITY};
use crate::support::sys::{self, check, close, errno};

pub const NAME: &str = "rt_dispatch";
pub const SUMMARY: &str =
    "process dispatch latency: sender's event to the woken process running, via pipe, futex, SysV semaphore, signal or 1/80-byte message, under background load";
pub const OPERATION: &str = "process wake-up";

pub const VIA: Param = Param::choice("via", &["pipe", "futex", "sem", "signal", "msg1", "msg80"])
    // One of each kind of kernel wake-up (a descriptor, a futex, a signal)
    // by default: every way with every placement and load level would take
    // most of an hour. Name the others to measure them.
    .measured(&["pipe", "futex", "signal"])
    .quick(&["pipe"])
    .help("how the sender wakes the waiter: pipe, futex, sem (System V semaphore), signal, msg1 or msg80 (1- or 80-byte message on a UNIX socket pair)");

pub const PLACEMENT: Param = Param::choice("cpus", &["same", "spread"])
    .quick(&["spread"])
    .help("same (sender and waiters on one CPU) or spread (each waiter on another CPU than the sender)");

/// rt_wake's interval and its bounds, between the sender's wake-ups.
pub const INTERVAL: Param = realtime::INTERVAL.help("time between the sender's wake-ups");

/// rt_wake's duration, shorter by default: every way of waking, placement
/// and level is a point of its own.
pub const DURATION: Param = realtime::DURATION.measured(&["3s"]).quick(&["1s"]);

/// The background levels measured by default: none, one kind (a spinner
/// per CPU: the waiter must preempt) and all together; the others when
/// named (`background:memory,io`).
pub const BACKGROUND: Param = background_load::PARAM.measured(&["none", "cpu", "mixed"]);

pub const PARAMS: &[Param] = &[
    VIA, PLACEMENT, INTERVAL, DURATION, POLICY, PRIORITY, BACKGROUND,
];

/// How the sender wakes a waiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Pipe,
    Futex,
    Sem,
    Signal,
    Message(usize),
}

impl Via {
    pub fn parse(s: &str) -> Result<Via, String> {
        Ok(match s {
            "pipe" => Via::Pipe,
            "futex" => Via::Futex,
            "sem" => Via::Sem,
            "signal" => Via::Signal,
            "msg1" => Via::Message(1),
            "msg80" => Via::Message(80),
            other => return Err(format!("unknown via '{other}'")),
        })
    }
}

/// One waiter's slot in the shared mapping (a cache line each).
#[repr(C, align(64))]
struct Slot {
    /// Bumped by every wake-up (the futex word).
    seq: AtomicU32,
    /// The waiter has gone (its client was dropped).
    gone: AtomicU32,
    /// The waiter's pid (for signals), 0 until it is ready.
    pid: AtomicI32,
    /// The sender's timestamp of its last wake-up, CLOCK_MONOTONIC ns.
    sent_ns: AtomicU64,
}

/// What `prepare` makes for one trial.
struct Shared {
    slots: *mut Slot,
    load: usize,
    /// Per waiter: (waiter's end, sender's end) of a pipe or socket pair.
    ends: Vec<(RawFd, RawFd)>,
    /// The System V semaphore set (one per waiter), or -1.
    sem: libc::c_int,
    /// Its record in the trial's scratch directory (`scratch::sysv`), which
    /// removes the set should this process be killed before `release`.
    sem_record: Option<std::path::PathBuf>,
}

// SAFETY: the mapping is only read and written through atomics.
unsafe impl Sync for Shared {}
unsafe impl Send for Shared {}

impl Shared {
    fn slot(&self, i: usize) -> &Slot {
        assert!(i < self.load);
        // SAFETY: `slots` maps `load` slots for the life of `self`.
        unsafe { &*self.slots.add(i) }
    }
}

pub struct RtDispatch {
    pub via: Via,
    pub spread: bool,
    pub measure: RtMeasure,
    shared: Option<Shared>,
    running: Option<Running>,
    /// Tests: the sender kills itself after this many wake-up rounds.
    pub die_after: Option<u64>,
}

impl RtDispatch {
    pub fn new(via: Via, spread: bool, measure: RtMeasure) -> RtDispatch {
        RtDispatch {
            via,
            spread,
            measure,
            shared: None,
            running: None,
            die_after: None,
        }
    }

    fn shared(&self) -> Fallible<&Shared> {
        self.shared
            .as_ref()
            .ok_or_else(|| "rt_dispatch: not prepared".into())
    }

    fn waiter_cpu(&self, cpus: &[usize], i: u32) -> usize {
        if self.spread {
            cpus[(i as usize + 1) % cpus.len()]
        } else {
            cpus[0]
        }
    }

    /// Wake waiter `i` (the timestamp is in its slot, or in the message).
    fn wake(&self, s: &Shared, i: usize, buf: &mut [u8; 80]) -> Fallible {
        let slot = s.slot(i);
        let now = Monotonic.now_ns();
        slot.sent_ns.store(now, Ordering::Release);
        // SAFETY: raw calls on descriptors, words and sets `prepare` made.
        unsafe {
            match self.via {
                Via::Futex => {
                    slot.seq.fetch_add(1, Ordering::Release);
                    libc::syscall(
                        libc::SYS_futex,
                        slot.seq.as_ptr(),
                        libc::FUTEX_WAKE,
                        1,
                        std::ptr::null::<libc::timespec>(),
                    );
                }
                Via::Pipe | Via::Message(_) => {
                    let n = match self.via {
                        Via::Message(n) => n,
                        _ => 1,
                    };
                    buf[..8].copy_from_slice(&now.to_ne_bytes());
                    let w = libc::write(s.ends[i].1, buf.as_ptr() as *const libc::c_void, n);
                    // A waiter that has not kept up (full buffer) is woken
                    // anyway: its descriptor is readable.
                    if w < 0 && *libc::__errno_location() != libc::EAGAIN {
                        return Err(errno("writing the wake-up"));
                    }
                }
                Via::Sem => {
                    let mut op = libc::sembuf {
                        sem_num: i as u16,
                        sem_op: 1,
                        sem_flg: 0,
                    };
                    check(libc::semop(s.sem, &mut op, 1), "semop +1")?;
                }
                Via::Signal => {
                    let pid = slot.pid.load(Ordering::Acquire);
                    if pid > 0 {
                        libc::kill(pid, libc::SIGUSR1);
                    }
                }
            }
        }
        Ok(())
    }
}

/// A waiting process.
struct Waiter<'a> {
    w: &'a RtDispatch,
    s: &'a Shared,
    i: usize,
    seen: u32,
    started: u64,
    buf: [u8; 80],
    sigs: libc::sigset_t,
}

impl Client for Waiter<'_> {
    /// Timed: blocked until the sender's wake-up arrives, then returns.
    fn op(&mut self) -> Fallible<usize> {
        let slot = self.s.slot(self.i);
        // SAFETY: raw blocking calls on our own descriptor, word, set, mask.
        unsafe {
            match self.w.via {
                Via::Futex => loop {
                    let now = slot.seq.load(Ordering::Acquire);
                    if now != self.seen {
                        self.seen = now;
                        break;
                    }
                    libc::syscall(
                        libc::SYS_futex,
                        slot.seq.as_ptr(),
                        libc::FUTEX_WAIT,
                        self.seen,
                        std::ptr::null::<libc::timespec>(),
                    );
                },
                Via::Pipe | Via::Message(_) => loop {
                    let r = libc::read(
                        self.s.ends[self.i].0,
                        self.buf.as_mut_ptr() as *mut libc::c_void,
                        self.buf.len(),
                    );
                    if r > 0 {
                        // Only the 80-byte message carries its timestamp
                        // (a pipe's read may take several 1-byte wake-ups).
                        if self.w.via == Via::Message(80) && r >= 8 {
                            let mut t = [0u8; 8];
                            t.copy_from_slice(&self.buf[..8]);
                            self.started = u64::from_ne_bytes(t);
                            return Ok(0);
                        }
                        break;
                    }
                    if r == 0 {
                        return Err("the sender closed its end".into());
                    }
                    if *libc::__errno_location() != libc::EINTR {
                        return Err(errno("reading the wake-up"));
                    }
                },
                Via::Sem => {
                    let mut op = libc::sembuf {
                        sem_num: self.i as u16,
                        sem_op: -1,
                        sem_flg: 0,
                    };
                    while libc::semop(self.s.sem, &mut op, 1) != 0 {
                        if *libc::__errno_location() != libc::EINTR {
                            return Err(errno("semop −1"));
                        }
                    }
                }
                Via::Signal => {
                    while libc::sigwaitinfo(&self.sigs, std::ptr::null_mut()) < 0 {
                        if *libc::__errno_location() != libc::EINTR {
                            return Err(errno("sigwaitinfo"));
                        }
                    }
                }
            }
        }
        self.started = slot.sent_ns.load(Ordering::Acquire);
        Ok(0)
    }
    fn started_ns(&self) -> Option<u64> {
        Some(self.started)
    }
}

impl Drop for Waiter<'_> {
    fn drop(&mut self) {
        self.s.slot(self.i).gone.store(1, Ordering::Release);
    }
}

impl Workload for RtDispatch {
    fn max_load(&self) -> Option<u32> {
        self.measure.max_load()
    }
    fn trial_plan(&self, run: &TrialPlan, _load: u32) -> TrialPlan {
        // The sender paces; the waiters wait.
        self.measure.trial_plan(run, Pacing::Closed)
    }
    fn prepare(&mut self, ctx: &TrialContext) -> Fallible {
        let load = ctx.load as usize;
        let len = load * std::mem::size_of::<Slot>();
        let slots = sys::map_anonymous(len, libc::PROT_READ | libc::PROT_WRITE, true)? as *mut Slot;
        let mut s = Shared {
            slots,
            load,
            ends: Vec::new(),
            sem: -1,
            sem_record: None,
        };
        let made = (|| -> Fallible {
            for _ in 0..load {
                let mut fds = [0; 2];
                // SAFETY: makes a pipe or socket pair into a local array.
                let r = unsafe {
                    match self.via {
                        Via::Pipe => libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC),
                        Via::Message(_) => libc::socketpair(
                            libc::AF_UNIX,
                            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                            0,
                            fds.as_mut_ptr(),
                        ),
                        _ => break,
                    }
                };
                check(r, "pipe or socket pair")?;
                s.ends.push((fds[0], fds[1]));
                // The sender never blocks on a waiter that is behind.
                // SAFETY: flags of our own descriptor.
                unsafe { libc::fcntl(fds[1], libc::F_SETFL, libc::O_NONBLOCK) };
            }
            if self.via == Via::Sem {
                // SAFETY: a private set of `load` semaphores, all 0.
                s.sem = check(
                    unsafe { libc::semget(libc::IPC_PRIVATE, load as i32, 0o600) },
                    "semget",
                )?;
                let recorded =
                    sysv::record(&ctx.scratch, "rt_dispatch", sysv::Kind::Semaphores, s.sem)
                        .map_err(|e| {
                            format!("record the semaphore set in the scratch directory: {e}")
                        })?;
                s.sem_record = Some(recorded);
            }
            Ok(())
        })();
        self.shared = Some(s);
        made?;
        self.running = Some(background_load::start(
            self.measure.background,
            &ctx.cpus,
            &ctx.scratch,
        )?);
        Ok(())
    }
    fn release(&mut self) {
        if let Some(mut r) = self.running.take() {
            r.stop();
        }
        if let Some(s) = self.shared.take() {
            for &(a, b) in &s.ends {
                close(a);
                close(b);
            }
            // SAFETY: removes our own set; unmaps our own mapping.
            unsafe {
                if s.sem >= 0 {
                    libc::semctl(s.sem, 0, libc::IPC_RMID);
                }
                if let Some(r) = &s.sem_record {
                    sysv::forget(r);
                }
                libc::munmap(
                    s.slots as *mut libc::c_void,
                    s.load * std::mem::size_of::<Slot>(),
                );
            }
        }
    }
    fn has_server(&self) -> bool {
        true
    }
    fn serve(&self, ctx: &ServerContext, link: &mut dyn ServerLink) -> Fallible {
        let s = self.shared()?;
        pin_self(ctx.cpus[0])?;
        link.ready()?;
        let mut buf = [0u8; 80];
        let mut next = Monotonic.now_ns();
        let mut rounds = 0u64;
        loop {
            next += self.measure.interval_ns;
            Monotonic.sleep_until(next);
            if self.die_after.is_some_and(|n| rounds >= n) {
                // SAFETY: the test's sender dies as a crash would.
                unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
            }
            rounds += 1;
            let mut left = 0;
            for i in 0..s.load {
                if s.slot(i).gone.load(Ordering::Acquire) == 0 {
                    left += 1;
                    self.wake(s, i, &mut buf)?;
                }
            }
            // After the trial, wake the waiters until every one has gone
            // (each leaves after its next wake-up).
            if left == 0 && link.should_stop() {
                return Ok(());
            }
        }
    }
    fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        let s = self.shared()?;
        let i = ctx.client as usize;
        lock_memory()?;
        pin_self(self.waiter_cpu(&ctx.cpus, ctx.client))?;
        self.measure.policy.apply()?;
        // SAFETY: an empty set with SIGUSR1, blocked so sigwaitinfo takes it.
        let sigs = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGUSR1);
            if self.via == Via::Signal {
                libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            }
            set
        };
        let slot = s.slot(i);
        // SAFETY: getpid has no preconditions.
        slot.pid.store(unsafe { libc::getpid() }, Ordering::Release);
        Ok(Box::new(Waiter {
            w: self,
            s,
            i,
            seen: slot.seq.load(Ordering::Acquire),
            started: 0,
            buf: [0; 80],
            sigs,
        }))
    }
}

pub fn build(p: &Point, _: &RunContext) -> Result<Box<dyn Workload>, String> {
    Ok(Box::new(RtDispatch::new(
        Via::parse(p.text(VIA.name))?,
        p.text(PLACEMENT.name) == "spread",
        RtMeasure::of(p)?,
    )))
}

pub const FAMILY: Family = Family {
    params: PARAMS,
    inert: realtime::priority_inert,
    ..Family::workload(NAME, "workload", SUMMARY, OPERATION, build)
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::background_load::Level;
    use crate::support::placement::usable_cpus;
    use crate::support::realtime::Policy;
    use std::time::Duration;
    use touchstone_harness::workload::{run_trial, WorkloadError};

    fn short() -> TrialPlan {
        TrialPlan {
            stall_timeout: Duration::from_secs(10),
            ..TrialPlan::default()
        }
    }

    /// Semaphore sets of this process's user, from /proc/sysvipc.
    fn sem_ids() -> Vec<String> {
        std::fs::read_to_string("/proc/sysvipc/sem")
            .unwrap_or_default()
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
            .collect()
    }

    /// Every way of waking: one dispatch per interval per waiter, each
    /// after its sender's timestamp; nothing left afterwards.
    #[test]
    fn every_via_dispatches_and_leaves_nothing() {
        crate::testing::in_child_measuring(|| {
            let cpus = usable_cpus().map_err(|e| e.to_string())?;
            for via in ["pipe", "futex", "sem", "signal", "msg1", "msg80"] {
                let before = sem_ids();
                let mut w = RtDispatch::new(
                    Via::parse(via)?,
                    true,
                    RtMeasure::new(1_000_000, 300_000_000, Policy::Other, Level::None)?,
                );
                let load = cpus.len().min(2) as u32;
                let o = run_trial(&mut w, load, &cpus, &short(), 0)
                    .map_err(|e| format!("{via}: {e}"))?;
                let h = o.latency();
                // 100 ms windows, 1 ms apart, per waiter; a waiter that is
                // not back to waiting when the next wake-up comes takes the
                // two as one (futex, signal), so on a busy machine fewer —
                // under a load average of 19 (a CI machine building), half
                // were merged. Never more than one per wake-up sent.
                let want = 100 * load as u64;
                if h.len() < want / 8 || h.len() > want * 11 / 10 {
                    return Err(format!(
                        "{via}: {} dispatches, about {want} expected",
                        h.len()
                    ));
                }
                if h.max() > 1_000_000_000 {
                    return Err(format!("{via}: a latency of {} ns", h.max()));
                }
                if w.shared.is_some() || sem_ids() != before {
                    return Err(format!("{via}: not released"));
                }
                if !o.every_client_ran_through() {
                    return Err(format!("{via}: a waiter did not run through the window"));
                }
            }
            Ok(())
        })
        .unwrap();
    }

    /// A sender that dies mid-trial gives the engine's error, not a hang
    /// (nor a stall: the death is seen, not the waiters' silence).
    #[test]
    fn a_sender_that_dies_is_an_error_not_a_hang() {
        crate::testing::in_child_measuring(|| {
            let cpus = usable_cpus().map_err(|e| e.to_string())?;
            let mut w = RtDispatch::new(
                Via::Futex,
                true,
                RtMeasure::new(1_000_000, 3_000_000_000, Policy::Other, Level::None)?,
            );
            w.die_after = Some(300);
            match run_trial(&mut w, 1, &cpus, &short(), 0) {
                Err(WorkloadError::ServerDied { how, .. }) if how.contains("9") => Ok(()),
                Err(e) => Err(format!("another error: {e}")),
                Ok(_) => Err("the trial succeeded without its sender".into()),
            }
        })
        .unwrap();
    }

    #[test]
    fn bad_input_is_refused_before_anything_runs() {
        let mode = &RunContext::new(true);
        for spec in [
            "rt_dispatch/via:carrier-pigeon",
            "rt_dispatch/interval:0",
            "rt_dispatch/priority:100",
            "rt_dispatch/background:gpu",
        ] {
            assert!(
                crate::select::select(&[spec.to_string()], mode, 1).is_err(),
                "{spec}"
            );
        }
        let sel =
            crate::select::select(&["rt_dispatch/duration:10ms".to_string()], mode, 1).unwrap();
        let c = &sel.cases[0];
        assert!(c.family.make_workload(&c.point, mode).is_err());
    }
}
