//! Measuring catalogue cases outside the CLI, for tests and tools: select a
//! spec, build each case and measure it with a small, fast plan.

use std::io::Read;
use std::os::fd::FromRawFd;

use touchstone_harness::workload::{TrialOutcome, TrialPlan};
use touchstone_harness::{measure_case, Benchmark, CaseLabel, HarnessError, NoObserver, Plan};
use touchstone_results::Measurement;

use crate::support::sys;
use crate::{select, Built, RunContext};

/// The benchmark of known cost (a spin of `ns`) the harness's own tests time.
pub use crate::families::spin::Spin;

/// The web workload's server on its own, for peer load generators in
/// validation (examples/serve_web.rs).
pub mod web_server {
    pub use crate::families::web::{listener, open_log, serve_until, POST_LOG, SET_DIR};
}

pub mod skip;

/// What `touchstone serve` answered on connection `c` within `within`:
/// "+" (accepted) or a refusal line ("-touchstone serve: …", at most 512
/// bytes); "" if it said nothing.
pub fn serve_answer(c: &mut std::net::TcpStream, within: std::time::Duration) -> String {
    c.set_read_timeout(Some(within)).unwrap();
    let mut out = Vec::new();
    let mut b = [0u8; 1];
    while let Ok(1) = c.read(&mut b) {
        out.push(b[0]);
        if b[0] == b'\n' || out == b"+" || out.len() > 512 {
            break;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A workload trial for tests: a 50 ms warm-up and a 150 ms window, and
/// a stall timeout generous enough for a busy machine.
pub fn short_trial() -> TrialPlan {
    TrialPlan {
        warmup_ns: 50_000_000,
        window_ns: 150_000_000,
        stall_timeout: std::time::Duration::from_secs(20),
        ..TrialPlan::default()
    }
}

/// Reaped: `pid` is no longer a process (or zombie) whose parent is this
/// one — what a test checks of every process a trial started.
pub fn reaped(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            let rest = &stat[stat.rfind(')').unwrap() + 1..];
            let ppid: i32 = rest.split_whitespace().nth(1).unwrap().parse().unwrap();
            // SAFETY: getpid has no preconditions.
            ppid != unsafe { libc::getpid() }
        }
    }
}

/// What every workload trial owes, whatever the workload: `clients`
/// clients, each running throughout the window; operations counted in it
/// (on a busy machine one client may complete none in a short window, so
/// only their sum) and held by the merged histograms, in the throughput
/// (unless the throughput is the workload's traffic beside its clients,
/// `traffic`, which may be idle); ordered quantiles; every process it
/// started reaped.
pub fn trial_is_sound(o: &TrialOutcome, clients: usize) -> Result<(), String> {
    let window_ops: u64 = o.clients.iter().map(|c| c.window_ops).sum();
    let l = o.latency();
    let wrong = if o.clients.len() != clients {
        format!("{} clients, {clients} expected", o.clients.len())
    } else if !o.every_client_ran_through() {
        format!(
            "a client did not run through the window {:?}: {:?}",
            o.window, o.clients
        )
    } else if window_ops == 0 || (!o.traffic && o.ops != window_ops) || l.len() != window_ops {
        format!(
            "{} operations, {window_ops} counted by the clients, {} in the histograms",
            o.ops,
            l.len()
        )
    } else if !(o.throughput.is_finite() && (o.throughput > 0.0 || o.traffic)) {
        format!("throughput {}", o.throughput)
    } else if !(l.value_at_quantile(0.5) <= l.value_at_quantile(0.99)
        && l.value_at_quantile(0.99) <= l.max())
    {
        "quantiles out of order".to_string()
    } else if let Some(pid) = o.pids.iter().find(|&&pid| !reaped(pid)) {
        format!("process {pid} outlived the trial")
    } else {
        return Ok(());
    };
    Err(wrong)
}

/// A plan for tests: few, short intervals; the real clock's limits apply.
pub fn tiny_plan(parallel: u32) -> Plan {
    Plan {
        repetitions: 3,
        parallel,
        target_ns: 1_000_000,
        parallel_target_ns: 20_000_000,
        warmup_ns: 0,
        min_interval_ns: 100_000,
        ..Plan::default()
    }
}

/// Measure every case of `spec` with `tiny_plan(1)` and the default run
/// context: what most families' own tests need.
pub fn measure_tiny(spec: &str) -> Result<Vec<Measurement>, String> {
    measure_spec(spec, &tiny_plan(1), &RunContext::default())
}

/// Why `spec` is refused before anything runs: its selection's error, or
/// its first case's family's refusal to build it (with the default run
/// context); a panic where it is built.
pub fn refusal(spec: &str) -> String {
    match select(&[spec.to_string()], &RunContext::default(), 1) {
        Err(e) => e.to_string(),
        Ok(_) => built_first(spec)
            .err()
            .unwrap_or_else(|| panic!("{spec} was built")),
    }
}

/// The first case of `spec`, built with the default run context.
pub fn built(spec: &str) -> Built {
    built_first(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn built_first(spec: &str) -> Result<Built, String> {
    let ctx = RunContext::default();
    let sel = select(&[spec.to_string()], &ctx, 1).map_err(|e| e.to_string())?;
    let c = &sel.cases[0];
    c.family.make(&c.point, &ctx)
}

/// Measure every case of `spec` (e.g. "lat_syscall/null") with `plan`.
pub fn measure_spec(spec: &str, plan: &Plan, ctx: &RunContext) -> Result<Vec<Measurement>, String> {
    let sel = select(&[spec.to_string()], ctx, plan.parallel).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for c in sel.cases {
        let mut built = c.family.make(&c.point, ctx)?;
        let label = CaseLabel {
            name: c.name.clone(),
            benchmark: c.family.name.into(),
            group: c.family.group.into(),
            params: c
                .point
                .0
                .iter()
                .map(|(k, v)| (k.to_string(), v.text.clone()))
                .collect(),
        };
        let baseline = built
            .baseline
            .as_mut()
            .map(|(n, b)| (n.as_str(), &mut **b as &mut dyn Benchmark));
        let m = measure_case(
            &label,
            built.bench.as_mut(),
            &built.shape,
            baseline,
            plan,
            &mut NoObserver,
        )
        .map_err(|e: HarnessError| e.to_string())?;
        out.push(m);
    }
    Ok(out)
}

/// What every measurement owes: a positive, finite headline from finite,
/// non-negative samples (zero only where a subtracted overhead swamped the
/// figure and the measurement is marked invalid), and finite extra figures.
pub fn sane(m: &Measurement) -> Result<(), String> {
    let v = m.value();
    let swamped = m.baseline.is_some()
        && m.warnings.iter().any(|w| w.code == "overhead-swamps")
        && m.invalid.is_some();
    if !(v.is_finite() && (v > 0.0 || (v == 0.0 && swamped))) {
        return Err(format!("{}: figure {v} is not positive and finite", m.name));
    }
    if m.samples.is_empty() || !m.samples.iter().all(|s| s.is_finite() && *s >= 0.0) {
        return Err(format!("{}: samples {:?}", m.name, m.samples));
    }
    if let Some((k, v)) = m.extra.iter().find(|(_, v)| !v.is_finite()) {
        return Err(format!("{}: extra figure {k} = {v}", m.name));
    }
    Ok(())
}

/// Assert `sane`.
pub fn assert_sane(m: &Measurement) {
    if let Err(e) = sane(m) {
        panic!("{e}");
    }
}

/// Run `check` in a forked child process and return its verdict, for tests
/// that change the process (pinning it: the test runner's threads must keep
/// their affinity) or that count on a descriptor number staying free once
/// closed (another test thread could take it at once). The child's error,
/// or its panic's message, comes back through a pipe.
pub fn in_child(check: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    let (r, w) = sys::pipe().map_err(|e| e.to_string())?;
    let pid = sys::fork_helper(|| {
        sys::close(r);
        let verdict = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(check)) {
            Ok(Ok(())) => String::new(),
            Ok(Err(e)) => e,
            Err(p) => p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panicked".into()),
        };
        let _ = sys::write_all(w, verdict.as_bytes());
        0
    });
    sys::close(w);
    // SAFETY: `r` is our pipe's read end; the File owns and closes it.
    let mut from_child = unsafe { std::fs::File::from_raw_fd(r) };
    let pid = pid.map_err(|e| e.to_string())?;
    let mut verdict = String::new();
    let read = from_child.read_to_string(&mut verdict);
    let exit = sys::reap(pid).map_err(|e| e.to_string())?;
    read.map_err(|e| e.to_string())?;
    match (exit, verdict.is_empty()) {
        (0, true) => Ok(()),
        (0, false) => Err(verdict),
        (code, _) => Err(format!("the child exited with status {code}: {verdict}")),
    }
}

/// `in_child` for a check that runs a trial or a measurement: the test
/// process's one-measurement-at-a-time lock stays held until the child is
/// reaped, so no other test of this process measures while the child does
/// (two trials at once on two CPUs starve each other: a waiter never woken,
/// a window with no operation). The child, which has a copy of the lock as
/// it was at the fork, releases its copy first, so that its own trial can
/// take it.
pub fn in_child_measuring(check: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    let held = std::cell::RefCell::new(Some(touchstone_harness::parallel::hold_across_fork()));
    let verdict = in_child(|| {
        // The child's copy of the guard: dropping it unlocks the child's copy.
        drop(held.borrow_mut().take());
        check()
    });
    drop(held);
    verdict
}

/// Whether `fd` is an open descriptor of this process.
pub fn descriptor_is_open(fd: std::os::fd::RawFd) -> bool {
    // SAFETY: F_GETFD only asks whether the descriptor exists.
    (unsafe { libc::fcntl(fd, libc::F_GETFD) }) >= 0
}

/// Checks that `fds` are files unlinked while open and that, once `close`
/// has run (a drop), none of them is open any more; returns what they were.
/// Other tests open and close their own descriptors meanwhile, so it
/// compares the files, not the counts.
pub fn unlinked_until_closed(fds: &[std::os::fd::RawFd], close: impl FnOnce()) -> Vec<String> {
    let files: Vec<String> = fds
        .iter()
        .map(|fd| {
            let t = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap();
            t.display().to_string()
        })
        .collect();
    assert!(files.iter().all(|f| f.ends_with("(deleted)")), "{files:?}");
    close();
    let open: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .map(|p| p.display().to_string())
        .collect();
    let left: Vec<&String> = files.iter().filter(|f| open.contains(f)).collect();
    assert!(left.is_empty(), "left open: {left:?}");
    files
}

/// Whether process `pid` is gone (reaped, not merely exited).
pub fn process_is_gone(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only probes; ESRCH means no such process.
    (unsafe { libc::kill(pid, 0) }) != 0
}

/// A throw-away PostgreSQL server for tests: Debian's `postgresql`
/// binaries, a cluster initialised in a temporary directory, listening only
/// on a Unix socket in that directory (no network). Run as the `postgres`
/// system user when the test runs as root (the server refuses root).
/// Stopped and removed when dropped, also when a test fails.
#[cfg(feature = "oltp")]
pub struct ThrowawayPostgres {
    dir: std::path::PathBuf,
    bin: std::path::PathBuf,
    as_user: Option<String>,
    pub port: u16,
}

#[cfg(feature = "oltp")]
impl ThrowawayPostgres {
    /// The directory holding `initdb`, `pg_ctl` and `postgres`, if installed.
    pub fn binaries() -> Option<std::path::PathBuf> {
        let mut found: Vec<_> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("bin"))
            .filter(|b| b.join("pg_ctl").exists() && b.join("initdb").exists())
            .collect();
        found.sort();
        found.pop()
    }

    /// Start one, or None (with the reason printed) when PostgreSQL is not
    /// installed and not required; under CI (`CI` set) it is required.
    pub fn start() -> Option<ThrowawayPostgres> {
        let Some(bin) = Self::binaries() else {
            skip::missing(
                "PostgreSQL is not installed (/usr/lib/postgresql/*/bin; apt-get install postgresql)",
            );
            return None;
        };
        // SAFETY: geteuid has no preconditions.
        let as_user = (unsafe { libc::geteuid() } == 0).then(|| "postgres".to_string());
        let dir = std::env::temp_dir().join(format!(
            "touchstone-pg-test-{}-{}",
            std::process::id(),
            touchstone_harness::clock::now_ns()
        ));
        std::fs::create_dir(&dir).expect("temporary directory");
        let server = ThrowawayPostgres {
            dir,
            bin,
            as_user,
            port: 5432,
        };
        if let Some(u) = &server.as_user {
            let ok = std::process::Command::new("chown")
                .arg(format!("{u}:"))
                .arg(&server.dir)
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            assert!(ok, "cannot give {} to the {u} user", server.dir.display());
        }
        let data = server.dir.join("data");
        server.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
            ],
        );
        let opts = format!(
            "-k {} -c listen_addresses='' -p {} -c fsync=off",
            server.dir.display(),
            server.port
        );
        server.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-o",
                &opts,
                "-l",
                server.dir.join("log").to_str().unwrap(),
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
        Some(server)
    }

    /// The server's `tool` (initdb, pg_ctl), run as the server's user.
    fn command(&self, tool: &str) -> std::process::Command {
        let program = self.bin.join(tool);
        match &self.as_user {
            Some(u) => {
                let mut c = std::process::Command::new("runuser");
                c.args(["-u", u, "--"]).arg(&program);
                c
            }
            None => std::process::Command::new(&program),
        }
    }

    fn run(&self, tool: &str, args: &[&str]) {
        let out = self
            .command(tool)
            .args(args)
            .current_dir(&self.dir)
            .output()
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        assert!(
            out.status.success(),
            "{tool} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The socket directory (the `host` of a connection string).
    pub fn socket_dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// A key=value connection string for `user` on database `postgres`.
    pub fn url(&self, user: &str) -> String {
        format!(
            "host={} port={} user={user} dbname=postgres",
            self.dir.display(),
            self.port
        )
    }

    /// Run SQL as the superuser and return the first column of each row.
    pub fn sql(&self, sql: &str) -> Vec<String> {
        let mut c = postgres::Client::connect(&self.url("postgres"), postgres::NoTls)
            .expect("connect to the test server");
        c.simple_query(sql)
            .expect("test SQL")
            .into_iter()
            .filter_map(|m| match m {
                postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or("").to_string()),
                _ => None,
            })
            .collect()
    }

    /// The schemas touchstone made and has not dropped.
    pub fn touchstone_schemas(&self) -> Vec<String> {
        self.sql("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'touchstone%'")
    }
}

#[cfg(feature = "oltp")]
impl Drop for ThrowawayPostgres {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let _ = self
            .command("pg_ctl")
            .args([
                "-D",
                data.to_str().unwrap_or(""),
                "-m",
                "immediate",
                "-w",
                "stop",
            ])
            .current_dir("/")
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
