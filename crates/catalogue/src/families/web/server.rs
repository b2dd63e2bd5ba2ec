//! The web workload's server: one process, a thread per CPU, each with its
//! own epoll set over the shared listener, serving the mapped file set,
//! generated pages and the POSTs' log (the design is in `web.rs`).

use std::io;
use std::os::fd::RawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use touchstone_harness::clock::now_ns;
use touchstone_harness::{BenchError, Fallible};

use crate::support::http::{self, parse_decimal, parse_request, Method, Out};
use crate::support::server_workers;
use crate::support::sockets::{self, set_nodelay};
use crate::support::sys::{self, check, close};
use crate::support::web_files::{file_index, MappedSet, CLASSES, FILES_PER_CLASS};

/// Largest request (head and body) a connection buffers.
const IN_CAP: usize = 8192;
/// Room for a response head and a generated page's prefix.
const OUT_CAP: usize = 1024;
const LISTENER_TOKEN: u64 = u64::MAX;
const INBOX_TOKEN: u64 = u64::MAX - 1;
const WAIT_MS: libc::c_int = 50;
/// The generated prefix of a dynamic page is padded to this length, so
/// the mean response size is known.
pub const DYNAMIC_PREFIX_BYTES: usize = 128;
/// The page answering a POST is padded to this length.
pub const POST_PAGE_BYTES: usize = 96;

/// The POSTs' log: appended to by every server thread (O_APPEND makes each
/// record's write atomic).
pub fn open_log(path: &Path) -> Fallible<RawFd> {
    let flags = libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT;
    sys::open_as("open the POST log", path, flags)
}

/// Serve the file set `set` on `listener` with `threads` threads until
/// `control(false)` says stop. `control(true)` is called once, when the
/// server can take connections (its answer is ignored); an error from
/// `control` ends the serving with that error.
pub fn serve_until(
    listener: RawFd,
    set: &MappedSet,
    log: RawFd,
    threads: usize,
    control: &mut dyn FnMut(bool) -> Fallible<bool>,
) -> Fallible {
    let stop = AtomicBool::new(false);
    let served = AtomicU64::new(0);
    let threads = threads.max(1);
    let mut inboxes = Vec::with_capacity(threads);
    for _ in 0..threads {
        // SAFETY: plain eventfd(2), counter 0; closed below.
        let efd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if efd < 0 {
            let e = crate::support::sys::errno("eventfd");
            inboxes.iter().for_each(|i: &Inbox| close(i.efd));
            return Err(e);
        }
        inboxes.push(Inbox {
            fds: Mutex::new(Vec::new()),
            efd,
        });
    }
    let shared = Shared {
        listener,
        set,
        log,
        stop: &stop,
        served: &served,
        inboxes: &inboxes,
        next: AtomicUsize::new(0),
    };
    let result = std::thread::scope(|s| {
        let mut handles = Vec::new();
        let mut started = Ok(());
        for i in 0..threads {
            let shared = &shared;
            match std::thread::Builder::new()
                .name(format!("web-server-{i}"))
                .spawn_scoped(s, move || worker(shared, i))
            {
                Ok(h) => handles.push(h),
                Err(e) => {
                    started = Err(BenchError(format!("cannot start a server thread: {e}")));
                    break;
                }
            }
        }
        let mut result = started.and_then(|_| control(true).map(|_| ()));
        while result.is_ok() && !handles.iter().any(|h| h.is_finished()) {
            match control(false) {
                Ok(true) => break,
                Ok(false) => std::thread::sleep(std::time::Duration::from_millis(10)),
                Err(e) => result = Err(e),
            }
        }
        stop.store(true, Ordering::Relaxed);
        server_workers::join_all(handles, result)
    });
    // Connections dealt to a thread that had stopped.
    let mut left = Vec::new();
    for inbox in &inboxes {
        inbox.take_into(&mut left);
        close(inbox.efd);
    }
    left.into_iter().for_each(close);
    result
}

/// Connections dealt to one server thread, and the eventfd that wakes it.
struct Inbox {
    fds: Mutex<Vec<RawFd>>,
    efd: RawFd,
}

impl Inbox {
    /// Move the connections dealt so far into `to` (both keep their
    /// capacity: no allocation once warm).
    fn take_into(&self, to: &mut Vec<RawFd>) {
        to.extend(self.fds.lock().unwrap_or_else(|p| p.into_inner()).drain(..));
    }
}

/// What every server thread shares.
struct Shared<'a> {
    listener: RawFd,
    set: &'a MappedSet,
    log: RawFd,
    stop: &'a AtomicBool,
    /// Requests answered (numbers the generated pages).
    served: &'a AtomicU64,
    /// One per thread.
    inboxes: &'a [Inbox],
    /// The thread the next accepted connection goes to.
    next: AtomicUsize,
}

/// One connection of a server thread. Slots are reused, buffers and all,
/// so a steady stream of connections allocates nothing.
struct Conn<'a> {
    fd: RawFd,
    inbuf: Vec<u8>,
    in_len: usize,
    /// The response head (and generated prefix) being sent…
    out: Vec<u8>,
    out_len: usize,
    out_off: usize,
    /// …followed by this body (a mapped file, or nothing).
    body: &'a [u8],
    body_off: usize,
    /// Close once the response is out (`Connection: close`, or an error).
    close_after: bool,
    /// Waiting for room to send (EPOLLOUT armed).
    writing: bool,
}

impl<'a> Conn<'a> {
    fn new() -> Conn<'a> {
        Conn {
            fd: -1,
            inbuf: vec![0; IN_CAP],
            in_len: 0,
            out: vec![0; OUT_CAP],
            out_len: 0,
            out_off: 0,
            body: &[],
            body_off: 0,
            close_after: false,
            writing: false,
        }
    }
}

/// One server thread: its own epoll set with the shared listener (woken
/// exclusively) and the connections it accepted.
fn worker(sh: &Shared<'_>, me: usize) -> Fallible {
    // SAFETY: a new epoll instance, closed below.
    let ep = check(
        unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) },
        "epoll_create1",
    )?;
    let mut conns: Vec<Conn<'_>> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    // Connections accepted or dealt to this thread, not yet adopted.
    let mut pending: Vec<RawFd> = Vec::with_capacity(64);
    let result = (|| {
        ctl(
            ep,
            libc::EPOLL_CTL_ADD,
            sh.listener,
            (libc::EPOLLIN | libc::EPOLLEXCLUSIVE) as u32,
            LISTENER_TOKEN,
        )?;
        ctl(
            ep,
            libc::EPOLL_CTL_ADD,
            sh.inboxes[me].efd,
            libc::EPOLLIN as u32,
            INBOX_TOKEN,
        )?;
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 64];
        while !sh.stop.load(Ordering::Relaxed) {
            let n = sockets::epoll_wait(ep, &mut events, WAIT_MS)?;
            for ev in &events[..n] {
                if ev.u64 == LISTENER_TOKEN {
                    accept_all(sh, me, &mut pending)?;
                    for fd in pending.drain(..) {
                        adopt(ep, fd, &mut conns, &mut free)?;
                    }
                    continue;
                }
                if ev.u64 == INBOX_TOKEN {
                    let mut count = 0u64;
                    // SAFETY: reading the eventfd's 8-byte counter (resets it).
                    unsafe {
                        libc::read(
                            sh.inboxes[me].efd,
                            &mut count as *mut u64 as *mut libc::c_void,
                            8,
                        )
                    };
                    sh.inboxes[me].take_into(&mut pending);
                    for fd in pending.drain(..) {
                        adopt(ep, fd, &mut conns, &mut free)?;
                    }
                    continue;
                }
                let slot = ev.u64 as usize;
                let c = &mut conns[slot];
                if c.fd < 0 {
                    continue;
                }
                let open = if c.writing {
                    flush(sh, ep, slot, c)
                } else {
                    on_readable(sh, ep, slot, c)
                };
                if !open {
                    close(c.fd);
                    c.fd = -1;
                    free.push(slot);
                }
            }
        }
        Ok(())
    })();
    for c in &conns {
        close(c.fd);
    }
    pending.into_iter().for_each(close);
    close(ep);
    result
}

fn ctl(ep: RawFd, op: libc::c_int, fd: RawFd, events: u32, token: u64) -> Fallible {
    let mut ev = libc::epoll_event { events, u64: token };
    // SAFETY: (re)registering our descriptor with our epoll instance.
    check(unsafe { libc::epoll_ctl(ep, op, fd, &mut ev) }, "epoll_ctl")?;
    Ok(())
}

/// Accept every queued connection and deal them round-robin over the
/// threads; those dealt to this thread go into `mine`.
fn accept_all(sh: &Shared<'_>, me: usize, mine: &mut Vec<RawFd>) -> Fallible {
    while let Some(fd) = sockets::try_accept_with(sh.listener, libc::SOCK_NONBLOCK)? {
        let to = sh.next.fetch_add(1, Ordering::Relaxed) % sh.inboxes.len();
        if to == me {
            mine.push(fd);
            continue;
        }
        let inbox = &sh.inboxes[to];
        inbox.fds.lock().unwrap_or_else(|p| p.into_inner()).push(fd);
        let one: u64 = 1;
        // SAFETY: adding 1 to the target thread's eventfd counter.
        unsafe { libc::write(inbox.efd, &one as *const u64 as *const libc::c_void, 8) };
    }
    Ok(())
}

/// Take connection `fd` into a free slot of this thread's set.
fn adopt<'a>(ep: RawFd, fd: RawFd, conns: &mut Vec<Conn<'a>>, free: &mut Vec<usize>) -> Fallible {
    if let Err(e) = set_nodelay(fd) {
        close(fd);
        return Err(e);
    }
    let slot = free.pop().unwrap_or_else(|| {
        conns.push(Conn::new());
        conns.len() - 1
    });
    let c = &mut conns[slot];
    c.fd = fd;
    c.in_len = 0;
    c.writing = false;
    c.close_after = false;
    ctl(
        ep,
        libc::EPOLL_CTL_ADD,
        fd,
        libc::EPOLLIN as u32,
        slot as u64,
    )
    .inspect_err(|_| {
        close(fd);
        c.fd = -1;
        free.push(slot);
    })
}

/// Input on a connection: read it and answer every whole request in it.
/// False: the connection is over (closed by the client, or by us).
fn on_readable<'a>(sh: &Shared<'a>, ep: RawFd, slot: usize, c: &mut Conn<'a>) -> bool {
    // SAFETY: reading into the unfilled rest of the connection's buffer.
    let r = unsafe {
        libc::read(
            c.fd,
            c.inbuf[c.in_len..].as_mut_ptr() as *mut libc::c_void,
            IN_CAP - c.in_len,
        )
    };
    if r == 0 {
        return false;
    }
    if r < 0 {
        let e = io::Error::last_os_error();
        return matches!(
            e.kind(),
            io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
        );
    }
    c.in_len += r as usize;
    answer_whole_requests(sh, ep, slot, c)
}

/// Answer the requests buffered on `c`, one response at a time: a
/// response that cannot go out at once is finished on EPOLLOUT first.
fn answer_whole_requests<'a>(sh: &Shared<'a>, ep: RawFd, slot: usize, c: &mut Conn<'a>) -> bool {
    loop {
        let req = match parse_request(&c.inbuf[..c.in_len]) {
            Ok(Some(req)) if req.len() > IN_CAP => {
                error_response(c, 413, "request too large");
                req.len()
            }
            Ok(Some(req)) if req.len() > c.in_len => return true,
            Ok(Some(req)) => {
                respond(sh, c, &req);
                req.len()
            }
            Ok(None) if c.in_len == IN_CAP => {
                error_response(c, 431, "request head too large");
                c.in_len
            }
            Ok(None) => return true,
            Err(e) => {
                error_response(c, 400, e.0);
                c.in_len
            }
        };
        // The request is consumed; a pipelined one behind it stays.
        let used = req.min(c.in_len);
        c.inbuf.copy_within(used..c.in_len, 0);
        c.in_len -= used;
        if !send_response(c) {
            return false;
        }
        if c.writing {
            // Finish this one on EPOLLOUT before reading or answering more.
            return ctl(
                ep,
                libc::EPOLL_CTL_MOD,
                c.fd,
                libc::EPOLLOUT as u32,
                slot as u64,
            )
            .is_ok();
        }
        if c.close_after {
            return false;
        }
        if c.in_len == 0 {
            return true;
        }
    }
}

/// Room to send again: finish the response, then go back to reading (and
/// answer any request already buffered).
fn flush<'a>(sh: &Shared<'a>, ep: RawFd, slot: usize, c: &mut Conn<'a>) -> bool {
    if !send_response(c) {
        return false;
    }
    if c.writing {
        return true;
    }
    if c.close_after {
        return false;
    }
    if ctl(
        ep,
        libc::EPOLL_CTL_MOD,
        c.fd,
        libc::EPOLLIN as u32,
        slot as u64,
    )
    .is_err()
    {
        return false;
    }
    c.in_len == 0 || answer_whole_requests(sh, ep, slot, c)
}

/// Send what is left of the response in one `sendmsg` of head and body;
/// `c.writing` when the socket took only part. False: the client is gone.
fn send_response(c: &mut Conn<'_>) -> bool {
    loop {
        let head = &c.out[c.out_off..c.out_len];
        let body = &c.body[c.body_off..];
        if head.is_empty() && body.is_empty() {
            c.writing = false;
            return true;
        }
        let mut iov = [
            libc::iovec {
                iov_base: head.as_ptr() as *mut libc::c_void,
                iov_len: head.len(),
            },
            libc::iovec {
                iov_base: body.as_ptr() as *mut libc::c_void,
                iov_len: body.len(),
            },
        ];
        // SAFETY: a zeroed msghdr is valid; it points at our two iovecs.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = iov.as_mut_ptr();
        msg.msg_iovlen = 2;
        // SAFETY: sending from live buffers; no SIGPIPE if the client left.
        let r = unsafe { libc::sendmsg(c.fd, &msg, libc::MSG_NOSIGNAL) };
        if r < 0 {
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => {
                    c.writing = true;
                    return true;
                }
                _ => return false,
            }
        }
        let mut sent = r as usize;
        let from_head = sent.min(head.len());
        c.out_off += from_head;
        sent -= from_head;
        c.body_off += sent;
    }
}

/// Begin a response: the head (status, length, connection) into `c.out`.
fn begin_response(
    c: &mut Conn<'_>,
    status: u16,
    reason: &str,
    ctype: &str,
    length: usize,
) -> usize {
    let mut o = Out::new(&mut c.out);
    o.put(b"HTTP/1.1 ")
        .num(status as u64)
        .put(b" ")
        .put(reason.as_bytes())
        .put(b"\r\nServer: touchstone\r\nContent-Type: ")
        .put(ctype.as_bytes())
        .put(b"\r\nContent-Length: ")
        .num(length as u64)
        .put(b"\r\n");
    if c.close_after {
        o.put(b"Connection: close\r\n");
    }
    o.put(b"\r\n");
    let n = o.finish().expect("a response head fits in OUT_CAP");
    c.out_len = n;
    c.out_off = 0;
    c.body = &[];
    c.body_off = 0;
    n
}

/// An error page; the connection closes after it.
fn error_response(c: &mut Conn<'_>, status: u16, why: &str) {
    c.close_after = true;
    let why = &why.as_bytes()[..why.len().min(200)];
    let n = begin_response(c, status, "Error", "text/plain", why.len() + 1);
    c.out[n..n + why.len()].copy_from_slice(why);
    c.out[n + why.len()] = b'\n';
    c.out_len = n + why.len() + 1;
}

/// The response to a whole request at the start of `c.inbuf`.
fn respond<'a>(sh: &Shared<'a>, c: &mut Conn<'a>, req: &http::Request) {
    c.close_after = !req.keep_alive;
    let target = &c.inbuf[req.target.clone()];
    let (path, query) = match target.iter().position(|&b| b == b'?') {
        Some(q) => (&target[..q], &target[q + 1..]),
        None => (target, &b""[..]),
    };
    let n = sh.served.fetch_add(1, Ordering::Relaxed);
    match (req.method, path) {
        (Method::Post, b"/post") => {
            let body = &c.inbuf[req.head_len..req.len()];
            if append_log(sh.log, body).is_err() {
                return error_response(c, 500, "cannot append to the log");
            }
            let mut page = [b' '; POST_PAGE_BYTES];
            let mut o = Out::new(&mut page);
            o.put(b"<html><body>posted ")
                .num(body.len() as u64)
                .put(b" bytes, request ")
                .num(n)
                .put(b"</body></html>");
            page[POST_PAGE_BYTES - 1] = b'\n';
            let h = begin_response(c, 200, "OK", "text/html", POST_PAGE_BYTES);
            c.out[h..h + POST_PAGE_BYTES].copy_from_slice(&page);
            c.out_len = h + POST_PAGE_BYTES;
        }
        (Method::Get, _) if path.starts_with(b"/dyn/") => match file_of(sh.set, &path[4..]) {
            Some(file) => {
                let user = query
                    .strip_prefix(b"user=")
                    .and_then(parse_decimal)
                    .unwrap_or(0);
                let mut prefix = [b' '; DYNAMIC_PREFIX_BYTES];
                let mut o = Out::new(&mut prefix);
                o.put(b"<html><body><p>touchstone page for user ")
                    .num(user)
                    .put(b", request ")
                    .num(n)
                    .put(b"</p><pre>");
                prefix[DYNAMIC_PREFIX_BYTES - 1] = b'\n';
                let h =
                    begin_response(c, 200, "OK", "text/html", DYNAMIC_PREFIX_BYTES + file.len());
                c.out[h..h + DYNAMIC_PREFIX_BYTES].copy_from_slice(&prefix);
                c.out_len = h + DYNAMIC_PREFIX_BYTES;
                c.body = file;
            }
            None => error_response(c, 404, "no such file"),
        },
        (Method::Get, _) => match file_of(sh.set, path) {
            Some(file) => {
                begin_response(c, 200, "OK", "application/octet-stream", file.len());
                c.body = file;
            }
            None => error_response(c, 404, "no such file"),
        },
        _ => error_response(c, 405, "method not allowed"),
    }
}

/// The file named by a path `/dirNNNNN/classC_F`, if the set has it.
fn file_of<'a>(set: &'a MappedSet, path: &[u8]) -> Option<&'a [u8]> {
    let rest = path.strip_prefix(b"/dir")?;
    let slash = rest.iter().position(|&b| b == b'/')?;
    let dir = parse_decimal(&rest[..slash])? as usize;
    let rest = rest[slash + 1..].strip_prefix(b"class")?;
    let [c, b'_', f] = *rest else {
        return None;
    };
    let (class, file) = (
        (c.wrapping_sub(b'0')) as usize,
        (f.wrapping_sub(b'0')) as usize,
    );
    (dir < set.dirs && class < CLASSES && file < FILES_PER_CLASS)
        .then(|| set.file(file_index(dir, class, file)))
}

/// Append one record (time, the form, a newline) to the log in one write.
fn append_log(log: RawFd, form: &[u8]) -> io::Result<()> {
    let mut stamp = [0u8; 24];
    let mut o = Out::new(&mut stamp);
    o.num(now_ns()).put(b" ");
    let n = o.finish().unwrap_or(0);
    let iov = [
        libc::iovec {
            iov_base: stamp.as_ptr() as *mut libc::c_void,
            iov_len: n,
        },
        libc::iovec {
            iov_base: form.as_ptr() as *mut libc::c_void,
            iov_len: form.len(),
        },
        libc::iovec {
            iov_base: b"\n".as_ptr() as *mut libc::c_void,
            iov_len: 1,
        },
    ];
    // SAFETY: gathering from live buffers into our log.
    if unsafe { libc::writev(log, iov.as_ptr(), 3) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
