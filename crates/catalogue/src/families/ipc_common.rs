//! Plumbing shared by the communication families (issue 4), kept in one
//! place: loopback socket setup, the "hot potato" ping-pong with a helper
//! process (`Baton` + `HotPotato`), and the one-way stream that the
//! bandwidth families time (`Stream`), with the CPU time both ends spend.
//!
//! Everything here binds 127.0.0.1 port 0 (the kernel picks a free port):
//! no family offers a `port` parameter, so no port can be "in use".

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use touchstone_harness::{BenchError, Benchmark, Context, Fallible};

use crate::params::Point;
use crate::placement::Placement;
use crate::sys::{self, Pid};

fn check(r: libc::c_int, what: &str) -> Fallible<libc::c_int> {
    if r < 0 {
        Err(BenchError(format!(
            "{what}: {}",
            io::Error::last_os_error()
        )))
    } else {
        Ok(r)
    }
}

fn last_err(what: &str) -> BenchError {
    BenchError(format!("{what}: {}", io::Error::last_os_error()))
}

// ---------------------------------------------------------------- sockets

fn loopback(port: u16) -> libc::sockaddr_in {
    // SAFETY: sockaddr_in is plain data.
    let mut a: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    a.sin_family = libc::AF_INET as libc::sa_family_t;
    a.sin_port = port.to_be();
    a.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
    a
}

const SIN_LEN: libc::socklen_t = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;

/// A new IPv4 socket of `ty` (SOCK_STREAM or SOCK_DGRAM), close-on-exec.
pub fn inet_socket(ty: libc::c_int) -> Fallible<RawFd> {
    // SAFETY: plain socket(2).
    check(
        unsafe { libc::socket(libc::AF_INET, ty | libc::SOCK_CLOEXEC, 0) },
        "socket",
    )
}

/// Bind `fd` to 127.0.0.1 with a kernel-chosen port; return the port.
pub fn bind_loopback(fd: RawFd) -> Fallible<u16> {
    let a = loopback(0);
    // SAFETY: a valid sockaddr_in of the stated length.
    check(
        unsafe { libc::bind(fd, &a as *const _ as *const libc::sockaddr, SIN_LEN) },
        "bind 127.0.0.1",
    )?;
    let mut got = loopback(0);
    let mut len = SIN_LEN;
    // SAFETY: getsockname into a sockaddr_in-sized buffer.
    check(
        unsafe { libc::getsockname(fd, &mut got as *mut _ as *mut libc::sockaddr, &mut len) },
        "getsockname",
    )?;
    Ok(u16::from_be(got.sin_port))
}

/// A TCP listener on 127.0.0.1 (port chosen by the kernel): (fd, port).
pub fn tcp_listener(backlog: i32) -> Fallible<(RawFd, u16)> {
    let fd = inet_socket(libc::SOCK_STREAM)?;
    let port = bind_loopback(fd).inspect_err(|_| sys::close(fd))?;
    // SAFETY: listen on our socket.
    if unsafe { libc::listen(fd, backlog) } < 0 {
        let e = last_err("listen");
        sys::close(fd);
        return Err(e);
    }
    Ok((fd, port))
}

/// Connect `fd` to 127.0.0.1:`port`. Inline: lat_connect times it.
#[inline]
pub fn connect_loopback(fd: RawFd, port: u16) -> Fallible {
    let a = loopback(port);
    // SAFETY: a valid sockaddr_in of the stated length.
    if unsafe { libc::connect(fd, &a as *const _ as *const libc::sockaddr, SIN_LEN) } < 0 {
        return Err(last_err("connect 127.0.0.1"));
    }
    Ok(())
}

/// A connected TCP pair over loopback: (client, server), Nagle off on both.
pub fn tcp_pair() -> Fallible<(RawFd, RawFd)> {
    let (l, port) = tcp_listener(1)?;
    let result = (|| {
        let c = inet_socket(libc::SOCK_STREAM)?;
        connect_loopback(c, port).inspect_err(|_| sys::close(c))?;
        // SAFETY: accept on our listener; the connection is queued already.
        let s = unsafe {
            libc::accept4(
                l,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                libc::SOCK_CLOEXEC,
            )
        };
        if s < 0 {
            sys::close(c);
            return Err(last_err("accept"));
        }
        for fd in [c, s] {
            set_int_opt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1)?;
        }
        Ok((c, s))
    })();
    sys::close(l);
    result
}

/// Two UDP sockets on 127.0.0.1, each connected to the other.
pub fn udp_pair() -> Fallible<(RawFd, RawFd)> {
    let a = inet_socket(libc::SOCK_DGRAM)?;
    let b = inet_socket(libc::SOCK_DGRAM).inspect_err(|_| sys::close(a))?;
    let r = (|| {
        let pa = bind_loopback(a)?;
        let pb = bind_loopback(b)?;
        connect_loopback(a, pb)?;
        connect_loopback(b, pa)
    })();
    if let Err(e) = r {
        sys::close(a);
        sys::close(b);
        return Err(e);
    }
    Ok((a, b))
}

/// A connected AF_UNIX stream pair.
pub fn unix_pair() -> Fallible<(RawFd, RawFd)> {
    let mut fds = [0; 2];
    // SAFETY: socketpair into a 2-element array.
    check(
        unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        },
        "socketpair",
    )?;
    Ok((fds[0], fds[1]))
}

pub fn set_int_opt(fd: RawFd, level: libc::c_int, opt: libc::c_int, v: libc::c_int) -> Fallible {
    // SAFETY: an int option of the right size.
    check(
        unsafe {
            libc::setsockopt(
                fd,
                level,
                opt,
                &v as *const _ as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        },
        "setsockopt",
    )?;
    Ok(())
}

/// A receive timeout, so a lost datagram is an error and not a hang.
pub fn set_recv_timeout(fd: RawFd, secs: i64) -> Fallible {
    let tv = libc::timeval {
        tv_sec: secs,
        tv_usec: 0,
    };
    // SAFETY: a timeval option of the right size.
    check(
        unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                &tv as *const _ as *const libc::c_void,
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        },
        "SO_RCVTIMEO",
    )?;
    Ok(())
}

/// An AF_UNIX address for `path` (which must fit sun_path).
pub fn unix_addr(path: &Path) -> Fallible<libc::sockaddr_un> {
    // SAFETY: sockaddr_un is plain data.
    let mut a: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    a.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let b = path.as_os_str().as_bytes();
    if b.len() >= a.sun_path.len() {
        return Err(format!("socket path too long: {}", path.display()).into());
    }
    for (d, s) in a.sun_path.iter_mut().zip(b) {
        *d = *s as libc::c_char;
    }
    Ok(a)
}

pub const SUN_LEN: libc::socklen_t = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;

pub fn cstring(path: &Path) -> Fallible<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|e| BenchError(e.to_string()))
}

/// Read until end of file into `buf` (wrapping around), returning the
/// number of bytes read: for protocols whose reply ends with a close.
#[inline]
pub fn read_to_eof(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    let mut total = 0;
    loop {
        // SAFETY: reading into our buffer.
        let r = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if r == 0 {
            return Ok(total);
        }
        total += r as usize;
    }
}

// ------------------------------------------------------------ hot potato

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

impl<B: Baton> HotPotato<B> {
    pub fn new(baton: B) -> Self {
        HotPotato {
            baton,
            helper: -1,
            place: Placement::Free,
        }
    }
    /// Run the two processes where the case's `cpus` parameter says.
    pub fn placed(mut self, p: &Point) -> Self {
        self.place = Placement::of(p);
        self
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
                return Err(e.into());
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

/// Which byte channel a descriptor ping-pong uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Pipe,
    Fifo,
    Unix,
    Tcp,
    Udp,
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

    /// One datagram in, exactly `buf.len()` bytes, or an error.
    #[inline]
    fn recv_datagram(fd: RawFd, buf: &mut [u8]) -> Fallible {
        // SAFETY: reading into our buffer.
        let r = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
        if r != buf.len() as isize {
            return Err(if r < 0 {
                last_err("udp receive")
            } else {
                BenchError(format!("udp: got {r} bytes, sent {}", buf.len()))
            });
        }
        Ok(())
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
                        return Err(last_err("open fifo"));
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
            Self::recv_datagram(self.back, &mut self.buf)
        } else {
            sys::read_exact(self.back, &mut self.buf).map_err(BenchError::from)
        }
    }

    fn pong(&mut self) -> Fallible {
        if self.channel == Channel::Udp {
            Self::recv_datagram(self.peer_in, &mut self.buf)?;
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

// ---------------------------------------------------------------- stream

/// CPU time this process has used, in seconds.
pub fn process_cpu_s() -> f64 {
    // SAFETY: clock_gettime into a local timespec.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// What the stream's helper is asked, over its command pipe.
const REPORT: u64 = u64::MAX;

/// One-way bulk transfer from a helper (the sender) to this process (the
/// receiver), `size` bytes per write and per read. Each interval first
/// asks the helper for exactly the interval's messages, so nothing is
/// buffered in the channel when an interval starts.
pub struct Stream {
    channel: Channel,
    size: usize,
    buf: Vec<u8>,
    data: RawFd,
    cmd: RawFd,
    reply: RawFd,
    helper: Pid,
    place: Placement,
    // receiver's CPU seconds and bytes over all intervals
    cpu_mark: f64,
    cpu_s: f64,
    bytes: f64,
}

impl Stream {
    pub fn new(channel: Channel, size: usize) -> Stream {
        Stream {
            channel,
            size,
            buf: Vec::new(),
            data: -1,
            cmd: -1,
            reply: -1,
            helper: -1,
            place: Placement::Free,
            cpu_mark: 0.0,
            cpu_s: 0.0,
            bytes: 0.0,
        }
    }
    /// Run sender and receiver where the case's `cpus` parameter says.
    pub fn placed(mut self, p: &Point) -> Self {
        self.place = Placement::of(p);
        self
    }
}

/// The sender: for each command `k`, write `k` messages of `size` bytes; for
/// `REPORT`, answer with its CPU seconds spent writing and bytes written.
fn sender(data: RawFd, cmd: RawFd, reply: RawFd, size: usize) -> i32 {
    let buf = vec![0xa5u8; size];
    let (mut cpu, mut bytes) = (0.0f64, 0.0f64);
    let mut word = [0u8; 8];
    loop {
        if sys::read_exact(cmd, &mut word).is_err() {
            return 0;
        }
        let k = u64::from_ne_bytes(word);
        if k == REPORT {
            let mut out = [0u8; 16];
            out[..8].copy_from_slice(&cpu.to_ne_bytes());
            out[8..].copy_from_slice(&bytes.to_ne_bytes());
            if sys::write_all(reply, &out).is_err() {
                return 1;
            }
            continue;
        }
        let t0 = process_cpu_s();
        for _ in 0..k {
            if sys::write_all(data, &buf).is_err() {
                return 1;
            }
        }
        cpu += process_cpu_s() - t0;
        bytes += (k as usize * size) as f64;
    }
}

impl Benchmark for Stream {
    fn setup(&mut self, ctx: &Context) -> Fallible {
        // The harness does not call cleanup when setup fails: undo here.
        self.start(ctx).inspect_err(|_| self.cleanup())
    }

    fn prepare(&mut self, _n: u64) -> Fallible {
        self.cpu_mark = process_cpu_s();
        Ok(())
    }

    /// Timed: an 8-byte command asking the helper for `n` messages, then
    /// reading `n * size` bytes in reads of up to `size` bytes. The data is
    /// only moved, not inspected (as lmbench's bw_pipe/bw_tcp).
    fn run(&mut self, n: u64) -> Fallible {
        sys::write_all(self.cmd, &n.to_ne_bytes())?;
        let mut left = n as usize * self.size;
        while left > 0 {
            let want = left.min(self.size);
            // SAFETY: reading into our buffer of `size` bytes.
            let r =
                unsafe { libc::read(self.data, self.buf.as_mut_ptr() as *mut libc::c_void, want) };
            if r <= 0 {
                let e = io::Error::last_os_error();
                if r < 0 && e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(if r == 0 {
                    "sender closed the stream".into()
                } else {
                    BenchError(format!("stream read: {e}"))
                });
            }
            left -= r as usize;
        }
        Ok(())
    }

    fn conclude(&mut self, n: u64) -> Fallible {
        self.cpu_s += process_cpu_s() - self.cpu_mark;
        self.bytes += (n as usize * self.size) as f64;
        Ok(())
    }

    fn extras(&mut self) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        if self.bytes > 0.0 {
            out.push((
                "cpu_s_per_mb_receiver".to_string(),
                self.cpu_s / (self.bytes / 1e6),
            ));
        }
        let mut rep = [0u8; 16];
        if sys::write_all(self.cmd, &REPORT.to_ne_bytes()).is_ok()
            && sys::read_exact(self.reply, &mut rep).is_ok()
        {
            let cpu = f64::from_ne_bytes(rep[..8].try_into().unwrap());
            let bytes = f64::from_ne_bytes(rep[8..].try_into().unwrap());
            if bytes > 0.0 {
                out.push(("cpu_s_per_mb_sender".to_string(), cpu / (bytes / 1e6)));
            }
        }
        out
    }

    fn cleanup(&mut self) {
        for fd in [self.data, self.cmd, self.reply] {
            sys::close(fd);
        }
        (self.data, self.cmd, self.reply) = (-1, -1, -1);
        sys::kill_and_reap(self.helper);
        self.helper = -1;
    }
}

impl Stream {
    fn start(&mut self, ctx: &Context) -> Fallible {
        let pins = self.place.pin(ctx, 2)?;
        self.buf = vec![0u8; self.size];
        let (recv, send) = match self.channel {
            Channel::Pipe => sys::pipe()?,
            Channel::Unix => unix_pair()?,
            Channel::Tcp => tcp_pair()?,
            _ => return Err("stream: pipe, unix or tcp only".into()),
        };
        let (cmd_r, cmd_w) = sys::pipe()?;
        let (rep_r, rep_w) = sys::pipe()?;
        let size = self.size;
        let pid = pins.fork_helper(1, || {
            for fd in [recv, cmd_w, rep_r] {
                sys::close(fd);
            }
            sender(send, cmd_r, rep_w, size)
        });
        for fd in [send, cmd_r, rep_w] {
            sys::close(fd);
        }
        (self.data, self.cmd, self.reply) = (recv, cmd_w, rep_r);
        self.helper = pid?;
        Ok(())
    }
}

// ------------------------------------------------------- shared params

use crate::params::{Kind, Param};

/// A ping-pong message size (lmbench's -m), 1 byte by default.
pub const MSG_SIZE: Param = Param {
    name: "size",
    help: "message size in bytes, each way",
    kind: Kind::Size {
        min: 1,
        max: 1 << 20,
    },
    default: &["1"],
    quick: &[],
    positional: false,
};

/// A UDP message size: one datagram, at most 32 KB.
pub const UDP_SIZE: Param = Param {
    kind: Kind::Size {
        min: 1,
        max: 32 << 10,
    },
    help: "datagram size in bytes, each way (one datagram)",
    ..MSG_SIZE
};

/// A bandwidth message size: 64 KB by default, 1 KB to 4 MB.
pub const BW_SIZE: Param = Param {
    name: "size",
    help: "bytes per write and per read",
    kind: Kind::Size {
        min: 1 << 10,
        max: 4 << 20,
    },
    default: &["1k", "64k", "1m", "4m"],
    quick: &["64k"],
    positional: false,
};

/// What every stream-bandwidth family (bw_pipe, bw_unix, bw_tcp) owes:
/// MB/s with CPU seconds per MB at both ends, three processes at once, and
/// a clear refusal of messages over the limit.
#[cfg(test)]
pub(crate) fn check_stream_family(name: &str) {
    use crate::testing::{assert_measures, assert_runs_in_parallel, measure_spec, tiny_plan};
    use crate::Mode;
    for m in assert_measures(
        &format!("{name}/size:1k,64k"),
        touchstone_results::Unit::MBps,
    ) {
        for k in ["cpu_s_per_mb_sender", "cpu_s_per_mb_receiver"] {
            let v = m.extra[k];
            assert!(v.is_finite() && v > 0.0, "{}: {k} = {v}", m.name);
        }
    }
    assert_runs_in_parallel(&format!("{name}/size:64k"), Mode::default());
    let e = measure_spec(&format!("{name}/size:8m"), &tiny_plan(1), Mode::default()).unwrap_err();
    assert!(e.contains("out of range"), "{e}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_open(fd: RawFd) -> bool {
        // SAFETY: F_GETFD only asks whether the descriptor exists.
        (unsafe { libc::fcntl(fd, libc::F_GETFD) }) >= 0
    }

    fn gone(pid: Pid) -> bool {
        // SAFETY: probing a pid; ESRCH means no such process (reaped).
        (unsafe { libc::kill(pid, 0) }) != 0
    }

    #[test]
    fn hot_potato_closes_its_sockets_and_reaps_its_helper() {
        let ctx = Context {
            process: 0,
            parallel: 1,
            scratch: std::env::temp_dir(),
        };
        for ch in [Channel::Pipe, Channel::Unix, Channel::Tcp, Channel::Udp] {
            let mut b = HotPotato::new(FdBaton::new(ch, 16));
            b.setup(&ctx).unwrap();
            b.run(10).unwrap();
            let (fds, helper) = (b.baton.fds(), b.helper);
            assert!(helper > 0 && !gone(helper));
            b.cleanup();
            assert!(gone(helper), "{ch:?}: helper {helper} still there");
            for fd in fds.into_iter().filter(|&fd| fd >= 0) {
                assert!(!is_open(fd), "{ch:?}: descriptor {fd} left open");
            }
        }
    }

    #[test]
    fn stream_closes_and_reaps_and_reports_both_ends() {
        let ctx = Context {
            process: 0,
            parallel: 1,
            scratch: std::env::temp_dir(),
        };
        let mut s = Stream::new(Channel::Tcp, 4096);
        s.setup(&ctx).unwrap();
        for n in [1, 10, 100] {
            s.prepare(n).unwrap();
            s.run(n).unwrap();
            s.conclude(n).unwrap();
        }
        let extras = s.extras();
        assert_eq!(extras.len(), 2, "{extras:?}");
        let (fds, helper) = ([s.data, s.cmd, s.reply], s.helper);
        s.cleanup();
        assert!(gone(helper));
        for fd in fds {
            assert!(!is_open(fd), "descriptor {fd} left open");
        }
    }

    #[test]
    fn loopback_pairs_carry_bytes() {
        for (a, b) in [
            tcp_pair().unwrap(),
            unix_pair().unwrap(),
            udp_pair().unwrap(),
        ] {
            sys::write_all(a, b"hey").unwrap();
            let mut got = [0u8; 3];
            sys::read_exact(b, &mut got).unwrap();
            assert_eq!(&got, b"hey");
            sys::close(a);
            sys::close(b);
        }
    }
}
