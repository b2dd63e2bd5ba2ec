//! One file per subcommand; `dispatch` routes to them.

mod app;
mod list;
mod predict;
mod report;
mod run;
mod stored;

use std::path::PathBuf;

use touchstone_results::store::{Open, Store};

use crate::args::{Cli, Command, RunsAction};
use crate::error::CliError;

pub fn dispatch(cli: Cli) -> Result<(), CliError> {
    let db = cli.db.clone();
    match cli.command {
        Command::List { json } => list::list(json),
        Command::Run(a) => run::run(db, a),
        Command::Runs(a) => match a.action {
            None => stored::runs(&open(db, Open::ReadOnly)?, a.json),
            Some(RunsAction::Delete { runs, yes }) => {
                stored::delete(&mut open(db, Open::MustExist)?, &runs, yes)
            }
            Some(RunsAction::Relabel { run, label, yes }) => {
                stored::relabel(&mut open(db, Open::MustExist)?, &run, &label, yes)
            }
        },
        Command::Show { run, json } => stored::show(&open(db, Open::ReadOnly)?, &run, json),
        Command::Export { runs, output } => {
            stored::export(&open(db, Open::ReadOnly)?, &runs, output.as_deref())
        }
        Command::Import { files } => stored::import(&mut open(db, Open::CreateIfMissing)?, &files),
        Command::App(a) => app::app(db, a),
        Command::Predict(a) => predict::predict(&open(db, Open::ReadOnly)?, a),
        Command::Report(a) => report::report(&open(db, Open::ReadOnly)?, &a),
        Command::Compare(a) => report::compare(&open(db, Open::ReadOnly)?, &a),
    }
}

pub fn db_path(db: Option<PathBuf>) -> PathBuf {
    db.unwrap_or_else(Store::default_path)
}

/// Open the store (reading commands with `Open::ReadOnly`: they work on a
/// read-only or full disk), passing on what the store says about how it
/// could be read.
pub fn open(db: Option<PathBuf>, mode: Open) -> Result<Store, CliError> {
    let store = Store::open(&db_path(db), mode)?;
    for notice in store.notices() {
        eprintln!("warning: {notice}");
    }
    Ok(store)
}
