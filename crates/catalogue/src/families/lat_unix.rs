//! lat_unix: latency of a round trip over an AF_UNIX stream socket pair (lmbench's
//! lat_unix), message size selectable.
//! One iteration is a round trip (lmbench reports the round trip too): the
//! benchmark process writes the message and blocks until the helper process
//! has read it and written it back. The mechanics live in `support::hot_potato`.

use crate::family::{Built, Family, RunContext};
use crate::params::Point;
use crate::support::hot_potato::{FdBaton, HotPotato, MSG_SIZE};
use crate::support::placement;
use crate::support::sockets::Channel;

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    HotPotato::case(FdBaton::new(Channel::Unix, p.num("size") as usize), p)
}

pub const FAMILY: Family = Family {
    params: &[MSG_SIZE, placement::PARAM],
    ..Family::new(
        "lat_unix",
        "comm_lat",
        "AF_UNIX stream socket round trip between two processes",
        build,
    )
};
