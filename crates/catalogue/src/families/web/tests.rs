//! The web workload's tests: the server against a plain HTTP client, the
//! mix, and short trials.

use super::*;
use crate::support::http::{self, parse_response};
use crate::support::web_files::{content_byte, file_index, file_size, set_bytes};
use crate::testing::{short_trial, trial_is_sound};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
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
        let server =
            s.spawn(|| serve_until(lfd, &set, log, 2, &mut |_| Ok(stop.load(Ordering::Relaxed))));
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
    trial_is_sound(o, clients).unwrap();
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
    assert_eq!(w.0.listener.fd, -1, "the listener is released");
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
