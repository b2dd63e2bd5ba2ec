//! The tables of a page over many runs (more than `model::DETAIL_RUNS`),
//! where one column per run would be thousands wide: each measurement's
//! spread across the runs (quartiles, and the runs at either end), and the
//! index with one row per run, so that the slow node of a farm is one
//! click on a heading away.

use touchstone_analysis::compare::Comparison;
use touchstone_analysis::index::IndexLine;
use touchstone_analysis::table::{run_title, short_id, Matrix};
use touchstone_results::groups::title;
use touchstone_results::stats::quantile_sorted;

use crate::sheet::{column_scale, Sheet};

/// A run named in a cell: its short id and its title.
fn run_cell(m: &Matrix, r: usize) -> String {
    format!("{} {}", short_id(&m.runs[r].id), run_title(m.runs[r]))
}

/// Per report group, one row per measurement: how many of the runs in
/// `order` measured it, its lowest, quartiles, median and highest figure
/// across them (in one display scale), and the runs with the lowest and
/// the highest figure. Invalid figures are left out; the runs whose
/// figure a warning can move are counted.
pub fn summary(m: &Matrix, order: &[usize]) -> Vec<Sheet> {
    let header: Vec<String> = [
        "measurement",
        "unit",
        "runs",
        "marked !",
        "lowest",
        "q1",
        "median",
        "q3",
        "highest",
        "run with the lowest",
        "run with the highest",
    ]
    .map(String::from)
    .to_vec();
    let numeric = vec![
        false, false, true, true, true, true, true, true, true, false, false,
    ];
    m.groups()
        .into_iter()
        .map(|g| {
            let rows = m
                .group_columns(&g)
                .into_iter()
                .map(|c| {
                    let s = column_scale(m, c);
                    let mut at: Vec<(f64, usize)> = order
                        .iter()
                        .filter_map(|&r| m.cell(r, c)?.valid_value().map(|v| (v, r)))
                        .filter(|(v, _)| v.is_finite())
                        .collect();
                    at.sort_by(|a, b| a.0.total_cmp(&b.0));
                    let marked = order
                        .iter()
                        .filter(|&&r| m.cell(r, c).is_some_and(|x| x.marked))
                        .count();
                    let sorted: Vec<f64> = at.iter().map(|x| x.0).collect();
                    let q = |p: f64| {
                        if sorted.is_empty() {
                            "-".to_string()
                        } else {
                            s.format(quantile_sorted(&sorted, p))
                        }
                    };
                    let end = |i: Option<&(f64, usize)>| i.map_or("-".into(), |x| run_cell(m, x.1));
                    vec![
                        m.columns[c].label(),
                        s.label.to_string(),
                        at.len().to_string(),
                        marked.to_string(),
                        q(0.0),
                        q(0.25),
                        q(0.5),
                        q(0.75),
                        q(1.0),
                        end(at.first()),
                        end(at.last()),
                    ]
                })
                .collect();
            Sheet {
                title: title(&g).to_string(),
                group: g,
                header: header.clone(),
                numeric: numeric.clone(),
                key_columns: 2,
                rows,
            }
        })
        .collect()
}

/// The index with one row per run (in `order`, the base at 100), one
/// column per group and overall: each run's geometric mean of speed-ups
/// over the base (`touchstone_analysis::index`).
pub fn index_by_run(m: &Matrix, order: &[usize], c: &Comparison, lines: &[IndexLine]) -> Sheet {
    // Overall first, then the groups in report order.
    let ordered: Vec<&IndexLine> = lines
        .iter()
        .filter(|l| l.group == "overall")
        .chain(lines.iter().filter(|l| l.group != "overall"))
        .collect();
    let mut header = vec!["run".to_string(), "host (label)".to_string()];
    header.extend(ordered.iter().map(|l| match l.group.as_str() {
        "overall" => "overall".to_string(),
        g => title(g).to_string(),
    }));
    let row = |r: usize, values: Vec<String>| {
        let mut row = vec![short_id(&m.runs[r].id).to_string(), run_title(m.runs[r])];
        row.extend(values);
        row
    };
    let rows = order
        .iter()
        .map(|&r| match c.others.iter().position(|&o| o == r) {
            None => row(r, ordered.iter().map(|_| "100".to_string()).collect()),
            Some(k) => row(
                r,
                ordered
                    .iter()
                    .map(|l| l.values[k].map_or("-".into(), |v| format!("{v:.1}")))
                    .collect(),
            ),
        })
        .collect();
    let mut numeric = vec![false, false];
    numeric.extend(ordered.iter().map(|_| true));
    Sheet {
        title: format!(
            "Index (geometric mean of speed-ups, base {} = 100)",
            short_id(&m.runs[c.base].id)
        ),
        group: String::new(),
        header,
        numeric,
        key_columns: 2,
        rows,
    }
}
