//! `touchstone report` (the summary of many runs, optionally as HTML) and
//! `touchstone compare` (ratios to a base run and the index). The runs are
//! read as a summary needs them — headers and measurements in brief
//! (`stored::load_headers`, `stored::matrix`), whole only where a page
//! draws them or a comparison reads their samples — then analysed once
//! into a report model (`touchstone_report::Model`) that each output's
//! renderer reads.

use std::path::Path;

use touchstone_analysis::cost::{costs, Cost, CostKey};
use touchstone_analysis::table::Matrix;
use touchstone_report::model::DETAIL_RUNS;
use touchstone_report::{Format, Layout, Media, Model};
use touchstone_results::store::Store;
use touchstone_results::Run;

use super::stored::{load_each, load_headers, load_readable, matrix, none_readable, warn_skipped};
use crate::args::{CompareArgs, ReportArgs};
use crate::error::CliError;
use crate::output;

/// The ids of the runs the user named (each once, in the order named), or
/// of all.
pub(super) fn selection(store: &Store, specs: &[String]) -> Result<Vec<String>, CliError> {
    let mut ids: Vec<String> = Vec::new();
    if specs.is_empty() {
        ids = store.list_runs()?.into_iter().map(|r| r.id).collect();
        if ids.is_empty() {
            return Err(CliError::Usage(format!(
                "no runs stored in {}",
                store.path().display()
            )));
        }
    } else {
        for s in specs {
            let id = store.resolve(s)?;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    Ok(ids)
}

/// The matrix in brief of the runs that can be read of `runs` (headers,
/// `unreadable` why the others of the selection cannot be), each skipped
/// one named in a warning; when none can, the error names each and why.
pub(super) fn readable_matrix<'a>(
    store: &Store,
    runs: &'a [Run],
    mut unreadable: Vec<touchstone_results::store::StoreError>,
) -> Result<Matrix<'a>, CliError> {
    let Some(m) = matrix(store, runs, &mut unreadable)? else {
        return Err(none_readable("none of the runs can be read", &unreadable));
    };
    warn_skipped(&unreadable);
    Ok(m)
}

/// To the file asked for (never the store), or to standard output.
fn emit(store: &Store, to: Option<&Path>, media: Media, text: &str) -> Result<(), CliError> {
    match to {
        Some(p) => output::write_file(p, text.as_bytes(), store.path()),
        None => {
            output::print_as(media, text);
            Ok(())
        }
    }
}

/// The layout asked for, as wide as the terminal when printing to one.
pub(super) fn layout(wide: bool, output: Option<&Path>) -> Layout {
    let width = match output {
        None => touchstone_report::tables::terminal_width(),
        Some(_) => None,
    };
    Layout {
        wide,
        width: width.unwrap_or(touchstone_report::layout::DEFAULT_WIDTH),
    }
}

fn usage(e: impl std::fmt::Display) -> CliError {
    CliError::Usage(e.to_string())
}

/// The rows `order` puts first, at most `DETAIL_RUNS`: what a page draws.
fn drawn_rows(order: &[usize]) -> &[usize] {
    &order[..order.len().min(DETAIL_RUNS)]
}

/// The runs at `rows` of `m`, read whole (their samples and curves).
pub(super) fn whole(store: &Store, m: &Matrix, rows: &[usize]) -> Result<Vec<Run>, CliError> {
    let ids: Vec<String> = rows.iter().map(|&r| m.runs[r].id.clone()).collect();
    load_readable(store, &ids)
}

/// The runs a page draws, read whole: up to `DETAIL_RUNS`, all of them in
/// the matrix's order (the page is drawn from them alone, as it always
/// was); over that, the first `DETAIL_RUNS` in `order`.
pub(super) fn drawn(store: &Store, m: &Matrix, order: &[usize]) -> Result<Vec<Run>, CliError> {
    match order.len() <= DETAIL_RUNS {
        true => whole(store, m, &(0..m.runs.len()).collect::<Vec<_>>()),
        false => whole(store, m, drawn_rows(order)),
    }
}

/// The summary's model. Nothing drawn (`drawn_runs` None): the matrix in
/// brief. Drawn (the runs `drawn` read): up to `DETAIL_RUNS` runs, the
/// page of the runs whole; over that, the overview of all in brief with
/// the drawn runs as its detail, and the curves of every run analysed
/// only if `all_curves` (a text report shows them all).
pub(super) fn summary_model<'a>(
    m: Matrix<'a>,
    order: Vec<usize>,
    layout: Layout,
    drawn_runs: Option<&'a [Run]>,
    all_curves: bool,
) -> Result<Model<'a>, CliError> {
    let Some(whole_runs) = drawn_runs else {
        return Ok(Model::summary(m, order, layout));
    };
    if order.len() <= DETAIL_RUNS {
        if whole_runs.len() != m.runs.len() {
            // A run readable in brief but not whole: all drawn from briefs.
            return Ok(Model::page(m, order, layout));
        }
        let whole = Matrix::build(whole_runs).map_err(usage)?;
        return Ok(Model::page(whole, order, layout));
    }
    let rows: Vec<usize> = match all_curves {
        true => (0..m.runs.len()).collect(),
        false => drawn_rows(&order).to_vec(),
    };
    let overview = Model::overview(m, order, layout, &rows);
    let detail = overview.detail_of(Matrix::build(whole_runs).map_err(usage)?);
    Ok(overview.with_detail(detail))
}

/// The cost figures of the runs of `m` against its first run, from the
/// store's inventory (None: no host of theirs is in it).
pub(super) fn cost_of(store: &Store, m: &Matrix) -> Result<Option<Cost>, CliError> {
    Ok(costs(m, 0, &store.inventory()?))
}

/// The rows best first by the cost figure `spec` names (`index`,
/// `per-price`, `per-watt`), or None when it names none of them; an error
/// when no run has that figure.
pub(super) fn cost_order(cost: Option<&Cost>, spec: &str) -> Option<Result<Vec<usize>, CliError>> {
    let key = CostKey::named(spec)?;
    let has = |c: &Cost| {
        c.runs.iter().any(|r| match key {
            CostKey::Index => r.index.is_some(),
            CostKey::PerPrice => r.per_price.is_some(),
            CostKey::PerWatt => r.per_watt.is_some(),
        })
    };
    Some(match cost {
        Some(c) if has(c) => Ok(c.order(key)),
        Some(c) if key == CostKey::PerPrice && !c.notes.is_empty() => {
            Err(usage(format!("--sort {spec}: {}", c.notes.join("; "))))
        }
        _ => Err(usage(format!(
            "--sort {spec}: no run's host has {} in the inventory (touchstone inventory set)",
            match key {
                CostKey::Index => "a price or power",
                CostKey::PerPrice => "a price",
                CostKey::PerWatt => "busy or nameplate watts",
            }
        ))),
    })
}

pub fn report(store: &Store, a: &ReportArgs) -> Result<(), CliError> {
    // Both outputs are checked before either is written.
    for p in a.html.iter().chain(&a.output) {
        output::refuse_store(p, store.path())?;
    }
    let (runs, unreadable) = load_headers(store, &selection(store, &a.runs)?)?;
    let m = readable_matrix(store, &runs, unreadable)?;
    let cost = cost_of(store, &m)?;
    let order = match &a.sort {
        Some(spec) => match cost_order(cost.as_ref(), spec) {
            Some(order) => order?,
            None => m.order(&m.sort_key(spec).map_err(usage)?),
        },
        None => (0..m.runs.len()).collect(),
    };
    // With --html, the text report only where asked for (-o, --format).
    let text = match (&a.html, a.format) {
        (None, f) => Some(f.unwrap_or(Format::named("table").expect("a format"))),
        (Some(_), Some(f)) => Some(f),
        (Some(_), None) => a
            .output
            .as_ref()
            .map(|_| Format::named("table").expect("a format")),
    };
    let draws = a.html.is_some() || text.is_some_and(|f| f.renderer().draws());
    let whole_runs = match draws {
        true => Some(drawn(store, &m, &order)?),
        false => None,
    };
    let layout = layout(a.wide, a.output.as_deref());
    let generated = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
    let model = summary_model(m, order, layout, whole_runs.as_deref(), text.is_some())?
        .with_cost(cost)
        .generated_at(generated);
    if let Some(path) = &a.html {
        let page = Format::named("html")
            .expect("a format")
            .renderer()
            .summary(&model);
        output::write_file(path, page.as_bytes(), store.path())?;
        output::eprint_line(&format!("HTML report written to {}", path.display()));
    }
    if let Some(f) = text {
        let r = f.renderer();
        emit(store, a.output.as_deref(), r.media(), &r.summary(&model))?;
    }
    Ok(())
}

pub fn compare(store: &Store, a: &CompareArgs) -> Result<(), CliError> {
    if let Some(p) = &a.output {
        output::refuse_store(p, store.path())?;
    }
    let base = store.resolve(&a.base)?;
    let mut runs = vec![store.load_run(&base)?];
    let others = a
        .others
        .iter()
        .map(|s| store.resolve(s))
        .collect::<Result<Vec<_>, _>>()?;
    // The base was read; each other run that cannot be is named, and
    // when none can the error says which and why.
    let (readable, unreadable) = load_each(store, &others)?;
    if readable.is_empty() {
        return Err(none_readable(
            &format!("nothing to compare run {base} with"),
            &unreadable,
        ));
    }
    warn_skipped(&unreadable);
    runs.extend(readable);
    let m = Matrix::build(&runs).map_err(usage)?;
    if a.output.is_some() {
        // Faster/slower are coloured on a terminal, never in a file.
        touchstone_report::colour::disable();
    }
    let cost = cost_of(store, &m)?;
    let order = match &a.sort {
        Some(spec) => Some(cost_order(cost.as_ref(), spec).unwrap_or_else(|| {
            Err(usage(format!(
                "--sort {spec}: compare sorts by index, per-price or per-watt"
            )))
        })?),
        None => None,
    };
    let generated = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
    let mut model = Model::comparison(m, layout(a.wide, a.output.as_deref()))
        .with_cost(cost)
        .generated_at(generated);
    if let Some(order) = order {
        model.order = order;
    }
    let r = a.format.renderer();
    emit(store, a.output.as_deref(), r.media(), &r.comparison(&model))
}
