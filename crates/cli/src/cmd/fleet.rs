//! `touchstone fleet …`: the fleet layer's commands. Each has its own file
//! (`fleet_slurm`, `fleet_report`); this holds their arguments' enum and
//! routes to them.

use std::path::PathBuf;

use clap::Subcommand;

use super::fleet_report::FleetReportArgs;
use super::fleet_slurm::SlurmArgs;
use crate::error::CliError;

#[derive(Subcommand, Debug)]
pub enum FleetCommand {
    /// Run the suite on the nodes of a Slurm partition (one exclusive task
    /// per node, through srun or an sbatch array) and import the results.
    Slurm(SlurmArgs),
    /// The fleet's runs side by side, hosts grouped by hardware, and the
    /// hosts whose figures stand apart from their group flagged.
    Report(FleetReportArgs),
}

pub fn fleet(db: Option<PathBuf>, command: FleetCommand) -> Result<(), CliError> {
    match command {
        FleetCommand::Slurm(a) => super::fleet_slurm::slurm(db, a),
        FleetCommand::Report(a) => super::fleet_report::report(db, a),
    }
}
