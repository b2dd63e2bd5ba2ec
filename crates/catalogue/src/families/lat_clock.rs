//! lat_clock: what reading the time costs, one case per clock. The POSIX
//! clocks (monotonic, realtime, monotonic_coarse, boottime) through
//! clock_gettime(2) in libc, which answers from the vDSO without entering
//! the kernel where the clock source allows (a fallback to the system call
//! shows as a figure near lat_syscall/null); `tsc` reads the x86-64
//! time-stamp counter with rdtsc, the cheapest clock there is and the one
//! the harness's own clock calibration competes with.

use touchstone_harness::{Benchmark, Context, Fallible, Shape};

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::sys::errno;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Clock {
    Posix(libc::clockid_t),
    Tsc,
}

/// The clocks, as the `clock` parameter names them.
const CLOCKS: &[(&str, Clock)] = &[
    ("monotonic", Clock::Posix(libc::CLOCK_MONOTONIC)),
    ("realtime", Clock::Posix(libc::CLOCK_REALTIME)),
    (
        "monotonic_coarse",
        Clock::Posix(libc::CLOCK_MONOTONIC_COARSE),
    ),
    ("boottime", Clock::Posix(libc::CLOCK_BOOTTIME)),
    ("tsc", Clock::Tsc),
];

/// The default cases: every clock this machine has (rdtsc is x86-64's).
const DEFAULT: &[&str] = if cfg!(target_arch = "x86_64") {
    &[
        "monotonic",
        "realtime",
        "monotonic_coarse",
        "boottime",
        "tsc",
    ]
} else {
    &["monotonic", "realtime", "monotonic_coarse", "boottime"]
};

/// One read of a POSIX clock, in nanoseconds since its epoch.
#[inline(always)]
fn posix_ns(id: libc::clockid_t) -> Fallible<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a clock id from CLOCKS and a timespec on the stack.
    if unsafe { libc::clock_gettime(id, &mut ts) } != 0 {
        return Err(errno("clock_gettime"));
    }
    Ok(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// One read of the time-stamp counter.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tsc() -> u64 {
    // SAFETY: rdtsc is available on every x86-64 CPU.
    unsafe { std::arch::x86_64::_rdtsc() }
}

pub struct LatClock {
    clock: Clock,
    sink: u64,
}

impl Benchmark for LatClock {
    /// One untimed read, so that a clock this kernel lacks fails here with
    /// its name rather than mid-measurement.
    fn setup(&mut self, _: &Context) -> Fallible {
        if let Clock::Posix(id) = self.clock {
            self.sink = posix_ns(id)?;
        }
        Ok(())
    }

    /// Timed: `n` reads of the clock, one after another, and nothing else.
    /// Every reading is added into `sink` (black_boxed), so no read can be
    /// dropped; clock_gettime is a call into the vDSO the optimiser cannot
    /// see through, and rdtsc is never merged or hoisted. The reads are
    /// not serialised (no fence around rdtsc): the figure is what a timing
    /// loop reading the clock back to back pays per read.
    fn run(&mut self, n: u64) -> Fallible {
        let mut sum = self.sink;
        match self.clock {
            Clock::Posix(id) => {
                for _ in 0..n {
                    sum = sum.wrapping_add(posix_ns(id)?);
                }
            }
            #[cfg(target_arch = "x86_64")]
            Clock::Tsc => {
                for _ in 0..n {
                    sum = sum.wrapping_add(tsc());
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            Clock::Tsc => unreachable!("refused in build"),
        }
        self.sink = std::hint::black_box(sum);
        Ok(())
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let name = p.text("clock");
    let (_, clock) = *CLOCKS
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| format!("unknown clock {name}"))?;
    if clock == Clock::Tsc && !cfg!(target_arch = "x86_64") {
        return Err(
            "tsc: unsupported here: the time-stamp counter is read with x86-64's rdtsc".into(),
        );
    }
    Ok(Built::new(LatClock { clock, sink: 0 }, Shape::latency(1.0)))
}

pub const FAMILY: Family = Family {
    params: &[Param::choice("clock", &["monotonic", "realtime", "monotonic_coarse", "boottime", "tsc"])
        .positional()
        .measured(DEFAULT)
        .help("monotonic, realtime, monotonic_coarse, boottime (clock_gettime via the vDSO) or tsc (rdtsc, x86-64)")],
    ..Family::new(
        "lat_clock",
        "proc",
        "cost of reading the time: clock_gettime per clock (vDSO), and the TSC",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Kind;

    /// Every clock the parameter names is one this file reads.
    #[test]
    fn every_choice_is_a_clock() {
        let Kind::Choice(names) = FAMILY.params[0].kind else {
            panic!("clock is a choice");
        };
        assert_eq!(names, CLOCKS.iter().map(|c| c.0).collect::<Vec<_>>());
        assert!(DEFAULT.iter().all(|d| names.contains(d)));
    }

    /// Each clock reads sensibly: the monotonic ones never go back, the
    /// coarse one is behind the fine one by under a tick, realtime is the
    /// wall clock.
    #[test]
    fn each_clock_reads_the_time() {
        for (name, clock) in CLOCKS {
            let Clock::Posix(id) = *clock else { continue };
            let (a, b) = (posix_ns(id).unwrap(), posix_ns(id).unwrap());
            assert!(b >= a, "{name} went back: {a} then {b}");
        }
        let coarse = posix_ns(libc::CLOCK_MONOTONIC_COARSE).unwrap();
        let fine = posix_ns(libc::CLOCK_MONOTONIC).unwrap();
        assert!(
            coarse <= fine + 1_000_000,
            "coarse {coarse} ahead of {fine}"
        );
        assert!(
            fine - coarse < 1_000_000_000,
            "coarse {coarse} far behind {fine}"
        );
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        let real = posix_ns(libc::CLOCK_REALTIME).unwrap();
        assert!(
            real.abs_diff(wall) < 1_000_000_000,
            "realtime {real}, wall {wall}"
        );
        #[cfg(target_arch = "x86_64")]
        {
            let (a, b) = (tsc(), tsc());
            assert!(b > a, "the TSC did not advance: {a} then {b}");
        }
    }
}
