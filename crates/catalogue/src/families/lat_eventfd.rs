//! lat_eventfd: latency of a round trip through two eventfd counters (the
//! modern Linux counterpart of lat_sem; lmbench has none): the benchmark
//! process adds 1 to the first and reads the second; its helper reads the
//! first and adds 1 to the second. Each read blocks until the count is set.

use std::os::fd::RawFd;

use touchstone_harness::{BenchError, Context, Fallible};

use crate::family::{Built, Family, RunContext};
use crate::params::Point;
use crate::support::hot_potato::{self, Baton, HotPotato};
use crate::support::sys::{self, errno};

pub struct EventfdBaton {
    there: RawFd,
    back: RawFd,
}

#[inline]
fn post(fd: RawFd) -> Fallible {
    sys::write_all(fd, &1u64.to_ne_bytes()).map_err(BenchError::from)
}

#[inline]
fn wait(fd: RawFd) -> Fallible {
    let mut b = [0u8; 8];
    sys::read_exact(fd, &mut b)?;
    Ok(())
}

impl Baton for EventfdBaton {
    fn open(&mut self, _: &Context) -> Fallible {
        for fd in [&mut self.there, &mut self.back] {
            // SAFETY: plain eventfd(2), counter 0.
            *fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
            if *fd < 0 {
                return Err(errno("eventfd"));
            }
        }
        Ok(())
    }

    /// Timed: one 8-byte write to the first counter, one blocking 8-byte
    /// read of the second.
    #[inline]
    fn ping(&mut self) -> Fallible {
        post(self.there)?;
        wait(self.back)
    }

    fn pong(&mut self) -> Fallible {
        wait(self.there)?;
        post(self.back)
    }

    fn close(&mut self) {
        sys::close(self.there);
        sys::close(self.back);
        (self.there, self.back) = (-1, -1);
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    HotPotato::case(
        EventfdBaton {
            there: -1,
            back: -1,
        },
        p,
    )
}

pub const FAMILY: Family = hot_potato::family(
    "lat_eventfd",
    "eventfd round trip (write one counter, read the other) between two processes",
    build,
);
