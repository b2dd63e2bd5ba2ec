//! Seed 003's system workloads through `touchstone run` (issue 13): fscache
//! and its memcpy baseline, and chat — small sweeps stored as curves with
//! sound figures, bad input refused before anything runs, and no process
//! or file left behind, also on Ctrl-C.

use serde_json::Value;

use crate::common::{leftovers, text, Sandbox};
use crate::workload::{
    assert_nothing_left, check_service_demand, interrupt_mid_sweep, refused, run_json, stored_run,
    tagged, unique_tag, ONE_CPU, SHORT,
};

/// A point's figures hold together: positive throughput, ordered percentiles.
fn check_point(p: &Value, server: bool) {
    assert!(p["throughput"].as_f64().unwrap() > 0.0, "{p}");
    let l = &p["latency"];
    let ns = |k: &str| l[k].as_u64().unwrap();
    assert!(ns("count") > 0);
    assert!(
        ns("min_ns") <= ns("p50_ns")
            && ns("p50_ns") <= ns("p99_ns")
            && ns("p99_ns") <= ns("max_ns"),
        "{l}"
    );
    check_service_demand(p, server);
}

#[test]
fn fscache_and_chat_sweeps_are_stored_as_curves_and_leave_nothing() {
    let s = Sandbox::new();
    let tag = unique_tag("fscache-chat");
    let mut args = vec![
        "run",
        "fscache/set:4m/load:1,2",
        "chat/rooms:2/load:4,5",
        "--json",
    ];
    args.extend(SHORT);
    args.extend(ONE_CPU);
    let o = tagged(s.cmd(), &tag).args(&args).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_nothing_left(&s, &tag);
    // Without a terminal, one short line per point says it was measured
    // (the figures are printed once, in the tables).
    let err = String::from_utf8_lossy(&o.stderr);
    let points = |w: &str| {
        err.lines()
            .filter(|l| l.contains(w) && l.contains(": measured ("))
            .count()
    };
    assert_eq!((points("fscache/"), points("chat/")), (4, 2), "{err}");
    let run = run_json(&o);
    assert_eq!(run["curves"], stored_run(&s)["curves"]);
    let curves = run["curves"].as_array().unwrap();
    // Quick: one buffer size, each read curve followed by its baseline.
    let names: Vec<(String, String)> = curves
        .iter()
        .map(|c| {
            let w = c["workload"].as_str().unwrap().to_string();
            let mode = c["params"]["mode"].as_str().unwrap_or("").to_string();
            (w, mode)
        })
        .collect();
    assert_eq!(
        names,
        [("fscache", "read"), ("fscache", "memcpy"), ("chat", "")]
            .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    for c in &curves[..2] {
        assert_eq!(c["operation"], "read");
        assert_eq!(c["bytes_per_op"], 4096, "reads of the quick 4 KB buffer");
        for (p, load) in c["points"].as_array().unwrap().iter().zip([1, 2]) {
            assert_eq!(p["load"], load);
            check_point(p, false);
        }
    }
    let chat = &curves[2];
    assert_eq!(chat["operation"], "message");
    assert!(chat.get("bytes_per_op").is_none());
    for (p, load) in chat["points"].as_array().unwrap().iter().zip([4, 5]) {
        assert_eq!(p["load"], load);
        check_point(p, true);
    }
    // The report reads the buffer-cache curves in MB/s.
    let shown = String::from_utf8_lossy(&s.run(&["show", "last"]).stdout).into_owned();
    assert!(shown.contains("throughput (MB/s)"), "{shown}");
    assert!(shown.contains("msg/s"), "{shown}");
}

#[test]
fn bad_fscache_and_chat_input_is_refused_before_anything_runs() {
    let s = Sandbox::new();
    refused(&s, &["run", "chat/rooms:0"], &["rooms", "0"]);
    refused(&s, &["run", "chat/load:1"], &["load 1", "minimum of 2"]);
    refused(
        &s,
        &["run", "chat/rooms:3/load:5"],
        &["load 5", "minimum of 6"],
    );
    refused(&s, &["run", "chat/load:0"], &["load 0"]);
    refused(&s, &["run", "chat/size:8"], &["size", "8"]);
    refused(
        &s,
        &["run", "fscache/file:64m/set:1024g"],
        &["does not fit", "MemAvailable"],
    );
    refused(
        &s,
        &["run", "fscache/buffer:3k"],
        &["buffer:3072", "must divide the file size"],
    );
    refused(&s, &["run", "fscache/buffer:0"], &["buffer", "0"]);
    refused(&s, &["run", "fscache/load:0"], &["load 0"]);
}

/// Start `spec` with long windows, wait for its first point and for the
/// next point's processes (`running` of them, the run included), press
/// Ctrl-C, and check that nothing is left.
fn interrupt_leaves_nothing(spec: &str, first: &str, running: usize) {
    let s = Sandbox::new();
    let test = format!("ctrl-c-{}", &spec[..4]);
    let args = [spec, "--quick", "--window", "1s"];
    interrupt_mid_sweep(&s, &test, &args, first, &|now| now.len() >= running);
    assert_eq!(leftovers(&s), Vec::<String>::new(), "{spec}: files left");
    assert_eq!(stored_run(&s)["status"], "interrupted");
}

#[test]
fn ctrl_c_mid_sweep_leaves_no_process_thread_or_file() {
    // fscache: the run and two reading processes; chat: the run, the
    // server and the client process (threads die with their process).
    interrupt_leaves_nothing("fscache/mode:read/set:4m/load:1,2,3", "load 1 on", 3);
    interrupt_leaves_nothing("chat/load:2,3,4", "load 2 on", 3);
}
