//! One client process driving several connections ("flows") at once, as
//! neper's flows and wrk's connections do: each flow has one operation in
//! flight, and one epoll loop serves whichever completes next. A load of
//! L connections then needs a few client processes (one per CPU) instead
//! of L, so at saturation the generator spends its CPU on transactions,
//! not on switching between L blocked processes — the difference between
//! a load generator that measures the server and one that measures itself.
//!
//! Latency stays per operation: each flow's start is stamped when its
//! request goes out, and `started_ns` hands the engine the start of the
//! operation just completed. A completed flow is restarted at the top of
//! the next call, after the engine has read its end time, so the next
//! request's send is never charged to the one that just finished.
//!
//! With a single flow the descriptor stays blocking and no epoll is used:
//! one connection costs exactly what a one-at-a-time client costs.

use std::os::fd::RawFd;

use touchstone_harness::clock::now_ns;
use touchstone_harness::workload::Client;
use touchstone_harness::{BenchError, Fallible};

use super::sockets::{self, epoll_add, set_nonblocking};
use super::sys::{check, close};

/// One connection of a multiplexed client: one operation in flight.
pub trait Flow {
    /// The descriptor whose input completes operations.
    fn fd(&self) -> RawFd;
    /// Begin an operation (send a request). Called once the previous one
    /// has completed.
    fn start(&mut self) -> Fallible;
    /// Input is waiting: consume it; Some(operation type) once the
    /// operation in flight has completed. A blocking descriptor (a lone
    /// flow) may wait here.
    fn readable(&mut self) -> Fallible<Option<usize>>;
    /// Whether the last `start` opened a new connection (HTTP without
    /// keep-alive opens one per operation; `fd` is -1 before the first):
    /// the client then adds the new descriptor to its epoll set. A flow
    /// closes a connection when it is done with it, which takes it out.
    fn reconnected(&self) -> bool {
        false
    }
    /// Bytes the operation just completed moved (`Client::bytes`); read
    /// right after `readable` returned it.
    fn bytes(&self) -> u64 {
        0
    }
}

/// What a flow's `readable` says after its non-blocking read or receive
/// (`what`) failed: nothing yet when it was interrupted or would block,
/// else the error.
#[inline]
pub fn nothing_yet_or_error(what: &str) -> Fallible<Option<usize>> {
    let e = std::io::Error::last_os_error();
    match e.kind() {
        std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock => Ok(None),
        _ => Err(BenchError(format!("{what}: {e}"))),
    }
}

/// The connections client `client` of `clients` drives out of `load`:
/// those j with j mod clients = client.
pub fn share(load: u32, clients: u32, client: u32) -> impl Iterator<Item = u32> {
    (client..load).step_by(clients.max(1) as usize)
}

/// A client over several flows (one epoll instance, level-triggered).
pub struct Multiplexed<F: Flow> {
    flows: Vec<F>,
    /// When each flow's operation in flight began.
    started: Vec<u64>,
    /// -1 for a lone flow (blocking, no epoll).
    ep: RawFd,
    events: Vec<libc::epoll_event>,
    /// events[next..ready] are still to be served.
    next: usize,
    ready: usize,
    /// The flow that completed last call, restarted at the top of the next.
    restart: Option<usize>,
    last_start: u64,
    last_bytes: u64,
    running: bool,
}

/// The longest epoll wait before looking again (the engine's stall
/// detection, not this, decides when a silent server is an error).
const WAIT_MS: libc::c_int = 200;

impl<F: Flow> Multiplexed<F> {
    /// Take over `flows` (at least one). With more than one, their
    /// descriptors are made non-blocking.
    pub fn new(flows: Vec<F>) -> Fallible<Multiplexed<F>> {
        if flows.is_empty() {
            return Err("a multiplexed client needs at least one flow".into());
        }
        let n = flows.len();
        let mut ep = -1;
        if n > 1 {
            // SAFETY: a new epoll instance, closed on drop.
            ep = check(
                unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) },
                "epoll_create1",
            )?;
            for (i, f) in flows.iter().enumerate().filter(|(_, f)| f.fd() >= 0) {
                let added = set_nonblocking(f.fd()).and_then(|_| epoll_add(ep, f.fd(), i as u64));
                if let Err(e) = added {
                    close(ep);
                    return Err(e);
                }
            }
        }
        Ok(Multiplexed {
            started: vec![0; n],
            events: vec![libc::epoll_event { events: 0, u64: 0 }; n.min(256)],
            flows,
            ep,
            next: 0,
            ready: 0,
            restart: None,
            last_start: 0,
            last_bytes: 0,
            running: false,
        })
    }

    pub fn flows(&self) -> &[F] {
        &self.flows
    }

    #[inline]
    fn begin(&mut self, f: usize) -> Fallible {
        self.started[f] = now_ns();
        self.flows[f].start()?;
        if self.ep >= 0 && self.flows[f].reconnected() {
            let fd = self.flows[f].fd();
            set_nonblocking(fd)?;
            epoll_add(self.ep, fd, f as u64)?;
        }
        Ok(())
    }

    #[inline]
    fn completed(&mut self, f: usize, ty: usize) -> usize {
        self.last_start = self.started[f];
        self.last_bytes = self.flows[f].bytes();
        self.restart = Some(f);
        ty
    }
}

impl<F: Flow> Client for Multiplexed<F> {
    #[inline]
    fn op(&mut self) -> Fallible<usize> {
        if !self.running {
            self.running = true;
            for f in 0..self.flows.len() {
                self.begin(f)?;
            }
        } else if let Some(f) = self.restart.take() {
            self.begin(f)?;
        }
        if self.ep < 0 {
            loop {
                if let Some(ty) = self.flows[0].readable()? {
                    return Ok(self.completed(0, ty));
                }
            }
        }
        loop {
            while self.next < self.ready {
                let f = self.events[self.next].u64 as usize;
                self.next += 1;
                if let Some(ty) = self.flows[f].readable()? {
                    return Ok(self.completed(f, ty));
                }
            }
            self.ready = sockets::epoll_wait(self.ep, &mut self.events, WAIT_MS)?;
            self.next = 0;
        }
    }

    fn started_ns(&self) -> Option<u64> {
        Some(self.last_start)
    }

    fn bytes(&self) -> u64 {
        self.last_bytes
    }
}

impl<F: Flow> Drop for Multiplexed<F> {
    fn drop(&mut self) {
        close(self.ep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::sys::{pipe, write_all};

    /// A flow over a pipe that a test writes "responses" into: an
    /// operation completes when `size` bytes have arrived.
    struct PipeFlow {
        rd: RawFd,
        size: usize,
        got: usize,
        starts: u32,
        ty: usize,
    }
    impl Flow for PipeFlow {
        fn fd(&self) -> RawFd {
            self.rd
        }
        fn start(&mut self) -> Fallible {
            self.starts += 1;
            Ok(())
        }
        fn readable(&mut self) -> Fallible<Option<usize>> {
            let mut b = [0u8; 64];
            let want = self.size - self.got;
            let r = unsafe { libc::read(self.rd, b.as_mut_ptr() as *mut libc::c_void, want) };
            if r < 0 {
                return Ok(None); // EAGAIN: spurious or partial
            }
            self.got += r as usize;
            if self.got == self.size {
                self.got = 0;
                return Ok(Some(self.ty));
            }
            Ok(None)
        }
    }

    #[test]
    fn shares_cover_every_connection_once() {
        let mut all: Vec<u32> = (0..3).flat_map(|c| share(10, 3, c)).collect();
        all.sort();
        assert_eq!(all, (0..10).collect::<Vec<_>>());
        assert_eq!(share(10, 3, 0).collect::<Vec<_>>(), vec![0, 3, 6, 9]);
        assert_eq!(share(2, 4, 3).count(), 0);
    }

    #[test]
    fn completes_whichever_flow_is_ready_and_restarts_it_next_call() {
        let mut writers = Vec::new();
        let mut flows = Vec::new();
        for ty in 0..3 {
            let (rd, wr) = pipe().unwrap();
            writers.push(wr);
            flows.push(PipeFlow {
                rd,
                size: 4,
                got: 0,
                starts: 0,
                ty,
            });
        }
        let rds: Vec<RawFd> = flows.iter().map(|f| f.rd).collect();
        let mut m = Multiplexed::new(flows).unwrap();
        // Flow 2's response arrives in two pieces; only then it completes.
        write_all(writers[2], b"ab").unwrap();
        write_all(writers[2], b"cd").unwrap();
        assert_eq!(m.op().unwrap(), 2);
        let s2 = m.started_ns().unwrap();
        assert!(s2 > 0);
        assert_eq!(
            m.flows().iter().map(|f| f.starts).collect::<Vec<_>>(),
            vec![1, 1, 1],
            "every flow started once; flow 2 not yet restarted"
        );
        write_all(writers[0], b"wxyz").unwrap();
        assert_eq!(m.op().unwrap(), 0);
        assert_eq!(m.flows()[2].starts, 2, "restarted on the next call");
        assert!(m.started_ns().unwrap() <= s2, "flow 0 began with the rest");
        drop(m);
        for fd in rds.into_iter().chain(writers) {
            close(fd);
        }
    }

    #[test]
    fn a_lone_flow_blocks_without_epoll() {
        let (rd, wr) = pipe().unwrap();
        let mut m = Multiplexed::new(vec![PipeFlow {
            rd,
            size: 2,
            got: 0,
            starts: 0,
            ty: 0,
        }])
        .unwrap();
        assert_eq!(m.ep, -1);
        write_all(wr, b"xy").unwrap();
        assert_eq!(m.op().unwrap(), 0);
        close(rd);
        close(wr);
        assert!(Multiplexed::<PipeFlow>::new(vec![]).is_err());
    }
}
