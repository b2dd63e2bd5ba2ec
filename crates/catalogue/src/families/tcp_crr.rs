//! tcp_crr: connect, request, response, close — one new TCP connection per
//! transaction on 127.0.0.1 (netperf's TCP_CRR), a workload on the
//! load-curve engine. Each of the L clients (one process each) opens a
//! connection, sends a request of `size` bytes, reads the response of the
//! same size and closes. The server accepts and answers with epoll
//! (`support::echo_server`): by default one worker thread per CPU of the
//! point, each with its own listener on its own port, client i
//! connecting to worker i mod k (`support::server_workers`), so accepting
//! scales with the machine; `server:one` gives one thread accepting and
//! answering every connection. It stresses what
//! tcp_rr does not: the three-way handshake, accept, socket creation and
//! teardown.
//!
//! TIME_WAIT. The side that closes first keeps its end of the connection
//! in TIME_WAIT for 60 s, holding its 4-tuple. Here the client closes
//! first (as netperf's TCP_CRR), so every transaction leaves a client
//! socket in TIME_WAIT; from one source address, 28 232 ephemeral ports
//! (the default range) last for about 470 connections a second before
//! connect fails with EADDRNOTAVAIL — the figure would then measure the
//! port space, or the kernel's reuse of TIME_WAIT ports (tcp_tw_reuse),
//! not the stack. touchstone keeps the close an ordinary close (no
//! SO_LINGER reset, no sysctl changed) and instead spreads each client's
//! connections over 4096 source addresses of 127/8 (client i uses
//! 127.(16 + i mod 224).x.y, port picked at connect with
//! IP_BIND_ADDRESS_NO_PORT), so each address sees one connection in 4096
//! and its ports never run out. The sockets still pass through TIME_WAIT;
//! the kernel's cost of holding them is part of what is measured.
//!
//! Placement (`cpus`, within the point's CPUs c0 … c(k−1)): `same` —
//! worker j and the clients it serves on c(j) (one server thread: it and
//! every client on c0); `spread` — worker j on c(j), its clients on
//! c(j+1 mod k) (one server thread: it on c0, client i on
//! c(1 + i mod (k−1))); `free` (default) — the scheduler decides.
//!
//! Timed (by the engine, per transaction): socket, bind, connect, write,
//! the blocking read of the whole response, close.

use std::os::fd::RawFd;

use touchstone_harness::workload::{
    check_open_files, loads_from, Client, ClientContext, ServerContext, ServerLink, TrialContext,
    Workload,
};
use touchstone_harness::{BenchError, Fallible};

use crate::family::{Family, RunContext};
use crate::params::{Param, Point};
use crate::support::echo_server::{self, Until};
use crate::support::placement::{self, pin_self};
use crate::support::server_workers::{self, EchoSide, Workers};
use crate::support::sockets::{
    bind_loopback_source, connect_loopback, inet_socket, read_or_eof, set_nodelay,
};
use crate::support::sys::{self, check};

pub const NAME: &str = "tcp_crr";
pub const SUMMARY: &str =
    "connect, request, response, close per transaction over TCP on 127.0.0.1 (netperf TCP_CRR)";
pub const OPERATION: &str = "transaction";
/// The most clients (one process each).
pub const MAX_LOAD: u32 = 1024;
/// Source addresses each client rotates over (see the header).
const SOURCES: u32 = 4096;

/// The request and response size of the echo server, and its bounds.
pub const SIZE: Param = echo_server::SIZE
    .help("request and response size in bytes (netperf TCP_CRR: 1; seed 003's RR: 4)");

pub const PARAMS: &[Param] = &[SIZE, server_workers::PARAM, placement::SERVER_PARAM];

pub fn build(p: &Point, ctx: &RunContext) -> Result<Box<dyn Workload>, String> {
    Ok(Box::new(TcpCrr {
        side: EchoSide::from_point(p, &SIZE, ctx.quick)?,
    }))
}

pub struct TcpCrr {
    side: EchoSide,
}

impl TcpCrr {
    /// Client `i` connects to worker i mod w; with a worker per CPU it
    /// is placed as that worker's client, with one as before.
    fn client_cpu(&self, cpus: &[usize], i: u32) -> Option<usize> {
        let s = &self.side;
        match s.workers {
            Workers::One => placement::client_beside_server(s.placement, cpus, i),
            Workers::PerCpu => s.workers.client_cpu(s.placement, cpus, i),
        }
    }
}

impl Workload for TcpCrr {
    fn op_types(&self) -> &[&str] {
        &[OPERATION]
    }
    fn max_load(&self) -> Option<u32> {
        Some(MAX_LOAD)
    }
    fn default_loads(&self, usable: usize) -> Vec<u32> {
        loads_from(self.side.quick, 1, usable, Some(MAX_LOAD))
    }
    /// The server holds at most one connection per client at a time (a
    /// closed one is released before that client's next connect completes
    /// its accept), the listener, epoll and the engine's few.
    fn check_load(&self, load: u32) -> Result<(), String> {
        let cpus = touchstone_harness::workload::cpu::usable_cpus().map_or(1, |c| c.len());
        let needed = 2 * load as u64 + 2 * self.side.workers.count(cpus) as u64 + 32;
        check_open_files(load, needed, "the tcp_crr server process")
    }

    fn prepare(&mut self, ctx: &TrialContext) -> Fallible {
        let backlog = (2 * ctx.load).clamp(128, 4096) as i32;
        let n = self.side.workers.count(ctx.cpus.len());
        self.side.socks = server_workers::tcp_listeners(n, backlog)?;
        Ok(())
    }

    fn release(&mut self) {
        self.side.release();
    }

    fn has_server(&self) -> bool {
        true
    }

    /// Each worker accepts and answers on its own listener until told to
    /// stop (connections come and go all the time).
    fn serve(&self, ctx: &ServerContext, link: &mut dyn ServerLink) -> Fallible {
        self.side.serve(&ctx.cpus, link, &|listener, link| {
            echo_server::serve_epoll(listener, self.side.size, Until::Stopped, link)
        })
    }

    fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        server_workers::close_all(&self.side.socks);
        if let Some(cpu) = self.client_cpu(&ctx.cpus, ctx.client) {
            pin_self(cpu)?;
        }
        Ok(Box::new(CrrClient {
            port: self.side.port_of(ctx.client),
            net: 16 + (ctx.client % 224) as u8,
            k: 0,
            buf: vec![0x5a; self.side.size],
        }))
    }
}

/// The last two octets of connection `k`'s source address: SOURCES
/// distinct pairs, the last octet 1 … 254.
#[inline]
fn source(k: u32) -> (u8, u8) {
    let s = k % SOURCES;
    ((s / 254) as u8, (s % 254 + 1) as u8)
}

struct CrrClient {
    port: u16,
    /// The second octet of this client's source addresses.
    net: u8,
    /// Connections made so far (chooses the next source address).
    k: u32,
    buf: Vec<u8>,
}

impl CrrClient {
    /// One transaction on a connected socket: request out, response in.
    #[inline]
    fn exchange(&mut self, fd: RawFd) -> Fallible {
        let (c, d) = source(self.k);
        self.k = self.k.wrapping_add(1);
        bind_loopback_source(fd, self.net, c, d)?;
        connect_loopback(fd, self.port)?;
        set_nodelay(fd)?;
        sys::write_all(fd, &self.buf).map_err(|e| BenchError(format!("write: {e}")))?;
        if !read_or_eof(fd, &mut self.buf)? {
            return Err("read: the server closed the connection before answering".into());
        }
        Ok(())
    }
}

impl Client for CrrClient {
    #[inline]
    fn op(&mut self) -> Fallible<usize> {
        let fd = inet_socket(libc::SOCK_STREAM)?;
        let r = self.exchange(fd);
        // An ordinary close: this end enters TIME_WAIT (see the header).
        // SAFETY: our own descriptor.
        check(unsafe { libc::close(fd) }, "close")?;
        r.map(|_| 0)
    }
}

pub const FAMILY: Family = Family {
    params: PARAMS,
    ..Family::workload(NAME, "workload", SUMMARY, OPERATION, build)
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::placement::Placement;
    use crate::support::server_workers::worker_of;
    use crate::testing::{reaped, short_trial};
    use touchstone_harness::workload::{cpu::usable_cpus, run_trial};

    #[test]
    fn connections_come_and_go_under_every_placement() {
        let cpus = usable_cpus().unwrap();
        for (place, workers) in [
            (Placement::Free, Workers::PerCpu),
            (Placement::Same, Workers::PerCpu),
            (Placement::Spread, Workers::PerCpu),
            (Placement::Free, Workers::One),
            (Placement::Spread, Workers::One),
        ] {
            let mut w = TcpCrr {
                side: EchoSide::new(4, place),
            };
            w.side.workers = workers;
            let o = run_trial(&mut w, 3, &cpus, &short_trial(), 0)
                .unwrap_or_else(|e| panic!("{place:?}: {e}"));
            assert!(o.every_client_ran_through());
            assert!(o.ops > 0 && o.throughput > 0.0);
            let l = o.latency();
            assert_eq!(l.len(), o.ops);
            assert!(l.value_at_quantile(0.5) <= l.value_at_quantile(0.99));
            assert!(l.value_at_quantile(0.99) <= l.max());
            assert!(o.service_demand().server_ns_per_op.is_some_and(|s| s > 0.0));
            assert!(w.side.socks.is_empty(), "the listeners are released");
            for &pid in &o.pids {
                assert!(reaped(pid), "process {pid} outlived the trial");
            }
        }
    }

    #[test]
    fn a_client_rotates_its_source_addresses() {
        // 4096 connections from one client use 4096 distinct sources.
        let seen: std::collections::HashSet<(u8, u8)> = (0..SOURCES).map(source).collect();
        assert_eq!(seen.len() as u32, SOURCES);
        assert!(seen.iter().all(|&(_, d)| (1..=254).contains(&d)));
        assert_eq!(source(SOURCES), source(0), "then round again");
    }

    #[test]
    fn spread_keeps_clients_off_the_servers_cpu() {
        let mut w = TcpCrr {
            side: EchoSide::new(4, Placement::Spread),
        };
        let cpus = [2, 4, 6];
        // A worker per CPU: client i beside no worker of its own.
        assert!((0..8).all(|i| w.client_cpu(&cpus, i) != w.side.worker_cpu(&cpus, worker_of(i, 3))));
        w.side.workers = Workers::One;
        let cpus = [2, 4, 6];
        assert!((0..8).all(|i| w.client_cpu(&cpus, i) != Some(2)));
        assert_eq!(w.client_cpu(&[5], 3), Some(5));
    }
}
