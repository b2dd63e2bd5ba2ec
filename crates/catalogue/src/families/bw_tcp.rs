//! bw_tcp: bandwidth over a TCP connection on 127.0.0.1 (lmbench's bw_tcp),
//! port chosen by the kernel (bound to port 0).
//! A helper process writes, this process reads: each interval asks the
//! helper (over a command pipe) for exactly its messages, so nothing sits
//! buffered when the interval starts. Besides MB/s (10^6 bytes), the CPU
//! seconds each end spent per MB are reported as extra figures
//! `cpu_s_per_mb_sender` and `cpu_s_per_mb_receiver`.
//! With `remote:HOST:PORT` the other end is `touchstone serve` on another
//! host instead of a local helper (`support::remote`); the name then carries it.
//! serve sends, this host receives: `cpu_s_per_mb_sender` is serve's CPU
//! (from serve itself), `cpu_s_per_mb_receiver` this host's, and
//! `cpu_pct_sender` / `cpu_pct_receiver` each end's % of one CPU.

use crate::family::{Built, Family, RunContext};
use crate::params::Point;
use crate::support::one_way::{OneWay, BW_SIZE};
use crate::support::placement;
use crate::support::remote::{self, Exchange};
use crate::support::sockets::Channel;

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    remote::local_or_remote(p, &BW_SIZE, Exchange::Pull, |size| {
        OneWay::case(Channel::Tcp, size, p)
    })
}

pub const FAMILY: Family = Family {
    params: &[BW_SIZE, placement::PARAM, remote::PARAM],
    ..Family::new(
        "bw_tcp",
        "comm_bw",
        "TCP bandwidth over 127.0.0.1 between two processes, by message size",
        build,
    )
};
