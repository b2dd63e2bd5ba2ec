//! The report model: what one command reports, analysed once. The matrix
//! of runs × measurements (their figures), the order and layout asked for,
//! each load curve with its analysis (peak, knee, USL fit, scalability),
//! the comparison with a base run and its index, the fleet's verdict, and
//! for a page over many runs the few drawn in detail. Every renderer
//! (`crate::Render`) reads this and computes nothing of its own, so the
//! analysis — the USL's bootstrap above all — runs once per curve per
//! command whatever the format.

use touchstone_analysis::compare::{compare, Comparison};
use touchstone_analysis::compare_curves::{compare_runs, CurveComparison};
use touchstone_analysis::cost::Cost;
use touchstone_analysis::curve_analysis::Analysed;
use touchstone_analysis::index::{indices, IndexLine};
use touchstone_analysis::outliers::Group;
use touchstone_analysis::pairs::PairMatrix;
use touchstone_analysis::table::{Matrix, MatrixBuilder};
use touchstone_results::Run;

use crate::Layout;

/// A page over more runs than this draws the first this many (in the
/// report's order) in detail — the comparison tables, the charts, the load
/// curves and the raw samples — and every run in its overview tables.
pub const DETAIL_RUNS: usize = 20;

/// The comparison with a base run: every measurement, the index, and each
/// other run's load curves against the base's.
#[derive(Debug)]
pub struct Compared {
    pub comparison: Comparison,
    pub index: Vec<IndexLine>,
    /// Per other run (in `comparison.others`' order), its curves against
    /// the base's.
    pub curves: Vec<Vec<CurveComparison>>,
}

/// The fleet's verdict (`fleet report`): hosts grouped by hardware with
/// the outliers flagged, and the network between hosts.
#[derive(Debug)]
pub struct Fleet {
    pub groups: Vec<Group>,
    pub pairs: Vec<PairMatrix>,
}

/// What a command reports (see the module's header).
#[derive(Debug)]
pub struct Model<'a> {
    pub matrix: Matrix<'a>,
    /// The rows in the order of the tables (`--sort`).
    pub order: Vec<usize>,
    pub layout: Layout,
    /// Per matrix row, its run's load curves with their analyses.
    pub curves: Vec<Vec<Analysed<'a>>>,
    /// `compare`: the other runs against the base. A page's summary: the
    /// runs against the first (its index and comparison).
    pub compared: Option<Compared>,
    pub fleet: Option<Fleet>,
    /// Each run's index per 1,000 of the currency and per watt, where its
    /// host's inventory is known (`touchstone_analysis::cost`).
    pub cost: Option<Cost>,
    /// A page over more than `DETAIL_RUNS` runs: the first of them whole
    /// (samples and curves), drawn in detail.
    pub detail: Option<Box<Model<'a>>>,
    /// When the report was made, for the page's header.
    pub generated: String,
}

/// The curves of the runs at `rows` analysed in full (`Analysed::new`);
/// none for the others.
fn analysed<'a>(runs: &[&'a Run], rows: impl Fn(usize) -> bool) -> Vec<Vec<Analysed<'a>>> {
    runs.iter()
        .enumerate()
        .map(|(r, run)| match rows(r) {
            true => run.curves.iter().map(Analysed::new).collect(),
            false => Vec::new(),
        })
        .collect()
}

/// The measurements of the runs against the first, and the index (no
/// curves: the page compares measurements).
fn against_first(m: &Matrix) -> Compared {
    against(m, 0)
}

/// The measurements of the other runs against the run at row `base`, and
/// the index.
fn against(m: &Matrix, base: usize) -> Compared {
    let others: Vec<usize> = (0..m.runs.len()).filter(|&r| r != base).collect();
    let comparison = compare(m, base, &others);
    let index = if m.runs.len() >= 2 {
        indices(m, &comparison)
    } else {
        Vec::new()
    };
    Compared {
        comparison,
        index,
        curves: Vec::new(),
    }
}

impl<'a> Model<'a> {
    /// `report`: the summary of the runs of `matrix` in `order`, each load
    /// curve analysed.
    pub fn summary(matrix: Matrix<'a>, order: Vec<usize>, layout: Layout) -> Model<'a> {
        let curves = analysed(&matrix.runs, |_| true);
        Model::of(matrix, order, layout, curves)
    }

    /// The runs of `matrix` in `order` with their `curves` analysed, and
    /// nothing else yet.
    fn of(
        matrix: Matrix<'a>,
        order: Vec<usize>,
        layout: Layout,
        curves: Vec<Vec<Analysed<'a>>>,
    ) -> Model<'a> {
        Model {
            curves,
            compared: None,
            matrix,
            order,
            layout,
            fleet: None,
            cost: None,
            detail: None,
            generated: String::new(),
        }
    }

    /// The summary as a page draws it (`Render::draws`): also the runs
    /// against the first, for its index and comparison.
    pub fn page(matrix: Matrix<'a>, order: Vec<usize>, layout: Layout) -> Model<'a> {
        let compared = Some(against_first(&matrix));
        Model {
            compared,
            ..Model::summary(matrix, order, layout)
        }
    }

    /// The summary of a page over more than `DETAIL_RUNS` runs (to be
    /// given its `detail`): the runs against the first in `order`, and
    /// only the curves of the runs at `rows` analysed (a page draws the
    /// curves of those in detail alone).
    pub fn overview(
        matrix: Matrix<'a>,
        order: Vec<usize>,
        layout: Layout,
        rows: &[usize],
    ) -> Model<'a> {
        let rows: std::collections::HashSet<usize> = rows.iter().copied().collect();
        let curves = analysed(&matrix.runs, |r| rows.contains(&r));
        let compared = Some(against(&matrix, order.first().copied().unwrap_or(0)));
        Model {
            compared,
            ..Model::of(matrix, order, layout, curves)
        }
    }

    /// `compare`: the runs of `matrix` after the first against the first,
    /// measurements, index and load curves (their peaks and knees).
    pub fn comparison(matrix: Matrix<'a>, layout: Layout) -> Model<'a> {
        let curves: Vec<Vec<Analysed<'a>>> = matrix
            .runs
            .iter()
            .map(|r| r.curves.iter().map(Analysed::peaks).collect())
            .collect();
        let mut compared = against_first(&matrix);
        compared.curves = compared
            .comparison
            .others
            .iter()
            .map(|&o| compare_runs(&curves[0], &curves[o]))
            .collect();
        let order = (0..matrix.runs.len()).collect();
        Model {
            compared: Some(compared),
            ..Model::of(matrix, order, layout, curves)
        }
    }

    /// `show`: one whole run, its curves analysed.
    pub fn run(run: &'a Run) -> Model<'a> {
        let matrix = Matrix::build(std::slice::from_ref(run)).unwrap_or_else(|_| {
            // A name measured in two units: the run's own tables show it all.
            let mut b = MatrixBuilder::new();
            b.push(run, []);
            b.finish().expect("one run")
        });
        Model::page(matrix, vec![0], Layout::default())
    }

    /// The model of the runs this one draws in detail (`detail_rows`),
    /// whole in `matrix`, their curves' analyses taken from this model's.
    pub fn detail_of(&self, matrix: Matrix<'a>) -> Model<'a> {
        let curves: Vec<Vec<Analysed<'a>>> = matrix
            .runs
            .iter()
            .map(|run| {
                let row = self.matrix.runs.iter().position(|r| r.id == run.id);
                row.map_or_else(Vec::new, |r| self.curves[r].clone())
            })
            .collect();
        let compared = Some(against_first(&matrix));
        let order = (0..matrix.runs.len()).collect();
        Model {
            compared,
            generated: self.generated.clone(),
            ..Model::of(matrix, order, self.layout, curves)
        }
    }

    /// The fleet's verdict to report with the summary.
    pub fn with_fleet(mut self, fleet: Fleet) -> Model<'a> {
        self.fleet = Some(fleet);
        self
    }

    /// The cost figures to report beside the index.
    pub fn with_cost(mut self, cost: Option<Cost>) -> Model<'a> {
        self.cost = cost;
        self
    }

    /// The runs a page over many draws in detail (`DETAIL_RUNS`), as their
    /// own model; see `detail_rows`.
    pub fn with_detail(mut self, detail: Model<'a>) -> Model<'a> {
        self.detail = Some(Box::new(detail));
        self
    }

    /// When the report was made (the page says).
    pub fn generated_at(mut self, when: String) -> Model<'a> {
        self.generated = when;
        self
    }

    /// The rows a page draws in detail: all of them up to `DETAIL_RUNS`,
    /// else the first `DETAIL_RUNS` in order (None: all).
    pub fn detail_rows(&self) -> Option<&[usize]> {
        (self.order.len() > DETAIL_RUNS).then(|| &self.order[..DETAIL_RUNS])
    }

    /// The model a page draws its detail from: `detail`, or this one.
    pub fn drawn(&self) -> &Model<'a> {
        self.detail.as_deref().unwrap_or(self)
    }

    /// The rows (in order) whose runs hold load curves.
    pub fn rows_with_curves(&self) -> Vec<usize> {
        self.order
            .iter()
            .copied()
            .filter(|&r| !self.curves[r].is_empty())
            .collect()
    }
}
