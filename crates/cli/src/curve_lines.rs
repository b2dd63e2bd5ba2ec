//! Plain lines for load curves: one per point, for the progress of a sweep
//! and, until the report crate's curve tables exist
//! (`touchstone_report::terminal::curves`, another branch), for the printed
//! run. Replace `curves` below by that function when it lands.

use touchstone_results::curve::{Curve, Point};
use touchstone_results::units::{format_sig, format_value};
use touchstone_results::Unit;

/// One point: throughput with its interval and convergence, latency
/// percentiles, CPU busy and CPU per operation on each side.
pub fn point_line(operation: &str, p: &Point) -> String {
    let kept = p.kept_trials().count();
    let dropped = p.trials.len() - kept;
    let rel = if p.throughput > 0.0 {
        percent(p.throughput_half_width / p.throughput)
    } else {
        "-".into()
    };
    let reached = p.convergence.width.map_or("-".to_string(), percent);
    let converged = if p.convergence.converged {
        format!("converged: width {reached}")
    } else {
        format!(
            "NOT converged: width {reached} > {}",
            percent(p.convergence.rule.width)
        )
    };
    let trials = match dropped {
        0 => format!("{} trials", p.trials.len()),
        d => format!("{} trials, {d} dropped as warm-up", p.trials.len()),
    };
    let server = p
        .service_demand
        .server_ns_per_op
        .map(|s| format!(", server {}", format_value(Unit::Ns, s)))
        .unwrap_or_default();
    format!(
        "load {} on {} CPU{}: {} {operation}s/s ±{rel} ({trials}, {converged}); latency p50 {} p99 {} max {}; CPU {} % busy; CPU per {operation}: clients {}{server}",
        p.load,
        p.cpus,
        if p.cpus == 1 { "" } else { "s" },
        format_sig(p.throughput),
        format_value(Unit::Ns, p.latency.p50_ns as f64),
        format_value(Unit::Ns, p.latency.p99_ns as f64),
        format_value(Unit::Ns, p.latency.max_ns as f64),
        format_sig(100.0 * p.cpu.busy()),
        format_value(Unit::Ns, p.service_demand.client_ns_per_op),
    )
}

/// A fraction as a percentage with one decimal ("5.0 %").
fn percent(f: f64) -> String {
    if f.is_finite() {
        format!("{:.1} %", 100.0 * f)
    } else {
        "-".into()
    }
}

/// The name a curve is shown under: its workload and parameters.
pub fn curve_name(c: &Curve) -> String {
    let mut name = c.workload.clone();
    for (k, v) in &c.params {
        name.push_str(&format!("/{k}:{v}"));
    }
    name
}

/// Every curve of a run: a title line, then one line per point (a
/// placeholder for the report crate's curve tables).
pub fn curves(cs: &[Curve]) -> String {
    let mut out = String::new();
    for c in cs {
        out.push_str(&format!(
            "{} ({}s per second)\n",
            curve_name(c),
            c.operation
        ));
        if !c.unmeasured_cpus.is_empty() {
            out.push_str(&format!(
                "  not measured: {} CPUs (more than this machine has)\n",
                c.unmeasured_cpus
                    .iter()
                    .map(|k| k.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if c.points.is_empty() {
            out.push_str("  no point measured\n");
        }
        for p in &c.points {
            out.push_str(&format!("  {}\n", point_line(&c.operation, p)));
        }
    }
    out
}
