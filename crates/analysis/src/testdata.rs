//! Synthetic runs, measurements and load curves for the analysis tests.

use touchstone_results::convergence::Rule;
use touchstone_results::curve::{
    latency_histogram, Convergence, CpuSplit, Curve, Latency, Point, ServiceDemand, Trial,
};
use touchstone_results::{Measurement, Run, Summary, Unit};

pub fn run(id: &str, host: &str, measurements: Vec<Measurement>) -> Run {
    Run {
        measurements,
        ..Run::synthetic(id, host)
    }
}

/// Eleven samples within ±1 % of `value`.
pub fn meas(name: &str, group: &str, unit: Unit, value: f64) -> Measurement {
    let samples: Vec<f64> = (0..11)
        .map(|i| value * (1.0 + (i as f64 - 5.0) * 0.002))
        .collect();
    with_samples(name, group, unit, samples)
}

pub fn with_samples(name: &str, group: &str, unit: Unit, samples: Vec<f64>) -> Measurement {
    Measurement::synthetic(name, group, unit, samples)
}

/// A figure measured in rounds: `rounds[k]` holds round k's samples.
pub fn with_rounds(name: &str, group: &str, unit: Unit, rounds: &[Vec<f64>]) -> Measurement {
    let samples: Vec<f64> = rounds.iter().flatten().copied().collect();
    let of_round: Vec<u32> = rounds
        .iter()
        .enumerate()
        .flat_map(|(k, r)| std::iter::repeat_n(k as u32, r.len()))
        .collect();
    let mut m = with_samples(name, group, unit, samples);
    m.summary = Summary::of_rounds(&m.samples, &of_round, m.statistic).unwrap();
    m.rounds = of_round;
    m
}

/// A point of a load curve: `throughput` ± `half` at (`load`, `cpus`),
/// three converged trials, an empty latency histogram.
pub fn point(load: u32, cpus: u32, throughput: f64, half: f64) -> Point {
    let trial = Trial {
        throughput,
        ops: (throughput * 3.0) as u64,
        window_ns: 3_000_000_000,
        bytes: None,
        dropped: false,
        cpu: CpuSplit::default(),
        service_demand: ServiceDemand::default(),
        self_check: None,
        extra: Default::default(),
    };
    Point {
        load,
        cpus,
        cpu_ids: (0..cpus).collect(),
        cpu_choice: None,
        trials: vec![trial.clone(), trial.clone(), trial],
        throughput,
        throughput_half_width: half,
        bytes_per_s: None,
        convergence: Convergence {
            rule: Rule::default(),
            width: Some(2.0 * half / throughput),
            converged: true,
            cut_by_budget: false,
        },
        latency: Latency::of(&latency_histogram()),
        by_type: vec![],
        cpu: CpuSplit::default(),
        service_demand: ServiceDemand::default(),
        self_check: None,
        extra: Default::default(),
    }
}

/// A curve of the workload "synthetic_rr" made of `points`.
pub fn curve(points: Vec<Point>) -> Curve {
    Curve {
        workload: "synthetic_rr".into(),
        params: Default::default(),
        operation: "transaction".into(),
        points,
        bytes_per_op: None,
        unmeasured_cpus: vec![],
    }
}
