//! `touchstone predict APP [RUNS…]`: which benchmark figures track an
//! application's speed across machines, the small linear model that best
//! predicts its time (with leave-one-out error), and its predictions for
//! machines that ran only micro-benchmarks. The analysis is
//! `touchstone_analysis::predict`; this file loads runs and prints.

use serde_json::json;
use touchstone_analysis::predict::{analyse, Analysis};
use touchstone_report::terminal::text_table;
use touchstone_results::store::Store;
use touchstone_results::units::{format_sig, format_value};
use touchstone_results::Unit;

use crate::args::PredictArgs;
use crate::error::CliError;

/// How a model term reads: the figure itself for a latency, 1/figure otherwise.
fn cost_label(name: &str, unit: Unit) -> String {
    if unit.higher_is_better() == Some(false) {
        format!("{name} [{unit}]")
    } else {
        format!("1/{name} [1/{unit}]")
    }
}

pub fn predict(store: &Store, a: PredictArgs) -> Result<(), CliError> {
    if a.max_predictors == 0 || a.max_predictors > 4 {
        return Err(CliError::Usage(format!(
            "--max-predictors {}: must be 1..=4 (a model with more terms than that needs far more machines than farms usually have)",
            a.max_predictors
        )));
    }
    let ids = if a.runs.is_empty() {
        store.list_runs()?.into_iter().map(|r| r.id).collect()
    } else {
        a.runs
            .iter()
            .map(|s| store.resolve(s))
            .collect::<Result<Vec<_>, _>>()?
    };
    let runs = super::stored::load_readable(store, &ids)?;
    let an = analyse(&runs, &a.app, a.max_predictors);
    if an.machines.iter().all(|m| m.app_ns.is_none()) {
        return Err(CliError::Usage(format!(
            "no run has a timing of {} (time it with `touchstone app --name {} -- COMMAND…`)",
            an.app,
            an.app.trim_start_matches("app/")
        )));
    }
    if a.json {
        crate::output::print_json(&format!("{}\n", to_json(&an)));
    } else {
        crate::output::print(&to_text(&an));
    }
    Ok(())
}

fn unit_of(an: &Analysis, name: &str) -> Unit {
    an.correlations
        .iter()
        .find(|c| c.benchmark == name)
        .map_or(Unit::Ns, |c| c.unit)
}

fn to_text(an: &Analysis) -> String {
    let mut s = String::new();
    let timed: Vec<_> = an.machines.iter().filter(|m| m.app_ns.is_some()).collect();
    s.push_str(&format!(
        "{}: timed on {} of {} machines ({})\n\n",
        an.app,
        timed.len(),
        an.machines.len(),
        timed
            .iter()
            .map(|m| format!("{} {}", m.name, format_value(Unit::Ns, m.app_ns.unwrap())))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    if an.correlations.is_empty() {
        s.push_str("no benchmark figure is shared by 3 or more of those machines\n");
    } else {
        s.push_str(
            "How each figure tracks the application's speed across machines (best first):\n",
        );
        s.push_str(&text_table(
            &[
                "benchmark",
                "unit",
                "r (log speed)",
                "r (time vs cost)",
                "machines",
            ],
            an.correlations.iter().map(|c| {
                vec![
                    c.benchmark.clone(),
                    c.unit.to_string(),
                    format!("{:+.3}", c.r_log),
                    format!("{:+.3}", c.r_linear),
                    c.machines.to_string(),
                ]
            }),
        ));
        s.push_str(
            "r (log speed) is +1 when a faster benchmark means a proportionally faster application.\n\n",
        );
    }
    match (&an.model, &an.no_model) {
        (Some(m), _) => {
            let terms: Vec<String> = m
                .predictors
                .iter()
                .zip(&m.coefficients)
                .map(|(p, c)| format!("{} × {}", format_sig(*c), cost_label(p, unit_of(an, p))))
                .collect();
            s.push_str(&format!(
                "Model (least squares, time in ns): time = {} + {}\n  R² {:.3} on {} machines; leave-one-out error: mean {:.1} %, worst {:.1} %\n",
                format_sig(m.intercept),
                terms.join(" + "),
                m.r2,
                m.loo.len(),
                100.0 * m.loo_mean_rel_error,
                100.0 * m.loo_max_rel_error
            ));
            s.push_str(&text_table(
                &["machine", "measured", "predicted (left out)", "error"],
                m.loo.iter().map(|(name, t, p)| {
                    vec![
                        name.clone(),
                        format_value(Unit::Ns, *t),
                        format_value(Unit::Ns, *p),
                        format!("{:+.1} %", 100.0 * (p - t) / t),
                    ]
                }),
            ));
            if !an.predictions.is_empty() {
                s.push_str("\nPredictions for machines that did not time the application:\n");
                let rows = an.predictions.iter().map(|p| {
                    vec![
                        p.machine.clone(),
                        match &p.predicted_ns {
                            Ok(t) => format_value(Unit::Ns, *t),
                            Err(missing) => format!("cannot: lacks {}", missing.join(", ")),
                        },
                    ]
                });
                s.push_str(&text_table(&["machine", "predicted time"], rows));
            }
        }
        (None, Some(why)) => s.push_str(&format!("No model: {why}.\n")),
        (None, None) => {}
    }
    s
}

fn to_json(an: &Analysis) -> String {
    let v = json!({
        "app": an.app,
        "machines": an.machines.iter().map(|m| json!({
            "name": m.name,
            "app_ns": m.app_ns,
            "figures": m.figures.len(),
        })).collect::<Vec<_>>(),
        "correlations": an.correlations.iter().map(|c| json!({
            "benchmark": c.benchmark,
            "unit": c.unit,
            "r_log_speed": c.r_log,
            "r_time_vs_cost": c.r_linear,
            "machines": c.machines,
        })).collect::<Vec<_>>(),
        "model": an.model.as_ref().map(|m| json!({
            "predictors": m.predictors,
            "intercept_ns": m.intercept,
            "coefficients": m.coefficients,
            "r2": m.r2,
            "loo": m.loo.iter().map(|(n, t, p)| json!({"machine": n, "measured_ns": t, "predicted_ns": p})).collect::<Vec<_>>(),
            "loo_mean_rel_error": m.loo_mean_rel_error,
            "loo_max_rel_error": m.loo_max_rel_error,
        })),
        "no_model": an.no_model,
        "predictions": an.predictions.iter().map(|p| match &p.predicted_ns {
            Ok(t) => json!({"machine": p.machine, "predicted_ns": t}),
            Err(missing) => json!({"machine": p.machine, "missing": missing}),
        }).collect::<Vec<_>>(),
    });
    serde_json::to_string_pretty(&v).expect("serialisable")
}
