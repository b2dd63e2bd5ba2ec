//! touchstone's integration tests: one test binary, one module per area.

mod app;
mod cli;
mod comm_family;
mod common;
mod fleet_ssh;
mod harness;
mod import_fuzz;
mod imports;
mod mem;
mod proc;
mod session;
mod store;
mod store_safety;
mod system_workloads;
mod workload;
