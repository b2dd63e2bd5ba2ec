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

use std::os::fd::RawFd;

use touchstone_harness::workload::{
    check_open_files, loads_from, Client, ClientContext, ClientKind, Pacing, ServerContext,
    ServerLink, TrialContext, Workload,
};
use touchstone_harness::{BenchError, Fallible};

use crate::family::{Family, RunContext};
use crate::params::{Param, Point};
use crate::support::multiplex::{share, Multiplexed};
use crate::support::sockets::{self, TrialListener};
use crate::support::sys::close;
use crate::support::web_files::{
    self, check_fits, memory_available, FileChooser, MappedSet, MAX_DIRS,
};
use client::WebFlow;
#[cfg(test)]
use server::{DYNAMIC_PREFIX_BYTES, POST_PAGE_BYTES};

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

pub const KEEPALIVE: Param = Param::choice("keepalive", &["on", "off"])
    .measured(&["on"])
    .help("on: connections carry many requests (HTTP/1.1 keep-alive); off: one connection per request");

pub const LOOP: Param = Param::choice("loop", &["closed", "open"])
    .measured(&["closed"])
    .help("closed: each connection sends its next request when the last completes (SPECweb99); open: requests at `rate`, latency from each one's intended send time (wrk2)");

pub const RATE: Param = Param::int("rate", 1, 10_000_000)
    .measured(&["2000"])
    .help("loop:open only: requests per second over all connections together");

pub const DIRS: Param = Param::int("dirs", 1, MAX_DIRS as u64)
    .measured(&["10"])
    .quick(&["2"])
    .help("directories of the file set, about 5.1 MB each (SPECweb99 scales them with connections); refused when over half the memory available");

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
    listener: TrialListener,
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
            listener: TrialListener::NONE,
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
        self.listener.open(backlog(ctx.load))
    }

    fn release(&mut self) {
        self.listener.close();
    }

    fn has_server(&self) -> bool {
        true
    }

    fn serve(&self, ctx: &ServerContext, link: &mut dyn ServerLink) -> Fallible {
        let set = MappedSet::open(&ctx.scratch.join(SET_DIR), self.dirs)?;
        let log = open_log(&ctx.scratch.join(POST_LOG))?;
        let result = serve_until(self.listener.fd, &set, log, ctx.cpus.len(), &mut |first| {
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
        close(self.listener.fd);
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
    sockets::nonblocking_listener(backlog(load))
}

/// The listener's queue at `load` connections: without keep-alive every
/// request is a connection, so a deep one.
fn backlog(load: u32) -> i32 {
    (load * 4).clamp(1024, 4096) as i32
}

/// A workload (measured as a load curve over the spec's `load` ladder and
/// `--cpus`), in the report group of system workloads.
pub const FAMILY: Family = Family {
    params: PARAMS,
    ..Family::workload(NAME, "workload", SUMMARY, OPERATION, build)
};

mod client;
mod server;
pub use server::{open_log, serve_until};

#[cfg(test)]
mod tests;
