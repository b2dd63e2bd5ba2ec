//! Background load for latency-under-load measurements (`rt_wake`,
//! `rt_dispatch`; seed 004's load levels built up step by step). A level is
//! a set of helper processes started just before a trial's measurement and
//! stopped just after it, made from the catalogue's own mechanisms:
//!
//! - `none`: nothing;
//! - `cpu`: a spinner per CPU of the point, pinned, at normal priority;
//! - `memory`: a copy stream per CPU of the point, pinned: 16 MiB copied
//!   to another 16 MiB buffer with memcpy, again and again (STREAM copy,
//!   larger than the caches of common machines);
//! - `io`: one writer appending 64 KiB to a file in the trial's scratch
//!   directory and calling fsync after each write, the file truncated
//!   every 16 MiB;
//! - `net`: 64-byte request/response ping-pong over one TCP connection on
//!   127.0.0.1 (a client process and a server process);
//! - `fork`: one process forking children that exit at once, and reaping
//!   them, in a loop;
//! - `mixed`: all of the above together.
//!
//! Every helper runs in one process group of its own (the first helper
//! leads it) and dies with its parent (PR_SET_PDEATHSIG). `Running::stop`
//! (also on drop) kills the whole group, reaps every process of it — the
//! fork storm's children included, which come to us as the subreaper —
//! and removes the file it wrote. No helper allocates after the fork:
//! buffers, sockets and paths are made before it.

use std::ffi::CString;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};

use touchstone_harness::Fallible;

use crate::params::Param;
use crate::support::placement::pin_self;
use crate::support::sys::{self, check, close, errno, Pid};

/// The spec parameter (`load` is the engine's load ladder, so this is
/// `background`): each level is a point of its own, stored in the curve's
/// parameters.
pub const PARAM: Param = Param::choice("background", &["none", "cpu", "memory", "io", "net", "fork", "mixed"])
    .quick(&["none", "cpu"])
    .help("load running during the measurement: none, cpu (a spinner per CPU), memory (a memcpy stream per CPU), io (an fsync writer in scratch), net (TCP ping-pong on loopback), fork (a fork-and-exit storm), mixed (all)");

/// One background load level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    None,
    Cpu,
    Memory,
    Io,
    Net,
    Fork,
    Mixed,
}

impl Level {
    pub fn parse(s: &str) -> Result<Level, String> {
        Ok(match s {
            "none" => Level::None,
            "cpu" => Level::Cpu,
            "memory" => Level::Memory,
            "io" => Level::Io,
            "net" => Level::Net,
            "fork" => Level::Fork,
            "mixed" => Level::Mixed,
            other => {
                return Err(format!(
                    "unknown background load '{other}': none, cpu, memory, io, net, fork or mixed"
                ))
            }
        })
    }

    fn has(self, part: Level) -> bool {
        self == part || (self == Level::Mixed && part != Level::None)
    }
}

/// Bytes of each buffer of a memory copy stream.
const COPY_BYTES: usize = 16 << 20;
/// Bytes of each write of the io writer, and when its file starts over.
const IO_WRITE: usize = 64 << 10;
const IO_FILE_MAX: usize = 16 << 20;
/// The net ping-pong's message.
const NET_MESSAGE: usize = 64;

/// A background load that is running: stop it (or drop it) to end it.
#[derive(Debug)]
pub struct Running {
    /// The helpers' process group (0: no helper).
    pgid: Pid,
    pids: Vec<Pid>,
    file: Option<PathBuf>,
}

impl Running {
    /// Nothing running (level `none`).
    pub fn idle() -> Running {
        Running {
            pgid: 0,
            pids: Vec::new(),
            file: None,
        }
    }

    /// The helper processes started (not their short-lived children).
    pub fn pids(&self) -> &[Pid] {
        &self.pids
    }

    /// The helpers' process group (0 when nothing runs).
    pub fn group(&self) -> Pid {
        self.pgid
    }

    /// The file the io writer writes, if any.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// Whether every helper is still running (not exited, not killed).
    pub fn all_alive(&self) -> bool {
        self.pids.iter().all(|&pid| {
            let mut st = 0;
            // SAFETY: polls our own child without reaping a live one.
            unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG) == 0 }
        })
    }

    /// Kill every helper and its children, reap them, remove the file.
    pub fn stop(&mut self) {
        if self.pgid > 0 {
            // SAFETY: signals our own helpers' group, then reaps our children.
            unsafe {
                libc::kill(-self.pgid, libc::SIGKILL);
                for &pid in &self.pids {
                    libc::kill(pid, libc::SIGKILL);
                    let mut st = 0;
                    while libc::waitpid(pid, &mut st, 0) < 0
                        && *libc::__errno_location() == libc::EINTR
                    {}
                }
                // The fork storm's children, re-parented to us when we are
                // the subreaper: reap whatever of the group is still ours.
                loop {
                    let mut st = 0;
                    let r = libc::waitpid(-self.pgid, &mut st, 0);
                    if r < 0 && *libc::__errno_location() != libc::EINTR {
                        break;
                    }
                }
            }
            self.pgid = 0;
            self.pids.clear();
        }
        if let Some(f) = self.file.take() {
            let _ = std::fs::remove_file(f);
        }
    }

    /// Fork one helper running `body` into the group, pinned to `cpu`
    /// (loaded_latency's memory-traffic generators). It holds none of the
    /// caller's descriptors; memory it needs it maps itself, or inherits.
    pub fn spawn_pinned(&mut self, cpu: usize, body: impl FnOnce() -> i32) -> Fallible {
        self.spawn(Some(cpu), None, body)
    }

    /// Fork one helper into the group, pinned to `cpu` if given, keeping
    /// only descriptor `keep` (if any) of those above stderr.
    fn spawn(
        &mut self,
        cpu: Option<usize>,
        keep: Option<RawFd>,
        body: impl FnOnce() -> i32,
    ) -> Fallible {
        let group = self.pgid;
        let pid = sys::fork_helper(move || {
            // A helper must not hold the caller's descriptors: the engine's
            // start barrier is a pipe whose write end's closing starts the
            // clients; a helper holding it open would stall them.
            close_from(3, keep);
            // SAFETY: joins (or founds) the helpers' group; our own process.
            unsafe { libc::setpgid(0, group) };
            if let Some(c) = cpu {
                if pin_self(c).is_err() {
                    return 2;
                }
            }
            body()
        })?;
        // Also from the parent, so the group exists before the next fork
        // or a kill, whichever of the two processes runs first.
        // SAFETY: setpgid on our own child.
        unsafe { libc::setpgid(pid, if group == 0 { pid } else { group }) };
        if self.pgid == 0 {
            self.pgid = pid;
        }
        self.pids.push(pid);
        Ok(())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Start `level` on `cpus` (the point's CPUs), the io writer's file in
/// `scratch`. On an error, whatever started is stopped.
pub fn start(level: Level, cpus: &[usize], scratch: &Path) -> Fallible<Running> {
    let mut r = Running::idle();
    if level.has(Level::Cpu) {
        for &c in cpus {
            r.spawn(Some(c), None, spin)?;
        }
    }
    if level.has(Level::Memory) {
        for &c in cpus {
            let from = sys::map_anonymous(COPY_BYTES, libc::PROT_READ | libc::PROT_WRITE, false)?;
            let to = sys::map_anonymous(COPY_BYTES, libc::PROT_READ | libc::PROT_WRITE, false)?;
            let spawned = r.spawn(Some(c), None, move || copy_stream(from, to));
            // The child has its own copy of the mappings.
            // SAFETY: unmaps the two mappings just made.
            unsafe {
                libc::munmap(from as *mut libc::c_void, COPY_BYTES);
                libc::munmap(to as *mut libc::c_void, COPY_BYTES);
            }
            spawned?;
        }
    }
    if level.has(Level::Io) {
        let path = scratch.join(format!("background-io-{}", std::process::id()));
        let c = sys::cstring(&path)?;
        let buf = sys::map_anonymous(IO_WRITE, libc::PROT_READ | libc::PROT_WRITE, false)?;
        r.file = Some(path);
        let spawned = r.spawn(None, None, move || fsync_writer(&c, buf));
        // SAFETY: unmaps the buffer just made (the child has its copy).
        unsafe { libc::munmap(buf as *mut libc::c_void, IO_WRITE) };
        spawned?;
    }
    if level.has(Level::Net) {
        let (listener, port) = listen_loopback()?;
        let served = r.spawn(None, Some(listener), move || net_server(listener));
        if let Err(e) = served {
            close(listener);
            return Err(e);
        }
        close(listener);
        r.spawn(None, None, move || net_client(port))?;
    }
    if level.has(Level::Fork) {
        r.spawn(None, None, fork_storm)?;
    }
    Ok(r)
}

/// Close every descriptor from `low` up, except `keep` (close_range,
/// Linux 5.9; before it, one close per possible descriptor).
fn close_from(low: RawFd, keep: Option<RawFd>) {
    let ranges = match keep {
        Some(k) if k >= low => [(low, k - 1), (k + 1, RawFd::MAX)],
        _ => [(low, RawFd::MAX), (1, 0)],
    };
    for (a, b) in ranges {
        if a > b {
            continue;
        }
        // SAFETY: closes descriptors of this (helper) process only.
        let r = unsafe { libc::syscall(libc::SYS_close_range, a as u32, b as u32, 0u32) };
        if r != 0 {
            for fd in a..=b.min(4095) {
                // SAFETY: as above.
                unsafe { libc::close(fd) };
            }
        }
    }
}

/// A spinner: burns its CPU until killed.
fn spin() -> i32 {
    let mut x: u64 = 1;
    loop {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
}

/// A copy stream: memcpy of one buffer into another, forever.
fn copy_stream(from: *mut u8, to: *mut u8) -> i32 {
    // SAFETY: both mappings are COPY_BYTES long, private to this process.
    unsafe {
        libc::memset(from as *mut libc::c_void, 1, COPY_BYTES);
        loop {
            libc::memcpy(
                to as *mut libc::c_void,
                from as *const libc::c_void,
                COPY_BYTES,
            );
            std::hint::black_box(to);
        }
    }
}

/// A writer: 64 KiB writes, each followed by fsync; the file starts over
/// every 16 MiB so it stays small.
fn fsync_writer(path: &CString, buf: *mut u8) -> i32 {
    // SAFETY: raw calls on our own descriptor and buffer.
    unsafe {
        let fd = libc::open(
            path.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
            0o600,
        );
        if fd < 0 {
            return 3;
        }
        libc::memset(buf as *mut libc::c_void, 7, IO_WRITE);
        let mut written = 0usize;
        loop {
            if libc::write(fd, buf as *const libc::c_void, IO_WRITE) < 0 {
                return 4;
            }
            libc::fsync(fd);
            written += IO_WRITE;
            if written >= IO_FILE_MAX {
                libc::ftruncate(fd, 0);
                libc::lseek(fd, 0, libc::SEEK_SET);
                written = 0;
            }
        }
    }
}

/// A listening TCP socket on 127.0.0.1 and its port (chosen by the kernel).
fn listen_loopback() -> Fallible<(RawFd, u16)> {
    // SAFETY: socket calls on a new descriptor; addresses are local structs.
    unsafe {
        let fd = check(
            libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0),
            "socket",
        )?;
        let mut a: libc::sockaddr_in = std::mem::zeroed();
        a.sin_family = libc::AF_INET as libc::sa_family_t;
        a.sin_addr.s_addr = u32::from_be_bytes([127, 0, 0, 1]).to_be();
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let bound = libc::bind(fd, &a as *const _ as *const libc::sockaddr, len);
        if bound != 0 || libc::listen(fd, 1) != 0 {
            let e = errno("bind/listen on 127.0.0.1");
            close(fd);
            return Err(e);
        }
        let mut got: libc::sockaddr_in = std::mem::zeroed();
        let mut got_len = len;
        libc::getsockname(fd, &mut got as *mut _ as *mut libc::sockaddr, &mut got_len);
        Ok((fd, u16::from_be(got.sin_port)))
    }
}

/// Reads `n` bytes into `buf` (false: the peer is gone).
fn read_exact(fd: RawFd, buf: *mut u8, n: usize) -> bool {
    let mut got = 0;
    while got < n {
        // SAFETY: reads into our own buffer of at least n bytes.
        let r = unsafe { libc::read(fd, buf.add(got) as *mut libc::c_void, n - got) };
        if r <= 0 {
            return false;
        }
        got += r as usize;
    }
    true
}

/// The ping-pong's server: echoes each message back.
fn net_server(listener: RawFd) -> i32 {
    let mut buf = [0u8; NET_MESSAGE];
    // SAFETY: accept and write on our own descriptors and buffer.
    unsafe {
        let c = libc::accept(listener, std::ptr::null_mut(), std::ptr::null_mut());
        if c < 0 {
            return 5;
        }
        while read_exact(c, buf.as_mut_ptr(), NET_MESSAGE) {
            if libc::write(c, buf.as_ptr() as *const libc::c_void, NET_MESSAGE) < 0 {
                return 6;
            }
        }
    }
    0
}

/// The ping-pong's client: a message, its echo, again.
fn net_client(port: u16) -> i32 {
    let mut buf = [0u8; NET_MESSAGE];
    // SAFETY: socket calls on a new descriptor and our own buffer.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        let mut a: libc::sockaddr_in = std::mem::zeroed();
        a.sin_family = libc::AF_INET as libc::sa_family_t;
        a.sin_addr.s_addr = u32::from_be_bytes([127, 0, 0, 1]).to_be();
        a.sin_port = port.to_be();
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        if fd < 0 || libc::connect(fd, &a as *const _ as *const libc::sockaddr, len) != 0 {
            return 7;
        }
        let one: libc::c_int = 1;
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            &one as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
        loop {
            if libc::write(fd, buf.as_ptr() as *const libc::c_void, NET_MESSAGE) < 0 {
                return 8;
            }
            if !read_exact(fd, buf.as_mut_ptr(), NET_MESSAGE) {
                return 9;
            }
        }
    }
}

/// A fork-and-exit storm: fork a child that exits at once, reap it, again.
fn fork_storm() -> i32 {
    loop {
        // SAFETY: the child only _exits; the parent reaps it.
        unsafe {
            let pid = libc::fork();
            if pid == 0 {
                libc::_exit(0);
            }
            if pid > 0 {
                let mut st = 0;
                libc::waitpid(pid, &mut st, 0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::placement::usable_cpus;

    /// Processes whose process group is `pgid`, from /proc.
    fn group_members(pgid: Pid) -> Vec<Pid> {
        let mut out = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<Pid>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // pid (comm) state ppid pgrp …: fields after the last ')'.
            let rest = &stat[stat.rfind(')').unwrap() + 2..];
            let fields: Vec<&str> = rest.split_whitespace().collect();
            if fields.get(2).and_then(|g| g.parse::<Pid>().ok()) == Some(pgid) {
                out.push(pid);
            }
        }
        out
    }

    #[test]
    fn levels_parse_and_unknown_is_refused() {
        assert_eq!(Level::parse("mixed").unwrap(), Level::Mixed);
        let e = Level::parse("disk").unwrap_err();
        assert!(e.contains("unknown background load 'disk'"), "{e}");
        assert!(Level::Mixed.has(Level::Fork) && !Level::Cpu.has(Level::Memory));
    }

    /// Every level starts its helpers, they keep running, and stopping it
    /// leaves no process of its group and no file.
    #[test]
    fn every_level_starts_runs_and_stops_leaving_nothing() {
        // Measuring-exclusive: the levels' spinners and fork storm would
        // starve another test's trial running beside them.
        crate::testing::in_child_measuring(|| {
            // As in a trial: the fork storm's orphans come to us.
            touchstone_harness::signals::become_subreaper();
            let cpus = usable_cpus().map_err(|e| e.to_string())?;
            let scratch = tempdir();
            for name in ["none", "cpu", "memory", "io", "net", "fork", "mixed"] {
                let level = Level::parse(name)?;
                let mut r = start(level, &cpus, &scratch).map_err(|e| e.to_string())?;
                let expected = match level {
                    Level::None => 0,
                    Level::Cpu | Level::Memory => cpus.len(),
                    Level::Io | Level::Fork => 1,
                    Level::Net => 2,
                    Level::Mixed => 2 * cpus.len() + 4,
                };
                if r.pids().len() != expected {
                    return Err(format!(
                        "{name}: {} helpers, not {expected}",
                        r.pids().len()
                    ));
                }
                std::thread::sleep(std::time::Duration::from_millis(150));
                if !r.all_alive() {
                    return Err(format!("{name}: a helper ended early"));
                }
                if level.has(Level::Io) && !r.file().is_some_and(|f| f.exists()) {
                    return Err(format!("{name}: the io writer's file is missing"));
                }
                let (group, pids) = (r.group(), r.pids().to_vec());
                r.stop();
                if group != 0 && !group_members(group).is_empty() {
                    return Err(format!(
                        "{name}: processes left: {:?}",
                        group_members(group)
                    ));
                }
                if let Some(p) = pids.iter().find(|&&p| !crate::testing::process_is_gone(p)) {
                    return Err(format!("{name}: helper {p} not reaped"));
                }
                let left: Vec<_> = std::fs::read_dir(&scratch).unwrap().flatten().collect();
                if !left.is_empty() {
                    return Err(format!("{name}: files left in scratch: {left:?}"));
                }
            }
            std::fs::remove_dir(&scratch).map_err(|e| e.to_string())
        })
        .unwrap();
    }

    fn tempdir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("ts-bgload-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
