//! The `touchstone` binary: everything lives in the layered crates; this only
//! hands the process over to the CLI and exits with the code it decides.
fn main() {
    std::process::exit(touchstone_cli::main());
}
