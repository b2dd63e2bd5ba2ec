//! What predicts my application? Given runs from several machines, some of
//! which timed an application (`touchstone app`, measurement `app/NAME`)
//! and all of which ran micro-benchmarks, this ranks every benchmark figure
//! by how well it tracks the application's speed across machines (the
//! BABAR farm study found one CPU index tracked reconstruction and another
//! did not), fits a small linear model of the application's time on the
//! best few figures, reports the model's leave-one-out error on the
//! machines it was fitted to, and predicts the time on machines that have
//! only micro-benchmark results. Pure functions over the results model.
//!
//! Conventions. A figure's *speed* is the figure when higher is better and
//! its reciprocal when lower is better; its *cost* is 1/speed (ns for a
//! latency, s·MB⁻¹·10⁻⁶ for a bandwidth, and so on). Correlation is Pearson's
//! r between log speeds (scale-free, so a benchmark that doubles when the
//! application halves scores 1 whatever its unit) and, for reference, r
//! between the application's time and the cost on a linear scale. The model
//! is time = c₀ + Σ cᵢ · costᵢ, least squares: the application as a
//! weighted sum of the operations the benchmarks time.

use std::collections::BTreeMap;

use touchstone_results::{Run, Unit};

/// One machine: every run on one host merged, the newest figure winning.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// The host name the runs report.
    pub name: String,
    /// The application's time (ns), if this machine timed it.
    pub app_ns: Option<f64>,
    /// Benchmark figures by measurement key: (figure, unit).
    pub figures: BTreeMap<String, (f64, Unit)>,
}

/// How one benchmark figure tracks the application across machines.
#[derive(Debug, Clone, PartialEq)]
pub struct Correlation {
    pub benchmark: String,
    pub unit: Unit,
    /// Pearson r between log(application speed) and log(benchmark speed):
    /// +1 when a faster benchmark means a proportionally faster application.
    pub r_log: f64,
    /// Pearson r between the application's time and the benchmark's cost.
    pub r_linear: f64,
    /// Machines with both figures.
    pub machines: usize,
}

/// A fitted model: time_ns = intercept + Σ coefficients[i] · cost(predictors[i]).
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub predictors: Vec<String>,
    pub intercept: f64,
    pub coefficients: Vec<f64>,
    /// Coefficient of determination on the fitted machines.
    pub r2: f64,
    /// Leave-one-out: for each fitted machine, (name, measured ns,
    /// predicted ns by the model fitted to the others).
    pub loo: Vec<(String, f64, f64)>,
    /// Mean and largest |predicted − measured| / measured over `loo`.
    pub loo_mean_rel_error: f64,
    pub loo_max_rel_error: f64,
}

impl Model {
    /// The predicted time (ns) for a machine's figures, or the predictors it lacks.
    pub fn predict(&self, figures: &BTreeMap<String, (f64, Unit)>) -> Result<f64, Vec<String>> {
        let mut t = self.intercept;
        let mut missing = Vec::new();
        for (p, c) in self.predictors.iter().zip(&self.coefficients) {
            match figures.get(p).and_then(|&(v, u)| cost(v, u)) {
                Some(x) => t += c * x,
                None => missing.push(p.clone()),
            }
        }
        if missing.is_empty() {
            Ok(t)
        } else {
            Err(missing)
        }
    }
}

/// A prediction for a machine that did not time the application.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    pub machine: String,
    /// Predicted ns, or the predictors the machine lacks.
    pub predicted_ns: Result<f64, Vec<String>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// The measurement name, `app/NAME`.
    pub app: String,
    pub machines: Vec<Machine>,
    /// Best first (by |r_log|).
    pub correlations: Vec<Correlation>,
    pub model: Option<Model>,
    /// Why there is no model, when there is none.
    pub no_model: Option<String>,
    pub predictions: Vec<Prediction>,
}

/// A figure's cost (1/speed), if it ranks machines at all.
pub fn cost(value: f64, unit: Unit) -> Option<f64> {
    if !(value.is_finite() && value > 0.0) {
        return None;
    }
    match unit.higher_is_better()? {
        true => Some(1.0 / value),
        false => Some(value),
    }
}

/// The measurement name of an application: `NAME` or `app/NAME` → `app/NAME`.
pub fn app_measurement(name: &str) -> String {
    if name.starts_with("app/") {
        name.to_string()
    } else {
        format!("app/{name}")
    }
}

/// The key of a measurement among a machine's figures: its name, with
/// "×P" when it ran with P > 1 processes.
fn key(name: &str, parallel: u32) -> String {
    if parallel > 1 {
        format!("{name} ×{parallel}")
    } else {
        name.to_string()
    }
}

/// Merge runs into machines (by host identity, the name plus the machine
/// id, so two machines of one name stay apart; newer runs override older ones).
pub fn machines(runs: &[Run], app: &str) -> Vec<Machine> {
    let app = app_measurement(app);
    let mut sorted: Vec<&Run> = runs.iter().collect();
    sorted.sort_by_key(|r| r.started_at);
    let mut out: Vec<Machine> = Vec::new();
    for run in sorted {
        let i = match out.iter().position(|m| m.name == run.host.identity()) {
            Some(i) => i,
            None => {
                out.push(Machine {
                    name: run.host.identity(),
                    app_ns: None,
                    figures: BTreeMap::new(),
                });
                out.len() - 1
            }
        };
        for m in &run.measurements {
            let v = m.value();
            if m.name == app && m.parallel == 1 && m.unit == Unit::Ns {
                out[i].app_ns = Some(v);
            } else if m.group != "app"
                && m.unit.higher_is_better().is_some()
                && v.is_finite()
                && v > 0.0
            {
                out[i].figures.insert(key(&m.name, m.parallel), (v, m.unit));
            }
        }
    }
    out
}

/// Pearson's r; `None` if fewer than 3 points or either side is constant.
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len();
    if n < 3 || y.len() != n {
        return None;
    }
    let mx = x.iter().sum::<f64>() / n as f64;
    let my = y.iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx <= 0.0 || syy <= 0.0 {
        return None;
    }
    Some(sxy / (sxx * syy).sqrt())
}

/// Every benchmark figure's correlation with the application, best first.
pub fn correlations(machines: &[Machine]) -> Vec<Correlation> {
    let mut names: BTreeMap<&str, Unit> = BTreeMap::new();
    for m in machines.iter().filter(|m| m.app_ns.is_some()) {
        for (k, (_, u)) in &m.figures {
            names.insert(k, *u);
        }
    }
    let mut out: Vec<Correlation> = names
        .into_iter()
        .filter_map(|(name, unit)| {
            let pairs: Vec<(f64, f64)> = machines
                .iter()
                .filter_map(|m| {
                    let t = m.app_ns?;
                    let c = m.figures.get(name).and_then(|&(v, u)| cost(v, u))?;
                    Some((t, c))
                })
                .collect();
            let (t, c): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
            let log_speed = |v: &[f64]| v.iter().map(|x| -x.ln()).collect::<Vec<_>>();
            let r_log = pearson(&log_speed(&t), &log_speed(&c))?;
            let r_linear = pearson(&t, &c)?;
            Some(Correlation {
                benchmark: name.to_string(),
                unit,
                r_log,
                r_linear,
                machines: pairs.len(),
            })
        })
        .collect();
    out.sort_by(|a, b| {
        b.r_log
            .abs()
            .total_cmp(&a.r_log.abs())
            .then_with(|| a.benchmark.cmp(&b.benchmark))
    });
    out
}

/// Solve the small dense system m · x = v (Gaussian elimination, partial
/// pivoting); `None` if singular.
fn solve_small(mut m: Vec<Vec<f64>>, mut v: Vec<f64>) -> Option<Vec<f64>> {
    let n = v.len();
    for k in 0..n {
        let p = (k..n).max_by(|&i, &j| m[i][k].abs().total_cmp(&m[j][k].abs()))?;
        if m[p][k].abs() < 1e-12 {
            return None;
        }
        m.swap(k, p);
        v.swap(k, p);
        for i in k + 1..n {
            let f = m[i][k] / m[k][k];
            for j in k..n {
                m[i][j] -= f * m[k][j];
            }
            v[i] -= f * v[k];
        }
    }
    let mut x = vec![0.0; n];
    for k in (0..n).rev() {
        let s: f64 = (k + 1..n).map(|j| m[k][j] * x[j]).sum();
        x[k] = (v[k] - s) / m[k][k];
    }
    Some(x)
}

/// Least squares y ≈ b₀ + Σ bⱼ xⱼ on standardised columns (so figures of
/// any magnitude are well conditioned); returns (b₀, [bⱼ]).
pub fn least_squares(xs: &[Vec<f64>], y: &[f64]) -> Option<(f64, Vec<f64>)> {
    let n = y.len();
    let k = xs.first().map_or(0, Vec::len);
    if n < k + 1 || xs.len() != n {
        return None;
    }
    let mean = |f: &dyn Fn(usize) -> f64| (0..n).map(f).sum::<f64>() / n as f64;
    let mx: Vec<f64> = (0..k).map(|j| mean(&|i| xs[i][j])).collect();
    let sx: Vec<f64> = (0..k)
        .map(|j| mean(&|i| (xs[i][j] - mx[j]).powi(2)).sqrt())
        .collect();
    if sx.iter().any(|&s| s <= 0.0 || !s.is_finite()) {
        return None;
    }
    let my = mean(&|i| y[i]);
    let z = |i: usize, j: usize| (xs[i][j] - mx[j]) / sx[j];
    let a: Vec<Vec<f64>> = (0..k)
        .map(|p| {
            (0..k)
                .map(|q| (0..n).map(|i| z(i, p) * z(i, q)).sum())
                .collect()
        })
        .collect();
    let rhs: Vec<f64> = (0..k)
        .map(|p| (0..n).map(|i| z(i, p) * (y[i] - my)).sum())
        .collect();
    let beta = solve_small(a, rhs)?;
    let coef: Vec<f64> = beta.iter().zip(&sx).map(|(b, s)| b / s).collect();
    let intercept = my - coef.iter().zip(&mx).map(|(c, m)| c * m).sum::<f64>();
    Some((intercept, coef))
}

/// Fit time = c₀ + Σ cᵢ costᵢ on `predictors` over the machines that have
/// the application and every predictor, with its leave-one-out error.
pub fn fit(machines: &[Machine], predictors: &[String]) -> Option<Model> {
    let rows: Vec<(&str, f64, Vec<f64>)> = machines
        .iter()
        .filter_map(|m| {
            let t = m.app_ns?;
            let xs = predictors
                .iter()
                .map(|p| m.figures.get(p).and_then(|&(v, u)| cost(v, u)))
                .collect::<Option<Vec<f64>>>()?;
            Some((m.name.as_str(), t, xs))
        })
        .collect();
    // Leave-one-out needs the fit without any one machine to be determined.
    if rows.len() < predictors.len() + 3 {
        return None;
    }
    let xs: Vec<Vec<f64>> = rows.iter().map(|r| r.2.clone()).collect();
    let y: Vec<f64> = rows.iter().map(|r| r.1).collect();
    let (intercept, coefficients) = least_squares(&xs, &y)?;
    let predict =
        |b0: f64, b: &[f64], x: &[f64]| b0 + b.iter().zip(x).map(|(c, v)| c * v).sum::<f64>();
    let my = y.iter().sum::<f64>() / y.len() as f64;
    let ss_tot: f64 = y.iter().map(|v| (v - my).powi(2)).sum();
    let ss_res: f64 = rows
        .iter()
        .map(|r| (r.1 - predict(intercept, &coefficients, &r.2)).powi(2))
        .sum();
    let mut loo = Vec::new();
    for i in 0..rows.len() {
        let others: Vec<usize> = (0..rows.len()).filter(|&j| j != i).collect();
        let xo: Vec<Vec<f64>> = others.iter().map(|&j| xs[j].clone()).collect();
        let yo: Vec<f64> = others.iter().map(|&j| y[j]).collect();
        let (b0, b) = least_squares(&xo, &yo)?;
        loo.push((rows[i].0.to_string(), y[i], predict(b0, &b, &xs[i])));
    }
    let rel: Vec<f64> = loo.iter().map(|(_, t, p)| ((p - t) / t).abs()).collect();
    Some(Model {
        predictors: predictors.to_vec(),
        intercept,
        coefficients,
        r2: if ss_tot > 0.0 {
            1.0 - ss_res / ss_tot
        } else {
            1.0
        },
        loo_mean_rel_error: rel.iter().sum::<f64>() / rel.len() as f64,
        loo_max_rel_error: rel.iter().copied().fold(0.0, f64::max),
        loo,
    })
}

/// How many of the best-correlated figures are tried as predictors.
const CANDIDATES: usize = 6;

/// The whole analysis: machines, ranking, the model with the smallest
/// leave-one-out error among subsets of up to `max_predictors` of the best
/// correlated figures (a larger model must beat a smaller one by 10 % of
/// its error to be preferred), and predictions for the other machines.
pub fn analyse(runs: &[Run], app: &str, max_predictors: usize) -> Analysis {
    let app = app_measurement(app);
    let machines = machines(runs, &app);
    let correlations = correlations(&machines);
    let candidates: Vec<String> = correlations
        .iter()
        .take(CANDIDATES)
        .map(|c| c.benchmark.clone())
        .collect();
    let mut best: Option<Model> = None;
    for size in 1..=max_predictors.max(1) {
        for subset in subsets(candidates.len(), size) {
            let preds: Vec<String> = subset.iter().map(|&i| candidates[i].clone()).collect();
            let Some(m) = fit(&machines, &preds) else {
                continue;
            };
            let better = match &best {
                None => true,
                Some(b) if m.predictors.len() > b.predictors.len() => {
                    m.loo_mean_rel_error < 0.9 * b.loo_mean_rel_error
                }
                Some(b) => m.loo_mean_rel_error < b.loo_mean_rel_error,
            };
            if better {
                best = Some(m);
            }
        }
    }
    let timed = machines.iter().filter(|m| m.app_ns.is_some()).count();
    let no_model = best.is_none().then(|| {
        if timed == 0 {
            format!("no machine has a timing of {app}")
        } else if correlations.is_empty() {
            format!(
                "no benchmark figure is shared by 3 or more machines that timed {app} ({timed} did)"
            )
        } else {
            format!(
                "a model with leave-one-out error needs at least 4 machines with {app} and the same benchmarks ({timed} timed it)"
            )
        }
    });
    let predictions = match &best {
        Some(model) => machines
            .iter()
            .filter(|m| m.app_ns.is_none())
            .map(|m| Prediction {
                machine: m.name.clone(),
                predicted_ns: model.predict(&m.figures),
            })
            .collect(),
        None => Vec::new(),
    };
    Analysis {
        app,
        machines,
        correlations,
        model: best,
        no_model,
        predictions,
    }
}

/// All index subsets of {0..n} of the given size, in lexicographic order.
fn subsets(n: usize, size: usize) -> Vec<Vec<usize>> {
    fn go(start: usize, n: usize, size: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == size {
            out.push(cur.clone());
            return;
        }
        for i in start..n {
            cur.push(i);
            go(i + 1, n, size, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    go(0, n, size, &mut Vec::new(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};
    use touchstone_results::random::SplitMix64;
    use touchstone_results::Measurement;

    fn measurement(name: &str, group: &str, unit: Unit, v: f64) -> Measurement {
        Measurement::synthetic(name, group, unit, vec![v])
    }

    fn run(host: &str, second: i64, ms: Vec<Measurement>) -> Run {
        Run {
            started_at: Utc.timestamp_opt(second, 0).unwrap(),
            measurements: ms,
            ..Run::synthetic(&format!("{host}-{second}"), host)
        }
    }

    /// Machines whose application time is 2 s + 3·10⁷ × (ns of
    /// `lat_syscall/null`) with 1 % noise; `linpack` and `bw_mem` vary
    /// independently. The app is timed in a run of its own, as
    /// `touchstone app` stores it; the last two machines never time it.
    fn farm(machines: usize, noise: f64) -> (Vec<Run>, Vec<f64>) {
        // Seeded, so the "noise" is reproducible.
        let mut rng = SplitMix64::new(0x9e3779b97f4a7c15);
        let mut runs = Vec::new();
        let mut truth = Vec::new();
        for i in 0..machines {
            let host = format!("node-{i}");
            let syscall_ns = 50.0 + 200.0 * rng.unit();
            let mflops = 500.0 + 5000.0 * rng.unit();
            let mbps = 1000.0 + 20000.0 * rng.unit();
            let app_ns = (2e9 + 3e7 * syscall_ns) * (1.0 + noise * (2.0 * rng.unit() - 1.0));
            truth.push(2e9 + 3e7 * syscall_ns);
            runs.push(run(
                &host,
                10 * i as i64,
                vec![
                    measurement("lat_syscall/null", "proc", Unit::Ns, syscall_ns),
                    measurement("linpack/n:100", "cpu", Unit::Mflops, mflops),
                    measurement("bw_mem/rd/size:64m", "mem_bw", Unit::MBps, mbps),
                    measurement("mhz", "proc", Unit::Mhz, 3000.0),
                ],
            ));
            if i + 2 < machines {
                runs.push(run(
                    &host,
                    10 * i as i64 + 1,
                    vec![measurement("app/reco", "app", Unit::Ns, app_ns)],
                ));
            }
        }
        (runs, truth)
    }

    #[test]
    fn recovers_a_known_linear_relation() {
        let (runs, truth) = farm(12, 0.01);
        let a = analyse(&runs, "reco", 2);
        assert_eq!(a.app, "app/reco");
        assert_eq!(a.machines.len(), 12);
        assert_eq!(a.correlations[0].benchmark, "lat_syscall/null");
        assert!(a.correlations[0].r_log > 0.95, "{:?}", a.correlations[0]);
        // The constant figure (mhz) cannot correlate and is left out.
        assert!(a.correlations.iter().all(|c| c.benchmark != "mhz"));
        let m = a.model.expect("a model");
        assert_eq!(m.predictors, vec!["lat_syscall/null".to_string()]);
        assert!((m.coefficients[0] / 3e7 - 1.0).abs() < 0.1, "{m:?}");
        assert!((m.intercept / 2e9 - 1.0).abs() < 0.1, "{m:?}");
        assert!(m.r2 > 0.9);
        assert!(m.loo_mean_rel_error < 0.02, "{m:?}");
        assert_eq!(m.loo.len(), 10);
        // The two machines without the application are predicted.
        assert_eq!(a.predictions.len(), 2);
        for (p, t) in a.predictions.iter().zip(&truth[10..]) {
            let got = *p.predicted_ns.as_ref().unwrap();
            assert!((got / t - 1.0).abs() < 0.03, "{} {got} vs {t}", p.machine);
        }
    }

    #[test]
    fn exact_data_is_fitted_exactly() {
        let xs: Vec<Vec<f64>> = (0..6).map(|i| vec![i as f64, (i * i) as f64]).collect();
        let y: Vec<f64> = xs.iter().map(|x| 1.0 + 2.0 * x[0] - 0.5 * x[1]).collect();
        let (b0, b) = least_squares(&xs, &y).unwrap();
        assert!((b0 - 1.0).abs() < 1e-9 && (b[0] - 2.0).abs() < 1e-9 && (b[1] + 0.5).abs() < 1e-9);
    }

    #[test]
    fn too_few_machines_give_a_reason_not_a_model() {
        let (runs, _) = farm(4, 0.01); // only 2 timed the app
        let a = analyse(&runs, "app/reco", 1);
        assert!(a.model.is_none());
        assert!(a.no_model.is_some());
        let a = analyse(&runs, "nothing", 1);
        assert!(a.no_model.unwrap().contains("no machine"));
    }

    #[test]
    fn pearson_signs() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert!((pearson(&x, &[2.0, 4.0, 6.0, 8.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((pearson(&x, &[8.0, 6.0, 4.0, 2.0]).unwrap() + 1.0).abs() < 1e-12);
        assert!(pearson(&x, &[1.0, 1.0, 1.0, 1.0]).is_none());
    }
}
