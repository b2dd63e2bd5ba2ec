//! touchstone's check on itself, end to end on 2 CPUs: a server whose
//! requests cost it CPU, served by one thread (the choke point issue 24
//! found in tcp_rr: flagged) and by a worker per CPU (the machine's CPUs
//! kept busy: not flagged). The check reads what each thread wanted of a
//! CPU — ran or waited for one — so the verdicts hold on a machine that
//! other work keeps busy too. No test asserts how long anything took.

use std::os::fd::RawFd;

use super::*;

/// Requests over UNIX socket pairs; each costs the server `work_ns` of
/// its own CPU; `workers` server threads share the pairs (pair j to
/// worker j mod workers).
struct Spinning {
    workers: usize,
    work_ns: u64,
    /// (server end, client end) per client.
    pairs: Vec<(RawFd, RawFd)>,
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn spin(ns: u64) {
    let end = thread_cpu_ns() + ns;
    while thread_cpu_ns() < end {}
}

fn byte(fd: RawFd, write: bool) -> bool {
    let mut b = [1u8];
    let r = unsafe {
        if write {
            libc::write(fd, b.as_ptr() as *const libc::c_void, 1)
        } else {
            libc::read(fd, b.as_mut_ptr() as *mut libc::c_void, 1)
        }
    };
    r == 1
}

impl Spinning {
    /// One worker: answer the pairs j ≡ `w` (mod workers), spinning
    /// `work_ns` per request, until told to stop.
    fn worker(&self, w: usize, link: &dyn ServerLink) -> Fallible {
        let mut fds: Vec<libc::pollfd> = self
            .pairs
            .iter()
            .enumerate()
            .filter(|(j, _)| j % self.workers == w)
            .map(|(_, &(s, _))| libc::pollfd {
                fd: s,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        while !link.should_stop() {
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 20) };
            if n <= 0 {
                continue;
            }
            for p in fds.iter_mut().filter(|p| p.revents != 0) {
                p.revents = 0;
                if !byte(p.fd, false) {
                    p.fd = -1; // the client has gone
                    continue;
                }
                spin(self.work_ns);
                byte(p.fd, true);
            }
        }
        Ok(())
    }
}

/// A ServerLink a worker thread shares: the stop flag the server's own
/// link sets.
struct Flag<'a>(&'a std::sync::atomic::AtomicBool);
impl ServerLink for Flag<'_> {
    fn ready(&mut self) -> Fallible {
        Ok(())
    }
    fn should_stop(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

struct SpinClient(RawFd);
impl Client for SpinClient {
    fn op(&mut self) -> Fallible<usize> {
        if !(byte(self.0, true) && byte(self.0, false)) {
            return Err("the server went away".into());
        }
        Ok(0)
    }
}

impl Workload for Spinning {
    fn prepare(&mut self, ctx: &TrialContext) -> Fallible {
        for _ in 0..ctx.load {
            let mut sv = [0; 2];
            let r =
                unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, sv.as_mut_ptr()) };
            if r != 0 {
                return Err("socketpair failed".into());
            }
            self.pairs.push((sv[0], sv[1]));
        }
        Ok(())
    }
    fn release(&mut self) {
        for (a, b) in self.pairs.drain(..) {
            unsafe {
                libc::close(a);
                libc::close(b);
            }
        }
    }
    fn has_server(&self) -> bool {
        true
    }
    fn serve(&self, _ctx: &ServerContext, link: &mut dyn ServerLink) -> Fallible {
        link.ready()?;
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            for w in 1..self.workers {
                let stop = &stop;
                s.spawn(move || self.worker(w, &Flag(stop)));
            }
            let r = self.worker(0, &*link);
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            r
        })
    }
    fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        Ok(Box::new(SpinClient(self.pairs[ctx.client as usize].1)))
    }
}

fn trial_on_two_cpus(workers: usize) -> Option<TrialOutcome> {
    let cpus = cpu::usable_cpus().unwrap();
    if cpus.len() < 2 {
        return None;
    }
    let mut w = Spinning {
        workers,
        work_ns: 200_000,
        pairs: Vec::new(),
    };
    let plan = TrialPlan {
        warmup_ns: 100_000_000,
        window_ns: 400_000_000,
        ..TrialPlan::default()
    };
    Some(run_trial(&mut w, 16, &cpus[..2], &plan, 0).unwrap())
}

#[test]
fn a_one_thread_server_on_two_cpus_is_touchstone_bound() {
    let Some(o) = trial_on_two_cpus(1) else {
        eprintln!("one usable CPU: a thread cannot be the choke point alone");
        return;
    };
    let c = o
        .self_check
        .clone()
        .expect("every thread of the trial read");
    assert!(c.bound, "{c:?}");
    assert_eq!(c.busiest, "server", "{c:?}");
    assert!(c.busiest_wanted >= 0.9, "{c:?}");
    let flag = o.to_trial(false).self_check.unwrap().flag(2).unwrap();
    assert!(flag.starts_with("touchstone-bound: server at "), "{flag}");
    // 16 clients and the server: every thread of the trial counted.
    assert_eq!(c.threads, 17, "{c:?}");
}

#[test]
fn a_server_with_a_worker_per_cpu_is_not() {
    let Some(o) = trial_on_two_cpus(2) else {
        return;
    };
    let c = o.self_check.expect("every thread of the trial read");
    assert!(!c.bound, "{c:?}");
    assert!(c.busiest.starts_with("server thread "), "{c:?}");
    assert!(c.own_wanted_cpus >= 1.8, "{c:?}");
}
