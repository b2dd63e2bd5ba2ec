//! Synthetic load curves for the report tests: deterministic figures with
//! every feature a report shows (several CPU counts, a dropped warm-up
//! trial, a point that did not converge, both sides' service demand).

use touchstone_results::convergence::{mean_interval, Rule};
use touchstone_results::curve::{
    latency_histogram, CpuSplit, Curve, Latency, Point, ServiceDemand, Trial,
};

/// A point at (`load`, `cpus`) whose kept trials are `throughput` ×
/// (1 − s, 1, 1 + s), with latency around `latency_ns` (p99 about 3×).
pub fn point(load: u32, cpus: u32, throughput: f64, spread: f64, latency_ns: u64) -> Point {
    let cpu = CpuSplit {
        user: 0.12,
        system: 0.55,
        irq: 0.01,
        softirq: 0.2,
        steal: 0.0,
        idle: 0.12,
    };
    let demand = ServiceDemand {
        client_ns_per_op: 4_100.0,
        server_ns_per_op: Some(3_050.0),
    };
    let trials: Vec<Trial> = [1.0 - spread, 1.0, 1.0 + spread]
        .into_iter()
        .map(|f| Trial::synthetic(throughput * f, cpu, demand))
        .collect();
    let xs: Vec<f64> = trials.iter().map(|t| t.throughput).collect();
    let (_, half) = mean_interval(&xs, Rule::default().confidence);
    let mut h = latency_histogram();
    for i in 0..1000u64 {
        // 98 % near the typical latency, a tail of 2 % at three times it.
        let v = if i % 50 == 0 {
            3 * latency_ns
        } else {
            latency_ns + i % 7
        };
        h.record(v).unwrap();
    }
    Point::synthetic(load, cpus, trials, (throughput, half), Latency::of(&h))
}

/// A tcp_rr-like curve: at 1 CPU, loads 1–4, saturating near 60 k/s; at 2
/// CPUs, loads 1–16, rising to about 105 k/s at 8 and falling at 16. The
/// 2-CPU point at load 4 did not converge; its load-1 point dropped a
/// warm-up trial.
pub fn tcp_rr() -> Curve {
    let mut points = vec![
        point(1, 1, 25_000.0, 0.002, 40_000),
        point(2, 1, 45_000.0, 0.004, 44_000),
        point(4, 1, 60_000.0, 0.005, 66_000),
    ];
    for (load, x, spread) in [
        (1, 26_000.0, 0.002),
        (2, 50_000.0, 0.003),
        (4, 88_000.0, 0.04),
        (8, 105_000.0, 0.006),
        (16, 96_000.0, 0.006),
    ] {
        points.push(point(load, 2, x, spread, 38_000 * u64::from(load)));
    }
    let first = &mut points[3];
    let mut warm = first.trials[0].clone();
    warm.throughput *= 0.8;
    warm.dropped = true;
    first.trials.insert(0, warm);
    Curve {
        unmeasured_cpus: vec![4],
        ..Curve::synthetic("tcp_rr", &[("size", "4")], points)
    }
}

/// Compare `text` with the stored snapshot `name` (in src/snapshots); with
/// `TOUCHSTONE_UPDATE_SNAPSHOTS=1`, store it instead (then review the diff).
pub fn snapshot(name: &str, text: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/snapshots")
        .join(name);
    if std::env::var_os("TOUCHSTONE_UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (TOUCHSTONE_UPDATE_SNAPSHOTS=1 writes it)",
            path.display()
        )
    });
    assert!(
        want == text,
        "{name} differs from the snapshot; got:\n{text}\n(TOUCHSTONE_UPDATE_SNAPSHOTS=1 stores it)"
    );
}

/// A run on host `host` holding `curves` and no measurements.
pub fn run(id: &str, host: &str, curves: Vec<Curve>) -> touchstone_results::Run {
    touchstone_results::Run {
        curves,
        ..touchstone_results::Run::synthetic(id, host)
    }
}

/// A measurement at `parallel` processes whose eleven samples lie within
/// ±1 % of `value` (tight enough that a 10 % difference is significant).
pub fn measurement(
    name: &str,
    group: &str,
    unit: touchstone_results::Unit,
    parallel: u32,
    value: f64,
) -> touchstone_results::Measurement {
    let samples: Vec<f64> = (0..11)
        .map(|i| value * (1.0 + (i as f64 - 5.0) * 0.002))
        .collect();
    touchstone_results::Measurement {
        params: name
            .split('/')
            .skip(1)
            .filter_map(|s| s.split_once(':'))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        parallel,
        ..touchstone_results::Measurement::synthetic(name, group, unit, samples)
    }
}

/// A run on host `host` holding `measurements` and no curves.
pub fn run_with(
    id: &str,
    host: &str,
    measurements: Vec<touchstone_results::Measurement>,
) -> touchstone_results::Run {
    let mut r = run(id, host, vec![]);
    r.measurements = measurements;
    r
}

/// fscache at `mode` (read or memcpy): tcp_rr's points as 4096-byte
/// reads, memcpy's `factor` times read's throughput.
pub fn fscache(mode: &str, factor: f64) -> Curve {
    let mut c = tcp_rr();
    c.workload = "fscache".into();
    c.operation = "read".into();
    c.bytes_per_op = Some(4096);
    c.params = [("buffer", "4k"), ("mode", mode)]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for p in &mut c.points {
        p.throughput *= factor;
        p.throughput_half_width *= factor;
    }
    c
}
