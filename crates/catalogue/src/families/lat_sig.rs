//! lat_sig: what signals cost (lmbench's lat_sig). install: one sigaction
//! call; catch: a signal sent to oneself with kill and handled; prot: a
//! write to a read-only page, caught by a SIGSEGV handler that steps over
//! the faulting instruction.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use touchstone_harness::{Benchmark, Context, Fallible, Shape};

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::sys::{errno, map_anonymous};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    Install,
    Catch,
    Prot,
}

/// Signals handled, counted by the handlers (checked after each interval).
static CAUGHT: AtomicU64 = AtomicU64::new(0);
/// The read-only page the prot handler expects faults on.
static PROT_PAGE: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_usr1(_: libc::c_int) {
    CAUGHT.fetch_add(1, Ordering::Relaxed);
}

/// Length of the faulting store in `fault_once` (x86_64: `mov byte [rdi], 0`
/// is c6 07 00; aarch64: `strb wzr, [x0]` is one 4-byte instruction).
#[cfg(target_arch = "x86_64")]
const STORE_LEN: usize = 3;
#[cfg(target_arch = "aarch64")]
const STORE_LEN: usize = 4;

/// SIGSEGV handler: a fault on our page is counted and the store skipped;
/// anything else restores the default action so the fault kills the process
/// (returning re-executes the instruction, which then faults for real).
extern "C" fn on_segv(_: libc::c_int, info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
    // SAFETY: the kernel passes valid siginfo and ucontext to an SA_SIGINFO handler.
    unsafe {
        let addr = (*info).si_addr() as usize;
        let page = PROT_PAGE.load(Ordering::Relaxed);
        if page == 0 || addr != page {
            libc::signal(libc::SIGSEGV, libc::SIG_DFL);
            return;
        }
        let uc = uc as *mut libc::ucontext_t;
        #[cfg(target_arch = "x86_64")]
        {
            (*uc).uc_mcontext.gregs[libc::REG_RIP as usize] += STORE_LEN as i64;
        }
        #[cfg(target_arch = "aarch64")]
        {
            (*uc).uc_mcontext.pc += STORE_LEN as u64;
        }
    }
    CAUGHT.fetch_add(1, Ordering::Relaxed);
}

/// One store to `p` whose length the SIGSEGV handler knows.
#[inline(always)]
unsafe fn fault_once(p: *mut u8) {
    #[cfg(target_arch = "x86_64")]
    std::arch::asm!("mov byte ptr [rdi], 0", in("rdi") p, options(nostack));
    #[cfg(target_arch = "aarch64")]
    std::arch::asm!("strb wzr, [x0]", in("x0") p, options(nostack));
}

fn sigaction(sig: libc::c_int, handler: usize, flags: libc::c_int) -> Fallible {
    // SAFETY: a zeroed sigaction with a valid handler address and empty mask.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = handler;
        act.sa_flags = flags;
        libc::sigemptyset(&mut act.sa_mask);
        if libc::sigaction(sig, &act, std::ptr::null_mut()) != 0 {
            return Err(errno("sigaction"));
        }
    }
    Ok(())
}

pub struct LatSig {
    op: Op,
    act: libc::sigaction,
    page: *mut u8,
    pid: libc::pid_t,
    expected: u64,
}

// SAFETY: the raw page pointer is only used by the one process that maps it.
unsafe impl Send for LatSig {}

impl Benchmark for LatSig {
    fn setup(&mut self, _: &Context) -> Fallible {
        // SAFETY: plain libc calls on values owned here.
        unsafe {
            self.pid = libc::getpid();
            self.act = std::mem::zeroed();
            self.act.sa_sigaction = on_usr1 as *const () as usize;
            libc::sigemptyset(&mut self.act.sa_mask);
        }
        match self.op {
            Op::Install => {}
            Op::Catch => sigaction(libc::SIGUSR1, on_usr1 as *const () as usize, 0)?,
            Op::Prot => {
                // A read-only page: every store to it faults.
                self.page = map_anonymous(4096, libc::PROT_READ, false)?;
                PROT_PAGE.store(self.page as usize, Ordering::Relaxed);
                sigaction(
                    libc::SIGSEGV,
                    on_segv as *const () as usize,
                    libc::SA_SIGINFO | libc::SA_NODEFER,
                )?;
            }
        }
        Ok(())
    }

    fn prepare(&mut self, _: u64) -> Fallible {
        self.expected = CAUGHT.load(Ordering::Relaxed);
        Ok(())
    }

    /// Timed: `n` of the chosen operation.
    /// install: sigaction(SIGUSR1) replacing the handler with itself (the
    /// old action is fetched too, as a program saving it would).
    /// catch: kill(getpid(), SIGUSR1), which delivers before kill returns,
    /// plus the handler and sigreturn; the kill system call is included.
    /// prot: a store to a read-only page, the fault, SIGSEGV delivery, the
    /// handler stepping over the store, and sigreturn.
    /// The handlers count what they caught; `conclude` checks the count, so
    /// nothing here can be optimised away unnoticed.
    fn run(&mut self, n: u64) -> Fallible {
        // SAFETY (all arms): valid sigaction structs, our own pid, our page.
        match self.op {
            Op::Install => {
                let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
                for _ in 0..n {
                    if unsafe { libc::sigaction(libc::SIGUSR1, &self.act, &mut old) } != 0 {
                        return Err(std::io::Error::last_os_error().into());
                    }
                }
            }
            Op::Catch => {
                for _ in 0..n {
                    if unsafe { libc::kill(self.pid, libc::SIGUSR1) } != 0 {
                        return Err(std::io::Error::last_os_error().into());
                    }
                }
            }
            Op::Prot => {
                for _ in 0..n {
                    unsafe { fault_once(self.page) };
                }
            }
        }
        Ok(())
    }

    fn conclude(&mut self, n: u64) -> Fallible {
        if self.op != Op::Install {
            let got = CAUGHT.load(Ordering::Relaxed) - self.expected;
            if got != n {
                return Err(format!("expected {n} signals handled, the handler saw {got}").into());
            }
        }
        Ok(())
    }

    fn cleanup(&mut self) {
        // SAFETY: restoring default actions and unmapping our own page.
        unsafe {
            libc::signal(libc::SIGUSR1, libc::SIG_DFL);
            if !self.page.is_null() {
                PROT_PAGE.store(0, Ordering::Relaxed);
                libc::signal(libc::SIGSEGV, libc::SIG_DFL);
                libc::munmap(self.page as *mut libc::c_void, 4096);
                self.page = std::ptr::null_mut();
            }
        }
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let op = match p.text("op") {
        "install" => Op::Install,
        "catch" => Op::Catch,
        "prot" if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) => Op::Prot,
        "prot" => return Err("prot is implemented for x86_64 and aarch64 only".into()),
        other => return Err(format!("unknown op {other}")),
    };
    Ok(Built::new(
        LatSig {
            op,
            // SAFETY: an all-zero sigaction is a valid value; setup fills it.
            act: unsafe { std::mem::zeroed() },
            page: std::ptr::null_mut(),
            pid: 0,
            expected: 0,
        },
        Shape::latency(1.0),
    ))
}

pub const FAMILY: Family = Family {
    params: &[Param::choice("op", &["install", "catch", "prot"])
        .positional()
        .help("install: sigaction; catch: kill self + handle; prot: write fault + SIGSEGV handler")],
    ..Family::new(
        "lat_sig",
        "proc",
        "signal handler install (sigaction), catch (kill to self + handler), protection fault caught by a handler",
        build,
    )
};
