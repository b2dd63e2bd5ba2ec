//! lat_sem: latency of a round trip through a pair of System V semaphores
//! (lmbench's lat_sem): the benchmark process posts semaphore 0 and waits on
//! semaphore 1; its helper waits on 0 and posts 1. The set is created in
//! setup and removed (IPC_RMID) in cleanup. System V sets outlive their
//! processes, and children stopped on Ctrl-C never reach their cleanup, so
//! the set is recorded in the scratch directory (`scratch::sysv`), which
//! removes it with the directory, or on the next run after a SIGKILL. System V
//! semaphores are kept rather than a process-shared POSIX semaphore (which
//! would die with its processes) because semop(2) is what lmbench's
//! lat_sem measures; a POSIX semaphore is a futex, which lat_futex covers.

use std::path::PathBuf;

use touchstone_harness::scratch::sysv;
use touchstone_harness::{BenchError, Context, Fallible};

use crate::family::{Built, Family, RunContext};
use crate::params::Point;
use crate::support::hot_potato::{self, Baton, HotPotato};
use crate::support::sys::errno;

pub struct SemBaton {
    id: libc::c_int,
    record: Option<PathBuf>,
}

#[inline]
fn semop1(id: libc::c_int, num: u16, op: i16) -> Fallible {
    let mut b = libc::sembuf {
        sem_num: num,
        sem_op: op,
        sem_flg: 0,
    };
    loop {
        // SAFETY: one sembuf on a semaphore set we created.
        if unsafe { libc::semop(id, &mut b, 1) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(BenchError(format!("semop: {e}")));
        }
    }
}

impl Baton for SemBaton {
    fn open(&mut self, ctx: &Context) -> Fallible {
        // SAFETY: a private set of two semaphores, both starting at 0.
        self.id = unsafe { libc::semget(libc::IPC_PRIVATE, 2, libc::IPC_CREAT | 0o600) };
        if self.id < 0 {
            return Err(errno("semget"));
        }
        let name = format!("lat_sem.{}", ctx.process);
        match sysv::record(&ctx.scratch, &name, sysv::Kind::Semaphores, self.id) {
            Ok(path) => self.record = Some(path),
            Err(e) => {
                self.close();
                return Err(
                    format!("record the semaphore set in the scratch directory: {e}").into(),
                );
            }
        }
        Ok(())
    }

    /// Timed: post semaphore 0, wait on semaphore 1.
    #[inline]
    fn ping(&mut self) -> Fallible {
        semop1(self.id, 0, 1)?;
        semop1(self.id, 1, -1)
    }

    fn pong(&mut self) -> Fallible {
        semop1(self.id, 0, -1)?;
        semop1(self.id, 1, 1)
    }

    fn close(&mut self) {
        if self.id >= 0 {
            // SAFETY: removing the set we created.
            unsafe { libc::semctl(self.id, 0, libc::IPC_RMID) };
            self.id = -1;
        }
        if let Some(record) = self.record.take() {
            sysv::forget(&record);
        }
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    HotPotato::case(
        SemBaton {
            id: -1,
            record: None,
        },
        p,
    )
}

pub const FAMILY: Family = hot_potato::family(
    "lat_sem",
    "System V semaphore round trip (post/wait pair) between two processes",
    build,
);
