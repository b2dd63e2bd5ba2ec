//! JSON exports of the summary and the comparison, in stored units, for
//! programs (the runs themselves are exchanged with `touchstone export`).

use serde_json::{json, Value};
use touchstone_analysis::compare::Comparison;
use touchstone_analysis::index::IndexLine;
use touchstone_analysis::table::Matrix;
use touchstone_results::Run;

fn run_json(r: &Run) -> Value {
    json!({
        "id": r.id,
        "label": r.label,
        "host": r.host.hostname,
        "cpu": r.host.cpu.model,
        "kernel": r.host.kernel,
        "started_at": r.started_at,
    })
}

pub fn summary(m: &Matrix, order: &[usize]) -> String {
    let rows: Vec<Value> = order
        .iter()
        .map(|&r| {
            let values: Vec<Value> = m.cells[r]
                .iter()
                .map(|c| match c {
                    None => Value::Null,
                    Some(x) => json!({
                        "value": x.value(),
                        "ci_low": x.summary.ci_low,
                        "ci_high": x.summary.ci_high,
                        "n": x.summary.n,
                        "warnings": x.warnings.iter().map(|w| &w.code).collect::<Vec<_>>(),
                    }),
                })
                .collect();
            json!({ "run": m.runs[r].id, "values": values })
        })
        .collect();
    let doc = json!({
        "report": "summary",
        "runs": order.iter().map(|&r| run_json(m.runs[r])).collect::<Vec<_>>(),
        "columns": m.columns,
        "rows": rows,
    });
    serde_json::to_string_pretty(&doc).expect("serialisable")
}

pub fn comparison(m: &Matrix, c: &Comparison, index: &[IndexLine]) -> String {
    let rows: Vec<Value> = c
        .rows
        .iter()
        .map(|r| {
            let col = &m.columns[r.column];
            json!({
                "name": col.name,
                "parallel": col.parallel,
                "group": col.group,
                "unit": col.unit,
                "base": r.base,
                "runs": r.cells.iter().enumerate().map(|(k, cell)| {
                    let mut v = serde_json::to_value(cell).expect("serialisable");
                    v["run"] = json!(m.runs[c.others[k]].id);
                    v
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    let doc = json!({
        "report": "compare",
        "base": run_json(m.runs[c.base]),
        "runs": c.others.iter().map(|&o| run_json(m.runs[o])).collect::<Vec<_>>(),
        "rows": rows,
        "index": index,
    });
    serde_json::to_string_pretty(&doc).expect("serialisable")
}
