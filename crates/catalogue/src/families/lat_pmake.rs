//! lat_pmake: the wall time to finish `jobs` independent jobs started at
//! once, each burning `work` of CPU time (lmbench's lat_pmake, a model of
//! `make -j`). With jobs ≤ CPUs the figure stays near `work` plus the cost
//! of forking; beyond, it grows with jobs/CPUs and shows how evenly the
//! scheduler shares the machine.

use touchstone_harness::{Benchmark, Fallible, Shape};

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::sys::{self, Pid};

/// Burn `ns` of this thread's CPU time (kernel time spent reading the CPU
/// clock counts too: a job is charged exactly what it consumed).
fn burn(ns: u64) {
    let cpu = || {
        touchstone_harness::workload::cpu::cpu_time_ns(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0)
    };
    let start = cpu();
    let mut x = 1u64;
    while cpu().wrapping_sub(start) < ns {
        for _ in 0..64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
}

pub struct LatPmake {
    jobs: usize,
    work_ns: u64,
    pids: Vec<Pid>,
}

impl Benchmark for LatPmake {
    fn setup(&mut self, _: &touchstone_harness::Context) -> Fallible {
        self.pids = Vec::with_capacity(self.jobs);
        Ok(())
    }

    /// Timed: `n` batches; each forks `jobs` children (fork_helper: they
    /// `_exit` after burning `work` of CPU) and waits for all of them. The
    /// forks and waits are part of what a parallel make pays, so they stay.
    fn run(&mut self, n: u64) -> Fallible {
        let work = self.work_ns;
        for _ in 0..n {
            for _ in 0..self.jobs {
                match sys::fork_helper(move || {
                    burn(work);
                    0
                }) {
                    Ok(pid) => self.pids.push(pid),
                    Err(e) => {
                        self.cleanup();
                        return Err(e);
                    }
                }
            }
            while let Some(pid) = self.pids.pop() {
                if let Err(e) = sys::reap(pid) {
                    self.cleanup();
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    fn cleanup(&mut self) {
        for pid in self.pids.drain(..) {
            sys::kill_and_reap(pid);
        }
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    Ok(Built::new(
        LatPmake {
            jobs: p.num("jobs") as usize,
            work_ns: p.num("work"),
            pids: Vec::new(),
        },
        Shape::latency(1.0).with_switches_by_design(),
    ))
}

pub const FAMILY: Family = Family {
    params: &[
        Param::int("jobs", 1, 4096)
            .measured(&["1", "2", "4", "8", "16"])
            .quick(&["1", "2", "4", "8"])
            .help("jobs started at once"),
        Param::duration("work", 1_000, 10_000_000_000)
            .measured(&["1ms"])
            .help("CPU time each job burns"),
    ],
    ..Family::new(
        "lat_pmake",
        "proc",
        "wall time to finish N parallel jobs of a given CPU time each (a model of make -j)",
        build,
    )
};

#[cfg(test)]
mod tests {
    use crate::testing::{assert_sane, measure_tiny};

    #[test]
    fn jobs_take_at_least_their_work() {
        let ms = measure_tiny("lat_pmake/jobs:1,3/work:200us").unwrap();
        for m in ms {
            assert_sane(&m);
            assert!(m.value() >= 200_000.0, "{}: {} ns", m.name, m.value());
        }
    }
}
