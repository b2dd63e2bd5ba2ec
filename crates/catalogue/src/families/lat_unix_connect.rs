//! lat_unix_connect: the time to connect an AF_UNIX stream socket to a
//! listening one and close it (lmbench's lat_unix_connect): socket,
//! connect, close; the helper accepts and closes. The listening socket's
//! path is in the scratch directory and removed in cleanup. No TIME_WAIT
//! here, so it may run in parallel.

use crate::family::{Built, Family, RunContext};
use crate::params::Point;
use crate::support::hot_potato::{self, ConnectBaton, Domain, HotPotato};

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    HotPotato::case(ConnectBaton::new(Domain::Unix), p)
}

pub const FAMILY: Family = hot_potato::family(
    "lat_unix_connect",
    "AF_UNIX stream connection set-up and close (socket, connect, close)",
    build,
);
