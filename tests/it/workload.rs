//! Workloads through `touchstone run`: bad input refused before anything
//! runs (nothing stored, no store even opened); a quick sweep of tcp_rr
//! stored as a curve whose points hold what the format promises; the run's
//! ending — failed sweep, store error mid-sweep, Ctrl-C — stored with its
//! reason and the points measured before it; no server or client process
//! left behind; curves through export and import, and stores and documents
//! of the previous version still read.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::common::{assert_refused, assert_says, leftovers, text, Sandbox};

/// Short sweeps: 50 ms warm-up, 200 ms windows, at most 4 trials a point.
pub(crate) const SHORT: [&str; 5] = ["--quick", "--warmup", "50ms", "--window", "200ms"];
/// On one CPU: tcp_rr keeps the CPUs it has busy, and the tests running
/// beside these (some timing things) keep the other.
pub(crate) const ONE_CPU: [&str; 2] = ["--cpus", "1"];

/// The environment variable every process a tagged run starts inherits.
const TAG: &str = "TOUCHSTONE_TEST_TAG";

/// `cmd` tagged, so that every process it starts (they fork, and inherit
/// the environment) can be found afterwards.
pub(crate) fn tagged(mut cmd: Command, tag: &str) -> Command {
    cmd.env(TAG, tag);
    cmd
}

/// Processes still alive carrying `tag` in their environment.
pub(crate) fn survivors(tag: &str) -> Vec<i32> {
    let needle = format!("{TAG}={tag}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        // Processes of other users, and those that just ended, cannot be read.
        let Ok(env) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if env.split(|&b| b == 0).any(|v| v == needle.as_bytes()) {
            found.push(pid);
        }
    }
    found
}

/// Start `touchstone run ARGS --cpus 1` (tagged) in `s`, wait for the
/// stderr line holding `first` (a point measured) and then until `ready`
/// says so of the tagged processes (the next point's running), press
/// Ctrl-C and collect the end. The caller checks what must be left: the
/// tag finds the run and everything it started, so finding none means
/// something. Returns what the run printed on stderr.
pub(crate) fn interrupt_mid_sweep(
    s: &Sandbox,
    test: &str,
    args: &[&str],
    first: &str,
    ready: &dyn Fn(&[i32]) -> bool,
) -> String {
    let tag = unique_tag(test);
    let mut child = tagged(s.cmd(), &tag)
        .arg("run")
        .args(args)
        .args(ONE_CPU)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen += &line;
        seen.push('\n');
        if line.contains(first) {
            break;
        }
    }
    assert!(seen.contains(first), "no point before the end: {seen}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut running = survivors(&tag);
    while !ready(&running) {
        assert!(std::time::Instant::now() < deadline, "{running:?}: {seen}");
        std::thread::sleep(std::time::Duration::from_millis(20));
        running = survivors(&tag);
    }
    assert!(running.contains(&(child.id() as i32)), "{running:?}");
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    for line in lines {
        seen += &line.unwrap();
        seen.push('\n');
    }
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(130), "{seen}");
    assert_eq!(survivors(&tag), Vec::<i32>::new(), "{seen}");
    seen
}

/// No process tagged `tag` and no scratch file outlived the run.
pub(crate) fn assert_nothing_left(s: &Sandbox, tag: &str) {
    assert_eq!(
        survivors(tag),
        Vec::<i32>::new(),
        "processes outlived the run"
    );
    assert_eq!(leftovers(s), Vec::<String>::new(), "files outlived the run");
}

/// A point's service demand: client time per operation, and server time
/// exactly when the workload has a server process.
pub(crate) fn check_service_demand(p: &Value, server: bool) {
    let d = &p["service_demand"];
    assert!(d["client_ns_per_op"].as_f64().unwrap() > 0.0, "{d}");
    match d["server_ns_per_op"].as_f64() {
        Some(ns) => assert!(server && ns > 0.0, "{d}"),
        None => assert!(!server, "{d}"),
    }
}

pub(crate) fn unique_tag(test: &str) -> String {
    format!("{}-{test}", std::process::id())
}

/// The one stored run, whole.
pub(crate) fn stored_run(s: &Sandbox) -> Value {
    let o = s.run(&["show", "last", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["version"], touchstone_results::json::FORMAT_VERSION);
    doc["runs"][0].clone()
}

pub(crate) fn run_json(o: &Output) -> Value {
    let doc: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)));
    doc["runs"][0].clone()
}

pub(crate) fn refused(s: &Sandbox, args: &[&str], expect: &[&str]) {
    refused_before_the_store(s, &s.run(args), &format!("{args:?}"), expect);
}

/// `o`, of the command `what`, is a refusal (exit 2) saying each of
/// `expect`, made before the store was opened.
pub(crate) fn refused_before_the_store(s: &Sandbox, o: &Output, what: &str, expect: &[&str]) {
    let all = text(o);
    assert_eq!(o.status.code(), Some(2), "{what}: {all}");
    for e in expect {
        assert!(all.contains(e), "{what}: no '{e}' in: {all}");
    }
    assert!(!s.db().exists(), "{what}: the store was opened");
}

#[test]
fn bad_workload_input_is_refused_before_anything_runs() {
    let s = Sandbox::new();
    refused(
        &s,
        &["run", "tcp_rr/load:1,0"],
        &["load 0", "at least 1 client"],
    );
    refused(
        &s,
        &["run", "tcp_rr/load:5000"],
        &["load 5000", "maximum of 1024"],
    );
    refused(&s, &["run", "tcp_rr", "--cpus", "0"], &["--cpus 0"]);
    refused(
        &s,
        &["run", "tcp_rr", "--cpus", "1,two"],
        &["--cpus", "two"],
    );
    refused(
        &s,
        &["run", "tcp_rr", "--converge", "95,0"],
        &["width 0 %", "above 0"],
    );
    refused(
        &s,
        &["run", "tcp_rr", "--converge", "95,101"],
        &["width 101 %", "at most 100 %"],
    );
    for confidence in ["40,5", "100,5", "0,5"] {
        refused(
            &s,
            &["run", "tcp_rr", "--converge", confidence],
            &["confidence", "between 50 and 100 %"],
        );
    }
    refused(
        &s,
        &["run", "tcp_rr", "--converge", "95"],
        &["CONFIDENCE,WIDTH"],
    );
    refused(
        &s,
        &["run", "tcp_rr/sise:8"],
        &["unknown parameter 'sise'", "did you mean 'size'", "load"],
    );
    refused(
        &s,
        &["run", "tcp_rr/server:fork"],
        &["unknown value 'fork'", "per-cpu, one, threads"],
    );
    refused(&s, &["run", "tcp_rr", "-P", "2"], &["not --parallel"]);
    refused(&s, &["run", "tcp_rr", "--window", "0"], &["--window"]);
    refused(
        &s,
        &["run", "lat_syscall/null", "--cpus", "2"],
        &["--cpus applies to workloads"],
    );
    // A micro-benchmark mixed in does not hide a workload's bad load.
    refused(&s, &["run", "null_loop", "tcp_rr/load:0"], &["load 0"]);
}

/// `setrlimit` in the child before it runs touchstone.
fn with_limit(
    s: &Sandbox,
    resource: libc::__rlimit_resource_t,
    soft: u64,
    args: &[&str],
) -> Output {
    let mut cmd = s.cmd();
    cmd.args(args);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let mut r = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::getrlimit(resource, &mut r);
            r.rlim_cur = soft.min(r.rlim_max);
            if libc::setrlimit(resource, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().unwrap()
}

#[test]
fn loads_beyond_the_shells_limits_are_refused_naming_the_limit_and_the_remedy() {
    let s = Sandbox::new();
    let o = with_limit(&s, libc::RLIMIT_NOFILE, 64, &["run", "tcp_rr/load:1,100"]);
    let all = text(&o);
    assert_eq!(o.status.code(), Some(2), "{all}");
    assert!(
        all.contains("load 100") && all.contains("limit of 64") && all.contains("ulimit -n"),
        "{all}"
    );
    assert!(all.contains("raise it"), "{all}");
    let o = with_limit(&s, libc::RLIMIT_NPROC, 16, &["run", "tcp_rr/load:20"]);
    let all = text(&o);
    assert_eq!(o.status.code(), Some(2), "{all}");
    assert!(
        all.contains("limit of 16") && all.contains("ulimit -u"),
        "{all}"
    );
    assert!(!s.db().exists());
}

/// What every point of a stored tcp_rr curve must hold.
fn check_point(p: &Value, load: u64, max_trials: usize) {
    assert_eq!(p["load"], load, "{p}");
    assert!(p["cpus"].as_u64().unwrap() >= 1);
    assert_eq!(
        p["cpu_ids"].as_array().unwrap().len() as u64,
        p["cpus"].as_u64().unwrap()
    );
    let trials = p["trials"].as_array().unwrap();
    assert!(
        (3..=max_trials).contains(&trials.len()),
        "{} trials",
        trials.len()
    );
    for t in trials {
        // On a machine busy enough, one transaction can outlast a short
        // window: a trial may count none, never a negative or odd figure.
        let (x, ops) = (
            t["throughput"].as_f64().unwrap(),
            t["ops"].as_u64().unwrap(),
        );
        assert_eq!(t["window_ns"], 200_000_000);
        assert!((x - ops as f64 / 0.2).abs() <= 1e-6 * x.max(1.0), "{t}");
    }
    assert!(p["throughput"].as_f64().unwrap() > 0.0);
    assert!(p["throughput_half_width"].as_f64().unwrap() >= 0.0);
    let l = &p["latency"];
    let ns = |k: &str| l[k].as_u64().unwrap();
    assert!(ns("count") > 0);
    assert!(ns("min_ns") <= ns("p50_ns"), "{l}");
    assert!(
        ns("p50_ns") <= ns("p90_ns") && ns("p90_ns") <= ns("p99_ns"),
        "{l}"
    );
    assert!(
        ns("p99_ns") <= ns("p999_ns") && ns("p999_ns") <= ns("max_ns"),
        "{l}"
    );
    assert!(!l["histogram"].as_str().unwrap().is_empty());
    // The kept trials' operations are the histogram's.
    let kept_ops: u64 = trials
        .iter()
        .filter(|t| t["dropped"] != true)
        .map(|t| t["ops"].as_u64().unwrap())
        .sum();
    assert_eq!(ns("count"), kept_ops);
    let c = &p["convergence"];
    assert_eq!(c["rule"]["confidence"], 0.95);
    assert_eq!(c["rule"]["width"], 0.05);
    assert_eq!(c["rule"]["max_trials"], max_trials);
    assert!(c["converged"].is_boolean());
    assert!(c["width"].as_f64().unwrap() > 0.0, "{c}");
    if c["converged"] == true {
        assert!(c["width"].as_f64().unwrap() <= 0.05);
    } else {
        assert_eq!(trials.len(), max_trials);
    }
    let cpu = &p["cpu"];
    let split: f64 = ["user", "system", "irq", "softirq", "steal", "idle"]
        .iter()
        .map(|k| {
            let f = cpu[k].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&f), "{cpu}");
            f
        })
        .sum();
    assert!((split - 1.0).abs() < 1e-6, "{cpu}");
    check_service_demand(p, true);
}

#[test]
fn a_quick_tcp_rr_sweep_is_stored_as_a_curve_and_leaves_no_process() {
    let s = Sandbox::new();
    let tag = unique_tag("quick");
    let mut args = vec![
        "run",
        "tcp_rr/load:1,2",
        "null_loop",
        "--json",
        "--cpus",
        "1,64",
    ];
    args.extend(SHORT);
    let o = tagged(s.cmd(), &tag).args(&args).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        survivors(&tag),
        Vec::<i32>::new(),
        "processes outlived the run"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    // One progress line per point (its figures only in the tables), and
    // the CPUs this machine lacks named.
    let usable = touchstone_harness::workload::cpu::usable_cpus()
        .unwrap()
        .len() as u64;
    // 1 CPU, then all of them (instead of 64): two loads each.
    let expected: Vec<(u64, u64)> = if usable == 1 {
        vec![(1, 1), (1, 2)]
    } else {
        vec![(1, 1), (1, 2), (usable, 1), (usable, 2)]
    };
    assert_eq!(err.matches(": measured (").count(), expected.len(), "{err}");
    assert_eq!(err.matches("transactions/s").count(), 0, "{err}");
    assert!(err.contains("64 CPUs cannot be measured here"), "{err}");

    let printed = run_json(&o);
    let run = stored_run(&s);
    assert_eq!(printed["curves"], run["curves"]);
    assert_eq!(run["status"], "complete");
    assert_eq!(run["measurements"].as_array().unwrap().len(), 1);
    let w = &run["options"]["workload"];
    assert_eq!(w["cpus"], serde_json::json!([1, 64]));
    assert_eq!(
        (w["warmup_ns"].as_u64(), w["window_ns"].as_u64()),
        (Some(50_000_000), Some(200_000_000))
    );

    let curves = run["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 1);
    let c = &curves[0];
    assert_eq!(c["workload"], "tcp_rr");
    assert_eq!(c["operation"], "transaction");
    assert_eq!(c["params"]["size"], "4");
    assert_eq!(c["unmeasured_cpus"], serde_json::json!([64]));
    let points = c["points"].as_array().unwrap();
    let got: Vec<(u64, u64)> = points
        .iter()
        .map(|p| (p["cpus"].as_u64().unwrap(), p["load"].as_u64().unwrap()))
        .collect();
    assert_eq!(got, expected);
    for p in points {
        check_point(p, p["load"].as_u64().unwrap(), 4);
    }
    // Energy (issue 30): every point carries its windows' energy where a
    // counter is readable; elsewhere none does, and the run says so once.
    use touchstone_harness::energy::{discover, read_to_string};
    let found = discover(std::path::Path::new("/sys"), &read_to_string);
    let has_energy = |o: &Value| {
        o.get("extra")
            .and_then(Value::as_object)
            .is_some_and(|e| e.keys().any(|k| k.starts_with("energy_")))
    };
    let with_energy = points.iter().filter(|p| has_energy(p)).count();
    if found.sources.is_empty() {
        assert_eq!(
            err.matches("no energy counter readable").count(),
            1,
            "{err}"
        );
        assert_eq!(with_energy, 0, "{points:?}");
    } else {
        assert_eq!(with_energy, points.len(), "{points:?}");
        assert!(points[0]["trials"]
            .as_array()
            .unwrap()
            .iter()
            .all(has_energy));
    }
    // Printed as the report's curve tables, one per CPU count.
    let shown = String::from_utf8_lossy(&s.run(&["show", "last"]).stdout).into_owned();
    assert!(shown.contains("size:4 · 1 CPU (0)"), "{shown}");
    assert!(shown.contains("not measured: 64 CPU(s)"), "{shown}");
    let rows: Value = serde_json::from_slice(&s.run(&["runs", "--json"]).stdout).unwrap();
    assert_eq!(rows[0]["curves"], 1);
}

#[test]
fn curves_travel_through_export_and_import() {
    let s = Sandbox::new();
    let mut args = vec!["run", "tcp_rr/load:1"];
    args.extend(SHORT);
    args.extend(ONE_CPU);
    let o = s.run(&args);
    assert!(o.status.success(), "{}", text(&o));
    let file = s.path("export.json");
    let o = s.run(&["export", "-o", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let other = Sandbox::new();
    let o = other.run(&["import", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let (a, b) = (stored_run(&s), stored_run(&other));
    assert_eq!(a["curves"].as_array().unwrap().len(), 1);
    assert_eq!(a, b);
}

#[test]
fn a_failed_sweep_is_a_failed_case_with_its_reason() {
    let s = Sandbox::new();
    let tag = unique_tag("failed");
    let mut args = vec!["run", "tcp_rr/load:1", "null_loop"];
    args.extend(SHORT);
    args.extend(ONE_CPU);
    // No temporary directory: the trial cannot make its scratch directory.
    let o = tagged(s.cmd(), &tag)
        .args(&args)
        .env("TMPDIR", s.path("no-such-dir"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(survivors(&tag), Vec::<i32>::new());
    assert_says(&o, "cannot start the trial");
    let run = stored_run(&s);
    assert_eq!(run["status"], "failed");
    let reason = run["reason"].as_str().unwrap();
    assert!(reason.contains("tcp_rr/size:4"), "{reason}");
    assert!(reason.contains("cannot start the trial"), "{reason}");
    assert!(run.get("curves").is_none(), "no point, no curve: {run}");
}

#[test]
fn a_store_error_mid_sweep_keeps_the_points_stored_before_it() {
    let s = Sandbox::new();
    let mut args = vec!["run", "tcp_rr/load:1,2", "--json"];
    args.extend(SHORT);
    args.extend(ONE_CPU);
    let o = s.run_failing("store_curve@2", &args);
    assert_refused(&o, "failpoint store_curve");
    let printed = run_json(&o);
    assert_eq!(printed["curves"][0]["points"].as_array().unwrap().len(), 2);
    let run = stored_run(&s);
    assert_eq!(run["status"], "failed");
    assert!(run["reason"]
        .as_str()
        .unwrap()
        .contains("failpoint store_curve"));
    let points = run["curves"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 1);
    assert_eq!(points[0]["load"], 1);
}

#[test]
fn ctrl_c_mid_sweep_interrupts_the_run_and_leaves_no_process() {
    let s = Sandbox::new();
    // Long windows after the first point, so the signal lands mid-trial:
    // into the next point's first trial, its server and clients up.
    interrupt_mid_sweep(
        &s,
        "ctrl-c",
        &["tcp_rr/load:1,2,3", "--quick", "--window", "1s"],
        "load 1 on",
        &|running| running.len() >= 3,
    );
    let run = stored_run(&s);
    assert_eq!(run["status"], "interrupted");
    let reason = run["reason"].as_str().unwrap();
    assert!(
        reason.contains("interrupted") && reason.contains("1 point(s)"),
        "{reason}"
    );
    let points = run["curves"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 1);
    assert_eq!(points[0]["load"], 1);
}

const V1_DOCUMENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/results/testdata/format-v1.json"
);

#[test]
fn version_1_documents_import_and_version_1_stores_open() {
    // A document the previous touchstone exported.
    let s = Sandbox::new();
    let o = s.run(&["import", V1_DOCUMENT]);
    assert!(o.status.success(), "{}", text(&o));
    let run = stored_run(&s);
    assert_eq!(run["label"], "format v1 sample");
    assert_eq!(run["measurements"].as_array().unwrap().len(), 1);

    // A store the previous touchstone wrote (schema 1: no curves table).
    let old = Sandbox::new();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(V1_DOCUMENT).unwrap()).unwrap();
    let mut header = doc["runs"][0].clone();
    let measurement = header["measurements"][0].clone();
    header["measurements"] = serde_json::json!([]);
    {
        let c = rusqlite::Connection::open(old.db()).unwrap();
        c.execute_batch(
            "CREATE TABLE runs (id TEXT PRIMARY KEY, seq INTEGER NOT NULL UNIQUE, label TEXT,
                 hostname TEXT NOT NULL, started_at TEXT NOT NULL, status TEXT NOT NULL,
                 header TEXT NOT NULL);
             CREATE TABLE measurements (run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                 seq INTEGER NOT NULL, name TEXT NOT NULL, doc TEXT NOT NULL,
                 PRIMARY KEY (run_id, seq));
             CREATE INDEX measurements_by_name ON measurements(name);
             PRAGMA application_id = 1414747214; -- TSTN
             PRAGMA user_version = 1;",
        )
        .unwrap();
        c.execute(
            "INSERT INTO runs VALUES (?1, 1, ?2, ?3, ?4, 'complete', ?5)",
            rusqlite::params![
                header["id"].as_str(),
                header["label"].as_str(),
                header["host"]["hostname"].as_str(),
                header["started_at"].as_str(),
                header.to_string()
            ],
        )
        .unwrap();
        c.execute(
            "INSERT INTO measurements VALUES (?1, 0, ?2, ?3)",
            rusqlite::params![
                header["id"].as_str(),
                measurement["name"].as_str(),
                measurement.to_string()
            ],
        )
        .unwrap();
    }
    assert_eq!(stored_run(&old), run);
    let version = || -> i32 {
        rusqlite::Connection::open(old.db())
            .unwrap()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(version(), 1, "reading commands never write");
    // Upgraded by the first command that writes, and it takes curves now.
    let mut args = vec!["run", "tcp_rr/load:1"];
    args.extend(SHORT);
    args.extend(ONE_CPU);
    let o = old.run(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        version(),
        touchstone_results::store::SCHEMA_VERSION,
        "upgraded when opened for writing"
    );
    assert_eq!(
        stored_run(&old)["curves"][0]["points"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
