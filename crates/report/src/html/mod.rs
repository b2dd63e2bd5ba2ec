//! The HTML report: one self-contained page (inline CSS, script and SVG;
//! nothing fetched from the network) with the runs, an index against the
//! first run, every measurement compared with the first run (ratio,
//! interval, verdict), the summary tables, the memory-latency staircase, bandwidth
//! against size, throughput against load, the load curves of workloads
//! (charts, tables, peak/knee/USL lines) and histograms of raw samples.

pub mod charts;
pub mod cost_charts;
pub mod curve_charts;
pub mod history_page;
pub mod latency_distributions;
pub mod svg;

use std::fmt::Write;

use touchstone_analysis::compare::Comparison;
use touchstone_analysis::table::{run_title, short_id, Matrix};
use touchstone_results::groups::title;

use crate::model::{Model, DETAIL_RUNS};
use crate::sheet::{self, Sheet, WARNING_MARK};
use crate::{layout, spread, Media, Render};
use charts::Chart;
use svg::{color, escape};

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// The HTML format: the page of a summary, a comparison or one run.
pub struct Html;

impl Render for Html {
    fn summary(&self, m: &Model) -> String {
        page(m)
    }

    fn comparison(&self, m: &Model) -> String {
        page(m)
    }

    fn run(&self, m: &Model) -> String {
        page(m)
    }

    fn media(&self) -> Media {
        Media::Html
    }

    fn draws(&self) -> bool {
        true
    }
}

fn table(out: &mut String, s: &Sheet) {
    out.push_str(r#"<div class="scroll"><table class="sortable"><thead><tr>"#);
    for h in &s.header {
        // A two-line heading (a run's name, then its id) keeps its break.
        let _ = write!(out, "<th>{}</th>", escape(h).replace('\n', "<br>"));
    }
    out.push_str("</tr></thead><tbody>");
    for row in &s.rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let mut class = if s.numeric[i] { "num" } else { "" }.to_string();
            match cell.as_str() {
                "faster" | "slower" => class = cell.clone(),
                "~" => class = "same".into(),
                _ => {}
            }
            let _ = write!(out, r#"<td class="{class}">{}</td>"#, escape(cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}

fn chart_grid(out: &mut String, charts: &[Chart], small: bool) {
    let _ = write!(
        out,
        r#"<div class="charts{}">"#,
        if small { " small" } else { "" }
    );
    for c in charts {
        let _ = write!(
            out,
            "<figure><figcaption>{}</figcaption>{}</figure>",
            escape(&c.title),
            c.svg
        );
    }
    out.push_str("</div>");
}

fn legend(out: &mut String, m: &Matrix) {
    out.push_str(r#"<div class="legend">"#);
    for (r, run) in m.runs.iter().enumerate() {
        let _ = write!(
            out,
            r#"<span><span class="swatch" style="background:{}"></span>{} <span class="muted">{}</span></span>"#,
            color(r),
            escape(&run_title(run)),
            short_id(&run.id)
        );
    }
    out.push_str("</div>");
}

fn section_charts(
    out: &mut String,
    id: &str,
    heading: &str,
    m: &Matrix,
    charts: &[Chart],
    none: &str,
) {
    let _ = write!(out, r#"<section id="{id}"><h2>{}</h2>"#, escape(heading));
    if charts.is_empty() {
        let _ = write!(out, r#"<p class="note">{}</p>"#, escape(none));
    } else {
        legend(out, m);
        chart_grid(out, charts, false);
    }
    out.push_str("</section>");
}

/// Every run's load curves: per curve, its charts, then per CPU count its
/// table and the line with peak, knee, crossover and USL fit, then notes.
fn curves_section(out: &mut String, model: &Model) {
    out.push_str(r#"<section id="curves"><h2>Load curves</h2>"#);
    let runs = model.rows_with_curves();
    if runs.is_empty() {
        out.push_str(r#"<p class="note">No workload load curves in these runs.</p></section>"#);
        return;
    }
    out.push_str(r#"<p class="note">Throughput is the mean of converged trials with its confidence interval (error bars); dashed: the Universal Scalability Law fitted to each CPU count; a ring marks the knee (Kneedle). Latency: p50 solid, p99 dashed, p99.9 dotted. A figure marked ! did not converge. Method: docs/reports.md.</p>"#);
    for r in runs {
        let run = model.matrix.runs[r];
        for analysed in &model.curves[r] {
            let (curve, a) = (analysed.curve, &analysed.analysis);
            let text = crate::curves::curve_text(curve, a);
            let heading = format!("{} · run {}", text.title, sheet::run_heading(run));
            let _ = write!(out, r#"<h3 class="curve">{}</h3>"#, escape(&heading));
            let mut charts = vec![
                curve_charts::throughput(curve, a, "Throughput against load"),
                curve_charts::latency(curve, a, "Latency percentiles against load"),
            ];
            charts.extend(curve_charts::scalability(
                a,
                "Scalability of the peaks over CPUs",
            ));
            chart_grid(out, &charts, false);
            for b in &text.blocks {
                let _ = write!(out, "<h4>{}</h4>", escape(&b.sheet.title));
                table(out, &b.sheet);
                let _ = write!(out, r#"<p class="curve-line">{}</p>"#, escape(&b.line));
            }
            if !text.notes.is_empty() {
                out.push_str(r#"<ul class="notes">"#);
                for n in &text.notes {
                    let _ = write!(out, "<li>{}</li>", escape(n));
                }
                out.push_str("</ul>");
            }
        }
        // A curve and its baseline (fscache's read and memcpy) together.
        for group in crate::curves::mode_groups(&run.curves) {
            let s = crate::curves::mode_sheet(&group);
            let heading = format!("{} · run {}", s.title, sheet::run_heading(run));
            let _ = write!(out, r#"<h3 class="curve">{}</h3>"#, escape(&heading));
            let names: Vec<&str> = group
                .iter()
                .map(|c| c.params[crate::curves::MODE_PARAM].as_str())
                .collect();
            let chart = curve_charts::overlay(&group, &names, "Throughput against load, together");
            chart_grid(out, &[chart], false);
            table(out, &s);
        }
    }
    out.push_str("</section>");
}

/// Every measurement against the first run: each run's figure, the ratio
/// to the base with its interval, and the verdict (faster, slower, or ~
/// when the interval includes 1), one table per family as in `compare`.
fn comparison_section(out: &mut String, m: &Matrix, c: &Comparison, at_scale: bool) {
    out.push_str(r#"<section id="comparison"><h2>Comparison with the base run</h2>"#);
    if c.others.is_empty() {
        out.push_str(r#"<p class="note">One run: nothing to compare with.</p></section>"#);
        return;
    }
    let _ = write!(
        out,
        r#"<p class="note">Base: {} {}. ratio = run / base with a ≥95 % confidence interval from the two medians' intervals; <span class="faster">faster</span> / <span class="slower">slower</span> only where the interval excludes 1, else ~ (no significant difference); "differs" for units that do not rank. Method: docs/reports.md.</p>"#,
        escape(&run_title(m.runs[c.base])),
        short_id(&m.runs[c.base].id)
    );
    let sheets = layout::comparison(m, c, usize::MAX);
    let what = format!(
        "Every measurement of the {} runs drawn against the base ({} tables)",
        m.runs.len(),
        sheets.len()
    );
    fold(out, at_scale, &what, |out| {
        for s in &sheets {
            let _ = write!(out, "<h3>{}</h3>", escape(&s.title));
            table(out, s);
        }
    });
    out.push_str("</section>");
}

/// Over more than `DETAIL_RUNS` runs, a table with a row per run is
/// folded (shown on demand), so that the page opens on the figures'
/// spread and the charts, not on thousands of rows; a smaller page shows
/// it as it is.
fn fold(out: &mut String, at_scale: bool, what: &str, body: impl FnOnce(&mut String)) {
    if at_scale {
        let _ = write!(out, "<details><summary>{}</summary>", escape(what));
    }
    body(out);
    if at_scale {
        out.push_str("</details>");
    }
}

/// The runs table: a row per run in the model's order, marked with the
/// colour it is drawn in (`swatch`: none for a run not drawn).
fn runs_table(out: &mut String, model: &Model, swatch: &dyn Fn(usize) -> Option<usize>) {
    let m = &model.matrix;
    out.push_str(r#"<div class="scroll"><table class="sortable"><thead><tr><th>run</th><th>host (label)</th><th>CPU</th><th>cores/threads</th><th>kernel</th><th>started (UTC)</th><th>status</th><th>warnings</th></tr></thead><tbody>"#);
    for &r in &model.order {
        let run = m.runs[r];
        let h = &run.host;
        let warnings: Vec<String> = run.warnings.iter().map(|w| escape(&w.message)).collect();
        let mark = swatch(r).map_or(String::new(), |d| {
            format!(
                r#"<span class="swatch" style="background:{}"></span>"#,
                color(d)
            )
        });
        let _ = write!(
            out,
            r#"<tr><td>{mark}{}</td><td>{}</td><td>{}</td><td class="num">{}/{}</td><td>{}</td><td>{}</td><td>{}</td><td class="wrap">{}</td></tr>"#,
            escape(short_id(&run.id)),
            escape(&run_title(run)),
            escape(&h.cpu.model),
            h.cpu.cores,
            h.cpu.threads,
            escape(&h.kernel),
            run.started_at.format("%Y-%m-%d %H:%M"),
            run.status.as_str(),
            warnings.join("<br>")
        );
    }
    out.push_str("</tbody></table></div>");
}

/// What a page over more than `DETAIL_RUNS` runs says it shows.
fn scale_note(runs: usize) -> String {
    format!(
        "{runs} runs: the runs, the index and each figure's spread across the runs cover them all; the comparison, the charts, the load curves and the raw samples show the first {DETAIL_RUNS} in the report's order (--sort chooses them). Name runs to draw others (touchstone report RUN… --html FILE); one run in full: touchstone show RUN."
    )
}

/// The whole page of `model`: runs in its order in the tables; the index
/// and the comparison against its first run. Over more than `DETAIL_RUNS`
/// runs, the overview of all (`spread`) and the detail of the first
/// (`Model::detail`).
fn page(model: &Model) -> String {
    let (m, order) = (&model.matrix, &model.order);
    let drawn = model.drawn();
    let at_scale = model.detail.is_some();
    let mut out = String::with_capacity(1 << 20);
    let _ = write!(
        out,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>touchstone report: {} run(s)</title><style>{CSS}</style></head><body>"#,
        m.runs.len()
    );
    let _ = write!(
        out,
        r##"<header><h1>touchstone report</h1><div class="muted">{} run(s) · {} · generated {}</div><nav><a href="#runs">Runs</a>{}<a href="#index">Index</a>{}<a href="#comparison">Comparison</a><a href="#summary">Summary</a><a href="#mem-lat">Memory latency</a><a href="#bandwidth">Bandwidth</a><a href="#throughput">Throughput</a><a href="#curves">Load curves</a><a href="#histograms">Samples</a></nav></header>"##,
        m.runs.len(),
        m.columns.len().to_string() + " measurement(s)",
        escape(&model.generated),
        match &model.fleet {
            Some(f) if !f.pairs.is_empty() => {
                r##"<a href="#fleet">Fleet</a><a href="#pairs">Network</a>"##
            }
            Some(_) => r##"<a href="#fleet">Fleet</a>"##,
            None => "",
        },
        match model.cost {
            Some(_) => r##"<a href="#cost">Cost</a>"##,
            None => "",
        }
    );
    if at_scale {
        let _ = write!(
            out,
            r#"<p class="note">{}</p>"#,
            escape(&scale_note(m.runs.len()))
        );
    }

    // Runs; at scale, the swatch of those drawn in detail.
    let swatch = |r: usize| -> Option<usize> {
        if !at_scale {
            return Some(r);
        }
        let id = &m.runs[r].id;
        drawn.matrix.runs.iter().position(|d| &d.id == id)
    };
    out.push_str(r#"<section id="runs"><h2>Runs</h2>"#);
    let every_run = format!(
        "Every run ({}): host, CPU, kernel, start, status, warnings",
        order.len()
    );
    fold(&mut out, at_scale, &every_run, |out| {
        runs_table(out, model, &swatch)
    });
    out.push_str("</section>");
    if let Some(f) = &model.fleet {
        crate::fleet::section(&mut out, &f.groups);
        crate::fleet::pairs_section(&mut out, &f.pairs);
    }

    // Index against the first run.
    out.push_str(r#"<section id="index"><h2>Index</h2>"#);
    match &model.compared {
        Some(c) if m.runs.len() >= 2 => {
            let s = if at_scale {
                spread::index_by_run(m, order, &c.comparison, &c.index)
            } else {
                sheet::index(m, &c.comparison, &c.index)
            };
            let _ = write!(
                out,
                r#"<p class="note">Geometric mean of each run's speed-ups over the base run ({}), per group and overall, base = 100; higher is faster. n = figures used. Method: docs/reports.md.</p>"#,
                escape(&run_title(m.runs[c.comparison.base]))
            );
            let every_run = format!("Every run's index ({} rows)", s.rows.len());
            fold(&mut out, at_scale, &every_run, |out| table(out, &s));
        }
        _ => out.push_str(r#"<p class="note">One run: nothing to index against.</p>"#),
    }
    out.push_str("</section>");
    cost_charts::section(&mut out, model);

    if let Some(c) = &drawn.compared {
        comparison_section(&mut out, &drawn.matrix, &c.comparison, at_scale);
    }

    // Summary tables.
    if at_scale {
        out.push_str(r#"<section id="summary"><h2>Summary</h2><p class="note">Each measurement across the runs: how many measured it, how many of those figures a warning can move (!), its lowest, quartiles, median and highest figure, and the runs at either end; click a heading to sort.</p>"#);
        for s in spread::summary(m, order) {
            let _ = write!(out, "<h3>{}</h3>", escape(&s.title));
            table(&mut out, &s);
        }
    } else {
        out.push_str(r#"<section id="summary"><h2>Summary</h2><p class="note">Medians: one table per benchmark family that sweeps a parameter (down the rows), the others together per group; runs side by side; one unit per case; click a heading to sort. A figure marked ! carries a warning that can move it (all: <code>touchstone show RUN --warnings</code>).</p>"#);
        for s in layout::summary(m, order, usize::MAX) {
            let _ = write!(out, "<h3>{}</h3>", escape(&s.title));
            table(&mut out, &s);
        }
    }
    out.push_str("</section>");

    let dm = &drawn.matrix;
    section_charts(
        &mut out,
        "mem-lat",
        "Memory latency staircase",
        dm,
        &charts::staircase(dm),
        "No lat_mem_rd size sweeps in these runs.",
    );
    section_charts(
        &mut out,
        "bandwidth",
        "Bandwidth against size",
        dm,
        &charts::bandwidth(dm),
        "No bandwidth sweeps over size in these runs.",
    );
    section_charts(
        &mut out,
        "throughput",
        "Throughput against parallel load",
        dm,
        &charts::throughput(dm),
        "No measurement was taken at more than one process count (run with -P 1,2,4).",
    );

    curves_section(&mut out, drawn);
    latency_distributions::section(&mut out, dm, &drawn.order);

    // Histograms, one collapsible block per group.
    out.push_str(r#"<section id="histograms"><h2>Raw samples</h2><p class="note">Histograms of every repetition's figure, all runs on shared bins.</p>"#);
    legend(&mut out, dm);
    for (i, g) in dm.groups().iter().enumerate() {
        let hs = charts::histograms(dm, g);
        if hs.is_empty() {
            continue;
        }
        let _ = write!(
            out,
            "<details{}><summary>{} ({})</summary>",
            if i == 0 { " open" } else { "" },
            escape(title(g)),
            hs.len()
        );
        chart_grid(&mut out, &hs, true);
        out.push_str("</details>");
    }
    out.push_str("</section>");

    let _ = writeln!(
        out,
        "<footer>Made by touchstone. Figures{WARNING_MARK} are qualified by warnings. Ratios and indices: docs/reports.md.</footer><script>{JS}</script></body></html>"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{run, tcp_rr};

    #[test]
    fn a_page_with_a_curve_has_its_charts_tables_and_lines() {
        let runs = [run("aaaa0001", "alpha", vec![tcp_rr()])];
        let page = page(&Model::run(&runs[0]));
        if let Some(path) = std::env::var_os("TOUCHSTONE_HTML_OUT") {
            std::fs::write(path, &page).unwrap();
        }
        let section = &page[page.find(r#"<section id="curves">"#).unwrap()..];
        let section = &section[..section.find("</section>").unwrap()];
        // Throughput, latency and scalability charts of the one curve.
        assert_eq!(section.matches(r#"<svg class="chart plot""#).count(), 3);
        // Error bars on all 8 points, a USL line per CPU count, a knee ring.
        assert_eq!(section.matches(r#"<path class="bar""#).count(), 8 + 2);
        assert!(section.contains("USL fit, 2 CPUs") && section.contains("knee 4"));
        assert!(section.contains("ideal S(k) = k"));
        // One table per CPU count and its line of figures.
        assert_eq!(section.matches("<table").count(), 2);
        assert!(section.contains("peak 105.0 ± 1.6 k trans/s at load 8"));
        assert!(
            section.contains("19.9 % !"),
            "the unconverged point is flagged"
        );
    }

    #[test]
    fn a_curve_and_its_baseline_share_a_chart() {
        use crate::testdata::fscache;
        let runs = [run(
            "aaaa0001",
            "alpha",
            vec![fscache("read", 1.0), fscache("memcpy", 2.0)],
        )];
        let page = page(&Model::run(&runs[0]));
        let at = page.find("read and memcpy side by side").unwrap();
        let part = &page[at..page[at..].find("</section>").unwrap() + at];
        assert_eq!(part.matches(r#"<svg class="chart plot""#).count(), 1);
        // Both curves at both CPU counts: four lines, every point with its bar.
        for name in [
            "read, 1 CPU",
            "read, 2 CPUs",
            "memcpy, 1 CPU",
            "memcpy, 2 CPUs",
        ] {
            assert!(part.contains(name), "{name}");
        }
        assert_eq!(part.matches(r#"<path class="bar""#).count(), 16);
        assert!(part.contains("read ÷ memcpy"));
    }
}
