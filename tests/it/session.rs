//! Every way a run can end leaves the stored run in a final state with its
//! reason: a case that fails to build mid-run, a measurement that fails, a
//! store that refuses a write, and Ctrl-C — for `run`, and for `app`, which
//! shares the same session. The built binary runs against a temporary store;
//! the build and store failures are injected with the test-only
//! `TOUCHSTONE_FAILPOINT` (see crates/cli/src/session.rs).

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{assert_refused, assert_says, stored_runs, text, words, Sandbox};

/// The one stored run, whole, and the text `show` prints for it.
fn the_stored_run(s: &Sandbox) -> (Value, String) {
    let runs = stored_runs(s);
    assert_eq!(runs.len(), 1, "{runs:?}");
    let id = runs[0]["id"].as_str().unwrap();
    let o = s.run(&["show", id, "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let shown = s.run(&["show", id]);
    assert!(shown.status.success(), "{}", text(&shown));
    (
        doc["runs"][0].clone(),
        String::from_utf8_lossy(&shown.stdout).into_owned(),
    )
}

/// Two quick cases: the first measures in milliseconds, so a failure
/// injected at the second leaves one finished measurement behind it.
const TWO_CASES: [&str; 4] = ["run", "null_loop", "spin/time:1ms", "--quick"];

#[test]
fn a_case_that_fails_to_build_mid_run_is_a_failed_case_with_its_reason() {
    let s = Sandbox::new();
    let o = s.run_failing("build_case@2-2", TWO_CASES);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_says(&o, "failpoint build_case");
    let (run, shown) = the_stored_run(&s);
    assert_eq!(run["status"], "failed");
    // The cases run in a shuffled order: the second built is either; the
    // other goes on to its later rounds.
    assert_eq!(run["measurements"].as_array().unwrap().len(), 1);
    let kept = run["measurements"][0]["name"].as_str().unwrap();
    let failed = if kept == "null_loop" {
        "spin/1ms"
    } else {
        "null_loop"
    };
    let reason = run["reason"].as_str().unwrap();
    assert!(reason.contains("1 of 2 measurements failed"), "{reason}");
    assert!(
        reason.contains(&format!("{failed}: failpoint build_case")),
        "{reason}"
    );
    assert!(run["ended_at"].is_string());
    assert!(shown.contains(&format!("reason: {reason}")), "{shown}");
}

/// A case whose build fails in its second round (the third build: round 1's
/// first case) keeps its first round, marked invalid with why, and the
/// run names the failure; the other case has all its rounds.
#[test]
fn a_case_that_fails_in_a_later_round_keeps_its_rounds_marked_invalid() {
    let s = Sandbox::new();
    let o = s.run_failing("build_case@3-3", TWO_CASES);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let (run, _) = the_stored_run(&s);
    assert_eq!(run["status"], "failed");
    let ms = run["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 2, "{run}");
    let (bad, good): (Vec<&serde_json::Value>, Vec<&serde_json::Value>) =
        ms.iter().partition(|m| m.get("invalid").is_some());
    assert_eq!((bad.len(), good.len()), (1, 1), "{run}");
    let why = bad[0]["invalid"].as_str().unwrap();
    assert!(
        why.contains("round 2 of this case failed") && why.contains("failpoint build_case"),
        "{why}"
    );
    assert_eq!(bad[0]["samples"].as_array().unwrap().len(), 3);
    assert_eq!(
        good[0]["summary"]["rounds"]["figures"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert!(run["reason"]
        .as_str()
        .unwrap()
        .contains("failpoint build_case"));
}

#[test]
fn a_measurement_that_fails_finishes_the_run_as_failed_with_its_reason() {
    let s = Sandbox::new();
    // No temporary directory: the harness cannot make the measurement's
    // scratch directory, a real failure of the measurement itself.
    let o = s
        .cmd()
        .args(["run", "null_loop", "--quick"])
        .env("TMPDIR", s.path("no-such-dir"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let (run, shown) = the_stored_run(&s);
    assert_eq!(run["status"], "failed");
    assert!(run["measurements"].as_array().unwrap().is_empty());
    let reason = run["reason"].as_str().unwrap();
    assert!(reason.contains("1 of 1 measurements failed"), "{reason}");
    assert!(reason.contains("null_loop"), "{reason}");
    assert!(shown.contains("reason: "), "{shown}");
}

#[test]
fn a_store_error_mid_run_finishes_the_run_as_failed_and_keeps_what_was_stored() {
    let s = Sandbox::new();
    let mut args = TWO_CASES.to_vec();
    args.push("--json");
    let o = s.run_failing("store_add@2", &args);
    // A store error is an error of the store (2), not of a measurement.
    assert_refused(&o, "failpoint store_add");
    // What was measured is still printed, the unstored figure included.
    let printed: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(printed["runs"][0]["status"], "failed");
    assert_eq!(
        printed["runs"][0]["measurements"].as_array().unwrap().len(),
        2
    );
    let (run, shown) = the_stored_run(&s);
    assert_eq!(run["status"], "failed");
    assert_eq!(run["measurements"].as_array().unwrap().len(), 1);
    let reason = run["reason"].as_str().unwrap();
    assert!(reason.contains("failpoint store_add"), "{reason}");
    assert!(shown.contains("reason: "), "{shown}");
}

/// Start `args`, wait until its run is stored as running (and a moment
/// more, so a measurement is under way), then send SIGINT; return the exit
/// code.
fn interrupt(s: &Sandbox, args: &[&str]) -> Option<i32> {
    let mut child = s.spawn_silent(args);
    let deadline = Instant::now() + Duration::from_secs(60);
    // Until the run's process has created the store, `runs` finds none.
    let running = || {
        let o = s.run(&["runs", "--json"]);
        o.status.success()
            && serde_json::from_slice::<Value>(&o.stdout).is_ok_and(|v| v[0]["status"] == "running")
    };
    while !running() {
        assert!(Instant::now() < deadline, "the run was never stored");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait().unwrap().code()
}

#[test]
fn ctrl_c_finishes_the_run_as_interrupted_with_its_reason() {
    let s = Sandbox::new();
    let code = interrupt(
        &s,
        &[
            "run",
            "spin/time:20ms",
            "--repetitions",
            "500",
            "--label",
            "ctrl-c",
        ],
    );
    assert_eq!(code, Some(130));
    let (run, shown) = the_stored_run(&s);
    assert_eq!(run["status"], "interrupted");
    assert!(run["ended_at"].is_string());
    let reason = run["reason"].as_str().unwrap();
    assert!(reason.contains("interrupted"), "{reason}");
    assert!(shown.contains("interrupted"), "{shown}");
}

/// With `--no-store`, Ctrl-C says nothing is stored (it once named a run
/// "stored" that was not) and writes no store.
#[test]
fn ctrl_c_without_a_store_says_nothing_is_stored() {
    let s = Sandbox::new();
    let child = s
        .cmd()
        .args(words("run spin/time:20ms --repetitions 500 --no-store"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("nothing is stored (--no-store)"), "{err}");
    assert!(!err.contains("are stored"), "{err}");
    assert!(!s.db().exists(), "a store was written");
}

#[test]
fn app_runs_end_the_same_ways() {
    // Interrupted while the program runs.
    let s = Sandbox::new();
    let code = interrupt(&s, &["app", "-r", "3", "--", "sleep", "30"]);
    assert_eq!(code, Some(130));
    let (run, _) = the_stored_run(&s);
    assert_eq!(run["status"], "interrupted");
    assert!(run["reason"].as_str().unwrap().contains("interrupted"));

    // The figure measured but not stored.
    let s = Sandbox::new();
    let o = s.run_failing("store_add", ["app", "-r", "3", "--", "true"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let (run, _) = the_stored_run(&s);
    assert_eq!(run["status"], "failed");
    assert!(run["measurements"].as_array().unwrap().is_empty());
    assert!(run["reason"]
        .as_str()
        .unwrap()
        .contains("failpoint store_add"));

    // And a complete run stores no reason at all.
    let s = Sandbox::new();
    let o = s.run(&["app", "-r", "3", "--", "true"]);
    assert!(o.status.success(), "{}", text(&o));
    let (run, shown) = the_stored_run(&s);
    assert_eq!(run["status"], "complete");
    assert!(run.get("reason").is_none(), "{run}");
    assert!(!shown.contains("reason:"), "{shown}");
}
