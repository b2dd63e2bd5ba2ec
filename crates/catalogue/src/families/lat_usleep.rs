//! lat_usleep: how long a requested sleep really lasts (lmbench's
//! lat_usleep): the figure is the real duration of one sleep of `time`
//! through nanosleep, clock_nanosleep (CLOCK_MONOTONIC, relative), select,
//! poll (as ppoll: poll's millisecond timeout cannot ask for less than 1 ms)
//! or a one-shot interval timer (setitimer + sigsuspend until SIGALRM). The
//! excess over `time` is the timer slack plus wake-up latency.

use std::sync::atomic::{AtomicU64, Ordering};

use touchstone_harness::{Benchmark, Context, Fallible, Shape};

use crate::family::{Built, Family, RunContext};
use crate::params::{choice_enum, Param, Point};
use crate::support::sys::errno;

choice_enum! {
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Method {
        Nanosleep = "nanosleep", ClockNanosleep = "clock_nanosleep", Select = "select",
        Poll = "poll", Itimer = "itimer",
    }
}

static ALARMS: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_alarm(_: libc::c_int) {
    ALARMS.fetch_add(1, Ordering::Relaxed);
}

pub struct LatUsleep {
    method: Method,
    ns: u64,
    /// The signal mask sigsuspend waits with (SIGALRM unblocked).
    wait_mask: libc::sigset_t,
}

// SAFETY: sigset_t is plain data.
unsafe impl Send for LatUsleep {}

fn timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

fn timeval(ns: u64) -> libc::timeval {
    let us = ns / 1000;
    libc::timeval {
        tv_sec: (us / 1_000_000) as libc::time_t,
        tv_usec: (us % 1_000_000) as libc::suseconds_t,
    }
}

fn interrupted() -> bool {
    std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
}

impl Benchmark for LatUsleep {
    fn setup(&mut self, _: &Context) -> Fallible {
        if self.method == Method::Itimer {
            // SAFETY: installing a handler and blocking SIGALRM outside sigsuspend.
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = on_alarm as *const () as usize;
                libc::sigemptyset(&mut act.sa_mask);
                if libc::sigaction(libc::SIGALRM, &act, std::ptr::null_mut()) != 0 {
                    return Err(errno("sigaction"));
                }
                let mut block: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut block);
                libc::sigaddset(&mut block, libc::SIGALRM);
                libc::sigprocmask(libc::SIG_BLOCK, &block, &mut self.wait_mask);
                libc::sigdelset(&mut self.wait_mask, libc::SIGALRM);
            }
        }
        Ok(())
    }

    /// Timed: `n` sleeps of `time`, one after the other, each restarted
    /// with the time left if a signal interrupts it (itimer: arm a one-shot
    /// timer, then sigsuspend until its SIGALRM has been handled).
    fn run(&mut self, n: u64) -> Fallible {
        // SAFETY (all arms): valid timespec/timeval/sigset values on the stack.
        match self.method {
            Method::Nanosleep => {
                for _ in 0..n {
                    let mut req = timespec(self.ns);
                    let mut rem = timespec(0);
                    while unsafe { libc::nanosleep(&req, &mut rem) } != 0 {
                        if !interrupted() {
                            return Err(errno("nanosleep"));
                        }
                        req = rem;
                    }
                }
            }
            Method::ClockNanosleep => {
                for _ in 0..n {
                    let mut req = timespec(self.ns);
                    let mut rem = timespec(0);
                    loop {
                        let r = unsafe {
                            libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &req, &mut rem)
                        };
                        match r {
                            0 => break,
                            libc::EINTR => req = rem,
                            e => return Err(std::io::Error::from_raw_os_error(e).into()),
                        }
                    }
                }
            }
            Method::Select => {
                for _ in 0..n {
                    // Linux updates the timeval with the time left.
                    let mut tv = timeval(self.ns);
                    while unsafe {
                        libc::select(
                            0,
                            std::ptr::null_mut(),
                            std::ptr::null_mut(),
                            std::ptr::null_mut(),
                            &mut tv,
                        )
                    } != 0
                    {
                        if !interrupted() {
                            return Err(errno("select"));
                        }
                    }
                }
            }
            Method::Poll => {
                for _ in 0..n {
                    // ppoll does not update its timeout: a (rare) EINTR
                    // restarts the full time.
                    let ts = timespec(self.ns);
                    while unsafe { libc::ppoll(std::ptr::null_mut(), 0, &ts, std::ptr::null()) }
                        != 0
                    {
                        if !interrupted() {
                            return Err(errno("ppoll"));
                        }
                    }
                }
            }
            Method::Itimer => {
                let timer = libc::itimerval {
                    it_interval: timeval(0),
                    it_value: timeval(self.ns),
                };
                for _ in 0..n {
                    let before = ALARMS.load(Ordering::Relaxed);
                    if unsafe { libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut()) }
                        != 0
                    {
                        return Err(errno("setitimer"));
                    }
                    while ALARMS.load(Ordering::Relaxed) == before {
                        unsafe { libc::sigsuspend(&self.wait_mask) };
                    }
                }
            }
        }
        Ok(())
    }

    fn cleanup(&mut self) {
        if self.method == Method::Itimer {
            // SAFETY: disarm the timer and restore the default action.
            unsafe {
                let off: libc::itimerval = std::mem::zeroed();
                libc::setitimer(libc::ITIMER_REAL, &off, std::ptr::null_mut());
                libc::signal(libc::SIGALRM, libc::SIG_DFL);
            }
        }
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let method = Method::of(p, "method")?;
    let ns = p.num("time");
    if matches!(method, Method::Select | Method::Itimer) && !ns.is_multiple_of(1000) {
        return Err(format!(
            "time: {} cannot be expressed in whole microseconds, which {} takes",
            p.text("time"),
            p.text("method")
        ));
    }
    Ok(Built::new(
        LatUsleep {
            method,
            ns,
            // SAFETY: an empty sigset; setup fills it for itimer.
            wait_mask: unsafe { std::mem::zeroed() },
        },
        Shape::latency(1.0),
    )
    // An interval is at least one sleep (10 ms ones outlast the target).
    .with_iteration_ns(ns))
}

pub const FAMILY: Family = Family {
    params: &[
        Param::choice("method", Method::NAMES)
            .positional()
            .help("how to sleep"),
        Param::duration("time", 1_000, 1_000_000_000)
            .measured(&["1us", "10us", "100us", "1ms", "10ms", "20ms"])
            .quick(&["1us", "100us", "1ms", "10ms"])
            .help("requested sleep"),
    ],
    ..Family::new(
        "lat_usleep",
        "proc",
        "real duration of a requested sleep via nanosleep, clock_nanosleep, select, poll (ppoll), interval timer",
        build,
    )
};

#[cfg(test)]
mod tests {
    use crate::testing::{assert_sane, measure_tiny};

    #[test]
    fn every_method_sleeps_at_least_the_time_asked() {
        let ms = measure_tiny("lat_usleep/time:100us").unwrap();
        assert_eq!(ms.len(), 5);
        for m in ms {
            assert_sane(&m);
            // A sleep may overrun, never end early (less a clock tick's error).
            assert!(m.value() >= 99_000.0, "{}: {} ns", m.name, m.value());
        }
    }
}
