//! `touchstone completions SHELL` and `touchstone man`: shell completion
//! scripts (clap_complete) and manual pages (clap_mangen) generated from
//! the command-line definition itself, at run time, so they always match
//! the binary that prints them (no build step, nothing to keep in sync).

use std::io::Write;
use std::path::Path;

use clap::CommandFactory;

use crate::args::Cli;
use crate::error::CliError;

pub fn completions(shell: clap_complete::Shell) -> Result<(), CliError> {
    let mut cmd = Cli::command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(shell, &mut cmd, "touchstone", &mut out);
    out.flush().map_err(|e| stdout_error(&e))
}

/// The main page on standard output, or every page (touchstone.1,
/// touchstone-run.1, …) written into `dir`.
pub fn man(dir: Option<&Path>) -> Result<(), CliError> {
    match dir {
        None => {
            let mut out = std::io::stdout().lock();
            clap_mangen::Man::new(Cli::command())
                .render(&mut out)
                .and_then(|()| out.flush())
                .map_err(|e| stdout_error(&e))
        }
        Some(d) => {
            std::fs::create_dir_all(d)
                .and_then(|()| clap_mangen::generate_to(Cli::command(), d))
                .map_err(|e| CliError::File {
                    path: d.display().to_string(),
                    message: format!("cannot write the manual pages: {e}"),
                })?;
            println!("manual pages written to {}", d.display());
            Ok(())
        }
    }
}

fn stdout_error(e: &std::io::Error) -> CliError {
    CliError::File {
        path: "standard output".into(),
        message: e.to_string(),
    }
}
