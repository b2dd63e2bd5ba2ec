//! JSON exports of the summary and the comparison, in stored units, for
//! programs (the runs themselves are exchanged with `touchstone export`).
//! Load curves carry their points (figures, not histograms) and their
//! analysis; an absent figure is an object naming why.

use serde::Serialize;
use serde_json::{json, Value};
use touchstone_analysis::curve_analysis::Analysed;
use touchstone_results::curve::Point;
use touchstone_results::Run;

use crate::model::Model;
use crate::{Media, Render};

pub struct Json;

impl Render for Json {
    fn summary(&self, m: &Model) -> String {
        summary(m) + "\n"
    }

    fn comparison(&self, m: &Model) -> String {
        comparison(m) + "\n"
    }

    /// The run as the exchange format holds it (`touchstone export`).
    fn run(&self, m: &Model) -> String {
        touchstone_results::json::to_string(vec![m.matrix.runs[0].clone()]) + "\n"
    }

    fn media(&self) -> Media {
        Media::Json
    }
}

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

/// The cost figures (`touchstone_analysis::cost::Cost`), each run's in
/// the report's order, where the model has them.
fn add_cost(doc: &mut Value, model: &Model) {
    let Some(c) = &model.cost else {
        return;
    };
    let runs: Vec<&touchstone_analysis::cost::RunCost> =
        model.order.iter().filter_map(|&r| c.of_row(r)).collect();
    doc["cost"] = json!({
        "base": model.matrix.runs[c.base].id,
        "currency": c.currency,
        "notes": c.notes,
        "runs": runs,
    });
}

pub fn summary(model: &Model) -> String {
    let (m, order) = (&model.matrix, &model.order);
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
                        "warnings": x.warnings,
                    }),
                })
                .collect();
            json!({ "run": m.runs[r].id, "values": values })
        })
        .collect();
    let curves: Vec<Value> = order
        .iter()
        .flat_map(|&r| {
            model.curves[r]
                .iter()
                .map(move |a| curve_json(m.runs[r], a))
        })
        .collect();
    let mut doc = json!({
        "report": "summary",
        "runs": order.iter().map(|&r| run_json(m.runs[r])).collect::<Vec<_>>(),
        "columns": m.columns,
        "rows": rows,
        "curves": curves,
    });
    add_cost(&mut doc, model);
    serde_json::to_string_pretty(&doc).expect("serialisable")
}

pub fn comparison(model: &Model) -> String {
    let m = &model.matrix;
    let compared = model.compared.as_ref().expect("a comparison's model");
    let (c, index) = (&compared.comparison, &compared.index);
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
    let base = m.runs[c.base];
    let curves: Vec<Value> = c
        .others
        .iter()
        .zip(&compared.curves)
        .map(|(&o, curves)| {
            json!({
                "base": base.id,
                "run": m.runs[o].id,
                "curves": curves,
            })
        })
        .collect();
    let mut doc = json!({
        "report": "compare",
        "base": run_json(base),
        "runs": c.others.iter().map(|&o| run_json(m.runs[o])).collect::<Vec<_>>(),
        "rows": rows,
        "index": index,
        "curves": curves,
    });
    add_cost(&mut doc, model);
    serde_json::to_string_pretty(&doc).expect("serialisable")
}

/// A figure that exists, or an object `{key: reason}` saying why not.
fn or_reason<T: Serialize, E: std::fmt::Display>(r: &Result<T, E>, key: &str) -> Value {
    match r {
        Ok(v) => serde_json::to_value(v).expect("serialisable"),
        Err(e) => json!({ key: e.to_string() }),
    }
}

fn point_json(p: &Point) -> Value {
    let kept = p.kept_trials().count();
    let l = &p.latency;
    let mut v = json!({
        "load": p.load,
        "cpus": p.cpus,
        "cpu_ids": p.cpu_ids,
        "throughput": p.throughput,
        "throughput_half_width": p.throughput_half_width,
        "convergence": p.convergence,
        "trials_kept": kept,
        "trials_dropped": p.trials.len() - kept,
        "latency_ns": {
            "count": l.count, "min": l.min_ns, "mean": l.mean_ns, "p50": l.p50_ns,
            "p90": l.p90_ns, "p99": l.p99_ns, "p99.9": l.p999_ns, "max": l.max_ns,
        },
        "cpu": p.cpu,
        "service_demand": p.service_demand,
        "self_check": p.self_check,
        "touchstone_bound": p.touchstone_bound(),
    });
    // The window's energy, where the machine exposed a counter.
    if !p.extra.is_empty() {
        v["extra"] = json!(p.extra);
    }
    v
}

/// One curve of `run`: its points, and per CPU count the peak, knee,
/// crossover and USL fit; across CPU counts S(k) and the USL over CPUs.
/// Indices in the analysis are into `points`.
fn curve_json(run: &Run, analysed: &Analysed) -> Value {
    let (c, a) = (analysed.curve, &analysed.analysis);
    let by_cpus: Vec<Value> = a
        .by_cpus
        .iter()
        .map(|k| {
            let (peak, knee, crossover) = match &k.summary {
                Ok(s) => (
                    serde_json::to_value(&s.peak).expect("serialisable"),
                    match &s.knee {
                        Ok(knee) => serde_json::to_value(knee).expect("serialisable"),
                        Err(no) => json!({ "not_detected": no.reason() }),
                    },
                    serde_json::to_value(s.crossover).expect("serialisable"),
                ),
                Err(e) => {
                    let why = json!({ "not_computed": e.to_string() });
                    (why.clone(), why.clone(), why)
                }
            };
            json!({
                "cpus": k.cpus,
                "excluded": k.excluded,
                "peak": peak,
                "knee": knee,
                "crossover": crossover,
                "usl": or_reason(&k.usl, "not_fitted"),
                "touchstone_bound": {
                    "points": k.bound,
                    "peak": k.peak_rests_on_bound(),
                    "knee": k.knee_rests_on_bound(c),
                },
            })
        })
        .collect();
    let scaling = a.scaling.as_ref().map(|s| {
        json!({
            "cpus": s.cpus,
            "at_peak": or_reason(&s.at_peak, "not_computed"),
            "at_load": s.at_load.iter().map(|l| json!({
                "load": l.load,
                "scaling": or_reason(&l.scaling, "not_computed"),
                "touchstone_bound_cpus": l.bound_cpus,
            })).collect::<Vec<_>>(),
            "usl": or_reason(&s.usl, "not_fitted"),
            "touchstone_bound_peaks": s.bound_peaks,
        })
    });
    json!({
        "run": run.id,
        "workload": c.workload,
        "params": c.params,
        "operation": c.operation,
        "bytes_per_op": c.bytes_per_op,
        "unmeasured_cpus": c.unmeasured_cpus,
        "points": c.points.iter().map(point_json).collect::<Vec<_>>(),
        "analysis": { "by_cpus": by_cpus, "scaling": scaling },
    })
}

#[cfg(test)]
mod tests {
    use super::point_json;
    use crate::testdata::point;

    #[test]
    fn a_points_energy_is_in_the_json_only_where_it_was_measured() {
        let mut p = point(2, 1, 1000.0, 0.01, 50_000);
        assert!(point_json(&p).get("extra").is_none());
        p.extra.insert("energy_package_w".into(), 21.5);
        assert_eq!(point_json(&p)["extra"]["energy_package_w"], 21.5);
    }
}
