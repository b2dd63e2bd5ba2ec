//! lat_udp: latency of a round trip of one UDP datagram on 127.0.0.1 (lmbench's
//! lat_udp); ports chosen by the kernel; a lost datagram is an error after
//! 2 s, never a hang.
//! One iteration is a round trip (lmbench reports the round trip too): the
//! benchmark process writes the message and blocks until the helper process
//! has read it and written it back. The mechanics live in `support::hot_potato`.
//! With `remote:HOST:PORT` the other end is `touchstone serve` on another
//! host instead of a local helper (`support::remote`); the name then carries it,
//! and the CPU both ends spent is reported beside the latency:
//! `cpu_us_per_op_client` / `_server` (CPU µs per exchange) and
//! `cpu_pct_client` / `_server` (% of one CPU), serve's from serve itself.

use crate::family::{Built, Family, RunContext};
use crate::params::Point;
use crate::support::hot_potato::{FdBaton, HotPotato, UDP_SIZE};
use crate::support::placement;
use crate::support::remote::{self, Exchange};
use crate::support::sockets::Channel;

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    remote::local_or_remote(p, &UDP_SIZE, Exchange::UdpEcho, |size| {
        HotPotato::case(FdBaton::new(Channel::Udp, size), p)
    })
}

pub const FAMILY: Family = Family {
    params: &[UDP_SIZE, placement::PARAM, remote::PARAM],
    ..Family::new(
        "lat_udp",
        "comm_lat",
        "UDP round trip over 127.0.0.1 between two processes",
        build,
    )
};
