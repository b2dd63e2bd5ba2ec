//! lat_fifo: latency of a round trip through two named pipes (lmbench's lat_fifo);
//! the FIFOs are made in the scratch directory and unlinked once open.
//! One iteration is a round trip (lmbench reports the round trip too): the
//! benchmark process writes the message and blocks until the helper process
//! has read it and written it back. The mechanics live in `support::hot_potato`.

use crate::family::{Built, Family, RunContext};
use crate::params::Point;
use crate::support::hot_potato::{self, FdBaton, HotPotato};
use crate::support::sockets::Channel;

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    HotPotato::case(FdBaton::new(Channel::Fifo, 1), p)
}

pub const FAMILY: Family = hot_potato::family(
    "lat_fifo",
    "named pipe (FIFO) round trip of 1 byte between two processes",
    build,
);
