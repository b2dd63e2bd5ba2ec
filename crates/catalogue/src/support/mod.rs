//! The mechanisms benchmark families share, kept apart from the families
//! (`crate::families` holds only families, and no family uses another):
//! system calls and errors, where processes run, loopback sockets, the
//! ping-pong and one-way engines of the communication families, memory
//! buffers and the pointer chase of the memory families, cache-level
//! detection and what a guest shares with the host's tenants, scratch files and cached file sets, the I/O families' target
//! and sequences, what uses a block device (the guard of `io --device`),
//! the real-time families' scheduling, the request/response server, and
//! the web workload's file set, HTTP parsing and Zipf sampler.
//! docs/writing-a-benchmark.md lists every module with its subject.

pub mod background_load;
pub mod block_device;
pub mod cache_levels;
pub mod cached_files;
pub mod cpuid_tlb;
pub mod echo_server;
pub mod http;
pub mod io;
pub mod hot_potato;
pub mod launch;
pub mod line_mix;
pub mod memory;
pub mod multiplex;
pub mod numa;
pub mod one_way;
pub mod ops;
pub mod placement;
pub mod pointer_chase;
pub mod realtime;
#[cfg(test)]
pub mod recorded_curves;
pub mod remote;
pub mod scratch_file;
pub mod server_workers;
pub mod sockets;
pub mod sys;
pub mod tenants;
pub mod web_files;
pub mod zipf;
