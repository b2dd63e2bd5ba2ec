//! One file per benchmark family; each ends with its `FAMILY` description
//! and is registered once in `crate::FAMILIES`.

pub mod dhrystone;
pub mod lat_ctx;
pub mod lat_pmake;
pub mod lat_proc;
pub mod lat_sig;
pub mod lat_syscall;
pub mod lat_thread;
pub mod lat_usleep;
pub mod linpack;
pub mod null_loop;
pub mod sieve;
pub mod spin;
pub mod whetstone;

// Communication, files and VM (issue 4).
pub mod bw_file_rd;
pub mod bw_mmap_rd;
pub mod bw_pipe;
pub mod bw_tcp;
pub mod bw_unix;
pub mod lat_connect;
pub mod lat_eventfd;
pub mod lat_fcntl;
pub mod lat_fifo;
pub mod lat_fs;
pub mod lat_futex;
pub mod lat_http;
pub mod lat_mmap;
pub mod lat_pagefault;
pub mod lat_pipe;
pub mod lat_rpc;
pub mod lat_select;
pub mod lat_sem;
pub mod lat_tcp;
pub mod lat_udp;
pub mod lat_unix;
pub mod lat_unix_connect;

// Memory hierarchy and processor (issue 5).
pub mod bw_mem;
pub mod lat_dram_page;
pub mod lat_mem_rd;
pub mod lat_ops;
pub mod line;
pub mod mhz;
pub mod par_mem;
pub mod par_ops;
pub mod stream;
pub mod tlb;
