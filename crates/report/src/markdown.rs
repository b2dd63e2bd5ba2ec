//! Sheets as GitHub-flavoured Markdown tables, one per group; load curves
//! as one table per CPU count with its line of figures and notes.

use touchstone_analysis::curve_analysis::analyse;
use touchstone_results::Run;

use crate::curves::curve_text;
use crate::sheet::{run_heading, Sheet};

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

/// The load curves of `runs`: per run and curve, a section with one table
/// per CPU count (one row per point), its line of figures, and the notes.
pub fn curves(runs: &[&Run]) -> String {
    let mut out = String::new();
    for run in runs {
        for curve in &run.curves {
            let text = curve_text(curve, &analyse(curve));
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
