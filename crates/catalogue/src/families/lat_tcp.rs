//! lat_tcp: latency of a round trip over a TCP connection on 127.0.0.1 (lmbench's
//! lat_tcp), Nagle off, message size selectable; the port is chosen by
//! the kernel (bound to port 0), so it cannot be in use.
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
use crate::support::hot_potato::{FdBaton, HotPotato, MSG_SIZE};
use crate::support::placement;
use crate::support::remote::{self, Exchange};
use crate::support::sockets::Channel;

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    remote::local_or_remote(p, &MSG_SIZE, Exchange::TcpEcho, |size| {
        HotPotato::case(FdBaton::new(Channel::Tcp, size), p)
    })
}

pub const FAMILY: Family = Family {
    params: &[MSG_SIZE, placement::PARAM, remote::PARAM],
    ..Family::new(
        "lat_tcp",
        "comm_lat",
        "TCP round trip over 127.0.0.1 (Nagle off) between two processes",
        build,
    )
};
