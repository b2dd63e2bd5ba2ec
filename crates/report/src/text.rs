//! The terminal format: the summary as one table per benchmark family
//! (runs across, `layout`; `--wide`: lmbench's runs as rows, `sheet`),
//! then each run's load curves; the comparison with its curves and index;
//! the fleet's verdict before its summary; one run in full (`show`).

use touchstone_analysis::curve_analysis::Analysed;

use crate::model::{Model, DETAIL_RUNS};
use crate::{curves, fleet, layout, sheet, spread, tables, terminal, Render};

pub(crate) const SUMMARY_NOTE: &str =
    "Medians, one unit per column; '-' = not measured; '!' = a warning that can move the figure (all: touchstone show RUN --warnings).";
pub(crate) const COMPARE_NOTE: &str = "ratio = run / base with a ≥95 % confidence interval; faster/slower only where the interval excludes 1, else '~';\n'no base' = the base run lacks it. Method: docs/reports.md.";
pub(crate) const CURVE_COMPARE_NOTE: &str = "Load curves: ratio = run / base of mean throughput at the same load and CPUs, with a ≥95 % interval from the trials' 97.5 % t-intervals; faster/slower only where it excludes 1; p99 ratio has no interval; ! = a point that did not converge. Method: docs/reports.md.";
pub(crate) const FAMILY_NOTE: &str = "Medians; a table per family that sweeps a parameter (down the rows), runs across (named above); --wide: runs as rows.\n'-' = not measured; '!' = the figure carries warnings (touchstone show RUN).";

pub struct Text;

/// The summary's tables and their note, in the layout asked for.
pub(crate) fn summary_sheets(m: &Model) -> (Vec<sheet::Sheet>, &'static str) {
    let (mut sheets, note) = if m.layout.wide {
        (sheet::summary(&m.matrix, &m.order), SUMMARY_NOTE)
    } else {
        (
            layout::summary(&m.matrix, &m.order, m.layout.width),
            FAMILY_NOTE,
        )
    };
    sheets.extend(cost_sheet(m));
    (sheets, note)
}

/// The cost figures' sheet, where the model has them.
pub(crate) fn cost_sheet(m: &Model) -> Option<sheet::Sheet> {
    let c = m.cost.as_ref()?;
    Some(crate::cost::sheet(&m.matrix, c, &m.order))
}

/// The comparison's tables: measurements (per family, or per group when
/// wide), then the load curves' and the index.
pub(crate) fn comparison_sheets(m: &Model) -> (Vec<sheet::Sheet>, Vec<sheet::Sheet>) {
    let c = m.compared.as_ref().expect("a comparison's model compares");
    let measured = if m.layout.wide {
        sheet::comparison(&m.matrix, &c.comparison)
    } else {
        layout::comparison(&m.matrix, &c.comparison, m.layout.width)
    };
    let mut rest = curves::comparison_sheets(&m.matrix, c);
    rest.push(sheet::index(&m.matrix, &c.comparison, &c.index));
    rest.extend(cost_sheet(m));
    (measured, rest)
}

/// The comparison's notes: the curves' when there are any.
pub(crate) fn comparison_notes(m: &Model) -> Vec<String> {
    let mut notes = vec![COMPARE_NOTE.to_string()];
    if m.cost.is_some() {
        notes.push(crate::cost::COST_NOTE.to_string());
    }
    let c = m.compared.as_ref().expect("a comparison's model compares");
    if c.curves.iter().any(|v| !v.is_empty()) {
        notes.push(CURVE_COMPARE_NOTE.to_string());
    }
    notes
}

/// Each run's load curves, on a terminal or not (`fit_terminal` false: a
/// layout that does not depend on its width, for tests).
pub(crate) fn curve_tables(curves: &[Analysed], fit_terminal: bool) -> String {
    terminal::render_curves(curves, fit_terminal)
}

/// The summary of more than `DETAIL_RUNS` runs, where a column per run
/// would print megabytes no one reads (1,000 farm runs: 19.6 MB): each
/// figure's spread across the runs and the runs at either end, as the HTML
/// page shows them; the tables in full are a flag away.
fn at_scale(m: &Model, runs_with_curves: usize) -> String {
    let runs = m.matrix.runs.len();
    let mut out = format!(
        "{runs} runs: each figure's spread across them, and the runs at either end. \
         Every run's figures: --wide (a row per run) or --format csv; a few runs side by side: \
         touchstone report RUN…; one run in full: touchstone show RUN.\n\n"
    );
    out.push_str(&tables::render_fitted(&spread::summary(
        &m.matrix, &m.order,
    )));
    if runs_with_curves > 0 {
        out.push_str(&format!(
            "\n{runs_with_curves} of the runs have load curves: touchstone show RUN draws them.\n"
        ));
    }
    out
}

/// The cost sheet with its note, where the model has cost figures.
fn cost_text(m: &Model) -> String {
    match cost_sheet(m) {
        Some(s) => format!("\n{}{}\n", tables::render(&[s]), crate::cost::COST_NOTE),
        None => String::new(),
    }
}

impl Render for Text {
    fn summary(&self, m: &Model) -> String {
        let mut out = String::new();
        if let Some(f) = &m.fleet {
            out.push_str(&fleet::text(&m.matrix, &f.groups));
            out.push_str(&fleet::pairs_text(&f.pairs));
        }
        let with_curves = m.rows_with_curves();
        if m.matrix.runs.len() > DETAIL_RUNS && !m.layout.wide {
            out.push_str(&at_scale(m, with_curves.len()));
            out.push_str(&cost_text(m));
            return out;
        }
        if !m.matrix.columns.is_empty() || with_curves.is_empty() {
            if m.layout.wide {
                out.push_str(&tables::render(&sheet::summary(&m.matrix, &m.order)));
                out.push_str(SUMMARY_NOTE);
            } else {
                out.push_str(&layout::run_legend(&m.matrix, &m.order));
                for sheets in layout::summaries(&m.matrix, &m.order, m.layout.width) {
                    out.push_str(&tables::render_fitted(&sheets));
                }
                out.push_str(FAMILY_NOTE);
            }
            out.push('\n');
        }
        for r in with_curves {
            out.push_str(&format!(
                "\nLoad curves of run {}\n\n{}",
                sheet::run_heading(m.matrix.runs[r]),
                curve_tables(&m.curves[r], true)
            ));
        }
        out.push_str(&cost_text(m));
        out
    }

    fn comparison(&self, m: &Model) -> String {
        let (measured, rest) = comparison_sheets(m);
        let notes = comparison_notes(m).join("\n");
        if m.layout.wide {
            let mut sheets = measured;
            sheets.extend(rest);
            format!("{}{notes}\n", tables::render(&sheets))
        } else {
            format!(
                "{}{}{}{notes}\n",
                layout::run_legend(&m.matrix, &m.order),
                tables::render_fitted(&measured),
                tables::render(&rest),
            )
        }
    }

    fn run(&self, m: &Model) -> String {
        let run = m.matrix.runs[0];
        format!(
            "{}\n{}{}",
            terminal::run_header(run),
            terminal::measurements(&run.measurements),
            curve_tables(&m.curves[0], true)
        )
    }
}
