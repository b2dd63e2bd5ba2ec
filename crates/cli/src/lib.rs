//! The `touchstone` command: parse → plan → run → store → print. Errors are
//! printed once, here, and the exit code is decided in one place:
//! 0 success, 1 a measurement failed, 2 bad input (arguments, files,
//! databases), 130 interrupted. Output to a reader that has gone
//! (`| head`) ends quietly (see `output`).

mod args;
mod cmd;
mod curve_lines;
mod error;
mod examples;
mod family_options;
mod option_values;
mod output;
mod progress;
mod session;
mod store;

use clap::Parser;

pub use error::CliError;

pub fn main() -> i32 {
    let args = match args::Cli::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let e = args::explain(e);
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let code = match cmd::dispatch(args) {
        Ok(()) => 0,
        Err(e) => {
            output::eprint_line(&format!("touchstone: {e}"));
            e.exit_code()
        }
    };
    output::finish(code)
}
