//! One file per subcommand; `dispatch` routes to them.

mod app;
mod check;
mod dry_run;
mod fleet;
mod fleet_report;
mod fleet_slurm;
mod generate;
mod history;
mod import;
mod inventory;
mod list;
mod predict;
mod report;
mod run;
mod runs_filter;
mod serve;
mod stored;

use touchstone_results::store::{Open, Store};

use crate::args::{Cli, Command, InventoryAction, RunsAction};
use crate::error::CliError;
use crate::store::open;
use touchstone_report::Format;

pub fn dispatch(cli: Cli) -> Result<(), CliError> {
    let db = cli.db.clone();
    match cli.command {
        Command::List { json } => list::list(json),
        Command::Run(a) => run::run(db, a),
        Command::Runs(a) => match a.action {
            None => {
                // Checked before the store is opened: bad input is reported as such.
                let filter = runs_filter::RunFilter::parse(
                    a.label,
                    a.host,
                    a.since.as_deref(),
                    a.until.as_deref(),
                    chrono::Utc::now(),
                )?;
                stored::runs(&open(db, Open::ReadOnly)?, a.json, &filter)
            }
            Some(RunsAction::Delete { runs, yes }) => {
                stored::delete(&mut open(db, Open::MustExist)?, &runs, yes)
            }
            Some(RunsAction::Relabel { run, label, yes }) => {
                stored::relabel(&mut open(db, Open::MustExist)?, &run, &label, yes)
            }
        },
        Command::Show {
            run,
            json,
            format,
            warnings,
        } => {
            let named = |n| Format::named(n).expect("a format");
            let format = match (json, format) {
                (true, Some(f)) if f != named("json") => {
                    return Err(CliError::Usage(
                        "--json and --format disagree: give one of them".into(),
                    ))
                }
                (true, _) => named("json"),
                (false, f) => f.unwrap_or(named("table")),
            };
            stored::show(&open(db, Open::ReadOnly)?, &run, format, warnings)
        }
        Command::Export { runs, output } => {
            stored::export(&open(db, Open::ReadOnly)?, &runs, output.as_deref())
        }
        Command::Import { files } => import::import(db, &files),
        Command::Inventory { action } => match action {
            InventoryAction::Set(a) => inventory::set(db, a),
            InventoryAction::Import { file } => inventory::import(db, &file),
            InventoryAction::List { json } => inventory::list(&open(db, Open::ReadOnly)?, json),
        },
        Command::App(a) => app::app(db, a),
        Command::Predict(a) => predict::predict(&open(db, Open::ReadOnly)?, a),
        Command::Report(a) => report::report(&open(db, Open::ReadOnly)?, &a),
        Command::Compare(a) => report::compare(&open(db, Open::ReadOnly)?, &a),
        Command::Check(a) => check::check(db, a),
        Command::History(a) => history::show(db, &a),
        Command::Fleet(a) => fleet::fleet(db, a),
        Command::Serve(a) => serve::serve(&a),
        Command::Completions { shell } => generate::completions(shell),
        Command::Man { dir } => {
            generate::man(dir.as_deref(), &db.unwrap_or_else(Store::default_path))
        }
    }
}
