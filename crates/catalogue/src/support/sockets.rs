//! Loopback sockets for the communication families: TCP and UDP on
//! 127.0.0.1, AF_UNIX pairs and addresses, the options the families set,
//! and `Channel`, the byte channels (pipes and FIFOs too) two processes
//! talk over.
//!
//! Everything here binds 127.0.0.1 port 0 (the kernel picks a free port):
//! no family offers a `port` parameter, so no port can be "in use".

use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use touchstone_harness::{BenchError, Fallible};

use super::sys::{self, check, errno};

/// Which byte channel two processes talk over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Pipe,
    Fifo,
    Unix,
    Tcp,
    Udp,
}

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
        let e = errno("listen");
        sys::close(fd);
        return Err(e);
    }
    Ok((fd, port))
}

/// A non-blocking TCP listener on 127.0.0.1 (port chosen by the kernel),
/// for a server that waits on it with poll or epoll: (fd, port).
pub fn nonblocking_listener(backlog: i32) -> Fallible<(RawFd, u16)> {
    let (fd, port) = tcp_listener(backlog)?;
    set_nonblocking(fd).inspect_err(|_| sys::close(fd))?;
    Ok((fd, port))
}

/// A workload's listener on 127.0.0.1 for the trials of one point: opened
/// in `prepare`, closed in `release` (and by each client process, which
/// has no use for its copy); `fd` is -1 when none is open.
#[derive(Debug)]
pub struct TrialListener {
    pub fd: RawFd,
    pub port: u16,
}

impl TrialListener {
    pub const NONE: TrialListener = TrialListener { fd: -1, port: 0 };

    /// Listen (non-blocking, for the server's poll or epoll) with `backlog`.
    pub fn open(&mut self, backlog: i32) -> Fallible {
        (self.fd, self.port) = nonblocking_listener(backlog)?;
        Ok(())
    }

    pub fn close(&mut self) {
        sys::close_and_clear(&mut self.fd);
    }
}

/// Connect `fd` to 127.0.0.1:`port`. Inline: lat_connect times it.
#[inline]
pub fn connect_loopback(fd: RawFd, port: u16) -> Fallible {
    let a = loopback(port);
    // SAFETY: a valid sockaddr_in of the stated length.
    if unsafe { libc::connect(fd, &a as *const _ as *const libc::sockaddr, SIN_LEN) } < 0 {
        return Err(errno("connect 127.0.0.1"));
    }
    Ok(())
}

/// Accept a connection queued on `listener` (close-on-exec), retrying when
/// a signal interrupts the wait or a queued connection was reset before it
/// could be accepted; None when a non-blocking listener has none queued.
#[inline]
pub fn try_accept(listener: RawFd) -> Fallible<Option<RawFd>> {
    try_accept_with(listener, 0)
}

/// `try_accept`, the new connection also given accept4's `flags`
/// (SOCK_NONBLOCK for one served under epoll).
#[inline]
pub fn try_accept_with(listener: RawFd, flags: libc::c_int) -> Fallible<Option<RawFd>> {
    loop {
        // SAFETY: accept4 on our listener, no peer address asked for.
        let fd = unsafe {
            libc::accept4(
                listener,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                libc::SOCK_CLOEXEC | flags,
            )
        };
        if fd >= 0 {
            return Ok(Some(fd));
        }
        let e = std::io::Error::last_os_error();
        match e.kind() {
            std::io::ErrorKind::Interrupted => continue,
            std::io::ErrorKind::WouldBlock => return Ok(None),
            _ if e.raw_os_error() == Some(libc::ECONNABORTED) => continue,
            _ => return Err(BenchError(format!("accept: {e}"))),
        }
    }
}

/// Accept a connection on a blocking `listener`, waiting for one.
#[inline]
pub fn accept(listener: RawFd) -> Fallible<RawFd> {
    try_accept(listener)?
        .ok_or_else(|| BenchError("accept: the listener is non-blocking and none is queued".into()))
}

/// Send all of `buf` on a connected socket, blocking or not, retrying
/// short sends and EINTR, without SIGPIPE: a peer that has gone is an
/// error (EPIPE/ECONNRESET) the caller handles, never a signal that kills
/// the process.
///
/// A non-blocking socket whose send buffer is full (EAGAIN) is waited on
/// here, in poll for POLLOUT, and the rest sent: the multiplexed clients
/// (tcp_rr, web) send a request whole before they read, and what they
/// send always fits in the peer's buffers once the peer reads, so the
/// wait ends. The poll is bounded (`SEND_WAIT_MS`) only so that the loop
/// looks again; it is no time limit. Written on libc directly, without
/// allocating: this is the send inside the timed transaction, and the
/// common case is one `send` call that takes everything.
#[inline]
pub fn send_all(fd: RawFd, mut buf: &[u8]) -> std::io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: sending from a valid buffer on our socket.
        let r = unsafe {
            libc::send(
                fd,
                buf.as_ptr() as *const libc::c_void,
                buf.len(),
                libc::MSG_NOSIGNAL,
            )
        };
        if r >= 0 {
            buf = &buf[r as usize..];
            continue;
        }
        let e = std::io::Error::last_os_error();
        match e.kind() {
            std::io::ErrorKind::Interrupted => {}
            std::io::ErrorKind::WouldBlock => wait_writable(fd),
            _ => return Err(e),
        }
    }
    Ok(())
}

/// How long `send_all` waits for room before it tries again.
const SEND_WAIT_MS: libc::c_int = 50;

/// Wait (at most `SEND_WAIT_MS`) until `fd` can take more output. Out of
/// line: only a full send buffer comes here.
#[cold]
fn wait_writable(fd: RawFd) {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut pfd, 1, SEND_WAIT_MS) };
}

/// A connected TCP pair over loopback: (client, server), Nagle off on both.
pub fn tcp_pair() -> Fallible<(RawFd, RawFd)> {
    let (l, port) = tcp_listener(1)?;
    let result = (|| {
        let c = inet_socket(libc::SOCK_STREAM)?;
        connect_loopback(c, port).inspect_err(|_| sys::close(c))?;
        // The connection is queued already: this does not block.
        let s = accept(l).inspect_err(|_| sys::close(c))?;
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
    set_opt(fd, level, opt, &v, "setsockopt")
}

/// setsockopt with the option's value `v`, of the type the option takes
/// (an int, a timeval); `what` names it in the error.
fn set_opt<T>(fd: RawFd, level: libc::c_int, opt: libc::c_int, v: &T, what: &str) -> Fallible {
    // SAFETY: `v` is a live value of the option's own type and size.
    check(
        unsafe {
            libc::setsockopt(
                fd,
                level,
                opt,
                v as *const T as *const libc::c_void,
                std::mem::size_of::<T>() as libc::socklen_t,
            )
        },
        what,
    )?;
    Ok(())
}

/// A receive timeout, so a lost datagram is an error and not a hang.
pub fn set_recv_timeout(fd: RawFd, secs: i64) -> Fallible {
    set_recv_timeout_ms(fd, secs * 1000)
}

/// SO_RCVTIMEO in milliseconds: a blocking receive returns EAGAIN after it
/// (a server's chance to look whether it should stop).
pub fn set_recv_timeout_ms(fd: RawFd, ms: i64) -> Fallible {
    let tv = libc::timeval {
        tv_sec: ms / 1000,
        tv_usec: (ms % 1000) * 1000,
    };
    set_opt(fd, libc::SOL_SOCKET, libc::SO_RCVTIMEO, &tv, "SO_RCVTIMEO")
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

/// Receive one datagram of exactly `buf.len()` bytes, or an error.
#[inline]
pub fn recv_datagram(fd: RawFd, buf: &mut [u8]) -> Fallible {
    // SAFETY: reading one datagram into our buffer.
    let r = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
    if r != buf.len() as isize {
        return Err(if r < 0 {
            errno("udp receive")
        } else {
            BenchError(format!(
                "udp: datagram of {r} bytes, expected {}",
                buf.len()
            ))
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A non-blocking sender whose buffer fills waits for the reader and
    /// sends the rest: every byte arrives, in order.
    #[test]
    fn send_all_waits_for_room_on_a_non_blocking_socket() {
        let (c, s) = tcp_pair().unwrap();
        set_nonblocking(c).unwrap();
        set_int_opt(c, libc::SOL_SOCKET, libc::SO_SNDBUF, 4096).unwrap();
        let sent: Vec<u8> = (0..4 << 20).map(|i: u32| (i % 251) as u8).collect();
        let reader = std::thread::spawn(move || {
            // Let the sender fill its buffer first.
            std::thread::sleep(std::time::Duration::from_millis(100));
            let mut got = vec![0u8; 4 << 20];
            sys::read_exact(s, &mut got).unwrap();
            sys::close(s);
            got
        });
        send_all(c, &sent).unwrap();
        assert!(reader.join().unwrap() == sent);
        // The peer gone: an error, not SIGPIPE.
        let e = loop {
            if let Err(e) = send_all(c, b"after") {
                break e;
            }
        };
        assert!(
            matches!(e.raw_os_error(), Some(libc::EPIPE | libc::ECONNRESET)),
            "{e}"
        );
        sys::close(c);
    }

    #[test]
    fn a_short_datagram_is_an_error() {
        let (a, b) = udp_pair().unwrap();
        set_recv_timeout(b, 2).unwrap();
        sys::write_all(a, b"hi").unwrap();
        let mut buf = [0u8; 4];
        let e = recv_datagram(b, &mut buf).unwrap_err();
        assert!(e.0.contains("datagram of 2 bytes"), "{e}");
        sys::write_all(a, b"four").unwrap();
        recv_datagram(b, &mut buf).unwrap();
        assert_eq!(&buf, b"four");
        sys::close(a);
        sys::close(b);
    }
}

/// Nagle off: a request/response workload sends small messages and waits.
pub fn set_nodelay(fd: RawFd) -> Fallible {
    set_int_opt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1)
}

/// Make `fd` non-blocking (a listener or connection under epoll).
pub fn set_nonblocking(fd: RawFd) -> Fallible {
    // SAFETY: fcntl on our own descriptor.
    let fl = check(unsafe { libc::fcntl(fd, libc::F_GETFL) }, "fcntl")?;
    check(
        unsafe { libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK) },
        "fcntl",
    )?;
    Ok(())
}

/// Watch `fd` for input on epoll instance `ep`, tagged with `token`.
pub fn epoll_add(ep: RawFd, fd: RawFd, token: u64) -> Fallible {
    let mut ev = libc::epoll_event {
        events: libc::EPOLLIN as u32,
        u64: token,
    };
    // SAFETY: registering our descriptor with our epoll instance.
    check(
        unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) },
        "epoll_ctl",
    )?;
    Ok(())
}

/// Wait at most `timeout_ms` for events on `ep`: how many filled the
/// front of `events`, 0 on a timeout or a signal (the callers then look at
/// their stop flag and wait again).
#[inline]
pub fn epoll_wait(
    ep: RawFd,
    events: &mut [libc::epoll_event],
    timeout_ms: libc::c_int,
) -> Fallible<usize> {
    // SAFETY: a valid events array of the stated length.
    let n = unsafe {
        libc::epoll_wait(
            ep,
            events.as_mut_ptr(),
            events.len() as libc::c_int,
            timeout_ms,
        )
    };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() == std::io::ErrorKind::Interrupted {
            return Ok(0);
        }
        return Err(BenchError(format!("epoll_wait: {e}")));
    }
    Ok(n as usize)
}

/// Fill `buf` from a stream; Ok(false) on a clean end of file (or a reset)
/// before its first byte, an error on one in the middle of a message.
#[inline]
pub fn read_or_eof(fd: RawFd, buf: &mut [u8]) -> Fallible<bool> {
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: reading into the unfilled rest of a valid buffer.
        let r = unsafe {
            libc::read(
                fd,
                buf[got..].as_mut_ptr() as *mut libc::c_void,
                buf.len() - got,
            )
        };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            if got == 0 && e.raw_os_error() == Some(libc::ECONNRESET) {
                return Ok(false);
            }
            return Err(BenchError(format!("read: {e}")));
        }
        if r == 0 {
            if got == 0 {
                return Ok(false);
            }
            return Err("read: the peer closed in the middle of a message".into());
        }
        got += r as usize;
    }
    Ok(true)
}

/// Bind `fd` to the loopback source address 127.`b`.`c`.`d` without
/// choosing its port yet (IP_BIND_ADDRESS_NO_PORT: the port is picked at
/// connect, against the whole 4-tuple). A client that connects many times
/// a second spreads its connections over many source addresses so that
/// the sockets it leaves in TIME_WAIT never exhaust one address's
/// ephemeral ports — without changing what a close does.
pub fn bind_loopback_source(fd: RawFd, b: u8, c: u8, d: u8) -> Fallible {
    set_int_opt(fd, libc::IPPROTO_IP, libc::IP_BIND_ADDRESS_NO_PORT, 1)?;
    // SAFETY: sockaddr_in is plain data.
    let mut a: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    a.sin_family = libc::AF_INET as libc::sa_family_t;
    a.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::new(127, b, c, d)).to_be();
    // SAFETY: a valid sockaddr_in of the stated length.
    check(
        unsafe { libc::bind(fd, &a as *const _ as *const libc::sockaddr, SIN_LEN) },
        "bind a 127/8 source address",
    )?;
    Ok(())
}
