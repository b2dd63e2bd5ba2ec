//! CSV exports. Figures are in the stored unit (named in the header) at
//! full precision, so a spreadsheet gets exact numbers, not display text.
//! The summary reads like the terminal's: one line per measurement (the
//! swept parameter in its own columns), one column per run; load curves
//! add lines per point and figure (see `summary` and `comparison`).

use touchstone_analysis::compare::Verdict;
use touchstone_analysis::compare_curves::{CurveComparison, PeakSide};
use touchstone_analysis::cost::{Cost, RunCost, Scaled};
use touchstone_analysis::table::Matrix;
use touchstone_results::curve::Point;
use touchstone_results::Run;

use crate::model::{Compared, Model};
use crate::{run_export, Render};

pub struct Csv;

impl Render for Csv {
    fn summary(&self, m: &Model) -> String {
        let cost = m.cost.as_ref();
        if m.layout.wide {
            summary_wide(&m.matrix, &m.order, cost)
        } else {
            summary(&m.matrix, &m.order) + &cost.map_or(String::new(), |c| cost_lines(c, &m.order))
        }
    }

    fn comparison(&self, m: &Model) -> String {
        let compared = m.compared.as_ref().expect("a comparison's model");
        comparison(&m.matrix, compared)
            + &m.cost.as_ref().map_or(String::new(), |c| {
                cost_comparison_lines(
                    &m.matrix,
                    c,
                    compared.comparison.base,
                    &compared.comparison.others,
                )
            })
    }

    fn run(&self, m: &Model) -> String {
        run_export::csv(m.matrix.runs[0])
    }
}

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

/// The columns of a load-curve point in the summary, in stored units.
const POINT_COLUMNS: [&str; 28] = [
    "workload",
    "params",
    "operation",
    "cpus",
    "load",
    "throughput (ops/s)",
    "throughput_half_width (ops/s)",
    "confidence",
    "converged",
    "ci_width",
    "trials_kept",
    "trials_dropped",
    "p50 (ns)",
    "p90 (ns)",
    "p99 (ns)",
    "p99.9 (ns)",
    "max (ns)",
    "operations",
    "cpu_busy",
    "cpu_user",
    "cpu_system",
    "cpu_irq",
    "cpu_softirq",
    "cpu_steal",
    "cpu_idle",
    "client_cpu_per_op (ns)",
    "server_cpu_per_op (ns)",
    "touchstone_bound",
];

/// A curve's parameters as one field: "size:4 server:per-cpu".
fn params_field(params: &std::collections::BTreeMap<String, String>) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}:{v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn point_fields(workload: &str, params: &str, operation: &str, p: &Point) -> Vec<String> {
    let kept = p.kept_trials().count();
    let l = &p.latency;
    vec![
        workload.to_string(),
        params.to_string(),
        operation.to_string(),
        p.cpus.to_string(),
        p.load.to_string(),
        num(Some(p.throughput)),
        num(Some(p.throughput_half_width)),
        p.convergence.rule.confidence.to_string(),
        p.convergence.converged.to_string(),
        num(p.convergence.width),
        kept.to_string(),
        (p.trials.len() - kept).to_string(),
        l.p50_ns.to_string(),
        l.p90_ns.to_string(),
        l.p99_ns.to_string(),
        l.p999_ns.to_string(),
        l.max_ns.to_string(),
        l.count.to_string(),
        num(Some(p.cpu.busy())),
        num(Some(p.cpu.user)),
        num(Some(p.cpu.system)),
        num(Some(p.cpu.irq)),
        num(Some(p.cpu.softirq)),
        num(Some(p.cpu.steal)),
        num(Some(p.cpu.idle)),
        num(Some(p.service_demand.client_ns_per_op)),
        num(p.service_demand.server_ns_per_op),
        p.touchstone_bound().unwrap_or_default(),
    ]
}

fn run_fields(run: &Run) -> Vec<String> {
    vec![
        run.id.clone(),
        run.host.hostname.clone(),
        run.label.clone().unwrap_or_default(),
        run.started_at.to_rfc3339(),
    ]
}

/// The wide summary (`--wide`): one line per run (in `order`), one column
/// per measurement.
/// When the runs hold load curves, the point columns follow the
/// measurement columns, and each point of each curve is one more line
/// (its run's four identifying fields, empty measurement fields, then the
/// point): one table a spreadsheet reads whole, where the lines with a
/// `workload` are the points.
pub fn summary_wide(m: &Matrix, order: &[usize], cost: Option<&Cost>) -> String {
    let has_curves = order.iter().any(|&r| !m.runs[r].curves.is_empty());
    let figures = cost.map_or(Vec::new(), cost_figures);
    let mut head: Vec<String> = ["run", "host", "label", "started"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    head.extend(
        m.columns
            .iter()
            .map(|c| format!("{} ({})", c.label(), c.unit)),
    );
    // The cost figures (`cost_figures`), where the inventory gives them,
    // after the measurements: one value per run line.
    head.extend(figures.iter().map(|f| format!("{} ({})", f.name, f.unit)));
    if has_curves {
        head.extend(POINT_COLUMNS.iter().map(|s| s.to_string()));
    }
    let mut out = line(&head);
    for &r in order {
        let mut f = run_fields(m.runs[r]);
        f.extend(
            m.cells[r]
                .iter()
                .map(|c| num(c.as_ref().map(|x| x.value()))),
        );
        let of_run = cost.and_then(|c| c.of_row(r));
        f.extend(
            figures
                .iter()
                .map(|fig| of_run.map_or(String::new(), &fig.get)),
        );
        if has_curves {
            f.extend(POINT_COLUMNS.iter().map(|_| String::new()));
        }
        out.push_str(&line(&f));
    }
    for &r in order {
        let run = m.runs[r];
        for c in &run.curves {
            let params = params_field(&c.params);
            for p in &c.points {
                let mut f = run_fields(run);
                f.extend(m.columns.iter().map(|_| String::new()));
                f.extend(figures.iter().map(|_| String::new()));
                f.extend(point_fields(&c.workload, &params, &c.operation, p));
                out.push_str(&line(&f));
            }
        }
    }
    out
}

/// The figures of a load-curve point that the summary carries, each one
/// line per (curve, CPU count, load): name, unit and how to read it.
type PointFigure = (&'static str, &'static str, fn(&Point) -> f64);
const POINT_FIGURES: [PointFigure; 7] = [
    ("throughput", "ops/s", |p| p.throughput),
    ("throughput_half_width", "ops/s", |p| {
        p.throughput_half_width
    }),
    ("p50", "ns", |p| p.latency.p50_ns as f64),
    ("p99", "ns", |p| p.latency.p99_ns as f64),
    ("p99.9", "ns", |p| p.latency.p999_ns as f64),
    ("cpu_busy", "fraction", |p| p.cpu.busy()),
    ("client_cpu_per_op", "ns", |p| {
        p.service_demand.client_ns_per_op
    }),
];

/// The summary: one line per measurement (family by family, the swept
/// parameter down the rows as in the terminal's tables), one column per
/// run in `order` holding its headline figure in the stored unit. The
/// runs' load curves follow: one line per curve, CPU count, load and
/// figure (`POINT_FIGURES`), with group `curve` and the load as the swept
/// value. `--wide` gives `summary_wide`.
pub fn summary(m: &Matrix, order: &[usize]) -> String {
    let mut head: Vec<String> = [
        "group",
        "family",
        "measurement",
        "parallel",
        "case",
        "sweep",
        "sweep_value",
        "unit",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    head.extend(order.iter().map(|&r| m.runs[r].id.clone()));
    let mut out = line(&head);
    for f in crate::families::families(m) {
        for row in &f.rows {
            let col = &m.columns[row.column];
            let mut fields = vec![
                f.group.clone(),
                col.benchmark.clone(),
                col.name.clone(),
                col.parallel.to_string(),
                row.case.clone(),
                f.sweep.clone().unwrap_or_default(),
                row.value.clone(),
                col.unit.to_string(),
            ];
            fields.extend(
                order
                    .iter()
                    .map(|&r| num(m.cell(r, row.column).map(|x| x.value()))),
            );
            out.push_str(&line(&fields));
        }
    }
    // Curves: keyed by workload and parameters, in order of first appearance.
    let mut keys: Vec<(String, String)> = Vec::new();
    for &r in order {
        for c in &m.runs[r].curves {
            let k = (c.workload.clone(), params_field(&c.params));
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    for (workload, params) in keys {
        let curve_of = |r: usize| {
            m.runs[r]
                .curves
                .iter()
                .find(|c| c.workload == workload && params_field(&c.params) == params)
        };
        let mut at: Vec<(u32, u32)> = order
            .iter()
            .filter_map(|&r| curve_of(r))
            .flat_map(|c| c.points.iter().map(|p| (p.cpus, p.load)))
            .collect();
        at.sort_unstable();
        at.dedup();
        let stem = std::iter::once(workload.clone())
            .chain(
                params
                    .split(' ')
                    .filter(|s| !s.is_empty())
                    .map(String::from),
            )
            .collect::<Vec<_>>()
            .join("/");
        for (cpus, load) in at {
            for (figure, unit, get) in POINT_FIGURES {
                let mut fields = vec![
                    "curve".to_string(),
                    workload.clone(),
                    format!("{stem}/cpus:{cpus}/load:{load}/{figure}"),
                    load.to_string(),
                    format!("cpus:{cpus} {figure}"),
                    "load".to_string(),
                    load.to_string(),
                    unit.to_string(),
                ];
                fields.extend(order.iter().map(|&r| {
                    num(curve_of(r)
                        .and_then(|c| c.points.iter().find(|p| p.cpus == cpus && p.load == load))
                        .map(get))
                }));
                out.push_str(&line(&fields));
            }
        }
    }
    out
}

/// The comparison, one line per (measurement, run), then the load curves'
/// lines (see `curve_comparison_rows`), then one line per index (benchmark
/// "INDEX", the index in `value`, its interval in `ratio_low`/`ratio_high`,
/// and `same` in `verdict` where that interval holds 100).
pub fn comparison(m: &Matrix, compared: &Compared) -> String {
    let (c, index) = (&compared.comparison, &compared.index);
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
    for (k, &o) in c.others.iter().enumerate() {
        out.push_str(&curve_comparison_rows(
            &m.runs[c.base].id,
            &m.runs[o].id,
            &compared.curves[k],
        ));
    }
    for l in index {
        for (k, v) in l.values.iter().enumerate() {
            let interval = l.intervals.get(k).copied().flatten();
            // The index's interval in ratio_low/ratio_high (base 100), and
            // its verdict: same where the interval holds 100.
            let verdict = match (v, interval) {
                (Some(_), Some(_)) if l.not_significant(k) => "same",
                (Some(v), Some(_)) if *v > 100.0 => "faster",
                (Some(_), Some(_)) => "slower",
                _ => "",
            };
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
                num(interval.map(|i| i.0)),
                num(interval.map(|i| i.1)),
                format!("{verdict} n={}", l.counts[k]).trim().to_string(),
            ]));
        }
    }
    out
}

fn verdict_field(v: Verdict) -> String {
    format!("{v:?}").to_lowercase()
}

/// The comparison of two runs' load curves as comparison lines: group
/// `curve`, benchmark `WORKLOAD/PARAM:V…/cpus:K/load:L` (then `/p99` for
/// the p99 latency line, `/peak` for the peaks), `parallel` the load.
fn curve_comparison_rows(base: &str, other: &str, curves: &[CurveComparison]) -> String {
    let mut out = String::new();
    for cc in curves {
        let stem = std::iter::once(cc.workload.clone())
            .chain(cc.params.iter().map(|(k, v)| format!("{k}:{v}")))
            .collect::<Vec<_>>()
            .join("/");
        for p in &cc.points {
            let name = format!("{stem}/cpus:{}/load:{}", p.cpus, p.load);
            out.push_str(&line(&[
                "curve".into(),
                name.clone(),
                p.load.to_string(),
                "ops/s".into(),
                base.to_string(),
                num(p.base.map(|s| s.throughput.mean)),
                other.to_string(),
                num(p.other.map(|s| s.throughput.mean)),
                num(p.ratio.map(|x| x.ratio)),
                num(p.ratio.map(|x| x.low)),
                num(p.ratio.map(|x| x.high)),
                verdict_field(p.verdict),
            ]));
            out.push_str(&line(&[
                "curve".into(),
                format!("{name}/p99"),
                p.load.to_string(),
                "ns".into(),
                base.to_string(),
                num(p.base.map(|s| s.p99_ns as f64)),
                other.to_string(),
                num(p.other.map(|s| s.p99_ns as f64)),
                num(p.p99_ratio),
                String::new(),
                String::new(),
                String::new(),
            ]));
        }
        for p in &cc.peaks {
            let peak = |s: &Option<PeakSide>| {
                s.as_ref()
                    .and_then(|s| s.peak.as_ref().ok())
                    .map(|(load, t)| (*load, t.mean))
            };
            let (b, o) = (peak(&p.base), peak(&p.other));
            out.push_str(&line(&[
                "curve".into(),
                format!("{stem}/cpus:{}/peak", p.cpus),
                String::new(),
                "ops/s".into(),
                base.to_string(),
                num(b.map(|x| x.1)),
                other.to_string(),
                num(o.map(|x| x.1)),
                num(p.ratio.map(|x| x.ratio)),
                num(p.ratio.map(|x| x.low)),
                num(p.ratio.map(|x| x.high)),
                verdict_field(p.verdict),
            ]));
        }
    }
    out
}

/// One cost figure of a run, as a CSV field.
struct CostFigure {
    name: &'static str,
    unit: String,
    get: Box<dyn Fn(&RunCost) -> String>,
}

/// The cost figures (`touchstone_analysis::cost`) in stored form: the
/// index and its interval, the price, the index per 1,000 of the currency
/// and its interval, the watts, the index per watt and its interval, and
/// whether the run is on each Pareto front.
fn cost_figures(cost: &Cost) -> Vec<CostFigure> {
    let per_price = match &cost.currency {
        Some(c) => format!("index per 1,000 {c}"),
        None => "index per 1,000 currency".to_string(),
    };
    let fig = |name, unit: &str, get: Box<dyn Fn(&RunCost) -> String>| CostFigure {
        name,
        unit: unit.to_string(),
        get,
    };
    type Pick = fn(&RunCost) -> Option<Scaled>;
    let value = |pick: Pick| -> Box<dyn Fn(&RunCost) -> String> {
        Box::new(move |c| num(pick(c).map(|s| s.value)))
    };
    let low = |pick: Pick| -> Box<dyn Fn(&RunCost) -> String> {
        Box::new(move |c| num(pick(c).and_then(|s| s.interval).map(|i| i.0)))
    };
    let high = |pick: Pick| -> Box<dyn Fn(&RunCost) -> String> {
        Box::new(move |c| num(pick(c).and_then(|s| s.interval).map(|i| i.1)))
    };
    let (index, price, watt): (Pick, Pick, Pick) = (|c| c.index, |c| c.per_price, |c| c.per_watt);
    vec![
        fig("index", "index", value(index)),
        fig("index_low", "index", low(index)),
        fig("index_high", "index", high(index)),
        fig("price", "currency", Box::new(|c| num(c.price))),
        fig(
            "currency",
            "ISO 4217",
            Box::new(|c| c.currency.clone().unwrap_or_default()),
        ),
        fig("index_per_price", &per_price, value(price)),
        fig("index_per_price_low", &per_price, low(price)),
        fig("index_per_price_high", &per_price, high(price)),
        fig(
            "price_pareto_front",
            "bool",
            Box::new(|c| c.front_price.to_string()),
        ),
        fig("watts", "W", Box::new(|c| num(c.watts))),
        fig(
            "power",
            "busy|nameplate",
            Box::new(|c| c.power.map_or(String::new(), |k| k.as_str().to_string())),
        ),
        fig("index_per_watt", "index per W", value(watt)),
        fig("index_per_watt_low", "index per W", low(watt)),
        fig("index_per_watt_high", "index per W", high(watt)),
        fig(
            "power_pareto_front",
            "bool",
            Box::new(|c| c.front_power.to_string()),
        ),
    ]
}

/// The summary's cost lines: group and family `cost`, one line per
/// figure (`cost_figures`), one column per run in `order`; the report's
/// notes (several currencies, …) in the `case` field of the first.
fn cost_lines(cost: &Cost, order: &[usize]) -> String {
    let mut out = String::new();
    for (i, f) in cost_figures(cost).iter().enumerate() {
        let note = if i == 0 {
            cost.notes.join("; ")
        } else {
            String::new()
        };
        let mut fields = vec![
            "cost".to_string(),
            "cost".to_string(),
            f.name.to_string(),
            String::new(),
            note,
            String::new(),
            String::new(),
            f.unit.clone(),
        ];
        fields.extend(
            order
                .iter()
                .map(|&r| cost.of_row(r).map_or(String::new(), &f.get)),
        );
        out.push_str(&line(&fields));
    }
    out
}

/// The comparison's cost lines, after its index lines: benchmark
/// `INDEX_PER_PRICE` and `INDEX_PER_WATT` for each other run, the base's
/// figure in `base_value`, the run's in `value`, its interval in
/// `ratio_low`/`ratio_high`, and `pareto front` in `verdict` for a run
/// on that front.
fn cost_comparison_lines(m: &Matrix, cost: &Cost, base: usize, others: &[usize]) -> String {
    let per_price = match &cost.currency {
        Some(c) => format!("index per 1,000 {c}"),
        None => "index per 1,000 currency".to_string(),
    };
    type Pick = fn(&RunCost) -> (Option<Scaled>, bool);
    let kinds: [(&str, &str, Pick); 2] = [
        ("INDEX_PER_PRICE", &per_price, |c| {
            (c.per_price, c.front_price)
        }),
        ("INDEX_PER_WATT", "index per W", |c| {
            (c.per_watt, c.front_power)
        }),
    ];
    let mut out = String::new();
    for (name, unit, pick) in kinds {
        let base_value = cost.of_row(base).and_then(|c| pick(c).0).map(|s| s.value);
        for &o in others {
            let Some(c) = cost.of_row(o) else { continue };
            let (figure, front) = pick(c);
            let interval = figure.and_then(|s| s.interval);
            out.push_str(&line(&[
                "cost".into(),
                name.into(),
                String::new(),
                unit.to_string(),
                m.runs[base].id.clone(),
                num(base_value),
                m.runs[o].id.clone(),
                num(figure.map(|s| s.value)),
                String::new(),
                num(interval.map(|i| i.0)),
                num(interval.map(|i| i.1)),
                if front {
                    "pareto front".into()
                } else {
                    String::new()
                },
            ]));
        }
    }
    out
}
