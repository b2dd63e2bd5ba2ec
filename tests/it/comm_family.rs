//! CLI-level tests of the communication, file and VM families (issue 4):
//! they run the real `touchstone` binary with its database and temporary
//! directory in a private tempdir.

use std::path::Path;
use std::process::{Command, Output};

fn touchstone(dir: &Path, args: &[&str]) -> Output {
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    Command::new(env!("CARGO_BIN_EXE_touchstone"))
        .args(args)
        .env("TOUCHSTONE_DB", dir.join("db.sqlite"))
        .env("TMPDIR", &tmp)
        .output()
        .expect("run touchstone")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every measurement in the JSON export: (name, value, unit).
fn figures(o: &Output) -> Vec<(String, f64, String)> {
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json output");
    let runs = v["runs"].as_array().expect("runs");
    runs.iter()
        .flat_map(|r| r["measurements"].as_array().unwrap().iter())
        .map(|m| {
            (
                m["name"].as_str().unwrap().to_string(),
                m["summary"]["median"].as_f64().unwrap(),
                m["unit"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn every_family_runs_with_small_parameters_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let specs = [
        "lat_pipe",
        "lat_fifo",
        "lat_unix",
        "lat_tcp",
        "lat_udp",
        "lat_sem",
        "lat_fcntl",
        "lat_eventfd",
        "lat_futex",
        "lat_rpc",
        "lat_http/size:0",
        "lat_connect",
        "lat_unix_connect",
        "lat_select/n:10,1000",
        "lat_fs/size:0",
        "lat_mmap/size:64k",
        "lat_pagefault/size:1m",
        "bw_pipe/size:1k",
        "bw_unix/size:1k",
        "bw_tcp/size:1k",
        "bw_file_rd/size:64k",
        "bw_mmap_rd/size:64k",
    ];
    let mut args = vec!["run", "--quick", "--json", "-r", "3"];
    args.extend(specs);
    let o = touchstone(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let figs = figures(&o);
    assert!(figs.len() >= specs.len(), "{figs:?}");
    for (name, v, unit) in &figs {
        assert!(v.is_finite() && *v > 0.0, "{name}: {v}");
        let want = if name.starts_with("bw_") {
            "m_bps"
        } else if name.starts_with("lat_fs") {
            "ops_per_sec"
        } else {
            "ns"
        };
        assert_eq!(unit, want, "{name}");
    }
    // No scratch directory, FIFO, socket path or file outlives the run.
    let left: Vec<_> = std::fs::read_dir(dir.path().join("tmp"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn bandwidth_reports_cpu_per_mb_of_both_ends() {
    let dir = tempfile::tempdir().unwrap();
    let o = touchstone(dir.path(), &["run", "--quick", "--json", "bw_tcp"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let m = &v["runs"][0]["measurements"][0];
    for k in ["cpu_s_per_mb_sender", "cpu_s_per_mb_receiver"] {
        let x = m["extra"][k].as_f64().unwrap_or(-1.0);
        assert!(x.is_finite() && x > 0.0, "{k}: {x} in {m}");
    }
}

#[test]
fn parallel_three_where_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let o = touchstone(
        dir.path(),
        &[
            "run",
            "--quick",
            "--json",
            "-r",
            "3",
            "-P",
            "3",
            "lat_pipe",
            "lat_unix_connect",
            "bw_unix/size:64k",
            "lat_mmap/size:64k",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ms = v["runs"][0]["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 4);
    for m in ms {
        assert_eq!(m["parallel"].as_u64(), Some(3), "{m}");
    }
}

#[test]
fn bad_parameters_fail_before_anything_runs() {
    let cases: &[(&[&str], &str)] = &[
        (&["run", "bw_tcp/size:8m"], "out of range"),
        (&["run", "bw_pipe/size:512"], "out of range"),
        (&["run", "lat_udp/size:64k"], "out of range"),
        (&["run", "lat_select/n:0"], "out of range"),
        (&["run", "lat_select/n:1001"], "out of range"),
        (&["run", "lat_tcp/port:5000"], "unknown parameter"),
        (&["run", "lat_fs/dir:/"], "unknown parameter"),
        (&["run", "-P", "3", "lat_connect"], "TIME_WAIT"),
        (&["run", "-P", "2", "lat_http"], "TIME_WAIT"),
    ];
    for (args, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let o = touchstone(dir.path(), args);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        // Nothing ran: no database was even created.
        assert!(!dir.path().join("db.sqlite").exists(), "{args:?}");
    }
}
