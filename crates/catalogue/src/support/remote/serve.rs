//! The server of the remote protocol (`touchstone serve`), bounded against
//! any client, since it listens on a network address:
//! - memory: a connection holds one fixed buffer (`BUFFER`, 64 KiB) and a
//!   thread of a fixed stack (`STACK`); a pull's message of up to
//!   `MAX_MESSAGE` is sent from that buffer, never allocated, and a larger
//!   size is refused;
//! - connections: at most `ServeLimits::max_connections` at once
//!   (`DEFAULT_MAX_CONNECTIONS`); one more is answered with a refusal and
//!   closed, as is one whose thread cannot be created — the listener goes
//!   on either way;
//! - time: a connection's request must arrive within `REQUEST_TIMEOUT` (or
//!   the idle timeout, if shorter), and a connection silent (or not read)
//!   for the idle timeout is closed, so a dead or silent peer cannot hold
//!   serve past `--idle-timeout`;
//! - nothing on the serving path unwraps: errors end a connection or, at
//!   start, are returned.
//!
//! A refusal is `-`, a line saying why, and the connection closed; an
//! accepted request is answered `+` (see the protocol in `remote`).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{ACCEPTED, CPU, ECHO, PULL, REFUSED};
use crate::support::sockets::set_nodelay;

/// The one buffer of a connection (and of the UDP echo): an echo reads
/// and writes through it, a pull sends its messages from it.
pub const BUFFER: usize = 64 << 10;
/// The stack of a connection's thread.
pub const STACK: usize = 128 << 10;
/// The largest message a pull may ask for: bw_tcp's largest `size`.
pub const MAX_MESSAGE: usize = 4 << 20;
/// Connections served at once unless told otherwise: tcp_rr's most
/// connections (1024), its CPU account and room for a few more.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1040;
/// The longest a connection may take to say what it wants.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// How `serve` may end and what it allows: it stops after `idle` with no
/// sign of a client (a connection silent that long is closed), or when
/// `client_gone` says so (the CLI watches its standard input); at most
/// `max_connections` at once.
pub struct ServeLimits {
    pub idle: Duration,
    pub client_gone: Arc<AtomicBool>,
    pub max_connections: usize,
}

impl ServeLimits {
    /// `idle`, the default connection limit, no client to watch.
    pub fn new(idle: Duration) -> ServeLimits {
        ServeLimits {
            idle,
            client_gone: Arc::new(AtomicBool::new(false)),
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// Bind TCP and UDP on exactly `listen` (never a wildcard the user did not
/// give), then call `ready` with the address bound.
pub fn bind(listen: &str) -> Result<(TcpListener, UdpSocket, SocketAddr), String> {
    let addr = listen
        .to_socket_addrs()
        .map_err(|e| format!("--listen {listen}: not an ADDR:PORT ({e})"))?
        .next()
        .ok_or_else(|| format!("--listen {listen}: no address"))?;
    let in_use = |e: std::io::Error, what: &str| {
        match e.kind() {
        std::io::ErrorKind::AddrInUse => format!(
            "--listen {addr}: {what} port {} is in use (another server listens there); choose another port",
            addr.port()
        ),
        std::io::ErrorKind::AddrNotAvailable => {
            format!("--listen {addr}: no interface of this host has the address {}", addr.ip())
        }
        _ => format!("--listen {addr}: {what}: {e}"),
    }
    };
    let tcp = TcpListener::bind(addr).map_err(|e| in_use(e, "TCP"))?;
    let udp = UdpSocket::bind(tcp.local_addr().unwrap_or(addr)).map_err(|e| in_use(e, "UDP"))?;
    let bound = tcp.local_addr().unwrap_or(addr);
    Ok((tcp, udp, bound))
}

/// Starts a connection's thread; the real one is `std::thread::Builder`
/// with `STACK` (tests put one that fails in its place).
pub type Spawner = dyn Fn(Box<dyn FnOnce() + Send>) -> std::io::Result<()> + Send + Sync;

fn spawn_thread(body: Box<dyn FnOnce() + Send>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("serve-conn".into())
        .stack_size(STACK)
        .spawn(body)
        .map(drop)
}

/// Serve clients until the limits say stop. Each TCP connection gets a
/// thread (a remote client is one process; the server's own cost is part of
/// what the round trip measures, as lmbench's forking servers were).
pub fn serve(tcp: TcpListener, udp: UdpSocket, limits: &ServeLimits) -> Result<(), String> {
    serve_with(tcp, udp, limits, Arc::new(spawn_thread))
}

/// What serve's threads share.
struct Shared {
    start: Instant,
    /// Connections open now.
    active: AtomicUsize,
    /// Milliseconds since `start` of the last sign of a client.
    last: AtomicU64,
    stop: AtomicBool,
    idle: Duration,
    max_connections: usize,
}

impl Shared {
    fn touch(&self) {
        self.last
            .store(self.start.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// How long the first bytes of a connection may take.
    fn request_timeout(&self) -> Duration {
        REQUEST_TIMEOUT.min(self.idle)
    }
}

/// `serve` with the connection threads started by `spawn`.
pub fn serve_with(
    tcp: TcpListener,
    udp: UdpSocket,
    limits: &ServeLimits,
    spawn: Arc<Spawner>,
) -> Result<(), String> {
    let shared = Arc::new(Shared {
        start: Instant::now(),
        active: AtomicUsize::new(0),
        last: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        idle: limits.idle,
        max_connections: limits.max_connections.max(1),
    });
    udp.set_read_timeout(Some(Duration::from_millis(200)))
        .map_err(|e| format!("udp: {e}"))?;
    let udp_thread = {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("serve-udp".into())
            .spawn(move || udp_echo(udp, &shared))
            .map_err(|e| format!("cannot start the UDP thread: {e}"))?
    };
    // A blocking accept in its own thread: polling would leave connections
    // waiting in the backlog, and lat_connect would time the wait.
    let listener_fd = tcp.as_raw_fd();
    let acceptor = {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("serve-accept".into())
            .spawn(move || accept(tcp, &shared, &*spawn))
    };
    let acceptor = match acceptor {
        Ok(a) => a,
        Err(e) => {
            shared.stop.store(true, Ordering::SeqCst);
            let _ = udp_thread.join();
            return Err(format!("cannot start the TCP thread: {e}"));
        }
    };
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let idle_ms = (shared.start.elapsed().as_millis() as u64)
            .saturating_sub(shared.last.load(Ordering::Relaxed));
        if limits.client_gone.load(Ordering::SeqCst)
            || (shared.active.load(Ordering::SeqCst) == 0
                && idle_ms >= limits.idle.as_millis() as u64)
        {
            break;
        }
    }
    shared.stop.store(true, Ordering::SeqCst);
    // SAFETY: shutting down our listener wakes the blocked accept (Linux: EINVAL).
    unsafe { libc::shutdown(listener_fd, libc::SHUT_RDWR) };
    let _ = acceptor.join();
    let _ = udp_thread.join();
    Ok(())
}

/// Answer `s` with a refusal and close it, without waiting on the peer.
fn refuse(mut s: TcpStream, why: &str) {
    let _ = s.set_nonblocking(true);
    let _ = s.write_all(format!("{}touchstone serve: {why}\n", REFUSED as char).as_bytes());
}

fn accept(tcp: TcpListener, shared: &Arc<Shared>, spawn: &Spawner) {
    for s in tcp.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(s) = s else {
            // Out of descriptors, or a connection reset before it was
            // taken: the next one, a moment later.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        shared.touch();
        let open = shared.active.fetch_add(1, Ordering::SeqCst);
        if open >= shared.max_connections {
            shared.active.fetch_sub(1, Ordering::SeqCst);
            refuse(
                s,
                &format!(
                    "busy: {open} connections open, the most allowed (--max-connections {})",
                    shared.max_connections
                ),
            );
            continue;
        }
        // The stream goes back for the refusal should no thread start.
        let slot = Arc::new(std::sync::Mutex::new(Some(s)));
        let body = {
            let (shared, slot) = (shared.clone(), slot.clone());
            Box::new(move || {
                let taken = slot.lock().ok().and_then(|mut s| s.take());
                if let Some(s) = taken {
                    let ended = connection(s, &shared);
                    if !matches!(ended, Ended::TimedOut) {
                        shared.touch();
                    }
                }
                shared.active.fetch_sub(1, Ordering::SeqCst);
            })
        };
        if let Err(e) = spawn(body) {
            shared.active.fetch_sub(1, Ordering::SeqCst);
            let taken = slot.lock().ok().and_then(|mut s| s.take());
            if let Some(s) = taken {
                refuse(
                    s,
                    &format!("cannot start a thread for this connection ({e})"),
                );
            }
        }
    }
}

fn udp_echo(udp: UdpSocket, shared: &Shared) {
    let mut buf = vec![0u8; BUFFER];
    while !shared.stop.load(Ordering::SeqCst) {
        match udp.recv_from(&mut buf) {
            Ok((n, from)) => {
                shared.touch();
                let _ = udp.send_to(&buf[..n], from);
            }
            Err(e) if timed_out(&e) || e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// How a connection ended.
enum Ended {
    /// The client closed it, or something failed.
    Closed,
    /// Silent (or not reading) past its time: no sign of a client.
    TimedOut,
}

impl From<std::io::Error> for Ended {
    fn from(e: std::io::Error) -> Ended {
        if timed_out(&e) {
            Ended::TimedOut
        } else {
            Ended::Closed
        }
    }
}

/// One TCP connection: its first byte says what it wants.
fn connection(mut s: TcpStream, shared: &Shared) -> Ended {
    let request = shared.request_timeout();
    let prepared = s
        .set_read_timeout(Some(request))
        .and_then(|()| s.set_write_timeout(Some(shared.idle)));
    if prepared.is_err() || set_nodelay(s.as_raw_fd()).is_err() {
        return Ended::Closed;
    }
    let late = |s: TcpStream, e: std::io::Error| -> Ended {
        if timed_out(&e) {
            refuse(s, &format!("no request within {} s", request.as_secs_f64()));
        }
        e.into()
    };
    let mut first = [0u8; 1];
    match s.read(&mut first) {
        Ok(0) => return Ended::Closed, // a connect and close (lat_connect)
        Ok(_) => {}
        Err(e) => return late(s, e),
    }
    let size = match first[0] {
        PULL => {
            let mut size = [0u8; 4];
            if let Err(e) = s.read_exact(&mut size) {
                return late(s, e);
            }
            let size = u32::from_le_bytes(size) as usize;
            if !(1..=MAX_MESSAGE).contains(&size) {
                refuse(
                    s,
                    &format!(
                        "a message of {size} bytes: a pull's messages are 1 to {MAX_MESSAGE} bytes"
                    ),
                );
                return Ended::Closed;
            }
            size
        }
        ECHO | CPU => 0,
        other => {
            refuse(s, &format!("unknown request (first byte 0x{other:02x})"));
            return Ended::Closed;
        }
    };
    // From here, silence for the idle timeout ends the connection.
    if s.set_read_timeout(Some(shared.idle)).is_err() || s.write_all(&[ACCEPTED]).is_err() {
        return Ended::Closed;
    }
    let served = match first[0] {
        ECHO => echo(&mut s),
        PULL => pull(&mut s, size),
        _ => cpu_account(&mut s),
    };
    match served {
        Ok(()) => Ended::Closed,
        Err(e) => e.into(),
    }
}

/// Echo every byte until the client closes.
fn echo(s: &mut TcpStream) -> std::io::Result<()> {
    let mut buf = vec![0u8; BUFFER];
    loop {
        let n = s.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        s.write_all(&buf[..n])?;
    }
}

/// Per 8-byte count, send that many `size`-byte messages (from the one
/// buffer: a message is only a byte count on the stream).
fn pull(s: &mut TcpStream, size: usize) -> std::io::Result<()> {
    let buf = vec![0x5a; BUFFER.min(size)];
    let mut count = [0u8; 8];
    loop {
        if let Err(e) = s.read_exact(&mut count) {
            return if e.kind() == std::io::ErrorKind::UnexpectedEof {
                Ok(())
            } else {
                Err(e)
            };
        }
        for _ in 0..u64::from_le_bytes(count) {
            let mut left = size;
            while left > 0 {
                let n = left.min(buf.len());
                s.write_all(&buf[..n])?;
                left -= n;
            }
        }
    }
}

/// Per 1-byte request, serve's CPU time (`serve_cpu_ns`).
fn cpu_account(s: &mut TcpStream) -> std::io::Result<()> {
    let mut ask = [0u8; 1];
    while s.read(&mut ask)? == 1 {
        s.write_all(&super::serve_cpu_ns().to_le_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Kind;
    use crate::support::one_way::BW_SIZE;

    #[test]
    fn the_largest_pull_is_bw_tcps_largest_size() {
        let Kind::Size { max, .. } = BW_SIZE.kind else {
            panic!("bw_tcp's size is a size");
        };
        assert_eq!(max as usize, MAX_MESSAGE);
    }

    /// Read a reply line (a refusal) or the acceptance byte.
    fn reply(s: &mut TcpStream) -> String {
        crate::testing::serve_answer(s, Duration::from_secs(5))
    }

    /// A thread that cannot be created refused that connection (it
    /// panicked, and serve stopped listening): the next one is served.
    #[test]
    fn a_connection_whose_thread_cannot_start_is_refused_and_serve_goes_on() {
        let (tcp, udp, addr) = bind("127.0.0.1:0").unwrap();
        let limits = ServeLimits::new(Duration::from_secs(2));
        let calls = Arc::new(AtomicUsize::new(0));
        let spawn: Arc<Spawner> = {
            let calls = calls.clone();
            Arc::new(move |body| {
                if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                    return Err(std::io::Error::from_raw_os_error(libc::EAGAIN));
                }
                spawn_thread(body)
            })
        };
        let server = std::thread::spawn(move || serve_with(tcp, udp, &limits, spawn));
        let mut first = TcpStream::connect(addr).unwrap();
        first.write_all(&[ECHO]).unwrap();
        let r = reply(&mut first);
        assert!(
            r.starts_with("-touchstone serve: cannot start a thread"),
            "{r:?}"
        );
        let mut second = TcpStream::connect(addr).unwrap();
        second.write_all(&[ECHO]).unwrap();
        assert_eq!(reply(&mut second), "+");
        second.write_all(b"ping").unwrap();
        let mut back = [0u8; 4];
        second.read_exact(&mut back).unwrap();
        assert_eq!(&back, b"ping");
        drop(second);
        server.join().unwrap().unwrap();
    }
}
