//! Load curves as text: for each CPU count of a curve, a sheet with one row
//! per load (throughput ± interval, convergence, latency, CPU split, service
//! demand, S(k)) and one line with the peak, knee, crossover and USL fit;
//! then the curve's lines across CPU counts. The terminal, Markdown and HTML
//! renderers draw these, so they always agree. Every figure comes from
//! `touchstone_analysis::curve_analysis`; a figure the data do not support
//! is printed as absent with its reason.

use touchstone_analysis::compare::{Ratio, Verdict};
use touchstone_analysis::compare_curves::{
    curve_title, CurveComparison, PeakComparison, PeakSide, PointComparison, PointSide,
};
use touchstone_analysis::curve::{CurveError, CurveSummary, Scaling};
use touchstone_analysis::curve_analysis::{CpuCountAnalysis, CurveAnalysis};
use touchstone_analysis::table::Matrix;
use touchstone_analysis::usl::{Interval, UslError, UslFit};
use touchstone_results::convergence::{mean_sd, trials_needed};
use touchstone_results::curve::{Curve, Point};
use touchstone_results::units::{format_sig, format_value, Scale};
use touchstone_results::{Run, Unit};

use crate::curve_flags::{
    bound_text, flag_notes, peak_scaling_text, scaling_cell, throughput_cell, usl_over_cpus_bound,
};
use crate::model::Compared;
use crate::sheet::{ratio_text, run_heading, Sheet, WARNING_MARK};

mod comparison;
pub use comparison::comparison_sheets;

/// The short name of an operation in a rate: "trans" for transactions,
/// "req" for requests, "msg" for messages, "ops" for anything else.
pub fn operation_abbrev(operation: &str) -> &'static str {
    match operation {
        "transaction" | "transactions" => "trans",
        "request" | "requests" => "req",
        "message" | "messages" => "msg",
        _ => "ops",
    }
}

/// The label of a throughput in `scale` (a `Unit::OpsPerSec` scale):
/// "k trans/s", "ops/s", "M req/s".
pub fn rate_label(operation: &str, scale: &Scale) -> String {
    // A bandwidth scale (`throughput_scale` of a curve with bytes per
    // operation) is its own label.
    if scale.label.ends_with("B/s") {
        return scale.label.to_string();
    }
    let prefix = scale.label.trim_end_matches("/s");
    let op = operation_abbrev(operation);
    if prefix.is_empty() {
        format!("{op}/s")
    } else {
        format!("{prefix} {op}/s")
    }
}

/// The one throughput scale of a curve (all its points, so that every
/// table and line of the curve reads in the same unit).
/// A curve whose operations move a fixed number of bytes reads in MB/s
/// (10^6 bytes, as STREAM): its scale divides operations/s into MB/s.
pub fn throughput_scale(curve: &Curve) -> Scale {
    let xs: Vec<f64> = curve.points.iter().map(|p| p.throughput).collect();
    match curve.bytes_per_op {
        Some(bytes) if bytes > 0 => {
            let mb_per_op = bytes as f64 / 1e6;
            let mbps: Vec<f64> = xs.iter().map(|x| x * mb_per_op).collect();
            let s = Scale::for_column(Unit::MBps, &mbps);
            Scale {
                label: s.label,
                divisor: s.divisor / mb_per_op,
            }
        }
        _ => Scale::for_column(Unit::OpsPerSec, &xs),
    }
}

/// "7.2 %" for a fraction.
pub fn percent(fraction: f64) -> String {
    if fraction.is_finite() {
        format!("{:.1} %", fraction * 100.0)
    } else {
        "-".into()
    }
}

fn interval_text(iv: &Interval) -> String {
    let end = |v: f64| {
        if v == f64::INFINITY {
            "∞".to_string()
        } else {
            coefficient(v)
        }
    };
    format!("[{}–{}]", end(iv.low), end(iv.high))
}

/// The convergence cell: the width reached, flagged when the point did not
/// converge.
pub fn convergence_cell(p: &Point) -> String {
    let width = p.convergence.width.map_or("-".to_string(), percent);
    if p.convergence.converged {
        width
    } else {
        format!("{width}{WARNING_MARK}")
    }
}

/// The trials cell: kept trials, "+1" when a warm-up trial was dropped.
pub fn trials_cell(p: &Point) -> String {
    let kept = p.kept_trials().count();
    let dropped = p.trials.len() - kept;
    if dropped > 0 {
        format!("{kept}+{dropped}")
    } else {
        kept.to_string()
    }
}

/// "88 (12/55/20)": the CPUs' busy share, then its user, system and
/// softirq parts, percent.
pub fn cpu_cell(p: &Point) -> String {
    format!(
        "{:.0} ({:.0}/{:.0}/{:.0})",
        p.cpu.busy() * 100.0,
        p.cpu.user * 100.0,
        p.cpu.system * 100.0,
        p.cpu.softirq * 100.0
    )
}

/// A mean and its interval's half-width in one scale, the half-width to as
/// many decimals as the mean shows: "25.00 ± 0.12", "1825 ± 14".
pub fn mean_pm(scale: &Scale, mean: f64, half: f64) -> String {
    let m = scale.format(mean);
    let decimals = match m.split_once('.') {
        Some((_, frac)) if !m.contains('e') => frac.len(),
        _ => 0,
    };
    let h = half / scale.divisor;
    if h.is_finite() {
        format!("{m} ± {h:.decimals$}")
    } else {
        format!("{m} ± ∞")
    }
}

/// A fitted coefficient: four significant digits; below 10⁻¹² it is a
/// coefficient held at its bound of 0 up to rounding, and printed as 0.
fn coefficient(v: f64) -> String {
    if v.abs() < 1e-12 {
        "0".into()
    } else {
        format_sig(v)
    }
}

/// S(k) with its interval, e.g. "1.85 [1.70–2.01]".
pub fn scaling_text(s: &Scaling) -> String {
    format!(
        "{} [{}–{}]",
        format_sig(s.speedup),
        format_sig(s.speedup_low),
        format_sig(s.speedup_high)
    )
}

/// The table of one CPU count's points, by load.
pub fn points_sheet(curve: &Curve, a: &CurveAnalysis, k: &CpuCountAnalysis) -> Sheet {
    let tscale = throughput_scale(curve);
    let mine: Vec<&Point> = {
        let mut v: Vec<&Point> = curve.points.iter().filter(|p| p.cpus == k.cpus).collect();
        v.sort_by_key(|p| p.load);
        v
    };
    let ns_scale = |f: fn(&Point) -> Option<f64>| {
        let xs: Vec<f64> = mine.iter().filter_map(|p| f(p)).collect();
        Scale::for_column(Unit::Ns, &xs)
    };
    let p50 = ns_scale(|p| Some(p.latency.p50_ns as f64));
    let p99 = ns_scale(|p| Some(p.latency.p99_ns as f64));
    let demand = {
        let xs: Vec<f64> = mine
            .iter()
            .flat_map(|p| {
                let d = p.service_demand;
                std::iter::once(d.client_ns_per_op).chain(d.server_ns_per_op)
            })
            .collect();
        Scale::for_column(Unit::Ns, &xs)
    };
    let has_server = mine
        .iter()
        .any(|p| p.service_demand.server_ns_per_op.is_some());
    // Bit rate per connection where the workload counted bytes (web).
    let bits = mine.iter().any(|p| p.bytes_per_s.is_some());
    // S(k) beside every CPU count but 1, where it is 1 by definition.
    let scaling = a.scaling.as_ref().filter(|_| k.cpus != 1);

    let mut header: Vec<String> = vec![
        "load".into(),
        format!("throughput ({})", rate_label(&curve.operation, &tscale)),
        "CI width".into(),
        "trials".into(),
        format!("p50 ({})", p50.label),
        format!("p99 ({})", p99.label),
        "CPU % (usr/sys/si)".into(),
        if has_server {
            format!("CPU/op client/server ({})", demand.label)
        } else {
            format!("CPU/op ({})", demand.label)
        },
    ];
    if bits {
        header.insert(2, "Mbit/s per conn".into());
    }
    if scaling.is_some() {
        header.push("S(k) [CI]".into());
    }
    let rows = mine
        .iter()
        .map(|p| {
            let d = p.service_demand;
            let mut row = vec![
                p.load.to_string(),
                throughput_cell(&tscale, p),
                convergence_cell(p),
                trials_cell(p),
                p50.format(p.latency.p50_ns as f64),
                p99.format(p.latency.p99_ns as f64),
                cpu_cell(p),
                match (has_server, d.server_ns_per_op) {
                    (false, _) => demand.format(d.client_ns_per_op),
                    (true, Some(s)) => {
                        format!("{}/{}", demand.format(d.client_ns_per_op), demand.format(s))
                    }
                    (true, None) => format!("{}/-", demand.format(d.client_ns_per_op)),
                },
            ];
            if bits {
                let rate = p.bit_rate_per_load();
                row.insert(2, rate.map_or("-".into(), |b| format_sig(b / 1e6)));
            }
            if let Some(s) = scaling {
                row.push(
                    s.at(p.load, p.cpus)
                        .map_or("-".into(), |x| scaling_cell(x, s.bound_at(p.load, p.cpus))),
                );
            }
            row
        })
        .collect();
    let numeric = header.iter().map(|_| true).collect();
    Sheet {
        title: cpu_count_title(curve, k.cpus),
        group: "curves".into(),
        header,
        numeric,
        key_columns: 1,
        rows,
    }
}

/// "tcp_rr size:4 · 2 CPUs (0,1)", and why those CPUs where the run
/// says: "… (0,2) — one thread on each of 2 core(s), SMT siblings left
/// idle, in package 0 (node 0)".
pub fn cpu_count_title(curve: &Curve, cpus: u32) -> String {
    let ids = curve
        .points
        .iter()
        .find(|p| p.cpus == cpus && !p.cpu_ids.is_empty())
        .map(|p| {
            let ids: Vec<String> = p.cpu_ids.iter().map(u32::to_string).collect();
            let why = p
                .cpu_choice
                .as_ref()
                .map(|w| format!(" — {w}"))
                .unwrap_or_default();
            format!(" ({}){why}", ids.join(","))
        })
        .unwrap_or_default();
    format!(
        "{} · {cpus} CPU{}{ids}",
        curve_title(&curve.workload, &curve.params),
        if cpus == 1 { "" } else { "s" }
    )
}

/// The peak, knee and crossover in words, in the curve's throughput unit.
pub fn summary_text(curve: &Curve, s: &Result<CurveSummary, CurveError>) -> String {
    let scale = throughput_scale(curve);
    let unit = rate_label(&curve.operation, &scale);
    let s = match s {
        Ok(s) => s,
        Err(e) => return format!("peak, knee, crossover: not computed — {e}"),
    };
    let p = &s.peak;
    let plateau = if p.is_plateau() {
        let loads: Vec<u32> = p.plateau.iter().map(|&i| curve.points[i].load).collect();
        format!(
            " (highest mean at {}; plateau {}–{})",
            p.load_at_max,
            loads.first().copied().unwrap_or_default(),
            loads.last().copied().unwrap_or_default()
        )
    } else {
        String::new()
    };
    let peak = format!(
        "peak {} {unit} at load {}{plateau}",
        mean_pm(&scale, p.throughput, p.ci_high - p.throughput),
        p.load
    );
    let knee = match &s.knee {
        Ok(k) => format!(
            "knee at load {} ({} {unit})",
            k.load,
            scale.format(k.throughput)
        ),
        Err(no) => format!("knee: not detected — {}", no.reason()),
    };
    let crossover = match &s.crossover {
        Some(c) => format!(
            "crossover at load {} ({} {unit})",
            c.load,
            scale.format(c.throughput)
        ),
        None => "crossover: none".into(),
    };
    format!("{peak}; {knee}; {crossover}")
}

/// The USL fit in words: σ, κ, N* with their intervals, or why not.
/// `over` names the axis ("load", "CPUs").
pub fn usl_text(fit: &Result<UslFit, UslError>, over: &str) -> String {
    let fit = match fit {
        Ok(f) => f,
        Err(e) => return format!("USL over {over}: not fitted — {e}"),
    };
    let p = &fit.params;
    let iv = fit.intervals.as_ref();
    let with = |v: f64, i: Option<&Interval>| match i {
        Some(i) => format!("{} {}", coefficient(v), interval_text(i)),
        None => coefficient(v),
    };
    let n_star = match fit.peak_load {
        Some(n) => format!("N* {}", with(n, iv.map(|i| &i.peak_load))),
        None if p.sigma < 1.0 => "N* none (κ = 0: no peak predicted)".into(),
        None => "N* none (σ ≥ 1: throughput never rises)".into(),
    };
    let r2 = fit
        .r_squared
        .map_or(String::new(), |r| format!(", R² {r:.4}"));
    let level = match iv {
        Some(i) => format!(", {:.0} % bootstrap intervals", i.level * 100.0),
        None => format!(
            ", no intervals ({} point(s) leave no residual to resample)",
            fit.points
        ),
    };
    format!(
        "USL over {over}: σ {}, κ {}, {n_star}{r2}{level}",
        with(p.sigma, iv.map(|i| &i.sigma)),
        with(p.kappa, iv.map(|i| &i.kappa)),
    )
}

/// The parameter that makes a curve and its baseline: fscache's `mode`
/// (read, and memcpy at the same buffer and processes, which 003 measured
/// first to see whether copying alone scales).
pub const MODE_PARAM: &str = "mode";

/// Curves of one run shown together: the same workload with the same
/// parameters but `mode`, in their order; only groups of two or more.
pub fn mode_groups<'c>(curves: impl IntoIterator<Item = &'c Curve>) -> Vec<Vec<&'c Curve>> {
    let mut groups: Vec<Vec<&Curve>> = Vec::new();
    for c in curves
        .into_iter()
        .filter(|c| c.params.contains_key(MODE_PARAM))
    {
        let rest = |c: &Curve| {
            let mut p = c.params.clone();
            p.remove(MODE_PARAM);
            (c.workload.clone(), p)
        };
        match groups.iter_mut().find(|g| rest(g[0]) == rest(c)) {
            Some(g) => g.push(c),
            None => groups.push(vec![c]),
        }
    }
    groups.retain(|g| g.len() > 1);
    groups
}

/// The title of a mode group: the workload and the parameters they share.
pub fn mode_group_title(group: &[&Curve]) -> String {
    let mut shared = group[0].params.clone();
    shared.remove(MODE_PARAM);
    let modes: Vec<&str> = group
        .iter()
        .map(|c| c.params[MODE_PARAM].as_str())
        .collect();
    format!(
        "{} — {} side by side",
        curve_title(&group[0].workload, &shared),
        modes.join(" and ")
    )
}

/// A mode group as one sheet: per CPU count and load, each mode's
/// throughput (in the first curve's scale) and each later mode's ratio to
/// the first, where both were measured.
pub fn mode_sheet(group: &[&Curve]) -> Sheet {
    let scale = throughput_scale(group[0]);
    let modes: Vec<&str> = group
        .iter()
        .map(|c| c.params[MODE_PARAM].as_str())
        .collect();
    let unit = rate_label(&group[0].operation, &scale);
    let mut header = vec!["CPUs".to_string(), "load".to_string()];
    header.extend(modes.iter().map(|m| format!("{m} ({unit})")));
    header.extend(modes[1..].iter().map(|m| format!("{} ÷ {m}", modes[0])));
    let mut keys: Vec<(u32, u32)> = group
        .iter()
        .flat_map(|c| c.points.iter().map(|p| (p.cpus, p.load)))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let find = |c: &Curve, (k, l): (u32, u32)| {
        c.points
            .iter()
            .find(|p| p.cpus == k && p.load == l)
            .map(|p| p.throughput)
    };
    let rows = keys
        .iter()
        .map(|&key| {
            let xs: Vec<Option<f64>> = group.iter().map(|c| find(c, key)).collect();
            let mut row = vec![key.0.to_string(), key.1.to_string()];
            row.extend(xs.iter().map(|x| x.map_or("-".into(), |x| scale.format(x))));
            row.extend(xs[1..].iter().map(|x| match (xs[0], x) {
                (Some(a), Some(b)) if *b > 0.0 => format_sig(a / b),
                _ => "-".into(),
            }));
            row
        })
        .collect();
    let numeric = header.iter().map(|_| true).collect();
    Sheet {
        title: mode_group_title(group),
        group: "curves".into(),
        header,
        numeric,
        key_columns: 2,
        rows,
    }
}

/// One CPU count's table and its line.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuCountBlock {
    pub sheet: Sheet,
    /// Peak, knee, crossover and the USL over load, on one line.
    pub line: String,
}

/// A whole curve as text.
#[derive(Debug, Clone, PartialEq)]
pub struct CurveText {
    pub title: String,
    pub blocks: Vec<CpuCountBlock>,
    /// Scalability across CPU counts, the USL over CPUs, points left out,
    /// CPU counts not measured, the convergence flag's meaning.
    pub notes: Vec<String>,
}

/// The text of `curve` given its analysis.
pub fn curve_text(curve: &Curve, a: &CurveAnalysis) -> CurveText {
    let blocks = a
        .by_cpus
        .iter()
        .map(|k| CpuCountBlock {
            sheet: points_sheet(curve, a, k),
            line: format!(
                "{}; {}{}",
                summary_text(curve, &k.summary),
                usl_text(&k.usl, "load"),
                bound_text(curve, k)
            ),
        })
        .collect();
    let mut notes = Vec::new();
    if let Some(s) = &a.scaling {
        notes.push(match &s.at_peak {
            Ok(v) => format!(
                "scalability of the peaks: {}",
                v.iter()
                    .filter(|x| x.cpus != 1)
                    .map(|x| peak_scaling_text(x, s.peak_bound(x.cpus)))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            Err(e) => format!("scalability: not computed — {e}"),
        });
        notes.push(format!(
            "{}{}",
            usl_text(&s.usl, "CPUs (peaks)"),
            usl_over_cpus_bound(a)
        ));
    }
    notes.extend(flag_notes(curve, a));
    for k in &a.by_cpus {
        for x in &k.excluded {
            notes.push(format!(
                "left out of the analysis: load {} at {} CPU(s) — {}",
                x.load, k.cpus, x.reason
            ));
        }
    }
    notes.extend(curve.points.iter().filter_map(|p| by_type_text(curve, p)));
    if !curve.unmeasured_cpus.is_empty() {
        let list: Vec<String> = curve.unmeasured_cpus.iter().map(u32::to_string).collect();
        notes.push(format!(
            "not measured: {} CPU(s) — asked for, but this machine has fewer",
            list.join(", ")
        ));
    }
    if let Some(p) = curve.points.iter().find(|p| !p.convergence.converged) {
        let r = &p.convergence.rule;
        let cut = curve.points.iter().any(|p| p.convergence.cut_by_budget);
        notes.push(format!(
            "{} = did not converge: the {:.0} % interval stayed wider than {} of the mean after {}; its throughput is less certain than the others'",
            WARNING_MARK.trim(),
            r.confidence * 100.0,
            percent(r.width),
            if cut {
                "the trials the sweep's time budget allowed (--budget)".to_string()
            } else {
                format!("{} trials", r.max_trials)
            }
        ));
        notes.extend(settling_cost(curve));
    }
    let what = match curve.bytes_per_op {
        Some(bytes) => format!("MB/s ({bytes}-byte {}s)", curve.operation),
        None => format!("{}s per second", curve.operation),
    };
    CurveText {
        title: format!(
            "{} — {what} against load",
            curve_title(&curve.workload, &curve.params)
        ),
        blocks,
        notes,
    }
}

/// The verdict's mark in a comparison cell.
/// What settling the noisiest unconverged point would cost: at its trials'
/// spread, how many trials of the same window the rule's width needs. A
/// short, noisy window then reads as a cost, not as a mystery.
fn settling_cost(curve: &Curve) -> Option<String> {
    let (n, p, cv) = curve
        .points
        .iter()
        .filter(|p| !p.convergence.converged)
        .filter_map(|p| {
            let x: Vec<f64> = p.kept_trials().map(|t| t.throughput).collect();
            let n = trials_needed(&p.convergence.rule, &x)?;
            let (mean, sd) = mean_sd(&x);
            Some((n, p, sd / mean))
        })
        .max_by_key(|(n, _, _)| *n)?;
    Some(format!(
        "at load {} on {} CPU(s) the trials spread ±{}: about {n} trials of this window would settle it — or a longer --window, whose trials spread less",
        p.load,
        p.cpus,
        percent(cv)
    ))
}

/// A mix's mean elapsed time per operation type at one point, with the
/// mean CPU time where the workload measured it (seed 004 reports its
/// transactions so); None for a workload of one type.
fn by_type_text(curve: &Curve, p: &Point) -> Option<String> {
    if p.by_type.is_empty() {
        return None;
    }
    let types: Vec<String> = p
        .by_type
        .iter()
        .map(|t| {
            let cpu = t
                .cpu_ns_per_op
                .map(|c| format!(" (CPU {})", format_value(Unit::Ns, c)))
                .unwrap_or_default();
            format!(
                "{} {}{cpu}",
                t.name,
                format_value(Unit::Ns, t.latency.mean_ns)
            )
        })
        .collect();
    Some(format!(
        "load {} on {} CPU(s), mean per {}: {}",
        p.load,
        p.cpus,
        curve.operation,
        types.join(", ")
    ))
}
