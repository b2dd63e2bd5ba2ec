//! The web workload's client: one connection (a `Flow` of
//! `support::multiplex`) sending the request mix and reading each
//! response whole, counting its bytes for the bit rate.

use std::os::fd::RawFd;

use touchstone_harness::{BenchError, Fallible};

use super::{Web, DYNAMIC, DYNAMIC_SHARE, POST, STATIC, STATIC_SHARE};
use crate::support::http::{parse_response, Out};
use crate::support::memory::Rng;
use crate::support::multiplex::{nothing_yet_or_error, Flow};
use crate::support::sockets::{connect_loopback, inet_socket, send_all, set_nodelay};
use crate::support::sys::close;
use crate::support::zipf::unit;

/// Room for any request the client sends.
const REQ_CAP: usize = 512;
/// Read size for response bodies (discarded as they arrive).
const READ_CAP: usize = 64 * 1024;

/// One connection of a client: one request in flight; without keep-alive,
/// a new connection per request.
pub(super) struct WebFlow<'w> {
    w: &'w Web,
    fd: RawFd,
    rng: Rng,
    req: [u8; REQ_CAP],
    req_len: usize,
    buf: Vec<u8>,
    /// Bytes of the response head so far (until it is parsed).
    got: usize,
    /// Body bytes still to come once the head is parsed.
    remaining: Option<usize>,
    /// The server will close after this response.
    closing: bool,
    /// Bytes of the response in flight (head and body), once its head
    /// has been read: what the operation moved, for the bit rate.
    response_bytes: usize,
    /// The last `start` opened a new connection.
    reconnected: bool,
    ty: usize,
}

impl<'w> WebFlow<'w> {
    pub(super) fn new(w: &'w Web, seed: u64) -> WebFlow<'w> {
        WebFlow {
            w,
            fd: -1,
            rng: Rng::new(seed),
            req: [0; REQ_CAP],
            req_len: 0,
            buf: vec![0; READ_CAP],
            got: 0,
            remaining: None,
            closing: false,
            response_bytes: 0,
            reconnected: false,
            ty: STATIC,
        }
    }

    pub(super) fn connect(&mut self) -> Fallible {
        self.fd = inet_socket(libc::SOCK_STREAM)?;
        connect_loopback(self.fd, self.w.listener.port)?;
        set_nodelay(self.fd)
    }

    /// Choose the next request of the mix and write it into `req`.
    #[inline]
    fn compose(&mut self) {
        let u = unit(&mut self.rng);
        self.ty = if u < STATIC_SHARE {
            STATIC
        } else if u < STATIC_SHARE + DYNAMIC_SHARE {
            DYNAMIC
        } else {
            POST
        };
        let (dir, class, file) = self.w.chooser.choose(&mut self.rng);
        let user = self.rng.below(100_000) as u64;
        let close = if self.w.keep_alive {
            &b""[..]
        } else {
            b"Connection: close\r\n"
        };
        let mut o = Out::new(&mut self.req);
        match self.ty {
            POST => {
                // The form: who posted what about which file (~70 bytes).
                let mut form = [0u8; 128];
                let mut f = Out::new(&mut form);
                f.put(b"user=")
                    .num_padded(user, 5)
                    .put(b"&dir=")
                    .num_padded(dir as u64, 5)
                    .put(b"&class=")
                    .num(class as u64)
                    .put(b"&file=")
                    .num(file as u64)
                    .put(b"&note=touchstone+web+post");
                let flen = f.finish().unwrap_or(0);
                o.put(b"POST /post HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                    .put(b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ")
                    .num(flen as u64)
                    .put(b"\r\n")
                    .put(close)
                    .put(b"\r\n")
                    .put(&form[..flen]);
            }
            ty => {
                o.put(if ty == DYNAMIC {
                    b"GET /dyn/dir"
                } else {
                    b"GET /dir"
                })
                .num_padded(dir as u64, 5)
                .put(b"/class")
                .num(class as u64)
                .put(b"_")
                .num(file as u64);
                if ty == DYNAMIC {
                    o.put(b"?user=").num(user);
                }
                o.put(b" HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                    .put(close)
                    .put(b"\r\n");
            }
        }
        self.req_len = o.finish().expect("a request fits in REQ_CAP");
    }

    /// The response is whole: reset, and close the connection if either
    /// side said so.
    #[inline]
    fn complete(&mut self) -> usize {
        self.got = 0;
        self.remaining = None;
        if self.closing || !self.w.keep_alive {
            close(self.fd);
            self.fd = -1;
        }
        self.ty
    }
}

impl Flow for WebFlow<'_> {
    fn fd(&self) -> RawFd {
        self.fd
    }

    fn reconnected(&self) -> bool {
        self.reconnected
    }

    /// The response's bytes, as SPECweb99 measures a connection's bit rate
    /// (what the server sends; requests are a few hundred bytes).
    fn bytes(&self) -> u64 {
        self.response_bytes as u64
    }

    /// Compose the next request, connect if there is no connection, and
    /// send it whole (a multiplexed connection whose buffer is full waits
    /// for room; a request is far smaller than a socket's buffer).
    #[inline]
    fn start(&mut self) -> Fallible {
        self.compose();
        self.reconnected = self.fd < 0;
        if self.reconnected {
            self.connect()?;
        }
        send_all(self.fd, &self.req[..self.req_len]).map_err(|e| BenchError(format!("send: {e}")))
    }

    /// Read what has arrived: the head (checked: status 200), then the
    /// body, discarded, until Content-Length bytes have come.
    #[inline]
    fn readable(&mut self) -> Fallible<Option<usize>> {
        loop {
            let into = match self.remaining {
                None => self.got..READ_CAP,
                Some(rem) => 0..rem.min(READ_CAP),
            };
            // SAFETY: reading into our buffer's stated range.
            let r = unsafe {
                libc::read(
                    self.fd,
                    self.buf[into.clone()].as_mut_ptr() as *mut libc::c_void,
                    into.len(),
                )
            };
            if r == 0 {
                return Err(
                    "read: the server closed the connection before the response was whole".into(),
                );
            }
            if r < 0 {
                return nothing_yet_or_error("read");
            }
            let r = r as usize;
            match self.remaining {
                Some(rem) => self.remaining = Some(rem - r),
                None => {
                    self.got += r;
                    let head = match parse_response(&self.buf[..self.got]) {
                        Ok(Some(h)) => h,
                        Ok(None) if self.got < READ_CAP => continue,
                        Ok(None) => return Err("a response head larger than 64 KiB".into()),
                        Err(e) => return Err(BenchError(format!("bad response: {e}"))),
                    };
                    if head.status != 200 {
                        let text = String::from_utf8_lossy(&self.buf[head.head_len..self.got]);
                        return Err(BenchError(format!(
                            "the server answered {} to {}: {text}",
                            head.status,
                            String::from_utf8_lossy(&self.req[..self.req_len.min(60)])
                        )));
                    }
                    let body_so_far = self.got - head.head_len;
                    if body_so_far > head.content_length {
                        return Err("the server sent more than its Content-Length".into());
                    }
                    self.closing = !head.keep_alive;
                    self.response_bytes = head.head_len + head.content_length;
                    self.remaining = Some(head.content_length - body_so_far);
                }
            }
            if self.remaining == Some(0) {
                return Ok(Some(self.complete()));
            }
        }
    }
}

impl Drop for WebFlow<'_> {
    fn drop(&mut self) {
        close(self.fd);
    }
}
