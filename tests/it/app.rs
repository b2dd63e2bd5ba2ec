//! `touchstone app` and `touchstone predict` end to end: the binary run
//! against a database in a temporary directory. Times are asserted only
//! loosely (the machine is shared and noisy).

use serde_json::Value;

use crate::common::Sandbox;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn sleep_is_timed_at_about_its_length_with_a_tight_interval() {
    let sandbox = Sandbox::new();
    let out = sandbox.run(&["app", "--json", "-r", "7", "--", "sleep", "0.05"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &doc["runs"][0]["measurements"][0];
    assert_eq!(m["name"], "app/sleep");
    assert_eq!(m["group"], "app");
    assert_eq!(m["unit"], "ns");
    assert_eq!(m["samples"].as_array().unwrap().len(), 7);
    let s = &m["summary"];
    let median = s["median"].as_f64().unwrap();
    assert!(
        (50e6..500e6).contains(&median),
        "sleep 0.05 took {median} ns"
    );
    // Tight: the interval is a modest fraction of the figure even here.
    let width = s["ci_high"].as_f64().unwrap() - s["ci_low"].as_f64().unwrap();
    assert!(width < 0.5 * median, "CI {width} ns around {median} ns");
    for k in ["user_cpu_s", "system_cpu_s", "peak_rss_bytes"] {
        assert!(m["extra"][k].as_f64().unwrap() >= 0.0, "{k}");
    }
    assert!(m["extra"]["peak_rss_bytes"].as_f64().unwrap() > 0.0);
    // Stored like any benchmark.
    let shown = sandbox.run(&["show", "last", "--json"]);
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    let doc: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(doc["runs"][0]["measurements"][0]["name"], "app/sleep");
}

#[test]
fn a_failing_command_is_reported_not_timed() {
    let sandbox = Sandbox::new();
    let out = sandbox.run(&["app", "-r", "3", "--", "false"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("exited with status 1"), "{err}");
    assert!(err.contains("not timed"), "{err}");
    // No figure: the name appears only in the run's stated reason.
    let stdout = text(&out.stdout);
    assert!(
        stdout
            .lines()
            .filter(|l| l.contains("app/false"))
            .all(|l| l.trim_start().starts_with("reason:")),
        "{stdout}"
    );
    // Nothing was stored as a figure; the run is stored as failed, with why.
    let runs = sandbox.run(&["runs", "--json"]);
    let rows: Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 1, "{rows}");
    assert_eq!(rows[0]["status"], "failed");
    assert_eq!(rows[0]["measurements"], 0);
    let shown = sandbox.run(&["show", "last", "--json"]);
    let doc: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let reason = doc["runs"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("exited with status 1"), "{reason}");

    let out = sandbox.run(&["app", "--name", "killed", "--", "sh", "-c", "kill -9 $$"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("signal 9"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn bad_input_is_refused_before_anything_runs() {
    let sandbox = Sandbox::new();
    for args in [
        &["app", "--", "no-such-program-xyz"][..],
        &["app", "--name", "a/b", "--", "true"][..],
        &["app", "--warmup", "0", "--", "true"][..],
        &["app", "-r", "0", "--", "true"][..],
    ] {
        let out = sandbox.run(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn predict_explains_when_it_cannot_fit() {
    let sandbox = Sandbox::new();
    let out = sandbox.run(&["app", "--name", "t", "-r", "3", "--", "true"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = sandbox.run(&["predict", "t"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("app/t: timed on 1 of 1 machines"), "{s}");
    assert!(s.contains("No model"), "{s}");
    let out = sandbox.run(&["predict", "unknown-app"]);
    assert_eq!(out.status.code(), Some(2));
}
