//! lat_http: the time to fetch a small document over HTTP/1.0 from a local
//! server on 127.0.0.1 (lmbench's lat_http): connect, send the GET, read
//! the response to the end (the server closes), close. The server is a
//! helper written here (port chosen by the kernel) that checks the request
//! line and answers 200 with a `size`-byte document kept in memory.

use std::os::fd::RawFd;

use touchstone_harness::{BenchError, Context, Fallible};

use crate::family::{Built, Family, Parallel, RunContext};
use crate::params::{Param, Point};
use crate::support::hot_potato::{Baton, HotPotato};
use crate::support::placement;
use crate::support::sockets::{accept, connect_loopback, inet_socket, tcp_listener};
use crate::support::sys::{self, read_to_eof};

const REQUEST: &[u8] = b"GET /doc HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";

pub struct HttpBaton {
    listener: RawFd,
    port: u16,
    response: Vec<u8>,
    buf: Vec<u8>,
}

/// The whole response the server sends for a `size`-byte document.
pub fn response(size: usize) -> Vec<u8> {
    let mut r = format!(
        "HTTP/1.0 200 OK\r\nServer: touchstone\r\nContent-Type: text/plain\r\nContent-Length: {size}\r\n\r\n"
    )
    .into_bytes();
    r.extend((0..size).map(|i| b'a' + (i % 26) as u8));
    r
}

impl Baton for HttpBaton {
    fn open(&mut self, _: &Context) -> Fallible {
        (self.listener, self.port) = tcp_listener(4096)?;
        self.buf = vec![0u8; self.response.len().max(4096)];
        Ok(())
    }

    fn parent_side(&mut self) -> Fallible {
        sys::close_and_clear(&mut self.listener);
        Ok(())
    }

    /// Timed: socket, connect, write the request, read the response until
    /// the server closes (its length is checked), close.
    #[inline]
    fn ping(&mut self) -> Fallible {
        let fd = inet_socket(libc::SOCK_STREAM)?;
        let r = (|| {
            connect_loopback(fd, self.port)?;
            sys::write_all(fd, REQUEST)?;
            let got = read_to_eof(fd, &mut self.buf)?;
            if got != self.response.len() {
                return Err(BenchError(format!(
                    "http: response of {got} bytes, expected {}",
                    self.response.len()
                )));
            }
            Ok(())
        })();
        sys::close(fd);
        r
    }

    fn pong(&mut self) -> Fallible {
        let fd = accept(self.listener)?;
        // Read the request head (it is small: one read normally has it).
        let mut have = 0;
        let ok = loop {
            // SAFETY: reading into our buffer past what we have.
            let r = unsafe {
                libc::read(
                    fd,
                    self.buf[have..].as_mut_ptr() as *mut libc::c_void,
                    self.buf.len() - have,
                )
            };
            if r <= 0 {
                break false;
            }
            have += r as usize;
            if self.buf[..have].windows(4).any(|w| w == b"\r\n\r\n") {
                break self.buf.starts_with(b"GET /");
            }
            if have == self.buf.len() {
                break false;
            }
        };
        if ok {
            let _ = sys::write_all(fd, &self.response);
        }
        sys::close(fd);
        Ok(())
    }

    fn close(&mut self) {
        sys::close_and_clear(&mut self.listener);
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    HotPotato::case(
        HttpBaton {
            listener: -1,
            port: 0,
            response: response(p.num("size") as usize),
            buf: Vec::new(),
        },
        p,
    )
}

pub const FAMILY: Family = Family {
    params: &[
        Param::size("size", 0, 1 << 20)
            .measured(&["1k"])
            .help("document size in bytes"),
        placement::PARAM,
    ],
    parallel: Parallel::No(
        "a connection per request leaves a socket in TIME_WAIT for 60 s; several processes \
         fetching for a second each would exhaust ephemeral ports and measure that instead",
    ),
    ..Family::new(
        "lat_http",
        "comm_lat",
        "HTTP/1.0 GET of a small document from a local server (connection per request)",
        build,
    )
};

#[cfg(test)]
mod tests {
    use crate::testing::{assert_sane, measure_tiny};

    /// A document of no bytes: the response is the header alone.
    #[test]
    fn an_empty_document_is_fetched() {
        assert_sane(&measure_tiny("lat_http/size:0").unwrap()[0]);
    }

    #[test]
    fn response_has_the_document() {
        let r = super::response(10);
        assert!(r.starts_with(b"HTTP/1.0 200 OK\r\n"));
        assert!(r.ends_with(b"\r\n\r\nabcdefghij"));
    }
}
