//! The HTML report's section for latency-under-load workloads (`rt_wake`,
//! `rt_dispatch`): per run and workload, one chart of the latency
//! distributions of every load level, read from each point's stored HDR
//! histogram — latency (log axis) against the percentile, drawn as
//! 1/(1 − q) on a log axis (10 = p90, 100 = p99, 1000 = p99.9 …), the
//! usual way of showing a tail. One line per background level and load.

use std::fmt::Write;

use touchstone_analysis::table::Matrix;
use touchstone_results::curve::Curve;

use super::charts::Chart;
use super::svg::{color, escape, plot, Dash, Layer, Plot, XAxis};
use crate::sheet;

/// The workloads whose curves are distributions worth drawing.
const FAMILIES: &[&str] = &["rt_wake", "rt_dispatch"];

/// Quantiles drawn: 1 − 10^(−j/4) for j = 0 … 16 (p0 … p99.99).
fn quantiles() -> impl Iterator<Item = f64> {
    (0..=16).map(|j| 1.0 - 10f64.powf(-(j as f64) / 4.0))
}

/// (1/(1 − q), latency ns) along a point's histogram, up to p99.99 and
/// as far as its samples reach (a point of n samples stops at 1/(1−q) ≤ n).
fn distribution(curve: &Curve, point: usize) -> Vec<(f64, f64)> {
    let p = &curve.points[point];
    let Ok(h) = p.latency.histogram.decode() else {
        return Vec::new();
    };
    if h.is_empty() {
        return Vec::new();
    }
    quantiles()
        .map(|q| (1.0 / (1.0 - q), q))
        .filter(|&(x, _)| x <= h.len() as f64 * (1.0 + 1e-9))
        .map(|(x, q)| (x, h.value_at_quantile(q).max(1) as f64))
        .collect()
}

/// One chart per run and latency workload.
pub fn charts(m: &Matrix, order: &[usize]) -> Vec<(String, Chart)> {
    let mut out = Vec::new();
    for &r in order {
        let run = m.runs[r];
        for family in FAMILIES {
            let curves: Vec<&Curve> = run
                .curves
                .iter()
                .filter(|c| c.workload == *family)
                .collect();
            if curves.is_empty() {
                continue;
            }
            let mut layers = Vec::new();
            for c in &curves {
                let label: Vec<String> = c.params.iter().map(|(k, v)| format!("{k}:{v}")).collect();
                for (i, p) in c.points.iter().enumerate() {
                    layers.push(Layer {
                        name: format!("{} · load {} · {} CPUs", label.join(" "), p.load, p.cpus),
                        color: color(layers.len()),
                        points: distribution(c, i),
                        bars: vec![],
                        dash: if p.load > 1 {
                            Dash::Dashed
                        } else {
                            Dash::Solid
                        },
                        markers: true,
                    });
                }
            }
            let title = format!("{family}: latency distribution per load level");
            let svg = plot(&Plot {
                title: &title,
                xaxis: XAxis::Log2,
                x_label: "percentile as 1/(1 − q): 10 = p90, 100 = p99, 1000 = p99.9 (log scale)",
                y_label: "latency (µs)",
                y_div: 1000.0,
                log_y: true,
                layers,
                marks: vec![],
            });
            out.push((
                format!("{family} · run {}", sheet::run_heading(run)),
                Chart { title, svg },
            ));
        }
    }
    out
}

/// The section: nothing when no run has a latency workload.
pub fn section(out: &mut String, m: &Matrix, order: &[usize]) {
    let charts = charts(m, order);
    if charts.is_empty() {
        return;
    }
    out.push_str(r#"<section id="latency-distributions"><h2>Latency under load: distributions</h2><p class="note">Each line is one load level (background and measuring threads or waiters) of rt_wake or rt_dispatch, from its stored histogram. Method: docs/latency-under-load.md.</p>"#);
    for (heading, chart) in charts {
        let _ = write!(out, r#"<h3 class="curve">{}</h3>"#, escape(&heading));
        super::chart_grid(out, std::slice::from_ref(&chart), false);
    }
    out.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{run, tcp_rr};
    use touchstone_results::curve::{latency_histogram, Latency};

    /// rt_wake curves for two background levels, from known samples.
    fn rt_wake(background: &str, slow: u64) -> Curve {
        let mut c = tcp_rr();
        c.workload = "rt_wake".into();
        c.params = [("background".to_string(), background.to_string())].into();
        c.points.truncate(2);
        for p in &mut c.points {
            let mut h = latency_histogram();
            for i in 0..10_000u64 {
                h.record(if i % 100 == 0 { slow } else { 20_000 + i })
                    .unwrap();
            }
            p.latency = Latency::of(&h);
        }
        c
    }

    #[test]
    fn a_line_per_load_level_from_the_stored_histograms() {
        let runs = vec![run(
            "aaaa0001",
            "alpha",
            vec![rt_wake("none", 50_000), rt_wake("cpu", 900_000), tcp_rr()],
        )];
        let m = Matrix::build(&runs).unwrap();
        let c = charts(&m, &[0]);
        assert_eq!(c.len(), 1, "one chart: tcp_rr has none");
        let svg = &c[0].1.svg;
        assert!(
            svg.contains("background:none · load 1") && svg.contains("background:cpu · load 2")
        );
        // The distribution reads the histogram: p99.9 of the cpu level is
        // its slow samples, p90 the fast ones.
        let cpu = rt_wake("cpu", 900_000);
        let d = distribution(&cpu, 0);
        assert_eq!(d.len(), 17);
        let at = |x: f64| d.iter().find(|p| (p.0 - x).abs() < 1e-6 * x).unwrap().1;
        assert!((at(10.0) - 29_000.0).abs() < 200.0, "{}", at(10.0));
        assert!((at(1000.0) - 900_000.0).abs() < 1000.0, "{}", at(1000.0));
        let page = super::super::page(&crate::Model::run(&runs[0]));
        assert!(page.contains(r#"<section id="latency-distributions">"#));
        let none = [run("aaaa0002", "beta", vec![tcp_rr()])];
        assert!(!super::super::page(&crate::Model::run(&none[0])).contains("latency-distributions"));
    }
}
