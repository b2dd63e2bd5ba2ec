//! Reports: they read only the results model (runs, measurements and load
//! curves), never the benchmarks or the store. Terminal tables of one run
//! live in `terminal`; the multi-run summary and the comparison are built
//! as sheets (`sheet`, and `curves` for load curves) and rendered as
//! terminal tables, Markdown, CSV, JSON or a self-contained HTML page.

pub mod colour;
pub mod csv;
pub mod curves;
pub mod families;
pub mod fleet;
pub mod health;
pub mod history;
pub mod html;
pub mod hyperfine;
pub mod json;
pub mod layout;
pub mod markdown;
pub mod run_export;
pub mod run_summary;
pub mod sanitize;
pub mod sheet;
pub mod tables;
pub mod terminal;

use touchstone_analysis::compare::Comparison;
use touchstone_analysis::index::IndexLine;
use touchstone_analysis::table::Matrix;

/// The text formats of `report` and `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
    Json,
    Markdown,
}

const SUMMARY_NOTE: &str =
    "Medians, one unit per column; '-' = not measured; '!' = a warning that can move the figure (all: touchstone show RUN --warnings).";
const COMPARE_NOTE: &str = "ratio = run / base with a ≥95 % confidence interval; faster/slower only where the interval excludes 1, else '~';\n'no base' = the base run lacks it. Method: docs/reports.md.";

const CURVE_COMPARE_NOTE: &str = "Load curves: ratio = run / base of mean throughput at the same load and CPUs, with a ≥95 % interval from the trials' 97.5 % t-intervals; faster/slower only where it excludes 1; p99 ratio has no interval; ! = a point that did not converge. Method: docs/reports.md.";

/// The runs in `order` that hold load curves.
fn runs_with_curves<'a>(m: &Matrix<'a>, order: &[usize]) -> Vec<&'a touchstone_results::Run> {
    order
        .iter()
        .map(|&r| m.runs[r])
        .filter(|r| !r.curves.is_empty())
        .collect()
}

/// How `report` and `compare` lay their tables out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The older wide layout: runs as rows, one column per measurement.
    pub wide: bool,
    /// The width the tables must fit (a terminal's; `layout::DEFAULT_WIDTH`
    /// when not writing to one).
    pub width: usize,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            wide: false,
            width: layout::DEFAULT_WIDTH,
        }
    }
}

const FAMILY_NOTE: &str = "Medians; a table per family that sweeps a parameter (down the rows), runs across (named above); --wide: runs as rows.\n'-' = not measured; '!' = the figure carries warnings (touchstone show RUN).";

/// The summary of the runs in the default layout (see `summary_with`).
pub fn summary(m: &Matrix, order: &[usize], format: Format) -> String {
    summary_with(m, order, format, Layout::default())
}

/// The summary of the runs, runs in `order`, then each run's load curves.
/// By default one table per benchmark family with runs side by side
/// (`layout`); with `wide`, lmbench's one row per run and one column per
/// measurement (`sheet::summary`).
pub fn summary_with(m: &Matrix, order: &[usize], format: Format, l: Layout) -> String {
    let curve_runs = runs_with_curves(m, order);
    let (sheets, note) = if l.wide {
        (sheet::summary(m, order), SUMMARY_NOTE)
    } else {
        (layout::summary(m, order, l.width), FAMILY_NOTE)
    };
    match format {
        Format::Table => {
            let mut out = String::new();
            if !m.columns.is_empty() || curve_runs.is_empty() {
                let tables = if l.wide {
                    tables::render(&sheets)
                } else {
                    layout::run_legend(m, order) + &tables::render_fitted(&sheets)
                };
                out = format!("{tables}{note}\n");
            }
            for run in curve_runs {
                out.push_str(&format!(
                    "\nLoad curves of run {}\n\n{}",
                    sheet::run_heading(run),
                    terminal::curves(&run.curves)
                ));
            }
            out
        }
        Format::Markdown => {
            let mut notes = vec![note.to_string()];
            if !l.wide {
                notes.push(layout::run_legend(m, order).replace('\n', "\n\n"));
            }
            markdown::render("touchstone summary", &sheets, &notes) + &markdown::curves(&curve_runs)
        }
        Format::Csv if l.wide => csv::summary_wide(m, order),
        Format::Csv => csv::summary(m, order),
        Format::Json => json::summary(m, order) + "\n",
    }
}

/// The comparison in the default layout (see `comparison_with`).
pub fn comparison(m: &Matrix, c: &Comparison, index: &[IndexLine], format: Format) -> String {
    comparison_with(m, c, index, format, Layout::default())
}

/// The comparison with the base run (measurements, then load curves) and
/// the index table. By default one table per family, measurements down
/// the rows and the runs across (`layout`); with `wide`, one table per
/// report group (`sheet::comparison`).
pub fn comparison_with(
    m: &Matrix,
    c: &Comparison,
    index: &[IndexLine],
    format: Format,
    l: Layout,
) -> String {
    let mut sheets = if l.wide {
        sheet::comparison(m, c)
    } else {
        layout::comparison(m, c, l.width)
    };
    let others: Vec<&touchstone_results::Run> = c.others.iter().map(|&o| m.runs[o]).collect();
    let curve_sheets = curves::comparison_sheets(m.runs[c.base], &others);
    let mut notes = vec![COMPARE_NOTE.to_string()];
    if !curve_sheets.is_empty() {
        notes.push(CURVE_COMPARE_NOTE.to_string());
    }
    match format {
        Format::Table if !l.wide => {
            let mut order = vec![c.base];
            order.extend(&c.others);
            let mut rest = curve_sheets;
            rest.push(sheet::index(m, c, index));
            format!(
                "{}{}{}{}\n",
                layout::run_legend(m, &order),
                tables::render_fitted(&sheets),
                tables::render(&rest),
                notes.join("\n")
            )
        }
        Format::Table => {
            sheets.extend(curve_sheets);
            sheets.push(sheet::index(m, c, index));
            format!("{}{}\n", tables::render(&sheets), notes.join("\n"))
        }
        Format::Markdown => {
            sheets.extend(curve_sheets);
            sheets.push(sheet::index(m, c, index));
            if !l.wide {
                let mut order = vec![c.base];
                order.extend(&c.others);
                notes.push(layout::run_legend(m, &order).replace('\n', "\n\n"));
            }
            markdown::render("touchstone comparison", &sheets, &notes)
        }
        Format::Csv => csv::comparison(m, c, index),
        Format::Json => json::comparison(m, c, index) + "\n",
    }
}

#[cfg(test)]
pub(crate) mod testdata;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{run, tcp_rr};
    use touchstone_analysis::compare::compare;
    use touchstone_analysis::index::indices;

    /// The base's tcp_rr, and another run 20 % faster at 2 CPUs that did
    /// not measure 1 CPU.
    fn two_runs() -> Vec<touchstone_results::Run> {
        let mut faster = tcp_rr();
        faster.points.retain(|p| p.cpus == 2);
        for p in &mut faster.points {
            p.throughput *= 1.2;
            p.throughput_half_width *= 1.2;
            for t in &mut p.trials {
                t.throughput *= 1.2;
            }
        }
        vec![
            run("aaaa0001", "alpha", vec![tcp_rr()]),
            run("bbbb0002", "beta", vec![faster]),
        ]
    }

    fn compared(format: Format) -> String {
        let runs = two_runs();
        let m = Matrix::build(&runs).unwrap();
        let c = compare(&m, 0, &[1]);
        let idx = indices(&m, &c);
        comparison(&m, &c, &idx, format)
    }

    #[test]
    fn compare_shows_curves_point_by_point_with_peaks_and_knees() {
        let text = compared(Format::Table);
        assert!(
            text.contains("Load curve tcp_rr size:4: throughput point by point"),
            "{text}"
        );
        assert!(
            text.contains("Load curve tcp_rr size:4: peaks and knees"),
            "{text}"
        );
        // Load 2 at 2 CPUs: 50.00 → 60.00, tight intervals: faster.
        let row = text
            .lines()
            .find(|l| l.contains(" 50.00 "))
            .expect("the load-2 row");
        assert!(row.contains(" 60.00 ") && row.contains("faster"), "{row}");
        assert!(row.contains("1.200 ["), "{row}");
        // Load 4 did not converge (±10 %): 1.2× is not claimed.
        let row = text.lines().find(|l| l.contains(" 88.00 !")).unwrap();
        assert!(row.contains(" ~ "), "{row}");
        assert!(
            row.contains("105.6 !"),
            "both flagged as unconverged: {row}"
        );
        // 1 CPU: the other run lacks it.
        assert!(text
            .lines()
            .any(|l| l.contains(" 25.00 ") && l.contains("missing")));
        // Peaks side by side: both at load 8, knee at 4 in both.
        let peak = text.lines().find(|l| l.contains("105.0 at 8")).unwrap();
        assert!(
            peak.contains("126.0 at 8") && peak.contains("┆ 4 "),
            "{peak}"
        );
        assert!(peak.contains("faster"), "{peak}");
        assert!(text.contains(CURVE_COMPARE_NOTE));

        let csv = compared(Format::Csv);
        let line = csv
            .lines()
            .find(|l| {
                l.starts_with("curve,tcp_rr/size:4/cpus:2/load:2,2,ops/s,aaaa0001,50000,bbbb0002,")
            })
            .unwrap_or_else(|| panic!("{csv}"));
        assert!(line.ends_with(",faster"), "{line}");
        assert!(csv.contains("curve,tcp_rr/size:4/cpus:2/load:2/p99,2,ns,"));
        assert!(csv.contains("curve,tcp_rr/size:4/cpus:2/peak,,ops/s,"));
        assert!(csv.lines().any(
            |l| l.starts_with("curve,tcp_rr/size:4/cpus:1/load:1,") && l.ends_with(",missing")
        ));

        let json: serde_json::Value = serde_json::from_str(&compared(Format::Json)).unwrap();
        let curves = &json["curves"][0]["curves"][0];
        assert_eq!(curves["workload"], "tcp_rr");
        let p = curves["points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["cpus"] == 2 && p["load"] == 2)
            .unwrap();
        assert_eq!(p["verdict"], "faster");
        let md = compared(Format::Markdown);
        assert!(
            md.contains("## Load curve tcp_rr size:4: peaks and knees"),
            "{md}"
        );
    }

    #[test]
    fn the_summary_exports_carry_one_row_per_point() {
        let runs = two_runs();
        let m = Matrix::build(&runs).unwrap();
        // Runs across: one line per point (8 loads over both CPU counts,
        // the union of both runs) and figure; the run lacking it is empty.
        let csv = summary(&m, &[0, 1], Format::Csv);
        assert!(csv.starts_with(
            "group,family,measurement,parallel,case,sweep,sweep_value,unit,aaaa0001,bbbb0002\n"
        ));
        assert_eq!(csv.lines().count(), 1 + 8 * 7, "{csv}");
        assert!(
            csv.contains(
                "curve,tcp_rr,tcp_rr/size:4/cpus:2/load:8/throughput,8,cpus:2 throughput,load,8,ops/s,105000,126000"
            ),
            "{csv}"
        );
        assert!(csv.contains("cpus:1/load:1/throughput,1,cpus:1 throughput,load,1,ops/s,25000,\n"));
        // The wide CSV: a run per line, points after.
        let wide = Layout {
            wide: true,
            ..Layout::default()
        };
        let csv = summary_with(&m, &[0, 1], Format::Csv, wide);
        let mut lines = csv.lines();
        let head = lines.next().unwrap();
        assert!(
            head.starts_with(
                "run,host,label,started,workload,params,operation,cpus,load,throughput (ops/s),"
            ),
            "{head}"
        );
        // Two run lines, then 8 + 5 points.
        assert_eq!(csv.lines().count(), 1 + 2 + 8 + 5);
        let point = csv
            .lines()
            .find(|l| {
                l.starts_with("aaaa0001,alpha,,")
                    && l.contains(",tcp_rr,size:4,transaction,2,8,105000,")
            })
            .unwrap_or_else(|| panic!("{csv}"));
        assert_eq!(point.split(',').count(), head.split(',').count());
        let json: serde_json::Value =
            serde_json::from_str(&summary(&m, &[0, 1], Format::Json)).unwrap();
        let c = &json["curves"][0];
        assert_eq!(c["points"].as_array().unwrap().len(), 8);
        assert_eq!(c["points"][0]["latency_ns"]["p99"], 120_063);
        let two = &c["analysis"]["by_cpus"][1];
        assert_eq!(two["cpus"], 2);
        assert_eq!(two["knee"]["load"], 4.0);
        assert!(c["analysis"]["by_cpus"][0]["knee"]["not_detected"].is_string());
        assert_eq!(
            c["analysis"]["scaling"]["usl"]["not_fitted"]
                .as_str()
                .unwrap(),
            "the USL needs at least 3 distinct loads to fit 3 coefficients; got 2"
        );
        let md = summary(&m, &[0, 1], Format::Markdown);
        assert!(md.contains("### tcp_rr size:4 · 2 CPUs (0,1)"), "{md}");
        assert!(md.contains("| 8 | 105.0 ± 1.6 |"), "{md}");
        let table = summary(&m, &[0, 1], Format::Table);
        assert!(
            table.contains("Load curves of run alpha aaaa0001"),
            "{table}"
        );
        assert!(
            !table.contains("Medians, one unit per column"),
            "no measurements, no summary table"
        );
    }
}
