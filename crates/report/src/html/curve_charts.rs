//! The charts of one load curve: throughput against load with error bars,
//! the fitted USL curve and the knee marked; latency percentiles against
//! load on a log axis; scalability S(k) against CPUs with the ideal line
//! S(k) = k. One colour per CPU count, the same in every chart of a curve.

use touchstone_analysis::curve_analysis::CurveAnalysis;
use touchstone_analysis::usl::UslParams;
use touchstone_results::curve::{Curve, Point};
use touchstone_results::units::Scale;
use touchstone_results::Unit;

use super::charts::Chart;
use super::svg::{color, plot, Dash, Layer, Mark, Plot, XAxis};
use crate::curves::{rate_label, throughput_scale};

/// Samples of a fitted USL drawn as a smooth line.
const USL_SAMPLES: usize = 64;

fn cpus_name(k: u32) -> String {
    format!("{k} CPU{}", if k == 1 { "" } else { "s" })
}

/// A doubling ladder reads best on a log-2 axis; a short or even ladder on
/// a linear one.
fn load_axis(curve: &Curve) -> XAxis {
    let lo = curve
        .points
        .iter()
        .map(|p| p.load)
        .min()
        .unwrap_or(1)
        .max(1);
    let hi = curve.points.iter().map(|p| p.load).max().unwrap_or(1);
    if hi >= 8 * lo {
        XAxis::Log2
    } else {
        XAxis::Linear
    }
}

/// The model's throughput at `USL_SAMPLES` loads spanning [lo, hi], evenly
/// on the axis the chart uses.
fn usl_line(params: &UslParams, lo: f64, hi: f64, axis: XAxis) -> Vec<(f64, f64)> {
    (0..USL_SAMPLES)
        .map(|i| {
            let t = i as f64 / (USL_SAMPLES - 1) as f64;
            let n = match axis {
                XAxis::Linear => lo + t * (hi - lo),
                _ => lo * (hi / lo).powf(t),
            };
            (n, params.throughput(n))
        })
        .collect()
}

/// The points of CPU count `k` by load.
fn points_of(curve: &Curve, k: u32) -> Vec<&Point> {
    let mut v: Vec<&Point> = curve.points.iter().filter(|p| p.cpus == k).collect();
    v.sort_by_key(|p| p.load);
    v
}

/// The points of CPU count `k` whose throughput and interval are figures.
fn measured(curve: &Curve, k: u32) -> Vec<&Point> {
    points_of(curve, k)
        .into_iter()
        .filter(|p| p.throughput.is_finite() && p.throughput_half_width.is_finite())
        .collect()
}

/// Measured throughputs against load, each with its interval as a bar.
fn throughput_layer(name: String, color: &'static str, pts: &[&Point], dash: Dash) -> Layer {
    Layer {
        name,
        color,
        points: pts
            .iter()
            .map(|p| (f64::from(p.load), p.throughput))
            .collect(),
        bars: pts
            .iter()
            .map(|p| {
                (
                    p.throughput - p.throughput_half_width,
                    p.throughput + p.throughput_half_width,
                )
            })
            .collect(),
        dash,
        markers: true,
    }
}

/// Throughput against load: measured means with their intervals, the USL
/// fitted to each CPU count (dashed), each knee ringed.
pub fn throughput(curve: &Curve, a: &CurveAnalysis, title: &str) -> Chart {
    let axis = load_axis(curve);
    let mut layers = Vec::new();
    let mut marks = Vec::new();
    for (i, k) in a.by_cpus.iter().enumerate() {
        let finite = measured(curve, k.cpus);
        layers.push(throughput_layer(
            cpus_name(k.cpus),
            color(i),
            &finite,
            Dash::Solid,
        ));
        if let (Ok(fit), Some(first), Some(last)) = (&k.usl, finite.first(), finite.last()) {
            layers.push(Layer {
                name: format!("USL fit, {}", cpus_name(k.cpus)),
                color: color(i),
                points: usl_line(
                    &fit.params,
                    f64::from(first.load),
                    f64::from(last.load),
                    axis,
                ),
                bars: vec![],
                dash: Dash::Dashed,
                markers: false,
            });
        }
        if let Ok(Ok(knee)) = k.summary.as_ref().map(|s| &s.knee) {
            marks.push(Mark {
                x: knee.load,
                y: knee.throughput,
                label: format!("knee {}", knee.load),
                color: color(i),
            });
        }
    }
    against_load(curve, title, axis, layers, marks)
}

/// Several curves of one run on one chart (a curve and its baseline:
/// fscache's read and memcpy): one colour per curve, one dash per CPU
/// count, with their intervals; the first curve's scale.
pub fn overlay(curves: &[&Curve], names: &[&str], title: &str) -> Chart {
    let axis = curves
        .iter()
        .map(|c| load_axis(c))
        .find(|a| !matches!(a, XAxis::Linear))
        .unwrap_or(XAxis::Linear);
    let dashes = [Dash::Solid, Dash::Dashed, Dash::Dotted];
    let mut layers = Vec::new();
    for (i, (curve, name)) in curves.iter().zip(names).enumerate() {
        let mut counts: Vec<u32> = curve.points.iter().map(|p| p.cpus).collect();
        counts.sort_unstable();
        counts.dedup();
        for (j, &k) in counts.iter().enumerate() {
            layers.push(throughput_layer(
                format!("{name}, {}", cpus_name(k)),
                color(i),
                &measured(curve, k),
                dashes[j % dashes.len()],
            ));
        }
    }
    against_load(curves[0], title, axis, layers, Vec::new())
}

/// A throughput chart over loads in `curve`'s scale and operation.
fn against_load(
    curve: &Curve,
    title: &str,
    axis: XAxis,
    layers: Vec<Layer>,
    marks: Vec<Mark>,
) -> Chart {
    let scale = throughput_scale(curve);
    let y_label = format!("throughput ({})", rate_label(&curve.operation, &scale));
    let svg = plot(&Plot {
        title,
        xaxis: axis,
        x_label: "load (concurrent clients)",
        y_label: &y_label,
        y_div: scale.divisor,
        log_y: false,
        layers,
        marks,
    });
    Chart {
        title: title.to_string(),
        svg,
    }
}

/// Reads one latency percentile of a point, ns.
type Percentile = fn(&Point) -> u64;

/// Latency percentiles p50 (solid), p99 (dashed) and p99.9 (dotted)
/// against load, one colour per CPU count, on a log axis.
pub fn latency(curve: &Curve, a: &CurveAnalysis, title: &str) -> Chart {
    let all: Vec<f64> = curve
        .points
        .iter()
        .flat_map(|p| [p.latency.p50_ns, p.latency.p99_ns, p.latency.p999_ns])
        .map(|v| v as f64)
        .collect();
    let scale = Scale::for_column(Unit::Ns, &all);
    let mut layers = Vec::new();
    for (i, k) in a.by_cpus.iter().enumerate() {
        let pts = points_of(curve, k.cpus);
        let percentiles: [(&str, Percentile, Dash); 3] = [
            ("p50", |p| p.latency.p50_ns, Dash::Solid),
            ("p99", |p| p.latency.p99_ns, Dash::Dashed),
            ("p99.9", |p| p.latency.p999_ns, Dash::Dotted),
        ];
        for (name, value, dash) in percentiles {
            layers.push(Layer {
                name: format!("{name}, {}", cpus_name(k.cpus)),
                color: color(i),
                points: pts
                    .iter()
                    .filter(|p| p.latency.count > 0)
                    .map(|p| (f64::from(p.load), value(p) as f64))
                    .collect(),
                bars: vec![],
                dash,
                markers: true,
            });
        }
    }
    let y_label = format!("latency ({})", scale.label);
    let svg = plot(&Plot {
        title,
        xaxis: load_axis(curve),
        x_label: "load (concurrent clients)",
        y_label: &y_label,
        y_div: scale.divisor,
        log_y: true,
        layers,
        marks: vec![],
    });
    Chart {
        title: title.to_string(),
        svg,
    }
}

/// Scalability of the peaks S(k) = X(k)/X(1) against CPUs with its
/// interval, the ideal S(k) = k, and the USL over CPUs when it was fitted.
/// `None` when the curve has one CPU count or no S(k) (no 1-CPU peak).
pub fn scalability(a: &CurveAnalysis, title: &str) -> Option<Chart> {
    let s = a.scaling.as_ref()?;
    let at_peak = s.at_peak.as_ref().ok()?;
    let kmax = f64::from(*s.cpus.last()?);
    let mut layers = vec![
        Layer {
            name: "ideal S(k) = k".into(),
            color: "#7f7f7f",
            points: vec![(1.0, 1.0), (kmax, kmax)],
            bars: vec![],
            dash: Dash::Dashed,
            markers: false,
        },
        Layer {
            name: "S(k) of the peaks".into(),
            color: color(0),
            points: at_peak
                .iter()
                .map(|x| (f64::from(x.cpus), x.speedup))
                .collect(),
            bars: at_peak
                .iter()
                .map(|x| (x.speedup_low, x.speedup_high))
                .collect(),
            dash: Dash::Solid,
            markers: true,
        },
    ];
    if let Ok(fit) = &s.usl {
        // The model's own S(k): X(k) / X(1) = k / (1 + σ(k − 1) + κk(k − 1)).
        layers.push(Layer {
            name: "USL fit".into(),
            color: color(1),
            points: usl_line(&fit.params, 1.0, kmax, XAxis::Linear)
                .into_iter()
                .map(|(k, x)| (k, x / fit.params.lambda))
                .collect(),
            bars: vec![],
            dash: Dash::Dotted,
            markers: false,
        });
    }
    let svg = plot(&Plot {
        title,
        xaxis: XAxis::Linear,
        x_label: "CPUs",
        y_label: "S(k) = X(k) / X(1)",
        y_div: 1.0,
        log_y: false,
        layers,
        marks: vec![],
    });
    Some(Chart {
        title: title.to_string(),
        svg,
    })
}
