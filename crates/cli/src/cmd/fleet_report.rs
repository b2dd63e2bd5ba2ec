//! `touchstone fleet report`: the fleet's hosts side by side (each by its
//! newest run), grouped by hardware, with the hosts whose figures stand
//! apart from their group's flagged (`touchstone_analysis::outliers`; the
//! rule and threshold are printed with the verdict), on the terminal and,
//! with --html, as the report page with a Fleet section. Runs measured
//! against other hosts (`fleet run --pairs`: `remote:ADDR`) become the
//! matrices of the network between hosts (`touchstone_analysis::pairs`)
//! and are left out of the side by side, which is of each host's own figures.
//!
//! The runs are read as `report` reads them: headers, and measurements in
//! brief — once to tell the pair runs and keep their remote figures, once
//! more for the newest run of each host.

use std::path::PathBuf;

use touchstone_analysis::outliers::{judge, newest_per_host};
use touchstone_analysis::pairs::{self, is_pair, is_remote};
use touchstone_analysis::table::MatrixBuilder;
use touchstone_report::model::Fleet;
use touchstone_report::Format;
use touchstone_results::store::Open;
use touchstone_results::{Brief, Run};

use super::report::{cost_of, cost_order, drawn, layout, selection, summary_model};
use super::stored::{load_headers, none_readable, readable, warn_skipped};
use crate::args::FleetReportArgs;
use crate::error::CliError;
use crate::output;
use crate::store;

pub fn report(db: Option<PathBuf>, a: FleetReportArgs) -> Result<(), CliError> {
    let store = store::open(db, Open::ReadOnly)?;
    if let Some(p) = &a.html {
        output::refuse_store(p, store.path())?;
    }
    let (headers, mut unreadable) = load_headers(&store, &selection(&store, &a.runs)?)?;
    // Which runs stand for a pair of hosts, and every run's remote figures.
    let mut all: Vec<&Run> = Vec::new();
    let mut pair: Vec<bool> = Vec::new();
    let mut remote: Vec<Vec<Brief>> = Vec::new();
    for run in &headers {
        let Some(b) = readable(store.briefs(&run.id), &mut unreadable)? else {
            continue;
        };
        all.push(run);
        pair.push(is_pair(run, &b));
        let mut kept: Vec<Brief> = b.into_iter().filter(is_remote).collect();
        // Collected in place: without this each run keeps all its room.
        kept.shrink_to_fit();
        remote.push(kept);
    }
    if all.is_empty() {
        return Err(none_readable("none of the runs can be read", &unreadable));
    }
    warn_skipped(&unreadable);
    let with_remote: Vec<(&Run, &[Brief])> =
        all.iter().zip(&remote).map(|(r, b)| (*r, &b[..])).collect();
    let pair_matrices = pairs::build_from(&with_remote);
    // A host's newest run of its own figures, not a newer pair run of it
    // (unless it has only those).
    let own: Vec<Run> = all
        .iter()
        .zip(&pair)
        .filter(|(_, &p)| !p)
        .map(|(r, _)| (*r).clone())
        .collect();
    let pool: Vec<Run> = match own.is_empty() {
        true => all.iter().map(|r| (*r).clone()).collect(),
        false => own,
    };
    let mut b = MatrixBuilder::new();
    for i in newest_per_host(&pool) {
        // Read a moment ago; a run that cannot be now is an error.
        b.push(&pool[i], store.briefs(&pool[i].id)?);
    }
    let m = b.finish().map_err(|e| CliError::Usage(e.to_string()))?;
    let groups = judge(&m);
    let cost = cost_of(&store, &m)?;
    let order: Vec<usize> = match &a.sort {
        Some(spec) => cost_order(cost.as_ref(), spec).unwrap_or_else(|| {
            Err(CliError::Usage(format!(
                "--sort {spec}: fleet report sorts by index, per-price or per-watt"
            )))
        })?,
        None => (0..m.runs.len()).collect(),
    };
    let whole_runs = match a.html {
        Some(_) => Some(drawn(&store, &m, &order)?),
        None => None,
    };
    let generated = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
    let model = summary_model(m, order, layout(a.wide, None), whole_runs.as_deref(), true)?
        .with_fleet(Fleet {
            groups,
            pairs: pair_matrices,
        })
        .with_cost(cost)
        .generated_at(generated);
    let format = |name| Format::named(name).expect("a format").renderer();
    if let Some(path) = &a.html {
        let page = format("html").summary(&model);
        output::write_file(path, page.as_bytes(), store.path())?;
        output::eprint_line(&format!("HTML report written to {}", path.display()));
    }
    output::print(&format("table").summary(&model));
    Ok(())
}
