//! touchstone's integration tests: one test binary, one module per area.

mod app;
mod cli;
mod common;
mod harness;
mod store;
