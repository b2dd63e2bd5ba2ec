//! Where the processes of one benchmark instance run (lmbench3's
//! LMBENCH_SCHED). A ping-pong or a token ring between processes measures
//! two different things depending on placement: on one CPU, the cost of a
//! context switch; on two CPUs, the cost of waking another CPU (an IPI, and
//! on a virtual machine often a halted vCPU's exit to the host, ten times
//! the switch). Left to the scheduler, the pair lands one way or the other
//! from run to run and the figure becomes a mixture of the two, so the
//! families that pass messages take a `cpus` parameter and pin:
//!
//! - `same`: every process of an instance on one CPU (instance i on the
//!   i-th usable CPU, wrapping round), what lmbench calls SINGLE/BALANCED;
//! - `spread`: each process on its own CPU (instance i's member k on usable
//!   CPU i·members + k, wrapping round when there are fewer CPUs), UNIQUE;
//! - `free`: no pinning; the scheduler decides, as a plain program would.
//!
//! The CPUs are chosen from the affinity mask the benchmark process starts
//! with, so `taskset` and cgroup cpusets are respected.

use touchstone_harness::{BenchError, Context, Fallible, Shape};

use super::sys::{self, errno, Pid};
use crate::params::{Param, Point};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    Same,
    Spread,
    Free,
}

/// The warm-up `settle` asks for when processes may be on different CPUs.
pub const SETTLE_NS: u64 = 200_000_000;
/// The shortest interval `settle` allows when processes may be on
/// different CPUs.
pub const CROSS_CPU_INTERVAL_NS: u64 = 100_000_000;

/// The `cpus` parameter every message-passing family takes.
pub const PARAM: Param = Param::choice("cpus", &["same", "spread", "free"])
    .measured(&["same", "spread"])
    .quick(&["same"])
    .help("placement of the communicating processes: same (all on one CPU: the switch itself), spread (each on its own CPU: cross-CPU wake-up), free (the scheduler decides)");

/// The `cpus` parameter of the workloads with a server side of worker
/// threads (tcp_crr, udp_rr; `support::server_workers`): placement within
/// the point's CPUs.
pub const SERVER_PARAM: Param = Param::choice("cpus", &["same", "spread", "free"])
    .measured(&["free"])
    .help("placement within the point's CPUs: same (each server worker beside its clients), spread (clients on other CPUs than their worker; one server thread on its own CPU), free (the scheduler decides)");

impl Placement {
    pub fn parse(s: &str) -> Result<Placement, String> {
        match s {
            "same" => Ok(Placement::Same),
            "spread" => Ok(Placement::Spread),
            "free" => Ok(Placement::Free),
            o => Err(format!("unknown placement {o} (same, spread or free)")),
        }
    }

    /// The placement a case asked for, if its family has a `cpus` parameter.
    pub fn asked(p: &Point) -> Option<Placement> {
        p.0.iter()
            .any(|(n, _)| *n == PARAM.name)
            .then(|| Placement::parse(p.text(PARAM.name)).ok())
            .flatten()
    }

    /// The placement a case asked for (`free` when the family has no
    /// `cpus` parameter: nothing is pinned).
    pub fn of(p: &Point) -> Placement {
        Placement::asked(p).unwrap_or(Placement::Free)
    }

    /// What the harness must do for this placement: a cross-CPU (or
    /// unpinned) exchange wakes a CPU that has just gone idle, and on a
    /// virtual machine what that costs settles only after the host's idle
    /// handling has adapted to the rhythm of the exchange (measured here:
    /// the first 50-100 ms of a cross-CPU pipe ping-pong read up to 3x slow),
    /// so those cases get a longer warm-up; and each interval starts with a
    /// partner that has been idle (a stream's sender waits for its next
    /// command), so intervals are long enough to amortise that one wake-up
    /// (bw_pipe across CPUs: 5 ms intervals read 850-980 MB/s, 100 ms ones
    /// 1030-1100 MB/s, lmbench 1040-1160 MB/s).
    pub fn settle(self, shape: Shape) -> Shape {
        match self {
            Placement::Same => shape,
            _ => shape
                .with_warmup_ns(shape.warmup_ns.max(SETTLE_NS))
                .with_enough_ns(shape.enough_ns.max(CROSS_CPU_INTERVAL_NS)),
        }
    }

    /// Plan the placement of `members` processes and pin the calling
    /// (benchmark) process as member 0; the plan then places the helpers
    /// (`Pins::fork_helper`). Call before forking anything.
    pub fn pin(self, ctx: &Context, members: usize) -> Fallible<Pins> {
        let pins = self.plan(ctx, members)?;
        pins.apply(0)?;
        Ok(pins)
    }

    /// The CPU of each of `members` processes of this instance. Call in the
    /// benchmark process before it pins itself or forks anything.
    pub fn plan(self, ctx: &Context, members: usize) -> Fallible<Pins> {
        if self == Placement::Free {
            return Ok(Pins(Vec::new()));
        }
        let cpus = usable_cpus()?;
        let i = ctx.process as usize;
        Ok(Pins(
            (0..members)
                .map(|k| match self {
                    Placement::Same => cpus[i % cpus.len()],
                    _ => cpus[(i * members + k) % cpus.len()],
                })
                .collect(),
        ))
    }
}

/// A placement plan: the CPU of each member (empty: do not pin).
#[derive(Clone, Debug, Default)]
pub struct Pins(Vec<usize>);

impl Pins {
    /// Pin the calling process (or thread) as member `rank`; a no-op for
    /// `free`. Members past the plan's end wrap round it.
    pub fn apply(&self, rank: usize) -> Fallible {
        self.apply_to(0, rank)
    }

    /// Pin process `pid` (0: the caller) as member `rank`: lets a parent
    /// place a helper it has just forked before anything waits on it.
    fn apply_to(&self, pid: libc::pid_t, rank: usize) -> Fallible {
        match self.cpu(rank) {
            Some(cpu) => pin_to(pid, cpu),
            None => Ok(()),
        }
    }

    /// Fork a helper (`sys::fork_helper`) and pin it as member `rank` from
    /// this side, so it is placed when this returns; a helper that cannot be
    /// placed is killed and reaped.
    pub fn fork_helper(&self, rank: usize, body: impl FnOnce() -> i32) -> Fallible<Pid> {
        let pid = sys::fork_helper(body)?;
        if let Err(e) = self.apply_to(pid, rank) {
            sys::kill_and_reap(pid);
            return Err(e);
        }
        Ok(pid)
    }

    pub fn cpu(&self, rank: usize) -> Option<usize> {
        (!self.0.is_empty()).then(|| self.0[rank % self.0.len()])
    }
}

/// Where client `i` runs when one server thread sits on the point's first
/// CPU `cpus[0]`: `same` — there too; `spread` — on the others in turn
/// (on the only one when there is one); `free` — unpinned.
pub fn client_beside_server(placement: Placement, cpus: &[usize], i: u32) -> Option<usize> {
    let k = cpus.len();
    match placement {
        Placement::Free => None,
        Placement::Same => Some(cpus[0]),
        Placement::Spread if k == 1 => Some(cpus[0]),
        Placement::Spread => Some(cpus[1 + i as usize % (k - 1)]),
    }
}

/// The CPUs this process may run on, in ascending order.
pub fn usable_cpus() -> Fallible<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the kernel fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return Err(errno("sched_getaffinity"));
    }
    let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect();
    if cpus.is_empty() {
        return Err(BenchError("the affinity mask is empty".into()));
    }
    Ok(cpus)
}

/// Pin the calling thread to one CPU.
pub fn pin_self(cpu: usize) -> Fallible {
    pin_to(0, cpu)
}

/// Pin a process (0: the calling thread) to one CPU.
fn pin_to(pid: libc::pid_t, cpu: usize) -> Fallible {
    // SAFETY: a zeroed cpu_set_t with one valid bit set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(errno(&format!("cannot pin to CPU {cpu}")));
        }
    }
    Ok(())
}

/// The CPU the calling thread is running on now.
pub fn current_cpu() -> usize {
    // SAFETY: no arguments; returns -1 only on error.
    unsafe { libc::sched_getcpu().max(0) as usize }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn ctx(process: u32) -> Context {
        Context {
            process,
            parallel: 4,
            scratch: PathBuf::new(),
        }
    }

    #[test]
    fn plans_follow_the_usable_cpus() {
        let cpus = usable_cpus().unwrap();
        let n = cpus.len();
        for i in 0..4u32 {
            let same = Placement::Same.plan(&ctx(i), 3).unwrap();
            let want = cpus[i as usize % n];
            assert!((0..3).all(|k| same.cpu(k) == Some(want)));
            let spread = Placement::Spread.plan(&ctx(i), 3).unwrap();
            for k in 0..3 {
                assert_eq!(spread.cpu(k), Some(cpus[(i as usize * 3 + k) % n]));
            }
            if n > 1 {
                assert_ne!(spread.cpu(0), spread.cpu(1), "spread members share a CPU");
            }
        }
        assert_eq!(Placement::Free.plan(&ctx(0), 2).unwrap().cpu(0), None);
    }

    #[test]
    fn cross_cpu_cases_warm_up_and_time_longer() {
        let base = Shape::latency(1.0);
        assert_eq!(Placement::Same.settle(base), base);
        for p in [Placement::Spread, Placement::Free] {
            let s = p.settle(base);
            assert_eq!(s.warmup_ns, SETTLE_NS);
            assert_eq!(s.enough_ns, CROSS_CPU_INTERVAL_NS);
            // A family's own longer demands are kept.
            let own = p.settle(base.with_enough_ns(5 * CROSS_CPU_INTERVAL_NS));
            assert_eq!(own.enough_ns, 5 * CROSS_CPU_INTERVAL_NS);
        }
    }

    /// Pinning takes effect, in a forked process so the test runner's own
    /// threads keep their affinity.
    #[test]
    fn apply_pins_the_caller() {
        let cpus = usable_cpus().unwrap();
        let last = *cpus.last().unwrap();
        let pins = Pins(vec![last]);
        crate::testing::in_child(move || {
            pins.apply(0).map_err(|e| e.0)?;
            assert_eq!(usable_cpus().map_err(|e| e.0)?, [last]);
            assert_eq!(current_cpu(), last);
            Ok(())
        })
        .unwrap();
    }

    #[test]
    fn parse_names_the_bad_value() {
        assert!(Placement::parse("elsewhere")
            .unwrap_err()
            .contains("elsewhere"));
        assert_eq!(Placement::parse("spread"), Ok(Placement::Spread));
    }
}
