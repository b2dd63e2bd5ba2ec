//! The web workload's server, standalone, for peer load generators (wrk,
//! wrk2) in validation: `serve_web DIR [DIRS] [THREADS]` writes the
//! SPECweb99-like file set of DIRS directories (default 2) under DIR,
//! listens on 127.0.0.1 (a port the kernel chooses, printed as
//! `port N`), and serves with THREADS epoll threads (default: the CPUs it
//! may use) until it is killed. DIR is the caller's to remove.

use std::io::Write;
use std::path::PathBuf;

use touchstone_catalogue::support::web_files::{self, check_fits, memory_available, MappedSet};
use touchstone_catalogue::testing::web_server::{
    listener, open_log, serve_until, POST_LOG, SET_DIR,
};

fn main() {
    if let Err(e) = run() {
        eprintln!("serve_web: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: serve_web DIR [DIRS] [THREADS]";
    let dir = PathBuf::from(args.first().ok_or(usage)?);
    let number = |i: usize, default: usize| -> Result<usize, String> {
        args.get(i)
            .map(|s| s.parse().map_err(|_| format!("{s}: not a number; {usage}")))
            .unwrap_or(Ok(default))
    };
    let dirs = number(1, 2)?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = number(2, cpus)?;
    check_fits(dirs, memory_available()?)?;
    let root = dir.join(SET_DIR);
    std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    web_files::generate(&root, dirs).map_err(|e| e.0)?;
    let set = MappedSet::open(&root, dirs).map_err(|e| e.0)?;
    let log = open_log(&dir.join(POST_LOG)).map_err(|e| e.0)?;
    let (fd, port) = listener(1024).map_err(|e| e.0)?;
    println!("port {port}");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    serve_until(fd, &set, log, threads, &mut |_| Ok(false)).map_err(|e| e.0)
}
