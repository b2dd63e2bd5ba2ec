//! The summary and comparison reports as plain tables of text ("sheets"),
//! one per report group, with one display scale per column. The terminal,
//! Markdown and HTML renderers all draw these, so they always agree.

use touchstone_analysis::compare::{Comparison, Verdict};
use touchstone_analysis::index::{IndexLine, IntervalMethod};
use touchstone_analysis::table::{run_title, short_id, Column, Matrix};
use touchstone_results::groups::title;
use touchstone_results::units::{format_sig, Scale};
use touchstone_results::Run;

/// One table: a title, a header row and text cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Sheet {
    pub title: String,
    /// The report group this sheet shows ("" for the index table).
    pub group: String,
    pub header: Vec<String>,
    /// Whether each column holds numbers (right-aligned).
    pub numeric: Vec<bool>,
    /// How many leading columns identify the row (repeated when a wide
    /// sheet is split for a terminal).
    pub key_columns: usize,
    pub rows: Vec<Vec<String>>,
}

/// A figure flagged by the harness's checks carries this mark.
pub const WARNING_MARK: &str = " !";

/// The display scale of a column: chosen once from all its figures.
pub fn column_scale(m: &Matrix, col: usize) -> Scale {
    let values: Vec<f64> = m.column_values(col).into_iter().flatten().collect();
    Scale::for_column(m.columns[col].unit, &values)
}

/// A column heading with its display unit.
pub fn heading(c: &Column, scale: &Scale) -> String {
    format!("{} ({})", c.label(), scale.label)
}

fn run_cells(run: &Run) -> [String; 2] {
    [short_id(&run.id).to_string(), run_title(run)]
}

/// The lmbench-style summary: one sheet per group, one row per run in
/// `order`, one column per measurement.
pub fn summary(m: &Matrix, order: &[usize]) -> Vec<Sheet> {
    m.groups()
        .into_iter()
        .map(|g| {
            let cols = m.group_columns(&g);
            let scales: Vec<Scale> = cols.iter().map(|&c| column_scale(m, c)).collect();
            let mut header = vec!["run".to_string(), "host (label)".to_string()];
            header.extend(
                cols.iter()
                    .zip(&scales)
                    .map(|(&c, s)| heading(&m.columns[c], s)),
            );
            let rows = order
                .iter()
                .map(|&r| {
                    let mut row = run_cells(m.runs[r]).to_vec();
                    row.extend(cols.iter().zip(&scales).map(|(&c, s)| match m.cell(r, c) {
                        None => "-".to_string(),
                        // Marked only by a warning that can move the figure.
                        Some(x) if x.marked => format!("{}{WARNING_MARK}", s.format(x.value())),
                        Some(x) => s.format(x.value()),
                    }));
                    row
                })
                .collect();
            let mut numeric = vec![false, false];
            numeric.extend(cols.iter().map(|_| true));
            Sheet {
                title: title(&g).to_string(),
                group: g,
                header,
                numeric,
                key_columns: 2,
                rows,
            }
        })
        .collect()
}

/// A ratio with its interval, e.g. "0.512 [0.498–0.530]".
pub fn ratio_text(r: &touchstone_analysis::compare::Ratio) -> String {
    format!(
        "{} [{}–{}]",
        format_sig(r.ratio),
        format_sig(r.low),
        format_sig(r.high)
    )
}

/// A run in a column heading: host (label) and short id.
pub fn run_heading(run: &Run) -> String {
    format!("{} {}", run_title(run), short_id(&run.id))
}

/// The comparison: one sheet per group with, per measurement, the base's
/// figure and each other run's figure, ratio to the base with its interval,
/// and verdict.
pub fn comparison(m: &Matrix, c: &Comparison) -> Vec<Sheet> {
    m.groups()
        .into_iter()
        .map(|g| {
            let mut header = vec![
                "benchmark".to_string(),
                "unit".to_string(),
                format!("base: {}", run_heading(m.runs[c.base])),
            ];
            let mut numeric = vec![false, false, true];
            for &o in &c.others {
                header.push(run_heading(m.runs[o]));
                header.push("ratio [CI]".to_string());
                header.push(String::new());
                numeric.extend([true, true, false]);
            }
            let rows = c
                .rows
                .iter()
                .filter(|r| m.columns[r.column].group == g)
                .map(|r| {
                    let col = &m.columns[r.column];
                    let s = column_scale(m, r.column);
                    let mut row = vec![
                        col.label(),
                        s.label.to_string(),
                        r.base.map_or("missing".into(), |v| s.format(v)),
                    ];
                    for cell in &r.cells {
                        row.push(cell.value.map_or("-".into(), |v| s.format(v)));
                        row.push(cell.ratio.as_ref().map_or("-".into(), ratio_text));
                        row.push(match cell.verdict {
                            Verdict::Unranked if cell.ratio.is_some_and(|x| x.differs()) => {
                                "differs".into()
                            }
                            v => v.mark().to_string(),
                        });
                    }
                    row
                })
                .collect();
            Sheet {
                title: title(&g).to_string(),
                group: g,
                header,
                numeric,
                key_columns: 3, // benchmark, unit, base; then three per run
                rows,
            }
        })
        .collect()
}

/// The index table: one row per group and overall, one column per run,
/// the base at 100.
pub fn index(m: &Matrix, c: &Comparison, lines: &[IndexLine]) -> Sheet {
    let mut header = vec![
        "group".to_string(),
        format!("base: {}", run_heading(m.runs[c.base])),
    ];
    header.extend(c.others.iter().map(|&o| run_heading(m.runs[o])));
    let rows = lines
        .iter()
        .map(|l| {
            let mut row = vec![
                if l.group == "overall" {
                    "overall".to_string()
                } else {
                    title(&l.group).to_string()
                },
                "100".to_string(),
            ];
            row.extend((0..l.values.len()).map(|k| index_cell(l, k)));
            row
        })
        .collect();
    let mut numeric = vec![false];
    numeric.extend(std::iter::repeat_n(true, 1 + c.others.len()));
    Sheet {
        title: "Index (geometric mean of speed-ups, base = 100; [interval], ~ where it holds 100)"
            .into(),
        group: String::new(),
        header,
        numeric,
        key_columns: 1,
        rows,
    }
}

/// One index with its interval and figure count; `~` marks an index whose
/// interval holds 100 (not significantly different from the base), and
/// "bound" an interval that is the wide bound of runs without rounds
/// rather than the bootstrap over rounds (`index::IntervalMethod`).
pub fn index_cell(l: &IndexLine, k: usize) -> String {
    let n = l.counts[k];
    match (l.values[k], l.intervals.get(k).copied().flatten()) {
        (Some(v), Some((a, b))) => {
            let mark = if l.not_significant(k) { " ~" } else { "" };
            let bound = match l.methods.get(k) {
                Some(IntervalMethod::Bound) => ", bound",
                _ => "",
            };
            format!("{v:.1} [{a:.1}–{b:.1}]{mark} (n={n}{bound})")
        }
        (Some(v), None) => format!("{v:.1} (n={n})"),
        (None, _) => "-".into(),
    }
}
