//! The command: bad input gives a clear message and a non-zero exit and
//! loses nothing; Ctrl-C keeps what was finished.

use std::process::ExitStatus;
use std::time::{Duration, Instant};

use crate::common::{assert_refused, quick_run, scratch_dirs, stored_runs, text, Sandbox};

fn stored(s: &Sandbox) -> String {
    let o = s.run(&["runs", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn a_run_is_stored_and_shown_with_units_and_intervals() {
    let s = Sandbox::new();
    let o = s.run(&["run", "lat_syscall/null", "--quick", "--label", "first"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("lat_syscall/null")
            && out.contains(" ns")
            && out.contains("95 % interval over the rounds"),
        "{out}"
    );
    let show = s.run(&["show", "last"]);
    assert!(show.status.success());
    assert!(text(&show).contains("lat_syscall/null"));
    let json = s.run(&["show", "first", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["format"], "touchstone-results");
    let m = &v["runs"][0]["measurements"][0];
    assert_eq!(m["unit"], "ns");
    // Three rounds of three repetitions: the headline over the rounds.
    assert_eq!(m["samples"].as_array().unwrap().len(), 9);
    assert_eq!(m["rounds"], serde_json::json!([0, 0, 0, 1, 1, 1, 2, 2, 2]));
    let r = &m["summary"]["rounds"];
    assert_eq!(r["figures"].as_array().unwrap().len(), 3);
    assert!(r["low"].as_f64().unwrap() <= r["headline"].as_f64().unwrap());
    assert!(r["headline"].as_f64().unwrap() <= r["high"].as_f64().unwrap());
    assert_eq!(v["runs"][0]["options"]["rounds"], 3);
    assert!(v["runs"][0]["options"]["seed"].is_u64());
    assert_eq!(v["runs"][0]["status"], "complete");
    assert!(v["runs"][0]["host"]["cpu"]["threads"].as_u64().unwrap() >= 1);
}

/// The issue's small-n interval: at `-r 3` the "95 % CI" covered 75 %,
/// and `-r 1` printed a zero-width interval; each figure was printed twice
/// (progress line and table).
#[test]
fn few_repetitions_print_the_level_reached_and_each_figure_once() {
    let s = Sandbox::new();
    // One round: the median's interval of its own samples.
    let o = s.run_line("run null_loop lat_syscall/null --quick --rounds 1 -r 3");
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("(75 %)"), "{out}");
    assert_eq!(out.matches("lat_syscall/null").count(), 1, "{out}");
    assert!(
        out.contains("few-repetitions: 2 measurements:"),
        "one grouped line: {out}"
    );
    let all = s.run(&["show", "last", "--warnings"]);
    assert!(all.status.success(), "{}", text(&all));
    let listed = text(&all);
    assert!(
        listed.contains("lat_syscall/null: few-repetitions: 3 samples: the interval of the median (min … max) covers 75 %"),
        "{listed}"
    );
    let json = s.run(&["show", "last", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let m = &v["runs"][0]["measurements"][0];
    assert_eq!(m["summary"]["ci_level"].as_f64().unwrap(), 0.75);

    let one = s.run_line("run lat_syscall/null --quick --rounds 1 -r 1");
    assert!(one.status.success(), "{}", text(&one));
    let row = String::from_utf8_lossy(&one.stdout)
        .lines()
        .find(|l| l.contains("lat_syscall/null"))
        .unwrap()
        .to_string();
    assert!(
        row.contains("—") && !row.contains("…") && !row.contains('±'),
        "{row}"
    );
}

/// `--converge` for a micro-benchmark: after quick's three rounds, more
/// are added until the headline's interval over the rounds is as narrow as
/// asked, or the quick maximum of 4 rounds (a busy machine), and how is
/// stored with the measurement.
#[test]
fn a_micro_benchmark_converges_in_rounds_of_its_repetitions() {
    let s = Sandbox::new();
    let o = s.run_line("run spin/time:20us --quick -r 3 --converge 95,100");
    assert!(o.status.success(), "{}", text(&o));
    let json = s.run(&["show", "last", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let m = &v["runs"][0]["measurements"][0];
    let c = &m["convergence"];
    let rounds = c["rounds"].as_u64().unwrap();
    assert!((2..=4).contains(&rounds), "3 samples never reach 95 %: {c}");
    assert_eq!(m["samples"].as_array().unwrap().len() as u64, 3 * rounds);
    assert!(m["summary"]["ci_level"].as_f64().unwrap() >= 0.95);
    let flagged = m["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "not-converged");
    if c["verdict"] == "converged" {
        assert!(c["width"].as_f64().unwrap() <= 1.0, "{c}");
        assert!(!flagged);
    } else {
        assert_eq!((c["verdict"].as_str(), rounds), (Some("not_converged"), 4));
        assert!(flagged, "{m}");
    }
    // Without --converge nothing is added.
    let plain = s.run(&["run", "spin/time:20us", "--quick", "-r", "3"]);
    assert!(plain.status.success(), "{}", text(&plain));
    let json = s.run(&["show", "last", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(v["runs"][0]["measurements"][0].get("convergence").is_none());
}

#[test]
fn an_unknown_benchmark_suggests_near_names() {
    let s = Sandbox::new();
    let o = s.run(&["run", "lat_sycall"]);
    assert_refused(&o, "did you mean 'lat_syscall'");
    assert!(!s.db().exists(), "a refused run must not create a store");
}

#[test]
fn bad_numbers_are_refused_before_anything_runs() {
    let s = Sandbox::new();
    quick_run(&s, "keep");
    let before = stored(&s);
    for (args, needle) in [
        (
            &["run", "null_loop", "--repetitions", "abc"][..],
            "invalid value",
        ),
        (
            &["run", "null_loop", "--repetitions", "0"][..],
            "--repetitions 0",
        ),
        (&["run", "null_loop", "--parallel", "0"][..], "--parallel 0"),
        (&["run", "spin/-5us"][..], "negative"),
        (&["run", "spin/time:5parsecs"][..], "unknown unit"),
        (&["run", "lat_syscall/op:teleport"][..], "unknown value"),
        (
            &["run", "null_loop", "--interval", "1ns"][..],
            "out of range",
        ),
    ] {
        let o = s.run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(needle), "{args:?}: {}", text(&o));
    }
    assert_eq!(stored(&s), before, "a refused run changed the store");
}

#[test]
fn bad_files_for_import_are_refused_and_lose_nothing() {
    let s = Sandbox::new();
    quick_run(&s, "keep");
    let before = stored(&s);
    let foreign = s.file("foreign.json", r#"{"hello": "world"}"#);
    let broken = s.file("broken.json", "{\"format\": \"touchstone-results\", ");
    let future = s.file(
        "future.json",
        r#"{"format": "touchstone-results", "version": 99, "runs": []}"#,
    );
    let missing = s.path("nope.json");
    for (file, needle) in [
        (&foreign, "not a touchstone results document"),
        (&broken, "not JSON"),
        (&future, "newer than this touchstone"),
        (&missing, "cannot read"),
    ] {
        let o = s.run(&["import", file.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(needle), "{}", text(&o));
    }
    // One bad file among good ones: nothing at all is imported.
    let good = s.path("good.json");
    assert!(s
        .run(&["export", "-o", good.to_str().unwrap()])
        .status
        .success());
    let other = Sandbox::new();
    let o = other.run(&["import", good.to_str().unwrap(), foreign.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!other.db().exists() || stored(&other).trim() == "[]");
    assert_eq!(stored(&s), before);
}

#[test]
fn a_database_that_is_not_ours_is_refused_and_untouched() {
    let s = Sandbox::new();
    let notes = s.file(
        "notes.db",
        "these are my notes and not a database; please keep them",
    );
    let o = s
        .cmd()
        .args([
            "run",
            "null_loop",
            "--quick",
            "--db",
            notes.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_refused(&o, "not a SQLite database");
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "these are my notes and not a database; please keep them"
    );
    let o = s.run(&["show", "nosuchrun"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn an_unwritable_export_path_is_an_error() {
    let s = Sandbox::new();
    quick_run(&s, "x");
    let o = s.run(&["export", "-o", "/proc/touchstone-cannot-write-here.json"]);
    assert_refused(&o, "cannot write");
}

/// Processes whose command line carries `marker`.
fn processes_with(marker: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) {
            if String::from_utf8_lossy(&cmd).contains(marker) {
                out.push(pid);
            }
        }
    }
    out
}

/// Start a run whose first measurement is quick and whose second lasts
/// about ten seconds; return once the first is committed and the second is
/// under way (the store already holds one earlier run).
fn start_long_run(s: &Sandbox, marker: &str) -> std::process::Child {
    let args = [
        "run",
        "null_loop",
        "spin/time:20ms",
        // One round: the cases in the order given, each stored when done.
        "--rounds",
        "1",
        "--repetitions",
        "500",
        "--label",
        marker,
    ];
    let child = s.spawn_silent(args);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let runs = stored_runs(s);
        if runs.len() == 2 && runs[1]["measurements"].as_u64().unwrap() >= 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the run never stored its first measurement"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300)); // now inside the spin measurement
    child
}

/// A quick run stored first, then a long run (labelled `what`-PID) sent
/// `signal` in its second measurement: the quick run's id, the long run's
/// label, and how the long run ended.
fn long_run_signalled(s: &Sandbox, what: &str, signal: i32) -> (String, String, ExitStatus) {
    let earlier = quick_run(s, "earlier");
    let marker = format!("{what}-{}", std::process::id());
    let mut child = start_long_run(s, &marker);
    unsafe { libc::kill(child.id() as i32, signal) };
    (earlier, marker, child.wait().unwrap())
}

#[test]
fn sigint_keeps_finished_measurements_and_every_earlier_run() {
    let s = Sandbox::new();
    let (earlier, marker, status) = long_run_signalled(&s, "sigint", libc::SIGINT);
    assert_eq!(status.code(), Some(130));

    let runs = stored_runs(&s);
    assert_eq!(runs[0]["id"], earlier.as_str());
    assert_eq!(runs[0]["status"], "complete");
    assert_eq!(runs[1]["status"], "interrupted");
    assert_eq!(runs[1]["measurements"], 1);
    let show = s.run(&["show", &earlier]);
    assert!(show.status.success());
    // No benchmark process and no scratch directory outlive the run.
    assert!(
        processes_with(&marker).is_empty(),
        "processes outlived the run"
    );
    let leftovers = scratch_dirs(&s);
    assert!(leftovers.is_empty(), "scratch left behind: {leftovers:?}");
}

#[test]
fn a_crash_loses_nothing_finished_and_leaves_nothing_behind() {
    let s = Sandbox::new();
    let (earlier, marker, _) = long_run_signalled(&s, "crash", libc::SIGKILL);

    // The benchmark children die with their parent (PR_SET_PDEATHSIG).
    let gone = Instant::now() + Duration::from_secs(5);
    while !processes_with(&marker).is_empty() {
        assert!(
            Instant::now() < gone,
            "benchmark processes outlived a killed touchstone"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let runs = stored_runs(&s);
    assert_eq!(runs[0]["status"], "complete");
    assert_eq!(
        runs[1]["status"], "crashed",
        "a killed run reads as crashed once its process is gone"
    );
    assert_eq!(runs[1]["measurements"], 1);
    assert!(s.run(&["show", &earlier]).status.success());
    // The dead run's scratch directory is swept by the next run.
    assert!(!scratch_dirs(&s).is_empty());
    quick_run(&s, "after");
    let leftovers = scratch_dirs(&s);
    assert!(
        leftovers.is_empty(),
        "stale scratch not removed: {leftovers:?}"
    );
}

/// The order a run measures its cases in, from the intervals' start times:
/// for each round, the cases' indices in `names` in the order they ran.
fn round_orders(run: &serde_json::Value, names: &[&str]) -> Vec<Vec<usize>> {
    let ms = run["measurements"].as_array().unwrap();
    let rounds = run["options"]["rounds"].as_u64().unwrap() as u32;
    (0..rounds)
        .map(|k| {
            let mut started: Vec<(u64, usize)> = names
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let m = ms.iter().find(|m| m["name"] == *n).unwrap();
                    let start = m["intervals"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|iv| iv["round"] == k)
                        .map(|iv| iv["start_ns"].as_u64().unwrap())
                        .min()
                        .unwrap();
                    (start, i)
                })
                .collect();
            started.sort();
            started.into_iter().map(|(_, i)| i).collect()
        })
        .collect()
}

/// Rounds interleave the cases in a shuffled order: every round measures
/// every case once, in the order the recorded seed gives, and the same
/// seed gives the same order again.
#[test]
fn rounds_interleave_the_cases_in_the_order_of_the_recorded_seed() {
    let s = Sandbox::new();
    let names = [
        "null_loop",
        "spin/20us",
        "lat_syscall/null",
        "lat_ops/int64_add",
    ];
    let run = |seed: &str| {
        let o = s.run(&[
            "run",
            "null_loop",
            "spin/time:20us",
            "lat_syscall/null",
            "lat_ops/int64_add",
            "--quick",
            "--rounds",
            "4",
            "-r",
            "1",
            "--seed",
            seed,
            "--no-store",
            "--json",
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["runs"][0].clone()
    };
    let first = run("42");
    assert_eq!(first["options"]["seed"], 42);
    let orders = round_orders(&first, &names);
    assert_eq!(orders, touchstone_harness::rounds::order(4, 4, 42));
    assert!(orders.windows(2).any(|w| w[0] != w[1]), "{orders:?}");
    assert_eq!(round_orders(&run("42"), &names), orders);
}
