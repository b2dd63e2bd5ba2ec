//! udp_rr: request/response over UDP on 127.0.0.1 (netperf's UDP_RR), a
//! workload on the load-curve engine. L client sockets, each connected to
//! one server socket, each with one request of `size` bytes in flight:
//! send it, wait for the response datagram of the same size. The server
//! answers every datagram to its sender: by default one worker thread per
//! CPU of the point, each with a socket on its own port, client socket j
//! sending to worker j mod k (`support::server_workers`); `server:one`
//! gives one thread answering every socket. As in tcp_rr, client
//! processes multiplex (one per CPU of the point, each driving its share
//! of the L sockets with epoll: `support::multiplex`), so client i talks
//! to worker i alone.
//!
//! UDP may drop. On loopback a datagram is lost only when a receive buffer
//! is full; with one request in flight per socket a server socket's
//! buffer holds at most L datagrams, so each is asked for 4 MiB
//! (SO_RCVBUF, capped by net.core.rmem_max) — room for the largest load's
//! requests. A lost datagram
//! would leave its client waiting and the engine would stop the trial as
//! stalled, naming it: never a silent undercount.
//!
//! Placement (`cpus`): `same` — worker i and client i on c(i mod k) (one
//! server thread: it and every client on c0); `spread` — worker i on
//! c(i mod k), client i on c((i+1) mod k) (one server thread: it on c0,
//! the client processes on c1 … c(k−1)); `free` (default).
//!
//! Timed (by the engine, per transaction): the send of the request and
//! the receipt of its response.

use std::io;
use std::os::fd::RawFd;

use touchstone_harness::workload::{
    loads_from, Client, ClientContext, ServerContext, ServerLink, TrialContext, Workload,
};
use touchstone_harness::{BenchError, Fallible};

use crate::family::{Family, RunContext};
use crate::params::{Param, Point};
use crate::support::multiplex::{nothing_yet_or_error, share, Flow, Multiplexed};
use crate::support::placement;
use crate::support::server_workers::{self, EchoSide};
use crate::support::sockets::{self, bind_loopback, connect_loopback, inet_socket};
use crate::support::sys::close;

pub const NAME: &str = "udp_rr";
pub const SUMMARY: &str =
    "request/response transactions over N UDP sockets on 127.0.0.1 (netperf UDP_RR)";
pub const OPERATION: &str = "transaction";
pub const MAX_LOAD: u32 = 1024;
/// The server's receive buffer (see the header).
const SERVER_RCVBUF: i32 = 4 << 20;
/// How often the server looks at `should_stop` while idle.
const POLL_MS: i64 = 50;

pub const SIZE: Param = Param::size("size", 1, 65507)
    .measured(&["4"])
    .help("request and response datagram size in bytes (netperf UDP_RR: 1; seed 003's RR: 4)");

pub const PARAMS: &[Param] = &[SIZE, server_workers::PARAM, placement::SERVER_PARAM];

pub fn build(p: &Point, ctx: &RunContext) -> Result<Box<dyn Workload>, String> {
    Ok(Box::new(UdpRr {
        side: EchoSide::from_point(p, &SIZE, ctx.quick)?,
    }))
}

pub struct UdpRr {
    side: EchoSide,
}

impl UdpRr {
    fn client_cpu(&self, cpus: &[usize], i: u32) -> Option<usize> {
        self.side.workers.client_cpu(self.side.placement, cpus, i)
    }

    /// A server socket on its own port, with the room and the poll
    /// timeout the header describes.
    fn server_socket() -> Fallible<(RawFd, u16)> {
        let fd = inet_socket(libc::SOCK_DGRAM)?;
        let r = (|| {
            let port = bind_loopback(fd)?;
            sockets::set_int_opt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, SERVER_RCVBUF)?;
            sockets::set_recv_timeout_ms(fd, POLL_MS)?;
            Ok(port)
        })();
        match r {
            Ok(port) => Ok((fd, port)),
            Err(e) => {
                close(fd);
                Err(e)
            }
        }
    }
}

impl Workload for UdpRr {
    fn op_types(&self) -> &[&str] {
        &[OPERATION]
    }
    fn max_load(&self) -> Option<u32> {
        Some(MAX_LOAD)
    }
    fn default_loads(&self, usable: usize) -> Vec<u32> {
        loads_from(self.side.quick, 1, usable, Some(MAX_LOAD))
    }
    /// One client process per CPU (per other CPU when one server thread
    /// keeps its CPU under `spread`), each multiplexing its sockets.
    fn clients(&self, load: u32, cpus: usize) -> u32 {
        load.min(
            self.side
                .workers
                .multiplexed_clients(self.side.placement, cpus) as u32,
        )
    }
    /// A client process holds its share of the sockets.
    fn check_load(&self, load: u32) -> Result<(), String> {
        touchstone_harness::workload::check_open_files(
            load,
            load as u64 + 32,
            "a udp_rr client process",
        )
    }

    fn prepare(&mut self, ctx: &TrialContext) -> Fallible {
        for _ in 0..self.side.workers.count(ctx.cpus.len()) {
            match UdpRr::server_socket() {
                Ok(s) => self.side.socks.push(s),
                Err(e) => {
                    self.release();
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    fn release(&mut self) {
        self.side.release();
    }

    fn has_server(&self) -> bool {
        true
    }

    /// Every worker answers the datagrams of its own socket.
    fn serve(&self, ctx: &ServerContext, link: &mut dyn ServerLink) -> Fallible {
        self.side
            .serve(&ctx.cpus, link, &|server, link| self.answer(server, link))
    }

    fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        server_workers::close_all(&self.side.socks);
        if let Some(cpu) = self.client_cpu(&ctx.cpus, ctx.client) {
            placement::pin_self(cpu)?;
        }
        let mut flows = Vec::new();
        for j in share(ctx.load, ctx.clients, ctx.client) {
            flows.push(UdpFlow {
                fd: inet_socket(libc::SOCK_DGRAM)?,
                buf: vec![0x5a; self.side.size],
            });
            let fd = flows.last().unwrap().fd;
            bind_loopback(fd)?;
            connect_loopback(fd, self.side.port_of(j))?;
        }
        Ok(Box::new(Multiplexed::new(flows)?))
    }
}

impl UdpRr {
    /// Answer each datagram on `server` to its sender until told to stop.
    fn answer(&self, server: RawFd, link: &mut dyn ServerLink) -> Fallible {
        link.ready()?;
        let mut buf = vec![0u8; self.side.size.max(1)];
        // SAFETY: sockaddr_in is plain data.
        let mut from: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        while !link.should_stop() {
            let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            // SAFETY: receiving into our buffer and address.
            let r = unsafe {
                libc::recvfrom(
                    server,
                    buf.as_mut_ptr() as *mut libc::c_void,
                    buf.len(),
                    0,
                    &mut from as *mut _ as *mut libc::sockaddr,
                    &mut len,
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                if matches!(
                    e.kind(),
                    io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                ) {
                    continue; // the poll timeout: look at should_stop
                }
                return Err(BenchError(format!("recvfrom: {e}")));
            }
            // SAFETY: sending from our buffer to the sender's address.
            let s = unsafe {
                libc::sendto(
                    server,
                    buf.as_ptr() as *const libc::c_void,
                    r as usize,
                    0,
                    &from as *const _ as *const libc::sockaddr,
                    len,
                )
            };
            if s < 0 {
                let e = io::Error::last_os_error();
                // A client that has gone leaves an ICMP error behind.
                if e.raw_os_error() != Some(libc::ECONNREFUSED) {
                    return Err(BenchError(format!("sendto: {e}")));
                }
            }
        }
        Ok(())
    }
}

/// One client socket: one request in flight.
struct UdpFlow {
    fd: RawFd,
    buf: Vec<u8>,
}

impl Flow for UdpFlow {
    fn fd(&self) -> RawFd {
        self.fd
    }

    #[inline]
    fn start(&mut self) -> Fallible {
        // SAFETY: sending one datagram from our buffer on a connected socket.
        let r = unsafe {
            libc::send(
                self.fd,
                self.buf.as_ptr() as *const libc::c_void,
                self.buf.len(),
                0,
            )
        };
        if r != self.buf.len() as isize {
            return Err(BenchError(format!("send: {}", io::Error::last_os_error())));
        }
        Ok(())
    }

    #[inline]
    fn readable(&mut self) -> Fallible<Option<usize>> {
        // SAFETY: receiving one datagram into our buffer.
        let r = unsafe {
            libc::recv(
                self.fd,
                self.buf.as_mut_ptr() as *mut libc::c_void,
                self.buf.len(),
                0,
            )
        };
        if r == self.buf.len() as isize {
            return Ok(Some(0));
        }
        if r >= 0 {
            return Err(BenchError(format!(
                "recv: a datagram of {r} bytes, expected {}",
                self.buf.len()
            )));
        }
        nothing_yet_or_error("recv")
    }
}

impl Drop for UdpFlow {
    fn drop(&mut self) {
        close(self.fd);
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
    use crate::support::server_workers::Workers;
    use touchstone_harness::workload::{cpu::usable_cpus, run_trial};

    #[test]
    fn datagrams_flow_under_every_placement_and_load() {
        let cpus = usable_cpus().unwrap();
        let plan = crate::testing::short_trial();
        for (place, load, size, workers) in [
            (Placement::Free, 1, 4, Workers::PerCpu),
            (Placement::Free, 7, 4, Workers::PerCpu),
            (Placement::Same, 5, 4, Workers::PerCpu),
            (Placement::Spread, 5, 1400, Workers::PerCpu),
            (Placement::Same, 5, 4, Workers::One),
            (Placement::Spread, 5, 1400, Workers::One),
        ] {
            let mut w = UdpRr {
                side: EchoSide::new(size, place),
            };
            w.side.workers = workers;
            let o = run_trial(&mut w, load, &cpus, &plan, 0)
                .unwrap_or_else(|e| panic!("{place:?} {load}: {e}"));
            assert_eq!(o.clients.len() as u32, w.clients(load, cpus.len()));
            assert!(o.every_client_ran_through());
            assert!(o.ops > 0, "{place:?} load {load}: {:?}", o.clients);
            let l = o.latency();
            assert_eq!(l.len(), o.ops);
            assert!(l.value_at_quantile(0.5) <= l.value_at_quantile(0.99));
            assert!(l.value_at_quantile(0.99) <= l.max());
            assert!(w.side.socks.is_empty(), "the server sockets are released");
        }
    }

    #[test]
    fn clients_multiplex_and_keep_off_the_servers_cpu_when_spread() {
        let mut w = UdpRr {
            side: EchoSide::new(4, Placement::Spread),
        };
        assert_eq!(w.clients(16, 3), 3, "a client per worker, one per CPU");
        w.side.workers = Workers::One;
        assert_eq!(w.clients(16, 3), 2);
        assert_eq!(w.clients(1, 3), 1);
        assert!((0..4).all(|i| w.client_cpu(&[1, 2, 3], i) != Some(1)));
        assert_eq!(
            UdpRr {
                side: EchoSide::new(4, Placement::Free)
            }
            .clients(16, 2),
            2
        );
    }
}
