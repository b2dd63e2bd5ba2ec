//! The benchmark catalogue. Each family is one file in `families/` that ends
//! with its self-description (`FAMILY`); this file's `FAMILIES` table is the
//! one place a family is registered. `list`, help and the docs are generated
//! from it; `select` turns what the user typed into concrete cases.

pub mod families;
pub mod family;

pub mod params;
pub mod select;
pub mod support;
pub mod testing;

pub use family::{Built, Family, Mode, Parallel};
pub use params::{Kind, Param, Point, Value};
pub use select::{select, SelectError, Selected};

/// Every benchmark family, in the order `list` and the default suite use.
pub static FAMILIES: &[&Family] = &[
    &families::null_loop::FAMILY,
    &families::spin::FAMILY,
    &families::lat_syscall::FAMILY,
    &families::lat_sig::FAMILY,
    &families::lat_proc::FAMILY,
    &families::lat_thread::FAMILY,
    &families::lat_usleep::FAMILY,
    &families::lat_pmake::FAMILY,
    &families::lat_ctx::FAMILY,
    &families::whetstone::FAMILY,
    &families::dhrystone::FAMILY,
    &families::linpack::FAMILY,
    &families::sieve::FAMILY,
    // comm_lat
    &families::lat_pipe::FAMILY,
    &families::lat_fifo::FAMILY,
    &families::lat_unix::FAMILY,
    &families::lat_tcp::FAMILY,
    &families::lat_udp::FAMILY,
    &families::lat_sem::FAMILY,
    &families::lat_fcntl::FAMILY,
    &families::lat_eventfd::FAMILY,
    &families::lat_futex::FAMILY,
    &families::lat_rpc::FAMILY,
    &families::lat_http::FAMILY,
    &families::lat_connect::FAMILY,
    &families::lat_unix_connect::FAMILY,
    &families::lat_select::FAMILY,
    // fs_lat
    &families::lat_fs::FAMILY,
    &families::lat_mmap::FAMILY,
    &families::lat_pagefault::FAMILY,
    // comm_bw
    &families::bw_pipe::FAMILY,
    &families::bw_unix::FAMILY,
    &families::bw_tcp::FAMILY,
    &families::bw_file_rd::FAMILY,
    &families::bw_mmap_rd::FAMILY,
    // mem_lat, mem_bw, proc (issue 5)
    &families::lat_mem_rd::FAMILY,
    &families::line::FAMILY,
    &families::tlb::FAMILY,
    &families::par_mem::FAMILY,
    &families::lat_dram_page::FAMILY,
    &families::bw_mem::FAMILY,
    &families::stream::FAMILY,
    &families::mhz::FAMILY,
    &families::lat_ops::FAMILY,
    &families::par_ops::FAMILY,
];

/// A family by exact name.
pub fn family(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().copied().find(|f| f.name == name)
}
