//! touchstone's integration tests: one test binary, one module per area.

mod app;
mod app_hyperfine;
mod cli;
mod comm_family;
mod common;
mod device_guard;
mod fleet_interrupt;
mod fleet_report;
mod fleet_slurm;
pub(crate) mod fleet_ssh;
mod harness;
mod import_fuzz;
mod imports;
mod io_safety;
mod ipc;
mod mem;
mod multiuser;
mod oltp;
mod output;
mod output_safety;
mod proc;
mod serve;
mod session;
mod store;
mod store_safety;
mod system_workloads;
mod workload;
