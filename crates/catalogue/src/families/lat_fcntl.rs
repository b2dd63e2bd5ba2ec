//! lat_fcntl: latency of a round trip handed between two processes by POSIX
//! record locks (fcntl F_SETLKW), after lmbench's lat_fcntl. Three one-byte
//! records of a file in the scratch directory (unlinked once open) act as
//! three mutexes in a ring: in round k the benchmark process holds records
//! k and k+1 and the helper holds k+2 (mod 3). The benchmark unlocks k and
//! blocks locking k+2; the helper, blocked locking k, gets it and unlocks
//! k+2. Each side then holds the next round's pair: two lock hand-offs, one
//! round trip, per iteration.

use std::os::fd::RawFd;

use touchstone_harness::{BenchError, Context, Fallible};

use crate::family::{Built, Family, RunContext};
use crate::params::Point;
use crate::support::hot_potato::{self, Baton, HotPotato};
use crate::support::sys::{self, cstring, errno};

pub struct FcntlBaton {
    fd: RawFd,
    round: u8,
}

#[inline]
fn lock(fd: RawFd, record: u8, how: libc::c_short) -> Fallible {
    // SAFETY: flock is plain data.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = how;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = record as libc::off_t;
    fl.l_len = 1;
    let cmd = if how == libc::F_UNLCK as libc::c_short {
        libc::F_SETLK
    } else {
        libc::F_SETLKW
    };
    loop {
        // SAFETY: fcntl record lock on our descriptor.
        if unsafe { libc::fcntl(fd, cmd, &fl) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(BenchError(format!("fcntl lock record {record}: {e}")));
        }
    }
}

const W: libc::c_short = libc::F_WRLCK as libc::c_short;
const U: libc::c_short = libc::F_UNLCK as libc::c_short;

impl FcntlBaton {
    /// One exchange: record k set to `first`, record k+2 to `then`, and on
    /// to the next round.
    #[inline]
    fn step(&mut self, first: libc::c_short, then: libc::c_short) -> Fallible {
        let k = self.round;
        lock(self.fd, k, first)?;
        lock(self.fd, (k + 2) % 3, then)?;
        self.round = (k + 1) % 3;
        Ok(())
    }
}

impl Baton for FcntlBaton {
    fn open(&mut self, ctx: &Context) -> Fallible {
        let path = ctx.scratch.join(format!("lat_fcntl.{}", ctx.process));
        let c = cstring(&path)?;
        // SAFETY: a valid path; the file is unlinked as soon as it is open.
        self.fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
                0o600,
            )
        };
        unsafe { libc::unlink(c.as_ptr()) };
        if self.fd < 0 {
            return Err(errno(&format!("open {}", path.display())));
        }
        sys::write_all(self.fd, b"abc")?;
        // Round 0: this process holds records 0 and 1 (locks are not
        // inherited by the helper, which takes record 2 before it is ready).
        lock(self.fd, 0, W)?;
        lock(self.fd, 1, W)
    }

    fn helper_side(&mut self) -> Fallible {
        lock(self.fd, 2, W)
    }

    /// Timed: unlock record k, lock record k+2 (blocks until the helper
    /// unlocks it).
    #[inline]
    fn ping(&mut self) -> Fallible {
        self.step(U, W)
    }

    /// The helper's mirror of `ping`: lock record k, unlock record k+2.
    fn pong(&mut self) -> Fallible {
        self.step(W, U)
    }

    fn close(&mut self) {
        sys::close_and_clear(&mut self.fd);
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    HotPotato::case(FcntlBaton { fd: -1, round: 0 }, p)
}

pub const FAMILY: Family = hot_potato::family(
    "lat_fcntl",
    "fcntl record-lock round trip (two lock hand-offs) between two processes",
    build,
);
