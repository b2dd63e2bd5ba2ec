//! The server side of the request/response workloads (tcp_rr, tcp_crr):
//! one thread serving every connection with level-triggered epoll. Each
//! request is `size` bytes, which may arrive in pieces; its response, the
//! same bytes, is written whole. A connection whose client closes (or
//! resets) is closed and its slot reused, so a workload that opens a
//! connection per transaction (tcp_crr) runs in constant memory. Also the
//! accepting loop of the servers with a thread per connection (`accept_n`).

use std::io;
use std::os::fd::RawFd;

use touchstone_harness::workload::ServerLink;
use touchstone_harness::{BenchError, Fallible};

use super::sockets::{self, epoll_add, set_nodelay};
use super::sys::{self, check, close};
use crate::params::Param;

/// The size of a request and of its response, as the workloads served
/// here take it (tcp_crr words its help for itself).
pub const SIZE: Param = Param::size("size", 1, 1 << 20)
    .measured(&["4"])
    .help("request and response size in bytes (netperf TCP_RR: 1; seed 003: 4)");

/// Per-connection state: its descriptor (-1: a free slot) and the bytes of
/// the request so far.
struct Conn {
    fd: RawFd,
    got: usize,
}

const LISTENER_TOKEN: u64 = u64::MAX;
/// How often the server looks at `should_stop` while idle.
const POLL_MS: libc::c_int = 50;

/// When the server may return on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// Once `n` connections have come and all have gone (tcp_rr's L
    /// long-lived connections), or when told to stop.
    AllGone(u32),
    /// Only when told to stop (connections come and go all the time).
    Stopped,
}

/// Accept `n` connections on the non-blocking `listener`, handing each to
/// `take` (blocking, close-on-exec) as it comes: the accepting loop of the
/// servers with a thread per connection (tcp_rr's `server:threads`, chat).
/// Between connections it waits in poll at most `POLL_MS`, so that a stop
/// (`link.should_stop()`) is seen even when clients never come; false:
/// told to stop before all `n` came.
pub fn accept_n(
    listener: RawFd,
    n: u32,
    link: &mut dyn ServerLink,
    take: &mut dyn FnMut(RawFd) -> Fallible,
) -> Fallible<bool> {
    let mut accepted = 0;
    while accepted < n {
        if link.should_stop() {
            return Ok(false);
        }
        let mut pfd = libc::pollfd {
            fd: listener,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut pfd, 1, POLL_MS) };
        while let Some(fd) = sockets::try_accept(listener)? {
            accepted += 1;
            take(fd)?;
        }
    }
    Ok(true)
}

/// Serve echo requests of `size` bytes on the connections `listener`
/// (non-blocking) accepts, until `until` or `link.should_stop()`.
pub fn serve_epoll(
    listener: RawFd,
    size: usize,
    until: Until,
    link: &mut dyn ServerLink,
) -> Fallible {
    // SAFETY: a new epoll instance, closed below.
    let ep = check(
        unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) },
        "epoll_create1",
    )?;
    let mut conns: Vec<Conn> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    let result = (|| {
        epoll_add(ep, listener, LISTENER_TOKEN)?;
        link.ready()?;
        let mut buf = vec![0u8; size];
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 64];
        let (mut accepted, mut open) = (0u32, 0usize);
        loop {
            let all_gone = matches!(until, Until::AllGone(n) if accepted >= n && open == 0);
            if link.should_stop() || all_gone {
                return Ok(());
            }
            let n = sockets::epoll_wait(ep, &mut events, POLL_MS)?;
            for ev in &events[..n] {
                let token = ev.u64;
                if token == LISTENER_TOKEN {
                    while let Some(fd) = sockets::try_accept(listener)? {
                        set_nodelay(fd)?;
                        let slot = match free.pop() {
                            Some(s) => {
                                conns[s] = Conn { fd, got: 0 };
                                s
                            }
                            None => {
                                conns.push(Conn { fd, got: 0 });
                                conns.len() - 1
                            }
                        };
                        epoll_add(ep, fd, slot as u64)?;
                        accepted += 1;
                        open += 1;
                    }
                    continue;
                }
                let slot = token as usize;
                let c = &mut conns[slot];
                if c.fd < 0 {
                    continue;
                }
                // SAFETY: reading into the unfilled rest of the buffer.
                let r = unsafe {
                    libc::read(
                        c.fd,
                        buf[c.got..].as_mut_ptr() as *mut libc::c_void,
                        size - c.got,
                    )
                };
                if r > 0 {
                    c.got += r as usize;
                    if c.got == size {
                        c.got = 0;
                        sys::write_all(c.fd, &buf)
                            .map_err(|e| BenchError(format!("write: {e}")))?;
                    }
                    continue;
                }
                let e = io::Error::last_os_error();
                if r < 0
                    && matches!(
                        e.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                    )
                {
                    continue;
                }
                // End of file or a reset: the client has gone. Closing
                // removes the descriptor from the epoll set.
                close(c.fd);
                c.fd = -1;
                free.push(slot);
                open -= 1;
            }
        }
    })();
    for c in &conns {
        close(c.fd);
    }
    close(ep);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::sockets::{connect_loopback, inet_socket, nonblocking_listener};
    use std::cell::Cell;

    /// A link that asks to stop after `polls` looks.
    struct StopAfter {
        polls: Cell<u32>,
    }
    impl ServerLink for StopAfter {
        fn ready(&mut self) -> Fallible {
            Ok(())
        }
        fn should_stop(&self) -> bool {
            let left = self.polls.get();
            self.polls.set(left.saturating_sub(1));
            left == 0
        }
    }

    #[test]
    fn accept_n_takes_every_connection_then_returns() {
        let (l, port) = nonblocking_listener(16).unwrap();
        let clients: Vec<RawFd> = (0..3)
            .map(|_| {
                let c = inet_socket(libc::SOCK_STREAM).unwrap();
                connect_loopback(c, port).unwrap();
                c
            })
            .collect();
        let mut taken = Vec::new();
        let mut link = StopAfter {
            polls: Cell::new(1000),
        };
        let all = accept_n(l, 3, &mut link, &mut |fd| {
            taken.push(fd);
            Ok(())
        })
        .unwrap();
        assert!(all);
        assert_eq!(taken.len(), 3);
        // Accepted blocking: a thread per connection reads them so.
        for &fd in &taken {
            // SAFETY: fcntl on our own descriptor.
            let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
            assert_eq!(fl & libc::O_NONBLOCK, 0);
        }
        taken.into_iter().chain(clients).for_each(close);
        close(l);
    }

    #[test]
    fn accept_n_sees_a_stop_when_clients_never_come() {
        let (l, _) = nonblocking_listener(16).unwrap();
        let mut link = StopAfter {
            polls: Cell::new(2),
        };
        let all = accept_n(l, 1, &mut link, &mut |_| panic!("nobody connected")).unwrap();
        assert!(!all);
        close(l);
    }
}
