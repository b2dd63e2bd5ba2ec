//! The server side of the request/response workloads (tcp_rr, udp_rr,
//! tcp_crr) as worker threads: by default one per CPU of the point, so that
//! the server keeps up with the machine (issue 24: one epoll thread served
//! 140 k transactions/s at 1.00 CPU while 82 % of a 16-CPU machine idled,
//! where neper's threads reached 856 k); `server:one` keeps the single
//! thread as a named choice.
//!
//! Each worker has its own socket — a listener or a UDP socket on its own
//! port — and its own epoll set, so workers share nothing and never wake
//! one another. Connection (or client socket) j goes to worker j mod w:
//! with multiplexed clients, one per CPU, client i drives connections
//! i, i + k, … and so talks to worker i alone, as neper pairs its flows'
//! threads. (SO_REUSEPORT would spread connections by a hash of their
//! addresses: uneven at small loads, and different from trial to trial.)
//!
//! Placement (the workloads' `cpus` parameter) with w workers on the
//! point's CPUs c0 … c(k−1):
//! - `same`: worker i and client i on c(i mod k) — a connection never
//!   leaves its CPU (with one worker: everything on c0);
//! - `spread`: worker i on c(i mod k), client i on c((i + 1) mod k) — every
//!   exchange crosses CPUs (with one worker: the server on c0 alone, the
//!   clients on the others);
//! - `free`: nothing pinned; the scheduler decides.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::ScopedJoinHandle;
use std::time::Duration;

use touchstone_harness::workload::ServerLink;
use touchstone_harness::{BenchError, Fallible};

use super::placement::{self, client_beside_server, pin_self, Placement};
use super::sockets;
use super::sys::close;
use crate::params::{Param, Point};

/// How many worker threads serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workers {
    /// One per CPU of the point (the default).
    PerCpu,
    /// One thread serves every client (the server before issue 24).
    One,
}

/// The `server` parameter of udp_rr and tcp_crr (tcp_rr adds `threads`).
pub const PARAM: Param = Param::choice("server", &["per-cpu", "one"])
    .measured(&["per-cpu"])
    .help("server side: per-cpu (one worker thread per CPU of the point, each with its own socket and epoll) or one (a single thread serves every client)");

/// How often the supervising thread looks at the stop flag and its workers.
const WATCH: Duration = Duration::from_millis(10);

impl Workers {
    pub fn parse(s: &str) -> Option<Workers> {
        match s {
            "per-cpu" => Some(Workers::PerCpu),
            "one" => Some(Workers::One),
            _ => None,
        }
    }

    /// Workers on a point of `cpus` CPUs.
    pub fn count(self, cpus: usize) -> usize {
        match self {
            Workers::PerCpu => cpus.max(1),
            Workers::One => 1,
        }
    }

    /// The CPU worker `i` is pinned to, if any.
    pub fn worker_cpu(self, placement: Placement, cpus: &[usize], i: usize) -> Option<usize> {
        match (self, placement) {
            (_, Placement::Free) => None,
            (Workers::One, _) => Some(cpus[0]),
            (Workers::PerCpu, _) => Some(cpus[i % cpus.len()]),
        }
    }

    /// The CPU client `i` is pinned to, if any.
    pub fn client_cpu(self, placement: Placement, cpus: &[usize], i: u32) -> Option<usize> {
        let k = cpus.len();
        match (self, placement) {
            (_, Placement::Free) => None,
            (Workers::One, _) => client_beside_server(placement, cpus, i),
            (Workers::PerCpu, Placement::Same) => Some(cpus[i as usize % k]),
            (Workers::PerCpu, Placement::Spread) => Some(cpus[(i as usize + 1) % k]),
        }
    }

    /// Multiplexed client processes on `cpus` CPUs: one per CPU, but one
    /// fewer when a lone server thread keeps its CPU to itself (`spread`).
    pub fn multiplexed_clients(self, placement: Placement, cpus: usize) -> usize {
        match (self, placement) {
            (Workers::One, Placement::Spread) => cpus.saturating_sub(1).max(1),
            _ => cpus.max(1),
        }
    }
}

/// The server side of udp_rr and tcp_crr: what they take from a point
/// (the request and response size, the placement, the server's workers,
/// whether the run is quick) and the current trial's sockets.
#[derive(Debug)]
pub struct EchoSide {
    pub size: usize,
    pub placement: Placement,
    /// A worker per CPU (default) or one.
    pub workers: Workers,
    /// A quick run: two loads (`quick_loads_from`).
    pub quick: bool,
    /// The current trial's sockets, one per worker: (fd, port) of a
    /// listener (tcp_crr) or of a UDP socket (udp_rr).
    pub socks: Vec<(RawFd, u16)>,
}

impl EchoSide {
    pub fn new(size: usize, placement: Placement) -> EchoSide {
        EchoSide {
            size: size.max(1),
            placement,
            workers: Workers::PerCpu,
            quick: false,
            socks: Vec::new(),
        }
    }

    /// From the point's `size` parameter (each family has its own bounds),
    /// `cpus` (`placement::SERVER_PARAM`) and `server` (`PARAM`).
    pub fn from_point(p: &Point, size: &Param, quick: bool) -> Result<EchoSide, String> {
        let mut side = EchoSide::new(
            p.num(size.name) as usize,
            Placement::parse(p.text(placement::SERVER_PARAM.name))?,
        );
        side.workers = Workers::parse(p.text(PARAM.name)).unwrap_or(Workers::PerCpu);
        side.quick = quick;
        Ok(side)
    }

    /// The CPU worker `i` is pinned to, if any.
    pub fn worker_cpu(&self, cpus: &[usize], i: usize) -> Option<usize> {
        self.workers.worker_cpu(self.placement, cpus, i)
    }

    /// The port of the worker that serves connection (or socket) `j`.
    pub fn port_of(&self, j: u32) -> u16 {
        self.socks[worker_of(j, self.socks.len())].1
    }

    /// Close the trial's sockets.
    pub fn release(&mut self) {
        close_all(&self.socks);
        self.socks.clear();
    }

    /// Every worker runs `body(socket, link)` on its own socket, pinned as
    /// the placement says (`serve`).
    pub fn serve(
        &self,
        cpus: &[usize],
        link: &mut dyn ServerLink,
        body: &(dyn Fn(RawFd, &mut dyn ServerLink) -> Fallible + Sync),
    ) -> Fallible {
        serve(
            self.socks.len(),
            &|i| self.worker_cpu(cpus, i),
            link,
            &|i, link| body(self.socks[i].0, link),
        )
    }
}

/// The worker that serves connection (or client socket) `j` of `workers`.
pub fn worker_of(j: u32, workers: usize) -> usize {
    j as usize % workers.max(1)
}

/// How many of `load` connections worker `i` of `workers` serves.
pub fn connections_of(i: usize, workers: usize, load: u32) -> u32 {
    (0..load).filter(|&j| worker_of(j, workers) == i).count() as u32
}

/// `n` non-blocking TCP listeners on 127.0.0.1, each on its own port:
/// (descriptor, port) for each worker. On failure none is left open.
pub fn tcp_listeners(n: usize, backlog: i32) -> Fallible<Vec<(RawFd, u16)>> {
    let mut out: Vec<(RawFd, u16)> = Vec::with_capacity(n);
    for _ in 0..n.max(1) {
        match sockets::nonblocking_listener(backlog) {
            Ok(l) => out.push(l),
            Err(e) => {
                close_all(&out);
                return Err(e);
            }
        }
    }
    Ok(out)
}

/// Close every socket of a set made by `tcp_listeners` (or the UDP one).
pub fn close_all(socks: &[(RawFd, u16)]) {
    for &(fd, _) in socks {
        close(fd);
    }
}

/// A worker's link: ready counts into the supervisor's tally, and the
/// stop comes from the supervisor's flag.
struct WorkerLink<'a> {
    stop: &'a AtomicBool,
    ready: &'a AtomicUsize,
    readied: bool,
}

impl ServerLink for WorkerLink<'_> {
    fn ready(&mut self) -> Fallible {
        if !self.readied {
            self.readied = true;
            self.ready.fetch_add(1, Ordering::Release);
        }
        Ok(())
    }
    fn should_stop(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }
}

/// Run `workers` workers: worker i pinned to `cpu(i)` (if any) runs
/// `body(i, link)`. One worker runs in the calling thread, as the lone
/// server always has. With several, each is a thread named `server-i`;
/// the engine is told the server is ready once every worker is, and the
/// engine's stop reaches every worker; the first worker's error ends the
/// others and is returned.
pub fn serve(
    workers: usize,
    cpu: &(dyn Fn(usize) -> Option<usize> + Sync),
    link: &mut dyn ServerLink,
    body: &(dyn Fn(usize, &mut dyn ServerLink) -> Fallible + Sync),
) -> Fallible {
    if workers <= 1 {
        if let Some(c) = cpu(0) {
            pin_self(c)?;
        }
        return body(0, link);
    }
    let stop = AtomicBool::new(false);
    let ready = AtomicUsize::new(0);
    let ended = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(workers);
        let mut started = Ok(());
        for i in 0..workers {
            let (stop, ready, ended) = (&stop, &ready, &ended);
            let spawned = std::thread::Builder::new()
                .name(format!("server-{i}"))
                .spawn_scoped(s, move || {
                    let r = (|| {
                        if let Some(c) = cpu(i) {
                            pin_self(c)?;
                        }
                        let mut own = WorkerLink {
                            stop,
                            ready,
                            readied: false,
                        };
                        body(i, &mut own)
                    })();
                    if r.is_err() {
                        stop.store(true, Ordering::Release);
                    }
                    ended.fetch_add(1, Ordering::Release);
                    r
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    started = Err(BenchError(format!("cannot start a server thread: {e}")));
                    stop.store(true, Ordering::Release);
                    break;
                }
            }
        }
        let mut told_ready = false;
        while started.is_ok() && !stop.load(Ordering::Acquire) {
            if !told_ready && ready.load(Ordering::Acquire) == workers {
                // (No early return: the workers must be stopped and joined.)
                started = link.ready();
                told_ready = true;
                continue;
            }
            if link.should_stop() || ended.load(Ordering::Acquire) == workers {
                break;
            }
            std::thread::sleep(WATCH);
        }
        stop.store(true, Ordering::Release);
        join_all(handles, started)
    })
}

/// Join every server thread. The result is `so_far` if that is an error,
/// else the first thread's error (a panic counts as one), else Ok.
pub fn join_all(handles: Vec<ScopedJoinHandle<'_, Fallible>>, so_far: Fallible) -> Fallible {
    let mut first = so_far;
    for h in handles {
        let r = h
            .join()
            .unwrap_or_else(|_| Err(BenchError("a server thread panicked".into())));
        if first.is_ok() {
            first = r;
        }
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn connections_are_dealt_round_robin_and_pair_clients_with_workers() {
        assert_eq!(
            (0..6).map(|j| worker_of(j, 4)).collect::<Vec<_>>(),
            [0, 1, 2, 3, 0, 1]
        );
        assert_eq!(connections_of(1, 4, 6), 2);
        assert_eq!(connections_of(3, 4, 6), 1);
        assert_eq!((0..4).map(|i| connections_of(i, 4, 64)).sum::<u32>(), 64);
        // Client i of k multiplexed clients drives connections i, i + k, …:
        // all served by worker i.
        let k = 4;
        for i in 0..k {
            assert!(crate::support::multiplex::share(64, k, i)
                .all(|j| worker_of(j, k as usize) == i as usize));
        }
        assert_eq!(worker_of(5, 1), 0);
    }

    #[test]
    fn placement_of_workers_and_clients() {
        let cpus = [3, 5, 7];
        let w = Workers::PerCpu;
        assert_eq!(w.count(3), 3);
        assert_eq!(Workers::One.count(3), 1);
        for i in 0..6u32 {
            let same = (
                w.worker_cpu(Placement::Same, &cpus, i as usize),
                w.client_cpu(Placement::Same, &cpus, i),
            );
            assert_eq!(same.0, same.1, "same: a client beside its worker");
            let spread = w.client_cpu(Placement::Spread, &cpus, i);
            assert_ne!(w.worker_cpu(Placement::Spread, &cpus, i as usize), spread);
            assert!(cpus.contains(&spread.unwrap()));
        }
        assert_eq!(w.worker_cpu(Placement::Free, &cpus, 0), None);
        assert_eq!(w.client_cpu(Placement::Free, &cpus, 0), None);
        // The lone server keeps c0; under spread the clients keep off it.
        let one = Workers::One;
        assert_eq!(one.worker_cpu(Placement::Spread, &cpus, 0), Some(3));
        assert!((0..4).all(|i| one.client_cpu(Placement::Spread, &cpus, i) != Some(3)));
        assert_eq!(one.multiplexed_clients(Placement::Spread, 3), 2);
        assert_eq!(w.multiplexed_clients(Placement::Spread, 3), 3);
        assert_eq!(Workers::parse("per-cpu"), Some(Workers::PerCpu));
        assert_eq!(Workers::parse("epoll"), None);
    }

    struct Stopper {
        ready: bool,
        looks: Cell<u32>,
    }
    impl ServerLink for Stopper {
        fn ready(&mut self) -> Fallible {
            self.ready = true;
            Ok(())
        }
        fn should_stop(&self) -> bool {
            self.looks.set(self.looks.get() + 1);
            self.ready && self.looks.get() > 3
        }
    }

    #[test]
    fn workers_become_ready_together_and_stop_together() {
        let mut link = Stopper {
            ready: false,
            looks: Cell::new(0),
        };
        let served = AtomicUsize::new(0);
        serve(3, &|_| None, &mut link, &|i, l| {
            l.ready()?;
            while !l.should_stop() {
                std::thread::sleep(Duration::from_millis(1));
            }
            served.fetch_add(i + 1, Ordering::Relaxed);
            Ok(())
        })
        .unwrap();
        assert!(link.ready);
        assert_eq!(served.load(Ordering::Relaxed), 1 + 2 + 3);
    }

    #[test]
    fn a_failing_worker_stops_the_others_and_its_error_is_returned() {
        let mut link = Stopper {
            ready: false,
            looks: Cell::new(0),
        };
        let e = serve(4, &|_| None, &mut link, &|i, l| {
            if i == 2 {
                return Err("worker 2 broke".into());
            }
            l.ready()?;
            while !l.should_stop() {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        })
        .unwrap_err();
        assert_eq!(e.0, "worker 2 broke");
        assert!(!link.ready, "never ready: a worker failed first");
    }
}
