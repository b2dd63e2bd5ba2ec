//! A run judged against its host's history and its class, on synthetic runs.

use chrono::{Duration, TimeZone, Utc};

use super::*;
use crate::testdata::{meas, run};

/// A run of `host` at hour `hour` whose lat_mem_rd figure is `ns` and
/// bw_mem figure `mbps` (eleven samples within ±1 %).
fn at(host: &str, hour: i64, ns: f64, mbps: f64) -> Run {
    let mut r = run(
        &format!("{host}-{hour}"),
        host,
        vec![
            meas("lat_mem_rd/stride:rand/size:64m", "mem", Unit::Ns, ns),
            meas("bw_mem/rd/size:256m", "mem", Unit::MBps, mbps),
            meas("cache_size", "mem", Unit::Bytes, 1e6),
        ],
    );
    r.started_at = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap() + Duration::hours(hour);
    r.host.cpu.model = "Xeon".into();
    r.host.cpu.threads = 8;
    r.host.memory_bytes = 32 << 30;
    r
}

/// Figures around `level` with a deterministic ±0.5 % wobble.
fn wobble(i: i64, level: f64) -> f64 {
    level * (1.0 + 0.005 * ((i * 7 % 5) as f64 - 2.0) / 2.0)
}

fn history(host: &str, n: i64) -> Vec<Run> {
    (0..n)
        .map(|i| at(host, i, wobble(i, 92.0), wobble(i, 10_000.0)))
        .collect()
}

#[test]
fn a_slow_node_is_found_against_its_history_and_its_class() {
    let own = history("node-7", 12);
    let peers: Vec<Run> = ["node-1", "node-2", "node-3", "node-4"]
        .iter()
        .enumerate()
        .map(|(i, h)| at(h, 20, wobble(i as i64, 92.0), wobble(i as i64, 10_000.0)))
        .collect();
    let judged = at("node-7", 30, 120.6, 10_010.0);
    let own_refs: Vec<&Run> = own.iter().collect();
    let class_refs: Vec<&Run> = peers.iter().collect();
    let a = assess(&judged, &own_refs, &class_refs);
    assert_eq!((a.own_runs, a.class_hosts), (12, 4));
    assert!(a.degraded());
    let f = a.findings();
    let names: Vec<(&str, Against)> = f
        .iter()
        .map(|j| (j.name.as_str(), j.judgement.against))
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names
        .iter()
        .all(|(n, _)| *n == "lat_mem_rd/stride:rand/size:64m"));
    let vs_class = f
        .iter()
        .find(|j| j.judgement.against == Against::Class)
        .unwrap();
    assert!((vs_class.judgement.shift() - 0.31).abs() < 0.02);
    assert_eq!(vs_class.judgement.n, 4);
    // The own spread went into the class judgement.
    assert!(vs_class.judgement.own_spread.is_some());
    // bw_mem is healthy on both; the size is not judged at all.
    assert_eq!(a.judged.len(), 4);
    assert!(a.judged.iter().all(|j| j.name != "cache_size"));
}

#[test]
fn the_same_node_unchanged_is_healthy_and_a_new_node_is_not_judged() {
    let own = history("node-7", 12);
    let refs: Vec<&Run> = own.iter().collect();
    let a = assess(&at("node-7", 30, 92.2, 9_990.0), &refs, &[]);
    assert!(!a.degraded(), "{:?}", a.findings());
    assert_eq!(a.judged.len(), 2);
    // No class: said so, per figure.
    assert!(a
        .not_judged
        .iter()
        .any(|n| n.against == Against::Class && n.why.contains("0 other host(s)")));
    // A node with three runs so far: its history does not judge yet.
    let a = assess(&at("node-9", 30, 500.0, 10.0), &refs[..3], &[]);
    assert!(!a.degraded());
    assert!(a
        .not_judged
        .iter()
        .any(|n| n.why.contains("0 run(s) of this host")));
    // Runs after the judged one, and the judged run itself, are not its history.
    let mut later = history("node-7", 12);
    for r in &mut later {
        r.started_at += Duration::days(30);
    }
    let refs: Vec<&Run> = later.iter().collect();
    let a = assess(&at("node-7", 30, 92.0, 10_000.0), &refs, &[]);
    assert_eq!(a.own_runs, 0);
}

#[test]
fn another_hardware_is_no_class() {
    let mut peers: Vec<Run> = ["a", "b", "c"]
        .iter()
        .map(|h| at(h, 1, 50.0, 20_000.0))
        .collect();
    for p in &mut peers {
        p.host.cpu.threads = 64;
    }
    let refs: Vec<&Run> = peers.iter().collect();
    let a = assess(&at("node-7", 30, 92.0, 10_000.0), &[], &refs);
    assert_eq!(a.class_hosts, 0);
    assert!(!a.degraded());
}
