//! lat_connect: the time to open a TCP connection to a server on 127.0.0.1
//! and close it (lmbench's lat_connect): socket, connect (the three-way
//! handshake, completed by the kernel), close. The helper accepts and
//! closes each connection. The listener binds port 0 (kernel-chosen). The
//! mechanics (`ConnectBaton`) live in `support::hot_potato`.
//! With `remote:HOST:PORT` the other end is `touchstone serve` on another
//! host instead of a local helper (`support::remote`); the name then carries it,
//! and the CPU both ends spent is reported beside the latency:
//! `cpu_us_per_op_client` / `_server` (CPU µs per exchange) and
//! `cpu_pct_client` / `_server` (% of one CPU), serve's from serve itself.

use crate::family::{Built, Family, Parallel, RunContext};
use crate::params::Point;
use crate::support::hot_potato::{ConnectBaton, Domain, HotPotato};
use crate::support::placement;
use crate::support::remote::{self, Exchange, RemoteCase};

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    if let Some(addr) = remote::of(p) {
        return RemoteCase::case(addr, Exchange::Connect, 1);
    }
    HotPotato::case(ConnectBaton::new(Domain::Tcp), p)
}

pub const FAMILY: Family = Family {
    params: &[placement::PARAM, remote::PARAM],
    parallel: Parallel::No(
        "every connection leaves a socket in TIME_WAIT for 60 s; several processes \
         connecting for a second each would exhaust ephemeral ports and measure that instead",
    ),
    ..Family::new(
        "lat_connect",
        "comm_lat",
        "TCP connection set-up and close on 127.0.0.1 (socket, connect, close)",
        build,
    )
};
