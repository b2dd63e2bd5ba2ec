//! Terminal tables: a run's measurements grouped like lmbench's summary,
//! each figure with its unit and the 95 % confidence interval of its median,
//! a run's load curves, and the list of stored runs.

use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, ContentArrangement, Table};
use touchstone_analysis::curve_analysis::analyse;
use touchstone_results::curve::Curve;
use touchstone_results::groups::{title, GROUPS};
use touchstone_results::units::Scale;
use touchstone_results::{Measurement, Run, RunRow, Statistic};

use crate::sanitize::cell;

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.iter().map(|h| cell(h)));
    t
}

/// The figure, its interval and spread, all in one readable scale.
pub fn figure_cells(m: &Measurement) -> [String; 3] {
    let s = &m.summary;
    let scale = Scale::for_value(m.unit, m.value());
    let stat = match m.statistic {
        Statistic::Median => "",
        Statistic::Min => " (min)",
        Statistic::Max => " (max)",
    };
    let rel = if s.median != 0.0 {
        (s.ci_high - s.ci_low) / 2.0 / s.median.abs() * 100.0
    } else {
        f64::NAN
    };
    [
        format!("{}{stat}", scale.format_with_label(m.value())),
        format!("{} … {}", scale.format(s.ci_low), scale.format(s.ci_high)),
        if rel.is_finite() {
            format!("±{rel:.1} %")
        } else {
            "-".into()
        },
    ]
}

/// One table per report group, in the groups' order; unknown groups last.
pub fn measurements(ms: &[Measurement]) -> String {
    let mut out = String::new();
    let mut order: Vec<&str> = GROUPS.iter().map(|g| g.name).collect();
    for m in ms {
        if !order.contains(&m.group.as_str()) {
            order.push(&m.group);
        }
    }
    for g in order {
        let rows: Vec<&Measurement> = ms.iter().filter(|m| m.group == g).collect();
        if rows.is_empty() {
            continue;
        }
        let mut t = table(&[
            "benchmark",
            "procs",
            "figure",
            "95 % CI of median",
            "±",
            "n",
            "notes",
        ]);
        for m in rows {
            let [fig, ci, rel] = figure_cells(m);
            let notes: Vec<&str> = m.warnings.iter().map(|w| w.code.as_str()).collect();
            t.add_row(vec![
                cell(&m.name),
                cell(m.parallel).set_alignment(CellAlignment::Right),
                cell(fig).set_alignment(CellAlignment::Right),
                cell(ci).set_alignment(CellAlignment::Right),
                cell(rel).set_alignment(CellAlignment::Right),
                cell(m.summary.n).set_alignment(CellAlignment::Right),
                cell(notes.join(", ")),
            ]);
        }
        out.push_str(&format!("{}\n{t}\n", title(g)));
    }
    let notes: Vec<String> = ms
        .iter()
        .flat_map(|m| {
            m.warnings
                .iter()
                .map(move |w| format!("  {}: {} — {}", m.name, w.message, w.remedy))
        })
        .collect();
    if !notes.is_empty() {
        out.push_str("notes:\n");
        out.push_str(&notes.join("\n"));
        out.push('\n');
    }
    out
}

/// Load curves: for each curve and CPU count, one table of its points and
/// one line with the peak, knee, crossover and USL fit; then the curve's
/// scalability across CPU counts and its notes (see `crate::curves`).
pub fn curves(curves: &[Curve]) -> String {
    render_curves(curves, true)
}

/// `curves`, with `fit_terminal` false giving a table whose layout does not
/// depend on the terminal's width (tests).
fn render_curves(curves: &[Curve], fit_terminal: bool) -> String {
    let mut out = String::new();
    for curve in curves {
        let text = crate::curves::curve_text(curve, &analyse(curve));
        out.push_str(&format!("{}\n", text.title));
        for block in &text.blocks {
            let s = &block.sheet;
            let header: Vec<&str> = s.header.iter().map(String::as_str).collect();
            let mut t = table(&header);
            if !fit_terminal {
                t.force_no_tty();
            }
            for row in &s.rows {
                t.add_row(row.iter().zip(&s.numeric).map(|(c, &num)| {
                    let cell = cell(c);
                    if num {
                        cell.set_alignment(CellAlignment::Right)
                    } else {
                        cell
                    }
                }));
            }
            out.push_str(&format!("{}\n{t}\n{}\n", s.title, block.line));
        }
        for note in &text.notes {
            out.push_str(&format!("  {note}\n"));
        }
        out.push('\n');
    }
    out
}

/// What a reader needs to know about the machine and the conditions.
pub fn run_header(run: &Run) -> String {
    let h = &run.host;
    let mut lines = vec![
        format!(
            "run {}{}",
            run.id,
            run.label
                .as_ref()
                .map(|l| format!(" ({l})"))
                .unwrap_or_default()
        ),
        format!(
            "  {} — {}{}",
            run.started_at.format("%Y-%m-%d %H:%M:%S UTC"),
            run.status.as_str(),
            run.ended_at
                .map(|e| format!(
                    ", took {:.1} s",
                    (e - run.started_at).num_milliseconds() as f64 / 1e3
                ))
                .unwrap_or_default()
        ),
        format!(
            "  host {}: {} ({} socket(s), {} cores, {} threads), {:.1} GiB",
            h.hostname,
            h.cpu.model,
            h.cpu.sockets,
            h.cpu.cores,
            h.cpu.threads,
            h.memory_bytes as f64 / (1u64 << 30) as f64
        ),
        format!(
            "  {} {}, {}{}",
            h.os,
            h.kernel,
            h.distribution.as_deref().unwrap_or("unknown distribution"),
            h.virtualization
                .as_ref()
                .map(|v| format!(", virtual: {v}"))
                .unwrap_or_default()
        ),
        format!(
            "  clock {}: declared resolution {:.0} ns, observed step {:.0} ns, read cost {:.1} ns; {} {} ({})",
            run.clock.source,
            run.clock.declared_resolution_ns,
            run.clock.resolution_ns,
            run.clock.read_cost_ns,
            run.tool.name,
            run.tool.version,
            run.tool.profile
        ),
    ];
    if let Some(reason) = &run.reason {
        lines.insert(2, format!("  reason: {reason}"));
    }
    if !h.caches.is_empty() {
        let caches: Vec<String> = h
            .caches
            .iter()
            .map(|c| {
                format!(
                    "L{} {} {}",
                    c.level,
                    c.kind,
                    Scale::for_value(touchstone_results::Unit::Bytes, c.size_bytes as f64)
                        .format_with_label(c.size_bytes as f64)
                )
            })
            .collect();
        lines.push(format!("  caches: {}", caches.join(", ")));
    }
    for w in &run.warnings {
        lines.push(format!("  warning: {} — {}", w.message, w.remedy));
    }
    lines.join("\n") + "\n"
}

/// `touchstone runs`.
pub fn runs(rows: &[RunRow]) -> String {
    let mut t = table(&[
        "id",
        "label",
        "host",
        "started (UTC)",
        "status",
        "measurements",
    ]);
    for r in rows {
        t.add_row(vec![
            cell(&r.id),
            cell(r.label.as_deref().unwrap_or("")),
            cell(&r.hostname),
            cell(r.started_at.format("%Y-%m-%d %H:%M:%S")),
            cell(&r.status),
            cell(r.measurements).set_alignment(CellAlignment::Right),
        ]);
    }
    format!("{t}\n")
}

/// Any table of text cells in the common style (used for catalogue listings).
pub fn text_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut t = table(header);
    for r in rows {
        t.add_row(r.iter().map(cell).collect::<Vec<_>>());
    }
    format!("{t}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{snapshot, tcp_rr};

    #[test]
    fn curve_tables_snapshot() {
        snapshot("curves_terminal.txt", &render_curves(&[tcp_rr()], false));
    }

    #[test]
    fn curve_tables_say_what_is_absent_and_why() {
        let mut c = tcp_rr();
        c.points.retain(|p| p.cpus == 2 && p.load <= 2);
        c.unmeasured_cpus.clear();
        let text = render_curves(&[c], false);
        assert!(
            text.contains("knee: not detected — 2 point(s) up to the peak, Kneedle needs 3"),
            "{text}"
        );
        assert!(
            text.contains("USL over load: not fitted — the USL needs at least 3 distinct loads"),
            "{text}"
        );
        assert!(text.contains("crossover: none"));
        assert!(
            !text.contains("S(k)"),
            "one CPU count: no scalability column"
        );
        assert!(
            !text.contains("did not converge"),
            "no flag without a flagged point"
        );
    }
}
