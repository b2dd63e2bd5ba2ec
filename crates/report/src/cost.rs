//! The cost figures beside the index (`touchstone_analysis::cost`): one
//! sheet, which the terminal, Markdown and HTML formats render as they
//! render every sheet, and on the page a scatter of the index against the
//! price and against the power with the Pareto front marked
//! (`html::cost_charts`).

use touchstone_analysis::cost::{Cost, Scaled};
use touchstone_analysis::table::Matrix;

use crate::sheet::{run_heading, Sheet};

pub const COST_NOTE: &str = "Index per 1,000 of the currency and per watt: the overall index (base = 100) divided by the host's price / 1,000 and by its busy watts (else its nameplate rating; the column says which); the interval is the index's, divided alike (price and power are taken as exact). '-' = unknown; * = on the Pareto front (no other run has a higher index at a lower price or power). Method: docs/reports.md.";

fn scaled(s: Option<Scaled>, digits: usize) -> String {
    match s {
        Some(Scaled {
            value,
            interval: Some((a, b)),
        }) if a != b => format!("{value:.digits$} [{a:.digits$}–{b:.digits$}]"),
        Some(s) => format!("{:.digits$}", s.value),
        None => "-".into(),
    }
}

/// The runs' cost figures, in the report's `order`.
pub fn sheet(m: &Matrix, cost: &Cost, order: &[usize]) -> Sheet {
    let currency = cost.currency.as_deref().unwrap_or("currency");
    let header = vec![
        "run".to_string(),
        "index".to_string(),
        "price".to_string(),
        format!("index per 1,000 {currency}"),
        "watts".to_string(),
        "index per W".to_string(),
    ];
    let rows = order
        .iter()
        .filter_map(|&row| cost.of_row(row))
        .map(|c| {
            let mark = |on: bool| if on { " *" } else { "" };
            let base = if c.row == cost.base { " (base)" } else { "" };
            vec![
                format!("{}{base}", run_heading(m.runs[c.row])),
                scaled(c.index, 1),
                match (c.price, &c.currency) {
                    (Some(p), Some(cur)) => format!("{p} {cur}"),
                    _ => "-".into(),
                },
                scaled(c.per_price, 2) + mark(c.front_price),
                match (c.watts, c.power) {
                    (Some(w), Some(k)) => format!("{w} ({})", k.as_str()),
                    _ => "-".into(),
                },
                scaled(c.per_watt, 3) + mark(c.front_power),
            ]
        })
        .collect();
    let mut title = "Cost (index per price and per watt)".to_string();
    for n in &cost.notes {
        title += &format!("; {n}");
    }
    Sheet {
        title,
        group: String::new(),
        header,
        numeric: vec![false, true, true, true, true, true],
        key_columns: 1,
        rows,
    }
}
