//! tcp_rr: request/response over N TCP connections on 127.0.0.1 (seed 003's
//! netperf TCP_RR), a workload on the load-curve engine. Each of the L
//! clients (one process each) sends a request of `size` bytes on its own
//! connection and waits for the response of the same size, as fast as it
//! can; one transaction is one request and its response. By default the
//! clients multiplex: as many client processes as the point has CPUs,
//! each driving its share of the L connections with epoll (neper's
//! flows), so that at saturation the generator is not what is measured;
//! `client:process` gives one blocking process per connection instead
//! (netperf's N processes). The server side is one process: by default
//! one worker thread per CPU of the point, each with its own listener and
//! epoll set, connection j served by worker j mod k
//! (`support::server_workers`: the server keeps up with the machine, and
//! multiplexed client i talks to worker i alone, as neper's thread
//! pairs); `server:one` gives the one epoll thread serving every
//! connection (before issue 24 the default: it capped the curve at one
//! CPU's worth of serving); `server:threads` one thread per connection.
//! Nagle is off on both ends; the listening ports are chosen by the
//! kernel.
//!
//! Placement (`cpus`, as the message-passing families, within the CPUs the
//! point is confined to, c0 … c(k−1)):
//! - `same`: per-cpu — worker i and client i on c(i mod k); one — the
//!   server and every client on c0; threads — client i and its server
//!   thread on c(i mod k);
//! - `spread`: per-cpu — worker i on c(i mod k), client i on
//!   c((i+1) mod k); one — the server on c0, client i on c((i+1) mod k)
//!   (with multiplexed clients, one per CPU c1 … c(k−1): the server's CPU
//!   is its own); threads — server thread i on c(2i mod k), client i on
//!   c((2i+1) mod k);
//! - `free` (default, as netperf's N processes): the scheduler decides.
//!
//! Run as a sweep: `touchstone run tcp_rr/load:1,2,4 --cpus 1,2` (the
//! load ladder is the spec's, the CPU counts `--cpus`; see `FAMILY`).
//!
//! With `remote:HOST:PORT` the server is `touchstone serve` on another host
//! (its echo: one thread per connection there; `server` and placement of
//! the server do not apply), and only the clients run here; the server's
//! CPU per transaction is then serve's own account, read over a
//! connection of its own at the window's edges.
//!
//! Timed (by the engine, per transaction): the client's write of the
//! request and its blocking read of the whole response; the server's
//! read, write and epoll calls lie inside that. Hot paths are raw libc
//! read/write on preallocated buffers.

use std::os::fd::RawFd;

use touchstone_harness::workload::{
    check_open_files, Client, ClientContext, ClientKind, ServerContext, ServerLink, TrialContext,
    Workload,
};
use touchstone_harness::{BenchError, Fallible};

use crate::family::{Family, RunContext};
use crate::params::{Kind, Param, Point};
use crate::support::echo_server::{self, Until};
use crate::support::multiplex::{nothing_yet_or_error, share, Flow, Multiplexed};
use crate::support::placement::{self, pin_self, Placement};
use crate::support::remote;
use crate::support::server_workers::{self, connections_of, worker_of, Workers};
use crate::support::sockets::{connect_loopback, inet_socket, read_or_eof, send_all, set_nodelay};
use crate::support::sys::{self, close};

pub const NAME: &str = "tcp_rr";
pub const SUMMARY: &str =
    "request/response transactions over N TCP connections on 127.0.0.1 (netperf TCP_RR)";
/// What one operation is.
pub const OPERATION: &str = "transaction";
/// The most connections (one descriptor each in the server).
pub const MAX_LOAD: u32 = 1024;
/// The largest message multiplexed clients use: one request or response
/// then always fits in its own socket's buffers (16 KiB to send, 128 KiB
/// to receive by default), so neither side can block the other; larger
/// messages get one blocking client per connection.
pub const MULTIPLEX_MAX_SIZE: usize = 64 * 1024;

/// The request and response size (`support::echo_server`, which serves it).
pub const SIZE: Param = echo_server::SIZE;

pub const SERVER: Param = Param {
    help: "server side: per-cpu (one worker thread per CPU of the point, each with its own listener and epoll), one (a single epoll thread serves every connection) or threads (one thread per connection)",
    kind: Kind::Choice(&["per-cpu", "one", "threads"]),
    ..server_workers::PARAM
};

/// The server workloads' placement, with tcp_rr's `spread`: with a
/// thread per connection, every thread and client on a CPU of its own.
pub const PLACEMENT: Param = placement::SERVER_PARAM.help("placement within the point's CPUs: same (server and clients share), spread (each on its own CPU), free (the scheduler decides)");

pub const CLIENT: Param = Param::choice("client", &["epoll", "process"])
    .measured(&["epoll"])
    .help("client side: epoll (one process per CPU, each multiplexing its connections, as neper) or process (one blocking process per connection, as netperf's N processes)");

pub const PARAMS: &[Param] = &[SIZE, SERVER, CLIENT, PLACEMENT, remote::PARAM];

/// How the client side drives its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientMode {
    Epoll,
    Process,
}

/// How the server side serves its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerMode {
    /// Epoll worker threads: one per CPU of the point, or one in all.
    Epoll(Workers),
    /// One blocking thread per connection.
    Threads,
}

impl ServerMode {
    /// The epoll server with a worker per CPU (the default).
    pub const PER_CPU: ServerMode = ServerMode::Epoll(Workers::PerCpu);
    /// The one epoll thread serving every connection.
    pub const ONE: ServerMode = ServerMode::Epoll(Workers::One);
}

/// Build the workload from a point of its parameters.
pub fn build(p: &Point, _: &RunContext) -> Result<Box<dyn Workload>, String> {
    let server = match p.text(SERVER.name) {
        "threads" => ServerMode::Threads,
        "one" => ServerMode::ONE,
        _ => ServerMode::PER_CPU,
    };
    let client = match p.text(CLIENT.name) {
        "process" => ClientMode::Process,
        _ => ClientMode::Epoll,
    };
    let mut w = TcpRr::new(
        p.num(SIZE.name) as usize,
        server,
        Placement::parse(p.text(PLACEMENT.name))?,
    );
    w.client = client;
    w.remote = remote::of(p).map(String::from);
    Ok(Box::new(w))
}

/// The workload: parameters, and the listening socket of the current trial.
pub struct TcpRr {
    pub size: usize,
    pub server: ServerMode,
    pub client: ClientMode,
    pub placement: Placement,
    /// HOST:PORT of a `touchstone serve` to use instead of a local server.
    pub remote: Option<String>,
    /// serve's CPU account during a remote trial.
    serve_cpu: Option<remote::ServeCpu>,
    /// The current trial's listeners, one per worker (one for
    /// `server:threads`): (descriptor, port).
    listeners: Vec<(RawFd, u16)>,
}

impl TcpRr {
    pub fn new(size: usize, server: ServerMode, placement: Placement) -> TcpRr {
        TcpRr {
            size: size.max(1),
            server,
            client: ClientMode::Epoll,
            placement,
            remote: None,
            serve_cpu: None,
            listeners: Vec::new(),
        }
    }

    /// The CPU of client `i` of `k`-CPU set `cpus`, if pinned.
    fn client_cpu(&self, cpus: &[usize], i: u32) -> Option<usize> {
        let k = cpus.len();
        let i = i as usize;
        match (self.placement, self.server) {
            (Placement::Free, _) => None,
            (_, ServerMode::Epoll(w)) => w.client_cpu(self.placement, cpus, i as u32),
            (Placement::Same, ServerMode::Threads) => Some(cpus[i % k]),
            (Placement::Spread, ServerMode::Threads) => Some(cpus[(2 * i + 1) % k]),
        }
    }

    /// The CPU of the server thread serving client `i` (epoll: worker
    /// `i`), if pinned.
    fn server_cpu(&self, cpus: &[usize], i: u32) -> Option<usize> {
        let k = cpus.len();
        let i = i as usize;
        match (self.placement, self.server) {
            (Placement::Free, _) => None,
            (_, ServerMode::Epoll(w)) => w.worker_cpu(self.placement, cpus, i),
            (Placement::Same, ServerMode::Threads) => Some(cpus[i % k]),
            (Placement::Spread, ServerMode::Threads) => Some(cpus[(2 * i) % k]),
        }
    }

    /// Listeners (workers) on a point of `cpus` CPUs.
    fn listener_count(&self, cpus: usize) -> usize {
        match self.server {
            ServerMode::Epoll(w) => w.count(cpus),
            ServerMode::Threads => 1,
        }
    }
}

impl Workload for TcpRr {
    fn client_kind(&self) -> ClientKind {
        ClientKind::Processes
    }
    fn op_types(&self) -> &[&str] {
        &[OPERATION]
    }
    fn max_load(&self) -> Option<u32> {
        Some(MAX_LOAD)
    }
    /// Multiplexed: one client process per CPU of the point (or per
    /// connection, when there are fewer); `spread` with the one epoll
    /// thread keeps the server's CPU to itself, so one per other CPU.
    fn clients(&self, load: u32, cpus: usize) -> u32 {
        if self.client != ClientMode::Epoll || self.size > MULTIPLEX_MAX_SIZE {
            return load;
        }
        let per_cpu = match self.server {
            ServerMode::Epoll(w) => w.multiplexed_clients(self.placement, cpus),
            ServerMode::Threads => cpus,
        };
        load.min(per_cpu as u32)
    }
    /// The server process holds every connection, a listener and an epoll
    /// descriptor per worker (up to one per CPU) and the engine's few.
    fn check_load(&self, load: u32) -> Result<(), String> {
        let cpus = touchstone_harness::workload::cpu::usable_cpus().map_or(1, |c| c.len());
        let needed = load as u64 + 2 * self.listener_count(cpus) as u64 + 32;
        check_open_files(load, needed, "the tcp_rr server process")
    }

    fn prepare(&mut self, ctx: &TrialContext) -> Fallible {
        if let Some(addr) = &self.remote {
            self.serve_cpu = Some(remote::ServeCpu::connect(addr)?);
            return Ok(());
        }
        let backlog = ctx.load.clamp(128, 4096) as libc::c_int;
        self.listeners =
            server_workers::tcp_listeners(self.listener_count(ctx.cpus.len()), backlog)?;
        Ok(())
    }

    fn release(&mut self) {
        self.serve_cpu = None;
        server_workers::close_all(&self.listeners);
        self.listeners.clear();
    }

    fn has_server(&self) -> bool {
        self.remote.is_none()
    }

    fn remote_server_cpu_ns(&self) -> Option<u64> {
        self.serve_cpu.as_ref().and_then(|c| c.sample().ok())
    }

    fn serve(&self, ctx: &ServerContext, link: &mut dyn ServerLink) -> Fallible {
        match self.server {
            ServerMode::Epoll(_) => self.serve_epoll(ctx, link),
            ServerMode::Threads => self.serve_threads(ctx, link),
        }
    }

    fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        // The listeners are the server's; this process's copies are not
        // needed (nor serve's CPU account, the supervisor's).
        server_workers::close_all(&self.listeners);
        if let Some(c) = &self.serve_cpu {
            c.close_inherited();
        }
        if let Some(cpu) = self.client_cpu(&ctx.cpus, ctx.client) {
            pin_self(cpu)?;
        }
        let mut flows = Vec::new();
        if let Some(addr) = &self.remote {
            for _ in share(ctx.load, ctx.clients, ctx.client) {
                flows.push(RrFlow::new(remote::connect_echo(addr)?, self.size));
            }
            return Ok(Box::new(Multiplexed::new(flows)?));
        }
        for conn in share(ctx.load, ctx.clients, ctx.client) {
            // A flow owns its descriptor from here (closed on drop).
            flows.push(RrFlow::new(inet_socket(libc::SOCK_STREAM)?, self.size));
            let fd = flows.last().unwrap().fd;
            let port = self.listeners[worker_of(conn, self.listeners.len())].1;
            connect_loopback(fd, port)?;
            set_nodelay(fd)?;
            if self.server == ServerMode::Threads {
                // Which connection this is, so its server thread can be placed.
                write_all(fd, &conn.to_ne_bytes())?;
            }
        }
        Ok(Box::new(Multiplexed::new(flows)?))
    }
}

/// One connection's client end: one transaction in flight.
struct RrFlow {
    fd: RawFd,
    buf: Vec<u8>,
    /// Bytes of the response so far.
    got: usize,
}

impl RrFlow {
    fn new(fd: RawFd, size: usize) -> RrFlow {
        RrFlow {
            fd,
            buf: vec![0x5a; size],
            got: 0,
        }
    }
}

impl Flow for RrFlow {
    fn fd(&self) -> RawFd {
        self.fd
    }

    /// Send the request whole. A multiplexed (non-blocking) connection
    /// whose send buffer is full waits for room: the server drains it, as
    /// a response always fits in its socket (`MULTIPLEX_MAX_SIZE`).
    #[inline]
    fn start(&mut self) -> Fallible {
        send_all(self.fd, &self.buf).map_err(|e| BenchError(format!("send: {e}")))
    }

    /// Read what has arrived of the response; done when it is whole. On a
    /// lone (blocking) connection this waits for it.
    #[inline]
    fn readable(&mut self) -> Fallible<Option<usize>> {
        // SAFETY: reading into the unfilled rest of our buffer.
        let r = unsafe {
            libc::read(
                self.fd,
                self.buf[self.got..].as_mut_ptr() as *mut libc::c_void,
                self.buf.len() - self.got,
            )
        };
        if r > 0 {
            self.got += r as usize;
            if self.got < self.buf.len() {
                return Ok(None);
            }
            self.got = 0;
            return Ok(Some(0));
        }
        if r == 0 {
            return Err("read: the server closed the connection".into());
        }
        nothing_yet_or_error("read")
    }
}

impl Drop for RrFlow {
    fn drop(&mut self) {
        close(self.fd);
    }
}

impl TcpRr {
    /// Epoll workers (`support::server_workers`), each serving the
    /// connections of its own listener (`support::echo_server`) until all
    /// of them have gone.
    fn serve_epoll(&self, ctx: &ServerContext, link: &mut dyn ServerLink) -> Fallible {
        let n = self.listeners.len();
        server_workers::serve(
            n,
            &|i| self.server_cpu(&ctx.cpus, i as u32),
            link,
            &|i, link| {
                let until = Until::AllGone(connections_of(i, n, ctx.load));
                echo_server::serve_epoll(self.listeners[i].0, self.size, until, link)
            },
        )
    }

    /// One thread per connection, each blocking in read and write; the
    /// accepting thread watches for the stop between accepts.
    fn serve_threads(&self, ctx: &ServerContext, link: &mut dyn ServerLink) -> Fallible {
        link.ready()?;
        std::thread::scope(|s| {
            let mut handles = Vec::with_capacity(ctx.load as usize);
            let cpus = &ctx.cpus;
            // Told to stop before every client came, it goes on to join
            // the threads it started: they end as their clients leave.
            echo_server::accept_n(self.listeners[0].0, ctx.load, link, &mut |fd| {
                let h = std::thread::Builder::new()
                    .name("tcp_rr-server".into())
                    .spawn_scoped(s, move || self.serve_connection(fd, cpus))
                    .map_err(|e| {
                        close(fd);
                        BenchError(format!("cannot start a server thread: {e}"))
                    })?;
                handles.push(h);
                Ok(())
            })?;
            server_workers::join_all(handles, Ok(()))
        })
    }

    /// One connection's server thread: learn which client it serves (for
    /// placement), then answer requests until the client closes.
    fn serve_connection(&self, fd: RawFd, cpus: &[usize]) -> Fallible {
        let result = (|| {
            set_nodelay(fd)?;
            let mut id = [0u8; 4];
            if !read_or_eof(fd, &mut id)? {
                return Ok(());
            }
            if let Some(cpu) = self.server_cpu(cpus, u32::from_ne_bytes(id)) {
                pin_self(cpu)?;
            }
            let mut buf = vec![0u8; self.size];
            while read_or_eof(fd, &mut buf)? {
                write_all(fd, &buf)?;
            }
            Ok(())
        })();
        close(fd);
        result
    }
}

// ------------------------------------------------ plumbing

/// Write all of `buf` (the shared retrying write), naming the call on error.
#[inline]
fn write_all(fd: RawFd, buf: &[u8]) -> Fallible {
    sys::write_all(fd, buf).map_err(|e| BenchError(format!("write: {e}")))
}

/// A workload (measured as a load curve over the spec's `load` ladder and
/// `--cpus`), in the report group of system workloads.
pub const FAMILY: Family = Family {
    params: PARAMS,
    ..Family::workload(NAME, "workload", SUMMARY, OPERATION, build)
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{reaped, short_trial};
    use touchstone_harness::workload::{
        cpu::usable_cpus, open_files_error, run_trial, validate, SweepPlan, TrialOutcome,
        TrialPlan, WorkloadError,
    };

    fn assert_sound(o: &TrialOutcome, load: u32, clients: u32) {
        assert_eq!(o.clients.len(), clients as usize);
        assert!(o.throughput > 0.0);
        assert!(
            o.every_client_ran_through(),
            "{:?} {:?}",
            o.window,
            o.clients
        );
        // (Each client ran through the window; on a machine this busy one
        // may complete nothing inside a short window, so only the sum.)
        assert!(o.clients.iter().map(|c| c.window_ops).sum::<u64>() > 0);
        let l = o.latency();
        assert_eq!(l.len(), o.ops);
        assert!(l.value_at_quantile(0.5) <= l.value_at_quantile(0.99));
        assert!(l.value_at_quantile(0.99) <= l.max());
        let demand = o.service_demand();
        assert!(demand.client_ns_per_op > 0.0, "{demand:?}");
        assert!(
            demand.server_ns_per_op.is_some_and(|s| s > 0.0),
            "{demand:?}"
        );
        // Little's law: clients in a closed loop = throughput × mean latency
        // (less the time between a client's operations; at most the
        // window's edges add one operation per client).
        let busy = o.throughput * l.mean() / 1e9 / load as f64;
        let edge = l.max() as f64 / o.window_ns() as f64;
        assert!(busy <= 1.0 + edge + 1e-3 && busy > 0.5, "X·R/L = {busy}");
        assert_eq!(
            o.pids.len(),
            clients as usize + 1,
            "the clients and the server"
        );
        for &pid in &o.pids {
            assert!(reaped(pid), "process {pid} outlived the trial");
        }
    }

    #[test]
    fn transactions_flow_with_either_server_and_every_placement() {
        let cpus = usable_cpus().unwrap();
        for (server, place, size) in [
            (ServerMode::PER_CPU, Placement::Free, 4),
            (ServerMode::PER_CPU, Placement::Same, 4),
            (ServerMode::PER_CPU, Placement::Spread, 60_000),
            (ServerMode::ONE, Placement::Free, 4),
            (ServerMode::Threads, Placement::Free, 4),
            (ServerMode::ONE, Placement::Spread, 100_000),
            (ServerMode::ONE, Placement::Spread, 60_000),
            (ServerMode::Threads, Placement::Same, 4),
            (ServerMode::Threads, Placement::Spread, 4),
        ] {
            for client in [ClientMode::Epoll, ClientMode::Process] {
                let mut w = TcpRr::new(size, server, place);
                w.client = client;
                let load = 5;
                let o = run_trial(&mut w, load, &cpus, &short_trial(), 0)
                    .unwrap_or_else(|e| panic!("{server:?} {client:?} {place:?} {size}: {e}"));
                let clients = w.clients(load, cpus.len());
                let expect = match (client, server, place) {
                    (ClientMode::Epoll, _, _) if size > MULTIPLEX_MAX_SIZE => load,
                    (ClientMode::Epoll, ServerMode::ONE, Placement::Spread) => {
                        (cpus.len() as u32 - 1).max(1)
                    }
                    (ClientMode::Epoll, _, _) => cpus.len() as u32,
                    _ => load,
                };
                assert_eq!(clients, expect.min(load));
                assert_sound(&o, load, clients);
                assert!(w.listeners.is_empty(), "the listeners are released");
            }
        }
    }

    #[test]
    fn a_multiplexed_client_has_every_connection_in_flight() {
        // One client process over 8 connections on one CPU: the merged
        // histogram counts the window's transactions, and by Little's law
        // more than one connection was busy at a time on average.
        let cpus = &usable_cpus().unwrap()[..1];
        let mut w = TcpRr::new(4, ServerMode::PER_CPU, Placement::Free);
        let plan = TrialPlan {
            window_ns: 500_000_000,
            ..short_trial()
        };
        let o = run_trial(&mut w, 8, cpus, &plan, 0).unwrap();
        assert_eq!(o.clients.len(), 1);
        let l = o.latency();
        let in_flight = o.throughput * l.mean() / 1e9;
        // At most the 8 connections, plus what operations straddling the
        // window's edges add (as much as the longest one over the window).
        let edge = 8.0 * l.max() as f64 / o.window_ns() as f64;
        assert!(
            in_flight > 1.5 && in_flight < 8.0 + edge + 0.1,
            "X·R = {in_flight}, edge {edge}"
        );
    }

    #[test]
    fn placement_stays_within_the_points_cpus() {
        let cpus = [3, 5, 7];
        let w = TcpRr::new(4, ServerMode::Threads, Placement::Spread);
        for i in 0..6 {
            assert!(cpus.contains(&w.client_cpu(&cpus, i).unwrap()));
            assert_ne!(w.client_cpu(&cpus, i), w.server_cpu(&cpus, i));
        }
        let same = TcpRr::new(4, ServerMode::Threads, Placement::Same);
        assert_eq!(same.client_cpu(&cpus, 4), same.server_cpu(&cpus, 4));
        let epoll = TcpRr::new(4, ServerMode::ONE, Placement::Spread);
        assert_eq!(epoll.server_cpu(&cpus, 9), Some(3));
        assert_eq!(epoll.client_cpu(&cpus, 0), Some(5));
        // Multiplexed, spread: the clients keep off the server's CPU.
        let n = epoll.clients(16, cpus.len());
        assert_eq!(n, 2);
        assert!((0..n).all(|i| epoll.client_cpu(&cpus, i) != Some(3)));
        let free = TcpRr::new(4, ServerMode::PER_CPU, Placement::Free);
        assert_eq!(
            (free.client_cpu(&cpus, 0), free.server_cpu(&cpus, 0)),
            (None, None)
        );
        // A worker per CPU: client i beside worker i (same), or on the next
        // CPU (spread), one client per CPU either way.
        let same = TcpRr::new(4, ServerMode::PER_CPU, Placement::Same);
        let spread = TcpRr::new(4, ServerMode::PER_CPU, Placement::Spread);
        assert_eq!(spread.clients(16, cpus.len()), 3);
        for i in 0..3 {
            assert_eq!(same.client_cpu(&cpus, i), same.server_cpu(&cpus, i));
            assert_eq!(same.server_cpu(&cpus, i), Some(cpus[i as usize]));
            assert_ne!(spread.client_cpu(&cpus, i), spread.server_cpu(&cpus, i));
        }
    }

    /// tcp_rr whose client 1 is killed mid-run: the engine reports it, the
    /// server copes with the vanished connection, nothing is left over.
    struct Dying(TcpRr);
    struct DyingClient<'a> {
        inner: Box<dyn Client + 'a>,
        doomed: bool,
        k: u32,
    }
    impl Client for DyingClient<'_> {
        fn op(&mut self) -> Fallible<usize> {
            self.k += 1;
            if self.doomed && self.k == 100 {
                unsafe { libc::raise(libc::SIGKILL) };
            }
            self.inner.op()
        }
    }
    impl Workload for Dying {
        fn op_types(&self) -> &[&str] {
            self.0.op_types()
        }
        fn prepare(&mut self, ctx: &TrialContext) -> Fallible {
            self.0.prepare(ctx)
        }
        fn release(&mut self) {
            self.0.release()
        }
        fn has_server(&self) -> bool {
            true
        }
        fn serve(&self, ctx: &ServerContext, link: &mut dyn ServerLink) -> Fallible {
            self.0.serve(ctx, link)
        }
        fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
            Ok(Box::new(DyingClient {
                inner: self.0.client(ctx)?,
                doomed: ctx.client == 1,
                k: 0,
            }))
        }
    }

    #[test]
    fn a_client_that_dies_is_an_error_not_a_hang() {
        let cpus = usable_cpus().unwrap();
        for server in [ServerMode::PER_CPU, ServerMode::ONE, ServerMode::Threads] {
            let mut w = Dying(TcpRr::new(4, server, Placement::Free));
            let plan = TrialPlan {
                warmup_ns: 2_000_000_000,
                ..short_trial()
            };
            match run_trial(&mut w, 3, &cpus, &plan, 0) {
                Err(WorkloadError::ClientDied { client: 1, how, .. }) => {
                    assert!(how.contains("signal 9"), "{how}")
                }
                other => panic!("{server:?}: {other:?}"),
            }
            assert!(w.0.listeners.is_empty());
        }
    }

    #[test]
    fn loads_the_machine_cannot_hold_are_refused_with_the_remedy() {
        let w = TcpRr::new(4, ServerMode::PER_CPU, Placement::Free);
        let plan = SweepPlan {
            loads: Some(vec![1, MAX_LOAD + 1]),
            ..SweepPlan::quick()
        };
        let e = validate(&w, &plan, 2).unwrap_err().to_string();
        assert!(e.contains(&format!("maximum of {MAX_LOAD}")), "{e}");
        let e = open_files_error(1000, 1032, 256, "the tcp_rr server process").unwrap();
        assert!(
            e.contains("ulimit -n") && e.contains("256") && e.contains("1032"),
            "{e}"
        );
        // The default ladder stops at 4 × CPUs.
        assert_eq!(
            validate(&w, &SweepPlan::quick(), 2).unwrap(),
            vec![1, 2, 4, 8]
        );
    }

    /// With `remote:`, the clients run against `touchstone serve`'s echo
    /// and no server process is forked here; the server's CPU per
    /// transaction is serve's own account.
    #[test]
    fn transactions_flow_against_a_remote_serve() {
        let (tcp, udp, addr) = remote::bind("127.0.0.1:0").unwrap();
        let limits = remote::ServeLimits::new(std::time::Duration::from_secs(2));
        let server = std::thread::spawn(move || remote::serve(tcp, udp, &limits));
        let cpus = usable_cpus().unwrap();
        let mut w = TcpRr::new(64, ServerMode::PER_CPU, Placement::Free);
        w.remote = Some(addr.to_string());
        assert!(!w.has_server());
        let o = run_trial(&mut w, 3, &cpus, &short_trial(), 0).unwrap();
        assert!(o.throughput > 0.0 && o.ops > 0);
        let served = o.service_demand().server_ns_per_op;
        assert!(
            served.is_some_and(|ns| ns.is_finite() && ns > 0.0),
            "serve's CPU per transaction: {served:?}"
        );
        assert_eq!(
            o.pids.len(),
            w.clients(3, cpus.len()) as usize,
            "clients only"
        );
        for &pid in &o.pids {
            assert!(reaped(pid), "process {pid} outlived the trial");
        }
        server.join().unwrap().unwrap();
    }

    #[test]
    fn parameters_build_the_workload() {
        let p = Point(vec![
            (SIZE.name, SIZE.parse("1k").unwrap()),
            (SERVER.name, SERVER.parse("threads").unwrap()),
            (CLIENT.name, CLIENT.parse("epoll").unwrap()),
            (PLACEMENT.name, PLACEMENT.parse("spread").unwrap()),
        ]);
        let w = FAMILY.make_workload(&p, &RunContext::default()).unwrap();
        assert_eq!(w.max_load(), Some(MAX_LOAD));
        // serve takes every connection of the largest load and its CPU account.
        assert!((MAX_LOAD as usize) < remote::DEFAULT_MAX_CONNECTIONS);
        assert!(FAMILY.is_workload() && FAMILY.make(&p, &RunContext::default()).is_err());
        assert!(w.has_server());
        assert_eq!(
            (w.clients(16, 2), w.clients(1, 2)),
            (2, 1),
            "multiplexed by default"
        );
        assert!(SIZE.parse("0").is_err());
        assert!(CLIENT.parse("process").is_ok() && CLIENT.parse("thread").is_err());
        assert!(SERVER.parse("fork").is_err());
        // A worker per CPU by default; the one thread by name.
        assert_eq!(SERVER.default, ["per-cpu"]);
        assert!(SERVER.parse("one").is_ok());
    }
}
