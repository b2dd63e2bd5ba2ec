//! The page's Cost section: the cost sheet (`crate::cost`) and a scatter
//! of each run's index against its host's price and against its power,
//! the index's interval as a bar, the Pareto front joined by a dashed line
//! and its runs ringed.

use std::fmt::Write;

use touchstone_analysis::cost::{Cost, RunCost};
use touchstone_analysis::table::Matrix;

use super::charts::Chart;
use super::svg::{color, escape, plot, Dash, Layer, Mark, Plot, XAxis};
use super::{chart_grid, table};
use crate::model::Model;

/// One scatter: the index against `x` (price or watts), `front` telling
/// which runs are on its Pareto front.
fn scatter(
    m: &Matrix,
    cost: &Cost,
    title: &str,
    x_label: &str,
    x: impl Fn(&RunCost) -> Option<f64>,
    front: impl Fn(&RunCost) -> bool,
) -> Option<Chart> {
    let placed: Vec<(&RunCost, f64, f64)> = cost
        .runs
        .iter()
        .filter_map(|r| Some((r, x(r)?, r.index?.value)))
        .collect();
    if placed.is_empty() {
        return None;
    }
    let mut layers: Vec<Layer> = placed
        .iter()
        .map(|&(r, x, y)| Layer {
            name: crate::sheet::run_heading(m.runs[r.row]),
            color: color(r.row),
            points: vec![(x, y)],
            bars: r.index.and_then(|i| i.interval).into_iter().collect(),
            dash: Dash::None,
            markers: true,
        })
        .collect();
    let mut on_front: Vec<(f64, f64)> = placed
        .iter()
        .filter(|(r, _, _)| front(r))
        .map(|&(_, x, y)| (x, y))
        .collect();
    on_front.sort_by(|a, b| a.0.total_cmp(&b.0));
    let marks = on_front
        .iter()
        .map(|&(x, y)| Mark {
            x,
            y,
            label: "front".into(),
            color: "#444",
        })
        .collect();
    layers.push(Layer {
        name: "Pareto front".into(),
        color: "#444",
        points: on_front,
        bars: Vec::new(),
        dash: Dash::Dashed,
        markers: false,
    });
    let svg = plot(&Plot {
        title,
        xaxis: XAxis::Linear,
        x_label,
        y_label: "index (base = 100)",
        y_div: 1.0,
        log_y: false,
        layers,
        marks,
    });
    Some(Chart {
        title: title.to_string(),
        svg,
    })
}

/// The Cost section, where the model has cost figures.
pub fn section(out: &mut String, model: &Model) {
    let Some(cost) = &model.cost else {
        return;
    };
    let m = &model.matrix;
    out.push_str(r#"<section id="cost"><h2>Cost</h2>"#);
    let _ = write!(
        out,
        r#"<p class="note">{}</p>"#,
        escape(crate::cost::COST_NOTE)
    );
    table(out, &crate::cost::sheet(m, cost, &model.order));
    let currency = cost.currency.as_deref().unwrap_or("");
    let charts: Vec<Chart> = [
        scatter(
            m,
            cost,
            "Index against price",
            &format!("price ({currency})"),
            |r| cost.currency.as_ref().and(r.price),
            |r| r.front_price,
        ),
        scatter(
            m,
            cost,
            "Index against power",
            "watts (busy, else nameplate)",
            |r| r.watts,
            |r| r.front_power,
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !charts.is_empty() {
        chart_grid(out, &charts, false);
    }
    out.push_str("</section>");
}
