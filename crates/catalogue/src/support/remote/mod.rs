//! The communication families against another host: the `remote`
//! parameter (`lat_tcp/remote:10.0.0.7:7717`), the client sides that
//! replace the local helper process (here), and `serve`, the other end that
//! `touchstone serve` runs (`serve.rs`; lmbench's remote lat_tcp/bw_tcp
//! servers, and netperf's netserver, in spirit; no code of theirs).
//!
//! The protocol is the least that works: a TCP connection's first byte
//! says what it wants — `E` an echo of every byte sent (lat_tcp), `P` then
//! a 4-byte message size, then per request an 8-byte count: the server
//! sends that many messages (bw_tcp, timed at the receiver as the local
//! family is) — and a connection closed before any byte is a connect
//! (lat_connect). The server answers a request `+` before serving it, or
//! refuses it with `-`, a line saying why (too large, too many
//! connections, too slow to ask) and a close; the client waits for that
//! answer in its untimed setup. UDP datagrams to the same port are echoed
//! (lat_udp).
//! `C` opens serve's CPU account: per 1-byte request, 8 bytes back, the
//! CPU time the serve process has used in ns (less the answering thread's
//! own), so a client reads the server's CPU over its timed intervals from
//! serve itself — "CPU use at both ends" (seed 004), never an estimate.
//! The figures are whole-process: meaningful while one client at a time
//! uses the server, as `fleet run` ensures.

mod serve;

pub use serve::{bind, serve, ServeLimits, DEFAULT_MAX_CONNECTIONS};

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs, UdpSocket};
use std::os::fd::{IntoRawFd, RawFd};
use std::time::{Duration, Instant};

use touchstone_harness::{BenchError, Benchmark, Context, Fallible, Shape};

use super::one_way::process_cpu_s;
use super::sockets::{recv_datagram, set_recv_timeout, set_recv_timeout_ms};
use super::sys::{self, errno};
use crate::family::Built;
use crate::params::{Param, Point, LOCAL};

/// The `remote` parameter of the communication families.
pub const PARAM: Param = Param::address("remote")
    .measured(&[LOCAL])
    .help("HOST:PORT of a `touchstone serve` on another host to measure against, or local (two processes here)");

/// The server's address if the case is against another host.
/// (A point made without the parameter is local.)
pub fn of(p: &Point) -> Option<&str> {
    p.0.iter()
        .find(|(n, _)| *n == PARAM.name)
        .map(|(_, v)| v.text.as_str())
        .filter(|a| *a != LOCAL)
}

/// The case of a socket family that runs here or, with `remote:HOST:PORT`,
/// against `touchstone serve` there: messages of the point's `size`, in
/// `exchange` with serve, or in `local(size)`'s case between two local
/// processes.
pub fn local_or_remote(
    p: &Point,
    size: &Param,
    exchange: Exchange,
    local: impl FnOnce(usize) -> Result<Built, String>,
) -> Result<Built, String> {
    let size = p.num(size.name) as usize;
    match of(p) {
        Some(addr) => RemoteCase::case(addr, exchange, size),
        None => local(size),
    }
}

const ECHO: u8 = b'E';
const PULL: u8 = b'P';
const CPU: u8 = b'C';
/// The server's answer to a request it serves…
const ACCEPTED: u8 = b'+';
/// …and to one it refuses, followed by why, a line.
const REFUSED: u8 = b'-';

/// A CPU-time clock of this process or thread, in ns.
fn cpu_clock_ns(clock: libc::clockid_t) -> u64 {
    // SAFETY: clock_gettime into a local timespec.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// What serve has spent serving, ns: the process's CPU time (every thread,
/// those ended included) less the calling thread's, the one answering the
/// CPU queries, so that asking is not part of the answer.
fn serve_cpu_ns() -> u64 {
    cpu_clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID)
        .saturating_sub(cpu_clock_ns(libc::CLOCK_THREAD_CPUTIME_ID))
}

/// A connection to serve's CPU account (`C`).
pub struct ServeCpu {
    fd: RawFd,
}

impl ServeCpu {
    pub fn connect(addr: &str) -> Fallible<ServeCpu> {
        Ok(ServeCpu {
            fd: connect(addr, &[CPU])?,
        })
    }

    /// In a forked child that inherited the connection: close the child's
    /// copy (the parent's stays open).
    pub fn close_inherited(&self) {
        sys::close(self.fd);
    }

    /// serve's CPU time so far, ns (one round trip).
    pub fn sample(&self) -> Fallible<u64> {
        sys::write_all(self.fd, &[CPU])?;
        let mut ns = [0u8; 8];
        sys::read_exact(self.fd, &mut ns)?;
        Ok(u64::from_le_bytes(ns))
    }
}

impl Drop for ServeCpu {
    fn drop(&mut self) {
        sys::close(self.fd);
    }
}

fn resolve(addr: &str) -> Fallible<SocketAddr> {
    addr.to_socket_addrs()
        .map_err(|e| BenchError(format!("remote {addr}: {e}")))?
        .next()
        .ok_or_else(|| BenchError(format!("remote {addr}: no address")))
}

fn connect(addr: &str, first: &[u8]) -> Fallible<RawFd> {
    let a = resolve(addr)?;
    let mut s = TcpStream::connect_timeout(&a, Duration::from_secs(5)).map_err(|e| {
        BenchError(format!(
            "remote {addr}: cannot connect ({e}): is `touchstone serve --listen {addr}` running there?"
        ))
    })?;
    s.set_nodelay(true)
        .map_err(|e| BenchError(format!("nodelay: {e}")))?;
    // A peer that vanishes is an error after 5 s, never a hang.
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| BenchError(format!("timeout: {e}")))?;
    s.write_all(first)
        .map_err(|e| BenchError(format!("remote {addr}: {e}")))?;
    answer(&mut s).map_err(|e| BenchError(format!("remote {addr}: {e}")))?;
    Ok(s.into_raw_fd())
}

/// The server's answer to a request: Ok once accepted, else why not (its
/// refusal line, at most 512 bytes of it).
fn answer(s: &mut TcpStream) -> Result<(), String> {
    let mut b = [0u8; 1];
    match s.read(&mut b) {
        Ok(1) if b[0] == ACCEPTED => return Ok(()),
        Ok(1) if b[0] == REFUSED => {}
        Ok(0) => return Err("the server closed the connection without answering".into()),
        Ok(_) => {
            return Err(format!(
                "the server answered 0x{:02x}, not touchstone serve's answer (an older touchstone there?)",
                b[0]
            ))
        }
        Err(e) => return Err(format!("no answer from the server ({e}); an older touchstone serve there?")),
    }
    // Up to the end of the line, the close, or a reset after it.
    let mut why = Vec::new();
    while why.len() < 512 && matches!(s.read(&mut b), Ok(1)) && b[0] != b'\n' {
        why.push(b[0]);
    }
    Err(format!("refused: {}", String::from_utf8_lossy(&why)))
}

/// A connection to `serve`'s echo (tcp_rr's clients): Nagle off, blocking,
/// no receive timeout (the workload engine bounds a trial itself).
pub fn connect_echo(addr: &str) -> Fallible<RawFd> {
    let fd = connect(addr, &[ECHO])?;
    set_recv_timeout_ms(fd, 0).inspect_err(|_| sys::close(fd))?;
    Ok(fd)
}

/// Which exchange a remote case times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exchange {
    /// A `size`-byte message out and back over TCP (lat_tcp).
    TcpEcho,
    /// One datagram out and back (lat_udp).
    UdpEcho,
    /// socket, connect, close (lat_connect).
    Connect,
    /// `size`-byte messages from the server, one iteration each (bw_tcp).
    Pull,
}

/// A communication case against `touchstone serve` on another host.
/// Beside the figure it reports the CPU time of both ends over its
/// intervals (`cpu_figures`): this process's own, and serve's as serve
/// reports it.
pub struct RemoteCase {
    addr: String,
    exchange: Exchange,
    buf: Vec<u8>,
    fd: RawFd,
    peer: Option<SocketAddr>,
    /// serve's CPU account, when this is the only client process (with
    /// several, serve's CPU cannot be told apart between them).
    serve_cpu: Option<ServeCpu>,
    /// Taken in `prepare`: serve's CPU ns, this process's CPU s, the time.
    mark: Option<(u64, f64, Instant)>,
    /// Over every interval: serve's CPU ns, this process's CPU s, wall s, iterations.
    server_ns: u64,
    client_s: f64,
    wall_s: f64,
    iterations: u64,
}

impl RemoteCase {
    /// The case as the family builds it: latency of one exchange, or
    /// bandwidth of `size` bytes an iteration for `Pull`.
    pub fn case(addr: &str, exchange: Exchange, size: usize) -> Result<Built, String> {
        let shape = match exchange {
            Exchange::Pull => Shape::bandwidth(size as f64),
            _ => Shape::latency(1.0),
        };
        Ok(Built::new(
            RemoteCase {
                addr: addr.to_string(),
                exchange,
                buf: vec![0x5a; size.max(1)],
                fd: -1,
                peer: None,
                serve_cpu: None,
                mark: None,
                server_ns: 0,
                client_s: 0.0,
                wall_s: 0.0,
                iterations: 0,
            },
            shape,
        ))
    }

    /// The CPU figures of both ends over all intervals. Pull (bw_tcp): the
    /// client receives, serve sends — CPU seconds per MB (10^6 bytes) as
    /// the local bw_tcp names them, `cpu_s_per_mb_receiver` (here) and
    /// `cpu_s_per_mb_sender` (serve). The exchanges: CPU µs per exchange,
    /// `cpu_us_per_op_client` and `cpu_us_per_op_server`. Both: each end's
    /// utilisation over the intervals' wall time, % of one CPU
    /// (`cpu_pct_…`). serve's figures only with one client process.
    pub fn cpu_figures(&self) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        if self.iterations == 0 || self.wall_s <= 0.0 {
            return out;
        }
        let server_s = self.server_ns as f64 * 1e-9;
        let (ends, per) = match self.exchange {
            Exchange::Pull => (
                ["receiver", "sender"],
                // CPU seconds per MB.
                (
                    self.iterations as f64 * self.buf.len() as f64 / 1e6,
                    "cpu_s_per_mb",
                ),
            ),
            // CPU µs per exchange.
            _ => (
                ["client", "server"],
                (self.iterations as f64 / 1e6, "cpu_us_per_op"),
            ),
        };
        let (units, per_name) = per;
        let mut push = |end: &str, cpu_s: f64| {
            out.push((format!("{per_name}_{end}"), cpu_s / units));
            out.push((format!("cpu_pct_{end}"), 100.0 * cpu_s / self.wall_s));
        };
        push(ends[0], self.client_s);
        if self.serve_cpu.is_some() {
            push(ends[1], server_s);
        }
        out
    }
}

impl Benchmark for RemoteCase {
    fn setup(&mut self, ctx: &Context) -> Fallible {
        match self.exchange {
            Exchange::TcpEcho => self.fd = connect(&self.addr, &[ECHO])?,
            Exchange::Pull => {
                let mut hello = vec![PULL];
                hello.extend_from_slice(&(self.buf.len() as u32).to_le_bytes());
                self.fd = connect(&self.addr, &hello)?;
            }
            Exchange::UdpEcho => {
                let a = resolve(&self.addr)?;
                let local: SocketAddr = if a.is_ipv4() {
                    "0.0.0.0:0".parse().unwrap()
                } else {
                    "[::]:0".parse().unwrap()
                };
                let s = UdpSocket::bind(local).map_err(|e| BenchError(format!("udp: {e}")))?;
                s.connect(a)
                    .map_err(|e| BenchError(format!("udp connect {}: {e}", self.addr)))?;
                self.fd = s.into_raw_fd();
                set_recv_timeout(self.fd, 2)?;
            }
            Exchange::Connect => self.peer = Some(resolve(&self.addr)?),
        }
        if ctx.parallel == 1 {
            // The harness calls no cleanup when setup fails: undo here.
            self.serve_cpu = Some(ServeCpu::connect(&self.addr).inspect_err(|_| self.cleanup())?);
        }
        Ok(())
    }

    /// Untimed: serve's CPU first, then ours and the time, so that the
    /// round trip to serve falls outside what is counted.
    fn prepare(&mut self, _n: u64) -> Fallible {
        let server = match &self.serve_cpu {
            Some(c) => c.sample()?,
            None => 0,
        };
        self.mark = Some((server, process_cpu_s(), Instant::now()));
        Ok(())
    }

    /// Untimed: ours and the time first, then serve's.
    fn conclude(&mut self, n: u64) -> Fallible {
        let Some((server0, client0, t0)) = self.mark.take() else {
            return Ok(());
        };
        self.wall_s += t0.elapsed().as_secs_f64();
        self.client_s += process_cpu_s() - client0;
        if let Some(c) = &self.serve_cpu {
            self.server_ns += c.sample()?.saturating_sub(server0);
        }
        self.iterations += n;
        Ok(())
    }

    fn extras(&mut self) -> Vec<(String, f64)> {
        self.cpu_figures()
    }

    /// Timed: `n` exchanges. TcpEcho/UdpEcho: write the message, read it
    /// back whole. Pull: ask for `n` messages (one 8-byte write) and read
    /// them all. Connect: socket, connect, close.
    fn run(&mut self, n: u64) -> Fallible {
        match self.exchange {
            Exchange::TcpEcho => {
                for _ in 0..n {
                    sys::write_all(self.fd, &self.buf)?;
                    sys::read_exact(self.fd, &mut self.buf)?;
                }
            }
            Exchange::UdpEcho => {
                for _ in 0..n {
                    sys::write_all(self.fd, &self.buf)?;
                    recv_datagram(self.fd, &mut self.buf)?;
                }
            }
            Exchange::Pull => {
                sys::write_all(self.fd, &n.to_le_bytes())?;
                for _ in 0..n {
                    sys::read_exact(self.fd, &mut self.buf)?;
                }
            }
            Exchange::Connect => {
                let peer = self.peer.expect("set up");
                let (storage, len) = sockaddr(&peer);
                let family = if peer.is_ipv4() {
                    libc::AF_INET
                } else {
                    libc::AF_INET6
                };
                for _ in 0..n {
                    // SAFETY: a new socket, connected to a valid address, closed.
                    let fd =
                        unsafe { libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
                    if fd < 0 {
                        return Err(errno("socket"));
                    }
                    let r = unsafe {
                        libc::connect(fd, &storage as *const _ as *const libc::sockaddr, len)
                    };
                    sys::close(fd);
                    if r < 0 {
                        return Err(errno("connect"));
                    }
                }
            }
        }
        Ok(())
    }

    fn cleanup(&mut self) {
        self.serve_cpu = None;
        sys::close_and_clear(&mut self.fd);
    }
}

/// A socket address as libc takes it.
fn sockaddr(a: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data, large enough for both families.
    let mut s: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match a {
        SocketAddr::V4(v4) => {
            let sin = unsafe { &mut *(&mut s as *mut _ as *mut libc::sockaddr_in) };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = v4.port().to_be();
            sin.sin_addr.s_addr = u32::from(*v4.ip()).to_be();
            (
                s,
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        }
        SocketAddr::V6(v6) => {
            let sin6 = unsafe { &mut *(&mut s as *mut _ as *mut libc::sockaddr_in6) };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = v6.port().to_be();
            sin6.sin6_addr.s6_addr = v6.ip().octets();
            sin6.sin6_scope_id = v6.scope_id();
            (
                s,
                std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every exchange against a server on loopback, then the server stops
    /// after its idle time.
    #[test]
    fn every_exchange_works_against_serve_and_serve_stops_when_idle() {
        let (tcp, udp, addr) = bind("127.0.0.1:0").unwrap();
        // Longer than a connect that waits for a SYN to be sent again (1 s),
        // which lat_connect's burst of connections meets now and then: a
        // connection that silent is closed, as a dead one is.
        let limits = ServeLimits::new(Duration::from_secs(2));
        let server = std::thread::spawn(move || serve(tcp, udp, &limits));
        let ctx = Context {
            process: 0,
            parallel: 1,
            scratch: std::env::temp_dir(),
        };
        let a = addr.to_string();
        for (ex, size) in [
            (Exchange::TcpEcho, 64),
            (Exchange::UdpEcho, 16),
            (Exchange::Connect, 1),
            (Exchange::Pull, 4096),
        ] {
            let mut b = RemoteCase::case(&a, ex, size).unwrap().bench;
            b.setup(&ctx).unwrap();
            for n in [20, 200] {
                b.prepare(n).unwrap();
                b.run(n).unwrap_or_else(|e| panic!("{ex:?}: {e}"));
                b.conclude(n).unwrap();
            }
            // Both ends' CPU, serve's from serve: present, finite, not
            // negative, and serve's above zero (it did send or echo).
            let extras: std::collections::BTreeMap<String, f64> = b.extras().into_iter().collect();
            let (per, ends) = if ex == Exchange::Pull {
                ("cpu_s_per_mb", ["receiver", "sender"])
            } else {
                ("cpu_us_per_op", ["client", "server"])
            };
            for end in ends {
                for k in [format!("{per}_{end}"), format!("cpu_pct_{end}")] {
                    let v = extras.get(&k).copied();
                    assert!(
                        v.is_some_and(|v| v.is_finite() && v >= 0.0),
                        "{ex:?}: {k} = {v:?} in {extras:?}"
                    );
                }
            }
            let server = extras[&format!("{per}_{}", ends[1])];
            assert!(server > 0.0, "{ex:?}: serve's CPU {server}");
            b.cleanup();
        }
        let t = Instant::now();
        server.join().unwrap().unwrap();
        assert!(t.elapsed() < Duration::from_secs(5));
        // The port is free again, and a second bind on a port in use is refused clearly.
        let (busy, _u, busy_addr) = bind("127.0.0.1:0").unwrap();
        let e = bind(&busy_addr.to_string()).unwrap_err();
        assert!(e.contains("in use"), "{e}");
        drop(busy);
    }

    #[test]
    fn remote_names_a_server_or_local() {
        assert_eq!(PARAM.parse("10.0.0.7:7717").unwrap().num, 7717);
        assert_eq!(PARAM.parse("local").unwrap().text, "local");
        assert!(PARAM.parse("10.0.0.7").unwrap_err().contains("HOST:PORT"));
        assert!(PARAM.parse(":7717").is_err());
    }
}
