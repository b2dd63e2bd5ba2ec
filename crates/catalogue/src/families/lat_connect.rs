//! lat_connect: the time to open a TCP connection to a server on 127.0.0.1
//! and close it (lmbench's lat_connect): socket, connect (the three-way
//! handshake, completed by the kernel), close. The helper accepts and
//! closes each connection. The listener binds port 0 (kernel-chosen).
//! `ConnectBaton` also serves lat_unix_connect (AF_UNIX, a path in scratch).

use std::ffi::CString;
use std::os::fd::RawFd;

use touchstone_harness::{BenchError, Context, Fallible, Shape};

use super::ipc_common::{
    connect_loopback, cstring, inet_socket, tcp_listener, unix_addr, Baton, HotPotato, SUN_LEN,
};
use crate::family::{always_supported, Built, Family, Mode, Parallel};
use crate::params::Point;
use crate::placement;
use crate::sys;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Domain {
    Tcp,
    Unix,
}

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

fn err(what: &str) -> BenchError {
    BenchError(format!("{what}: {}", std::io::Error::last_os_error()))
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
                    return Err(err("socket"));
                }
                self.listener = fd;
                if unsafe { libc::bind(fd, &a as *const _ as *const libc::sockaddr, SUN_LEN) } < 0 {
                    return Err(err("bind"));
                }
                if unsafe { libc::listen(fd, 4096) } < 0 {
                    return Err(err("listen"));
                }
                self.addr = Some(a);
            }
        }
        Ok(())
    }

    fn parent_side(&mut self) -> Fallible {
        sys::close(self.listener);
        self.listener = -1;
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
                    return Err(err("socket"));
                }
                let a = self.addr.as_ref().unwrap();
                if unsafe { libc::connect(fd, a as *const _ as *const libc::sockaddr, SUN_LEN) } < 0
                {
                    sys::close(fd);
                    return Err(err("connect"));
                }
                fd
            }
        };
        sys::close(fd);
        Ok(())
    }

    fn pong(&mut self) -> Fallible {
        // SAFETY: accept on the listener this helper inherited.
        let fd = unsafe {
            libc::accept4(
                self.listener,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                libc::SOCK_CLOEXEC,
            )
        };
        if fd < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                return Ok(());
            }
            return Err(BenchError(format!("accept: {e}")));
        }
        sys::close(fd);
        Ok(())
    }

    fn close(&mut self) {
        sys::close(self.listener);
        self.listener = -1;
        if !self.path.as_bytes().is_empty() {
            // SAFETY: removing the socket file open made.
            unsafe { libc::unlink(self.path.as_ptr()) };
            self.path = CString::default();
        }
    }
}

fn build(p: &Point, _: Mode) -> Result<Built, String> {
    Ok(Built::new(
        HotPotato::new(ConnectBaton::new(Domain::Tcp)).placed(p),
        Shape::latency(1.0).with_switches_by_design(),
    ))
}

pub const FAMILY: Family = Family {
    name: "lat_connect",
    group: "comm_lat",
    summary: "TCP connection set-up and close on 127.0.0.1 (socket, connect, close)",
    params: &[placement::PARAM],
    parallel: Parallel::No(
        "every connection leaves a socket in TIME_WAIT for 60 s; several processes \
         connecting for a second each would exhaust ephemeral ports and measure that instead",
    ),
    default_suite: true,
    unsupported: always_supported,
    build,
    derive: None,
};

#[cfg(test)]
mod tests {
    use crate::testing::{assert_sane, measure_spec, tiny_plan};
    use crate::Mode;

    #[test]
    fn measures() {
        assert_sane(&measure_spec("lat_connect", &tiny_plan(1), Mode::default()).unwrap()[0]);
    }

    #[test]
    fn refuses_parallel() {
        let e = measure_spec("lat_connect", &tiny_plan(3), Mode::default()).unwrap_err();
        assert!(e.contains("TIME_WAIT"), "{e}");
    }
}
