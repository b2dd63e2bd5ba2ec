//! One file per subcommand; `dispatch` routes to them.

mod app;
mod import;
mod list;
mod predict;
mod report;
mod run;
mod stored;

use std::path::PathBuf;

use touchstone_results::store::{Open, Store};

use crate::args::{Cli, Command};
use crate::error::CliError;

pub fn dispatch(cli: Cli) -> Result<(), CliError> {
    let db = cli.db.clone();
    match cli.command {
        Command::List { json } => list::list(json),
        Command::Run(a) => run::run(db, a),
        Command::Runs { json } => stored::runs(&open(db, Open::MustExist)?, json),
        Command::Show { run, json } => stored::show(&open(db, Open::MustExist)?, &run, json),
        Command::Export { runs, output } => {
            stored::export(&open(db, Open::MustExist)?, &runs, output.as_deref())
        }
        Command::Import { files } => import::import(db, &files),
        Command::App(a) => app::app(db, a),
        Command::Predict(a) => predict::predict(&open(db, Open::MustExist)?, a),
        Command::Report(a) => report::report(&open(db, Open::MustExist)?, &a),
        Command::Compare(a) => report::compare(&open(db, Open::MustExist)?, &a),
    }
}

/// A label a run may carry: one that import would take back
/// (`validate::MAX_LABEL_BYTES`), so that every run stored can travel.
pub fn check_label(label: Option<&str>) -> Result<(), CliError> {
    use touchstone_results::validate::MAX_LABEL_BYTES;
    match label {
        Some(l) if l.len() > MAX_LABEL_BYTES => Err(CliError::Usage(format!(
            "--label of {} bytes: at most {MAX_LABEL_BYTES}",
            l.len()
        ))),
        _ => Ok(()),
    }
}

pub fn db_path(db: Option<PathBuf>) -> PathBuf {
    db.unwrap_or_else(Store::default_path)
}

pub fn open(db: Option<PathBuf>, mode: Open) -> Result<Store, CliError> {
    Ok(Store::open(&db_path(db), mode)?)
}
