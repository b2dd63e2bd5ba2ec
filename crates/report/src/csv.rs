//! CSV exports. Figures are in the stored unit (named in the header) at
//! full precision, so a spreadsheet gets exact numbers, not display text.

use touchstone_analysis::compare::Comparison;
use touchstone_analysis::index::IndexLine;
use touchstone_analysis::table::Matrix;

/// One field, quoted when it must be (RFC 4180).
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn line(fields: &[String]) -> String {
    fields
        .iter()
        .map(|f| field(f))
        .collect::<Vec<_>>()
        .join(",")
        + "\n"
}

fn num(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map_or(String::new(), |x| x.to_string())
}

/// The summary: one line per run (in `order`), one column per measurement.
pub fn summary(m: &Matrix, order: &[usize]) -> String {
    let mut head: Vec<String> = ["run", "host", "label", "started"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    head.extend(
        m.columns
            .iter()
            .map(|c| format!("{} ({})", c.label(), c.unit)),
    );
    let mut out = line(&head);
    for &r in order {
        let run = m.runs[r];
        let mut f = vec![
            run.id.clone(),
            run.host.hostname.clone(),
            run.label.clone().unwrap_or_default(),
            run.started_at.to_rfc3339(),
        ];
        f.extend(m.cells[r].iter().map(|c| num(c.map(|x| x.value()))));
        out.push_str(&line(&f));
    }
    out
}

/// The comparison, one line per (measurement, run), then one line per
/// index (benchmark "INDEX", the index in `value`).
pub fn comparison(m: &Matrix, c: &Comparison, index: &[IndexLine]) -> String {
    let head = [
        "group",
        "benchmark",
        "parallel",
        "unit",
        "base_run",
        "base_value",
        "run",
        "value",
        "ratio",
        "ratio_low",
        "ratio_high",
        "verdict",
    ];
    let mut out = line(&head.map(String::from));
    let base = &m.runs[c.base].id;
    for r in &c.rows {
        let col = &m.columns[r.column];
        for (k, cell) in r.cells.iter().enumerate() {
            out.push_str(&line(&[
                col.group.clone(),
                col.name.clone(),
                col.parallel.to_string(),
                col.unit.to_string(),
                base.clone(),
                num(r.base),
                m.runs[c.others[k]].id.clone(),
                num(cell.value),
                num(cell.ratio.map(|x| x.ratio)),
                num(cell.ratio.map(|x| x.low)),
                num(cell.ratio.map(|x| x.high)),
                format!("{:?}", cell.verdict).to_lowercase(),
            ]));
        }
    }
    for l in index {
        for (k, v) in l.values.iter().enumerate() {
            out.push_str(&line(&[
                l.group.clone(),
                "INDEX".into(),
                String::new(),
                "index".into(),
                base.clone(),
                "100".into(),
                m.runs[c.others[k]].id.clone(),
                num(*v),
                String::new(),
                String::new(),
                String::new(),
                format!("n={}", l.counts[k]),
            ]));
        }
    }
    out
}
