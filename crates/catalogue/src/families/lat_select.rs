//! lat_select: the time of one select(2) or poll(2) over N descriptors
//! (lmbench's lat_select), N up to 1000, of regular files or of TCP
//! sockets. Files: N duplicates of a descriptor of a scratch file (always
//! readable: the call reports N ready). Sockets: N client sockets connected
//! over 127.0.0.1 to a listener (port chosen by the kernel) that never
//! accepts them, so none has data (the call reports 0 ready). Both calls
//! ask for readability with a zero timeout; the count is checked.

use std::os::fd::RawFd;

use touchstone_harness::{BenchError, Context, Fallible, Shape};

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::scratch_file::cached_file;
use crate::support::sockets::{connect_loopback, inet_socket, tcp_listener};
use crate::support::sys::{self, errno};

pub struct LatSelect {
    n: usize,
    tcp: bool,
    poll: bool,
    fds: Vec<RawFd>,
    extra: Vec<RawFd>,
    set: libc::fd_set,
    maxfd: RawFd,
    pfds: Vec<libc::pollfd>,
    expect: i32,
}

/// Make sure this process may hold `want` descriptors.
fn ensure_nofile(want: u64) -> Fallible {
    // SAFETY: get/setrlimit on a local struct.
    let mut rl: libc::rlimit = unsafe { std::mem::zeroed() };
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) };
    if rl.rlim_cur >= want {
        return Ok(());
    }
    if rl.rlim_max < want {
        return Err(BenchError(format!(
            "lat_select needs {want} open files; the hard limit is {} (ulimit -Hn)",
            rl.rlim_max
        )));
    }
    rl.rlim_cur = want;
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &rl) } != 0 {
        return Err(errno("setrlimit"));
    }
    Ok(())
}

impl LatSelect {
    fn start(&mut self, ctx: &Context) -> Fallible {
        ensure_nofile(self.n as u64 + 64)?;
        if self.tcp {
            let (l, port) = tcp_listener(1024)?;
            self.extra.push(l);
            for _ in 0..self.n {
                let fd = inet_socket(libc::SOCK_STREAM)?;
                self.fds.push(fd);
                connect_loopback(fd, port)?;
            }
            self.expect = 0;
        } else {
            let f = cached_file(ctx, "lat_select", 4096)?;
            self.extra.push(f);
            for _ in 0..self.n {
                // SAFETY: duplicating our own descriptor.
                let fd = unsafe { libc::fcntl(f, libc::F_DUPFD_CLOEXEC, 0) };
                if fd < 0 {
                    return Err(errno("dup"));
                }
                self.fds.push(fd);
            }
            self.expect = self.n as i32;
        }
        self.maxfd = *self.fds.iter().max().unwrap();
        if !self.poll && self.maxfd >= libc::FD_SETSIZE as RawFd {
            return Err(BenchError(format!(
                "select: descriptor {} is beyond FD_SETSIZE ({})",
                self.maxfd,
                libc::FD_SETSIZE
            )));
        }
        // SAFETY: fd_set is plain data; FD_SET within FD_SETSIZE (checked).
        unsafe {
            libc::FD_ZERO(&mut self.set);
            if !self.poll {
                for &fd in &self.fds {
                    libc::FD_SET(fd, &mut self.set);
                }
            }
        }
        self.pfds = self
            .fds
            .iter()
            .map(|&fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        Ok(())
    }
}

impl touchstone_harness::Benchmark for LatSelect {
    fn setup(&mut self, ctx: &Context) -> Fallible {
        self.start(ctx).inspect_err(|_| self.cleanup())
    }

    /// Timed: `n` calls. select: copy the prepared read set (128 bytes, as
    /// any caller must since select overwrites it) and a zero timeout, then
    /// select; poll: poll the prepared array with timeout 0. The number of
    /// ready descriptors is checked every time.
    fn run(&mut self, n: u64) -> Fallible {
        for _ in 0..n {
            let r = if self.poll {
                // SAFETY: our pollfd array of n entries.
                unsafe { libc::poll(self.pfds.as_mut_ptr(), self.pfds.len() as libc::nfds_t, 0) }
            } else {
                let mut rd = self.set;
                let mut tv = libc::timeval {
                    tv_sec: 0,
                    tv_usec: 0,
                };
                // SAFETY: a valid fd_set covering descriptors below maxfd+1.
                unsafe {
                    libc::select(
                        self.maxfd + 1,
                        &mut rd,
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        &mut tv,
                    )
                }
            };
            if r != self.expect {
                return Err(BenchError(format!(
                    "{}: {} ready, expected {} ({})",
                    if self.poll { "poll" } else { "select" },
                    r,
                    self.expect,
                    std::io::Error::last_os_error()
                )));
            }
        }
        Ok(())
    }

    fn cleanup(&mut self) {
        for fd in self.fds.drain(..).chain(self.extra.drain(..)) {
            sys::close(fd);
        }
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    Ok(Built::new(
        LatSelect {
            n: p.num("n") as usize,
            tcp: p.text("type") == "tcp",
            poll: p.text("call") == "poll",
            fds: Vec::new(),
            extra: Vec::new(),
            // SAFETY: fd_set is plain data; zero is the empty set.
            set: unsafe { std::mem::zeroed() },
            maxfd: -1,
            pfds: Vec::new(),
            expect: 0,
        },
        Shape::latency(1.0),
    ))
}

pub const FAMILY: Family = Family {
    params: &[
        Param::choice("type", &["file", "tcp"])
            .positional()
            .help("file: descriptors of a file (all ready); tcp: idle loopback sockets"),
        Param::choice("call", &["select", "poll"]).help("select(2) or poll(2)"),
        Param::int("n", 1, 1000)
            .measured(&["10", "100", "250", "500", "1000"])
            .quick(&["100"])
            .help("number of descriptors"),
    ],
    ..Family::new(
        "lat_select",
        "comm_lat",
        "select() or poll() over N file or TCP socket descriptors (zero timeout)",
        build,
    )
};

#[cfg(test)]
mod tests {
    use crate::testing::measure_tiny;

    #[test]
    fn zero_descriptors_is_refused() {
        let e = measure_tiny("lat_select/n:0").unwrap_err();
        assert!(e.contains("out of range"), "{e}");
    }
}
