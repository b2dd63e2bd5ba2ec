//! Reports: they read only the results model (runs, measurements and load
//! curves), never the benchmarks or the store. Terminal tables of one run
//! live in `terminal`; the multi-run summary and the comparison are built
//! as sheets (`sheet`, and `curves` for load curves) and rendered as
//! terminal tables, Markdown, CSV, JSON or a self-contained HTML page.

pub mod csv;
pub mod curves;
pub mod html;
pub mod json;
pub mod markdown;
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
    "Medians, one unit per column; '-' = not measured; '!' = the figure carries warnings (touchstone show RUN).";
const COMPARE_NOTE: &str = "ratio = run / base with a ≥95 % confidence interval; faster/slower only where the interval excludes 1, else '~'; 'no base' = the base run lacks it. Method: docs/reports.md.";

const CURVE_COMPARE_NOTE: &str = "Load curves: ratio = run / base of mean throughput at the same load and CPUs, with a ≥95 % interval from the trials' 97.5 % t-intervals; faster/slower only where it excludes 1; p99 ratio has no interval; ! = a point that did not converge. Method: docs/reports.md.";

/// The runs in `order` that hold load curves.
fn runs_with_curves<'a>(m: &Matrix<'a>, order: &[usize]) -> Vec<&'a touchstone_results::Run> {
    order
        .iter()
        .map(|&r| m.runs[r])
        .filter(|r| !r.curves.is_empty())
        .collect()
}

/// The lmbench-style summary of the runs, rows in `order`, then each run's
/// load curves.
pub fn summary(m: &Matrix, order: &[usize], format: Format) -> String {
    let curve_runs = runs_with_curves(m, order);
    match format {
        Format::Table => {
            let mut out = String::new();
            if !m.columns.is_empty() || curve_runs.is_empty() {
                out = format!(
                    "{}{SUMMARY_NOTE}\n",
                    tables::render(&sheet::summary(m, order))
                );
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
            markdown::render(
                "touchstone summary",
                &sheet::summary(m, order),
                &[SUMMARY_NOTE.to_string()],
            ) + &markdown::curves(&curve_runs)
        }
        Format::Csv => csv::summary(m, order),
        Format::Json => json::summary(m, order) + "\n",
    }
}

/// The comparison with the base run (measurements, then load curves) and
/// the index table.
pub fn comparison(m: &Matrix, c: &Comparison, index: &[IndexLine], format: Format) -> String {
    let mut sheets = sheet::comparison(m, c);
    let others: Vec<&touchstone_results::Run> = c.others.iter().map(|&o| m.runs[o]).collect();
    let curve_sheets = curves::comparison_sheets(m.runs[c.base], &others);
    let mut notes = vec![COMPARE_NOTE.to_string()];
    if !curve_sheets.is_empty() {
        notes.push(CURVE_COMPARE_NOTE.to_string());
    }
    sheets.extend(curve_sheets);
    sheets.push(sheet::index(m, c, index));
    match format {
        Format::Table => format!("{}{}\n", tables::render(&sheets), notes.join("\n")),
        Format::Markdown => markdown::render("touchstone comparison", &sheets, &notes),
        Format::Csv => csv::comparison(m, c, index),
        Format::Json => json::comparison(m, c, index) + "\n",
    }
}

#[cfg(test)]
pub(crate) mod testdata;
