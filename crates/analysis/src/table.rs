//! The summary matrix behind every multi-run report: one row per run, one
//! column per measurement (its stable name and process count), columns in
//! report-group order, and row ordering on any column.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use touchstone_results::groups::GROUPS;
use touchstone_results::{Brief, Figure, Run, Unit};

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

/// Runs × columns; `cells[row][col]` is that run's figure, if it has one.
/// The runs may be whole or only their headers (a report over many runs
/// reads their measurements in brief: `MatrixBuilder`).
#[derive(Debug)]
pub struct Matrix<'a> {
    pub runs: Vec<&'a Run>,
    pub columns: Vec<Column>,
    pub cells: Vec<Vec<Option<Figure>>>,
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

/// A matrix built one run at a time, each with its measurements in brief
/// in its stored order, so that a store can stream a farm's measurements
/// without holding them: only the figures are kept.
#[derive(Default)]
pub struct MatrixBuilder<'a> {
    runs: Vec<&'a Run>,
    columns: Vec<Column>,
    /// Name → (parallel, column), in order of first appearance.
    index: HashMap<String, Vec<(u32, usize)>>,
    /// Name → each distinct unit with the first run that had it.
    units: BTreeMap<String, Vec<(Unit, usize)>>,
    /// Per run, its figure in each column (in order of appearance; the
    /// later columns are missing from the runs before them).
    figures: Vec<Vec<Option<Figure>>>,
}

impl<'a> MatrixBuilder<'a> {
    pub fn new() -> MatrixBuilder<'a> {
        MatrixBuilder::default()
    }

    /// The next row: `run` (whole, or its header) with its measurements.
    pub fn push(&mut self, run: &'a Run, measurements: impl IntoIterator<Item = Brief>) {
        let row = self.runs.len();
        self.runs.push(run);
        self.figures.push(Vec::with_capacity(self.columns.len()));
        for b in measurements {
            self.add(row, b);
        }
    }

    fn add(&mut self, run: usize, b: Brief) {
        match self.units.get_mut(b.name.as_str()) {
            Some(seen) => {
                if !seen.iter().any(|(u, _)| *u == b.unit) {
                    seen.push((b.unit, run));
                }
            }
            None => {
                self.units.insert(b.name.clone(), vec![(b.unit, run)]);
            }
        }
        let known = self
            .index
            .get(b.name.as_str())
            .and_then(|v| v.iter().find(|(p, _)| *p == b.parallel))
            .map(|&(_, c)| c);
        let column = match known {
            Some(c) => c,
            None => {
                let c = self.columns.len();
                self.index
                    .entry(b.name.clone())
                    .or_default()
                    .push((b.parallel, c));
                self.columns.push(Column {
                    name: b.name.clone(),
                    parallel: b.parallel,
                    benchmark: b.benchmark.clone(),
                    group: b.group.clone(),
                    unit: b.unit,
                    params: b.params.clone(),
                });
                c
            }
        };
        let row = &mut self.figures[run];
        if row.len() <= column {
            row.resize(column + 1, None);
        }
        // A case measured twice in one run: the later one.
        row[column] = Some(b.figure());
    }

    /// The matrix, refusing a measurement name whose unit differs between
    /// runs. When a run holds the same name and process count twice (a
    /// re-measured case), the last one is used.
    pub fn finish(self) -> Result<Matrix<'a>, AnalysisError> {
        if self.runs.is_empty() {
            return Err(AnalysisError::NoRuns);
        }
        if let Some((name, seen)) = self.units.iter().find(|(_, s)| s.len() > 1) {
            let detail = seen
                .iter()
                .map(|(u, r)| format!("{u} in run {}", short_id(&self.runs[*r].id)))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(AnalysisError::MixedUnits {
                name: name.to_string(),
                detail,
            });
        }
        let columns = self.columns;
        // Stable sort: group order, then first appearance within the group.
        let order = group_order(columns.iter().map(|c| c.group.as_str()));
        let rank = |g: &str| order.iter().position(|o| o == g).unwrap_or(usize::MAX);
        // Parallel levels of one name stay together, fewest processes first.
        let mut first: HashMap<&str, usize> = HashMap::new();
        for (i, c) in columns.iter().enumerate() {
            first.entry(c.name.as_str()).or_insert(i);
        }
        let mut sorted: Vec<usize> = (0..columns.len()).collect();
        sorted.sort_by_key(|&i| {
            let c = &columns[i];
            (rank(&c.group), first[c.name.as_str()], c.parallel, i)
        });
        let mut position = vec![0; columns.len()];
        for (to, &from) in sorted.iter().enumerate() {
            position[from] = to;
        }
        // Each row rearranged in place of the last, not all at once.
        let mut cells = self.figures;
        for row in &mut cells {
            let mut sorted = vec![None; columns.len()];
            for (c, f) in row.drain(..).enumerate() {
                sorted[position[c]] = f;
            }
            *row = sorted;
        }
        let mut columns: Vec<Option<Column>> = columns.into_iter().map(Some).collect();
        let columns = sorted.iter().map(|&i| columns[i].take().unwrap()).collect();
        Ok(Matrix {
            runs: self.runs,
            columns,
            cells,
        })
    }
}

impl<'a> Matrix<'a> {
    /// Build the matrix of whole runs, their figures with their samples
    /// (see `MatrixBuilder::finish` for what is refused).
    pub fn build(runs: &'a [Run]) -> Result<Matrix<'a>, AnalysisError> {
        let mut b = MatrixBuilder::new();
        for run in runs {
            b.push(run, run.measurements.iter().map(Brief::with_samples));
        }
        b.finish()
    }

    /// Run `row`'s figure in column `col`, if it has one.
    pub fn cell(&self, row: usize, col: usize) -> Option<&Figure> {
        self.cells[row][col].as_ref()
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
            .map(|row| row[col].as_ref().and_then(|m| m.valid_value()))
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
