//! The summary matrix behind every multi-run report: one row per run, one
//! column per measurement (its stable name and process count), columns in
//! report-group order, and row ordering on any column.

use std::collections::BTreeMap;

use serde::Serialize;
use touchstone_results::groups::GROUPS;
use touchstone_results::{Measurement, Run, Unit};

/// What can make a set of runs impossible to tabulate.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnalysisError {
    #[error("measurement '{name}' has different units in different runs ({detail}); runs measured with incompatible versions of a benchmark cannot share a column")]
    MixedUnits { name: String, detail: String },
    #[error("no column matches --sort '{0}' (columns: run, host, label, started, or a measurement name such as {1})")]
    NoSuchColumn(String, String),
    #[error("--sort '{0}' matches several columns: {1}; give more of the name")]
    AmbiguousColumn(String, String),
    #[error("no runs to report")]
    NoRuns,
}

/// One column: a measurement name at one parallel level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    pub name: String,
    pub parallel: u32,
    pub benchmark: String,
    pub group: String,
    pub unit: Unit,
    pub params: BTreeMap<String, String>,
}

impl Column {
    /// The column's heading: the stable name, with the process count when
    /// more than one process ran it.
    pub fn label(&self) -> String {
        if self.parallel == 1 {
            self.name.clone()
        } else {
            format!("{} ×{}", self.name, self.parallel)
        }
    }
}

/// Runs × columns; `cells[row][col]` is that run's measurement, if it has one.
#[derive(Debug)]
pub struct Matrix<'a> {
    pub runs: Vec<&'a Run>,
    pub columns: Vec<Column>,
    pub cells: Vec<Vec<Option<&'a Measurement>>>,
}

/// The report groups in order: the known groups first, then any others in
/// order of first appearance.
pub fn group_order<'a>(groups: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut order: Vec<String> = GROUPS.iter().map(|g| g.name.to_string()).collect();
    for g in groups {
        if !order.iter().any(|o| o == g) {
            order.push(g.to_string());
        }
    }
    order
}

impl<'a> Matrix<'a> {
    /// Build the matrix, refusing a measurement name whose unit differs
    /// between runs. When a run holds the same name and process count twice
    /// (a re-measured case), the last one is used.
    pub fn build(runs: &'a [Run]) -> Result<Matrix<'a>, AnalysisError> {
        if runs.is_empty() {
            return Err(AnalysisError::NoRuns);
        }
        let mut columns: Vec<Column> = Vec::new();
        let mut index: BTreeMap<(String, u32), usize> = BTreeMap::new();
        let mut units: BTreeMap<&str, Vec<(Unit, &Run)>> = BTreeMap::new();
        for run in runs {
            for m in &run.measurements {
                let seen = units.entry(m.name.as_str()).or_default();
                if !seen.iter().any(|(u, _)| *u == m.unit) {
                    seen.push((m.unit, run));
                }
                let key = (m.name.clone(), m.parallel);
                if !index.contains_key(&key) {
                    index.insert(key, columns.len());
                    columns.push(Column {
                        name: m.name.clone(),
                        parallel: m.parallel,
                        benchmark: m.benchmark.clone(),
                        group: m.group.clone(),
                        unit: m.unit,
                        params: m.params.clone(),
                    });
                }
            }
        }
        if let Some((name, seen)) = units.iter().find(|(_, s)| s.len() > 1) {
            let detail = seen
                .iter()
                .map(|(u, r)| format!("{u} in run {}", short_id(&r.id)))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(AnalysisError::MixedUnits {
                name: name.to_string(),
                detail,
            });
        }
        // Stable sort: group order, then first appearance within the group.
        let order = group_order(columns.iter().map(|c| c.group.as_str()));
        let rank = |g: &str| order.iter().position(|o| o == g).unwrap_or(usize::MAX);
        // Parallel levels of one name stay together, fewest processes first.
        let mut first: BTreeMap<String, usize> = BTreeMap::new();
        for (i, c) in columns.iter().enumerate() {
            first.entry(c.name.clone()).or_insert(i);
        }
        let mut sorted: Vec<(usize, Column)> = columns.into_iter().enumerate().collect();
        sorted.sort_by_key(|(i, c)| (rank(&c.group), first[&c.name], c.parallel, *i));
        let columns: Vec<Column> = sorted.into_iter().map(|(_, c)| c).collect();
        let pos: BTreeMap<(&str, u32), usize> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| ((c.name.as_str(), c.parallel), i))
            .collect();
        let cells = runs
            .iter()
            .map(|run| {
                let mut row = vec![None; columns.len()];
                for m in &run.measurements {
                    row[pos[&(m.name.as_str(), m.parallel)]] = Some(m);
                }
                row
            })
            .collect();
        Ok(Matrix {
            runs: runs.iter().collect(),
            columns,
            cells,
        })
    }

    /// Column indices of one group, in order.
    pub fn group_columns(&self, group: &str) -> Vec<usize> {
        (0..self.columns.len())
            .filter(|&c| self.columns[c].group == group)
            .collect()
    }

    /// The groups that have at least one column, in report order.
    pub fn groups(&self) -> Vec<String> {
        group_order(self.columns.iter().map(|c| c.group.as_str()))
            .into_iter()
            .filter(|g| self.columns.iter().any(|c| &c.group == g))
            .collect()
    }

    /// Every run's headline figure in one column (None where missing or
    /// marked invalid, so an invalid 0 is never ranked, charted or best).
    pub fn column_values(&self, col: usize) -> Vec<Option<f64>> {
        self.cells
            .iter()
            .map(|row| row[col].and_then(|m| m.valid_value()))
            .collect()
    }

    /// What `--sort SPEC` names: run/host/label/started, or a column by its
    /// label, its exact name (the single-process column first), or a unique
    /// substring of its label.
    pub fn sort_key(&self, spec: &str) -> Result<SortKey, AnalysisError> {
        match spec {
            "run" | "id" => return Ok(SortKey::Run),
            "host" => return Ok(SortKey::Host),
            "label" => return Ok(SortKey::Label),
            "started" | "date" => return Ok(SortKey::Started),
            _ => {}
        }
        if let Some(c) = self.columns.iter().position(|c| c.label() == spec) {
            return Ok(SortKey::Column(c));
        }
        let by_name: Vec<usize> = (0..self.columns.len())
            .filter(|&c| self.columns[c].name == spec)
            .collect();
        if let Some(&c) = by_name
            .iter()
            .find(|&&c| self.columns[c].parallel == 1)
            .or(by_name.first())
        {
            return Ok(SortKey::Column(c));
        }
        let hits: Vec<usize> = (0..self.columns.len())
            .filter(|&c| self.columns[c].label().contains(spec))
            .collect();
        match hits.len() {
            1 => Ok(SortKey::Column(hits[0])),
            0 => Err(AnalysisError::NoSuchColumn(
                spec.into(),
                self.columns
                    .first()
                    .map_or("lat_syscall/null".into(), |c| format!("'{}'", c.label())),
            )),
            _ => Err(AnalysisError::AmbiguousColumn(
                spec.into(),
                hits.iter()
                    .take(6)
                    .map(|&c| format!("'{}'", self.columns[c].label()))
                    .collect::<Vec<_>>()
                    .join(", ")
                    + if hits.len() > 6 { ", …" } else { "" },
            )),
        }
    }

    /// Row order for a sort key. Measurement columns sort best first
    /// (lowest latency, highest bandwidth; ascending for units that do not
    /// rank); runs lacking the figure, or whose figure is invalid, go last.
    /// Ties keep the given order.
    pub fn order(&self, key: &SortKey) -> Vec<usize> {
        let mut rows: Vec<usize> = (0..self.runs.len()).collect();
        match key {
            SortKey::Run => rows.sort_by(|&a, &b| self.runs[a].id.cmp(&self.runs[b].id)),
            SortKey::Host => {
                rows.sort_by(|&a, &b| self.runs[a].host.hostname.cmp(&self.runs[b].host.hostname))
            }
            SortKey::Label => rows.sort_by(|&a, &b| {
                let l = |i: usize| self.runs[i].label.clone();
                // Unlabelled runs last.
                (l(a).is_none(), l(a)).cmp(&(l(b).is_none(), l(b)))
            }),
            SortKey::Started => {
                rows.sort_by(|&a, &b| self.runs[a].started_at.cmp(&self.runs[b].started_at))
            }
            SortKey::Column(c) => {
                let descending = self.columns[*c].unit.higher_is_better() == Some(true);
                let v = self.column_values(*c);
                rows.sort_by(|&a, &b| match (v[a], v[b]) {
                    (Some(x), Some(y)) => {
                        if descending {
                            y.total_cmp(&x)
                        } else {
                            x.total_cmp(&y)
                        }
                    }
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (None, None) => std::cmp::Ordering::Equal,
                });
            }
        }
        rows
    }
}

/// A row ordering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    Run,
    Host,
    Label,
    Started,
    Column(usize),
}

/// The first eight characters of a run id: enough to tell runs apart.
pub fn short_id(id: &str) -> &str {
    &id[..id.len().min(8)]
}

/// How a run is named in a report: host, then its label when it has one,
/// then its status when it did not complete.
pub fn run_title(run: &Run) -> String {
    let title = match &run.label {
        Some(l) => format!("{} ({l})", run.host.hostname),
        None => run.host.hostname.clone(),
    };
    // A run that did not complete (crashed, failed, still running) says so
    // wherever it is named: its figures may be partial.
    match run.status {
        touchstone_results::RunStatus::Complete => title,
        s => format!("{title} [{}]", s.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{meas, run};

    #[test]
    fn columns_follow_group_order_and_sort_best_first() {
        let runs = vec![
            run(
                "a",
                "alpha",
                vec![
                    meas("bw_mem/rd", "mem_bw", Unit::MBps, 1000.0),
                    meas("lat_syscall/null", "proc", Unit::Ns, 50.0),
                ],
            ),
            run(
                "b",
                "beta",
                vec![
                    meas("lat_syscall/null", "proc", Unit::Ns, 30.0),
                    meas("bw_mem/rd", "mem_bw", Unit::MBps, 3000.0),
                ],
            ),
            run(
                "c",
                "gamma",
                vec![meas("lat_syscall/null", "proc", Unit::Ns, 40.0)],
            ),
        ];
        let m = Matrix::build(&runs).unwrap();
        let labels: Vec<String> = m.columns.iter().map(Column::label).collect();
        assert_eq!(labels, ["lat_syscall/null", "bw_mem/rd"]);
        let lat = m.sort_key("lat_syscall/null").unwrap();
        assert_eq!(m.order(&lat), [1, 2, 0]);
        let bw = m.sort_key("bw_mem").unwrap();
        // Highest bandwidth first; the run without the figure last.
        assert_eq!(m.order(&bw), [1, 0, 2]);
        assert_eq!(m.order(&SortKey::Host), [0, 1, 2]);
    }

    /// `report --sort` once ranked the recorded 0 ns context switch (an
    /// overhead larger than the ring) best; invalid, it goes last.
    #[test]
    fn an_invalid_figure_sorts_last_not_best() {
        let name = "lat_ctx/procs:16/size:0";
        let mut zero = meas(name, "ctx", Unit::Ns, 1.0);
        zero.samples = vec![0.0; 11];
        zero.summary = touchstone_results::Summary::of(&zero.samples).unwrap();
        zero.invalid = Some("overhead 11.5 µs > ring 4.8 µs".into());
        let runs = vec![
            run("a", "slow", vec![meas(name, "ctx", Unit::Ns, 5_000.0)]),
            run("b", "loaded", vec![zero]),
            run("c", "fast", vec![meas(name, "ctx", Unit::Ns, 2_000.0)]),
        ];
        let m = Matrix::build(&runs).unwrap();
        let key = m.sort_key(name).unwrap();
        assert_eq!(m.order(&key), [2, 0, 1]);
        assert_eq!(
            m.column_values(0),
            [Some(5_000.0 * 1.0), None, Some(2_000.0)]
        );
    }

    #[test]
    fn mixed_units_and_bad_sort_columns_are_refused() {
        let runs = vec![
            run("a", "alpha", vec![meas("x/y", "proc", Unit::Ns, 1.0)]),
            run("b", "beta", vec![meas("x/y", "proc", Unit::OpsPerSec, 1.0)]),
        ];
        let e = Matrix::build(&runs).unwrap_err();
        assert!(e.to_string().contains("'x/y' has different units"), "{e}");
        let runs = vec![run(
            "a",
            "alpha",
            vec![
                meas("lat_a/x", "proc", Unit::Ns, 1.0),
                meas("lat_a/y", "proc", Unit::Ns, 1.0),
            ],
        )];
        let m = Matrix::build(&runs).unwrap();
        assert!(matches!(
            m.sort_key("nope"),
            Err(AnalysisError::NoSuchColumn(..))
        ));
        assert!(matches!(
            m.sort_key("lat_a"),
            Err(AnalysisError::AmbiguousColumn(..))
        ));
    }
}
