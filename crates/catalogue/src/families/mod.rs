//! The benchmark families, one file each, each ending with its `FAMILY`.
//! This list of modules is the one place a family is registered: the build
//! script (`build.rs`) makes the `FAMILIES` table from it, in this order,
//! which is the order of `touchstone list` and of the default suite.
//! (`reorder_modules` is off in this crate's rustfmt.toml so that rustfmt
//! keeps the order.)

// harness self-checks
pub mod null_loop;
pub mod spin;

// processes, context switches, CPU kernels
pub mod lat_syscall;
pub mod lat_clock;
pub mod lat_sig;
pub mod lat_proc;
pub mod lat_thread;
pub mod lat_usleep;
pub mod lat_pmake;
pub mod lat_ctx;
pub mod whetstone;
pub mod dhrystone;
pub mod linpack;
pub mod sieve;

// communication latency
pub mod lat_pipe;
pub mod lat_fifo;
pub mod lat_unix;
pub mod lat_tcp;
pub mod lat_udp;
pub mod lat_sem;
pub mod lat_fcntl;
pub mod lat_eventfd;
pub mod lat_futex;
pub mod lat_rpc;
pub mod lat_http;
pub mod lat_connect;
pub mod lat_unix_connect;
pub mod lat_select;

// file and VM latency
pub mod lat_fs;
pub mod lat_mmap;
pub mod lat_pagefault;

// communication bandwidth
pub mod bw_pipe;
pub mod bw_unix;
pub mod bw_tcp;
pub mod bw_file_rd;
pub mod bw_mmap_rd;

// file-system and disk I/O
pub mod io;
pub mod io_copy;

// memory latency and bandwidth, processor
pub mod lat_mem_rd;
pub mod line;
pub mod tlb;
pub mod par_mem;
pub mod lat_dram_page;
pub mod bw_mem;
pub mod bw_mix;
pub mod numa_matrix;
pub mod stream;
pub mod mhz;
pub mod lat_ops;
pub mod par_ops;

// system workloads (load curves)
pub mod tcp_crr;
pub mod tcp_rr;
pub mod udp_rr;
pub mod fscache;
pub mod chat;
pub mod web;
pub mod io_load;
pub mod multiuser;
pub mod loaded_latency;
// the embedded SQLite and a PostgreSQL client, behind the `oltp` feature
#[cfg(feature = "oltp")]
pub mod oltp;

// real-time responsiveness under load (seed 004 section 5)
pub mod rt_wake;
pub mod rt_dispatch;
