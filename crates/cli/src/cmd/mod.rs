//! One file per subcommand; `dispatch` routes to them.

mod app;
mod dry_run;
mod generate;
mod list;
mod predict;
mod report;
mod run;
mod runs_filter;
mod stored;

use std::path::PathBuf;

use touchstone_results::store::{Open, Store};

use crate::args::{Cli, Command, ReportFormat};
use crate::error::CliError;

pub fn dispatch(cli: Cli) -> Result<(), CliError> {
    let db = cli.db.clone();
    match cli.command {
        Command::List { json } => list::list(json),
        Command::Run(a) => run::run(db, a),
        Command::Runs {
            json,
            label,
            host,
            since,
            until,
        } => {
            // Checked before the store is opened: bad input is reported as such.
            let filter = runs_filter::RunFilter::parse(
                label,
                host,
                since.as_deref(),
                until.as_deref(),
                chrono::Utc::now(),
            )?;
            stored::runs(&open(db, Open::MustExist)?, json, &filter)
        }
        Command::Show { run, json, format } => {
            let format = match (json, format) {
                (true, Some(f)) if f != ReportFormat::Json => {
                    return Err(CliError::Usage(
                        "--json and --format disagree: give one of them".into(),
                    ))
                }
                (true, _) => ReportFormat::Json,
                (false, f) => f.unwrap_or(ReportFormat::Table),
            };
            stored::show(&open(db, Open::MustExist)?, &run, format)
        }
        Command::Export { runs, output } => {
            stored::export(&open(db, Open::MustExist)?, &runs, output.as_deref())
        }
        Command::Import { files } => stored::import(&mut open(db, Open::CreateIfMissing)?, &files),
        Command::App(a) => app::app(db, a),
        Command::Predict(a) => predict::predict(&open(db, Open::MustExist)?, a),
        Command::Report(a) => report::report(&open(db, Open::MustExist)?, &a),
        Command::Compare(a) => report::compare(&open(db, Open::MustExist)?, &a),
        Command::Completions { shell } => generate::completions(shell),
        Command::Man { dir } => generate::man(dir.as_deref()),
    }
}

pub fn db_path(db: Option<PathBuf>) -> PathBuf {
    db.unwrap_or_else(Store::default_path)
}

pub fn open(db: Option<PathBuf>, mode: Open) -> Result<Store, CliError> {
    Ok(Store::open(&db_path(db), mode)?)
}
