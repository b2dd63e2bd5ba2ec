//! `touchstone history --html FILE`: a host's history as a page, one chart
//! per benchmark — every stored figure in run order with its interval, the
//! median of each stretch between change points dashed across it, and a
//! ring at each change point labelled with its shift — then each change
//! point in words with what changed on the machine, as on the terminal.
//! The same page machinery (style, SVG plots) as `report --html`.

use std::fmt::Write;

use touchstone_analysis::history::{History, Track};
use touchstone_results::units::Scale;

use super::svg::{color, escape, plot, Dash, Layer, Mark, Plot, XAxis};
use super::{CSS, JS};
use crate::health::percent;
use crate::history::shift_text;
use crate::model::DETAIL_RUNS;

/// The chart of one track: x is the run's number in the history (1 = the
/// oldest), so that tracks line up run for run.
fn chart(t: &Track) -> String {
    let values: Vec<f64> = t.entries.iter().map(|e| e.value).collect();
    let scale = Scale::for_column(t.unit, &values);
    let x = |row: usize| (row + 1) as f64;
    // Error bars where a figure has an interval; a figure without one (a
    // derived figure, one sample) is drawn as a point with no bar.
    let bars = t
        .entries
        .iter()
        .map(|e| (e.low.unwrap_or(e.value), e.high.unwrap_or(e.value)))
        .collect();
    let mut layers = vec![Layer {
        name: "figure (interval)".into(),
        color: color(0),
        points: t.entries.iter().map(|e| (x(e.row), e.value)).collect(),
        bars,
        dash: Dash::Solid,
        markers: true,
    }];
    // Each stretch between change points at its median, dashed.
    let mut starts = vec![0];
    starts.extend(t.shifts.iter().map(|s| s.at));
    for (k, &from) in starts.iter().enumerate() {
        let to = starts.get(k + 1).copied().unwrap_or(t.entries.len());
        let median = match k {
            0 => t.shifts.first().map(|s| s.median_before),
            _ => Some(t.shifts[k - 1].median_after),
        };
        let (Some(m), Some(first), Some(last)) =
            (median, t.entries.get(from), t.entries.get(to.max(1) - 1))
        else {
            continue;
        };
        layers.push(Layer {
            name: if k == 0 {
                "median between change points".into()
            } else {
                String::new()
            },
            color: color(1),
            points: vec![(x(first.row), m), (x(last.row), m)],
            bars: Vec::new(),
            dash: Dash::Dashed,
            markers: false,
        });
    }
    let marks = t
        .shifts
        .iter()
        .map(|s| Mark {
            x: x(s.after_row),
            y: s.median_after,
            label: format!("run {}: {}", s.after_row + 1, percent(s.ratio.ratio - 1.0)),
            color: color(1),
        })
        .collect();
    let y_label = scale.label.to_string();
    plot(&Plot {
        title: &t.name,
        xaxis: XAxis::Linear,
        x_label: "run (oldest = 1)",
        y_label: &y_label,
        y_div: scale.divisor,
        log_y: false,
        layers,
        marks,
    })
}

/// The page: the runs, then a chart per benchmark (those with a change
/// point first) with its change points in words.
pub fn page(host: &str, h: &History, generated: &str) -> String {
    let mut out = String::with_capacity(1 << 18);
    let _ = write!(
        out,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>touchstone history: {}</title><style>{CSS}</style></head><body>"#,
        escape(host)
    );
    let changed = h.tracks.iter().filter(|t| !t.shifts.is_empty()).count();
    let _ = write!(
        out,
        r##"<header><h1>touchstone history: {}</h1><div class="muted">{} run(s) · {} benchmark(s), {changed} with a change point · generated {}</div><nav><a href="#runs">Runs</a><a href="#benchmarks">Benchmarks</a></nav></header>"##,
        escape(host),
        h.runs.len(),
        h.tracks.len(),
        escape(generated)
    );
    // A long history's runs on demand: the page opens on the charts' side.
    let folded = h.runs.len() > DETAIL_RUNS;
    out.push_str(r#"<section id="runs"><h2>Runs</h2>"#);
    if folded {
        let _ = write!(out, "<details><summary>The {} runs</summary>", h.runs.len());
    }
    out.push_str(r#"<div class="scroll"><table><thead><tr><th>run</th><th>id</th><th>label</th><th>started (UTC)</th></tr></thead><tbody>"#);
    for (i, r) in h.runs.iter().enumerate() {
        let _ = write!(
            out,
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            i + 1,
            escape(&r.id[..r.id.len().min(16)]),
            escape(r.label.as_deref().unwrap_or("")),
            r.started_at.format("%Y-%m-%d %H:%M")
        );
    }
    out.push_str("</tbody></table></div>");
    if folded {
        out.push_str("</details>");
    }
    out.push_str("</section>");
    out.push_str(r#"<section id="benchmarks"><h2>Benchmarks</h2><p class="note">Each stored figure in run order with its confidence interval (bars); dashed: the median of each stretch between change points; a ring marks a change point (E-divisive means with a permutation test), labelled with the shift of the median. Method: docs/reports.md.</p>"#);
    let mut order: Vec<&Track> = h.tracks.iter().collect();
    order.sort_by_key(|t| t.shifts.is_empty());
    for t in order {
        let _ = write!(
            out,
            "<figure><figcaption>{}</figcaption>{}",
            escape(&t.name),
            chart(t)
        );
        if !t.shifts.is_empty() {
            let mut words = String::new();
            for s in &t.shifts {
                words.push_str(&shift_text(h, t, s));
            }
            // Wrapped: a change's line with its interval and p-value is
            // wider than the chart.
            let _ = write!(
                out,
                r#"<pre style="white-space: pre-wrap">{}</pre>"#,
                escape(&words)
            );
        }
        out.push_str("</figure>");
    }
    let _ = writeln!(
        out,
        "</section><footer>Made by touchstone. Change points: docs/reports.md.</footer><script>{JS}</script></body></html>"
    );
    out
}
