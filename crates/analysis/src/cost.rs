//! What the speed costs: each run's overall index (`crate::index`, against
//! a base run at 100) divided by its host's price in thousands of the
//! currency and by its watts (`touchstone_results::inventory`), with the
//! index's interval divided alike — the price and the power are inputs
//! taken as exact, so the interval is the index's own, scaled. A figure
//! is absent where its host has no price or power; prices in several
//! currencies give no per-price figures at all (nothing converts them).
//! The Pareto fronts are the runs no other run beats on both the index and
//! the price (or the power). Method: docs/reports.md.

use serde::Serialize;
use touchstone_results::inventory::{self, HostCost, PowerKind};

use crate::compare::compare;
use crate::index::indices;
use crate::table::Matrix;

/// A figure and its interval (low, high) where the index has one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Scaled {
    pub value: f64,
    pub interval: Option<(f64, f64)>,
}

impl Scaled {
    fn divided(self, by: f64) -> Scaled {
        Scaled {
            value: self.value / by,
            interval: self.interval.map(|(a, b)| (a / by, b / by)),
        }
    }
}

/// One run's index and what it costs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunCost {
    /// The matrix row.
    pub row: usize,
    pub run_id: String,
    /// The host's identity.
    pub host: String,
    /// The overall index against the base (the base: 100, exact).
    pub index: Option<Scaled>,
    pub price: Option<f64>,
    pub currency: Option<String>,
    pub watts: Option<f64>,
    pub power: Option<PowerKind>,
    /// Index per 1,000 of the currency.
    pub per_price: Option<Scaled>,
    pub per_watt: Option<Scaled>,
    /// On the index–price (index–power) Pareto front.
    pub front_price: bool,
    pub front_power: bool,
}

/// The cost figures of a report's runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cost {
    /// The matrix row of the base run (index 100).
    pub base: usize,
    /// In the matrix's order of rows.
    pub runs: Vec<RunCost>,
    /// The one currency of the per-price figures, if they exist.
    pub currency: Option<String>,
    /// What the reader must know (several currencies, …).
    pub notes: Vec<String>,
}

/// What `--sort` may order by beside the matrix's columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostKey {
    Index,
    PerPrice,
    PerWatt,
}

impl CostKey {
    pub fn named(name: &str) -> Option<CostKey> {
        match name {
            "index" => Some(CostKey::Index),
            "per-price" => Some(CostKey::PerPrice),
            "per-watt" => Some(CostKey::PerWatt),
            _ => None,
        }
    }
}

/// The cost figures of the runs of `m` against the run at row `base`, from
/// the hosts' `inventory`; None when no run's host is in it.
pub fn costs(m: &Matrix, base: usize, all: &[HostCost]) -> Option<Cost> {
    let entries: Vec<Option<&HostCost>> = m
        .runs
        .iter()
        .map(|r| inventory::find(all, &r.host.identity(), &r.host.hostname))
        .collect();
    if entries.iter().all(Option::is_none) {
        return None;
    }
    let others: Vec<usize> = (0..m.runs.len()).filter(|&r| r != base).collect();
    let comparison = compare(m, base, &others);
    let overall = match others.is_empty() {
        true => None,
        false => indices(m, &comparison).pop(),
    };
    let index_of = |row: usize| -> Option<Scaled> {
        if row == base {
            return Some(Scaled {
                value: 100.0,
                interval: Some((100.0, 100.0)),
            });
        }
        let k = others.iter().position(|&o| o == row)?;
        let line = overall.as_ref()?;
        Some(Scaled {
            value: line.values[k]?,
            interval: line.intervals[k],
        })
    };
    let mut currencies: Vec<&str> = entries
        .iter()
        .flatten()
        .filter_map(|c| c.priced().map(|p| p.1))
        .collect();
    currencies.sort();
    currencies.dedup();
    let mut notes = Vec::new();
    let currency = match currencies.len() {
        0 => None,
        1 => Some(currencies[0].to_string()),
        _ => {
            notes.push(format!(
                "prices in several currencies ({}): no per-price figures, nothing converts them",
                currencies.join(", ")
            ));
            None
        }
    };
    let mut runs: Vec<RunCost> = m
        .runs
        .iter()
        .enumerate()
        .map(|(row, r)| {
            let entry = entries[row];
            let index = index_of(row);
            let priced = entry.and_then(|c| c.priced());
            let power = entry.and_then(|c| c.power());
            RunCost {
                row,
                run_id: r.id.clone(),
                host: r.host.identity(),
                index,
                price: priced.map(|p| p.0),
                currency: priced.map(|p| p.1.to_string()),
                watts: power.map(|p| p.0),
                power: power.map(|p| p.1),
                per_price: match (&currency, index, priced) {
                    (Some(_), Some(i), Some((price, _))) => Some(i.divided(price / 1000.0)),
                    _ => None,
                },
                per_watt: match (index, power) {
                    (Some(i), Some((w, _))) => Some(i.divided(w)),
                    _ => None,
                },
                front_price: false,
                front_power: false,
            }
        })
        .collect();
    if runs.iter().any(|r| r.power == Some(PowerKind::Nameplate))
        && runs.iter().any(|r| r.power == Some(PowerKind::Busy))
    {
        notes.push(
            "per watt mixes measured busy watts and nameplate ratings (an upper bound): \
             compare like with like"
                .into(),
        );
    }
    let fronts = |cost: &dyn Fn(&RunCost) -> Option<f64>| -> Vec<bool> {
        let points: Vec<Option<(f64, f64)>> = runs
            .iter()
            .map(|r| Some((r.index?.value, cost(r)?)))
            .collect();
        pareto_front(&points)
    };
    let on_price = match currency {
        Some(_) => fronts(&|r| r.price),
        None => vec![false; runs.len()],
    };
    let on_power = fronts(&|r| r.watts);
    for (r, (p, w)) in runs.iter_mut().zip(on_price.into_iter().zip(on_power)) {
        r.front_price = p;
        r.front_power = w;
    }
    Some(Cost {
        base,
        runs,
        currency,
        notes,
    })
}

/// Which points (index, cost) no other point dominates: none has an index
/// at least as high at a cost at most as low, better in one of the two.
/// A point without both figures is on no front.
pub fn pareto_front(points: &[Option<(f64, f64)>]) -> Vec<bool> {
    points
        .iter()
        .map(|p| {
            let Some((index, cost)) = *p else {
                return false;
            };
            !points
                .iter()
                .flatten()
                .any(|&(i, c)| i >= index && c <= cost && (i > index || c < cost))
        })
        .collect()
}

impl Cost {
    /// The matrix rows best first by `key` (highest figure first); rows
    /// without the figure last, in their order.
    pub fn order(&self, key: CostKey) -> Vec<usize> {
        let figure = |r: &RunCost| -> Option<f64> {
            match key {
                CostKey::Index => r.index.map(|s| s.value),
                CostKey::PerPrice => r.per_price.map(|s| s.value),
                CostKey::PerWatt => r.per_watt.map(|s| s.value),
            }
        };
        let mut rows: Vec<(usize, Option<f64>)> =
            self.runs.iter().map(|r| (r.row, figure(r))).collect();
        rows.sort_by(|a, b| match (a.1, b.1) {
            (Some(x), Some(y)) => y.total_cmp(&x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
        rows.into_iter().map(|(r, _)| r).collect()
    }

    /// The figures of the run at matrix row `row`.
    pub fn of_row(&self, row: usize) -> Option<&RunCost> {
        self.runs.iter().find(|r| r.row == row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_front_is_the_undominated_points() {
        let pts = [
            Some((100.0, 10.0)),
            Some((150.0, 20.0)),
            Some((120.0, 25.0)), // dominated by the second
            Some((90.0, 10.0)),  // dominated by the first
            None,
            Some((150.0, 20.0)), // ties with the second: neither beats the other
        ];
        assert_eq!(pareto_front(&pts), [true, true, false, false, false, true]);
    }
}
