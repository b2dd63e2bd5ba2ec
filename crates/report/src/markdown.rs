//! Sheets as GitHub-flavoured Markdown tables, one per group.

use crate::sheet::Sheet;

fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

pub fn render(title: &str, sheets: &[Sheet], notes: &[String]) -> String {
    let mut out = format!("# {title}\n\n");
    for s in sheets {
        out.push_str(&format!("## {}\n\n", s.title));
        let head: Vec<String> = s.header.iter().map(|h| escape(h)).collect();
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
        out.push('\n');
    }
    for n in notes {
        out.push_str(&format!("{n}\n\n"));
    }
    out
}
