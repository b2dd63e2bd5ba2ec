//! CLI-level tests of the memory-hierarchy and processor families (issue 5):
//! a real `touchstone run` with a temporary database, derived figures
//! stored beside the measured ones, and clear refusals before anything runs.

use std::process::Command;

fn touchstone(db: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_touchstone"))
        .env("TOUCHSTONE_DB", db)
        .args(args)
        .output()
        .expect("run touchstone")
}

#[test]
fn lat_mem_rd_derives_the_memory_latency_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.sqlite");
    // The fully random chain from inside L1 to past twice the last-level
    // cache (the memory latency is read there and nowhere else).
    let llc = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("size")).ok())
        .filter_map(|t| t.trim().strip_suffix('K')?.parse::<u64>().ok())
        .max()
        .unwrap_or(32 << 10);
    let far = format!("{}k", 2 * llc);
    let spec = format!("lat_mem_rd/stride:rand/size:4k,8k,16k,24k,32k,{far}");
    let out = touchstone(&db, &["run", "--quick", "--json", &spec]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let ms = v["runs"][0]["measurements"]
        .as_array()
        .or_else(|| v[0]["measurements"].as_array())
        .cloned()
        .unwrap_or_default();
    let names: Vec<String> = ms
        .iter()
        .filter_map(|m| m["name"].as_str().map(String::from))
        .collect();
    assert!(
        names
            .iter()
            .any(|n| n == "lat_mem_rd/level:mem/stride:rand"),
        "{names:?}"
    );
    // Too sparse past L1 to place a step: no cache level is a figure; the
    // levels the OS reports are stored as not detected, with the reason.
    let levels: Vec<&serde_json::Value> = ms
        .iter()
        .filter(|m| m["name"].as_str().is_some_and(|n| n.contains("level:L")))
        .collect();
    for m in &levels {
        let why = m["invalid"].as_str().unwrap_or_default();
        assert!(why.starts_with("not detected: "), "{m}");
    }
}

#[test]
fn a_working_set_beyond_free_memory_is_refused_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.sqlite");
    let out = touchstone(&db, &["run", "lat_mem_rd/stride:64/size:64g"]);
    let avail = touchstone_results::host::available_memory_bytes().unwrap_or(u64::MAX);
    if avail < 64 << 30 {
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("MemAvailable"), "{err}");
    }
}

#[test]
fn mhz_refuses_parallel_and_bad_values_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.sqlite");
    let out = touchstone(&db, &["run", "mhz", "--parallel", "2"]);
    assert!(!out.status.success());
    let out = touchstone(&db, &["run", "bw_mem/rdd"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did you mean 'rd'"), "{err}");
}
