//! Synthetic runs for report tests and timing: realistic names, units,
//! groups and sample counts, and load curves made from known Universal
//! Scalability Law coefficients, written through the public results API.
#![allow(dead_code)]

use std::collections::BTreeMap;

use chrono::{Duration, TimeZone, Utc};
use touchstone_results::convergence::{mean_interval, Rule};
use touchstone_results::curve::{
    latency_histogram, Convergence, CpuSplit, Curve, Latency, Point, ServiceDemand, Trial,
};
use touchstone_results::host::{Cpu, Host};
use touchstone_results::{
    ClockInfo, Measurement, Run, RunOptions, RunStatus, Statistic, Summary, Tool, Unit,
};

/// A deterministic generator (xorshift) so synthetic data never flakes.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// Uniform in [0, 1).
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

pub fn run(id: &str, host: &str, label: Option<&str>, day: i64) -> Run {
    let t = Utc.with_ymd_and_hms(2024, 3, 1, 12, 0, 0).unwrap() + Duration::days(day);
    Run {
        id: id.into(),
        label: label.map(String::from),
        host: Host {
            hostname: host.into(),
            os: "Linux".into(),
            kernel: "6.1.0".into(),
            arch: "x86_64".into(),
            cpu: Cpu {
                model: format!("Synthetic CPU {host}"),
                sockets: 1,
                cores: 4,
                threads: 8,
                usable: 8,
                ..Default::default()
            },
            memory_bytes: 16 << 30,
            page_size: 4096,
            ..Default::default()
        },
        tool: Tool {
            name: "touchstone".into(),
            version: "0.1.0".into(),
            profile: "release".into(),
            rustc: None,
        },
        clock: ClockInfo {
            source: "CLOCK_MONOTONIC".into(),
            resolution_ns: 1.0,
            declared_resolution_ns: 1.0,
            read_cost_ns: 20.0,
            min_interval_ns: 20_000,
        },
        options: RunOptions {
            selection: vec![],
            repetitions: 11,
            parallel: vec![1],
            quick: false,
            target_interval_ns: 5_000_000,
            parallel_interval_ns: 20_000_000,
            warmup_ns: 0,
            workload: None,
        },
        started_at: t,
        ended_at: Some(t + Duration::seconds(60)),
        status: RunStatus::Complete,
        reason: None,
        warnings: vec![],
        measurements: vec![],
        curves: Vec::new(),
    }
}

/// A measurement from explicit samples.
pub fn measurement(
    name: &str,
    group: &str,
    unit: Unit,
    parallel: u32,
    samples: Vec<f64>,
) -> Measurement {
    let t = Utc.with_ymd_and_hms(2024, 3, 1, 12, 0, 0).unwrap();
    let params: BTreeMap<String, String> = name
        .split('/')
        .skip(1)
        .filter_map(|seg| seg.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Measurement {
        name: name.into(),
        benchmark: name.split('/').next().unwrap().into(),
        group: group.into(),
        params,
        parallel,
        unit,
        statistic: Statistic::Median,
        summary: Summary::of(&samples).expect("finite samples"),
        samples,
        per_process: vec![],
        intervals: vec![],
        baseline: None,
        warnings: vec![],
        extra: BTreeMap::new(),
        invalid: None,
        started_at: t,
        ended_at: t,
        convergence: None,
    }
}

/// Eleven samples around `value`, spread ±`noise` (a fraction).
pub fn noisy(rng: &mut Rng, value: f64, noise: f64) -> Vec<f64> {
    (0..11)
        .map(|_| value * (1.0 + noise * (2.0 * rng.next() - 1.0)))
        .collect()
}

/// A realistic run of about a hundred measurements for a machine that is
/// `speed` times as fast as a reference one.
pub fn realistic(id: &str, host: &str, speed: f64, seed: u64) -> Run {
    let mut rng = Rng::new(seed);
    let mut r = run(
        id,
        host,
        Some(&format!("synthetic ×{speed:.2}")),
        seed as i64,
    );
    let mut add = |r: &mut Run, name: &str, group: &str, unit: Unit, p: u32, v: f64| {
        let s = noisy(&mut rng, v, 0.02);
        r.measurements.push(measurement(name, group, unit, p, s));
    };
    let lat = |v: f64| v / speed;
    let bw = |v: f64| v * speed;
    for (n, v) in [
        ("null", 40.0),
        ("read", 90.0),
        ("write", 80.0),
        ("stat", 400.0),
        ("open", 900.0),
    ] {
        for p in [1, 2, 4] {
            add(
                &mut r,
                &format!("lat_syscall/{n}"),
                "proc",
                Unit::Ns,
                p,
                lat(v) * (1.0 + 0.1 * (p - 1) as f64),
            );
        }
    }
    for (n, v) in [
        ("fork", 90_000.0),
        ("exec", 300_000.0),
        ("shell", 900_000.0),
    ] {
        add(
            &mut r,
            &format!("lat_proc/{n}"),
            "proc",
            Unit::Ns,
            1,
            lat(v),
        );
    }
    add(&mut r, "mhz", "proc", Unit::Mhz, 1, 3000.0 * speed);
    for procs in [2, 8, 16] {
        for size in ["0k", "16k", "64k"] {
            add(
                &mut r,
                &format!("lat_ctx/procs:{procs}/size:{size}"),
                "ctx",
                Unit::Ns,
                1,
                lat(2000.0 + 100.0 * procs as f64),
            );
        }
    }
    for (n, v) in [
        ("lat_pipe", 5000.0),
        ("lat_unix", 6000.0),
        ("lat_udp", 9000.0),
        ("lat_tcp", 12000.0),
    ] {
        add(&mut r, n, "comm_lat", Unit::Ns, 1, lat(v));
    }
    for (n, v) in [
        ("lat_fs/create:0k", 8000.0),
        ("lat_fs/delete:0k", 5000.0),
        ("lat_pagefault", 200.0),
        ("lat_mmap/size:1m", 30_000.0),
    ] {
        add(&mut r, n, "fs_lat", Unit::Ns, 1, lat(v));
    }
    for (n, v) in [("bw_pipe", 4000.0), ("bw_unix", 9000.0), ("bw_tcp", 7000.0)] {
        add(&mut r, n, "comm_bw", Unit::MBps, 1, bw(v));
    }
    let sizes_bw = ["4k", "16k", "64k", "256k", "1m", "4m", "16m", "64m"];
    for op in ["rd", "wr", "cp"] {
        for (i, s) in sizes_bw.iter().enumerate() {
            let v = if i < 3 {
                60_000.0
            } else if i < 5 {
                30_000.0
            } else {
                12_000.0
            };
            add(
                &mut r,
                &format!("bw_mem/{op}/size:{s}"),
                "mem_bw",
                Unit::MBps,
                1,
                bw(v),
            );
        }
    }
    for k in ["copy", "scale", "add", "triad"] {
        add(
            &mut r,
            &format!("stream/{k}"),
            "mem_bw",
            Unit::MBps,
            1,
            bw(11_000.0),
        );
    }
    let kib = [
        1u64, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536,
    ];
    for stride in [64, 128] {
        for s in kib {
            let v = if s <= 32 {
                1.2
            } else if s <= 512 {
                4.0
            } else if s <= 8192 {
                12.0
            } else {
                80.0
            };
            let v = v * if stride == 128 { 1.3 } else { 1.0 };
            let size = if s >= 1024 {
                format!("{}m", s / 1024)
            } else {
                format!("{s}k")
            };
            add(
                &mut r,
                &format!("lat_mem_rd/stride:{stride}/size:{size}"),
                "mem_lat",
                Unit::Ns,
                1,
                lat(v),
            );
        }
    }
    for (n, v) in [("dhrystone", 20_000.0)] {
        add(&mut r, n, "cpu", Unit::Dmips, 1, bw(v));
    }
    add(&mut r, "whetstone", "cpu", Unit::Mwips, 1, bw(5000.0));
    add(&mut r, "linpack", "cpu", Unit::Mflops, 1, bw(3000.0));
    r
}

/// One point of a synthetic load curve: three trials within ±`noise` of
/// `throughput`, their Student-t interval, latencies of a closed loop
/// (load / throughput per operation) with a tail (2 % at 2×, 0.2 % at 5×,
/// so that p50, p99 and p99.9 differ), and a CPU split.
pub fn curve_point(rng: &mut Rng, load: u32, cpus: u32, throughput: f64, noise: f64) -> Point {
    let rule = Rule::default();
    let cpu = CpuSplit {
        user: 0.15,
        system: 0.5,
        irq: 0.0,
        softirq: 0.2,
        steal: 0.0,
        idle: 0.15,
    };
    let demand = ServiceDemand {
        client_ns_per_op: 3_000.0 + 10.0 * f64::from(load),
        server_ns_per_op: Some(2_500.0),
    };
    let trials: Vec<Trial> = (0..3)
        .map(|_| {
            let x = throughput * (1.0 + noise * (2.0 * rng.next() - 1.0));
            Trial {
                throughput: x,
                ops: (x * 3.0) as u64,
                window_ns: 3_000_000_000,
                bytes: None,
                dropped: false,
                cpu,
                service_demand: demand,
            }
        })
        .collect();
    let xs: Vec<f64> = trials.iter().map(|t| t.throughput).collect();
    let (mean, half) = mean_interval(&xs, rule.confidence);
    let mut h = latency_histogram();
    // Little's law for a closed loop: each of `load` clients waits load/X.
    let typical = (f64::from(load) / mean * 1e9) as u64;
    for i in 0..2000u64 {
        let v = if i % 500 == 0 {
            5 * typical
        } else if i % 50 == 0 {
            2 * typical
        } else {
            typical + i % 13
        };
        h.record(v.max(1)).unwrap();
    }
    Point {
        load,
        cpus,
        cpu_ids: (0..cpus).collect(),
        trials,
        throughput: mean,
        throughput_half_width: half,
        bytes_per_s: None,
        convergence: Convergence {
            rule,
            width: Some(2.0 * half / mean),
            converged: 2.0 * half / mean <= rule.width,
            cut_by_budget: false,
        },
        latency: Latency::of(&h),
        by_type: vec![],
        cpu,
        service_demand: demand,
    }
}

/// A tcp_rr-like load curve at each of `cpus` CPU counts over `loads`,
/// following the USL X(N) = λN / (1 + σ(N − 1) + κN(N − 1)) with λ
/// growing with the CPUs (λ·k^0.9 at k CPUs), ±`noise` per trial.
pub fn usl_curve(
    rng: &mut Rng,
    cpus: &[u32],
    loads: &[u32],
    lambda: f64,
    sigma: f64,
    kappa: f64,
    noise: f64,
) -> Curve {
    let mut points = Vec::new();
    for &k in cpus {
        let l1 = lambda * f64::from(k).powf(0.9);
        for &n in loads {
            let n_f = f64::from(n);
            let x = l1 * n_f / (1.0 + sigma * (n_f - 1.0) + kappa * n_f * (n_f - 1.0));
            points.push(curve_point(rng, n, k, x, noise));
        }
    }
    Curve {
        workload: "tcp_rr".into(),
        params: [("size".to_string(), "4".to_string())].into(),
        operation: "transaction".into(),
        points,
        bytes_per_op: None,
        unmeasured_cpus: vec![],
    }
}
