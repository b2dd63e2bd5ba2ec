//! lat_futex: latency of a round trip through a futex word in memory shared
//! by two processes (modern; lmbench has none). The word says whose turn it
//! is; each side sets it to the other's turn, wakes the other (FUTEX_WAKE)
//! and sleeps (FUTEX_WAIT) until it is its turn again. Shared, not private,
//! futexes: the word lives in a MAP_SHARED anonymous mapping.

use std::sync::atomic::{AtomicU32, Ordering};

use touchstone_harness::{BenchError, Context, Fallible};

use crate::family::{Built, Family, RunContext};
use crate::params::Point;
use crate::support::hot_potato::{self, Baton, HotPotato};
use crate::support::sys::map_anonymous;

const PARENT: u32 = 0;
const HELPER: u32 = 1;

pub struct FutexBaton {
    word: *mut AtomicU32,
}

// SAFETY: the pointer is to a mapping each process owns after the fork.
unsafe impl Send for FutexBaton {}

impl FutexBaton {
    fn word(&self) -> &AtomicU32 {
        // SAFETY: set by open to a live shared mapping.
        unsafe { &*self.word }
    }

    /// Give the turn to `to`, wake the other side, wait for the turn back.
    #[inline]
    fn hand_over(&self, to: u32, mine: u32) -> Fallible {
        let w = self.word();
        w.store(to, Ordering::Release);
        // SAFETY: futex calls on a valid, aligned u32 in shared memory.
        unsafe { libc::syscall(libc::SYS_futex, self.word, libc::FUTEX_WAKE, 1) };
        while w.load(Ordering::Acquire) != mine {
            let r = unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.word,
                    libc::FUTEX_WAIT,
                    to,
                    std::ptr::null::<libc::timespec>(),
                )
            };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::EINTR) => {}
                    _ => return Err(BenchError(format!("futex wait: {e}"))),
                }
            }
        }
        Ok(())
    }
}

impl Baton for FutexBaton {
    fn open(&mut self, _: &Context) -> Fallible {
        // Shared: the helper forked after this sees the same word.
        self.word =
            map_anonymous(4096, libc::PROT_READ | libc::PROT_WRITE, true)? as *mut AtomicU32;
        self.word().store(PARENT, Ordering::Relaxed);
        Ok(())
    }

    /// Timed: store, FUTEX_WAKE, and FUTEX_WAIT until the helper hands the
    /// turn back (a wait that finds the turn already back returns at once).
    #[inline]
    fn ping(&mut self) -> Fallible {
        self.hand_over(HELPER, PARENT)
    }

    fn pong(&mut self) -> Fallible {
        // Wait for our turn first (the parent starts), then hand back.
        let w = self.word();
        while w.load(Ordering::Acquire) != HELPER {
            // SAFETY: as in hand_over.
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.word,
                    libc::FUTEX_WAIT,
                    PARENT,
                    std::ptr::null::<libc::timespec>(),
                )
            };
        }
        w.store(PARENT, Ordering::Release);
        // SAFETY: as in hand_over.
        unsafe { libc::syscall(libc::SYS_futex, self.word, libc::FUTEX_WAKE, 1) };
        Ok(())
    }

    fn close(&mut self) {
        if !self.word.is_null() {
            // SAFETY: unmapping what open mapped.
            unsafe { libc::munmap(self.word as *mut libc::c_void, 4096) };
            self.word = std::ptr::null_mut();
        }
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    HotPotato::case(
        FutexBaton {
            word: std::ptr::null_mut(),
        },
        p,
    )
}

pub const FAMILY: Family = hot_potato::family(
    "lat_futex",
    "futex round trip (wake/wait on a shared word) between two processes",
    build,
);
