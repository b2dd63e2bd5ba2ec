//! web: a SPECweb99-like web-serving workload (seed 003's Figures 7–10) on
//! the load-curve engine. An HTTP/1.1 server inside touchstone serves a
//! generated file set (`support::web_files`: SPECweb99's four size classes,
//! nine files per class per directory, class mix 35/50/14/1 %, Zipf
//! popularity of directories and of files within a class) from the
//! trial's scratch directory to L connections on 127.0.0.1. The request
//! mix, after SPECweb99's: 70 % static GETs of a file; 25 % dynamic GETs,
//! a page generated per request (a per-request header with the user and a
//! counter, then the file); 5 % POSTs, whose form is appended to a log in
//! the scratch directory and answered with a generated page. One histogram
//! per operation type: static, dynamic, post.
//!
//! The server is one process with one thread per CPU of the point, each
//! with its own epoll set, all sharing the listener (EPOLLEXCLUSIVE wakes
//! one of them per new connection): nginx's worker-per-CPU design. The
//! thread that accepts deals connections round-robin to every thread
//! (through a per-thread inbox and eventfd), so a burst of connections
//! accepted by one thread does not leave the others idle. Files
//! are mapped once and each response goes out in one `sendmsg` of its head
//! and the mapped body, so the server costs little per byte and a load
//! generator measured against it is not hidden behind a slow server.
//!
//! Clients: `loop:closed` (default, SPECweb99's model) — one client process
//! per CPU multiplexes its share of the L connections with epoll
//! (`support::multiplex`), each connection sending its next request when
//! the last response is whole. `loop:open` — a target `rate` of requests/s
//! over all connections, one blocking client process per connection on a
//! fixed schedule, latency measured from each request's intended send time
//! (wrk2's correction for coordinated omission; the engine's open-loop
//! pacing). `keepalive:off` opens a connection per request (the server
//! closes it after the response, so TIME_WAIT lands on the server side and
//! the client's ports are not exhausted; loopback reuses TIME_WAIT ports
//! with the kernel's default `tcp_tw_reuse = 2`).
//!
//! Timed (by the engine, per request): sending the request (and, without
//! keep-alive, the connect) to the last byte of the response body.
//!
//! Bit rate per connection (SPECweb99's conformance measure): every client
//! counts the bytes of each response it received in the window (head and
//! body, `Client::bytes`), so a point carries the bytes per second really
//! served; reports divide by L. `mean_response_bytes` is what the mix
//! should give, a check on the file set and the sampler.

use std::io;
use std::os::fd::RawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use touchstone_harness::clock::now_ns;
use touchstone_harness::workload::{
    check_open_files, loads_from, Client, ClientContext, ClientKind, Pacing, ServerContext,
    ServerLink, TrialContext, Workload,
};
use touchstone_harness::{BenchError, Fallible};

use crate::family::{Family, RunContext};
use crate::params::{Kind, Param, Point};
use crate::support::http::{self, parse_decimal, parse_request, parse_response, Method, Out};
use crate::support::memory::Rng;
use crate::support::multiplex::{share, Flow, Multiplexed};
use crate::support::sockets::{self, connect_loopback, inet_socket, send_all, set_nodelay};
use crate::support::sys::{check, close, cstring};
use crate::support::web_files::{
    self, check_fits, file_index, memory_available, FileChooser, MappedSet, CLASSES,
    FILES_PER_CLASS, MAX_DIRS,
};
use crate::support::zipf::unit;

pub const NAME: &str = "web";
pub const SUMMARY: &str =
    "SPECweb99-like web serving: static, dynamic and POST requests over N HTTP/1.1 connections on 127.0.0.1";
pub const OPERATION: &str = "request";
pub const OP_TYPES: &[&str] = &["static", "dynamic", "post"];
pub const STATIC: usize = 0;
pub const DYNAMIC: usize = 1;
pub const POST: usize = 2;
/// Shares of the mix (SPECweb99: 70 % static; of the dynamic 30 %, POSTs
/// are about one in six).
pub const STATIC_SHARE: f64 = 0.70;
pub const DYNAMIC_SHARE: f64 = 0.25;
#[cfg(test)]
pub const POST_SHARE: f64 = 0.05;
/// The Zipf exponent of directory and file popularity (SPECweb99: 1).
pub const ZIPF_EXPONENT: f64 = 1.0;
/// The most connections (one descriptor each in the server).
pub const MAX_LOAD: u32 = 1024;
/// Where the file set lies under the trial's scratch directory, and the
/// POSTs' log.
pub const SET_DIR: &str = "webroot";
pub const POST_LOG: &str = "post.log";

pub const KEEPALIVE: Param = Param {
    name: "keepalive",
    help:
        "on: connections carry many requests (HTTP/1.1 keep-alive); off: one connection per request",
    kind: Kind::Choice(&["on", "off"]),
    default: &["on"],
    quick: &[],
    positional: false,
};

pub const LOOP: Param = Param {
    name: "loop",
    help: "closed: each connection sends its next request when the last completes (SPECweb99); open: requests at `rate`, latency from each one's intended send time (wrk2)",
    kind: Kind::Choice(&["closed", "open"]),
    default: &["closed"],
    quick: &[],
    positional: false,
};

pub const RATE: Param = Param {
    name: "rate",
    help: "loop:open only: requests per second over all connections together",
    kind: Kind::Int {
        min: 1,
        max: 10_000_000,
    },
    default: &["2000"],
    quick: &[],
    positional: false,
};

pub const DIRS: Param = Param {
    name: "dirs",
    help: "directories of the file set, about 5.1 MB each (SPECweb99 scales them with connections); refused when over half the memory available",
    kind: Kind::Int {
        min: 1,
        max: MAX_DIRS as u64,
    },
    default: &["10"],
    quick: &["2"],
    positional: false,
};

pub const PARAMS: &[Param] = &[KEEPALIVE, LOOP, RATE, DIRS];

/// Build the workload from a point of its parameters; a file set that does
/// not fit in memory is refused here, before anything runs.
pub fn build(p: &Point, ctx: &RunContext) -> Result<Box<dyn Workload>, String> {
    let dirs = p.num(DIRS.name) as usize;
    check_fits(dirs, memory_available()?)?;
    let rate = match p.text(LOOP.name) {
        "open" => Some(p.num(RATE.name) as f64),
        _ => None,
    };
    let mut w = Web::new(dirs, p.text(KEEPALIVE.name) == "on", rate)?;
    w.quick = ctx.quick;
    Ok(Box::new(w))
}

/// The workload: parameters, the request mix, and the listener of the
/// current trial.
pub struct Web {
    pub dirs: usize,
    pub keep_alive: bool,
    /// Open loop at this many requests/s; None: closed loop.
    pub rate: Option<f64>,
    /// A quick run: two loads only (`default_loads`).
    pub quick: bool,
    chooser: FileChooser,
    listener: RawFd,
    port: u16,
}

impl Web {
    pub fn new(dirs: usize, keep_alive: bool, rate: Option<f64>) -> Result<Web, String> {
        if let Some(r) = rate {
            if !(r.is_finite() && r > 0.0) {
                return Err(format!(
                    "rate:{r}: an open-loop rate must be above 0 requests/s"
                ));
            }
        }
        Ok(Web {
            dirs,
            keep_alive,
            rate,
            quick: false,
            chooser: FileChooser::new(dirs, ZIPF_EXPONENT)?,
            listener: -1,
            port: 0,
        })
    }

    /// The expected bytes of one response body over the mix: the bit rate
    /// per connection is throughput × this × 8 / load.
    #[cfg(test)]
    pub fn mean_response_bytes(&self) -> f64 {
        let file = self.chooser.mean_bytes();
        STATIC_SHARE * file
            + DYNAMIC_SHARE * (file + DYNAMIC_PREFIX_BYTES as f64)
            + POST_SHARE * POST_PAGE_BYTES as f64
    }
}

impl Workload for Web {
    fn client_kind(&self) -> ClientKind {
        ClientKind::Processes
    }
    fn op_types(&self) -> &[&str] {
        OP_TYPES
    }
    fn max_load(&self) -> Option<u32> {
        Some(MAX_LOAD)
    }
    /// Quick: a connection per CPU and four per CPU — the server busy,
    /// then queueing — in a few seconds. Otherwise the engine's ladder.
    fn default_loads(&self, usable: usize) -> Vec<u32> {
        loads_from(self.quick, 1, usable, Some(MAX_LOAD))
    }
    /// Closed loop: one client process per CPU, each multiplexing its
    /// connections; open loop: one per connection, each on its schedule.
    fn clients(&self, load: u32, cpus: usize) -> u32 {
        match self.rate {
            None => load.min(cpus as u32),
            Some(_) => load,
        }
    }
    fn pacing(&self) -> Option<Pacing> {
        self.rate.map(|rate| Pacing::Open { rate })
    }
    /// Responses range from 100 bytes to 900 KB: the bit rate comes from
    /// the bytes each response really had.
    fn counts_bytes(&self) -> bool {
        true
    }
    /// The server process holds every connection, the listener, one epoll
    /// set per thread, the log and the engine's few.
    fn check_load(&self, load: u32) -> Result<(), String> {
        check_open_files(load, load as u64 + 64, "the web server process")
    }

    /// The file set (written, so it is in the page cache) and the listener.
    fn prepare(&mut self, ctx: &TrialContext) -> Fallible {
        let root = ctx.scratch.join(SET_DIR);
        std::fs::create_dir(&root).map_err(|e| BenchError(format!("{}: {e}", root.display())))?;
        web_files::generate(&root, self.dirs)?;
        let (fd, port) = listener(ctx.load)?;
        self.listener = fd;
        self.port = port;
        Ok(())
    }

    fn release(&mut self) {
        close(self.listener);
        self.listener = -1;
    }

    fn has_server(&self) -> bool {
        true
    }

    fn serve(&self, ctx: &ServerContext, link: &mut dyn ServerLink) -> Fallible {
        let set = MappedSet::open(&ctx.scratch.join(SET_DIR), self.dirs)?;
        let log = open_log(&ctx.scratch.join(POST_LOG))?;
        let result = serve_until(self.listener, &set, log, ctx.cpus.len(), &mut |first| {
            if first {
                link.ready().map(|_| false)
            } else {
                Ok(link.should_stop())
            }
        });
        close(log);
        result
    }

    fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        // The listener is the server's; this process's copy is not needed.
        close(self.listener);
        let mut flows = Vec::new();
        for conn in share(ctx.load, ctx.clients, ctx.client) {
            let seed = ctx.seed ^ (conn as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let mut f = WebFlow::new(self, seed);
            if self.keep_alive {
                f.connect()?;
            }
            flows.push(f);
        }
        Ok(Box::new(Multiplexed::new(flows)?))
    }
}

/// A listening socket on 127.0.0.1 (port chosen by the kernel),
/// non-blocking for the server's epoll; (descriptor, port).
pub fn listener(load: u32) -> Fallible<(RawFd, u16)> {
    // Without keep-alive every request is a connection: a deep queue.
    sockets::nonblocking_listener((load * 4).clamp(1024, 4096) as libc::c_int)
}

/// The POSTs' log: appended to by every server thread (O_APPEND makes each
/// record's write atomic).
pub fn open_log(path: &Path) -> Fallible<RawFd> {
    let c = cstring(path)?;
    // SAFETY: opening a file by a valid C string.
    check(
        unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_CLOEXEC,
                0o600,
            )
        },
        "open the POST log",
    )
}

// ------------------------------------------------ the server

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
        for h in handles {
            let r = h
                .join()
                .unwrap_or_else(|_| Err(BenchError("a server thread panicked".into())));
            if result.is_ok() {
                result = r;
            }
        }
        result
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
            // SAFETY: a valid events array of the stated length.
            let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), 64, WAIT_MS) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(BenchError(format!("epoll_wait: {e}")));
            }
            for ev in &events[..n as usize] {
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

// ------------------------------------------------ the client

/// Room for any request the client sends.
const REQ_CAP: usize = 512;
/// Read size for response bodies (discarded as they arrive).
const READ_CAP: usize = 64 * 1024;

/// One connection of a client: one request in flight; without keep-alive,
/// a new connection per request.
struct WebFlow<'w> {
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
    fn new(w: &'w Web, seed: u64) -> WebFlow<'w> {
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

    fn connect(&mut self) -> Fallible {
        self.fd = inet_socket(libc::SOCK_STREAM)?;
        connect_loopback(self.fd, self.w.port)?;
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
                let e = io::Error::last_os_error();
                return match e.kind() {
                    io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock => Ok(None),
                    _ => Err(BenchError(format!("read: {e}"))),
                };
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

/// A workload (measured as a load curve over the spec's `load` ladder and
/// `--cpus`), in the report group of system workloads.
pub const FAMILY: Family = Family {
    params: PARAMS,
    ..Family::workload(NAME, "workload", SUMMARY, OPERATION, build)
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::web_files::{content_byte, file_size, set_bytes};
    use crate::testing::{reaped, short_trial};
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::path::PathBuf;
    use std::time::Duration;
    use touchstone_harness::workload::{
        cpu::usable_cpus, run_trial, validate, SweepPlan, TrialOutcome, TrialPlan,
    };

    fn tempdir(tag: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("touchstone-web-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir(&p).unwrap();
        p
    }

    /// Send `request` and read one response: its head and body.
    fn exchange(s: &mut TcpStream, request: &[u8]) -> (http::ResponseHead, Vec<u8>) {
        s.write_all(request).unwrap();
        let mut buf = Vec::new();
        let mut chunk = [0u8; 65536];
        loop {
            if let Some(h) = parse_response(&buf).unwrap() {
                if buf.len() >= h.head_len + h.content_length {
                    assert_eq!(buf.len(), h.head_len + h.content_length, "no extra bytes");
                    return (h.clone(), buf[h.head_len..].to_vec());
                }
            }
            let n = s.read(&mut chunk).unwrap();
            assert!(
                n > 0,
                "closed mid-response: {}",
                String::from_utf8_lossy(&buf)
            );
            buf.extend_from_slice(&chunk[..n]);
        }
    }

    fn closed_by_server(s: &mut TcpStream) -> bool {
        let mut b = [0u8; 1];
        matches!(s.read(&mut b), Ok(0))
    }

    #[test]
    fn the_server_answers_a_plain_http_client() {
        let dir = tempdir("serve");
        let root = dir.join(SET_DIR);
        std::fs::create_dir(&root).unwrap();
        web_files::generate(&root, 2).unwrap();
        let set = MappedSet::open(&root, 2).unwrap();
        let log_path = dir.join(POST_LOG);
        let log = open_log(&log_path).unwrap();
        let (lfd, port) = listener(4).unwrap();
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let server = s.spawn(|| {
                serve_until(lfd, &set, log, 2, &mut |_| Ok(stop.load(Ordering::Relaxed)))
            });
            let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            // A static file, whole and byte for byte.
            let (h, body) = exchange(
                &mut c,
                b"GET /dir00001/class2_3 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            );
            let i = file_index(1, 2, 3);
            assert_eq!((h.status, h.content_length), (200, file_size(2, 3)));
            assert!(h.keep_alive);
            assert!(body
                .iter()
                .enumerate()
                .all(|(o, &b)| b == content_byte(i, o)));
            // A dynamic page on the same connection: the generated prefix
            // names the user, then the file.
            let (h, body) = exchange(
                &mut c,
                b"GET /dyn/dir00000/class0_8?user=4242 HTTP/1.1\r\nHost: x\r\n\r\n",
            );
            assert_eq!(h.status, 200);
            assert_eq!(h.content_length, DYNAMIC_PREFIX_BYTES + file_size(0, 8));
            let prefix = String::from_utf8_lossy(&body[..DYNAMIC_PREFIX_BYTES]);
            assert!(
                prefix.starts_with("<html>") && prefix.contains("user 4242"),
                "{prefix}"
            );
            let j = file_index(0, 0, 8);
            assert!(body[DYNAMIC_PREFIX_BYTES..]
                .iter()
                .enumerate()
                .all(|(o, &b)| b == content_byte(j, o)));
            // A POST, appended to the log.
            let form = b"user=00007&note=hello";
            let mut req = format!(
                "POST /post HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
                form.len()
            )
            .into_bytes();
            req.extend_from_slice(form);
            let (h, body) = exchange(&mut c, &req);
            assert_eq!((h.status, body.len()), (200, POST_PAGE_BYTES));
            assert!(String::from_utf8_lossy(&body).contains("posted 21 bytes"));
            let logged = std::fs::read_to_string(&log_path).unwrap();
            assert!(logged.ends_with(" user=00007&note=hello\n"), "{logged}");
            // Unknown files are 404, and the connection closes after it.
            let (h, _) = exchange(&mut c, b"GET /dir00002/class0_0 HTTP/1.1\r\n\r\n");
            assert_eq!(h.status, 404);
            assert!(!h.keep_alive && closed_by_server(&mut c));
            // Without keep-alive: the response says close, and the server
            // closes (HTTP/1.1 with Connection: close, and HTTP/1.0).
            for req in [
                &b"GET /dir00000/class3_0 HTTP/1.1\r\nConnection: close\r\n\r\n"[..],
                b"GET /dir00000/class1_1 HTTP/1.0\r\n\r\n",
            ] {
                let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
                c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                let (h, body) = exchange(&mut c, req);
                assert_eq!(h.status, 200);
                assert_eq!(body.len(), h.content_length);
                assert!(!h.keep_alive && closed_by_server(&mut c));
            }
            // Garbage is a 400.
            let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
            let (h, _) = exchange(&mut c, b"BREW coffee\r\n\r\n");
            assert_eq!(h.status, 400);
            stop.store(true, Ordering::Relaxed);
            server.join().unwrap().unwrap();
        });
        close(lfd);
        close(log);
        drop(set);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The web workload, remembering each trial's scratch directory.
    struct Recording(Web, Vec<PathBuf>);
    impl Workload for Recording {
        fn op_types(&self) -> &[&str] {
            self.0.op_types()
        }
        fn clients(&self, load: u32, cpus: usize) -> u32 {
            self.0.clients(load, cpus)
        }
        fn pacing(&self) -> Option<Pacing> {
            self.0.pacing()
        }
        fn prepare(&mut self, ctx: &TrialContext) -> Fallible {
            self.1.push(ctx.scratch.clone());
            self.0.prepare(ctx)
        }
        fn release(&mut self) {
            self.0.release()
        }
        fn has_server(&self) -> bool {
            true
        }
        fn serve(&self, ctx: &ServerContext, link: &mut dyn ServerLink) -> Fallible {
            self.0.serve(ctx, link)
        }
        fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
            self.0.client(ctx)
        }
    }

    fn short() -> TrialPlan {
        TrialPlan {
            window_ns: 200_000_000,
            ..short_trial()
        }
    }

    fn assert_sound(o: &TrialOutcome, w: &Recording, clients: usize) {
        assert_eq!(o.clients.len(), clients);
        assert!(o.throughput > 0.0 && o.ops > 0);
        assert!(
            o.every_client_ran_through(),
            "{:?} {:?}",
            o.window,
            o.clients
        );
        let l = o.latency();
        assert_eq!(l.len(), o.ops);
        assert!(l.value_at_quantile(0.5) <= l.value_at_quantile(0.99));
        assert!(l.value_at_quantile(0.99) <= l.max());
        assert_eq!(o.histograms.len(), 3);
        // The bytes served: every response is at least a small file's
        // head and body, at most the largest class's file and a head.
        assert!(w.0.counts_bytes());
        assert!(
            o.bytes >= 100 * o.ops && o.bytes <= 1_000_000 * o.ops,
            "{} bytes in {} responses",
            o.bytes,
            o.ops
        );
        for &pid in &o.pids {
            assert!(reaped(pid), "process {pid} outlived the trial");
        }
        assert_eq!(w.0.listener, -1, "the listener is released");
        for scratch in &w.1 {
            assert!(
                !scratch.exists(),
                "{} outlived the trial",
                scratch.display()
            );
        }
    }

    #[test]
    fn closed_loop_runs_with_and_without_keep_alive() {
        let cpus = usable_cpus().unwrap();
        for keep_alive in [true, false] {
            let mut w = Recording(Web::new(2, keep_alive, None).unwrap(), Vec::new());
            let load = 5;
            let o = run_trial(&mut w, load, &cpus, &short(), 0)
                .unwrap_or_else(|e| panic!("keepalive {keep_alive}: {e}"));
            assert_sound(&o, &w, load.min(cpus.len() as u32) as usize);
            // Every operation type of the mix occurred (5 % POSTs among
            // hundreds of requests at the least).
            for (ty, h) in o.histograms.iter().enumerate() {
                assert!(!h.is_empty(), "keepalive {keep_alive}: no {}", OP_TYPES[ty]);
            }
        }
    }

    #[test]
    fn open_loop_runs_one_client_per_connection_at_the_rate() {
        let cpus = usable_cpus().unwrap();
        let mut w = Recording(Web::new(2, true, Some(500.0)).unwrap(), Vec::new());
        assert_eq!(w.clients(4, 2), 4);
        assert_eq!(w.pacing(), Some(Pacing::Open { rate: 500.0 }));
        let o = run_trial(&mut w, 4, &cpus, &short(), 0).unwrap();
        assert_sound(&o, &w, 4);
        // The schedule, not the server's speed, sets the pace: far below
        // what a closed loop reaches, and never much above the rate.
        assert!(o.throughput < 500.0 * 1.5, "{}", o.throughput);
        // The engine accepts it for a sweep: its own pacing is open loop.
        assert!(validate(&w, &SweepPlan::quick(), cpus.len()).is_ok());
    }

    #[test]
    fn bad_input_is_refused_before_anything_runs() {
        let e = RATE.parse("0").unwrap_err();
        assert!(e.contains("rate"), "{e}");
        assert!(Web::new(2, true, Some(0.0)).is_err());
        assert!(DIRS.parse("0").is_err() && DIRS.parse("10001").is_err());
        assert!(KEEPALIVE.parse("maybe").is_err() && LOOP.parse("half").is_err());
        let point = |dirs: &str, lp: &str| {
            Point(vec![
                (KEEPALIVE.name, KEEPALIVE.parse("off").unwrap()),
                (LOOP.name, LOOP.parse(lp).unwrap()),
                (RATE.name, RATE.parse("300").unwrap()),
                (DIRS.name, DIRS.parse(dirs).unwrap()),
            ])
        };
        let w = FAMILY
            .make_workload(&point("2", "open"), &RunContext::default())
            .unwrap();
        assert_eq!(w.pacing(), Some(Pacing::Open { rate: 300.0 }));
        let w = FAMILY
            .make_workload(&point("2", "closed"), &RunContext::default())
            .unwrap();
        assert_eq!((w.pacing(), w.clients(16, 2)), (None, 2));
        // A set larger than the memory it can have is refused when built.
        let huge = MAX_DIRS.to_string();
        if set_bytes(MAX_DIRS) > memory_available().unwrap() / 2 {
            let e = FAMILY
                .make_workload(&point(&huge, "closed"), &RunContext::default())
                .err()
                .unwrap();
            assert!(e.contains("memory available"), "{e}");
        }
    }

    #[test]
    fn the_mean_response_follows_the_mix() {
        let w = Web::new(10, true, None).unwrap();
        let file = w.chooser.mean_bytes();
        let mean = w.mean_response_bytes();
        assert!(mean > 0.9 * file && mean < file + DYNAMIC_PREFIX_BYTES as f64);
    }
}
