//! rt_wake: timer wake-up latency under a defined background load (seed
//! 004 section 5; the cyclictest method), a workload on the load-curve
//! engine. Each measuring thread (the engine's clients, threads of one
//! process whose memory is locked with mlockall) sleeps to absolute
//! deadlines one `interval` apart with clock_nanosleep(TIMER_ABSTIME) on
//! CLOCK_MONOTONIC — the engine's open-loop schedule — and its operation
//! does nothing, so the latency the engine records from each intended
//! start is how late the thread ran after its deadline.
//!
//! The load ladder is the number of measuring threads (thread i pinned to
//! CPU i mod k of the point's k CPUs), doubling up to one per CPU; the
//! `background` parameter is the load running meanwhile
//! (`support::background_load`), each level a case of its own, started
//! before each trial and stopped after it. `policy:fifo` runs the measuring
//! threads under SCHED_FIFO at `priority`, refused before anything runs
//! when this process may not (no root/CAP_SYS_NICE and `ulimit -r` below
//! the priority); `policy:other` always runs.
//!
//! `duration` is the measured time per point, split over the convergence
//! rule's minimum of 3 trials (their histograms merge): the samples per
//! thread are duration / interval.
//!
//! Timed (by the engine, per wake-up): from the deadline to the clock read
//! after the no-op operation. Compared with a cyclictest loop, which reads
//! the clock once after clock_nanosleep returns, the engine reads it twice
//! more before that read (the loop's check that the deadline has passed,
//! and the start of the operation) and makes one indirect call: about two
//! clock reads (~50 ns on this machine's vDSO clock) added to every
//! wake-up. A deadline more than 10 ms away is slept to in 10 ms slices
//! (the engine looks at its stop flag between them); the last sleep is
//! still absolute to the deadline.

use touchstone_harness::workload::{
    Client, ClientContext, ClientKind, Pacing, TrialContext, TrialPlan, Workload,
};
use touchstone_harness::Fallible;
use touchstone_results::convergence::DEFAULT_MIN_TRIALS;

use crate::family::{Family, Mode};
use crate::params::{Kind, Param, Point};
use crate::support::background_load::{self, Level, Running};
use crate::support::placement::{pin_self, usable_cpus};
use crate::support::sys::errno;

pub const NAME: &str = "rt_wake";
pub const SUMMARY: &str =
    "timer wake-up latency: how late a thread runs after an absolute clock_nanosleep deadline, under background load (cyclictest's method)";
pub const OPERATION: &str = "wake-up";

pub const INTERVAL: Param = Param {
    name: "interval",
    help: "time between a thread's deadlines (cyclictest -i)",
    kind: Kind::Duration {
        min_ns: 50_000,
        max_ns: 100_000_000,
    },
    default: &["1ms"],
    quick: &[],
    positional: false,
};

pub const DURATION: Param = Param {
    name: "duration",
    help: "measured time per point, at least 100 intervals (split over the trials)",
    kind: Kind::Duration {
        min_ns: 1_000_000,
        max_ns: 3_600_000_000_000,
    },
    default: &["10s"],
    quick: &["2s"],
    positional: false,
};

pub const POLICY: Param = Param {
    name: "policy",
    help: "scheduling policy of the measuring (or waiting) threads: other (SCHED_OTHER) or fifo (SCHED_FIFO at `priority`; needs root, CAP_SYS_NICE or `ulimit -r`)",
    kind: Kind::Choice(&["other", "fifo"]),
    default: &["other"],
    quick: &[],
    positional: false,
};

pub const PRIORITY: Param = Param {
    name: "priority",
    help: "SCHED_FIFO priority, 1–99 (used with policy:fifo)",
    kind: Kind::Int { min: 1, max: 99 },
    default: &["80"],
    quick: &[],
    positional: false,
};

pub const PARAMS: &[Param] = &[INTERVAL, DURATION, POLICY, PRIORITY, background_load::PARAM];

/// A real-time scheduling request for the measuring threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Other,
    Fifo(i32),
}

impl Policy {
    /// From a point's `policy` and `priority`, refused (with the remedy)
    /// when SCHED_FIFO is asked for and this process may not use it.
    pub fn of(p: &Point) -> Result<Policy, String> {
        match p.text(POLICY.name) {
            "fifo" => {
                let prio = p.num(PRIORITY.name);
                fifo_refusal(has_cap_sys_nice(), rtprio_limit(), prio)
                    .map_or(Ok(Policy::Fifo(prio as i32)), Err)
            }
            _ => Ok(Policy::Other),
        }
    }

    /// Apply to the calling thread.
    pub fn apply(self) -> Fallible {
        if let Policy::Fifo(prio) = self {
            let param = libc::sched_param {
                sched_priority: prio,
            };
            // SAFETY: changes the calling thread's own policy.
            if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
                return Err(errno(&format!("SCHED_FIFO at priority {prio}")));
            }
        }
        Ok(())
    }
}

/// Why SCHED_FIFO at `priority` is not permitted, with the remedy; None
/// when it is (CAP_SYS_NICE, or a real-time priority limit at least as high).
pub fn fifo_refusal(cap_sys_nice: bool, rtprio_limit: u64, priority: u64) -> Option<String> {
    if cap_sys_nice || rtprio_limit >= priority {
        return None;
    }
    Some(format!(
        "policy:fifo at priority {priority} is not permitted here: this process has neither \
         root's CAP_SYS_NICE nor a real-time priority limit that high (`ulimit -r` is \
         {rtprio_limit}); run as root, grant CAP_SYS_NICE (`setcap cap_sys_nice+ep` on the \
         binary) or raise the limit (`ulimit -r {priority}`, rtprio in \
         /etc/security/limits.conf) — policy:other is measured without it"
    ))
}

/// Whether CAP_SYS_NICE is in this process's effective set.
fn has_cap_sys_nice() -> bool {
    const CAP_SYS_NICE: u32 = 23;
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .is_some_and(|caps| caps & (1 << CAP_SYS_NICE) != 0)
}

/// The soft RLIMIT_RTPRIO (`ulimit -r`).
fn rtprio_limit() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills a local struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_RTPRIO, &mut r) } != 0 {
        return 0;
    }
    r.rlim_cur
}

/// Lock this process's memory, now and future (cyclictest -m): a page
/// fault must not be part of a wake-up.
pub fn lock_memory() -> Fallible {
    // SAFETY: mlockall has no memory-safety preconditions.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
        return Err(errno(
            "mlockall (locking the measuring process's memory; run as root or raise `ulimit -l`)",
        ));
    }
    Ok(())
}

/// The refusal for `duration` shorter than 100 `interval`s, if any.
pub fn duration_refusal(interval_ns: u64, duration_ns: u64) -> Option<String> {
    (interval_ns == 0 || duration_ns / interval_ns < 100).then(|| {
        format!(
            "a duration of {} ms holds fewer than 100 intervals of {} µs: too few wake-ups for \
             a tail; lengthen the duration or shorten the interval",
            duration_ns / 1_000_000,
            interval_ns / 1000
        )
    })
}

#[derive(Debug)]
pub struct RtWake {
    pub interval_ns: u64,
    pub duration_ns: u64,
    pub policy: Policy,
    pub background: Level,
    /// One measuring thread per CPU at most.
    cpus: u32,
    running: Option<Running>,
    /// The last background's process group (for the tests' checks).
    last_group: libc::pid_t,
}

impl RtWake {
    pub fn new(
        interval_ns: u64,
        duration_ns: u64,
        policy: Policy,
        background: Level,
    ) -> Result<RtWake, String> {
        if let Some(e) = duration_refusal(interval_ns, duration_ns) {
            return Err(e);
        }
        let cpus = usable_cpus().map_err(|e| e.to_string())?.len() as u32;
        Ok(RtWake {
            interval_ns,
            duration_ns,
            policy,
            background,
            cpus,
            running: None,
            last_group: 0,
        })
    }
}

/// A measuring thread's operation: nothing (the wake-up is the event).
struct Waker;

impl Client for Waker {
    fn op(&mut self) -> Fallible<usize> {
        Ok(0)
    }
}

impl Workload for RtWake {
    fn client_kind(&self) -> ClientKind {
        ClientKind::Threads
    }
    fn max_load(&self) -> Option<u32> {
        Some(self.cpus.max(1))
    }
    fn trial_plan(&self, run: &TrialPlan, load: u32) -> TrialPlan {
        TrialPlan {
            // Enough for the threads to fault in and settle.
            warmup_ns: 200_000_000,
            window_ns: (self.duration_ns / DEFAULT_MIN_TRIALS as u64).max(self.interval_ns),
            // Each thread one wake-up per interval.
            pacing: Pacing::Open {
                rate: load as f64 * 1e9 / self.interval_ns as f64,
            },
            ..run.clone()
        }
    }
    fn prepare(&mut self, ctx: &TrialContext) -> Fallible {
        let r = background_load::start(self.background, &ctx.cpus, &ctx.scratch)?;
        self.last_group = r.group();
        self.running = Some(r);
        Ok(())
    }
    fn release(&mut self) {
        if let Some(mut r) = self.running.take() {
            r.stop();
        }
    }
    fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        lock_memory()?;
        pin_self(ctx.cpus[ctx.client as usize % ctx.cpus.len()])?;
        self.policy.apply()?;
        Ok(Box::new(Waker))
    }
}

pub fn build(p: &Point, _mode: Mode) -> Result<Box<dyn Workload>, String> {
    Ok(Box::new(RtWake::new(
        p.num(INTERVAL.name),
        p.num(DURATION.name),
        Policy::of(p)?,
        Level::parse(p.text(background_load::PARAM.name))?,
    )?))
}

pub const FAMILY: Family = Family {
    params: PARAMS,
    inert: priority_inert,
    ..Family::workload(NAME, "workload", SUMMARY, OPERATION, build)
};

/// Under `policy:other` the priority has no effect: it stays out of the
/// case's name and stored parameters.
pub fn priority_inert(p: &Point) -> &'static [&'static str] {
    if p.text(POLICY.name) == "other" {
        &[PRIORITY.name]
    } else {
        &[]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::select;
    use touchstone_harness::workload::{run_trial, validate, SweepPlan, WorkloadError};

    #[test]
    fn fifo_is_refused_with_the_remedy_without_the_privilege() {
        let e = fifo_refusal(false, 0, 80).unwrap();
        assert!(e.contains("ulimit -r"), "{e}");
        assert!(
            e.contains("CAP_SYS_NICE") && e.contains("policy:other"),
            "{e}"
        );
        assert!(fifo_refusal(true, 0, 80).is_none());
        assert!(fifo_refusal(false, 99, 80).is_none());
        assert!(fifo_refusal(false, 50, 80).is_some());
    }

    #[test]
    fn the_priority_is_named_only_where_it_applies() {
        let mode = Mode { quick: true };
        let names = |spec: &str| -> Vec<(String, Vec<String>)> {
            select(&[spec.to_string()], mode, 1)
                .unwrap()
                .cases
                .iter()
                .map(|c| {
                    (
                        c.name.clone(),
                        c.params().map(|(k, _)| k.to_string()).collect(),
                    )
                })
                .collect()
        };
        for (name, params) in names("rt_wake/background:none")
            .into_iter()
            .chain(names("rt_dispatch/background:none"))
        {
            assert!(
                name.contains("policy:other") && !name.contains("priority"),
                "{name}"
            );
            assert!(!params.iter().any(|k| k == "priority"), "{name}");
        }
        let fifo = names("rt_wake/policy:fifo/priority:50/background:none");
        assert_eq!(fifo.len(), 1);
        assert!(
            fifo[0].0.contains("policy:fifo/priority:50"),
            "{}",
            fifo[0].0
        );
        assert!(fifo[0].1.iter().any(|k| k == "priority"));
    }

    #[test]
    fn bad_input_is_refused_before_anything_runs() {
        let mode = Mode { quick: true };
        for (spec, needle) in [
            ("rt_wake/interval:0", "interval"),
            ("rt_wake/priority:0", "priority"),
            ("rt_wake/priority:100", "priority"),
            ("rt_wake/background:disk", "background"),
        ] {
            let e = select(&[spec.to_string()], mode, 1)
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle), "{spec}: {e}");
        }
        // 50 ms holds 50 intervals of 1 ms.
        let sel = select(&["rt_wake/duration:50ms".to_string()], mode, 1).unwrap();
        let c = &sel.cases[0];
        let e = c.family.make_workload(&c.point, mode).err().unwrap();
        assert!(e.contains("fewer than 100 intervals"), "{e}");
        assert!(duration_refusal(1_000_000, 100_000_000).is_none());
    }

    #[test]
    fn the_trial_follows_the_interval_and_duration() {
        let w = RtWake::new(500_000, 3_000_000_000, Policy::Other, Level::None).unwrap();
        let t = w.trial_plan(&TrialPlan::default(), 2);
        assert_eq!(t.window_ns, 1_000_000_000);
        assert_eq!(t.pacing, Pacing::Open { rate: 4000.0 });
        let plan = SweepPlan {
            trial: TrialPlan::default(),
            ..SweepPlan::default()
        };
        let loads = validate(&w, &plan, w.cpus as usize).unwrap();
        assert_eq!(
            *loads.last().unwrap(),
            w.cpus,
            "the ladder ends at one thread per CPU"
        );
    }

    /// A short real trial: one wake-up per interval, each late by a
    /// positive amount, the background stopped after it.
    #[test]
    fn a_trial_records_one_wake_up_per_interval() {
        crate::testing::in_child_measuring(|| {
            let mut w = RtWake::new(1_000_000, 300_000_000, Policy::Other, Level::Cpu)?;
            let cpus = usable_cpus().map_err(|e| e.to_string())?;
            let o =
                run_trial(&mut w, 1, &cpus, &TrialPlan::default(), 0).map_err(|e| e.to_string())?;
            let h = o.latency();
            // 100 ms window at 1 ms: about 100 wake-ups.
            if !(90..=110).contains(&h.len()) {
                return Err(format!("{} wake-ups in a 100 ms window", h.len()));
            }
            if h.min() == 0 {
                return Err("a wake-up before its deadline".into());
            }
            if w.running.is_some() {
                return Err("the background was not released".into());
            }
            Ok(())
        })
        .unwrap();
    }

    /// Processes of group `pgid`, from /proc.
    fn in_group(pgid: libc::pid_t) -> usize {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
            .filter(|stat| {
                let rest = &stat[stat.rfind(')').unwrap() + 2..];
                rest.split_whitespace().nth(2) == Some(&pgid.to_string())
            })
            .count()
    }

    /// Ctrl-C in the middle of a trial under the mixed load: the trial ends
    /// as interrupted and the background is stopped, nothing of it left.
    #[test]
    fn ctrl_c_stops_the_background_too() {
        let (r, wr) = crate::support::sys::pipe().unwrap();
        // The child runs a trial: its copy of the trial lock must be free,
        // and this process's stays held until the child is reaped (no other
        // test's trial beside it).
        let held = std::cell::RefCell::new(Some(touchstone_harness::parallel::hold_across_fork()));
        let pid = crate::support::sys::fork_helper(|| {
            drop(held.borrow_mut().take());
            crate::support::sys::close(r);
            touchstone_harness::signals::install();
            let Ok(mut w) = RtWake::new(1_000_000, 30_000_000_000, Policy::Other, Level::Mixed)
            else {
                return 1;
            };
            let cpus = usable_cpus().unwrap();
            let _ = crate::support::sys::write_all(wr, b"x");
            let code = match run_trial(&mut w, 1, &cpus, &TrialPlan::default(), 0) {
                Err(WorkloadError::Interrupted) => {
                    if w.running.is_none() && w.last_group > 0 && in_group(w.last_group) == 0 {
                        42
                    } else {
                        43
                    }
                }
                _ => 1,
            };
            code
        })
        .unwrap();
        crate::support::sys::close(wr);
        let mut b = [0u8; 1];
        // SAFETY: reads one byte into a local buffer.
        unsafe { libc::read(r, b.as_mut_ptr() as *mut libc::c_void, 1) };
        crate::support::sys::close(r);
        // Into the trial: the background and the threads are running.
        std::thread::sleep(std::time::Duration::from_millis(1500));
        // SAFETY: signals our own child.
        unsafe { libc::kill(pid, libc::SIGINT) };
        let code = crate::support::sys::reap(pid).unwrap();
        drop(held);
        assert_eq!(
            code, 42,
            "43: the background outlived the interrupted trial"
        );
    }
}
