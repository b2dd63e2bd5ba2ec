//! lat_thread: thread primitives, the future work lmbench3 names. create:
//! pthread_create of a thread that returns at once, and pthread_join;
//! mutex: an uncontended pthread mutex lock+unlock; mutex_pingpong: two
//! threads take strict turns guarded by one mutex, each polling for its
//! turn (lock, check, unlock, sched_yield); cond_pingpong: the same turns
//! handed over with a condition variable (the waiter sleeps). The ping-pong
//! figures are per round trip (two hand-overs).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use touchstone_harness::{Benchmark, Context, Fallible, Shape};

use crate::family::{Built, Family, RunContext};
use crate::params::{choice_enum, Param, Point};

choice_enum! {
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Op {
        Create = "create", Mutex = "mutex", MutexPingpong = "mutex_pingpong",
        CondPingpong = "cond_pingpong",
    }
}

/// What the two threads share. `turn` and `stop` change only under `mutex`
/// (atomics just keep Rust's aliasing rules out of the way).
struct Shared {
    mutex: libc::pthread_mutex_t,
    cond: libc::pthread_cond_t,
    /// 0: the measuring thread's turn; 1: the partner's.
    turn: AtomicU64,
    stop: AtomicBool,
    cond_mode: bool,
}

fn check(r: libc::c_int, what: &str) -> Fallible {
    if r == 0 {
        Ok(())
    } else {
        Err(format!("{what}: {}", std::io::Error::from_raw_os_error(r)).into())
    }
}

extern "C" fn returns_at_once(_: *mut libc::c_void) -> *mut libc::c_void {
    std::ptr::null_mut()
}

/// Wait (under the lock) until `turn == me` or stop; returns false on stop.
/// SAFETY: `s` is a live, initialised Shared.
unsafe fn wait_turn(s: *mut Shared, me: u64) -> bool {
    let s = &mut *s;
    libc::pthread_mutex_lock(&mut s.mutex);
    loop {
        if s.stop.load(Ordering::Relaxed) {
            libc::pthread_mutex_unlock(&mut s.mutex);
            return false;
        }
        if s.turn.load(Ordering::Relaxed) == me {
            return true; // still holding the lock
        }
        if s.cond_mode {
            libc::pthread_cond_wait(&mut s.cond, &mut s.mutex);
        } else {
            libc::pthread_mutex_unlock(&mut s.mutex);
            libc::sched_yield();
            libc::pthread_mutex_lock(&mut s.mutex);
        }
    }
}

/// Hand the turn to `to` and release the lock (taken by `wait_turn`).
/// SAFETY: `s` is live and its mutex is held by the caller.
unsafe fn give_turn(s: *mut Shared, to: u64) {
    let s = &mut *s;
    s.turn.store(to, Ordering::Relaxed);
    if s.cond_mode {
        libc::pthread_cond_signal(&mut s.cond);
    }
    libc::pthread_mutex_unlock(&mut s.mutex);
}

extern "C" fn partner(arg: *mut libc::c_void) -> *mut libc::c_void {
    let s = arg as *mut Shared;
    // SAFETY: the measuring thread keeps `Shared` alive until it has joined us.
    unsafe {
        while wait_turn(s, 1) {
            give_turn(s, 0);
        }
    }
    std::ptr::null_mut()
}

pub struct LatThread {
    op: Op,
    shared: Box<Shared>,
    partner: Option<libc::pthread_t>,
}

// SAFETY: the pthread objects are used only by the process that sets them up.
unsafe impl Send for LatThread {}

impl Benchmark for LatThread {
    fn setup(&mut self, _: &Context) -> Fallible {
        if matches!(self.op, Op::MutexPingpong | Op::CondPingpong) {
            let mut t: libc::pthread_t = 0;
            let arg = &mut *self.shared as *mut Shared as *mut libc::c_void;
            // SAFETY: `shared` is boxed (a stable address) and outlives the thread.
            check(
                unsafe { libc::pthread_create(&mut t, std::ptr::null(), partner, arg) },
                "pthread_create",
            )?;
            self.partner = Some(t);
        }
        Ok(())
    }

    /// Timed: `n` of the chosen operation.
    /// create: pthread_create + pthread_join of a thread that returns at
    /// once (glibc reuses the cached stack of the previous one).
    /// mutex: pthread_mutex_lock + unlock, never contended.
    /// mutex_pingpong / cond_pingpong: one round trip — hand the turn to the
    /// partner and wait until it hands it back. Every call's result is
    /// checked or its effect (the turn) is, so nothing can be removed.
    fn run(&mut self, n: u64) -> Fallible {
        let s = &mut *self.shared as *mut Shared;
        // SAFETY (all arms): `s` is live; threads and mutex are ours.
        match self.op {
            Op::Create => {
                for _ in 0..n {
                    let mut t: libc::pthread_t = 0;
                    check(
                        unsafe {
                            libc::pthread_create(
                                &mut t,
                                std::ptr::null(),
                                returns_at_once,
                                std::ptr::null_mut(),
                            )
                        },
                        "pthread_create",
                    )?;
                    check(
                        unsafe { libc::pthread_join(t, std::ptr::null_mut()) },
                        "pthread_join",
                    )?;
                }
            }
            Op::Mutex => {
                for _ in 0..n {
                    unsafe {
                        libc::pthread_mutex_lock(&mut (*s).mutex);
                        libc::pthread_mutex_unlock(&mut (*s).mutex);
                    }
                }
            }
            Op::MutexPingpong | Op::CondPingpong => {
                for _ in 0..n {
                    unsafe {
                        if !wait_turn(s, 0) {
                            return Err("the partner thread stopped".into());
                        }
                        give_turn(s, 1);
                    }
                }
                // Wait for the last hand-back so the interval holds n round trips.
                unsafe {
                    if !wait_turn(s, 0) {
                        return Err("the partner thread stopped".into());
                    }
                    libc::pthread_mutex_unlock(&mut (*s).mutex);
                }
            }
        }
        Ok(())
    }

    fn cleanup(&mut self) {
        if let Some(t) = self.partner.take() {
            let s = &mut *self.shared;
            // SAFETY: stop the partner under the lock, wake it, and join it.
            unsafe {
                libc::pthread_mutex_lock(&mut s.mutex);
                s.stop.store(true, Ordering::Relaxed);
                libc::pthread_cond_broadcast(&mut s.cond);
                libc::pthread_mutex_unlock(&mut s.mutex);
                libc::pthread_join(t, std::ptr::null_mut());
            }
        }
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let op = Op::of(p, "op")?;
    let shared = Box::new(Shared {
        mutex: libc::PTHREAD_MUTEX_INITIALIZER,
        cond: libc::PTHREAD_COND_INITIALIZER,
        turn: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        cond_mode: op == Op::CondPingpong,
    });
    // Only the uncontended mutex runs on one thread; the others switch
    // between their own threads by design.
    let shape = match op {
        Op::Mutex => Shape::latency(1.0),
        _ => Shape::latency(1.0).with_switches_by_design(),
    };
    Ok(Built::new(
        LatThread {
            op,
            shared,
            partner: None,
        },
        shape,
    ))
}

pub const FAMILY: Family = Family {
    params: &[Param::choice("op", Op::NAMES)
        .positional()
        .help("create: pthread_create+join; mutex: lock+unlock; mutex_pingpong / cond_pingpong: one round trip between two threads")],
    ..Family::new(
        "lat_thread",
        "proc",
        "threads: create+join, uncontended mutex, mutex and condition-variable ping-pong (round trip)",
        build,
    )
};
