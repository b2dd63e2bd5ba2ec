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

use crate::family::{Family, RunContext};
use crate::params::{Param, Point};
use crate::support::background_load::{self, Running};
use crate::support::placement::pin_self;
use crate::support::realtime::{
    lock_memory, priority_inert, RtMeasure, DURATION, INTERVAL, POLICY, PRIORITY,
};

pub const NAME: &str = "rt_wake";
pub const SUMMARY: &str =
    "timer wake-up latency: how late a thread runs after an absolute clock_nanosleep deadline, under background load (cyclictest's method)";
pub const OPERATION: &str = "wake-up";

pub const PARAMS: &[Param] = &[INTERVAL, DURATION, POLICY, PRIORITY, background_load::PARAM];

#[derive(Debug)]
pub struct RtWake {
    pub measure: RtMeasure,
    running: Option<Running>,
    /// The last background's process group (for the tests' checks).
    last_group: libc::pid_t,
}

impl RtWake {
    pub fn measuring(measure: RtMeasure) -> RtWake {
        RtWake {
            measure,
            running: None,
            last_group: 0,
        }
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
        self.measure.max_load()
    }
    fn trial_plan(&self, run: &TrialPlan, load: u32) -> TrialPlan {
        // Each thread one wake-up per interval.
        let rate = load as f64 * 1e9 / self.measure.interval_ns as f64;
        self.measure.trial_plan(run, Pacing::Open { rate })
    }
    fn prepare(&mut self, ctx: &TrialContext) -> Fallible {
        let r = background_load::start(self.measure.background, &ctx.cpus, &ctx.scratch)?;
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
        self.measure.policy.apply()?;
        Ok(Box::new(Waker))
    }
}

pub fn build(p: &Point, _: &RunContext) -> Result<Box<dyn Workload>, String> {
    Ok(Box::new(RtWake::measuring(RtMeasure::of(p)?)))
}

pub const FAMILY: Family = Family {
    params: PARAMS,
    inert: priority_inert,
    ..Family::workload(NAME, "workload", SUMMARY, OPERATION, build)
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::select;
    use crate::support::background_load::Level;
    use crate::support::placement::usable_cpus;
    use crate::support::realtime::{duration_refusal, Policy};
    use touchstone_harness::workload::{run_trial, validate, SweepPlan, WorkloadError};

    #[test]
    fn bad_input_is_refused_before_anything_runs() {
        let mode = &RunContext::new(true);
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
        let w = RtWake::measuring(
            RtMeasure::new(500_000, 3_000_000_000, Policy::Other, Level::None).unwrap(),
        );
        let t = w.trial_plan(&TrialPlan::default(), 2);
        assert_eq!(t.window_ns, 1_000_000_000);
        assert_eq!(t.pacing, Pacing::Open { rate: 4000.0 });
        let plan = SweepPlan {
            trial: TrialPlan::default(),
            ..SweepPlan::default()
        };
        let loads = validate(&w, &plan, w.measure.cpus as usize).unwrap();
        assert_eq!(
            *loads.last().unwrap(),
            w.measure.cpus,
            "the ladder ends at one thread per CPU"
        );
    }

    /// A short real trial: one wake-up per interval, each late by a
    /// positive amount, the background stopped after it.
    #[test]
    fn a_trial_records_one_wake_up_per_interval() {
        crate::testing::in_child_measuring(|| {
            let mut w = RtWake::measuring(RtMeasure::new(
                1_000_000,
                300_000_000,
                Policy::Other,
                Level::Cpu,
            )?);
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
            let Ok(mut w) = RtMeasure::new(1_000_000, 30_000_000_000, Policy::Other, Level::Mixed)
                .map(RtWake::measuring)
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
