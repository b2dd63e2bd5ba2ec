//! The progress line of one measured point of a load curve, printed on
//! stderr as a sweep goes (the finished run's curves are printed as tables
//! by `touchstone_report::terminal::curves`).

use touchstone_results::convergence::{mean_sd, trials_needed};
use touchstone_results::curve::Point;
use touchstone_results::units::{format_sig, format_value};
use touchstone_results::Unit;

/// One point: throughput with its interval and convergence, latency
/// percentiles, CPU busy and CPU per operation on each side.
pub fn point_line(operation: &str, bytes_per_op: Option<u64>, p: &Point) -> String {
    let kept = p.kept_trials().count();
    let dropped = p.trials.len() - kept;
    let rel = if p.throughput > 0.0 {
        percent(p.throughput_half_width / p.throughput)
    } else {
        "-".into()
    };
    let reached = p.convergence.width.map_or("-".to_string(), percent);
    // What settling would cost at this spread: a short, noisy window needs
    // far more trials than the rule allows.
    let kept_x: Vec<f64> = p.kept_trials().map(|t| t.throughput).collect();
    let needed = trials_needed(&p.convergence.rule, &kept_x)
        .map(|n| {
            let (mean, sd) = mean_sd(&kept_x);
            format!(
                "; trials spread ±{}, about {n} would be needed — or a longer --window",
                percent(sd / mean)
            )
        })
        .unwrap_or_default();
    let converged = if p.convergence.converged {
        format!("converged: width {reached}")
    } else if p.convergence.cut_by_budget {
        format!(
            "NOT converged: width {reached} > {}, cut by the time budget (--budget){needed}",
            percent(p.convergence.rule.width)
        )
    } else {
        format!(
            "NOT converged: width {reached} > {}{needed}",
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
    // A bandwidth (fixed bytes per operation) also in MB/s.
    let bandwidth = bytes_per_op
        .map(|b| {
            format!(
                " = {}",
                format_value(Unit::MBps, p.throughput * b as f64 / 1e6)
            )
        })
        .unwrap_or_default();
    // Operations of different sizes (web): what each connection received.
    let bandwidth = match p.bit_rate_per_load() {
        Some(b) => format!("{bandwidth}, {} Mbit/s per connection", format_sig(b / 1e6)),
        None => bandwidth,
    };
    // touchstone's check on itself, when one of its threads was the limit.
    let bound = p
        .touchstone_bound()
        .map(|b| format!("; {b}"))
        .unwrap_or_default();
    format!(
        "load {} on {} CPU{}: {} {operation}s/s{bandwidth} ±{rel} ({trials}, {converged}); latency p50 {} p99 {} max {}; CPU {} % busy; CPU per {operation}: clients {}{server}{bound}",
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
