//! Synthetic runs for report tests and timing: realistic names, units,
//! groups and sample counts, and load curves made from known Universal
//! Scalability Law coefficients, written through the public results API.
#![allow(dead_code)]

use std::collections::BTreeMap;

use chrono::{Duration, TimeZone, Utc};
use touchstone_results::convergence::{mean_interval, Rule};
use touchstone_results::curve::{
    latency_histogram, CpuSplit, Curve, Latency, Point, ServiceDemand, Trial,
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
            rounds: 1,
            seed: None,
            workload: None,
        },
        started_at: t,
        ended_at: Some(t + Duration::seconds(60)),
        status: RunStatus::Complete,
        reason: None,
        warnings: vec![],
        notes: Vec::new(),
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
    let params = touchstone_catalogue::params::named_in(name);
    Measurement {
        name: name.into(),
        benchmark: name.split('/').next().unwrap().into(),
        group: group.into(),
        params,
        parallel,
        unit,
        statistic: Statistic::Median,
        rounds: Vec::new(),
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
    for (n, group, v) in [
        ("lat_pipe", "comm_lat", 5000.0),
        ("lat_unix", "comm_lat", 6000.0),
        ("lat_udp", "comm_lat", 9000.0),
        ("lat_tcp", "comm_lat", 12000.0),
        ("lat_fs/create:0k", "fs_lat", 8000.0),
        ("lat_fs/delete:0k", "fs_lat", 5000.0),
        ("lat_pagefault", "fs_lat", 200.0),
        ("lat_mmap/size:1m", "fs_lat", 30_000.0),
    ] {
        add(&mut r, n, group, Unit::Ns, 1, lat(v));
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
            Trial::synthetic(x, cpu, demand)
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
    Point::synthetic(load, cpus, trials, (mean, half), Latency::of(&h))
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
    Curve::synthetic("tcp_rr", &[("size", "4")], points)
}

/// The families of a farm node's run, as (name stem, group, unit, cases,
/// parallel levels, typical figure): 302 measurements in all, about the
/// quick suite's count, so a store of these runs has a real store's shape.
fn farm_families() -> Vec<(&'static str, &'static str, Unit, Vec<String>, Vec<u32>, f64)> {
    let list = |xs: &[&str]| -> Vec<String> { xs.iter().map(|s| s.to_string()).collect() };
    let keyed = |key: &str, xs: &[&str]| -> Vec<String> {
        xs.iter().map(|s| format!("{key}:{s}")).collect()
    };
    let cross = |a: &[String], b: &[String]| -> Vec<String> {
        a.iter()
            .flat_map(|x| b.iter().map(move |y| format!("{x}/{y}")))
            .collect()
    };
    let kib = [
        "1k", "2k", "4k", "8k", "16k", "32k", "64k", "128k", "256k", "512k", "1m", "2m", "4m",
        "8m", "16m", "32m", "64m",
    ];
    let bw_sizes = ["4k", "16k", "64k", "256k", "1m", "4m", "16m", "64m"];
    let lat_ctx = cross(
        &keyed("procs", &["2", "4", "8", "16", "32"]),
        &keyed("size", &["0k", "4k", "16k", "64k"]),
    );
    let bw_mem = cross(
        &list(&[
            "rd", "wr", "rdwr", "cp", "fwr", "frd", "fcp", "bzero", "bcopy",
        ]),
        &keyed("size", &bw_sizes),
    );
    let lat_mem = cross(
        &keyed("stride", &["16", "64", "128", "256"]),
        &keyed("size", &kib),
    );
    let ops = cross(
        &list(&["add", "mul", "div", "mod"]),
        &list(&["int", "int64", "float", "double"]),
    );
    let files = cross(
        &list(&["io_only", "open2close"]),
        &keyed("size", &["64k", "1m", "8m"]),
    );
    let fs = cross(
        &list(&["create", "delete"]),
        &keyed("size", &["0k", "1k", "4k", "10k"]),
    );
    let ipc = cross(
        &list(&["bw_pipe", "bw_unix", "bw_tcp"]),
        &keyed("msg", &["64k", "1m"]),
    );
    let sizes = |key: &str, xs: &[&str]| keyed(key, xs);
    vec![
        (
            "lat_syscall",
            "proc",
            Unit::Ns,
            list(&["null", "read", "write", "stat", "fstat", "open"]),
            vec![1, 2, 4],
            200.0,
        ),
        (
            "lat_proc",
            "proc",
            Unit::Ns,
            list(&["fork", "exec", "shell"]),
            vec![1],
            300_000.0,
        ),
        (
            "lat_sig",
            "proc",
            Unit::Ns,
            list(&["install", "catch", "prot"]),
            vec![1],
            900.0,
        ),
        (
            "mhz",
            "proc",
            Unit::Mhz,
            vec![String::new()],
            vec![1],
            3000.0,
        ),
        ("lat_ctx", "ctx", Unit::Ns, lat_ctx, vec![1], 3000.0),
        (
            "",
            "comm_lat",
            Unit::Ns,
            list(&[
                "lat_pipe",
                "lat_unix",
                "lat_udp",
                "lat_tcp",
                "lat_tcp_connect",
                "lat_unix_connect",
                "lat_fifo",
                "lat_sem",
                "lat_fcntl",
                "lat_select",
            ]),
            vec![1],
            8000.0,
        ),
        ("lat_fs", "fs_lat", Unit::Ns, fs, vec![1], 6000.0),
        (
            "lat_mmap",
            "fs_lat",
            Unit::Ns,
            sizes("size", &["64k", "1m", "16m", "256m", "1g"]),
            vec![1],
            30_000.0,
        ),
        ("", "comm_bw", Unit::MBps, ipc, vec![1], 7000.0),
        (
            "bw_file_rd",
            "fs_bw",
            Unit::MBps,
            files.clone(),
            vec![1],
            9000.0,
        ),
        ("bw_mmap_rd", "fs_bw", Unit::MBps, files, vec![1], 12_000.0),
        ("bw_mem", "mem_bw", Unit::MBps, bw_mem, vec![1], 20_000.0),
        (
            "stream",
            "mem_bw",
            Unit::MBps,
            list(&[
                "copy", "scale", "add", "triad", "v2/fill", "v2/copy", "v2/daxpy", "v2/sum",
            ]),
            vec![1],
            11_000.0,
        ),
        ("lat_mem_rd", "mem_lat", Unit::Ns, lat_mem, vec![1], 10.0),
        ("lat_ops", "cpu", Unit::Ns, ops.clone(), vec![1], 1.5),
        ("par_ops", "cpu", Unit::Count, ops, vec![1], 3.0),
        (
            "",
            "cpu",
            Unit::Mflops,
            list(&["dhrystone", "whetstone", "linpack"]),
            vec![1],
            3000.0,
        ),
        (
            "par_mem",
            "mem_lat",
            Unit::Count,
            sizes("size", &kib),
            vec![1],
            8.0,
        ),
        (
            "lat_rand_rd",
            "mem_lat",
            Unit::Ns,
            sizes("size", &kib[1..]),
            vec![1],
            60.0,
        ),
    ]
}

/// The id of the farm's run `index`: distinct in its first eight digits,
/// as real ids are (splitmix64 of the index).
pub fn farm_id(index: usize) -> String {
    let mut z = (index as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    format!("{:016x}", z ^ (z >> 31))
}

/// A farm node's run (`index` in the farm, on host `index % hosts`) of
/// 302 measurements as the harness stores them: seven samples, the timing
/// interval of each, the warnings a busy node gets. Nodes come in four
/// hardware models and differ by a few per cent; deterministic in `index`.
pub fn farm_run(index: usize, hosts: usize) -> Run {
    let mut rng = Rng::new(index as u64 + 1);
    let node = index % hosts.max(1);
    let model = node % 4;
    let speed = (1.0 + 0.25 * model as f64) * (1.0 + 0.04 * (rng.next() - 0.5));
    let mut r = run(
        &farm_id(index),
        &format!("node{node:04}"),
        Some(&format!("farm sitting {}", index / hosts.max(1))),
        (index / hosts.max(1)) as i64,
    );
    r.host.cpu.model = format!("Synthetic Xeon model {model}");
    r.host.cpu.threads = 8 << model;
    let mut clock_ns = 1_000_000_000_000u64 + index as u64 * 1_000_000;
    for (stem, group, unit, cases, parallels, typical) in farm_families() {
        for (c, case) in cases.iter().enumerate() {
            for &p in &parallels {
                let name = match (stem.is_empty(), case.is_empty()) {
                    (false, true) => stem.to_string(),
                    (true, _) => case.clone(),
                    (false, false) => format!("{stem}/{case}"),
                };
                let base = typical * (1.0 + 0.1 * c as f64) * (1.0 + 0.05 * f64::from(p - 1));
                let value = match unit.higher_is_better() {
                    Some(true) => base * speed,
                    _ => base / speed,
                };
                let samples: Vec<f64> = (0..7)
                    .map(|_| value * (1.0 + 0.03 * (2.0 * rng.next() - 1.0)))
                    .collect();
                let mut m = measurement(&name, group, unit, p, samples);
                for s in 0..7u64 {
                    let length = 2_000_000 + (rng.next() * 1e6) as u64;
                    m.intervals.push(touchstone_results::Interval {
                        process: 0,
                        start_ns: clock_ns,
                        end_ns: clock_ns + length,
                        iterations: 16_000 + s,
                        preemptions: u32::from(rng.next() < 0.3),
                        round: 0,
                    });
                    clock_ns += length + 5_000;
                }
                if p > 1 {
                    m.per_process = (0..p).map(|_| m.samples.clone()).collect();
                }
                if rng.next() < 0.3 {
                    m.warnings.push(touchstone_results::Warning::new(
                        touchstone_results::WarningCode::CiWide,
                        format!(
                            "95 % confidence interval is {:.1} % of the median",
                            2.0 + 10.0 * rng.next()
                        ),
                    ));
                }
                r.measurements.push(m);
            }
        }
    }
    r
}
