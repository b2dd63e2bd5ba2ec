//! lat_unix: latency of a round trip over an AF_UNIX stream socket pair (lmbench's
//! lat_unix), message size selectable.
//! One iteration is a round trip (lmbench reports the round trip too): the
//! benchmark process writes the message and blocks until the helper process
//! has read it and written it back. The mechanics live in `ipc_common`.

use touchstone_harness::Shape;

use super::ipc_common::{Channel, FdBaton, HotPotato, MSG_SIZE};
use crate::family::{always_supported, Built, Family, Mode, Parallel};
use crate::params::Point;

fn build(p: &Point, _: Mode) -> Result<Built, String> {
    Ok(Built::new(
        HotPotato::new(FdBaton::new(Channel::Unix, p.num("size") as usize)),
        Shape::latency(1.0).with_switches_by_design(),
    ))
}

pub const FAMILY: Family = Family {
    name: "lat_unix",
    group: "comm_lat",
    summary: "AF_UNIX stream socket round trip between two processes",
    params: &[MSG_SIZE],
    parallel: Parallel::Allowed,
    default_suite: true,
    unsupported: always_supported,
    build,
    derive: None,
};

#[cfg(test)]
mod tests {
    use crate::testing::{assert_sane, measure_spec, tiny_plan};
    use crate::Mode;

    #[test]
    fn measures() {
        for m in measure_spec("lat_unix", &tiny_plan(1), Mode::default()).unwrap() {
            assert_sane(&m);
            assert_eq!(m.unit, touchstone_results::Unit::Ns);
        }
    }

    #[test]
    fn runs_in_parallel() {
        let ms = measure_spec("lat_unix", &tiny_plan(3), Mode { quick: true }).unwrap();
        assert_eq!(ms[0].per_process.len(), 3);
        assert_sane(&ms[0]);
    }
}
