//! The Markdown format: sheets as GitHub-flavoured Markdown tables, one
//! per family or group; load curves as one table per CPU count with its
//! line of figures and notes; one run as `run_export` writes it.

use crate::curves::curve_text;
use crate::model::Model;
use crate::sheet::{run_heading, Sheet};
use crate::{layout, run_export, text, Render};

pub struct Markdown;

impl Render for Markdown {
    fn summary(&self, m: &Model) -> String {
        let (sheets, note) = text::summary_sheets(m);
        let mut notes = vec![note.to_string()];
        if m.cost.is_some() {
            notes.push(crate::cost::COST_NOTE.to_string());
        }
        if !m.layout.wide {
            notes.push(layout::run_legend(&m.matrix, &m.order).replace('\n', "\n\n"));
        }
        render("touchstone summary", &sheets, &notes) + &curves(m)
    }

    fn comparison(&self, m: &Model) -> String {
        let (mut sheets, rest) = text::comparison_sheets(m);
        sheets.extend(rest);
        let mut notes = text::comparison_notes(m);
        if !m.layout.wide {
            notes.push(layout::run_legend(&m.matrix, &m.order).replace('\n', "\n\n"));
        }
        render("touchstone comparison", &sheets, &notes)
    }

    fn run(&self, m: &Model) -> String {
        run_export::markdown(m)
    }
}

fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

/// One sheet as a Markdown table (no title).
fn table(s: &Sheet) -> String {
    let mut out = String::new();
    // A two-line heading (name, then run id) becomes one line.
    let head: Vec<String> = s
        .header
        .iter()
        .map(|h| escape(&h.replace('\n', " ")))
        .collect();
    out.push_str(&format!("| {} |\n", head.join(" | ")));
    let rule: Vec<&str> = s
        .numeric
        .iter()
        .map(|&n| if n { "---:" } else { "---" })
        .collect();
    out.push_str(&format!("| {} |\n", rule.join(" | ")));
    for r in &s.rows {
        let cells: Vec<String> = r.iter().map(|c| escape(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

pub fn render(title: &str, sheets: &[Sheet], notes: &[String]) -> String {
    let mut out = format!("# {title}\n\n");
    for s in sheets {
        out.push_str(&format!("## {}\n\n{}\n", s.title, table(s)));
    }
    for n in notes {
        out.push_str(&format!("{n}\n\n"));
    }
    out
}

/// The load curves of the model's runs: per run and curve, a section with
/// one table per CPU count (one row per point), its line of figures, and
/// the notes.
pub fn curves(m: &Model) -> String {
    let mut out = String::new();
    for r in m.rows_with_curves() {
        let run = m.matrix.runs[r];
        for a in &m.curves[r] {
            let text = curve_text(a.curve, &a.analysis);
            out.push_str(&format!("## {} · run {}\n\n", text.title, run_heading(run)));
            for b in &text.blocks {
                out.push_str(&format!(
                    "### {}\n\n{}\n{}\n\n",
                    b.sheet.title,
                    table(&b.sheet),
                    escape(&b.line)
                ));
            }
            for n in &text.notes {
                out.push_str(&format!("- {}\n", escape(n)));
            }
            if !text.notes.is_empty() {
                out.push('\n');
            }
        }
    }
    out
}
