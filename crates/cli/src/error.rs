//! Every way the command can fail, and the exit code each one means.

use touchstone_catalogue::SelectError;
use touchstone_harness::HarnessError;
use touchstone_results::json::JsonError;
use touchstone_results::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Select(#[from] SelectError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{path}: {source}")]
    Json { path: String, source: JsonError },
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("{0} of {1} measurements failed (see above); the others are stored")]
    Failed(usize, usize),
    #[error("{0}")]
    Harness(HarnessError),
    /// Some hosts of a fleet command failed; the others' results are in.
    #[error("{0}")]
    Hosts(String),
    #[error("{0} of {1} hosts or pairs failed (see above); the others are imported")]
    FleetFailed(usize, usize),
    /// `check` found the host degraded (its findings printed).
    #[error("degraded: {0} finding(s)")]
    Degraded(usize),
    #[error("interrupted; the measurements finished before it are stored (run {0})")]
    Interrupted(String),
    /// Interrupted with nothing stored (`--no-store`).
    #[error("interrupted; nothing is stored (--no-store): the measurements finished before it are printed above")]
    InterruptedUnstored,
    /// A fleet run stopped by Ctrl-C or SIGTERM.
    #[error(
        "interrupted; {0} of {1} hosts or pairs finished before it and are imported, \
         and what was copied to the hosts is removed"
    )]
    FleetInterrupted(usize, usize),
}

impl CliError {
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Failed(..)
            | CliError::Degraded(_)
            | CliError::Harness(_)
            | CliError::Hosts(_)
            | CliError::FleetFailed(..) => 1,
            CliError::Interrupted(_)
            | CliError::InterruptedUnstored
            | CliError::FleetInterrupted(..) => 130,
            _ => 2,
        }
    }
}
