//! `touchstone fleet report`: placeholder while it is written.

use std::path::PathBuf;

use clap::Args;

use crate::error::CliError;

#[derive(Args, Debug)]
pub struct FleetReportArgs {
    pub runs: Vec<String>,
}

pub fn report(_db: Option<PathBuf>, _a: FleetReportArgs) -> Result<(), CliError> {
    Ok(())
}
