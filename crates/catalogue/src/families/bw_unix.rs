//! bw_unix: bandwidth over an AF_UNIX stream socket pair (lmbench's bw_unix).
//! A helper process writes, this process reads: each interval asks the
//! helper (over a command pipe) for exactly its messages, so nothing sits
//! buffered when the interval starts. Besides MB/s (10^6 bytes), the CPU
//! seconds each end spent per MB are reported as extra figures
//! `cpu_s_per_mb_sender` and `cpu_s_per_mb_receiver`.

use crate::family::{Built, Family, RunContext};
use crate::params::Point;
use crate::support::one_way::{self, OneWay};
use crate::support::sockets::Channel;

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    OneWay::case(Channel::Unix, p.num("size") as usize, p)
}

pub const FAMILY: Family = one_way::family(
    "bw_unix",
    "AF_UNIX stream socket bandwidth between two processes, by message size",
    build,
);
