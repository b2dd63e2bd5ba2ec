//! What the real-time families (rt_wake, rt_dispatch) share: the
//! `interval` and `duration` of their measurement and the refusal of a
//! duration too short for a tail; the scheduling policy of the measuring
//! threads (`policy`, `priority`: SCHED_FIFO refused with its remedy where
//! this process may not use it, the priority left out of names under
//! policy:other); and locking the process's memory (cyclictest -m).

use touchstone_harness::workload::{Pacing, TrialPlan};
use touchstone_harness::Fallible;
use touchstone_results::convergence::DEFAULT_MIN_TRIALS;

use crate::params::{Param, Point};
use crate::support::background_load::{self, Level};
use crate::support::placement::usable_cpus;
use crate::support::sys::errno;

pub const INTERVAL: Param = Param::duration("interval", 50_000, 100_000_000)
    .measured(&["1ms"])
    .help("time between a thread's deadlines (cyclictest -i)");

pub const DURATION: Param = Param::duration("duration", 1_000_000, 3_600_000_000_000)
    .measured(&["10s"])
    .quick(&["2s"])
    .help("measured time per point, at least 100 intervals (split over the trials)");

pub const POLICY: Param = Param::choice("policy", &["other", "fifo"])
    .measured(&["other"])
    .help("scheduling policy of the measuring (or waiting) threads: other (SCHED_OTHER) or fifo (SCHED_FIFO at `priority`; needs root, CAP_SYS_NICE or `ulimit -r`)");

pub const PRIORITY: Param = Param::int("priority", 1, 99)
    .measured(&["80"])
    .help("SCHED_FIFO priority, 1–99 (used with policy:fifo)");

/// A real-time family's measurement: the interval and duration (refused
/// when too short for a tail), the measuring threads' policy, the
/// background load, and the usable CPUs (one measuring thread each at
/// most).
#[derive(Debug, Clone, Copy)]
pub struct RtMeasure {
    pub interval_ns: u64,
    pub duration_ns: u64,
    pub policy: Policy,
    pub background: Level,
    pub cpus: u32,
}

impl RtMeasure {
    pub fn new(
        interval_ns: u64,
        duration_ns: u64,
        policy: Policy,
        background: Level,
    ) -> Result<RtMeasure, String> {
        if let Some(e) = duration_refusal(interval_ns, duration_ns) {
            return Err(e);
        }
        let cpus = usable_cpus().map_err(|e| e.to_string())?.len() as u32;
        Ok(RtMeasure {
            interval_ns,
            duration_ns,
            policy,
            background,
            cpus,
        })
    }

    /// From a point's `interval`, `duration`, `policy`, `priority` and
    /// `background`.
    pub fn of(p: &Point) -> Result<RtMeasure, String> {
        RtMeasure::new(
            p.num(INTERVAL.name),
            p.num(DURATION.name),
            Policy::of(p)?,
            Level::parse(p.text(background_load::PARAM.name))?,
        )
    }

    /// One measuring thread per CPU at most.
    pub fn max_load(&self) -> Option<u32> {
        Some(self.cpus.max(1))
    }

    /// The trial: a warm-up long enough for the threads to fault in and
    /// settle, then windows that split the duration over the least number
    /// of trials (one interval at least), paced by `pacing`.
    pub fn trial_plan(&self, run: &TrialPlan, pacing: Pacing) -> TrialPlan {
        TrialPlan {
            warmup_ns: 200_000_000,
            window_ns: (self.duration_ns / DEFAULT_MIN_TRIALS as u64).max(self.interval_ns),
            pacing,
            ..run.clone()
        }
    }
}

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
    use crate::RunContext;

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
        let mode = &RunContext::new(true);
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
}
