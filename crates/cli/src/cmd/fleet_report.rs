//! `touchstone fleet report`: the fleet's hosts side by side (each by its
//! newest run), grouped by hardware, with the hosts whose figures stand
//! apart from their group's flagged (`touchstone_analysis::outliers`; the
//! rule and threshold are printed with the verdict), on the terminal and,
//! with --html, as the report page with a Fleet section. Runs measured
//! against other hosts (`fleet run --pairs`: `remote:ADDR`) become the
//! matrices of the network between hosts (`touchstone_analysis::pairs`)
//! and are left out of the side by side, which is of each host's own figures.

use std::path::PathBuf;

use touchstone_analysis::outliers::{judge, newest_per_host};
use touchstone_analysis::pairs;
use touchstone_analysis::table::Matrix;
use touchstone_report::{html, Format};
use touchstone_results::store::Open;
use touchstone_results::Run;

use crate::args::FleetReportArgs;
use crate::error::CliError;
use crate::output;
use crate::store;

pub fn report(db: Option<PathBuf>, a: FleetReportArgs) -> Result<(), CliError> {
    let store = store::open(db, Open::ReadOnly)?;
    if let Some(p) = &a.html {
        output::refuse_store(p, store.path())?;
    }
    let all = super::report::load(&store, &a.runs)?;
    let pair_matrices = pairs::build(&all);
    // A host's newest run of its own figures, not a newer pair run of it
    // (unless it has only those).
    let own: Vec<Run> = all
        .iter()
        .filter(|r| !pairs::is_pair_run(r))
        .cloned()
        .collect();
    let pool = if own.is_empty() { &all } else { &own };
    let runs: Vec<Run> = newest_per_host(pool)
        .into_iter()
        .map(|i| pool[i].clone())
        .collect();
    let m = Matrix::build(&runs).map_err(|e| CliError::Usage(e.to_string()))?;
    let groups = judge(&m);
    let order: Vec<usize> = (0..m.runs.len()).collect();
    if let Some(path) = &a.html {
        let generated = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
        let page = html::render_fleet(&m, &order, &generated, &groups, &pair_matrices);
        output::write_file(path, page.as_bytes(), store.path())?;
        output::eprint_line(&format!("HTML report written to {}", path.display()));
    }
    output::print(&touchstone_report::fleet::text(&m, &groups));
    output::print(&touchstone_report::fleet::pairs_text(&pair_matrices));
    output::print(&touchstone_report::summary_with(
        &m,
        &order,
        Format::Table,
        super::report::layout(a.wide, None),
    ));
    Ok(())
}
