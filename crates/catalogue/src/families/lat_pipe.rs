//! lat_pipe: latency of a round trip through a pair of pipes (lmbench's lat_pipe).
//! One iteration is a round trip (lmbench reports the round trip too): the
//! benchmark process writes the message and blocks until the helper process
//! has read it and written it back. The mechanics live in `support::hot_potato`.

use crate::family::{Built, Family, RunContext};
use crate::params::Point;
use crate::support::hot_potato::{self, FdBaton, HotPotato};
use crate::support::sockets::Channel;

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    HotPotato::case(FdBaton::new(Channel::Pipe, 1), p)
}

pub const FAMILY: Family = hot_potato::family(
    "lat_pipe",
    "pipe round trip of 1 byte between two processes",
    build,
);
