//! Synthetic runs, measurements and load curves for the analysis tests.

use touchstone_results::curve::{
    latency_histogram, CpuSplit, Curve, Latency, Point, ServiceDemand, Trial,
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
    let trial = Trial::synthetic(throughput, CpuSplit::default(), ServiceDemand::default());
    let trials = vec![trial.clone(), trial.clone(), trial];
    let latency = Latency::of(&latency_histogram());
    let mut p = Point::synthetic(load, cpus, trials, (throughput, half), latency);
    // Converged whatever the width: the tests set the widths they need.
    p.convergence.converged = true;
    p
}

/// A curve of the workload "synthetic_rr" made of `points`.
pub fn curve(points: Vec<Point>) -> Curve {
    Curve::synthetic("synthetic_rr", &[], points)
}

/// A curve point with a symmetric interval of ± `half`.
pub fn pt(load: f64, throughput: f64, half: f64) -> crate::curve::CurvePoint {
    crate::curve::CurvePoint {
        load,
        throughput,
        ci_low: throughput - half,
        ci_high: throughput + half,
    }
}

/// The load ladder touchstone sweeps by default.
pub const LADDER: [f64; 8] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0];

/// A curve on the first loads of `LADDER`: `throughputs[k]` ± `halves[k]`
/// at `LADDER[k]`.
pub fn on_ladder(throughputs: &[f64], halves: &[f64]) -> Vec<crate::curve::CurvePoint> {
    assert_eq!(throughputs.len(), halves.len(), "one half-width per point");
    LADDER
        .iter()
        .zip(throughputs.iter().zip(halves))
        .map(|(&load, (&y, &half))| pt(load, y, half))
        .collect()
}
