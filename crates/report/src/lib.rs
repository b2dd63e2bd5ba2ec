//! Reports: they read only the results model (runs and measurements), never
//! the benchmarks or the store. Terminal tables of one run live in
//! `terminal`; the multi-run summary and the comparison are built as
//! sheets (`sheet`) and rendered as terminal tables, Markdown, CSV, JSON or
//! a self-contained HTML page.

pub mod csv;
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

/// The lmbench-style summary of the runs, rows in `order`.
pub fn summary(m: &Matrix, order: &[usize], format: Format) -> String {
    match format {
        Format::Table => format!(
            "{}{SUMMARY_NOTE}\n",
            tables::render(&sheet::summary(m, order))
        ),
        Format::Markdown => markdown::render(
            "touchstone summary",
            &sheet::summary(m, order),
            &[SUMMARY_NOTE.to_string()],
        ),
        Format::Csv => csv::summary(m, order),
        Format::Json => json::summary(m, order) + "\n",
    }
}

/// The comparison with the base run and the index table.
pub fn comparison(m: &Matrix, c: &Comparison, index: &[IndexLine], format: Format) -> String {
    let mut sheets = sheet::comparison(m, c);
    sheets.push(sheet::index(m, c, index));
    match format {
        Format::Table => format!("{}{COMPARE_NOTE}\n", tables::render(&sheets)),
        Format::Markdown => markdown::render(
            "touchstone comparison",
            &sheets,
            &[COMPARE_NOTE.to_string()],
        ),
        Format::Csv => csv::comparison(m, c, index),
        Format::Json => json::comparison(m, c, index) + "\n",
    }
}
