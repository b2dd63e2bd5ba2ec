//! The "hot potato" ping-pong (lmbench's term): something the benchmark
//! process hands to a helper process and gets back, one round trip per
//! iteration. `Baton` is one mechanism (a byte over a pipe, a semaphore, a
//! connection, an RPC call), `HotPotato` the engine that forks the helper
//! where the case's `cpus` parameter says, times the round trips and reaps
//! the helper. Two batons serve several families each: `FdBaton`, a
//! message over a byte channel (lat_pipe, lat_fifo, lat_unix, lat_tcp,
//! lat_udp), and `ConnectBaton`, a connection set up and closed
//! (lat_connect, lat_unix_connect).

use std::ffi::CString;
use std::os::fd::RawFd;

use touchstone_harness::{BenchError, Benchmark, Context, Fallible, Shape};

use super::placement::{self, Placement};
use super::sockets::{
    accept, connect_loopback, inet_socket, recv_datagram, set_recv_timeout, tcp_listener, tcp_pair,
    udp_pair, unix_addr, unix_pair, Channel, SUN_LEN,
};
use super::sys::{self, check, cstring, errno, Pid};
use crate::family::{BuildCase, Built, Family};
use crate::params::{Kind, Param, Point};

/// One ping-pong mechanism: something the benchmark process hands to a
/// helper process and gets back (lmbench's "hot potato").
pub trait Baton: Send {
    /// In the benchmark process before the helper is forked: create what
    /// both sides share (descriptors inherited, shared mappings, ...).
    fn open(&mut self, ctx: &Context) -> Fallible;
    /// In the helper after the fork, before it reports ready: drop the
    /// benchmark's side, take any initial state (locks) the protocol needs.
    fn helper_side(&mut self) -> Fallible {
        Ok(())
    }
    /// In the benchmark process once the helper is ready.
    fn parent_side(&mut self) -> Fallible {
        Ok(())
    }
    /// Timed, in the benchmark process: hand the potato over and wait for
    /// it to come back (one round trip). Must not allocate.
    fn ping(&mut self) -> Fallible;
    /// In the helper: wait for the potato and hand it back. An error ends
    /// the helper (the benchmark side then sees its peer gone).
    fn pong(&mut self) -> Fallible;
    /// Release what `open` made (both processes may call it).
    fn close(&mut self);
}

/// A benchmark of one round trip of a `Baton` between this process and a
/// helper that lives from `setup` to `cleanup`.
pub struct HotPotato<B: Baton> {
    pub baton: B,
    helper: Pid,
    place: Placement,
}

/// The parameters of a round-trip family with nothing to choose but where
/// its two processes run.
const PLACEMENT_ONLY: &[Param] = &[placement::PARAM];

/// A round-trip family (group `comm_lat`) whose one parameter is where its
/// two processes run: what lat_pipe, lat_fifo, lat_eventfd and the other
/// one-baton families share.
pub const fn family(name: &'static str, summary: &'static str, build: BuildCase) -> Family {
    Family::new(name, "comm_lat", summary, build).with_params(PLACEMENT_ONLY)
}

impl<B: Baton + 'static> HotPotato<B> {
    /// A case timing round trips of `baton`, the benchmark process and its
    /// helper placed where the case's `cpus` parameter says (`Family::make`
    /// adds the warm-up and interval a placement needs).
    pub fn case(baton: B, p: &Point) -> Result<Built, String> {
        Ok(Built::new(
            HotPotato::new(baton, Placement::of(p)),
            Shape::latency(1.0).with_switches_by_design(),
        ))
    }
}

impl<B: Baton> HotPotato<B> {
    pub fn new(baton: B, place: Placement) -> Self {
        HotPotato {
            baton,
            helper: -1,
            place,
        }
    }
}

impl<B: Baton> Benchmark for HotPotato<B> {
    fn setup(&mut self, ctx: &Context) -> Fallible {
        // The harness does not call cleanup when setup fails: undo here.
        self.start(ctx).inspect_err(|_| self.cleanup())
    }

    /// Timed: `n` round trips (`Baton::ping`), each checked; nothing else.
    fn run(&mut self, n: u64) -> Fallible {
        for _ in 0..n {
            self.baton.ping()?;
        }
        Ok(())
    }

    fn cleanup(&mut self) {
        self.baton.close();
        sys::kill_and_reap(self.helper);
        self.helper = -1;
    }
}

impl<B: Baton> HotPotato<B> {
    fn start(&mut self, ctx: &Context) -> Fallible {
        let pins = self.place.pin(ctx, 2)?;
        self.baton.open(ctx)?;
        let (ready_r, ready_w) = sys::pipe()?;
        let baton = &mut self.baton;
        let pid = pins.fork_helper(1, || {
            sys::close(ready_r);
            if baton.helper_side().is_err() {
                return 2;
            }
            if sys::write_all(ready_w, b"r").is_err() {
                return 3;
            }
            sys::close(ready_w);
            while baton.pong().is_ok() {}
            0
        });
        sys::close(ready_w);
        let pid = match pid {
            Ok(p) => p,
            Err(e) => {
                sys::close(ready_r);
                return Err(e);
            }
        };
        self.helper = pid;
        let mut b = [0u8; 1];
        let r = sys::read_exact(ready_r, &mut b);
        sys::close(ready_r);
        r.map_err(|e| BenchError(format!("helper did not start: {e}")))?;
        self.baton.parent_side()
    }
}

/// Ping-pong of a `size`-byte message over a pair of byte channels: the
/// benchmark writes on `out`, the helper reads it on `peer_in` and writes it
/// back on `peer_out`; the benchmark reads it on `back`.
pub struct FdBaton {
    channel: Channel,
    buf: Vec<u8>,
    out: RawFd,
    back: RawFd,
    peer_in: RawFd,
    peer_out: RawFd,
}

impl FdBaton {
    pub fn new(channel: Channel, size: usize) -> FdBaton {
        FdBaton {
            channel,
            buf: vec![0x5a; size.max(1)],
            out: -1,
            back: -1,
            peer_in: -1,
            peer_out: -1,
        }
    }

    fn fds(&self) -> [RawFd; 4] {
        [self.out, self.back, self.peer_in, self.peer_out]
    }
}

impl Baton for FdBaton {
    fn open(&mut self, ctx: &Context) -> Fallible {
        match self.channel {
            Channel::Pipe => {
                let (r1, w1) = sys::pipe()?;
                let (r2, w2) = sys::pipe()?;
                (self.out, self.peer_in, self.peer_out, self.back) = (w1, r1, w2, r2);
            }
            Channel::Fifo => {
                // Two named pipes in the scratch directory, opened read-write
                // (Linux allows it and it cannot block), then unlinked at
                // once: no file outlives the setup.
                let mut fds = [-1; 2];
                for (i, fd) in fds.iter_mut().enumerate() {
                    let path = ctx.scratch.join(format!("fifo.{}.{i}", ctx.process));
                    let c = cstring(&path)?;
                    // SAFETY: valid NUL-terminated paths.
                    check(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, "mkfifo")?;
                    *fd = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
                    unsafe { libc::unlink(c.as_ptr()) };
                    if *fd < 0 {
                        return Err(errno("open fifo"));
                    }
                }
                (self.out, self.peer_in) = (fds[0], fds[0]);
                (self.peer_out, self.back) = (fds[1], fds[1]);
            }
            Channel::Unix | Channel::Tcp | Channel::Udp => {
                let (a, b) = match self.channel {
                    Channel::Unix => unix_pair()?,
                    Channel::Tcp => tcp_pair()?,
                    _ => udp_pair()?,
                };
                (self.out, self.back) = (a, a);
                (self.peer_in, self.peer_out) = (b, b);
                if self.channel == Channel::Udp {
                    set_recv_timeout(a, 2)?;
                }
            }
        }
        Ok(())
    }

    fn helper_side(&mut self) -> Fallible {
        // Fifo descriptors serve both sides; only the others are split.
        if self.channel != Channel::Fifo {
            close_unshared([self.out, self.back], [self.peer_in, self.peer_out]);
            (self.out, self.back) = (-1, -1);
        }
        Ok(())
    }

    fn parent_side(&mut self) -> Fallible {
        if self.channel != Channel::Fifo {
            close_unshared([self.peer_in, self.peer_out], [self.out, self.back]);
            (self.peer_in, self.peer_out) = (-1, -1);
        }
        Ok(())
    }

    /// Timed: write the message, read it back whole.
    #[inline]
    fn ping(&mut self) -> Fallible {
        sys::write_all(self.out, &self.buf)?;
        if self.channel == Channel::Udp {
            recv_datagram(self.back, &mut self.buf)
        } else {
            sys::read_exact(self.back, &mut self.buf).map_err(BenchError::from)
        }
    }

    fn pong(&mut self) -> Fallible {
        if self.channel == Channel::Udp {
            recv_datagram(self.peer_in, &mut self.buf)?;
        } else {
            sys::read_exact(self.peer_in, &mut self.buf)?;
        }
        sys::write_all(self.peer_out, &self.buf)?;
        Ok(())
    }

    fn close(&mut self) {
        let fds = self.fds();
        for (i, &fd) in fds.iter().enumerate() {
            if fd >= 0 && !fds[..i].contains(&fd) {
                sys::close(fd);
            }
        }
        (self.out, self.back, self.peer_in, self.peer_out) = (-1, -1, -1, -1);
    }
}

/// Close each descriptor of `theirs` once, unless it is also in `mine`.
fn close_unshared(theirs: [RawFd; 2], mine: [RawFd; 2]) {
    for (i, &fd) in theirs.iter().enumerate() {
        if fd >= 0 && !mine.contains(&fd) && !theirs[..i].contains(&fd) {
            sys::close(fd);
        }
    }
}

/// The socket family a `ConnectBaton` connects in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Domain {
    Tcp,
    Unix,
}

/// Connection set-up and close as a round trip (lat_connect over TCP,
/// lat_unix_connect over AF_UNIX): the benchmark connects and closes, the
/// helper accepts and closes.
pub struct ConnectBaton {
    domain: Domain,
    listener: RawFd,
    port: u16,
    addr: Option<libc::sockaddr_un>,
    path: CString,
}

// SAFETY: sockaddr_un is plain data.
unsafe impl Send for ConnectBaton {}

impl ConnectBaton {
    pub fn new(domain: Domain) -> ConnectBaton {
        ConnectBaton {
            domain,
            listener: -1,
            port: 0,
            addr: None,
            path: CString::default(),
        }
    }
}

impl Baton for ConnectBaton {
    fn open(&mut self, ctx: &Context) -> Fallible {
        match self.domain {
            Domain::Tcp => {
                (self.listener, self.port) = tcp_listener(4096)?;
            }
            Domain::Unix => {
                let path = ctx.scratch.join(format!("conn.{}", ctx.process));
                let a = unix_addr(&path)?;
                self.path = cstring(&path)?;
                // SAFETY: socket, bind and listen on our own descriptor.
                let fd = unsafe {
                    libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0)
                };
                if fd < 0 {
                    return Err(errno("socket"));
                }
                self.listener = fd;
                if unsafe { libc::bind(fd, &a as *const _ as *const libc::sockaddr, SUN_LEN) } < 0 {
                    return Err(errno("bind"));
                }
                if unsafe { libc::listen(fd, 4096) } < 0 {
                    return Err(errno("listen"));
                }
                self.addr = Some(a);
            }
        }
        Ok(())
    }

    fn parent_side(&mut self) -> Fallible {
        sys::close_and_clear(&mut self.listener);
        Ok(())
    }

    /// Timed: socket(2), connect(2) to the listener, close(2).
    #[inline]
    fn ping(&mut self) -> Fallible {
        let fd = match self.domain {
            Domain::Tcp => {
                let fd = inet_socket(libc::SOCK_STREAM)?;
                connect_loopback(fd, self.port).inspect_err(|_| sys::close(fd))?;
                fd
            }
            Domain::Unix => {
                // SAFETY: a new socket connected to the address from open.
                let fd = unsafe {
                    libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0)
                };
                if fd < 0 {
                    return Err(errno("socket"));
                }
                let a = self.addr.as_ref().unwrap();
                if unsafe { libc::connect(fd, a as *const _ as *const libc::sockaddr, SUN_LEN) } < 0
                {
                    sys::close(fd);
                    return Err(errno("connect"));
                }
                fd
            }
        };
        sys::close(fd);
        Ok(())
    }

    fn pong(&mut self) -> Fallible {
        sys::close(accept(self.listener)?);
        Ok(())
    }

    fn close(&mut self) {
        sys::close_and_clear(&mut self.listener);
        if !self.path.as_bytes().is_empty() {
            // SAFETY: removing the socket file open made.
            unsafe { libc::unlink(self.path.as_ptr()) };
            self.path = CString::default();
        }
    }
}

/// A ping-pong message size (lmbench's -m), 1 byte by default.
pub const MSG_SIZE: Param = Param::size("size", 1, 1 << 20)
    .measured(&["1"])
    .help("message size in bytes, each way");

/// A UDP message size: one datagram, at most 32 KB.
pub const UDP_SIZE: Param = Param {
    kind: Kind::Size {
        min: 1,
        max: 32 << 10,
    },
    help: "datagram size in bytes, each way (one datagram)",
    ..MSG_SIZE
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{descriptor_is_open, in_child, process_is_gone};

    /// In a child process, where no other test thread can reopen a
    /// descriptor number the engine has just closed.
    #[test]
    fn hot_potato_closes_its_sockets_and_reaps_its_helper() {
        in_child(|| {
            let ctx = Context {
                process: 0,
                parallel: 1,
                scratch: std::env::temp_dir(),
            };
            for ch in [Channel::Pipe, Channel::Unix, Channel::Tcp, Channel::Udp] {
                let mut b = HotPotato::new(FdBaton::new(ch, 16), Placement::Free);
                b.setup(&ctx).map_err(|e| e.0)?;
                b.run(10).map_err(|e| e.0)?;
                let (fds, helper) = (b.baton.fds(), b.helper);
                assert!(helper > 0 && !process_is_gone(helper));
                b.cleanup();
                assert!(
                    process_is_gone(helper),
                    "{ch:?}: helper {helper} still there"
                );
                for fd in fds.into_iter().filter(|&fd| fd >= 0) {
                    assert!(!descriptor_is_open(fd), "{ch:?}: descriptor {fd} left open");
                }
            }
            Ok(())
        })
        .unwrap();
    }
}
