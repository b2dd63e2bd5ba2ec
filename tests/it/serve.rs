//! `touchstone serve` against a hostile client, on loopback: requests too
//! large or unknown are refused with a message, connections past the limit
//! are refused while serve's memory stays bounded, a silent connection is
//! timed out, a dead one does not keep serve past its idle timeout, and a
//! connection whose thread cannot be made is refused while serve goes on.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::{serve_address, unavailable, Sandbox};

/// A serve on 127.0.0.1, killed on drop.
struct Serve {
    child: Child,
    addr: String,
}

impl Serve {
    fn start(s: &Sandbox, args: &[&str]) -> Serve {
        Serve::start_with(s, args, |_| {})
    }

    fn start_with(
        s: &Sandbox,
        args: &[&str],
        adjust: impl FnOnce(&mut std::process::Command),
    ) -> Serve {
        let mut c = s.cmd();
        c.args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        adjust(&mut c);
        let mut child = c.spawn().unwrap();
        let addr = serve_address(&mut child);
        Serve { child, addr }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A line of /proc/PID/status, as a number (kB for VmRSS).
    fn status(&self, field: &str) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| {
                v.trim_start_matches(':')
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no {field} in serve's status"))
    }

    /// A connection that sent `request` and read serve's answer.
    fn ask(&self, request: &[u8]) -> (TcpStream, String) {
        let mut c = TcpStream::connect(&self.addr).unwrap();
        c.write_all(request).unwrap();
        let answer = answer(&mut c);
        (c, answer)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// serve's answer: "+", or a refusal line ("-touchstone serve: …"); ""
/// if it said nothing within 15 s.
fn answer(c: &mut TcpStream) -> String {
    touchstone_catalogue::testing::serve_answer(c, Duration::from_secs(15))
}

/// Whether serve closed `c` (end of file or reset) within 5 s.
fn closed(c: &mut TcpStream) -> bool {
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut b = [0u8; 16];
    match c.read(&mut b) {
        Ok(0) => true,
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
        Ok(_) => false,
    }
}

fn pull(size: u32) -> Vec<u8> {
    let mut r = vec![b'P'];
    r.extend_from_slice(&size.to_le_bytes());
    r
}

/// A pull asking for 64 MiB messages made serve allocate them (20
/// connections: 1.29 GB); an unknown request was closed without a word.
#[test]
fn oversized_and_unknown_requests_are_refused_with_a_message() {
    let s = Sandbox::new();
    let serve = Serve::start(&s, &[]);
    for size in [(4 << 20) + 1, 64 << 20, u32::MAX, 0] {
        let (mut c, a) = serve.ask(&pull(size));
        assert!(
            a.starts_with(&format!("-touchstone serve: a message of {size} bytes")),
            "size {size}: {a:?}"
        );
        assert!(a.contains("1 to 4194304 bytes"), "{a}");
        assert!(closed(&mut c), "size {size}: left open");
    }
    let (mut c, a) = serve.ask(b"X");
    assert!(a.starts_with("-touchstone serve: unknown request"), "{a:?}");
    assert!(closed(&mut c));
    // The largest size bw_tcp uses is served, whole.
    let (mut c, a) = serve.ask(&pull(4 << 20));
    assert_eq!(a, "+");
    c.write_all(&2u64.to_le_bytes()).unwrap();
    let mut got = vec![0u8; 8 << 20];
    c.read_exact(&mut got).unwrap();
    assert!(got.iter().all(|&b| b == 0x5a));
}

/// Past --max-connections, connections are refused with a message; the
/// connections served hold a fixed buffer each, whatever they ask for.
#[test]
fn many_connections_keep_serves_memory_bounded_and_the_excess_is_refused() {
    let s = Sandbox::new();
    let serve = Serve::start(&s, &["--max-connections", "100"]);
    let before_kb = serve.status("VmRSS");
    let mut open = Vec::new();
    for i in 0..100 {
        let (mut c, a) = serve.ask(&pull(4 << 20));
        assert_eq!(a, "+", "connection {i}");
        // Each one has messages of 4 MiB under way.
        c.write_all(&1u64.to_le_bytes()).unwrap();
        open.push(c);
    }
    for i in 0..20 {
        let (mut c, a) = serve.ask(b"E");
        assert!(
            a.starts_with("-touchstone serve: busy: 100 connections open")
                && a.contains("--max-connections 100"),
            "connection {}: {a:?}",
            100 + i
        );
        assert!(closed(&mut c));
    }
    std::thread::sleep(Duration::from_millis(300));
    let rss_kb = serve.status("VmRSS");
    eprintln!(
        "serve with 100 connections pulling 4 MiB messages: VmRSS {rss_kb} kB (at start {before_kb} kB)"
    );
    // 100 × (64 KiB buffer + a thread's touched stack) and serve itself;
    // before the bounds each connection held its 4 MiB message (400 MB).
    assert!(rss_kb < 64 << 10, "VmRSS {rss_kb} kB");
    // The connections go; new ones are served again.
    drop(open);
    let t = Instant::now();
    loop {
        let (_c, a) = serve.ask(b"E");
        if a == "+" {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "still refused: {a}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A connection that asks nothing is closed with a message; one that went
/// silent (a dead peer) no longer keeps serve running past --idle-timeout
/// (there was no read timeout: serve never stopped while it was open).
#[test]
fn a_silent_connection_is_timed_out_and_a_dead_one_does_not_keep_serve_alive() {
    let s = Sandbox::new();
    let mut serve = Serve::start(&s, &["--idle-timeout", "2s"]);
    let t = Instant::now();
    let mut silent = TcpStream::connect(&serve.addr).unwrap();
    let (mut dead, a) = serve.ask(b"E");
    assert_eq!(a, "+");
    dead.write_all(b"ping").unwrap();
    let mut back = [0u8; 4];
    dead.read_exact(&mut back).unwrap();
    assert_eq!(&back, b"ping");
    // Both stay open here, the second silent from now on.
    let a = answer(&mut silent);
    assert_eq!(a, "-touchstone serve: no request within 2 s\n");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    let status = loop {
        if let Some(st) = serve.child.try_wait().unwrap() {
            break st;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "serve still runs with a dead connection open"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success());
    let mut err = String::new();
    serve
        .child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(err.contains("stopping (idle timeout)"), "{err}");
    // Its end of the dead connection is closed too.
    assert!(closed(&mut dead));
}

/// The tasks (threads) of user `uid` on this machine.
fn tasks_of(uid: u32) -> u64 {
    let mut n = 0;
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(status) = std::fs::read_to_string(e.path().join("status")) else {
            continue;
        };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        };
        if field("Uid:") == Some(uid as u64) {
            n += field("Threads:").unwrap_or(0);
        }
    }
    n
}

/// When no thread can be made for a connection serve panicked
/// (`remote.rs:472`) and stopped listening; now that connection is
/// refused and the next is served. Threads are made to fail with
/// RLIMIT_NPROC, which binds only a user without privileges: serve runs as
/// nobody, its limit the tasks that user has plus serve's three (main,
/// UDP, accept) and one connection's.
#[test]
fn a_connection_without_a_thread_is_refused_and_serve_goes_on() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        unavailable("running serve as nobody needs root");
        return;
    }
    const NOBODY: u32 = 65534;
    let s = Sandbox::new();
    let limit = tasks_of(NOBODY) + 4;
    let serve = Serve::start_with(&s, &[], |c| {
        use std::os::unix::process::CommandExt;
        c.uid(NOBODY).gid(NOBODY);
        // SAFETY: setrlimit only, in the child before exec (after setuid:
        // lowering a limit needs no privilege).
        unsafe {
            c.pre_exec(move || {
                let rl = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                if libc::setrlimit(libc::RLIMIT_NPROC, &rl) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    });
    // The "listening" line comes just before serve starts its threads.
    let t = Instant::now();
    while serve.status("Threads") < 3 {
        assert!(t.elapsed() < Duration::from_secs(10), "serve's threads");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(serve.status("Threads"), 3, "serve's own threads");
    let (first, a) = serve.ask(b"E");
    assert_eq!(a, "+");
    let (_second, a) = serve.ask(b"E");
    assert!(
        a.starts_with("-touchstone serve: cannot start a thread for this connection"),
        "{a:?}"
    );
    drop(first);
    let t = Instant::now();
    while serve.status("Threads") > 3 {
        assert!(t.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(20));
    }
    let (mut third, a) = serve.ask(b"E");
    assert_eq!(a, "+", "serve no longer serves");
    third.write_all(b"pong").unwrap();
    let mut back = [0u8; 4];
    third.read_exact(&mut back).unwrap();
    assert_eq!(&back, b"pong");
}
