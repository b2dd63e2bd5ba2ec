//! The process and kernel families (issue 3) through the `touchstone`
//! command: bad parameters are refused before anything runs, and a
//! parallel run of a process benchmark completes and is stored.

use crate::common::{text, Sandbox};

#[test]
fn bad_parameters_are_refused_before_anything_runs() {
    let s = Sandbox::new();
    let cases: &[(&str, &str)] = &[
        ("lat_ctx/size:-16k", "negative"),
        ("lat_ctx/procs:0", "out of range"),
        ("lat_ctx/procs:1", "out of range"),
        ("lat_pmake/jobs:0", "out of range"),
        ("lat_sig/bogus", "unknown value 'bogus'"),
        ("lat_proc/vfork", "unknown value 'vfork'"),
        ("lat_usleep/sleep", "unknown value 'sleep'"),
        ("lat_usleep/nanosleep/time:0us", "out of range"),
        ("lat_proc/fork/env:4k", "only exec"),
        ("lat_thread/spinlock", "unknown value"),
    ];
    for (spec, expect) in cases {
        // A good case first: a refusal must stop the whole run before it.
        let out = s.run(&["run", "lat_syscall/null", spec, "--quick"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{spec}: {err}");
        assert!(
            err.contains(expect),
            "{spec}: expected '{expect}' in: {err}"
        );
        assert!(
            !err.contains("lat_syscall/null:"),
            "{spec}: something ran before the refusal: {err}"
        );
    }
    let runs = s.run(&["runs", "--json"]);
    let listed = String::from_utf8_lossy(&runs.stdout);
    assert!(
        !listed.contains("lat_syscall"),
        "a refused run was stored: {listed}"
    );
}

#[test]
fn process_benchmarks_run_in_parallel() {
    let s = Sandbox::new();
    let out = s.run_line("run lat_sig/catch lat_proc/fork/mem:0 --quick -P 3 -r 3 --json");
    assert!(out.status.success(), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ms = doc["runs"][0]["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 2);
    for m in ms {
        assert_eq!(m["parallel"], 3);
        assert_eq!(m["group"], "proc");
        assert_eq!(m["unit"], "ns");
        let v = m["summary"]["median"].as_f64().unwrap();
        assert!(v.is_finite() && v > 0.0, "{}: {v}", m["name"]);
    }
}
