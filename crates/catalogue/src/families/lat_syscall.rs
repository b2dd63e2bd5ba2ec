//! lat_syscall: the cost of entering the kernel (lmbench's lat_syscall).
//! null: getppid through syscall(2), which no libc caches; read: one byte
//! from /dev/zero; write: one byte to /dev/null; stat/fstat of a file in the
//! scratch directory; open: open+close of that file.

use std::ffi::CString;

use touchstone_harness::{Benchmark, Context, Fallible, Shape};

use crate::family::{Built, Family, RunContext};
use crate::params::{choice_enum, Param, Point};
use crate::support::sys::{cstring, errno};

choice_enum! {
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Op {
        Null = "null", Read = "read", Write = "write", Stat = "stat", Fstat = "fstat",
        Open = "open",
    }
}

pub struct LatSyscall {
    op: Op,
    fd: libc::c_int,
    path: CString,
}

impl Benchmark for LatSyscall {
    fn setup(&mut self, ctx: &Context) -> Fallible {
        let file = ctx.scratch.join(format!("lat_syscall.{}", ctx.process));
        let target = match self.op {
            Op::Read => "/dev/zero".into(),
            Op::Write => "/dev/null".into(),
            Op::Stat | Op::Fstat | Op::Open => {
                std::fs::write(&file, b"touchstone")?;
                file
            }
            Op::Null => return Ok(()),
        };
        self.path = cstring(&target)?;
        let flags = if self.op == Op::Write {
            libc::O_WRONLY
        } else {
            libc::O_RDONLY
        };
        // SAFETY: a valid NUL-terminated path.
        self.fd = unsafe { libc::open(self.path.as_ptr(), flags | libc::O_CLOEXEC) };
        if self.fd < 0 {
            return Err(errno(&format!("open {:?}", self.path)));
        }
        Ok(())
    }

    /// Timed: `n` system calls of the chosen kind and nothing else; each
    /// result is checked (a failing call would measure the error path).
    fn run(&mut self, n: u64) -> Fallible {
        let mut byte = 0u8;
        let buf = &mut byte as *mut u8 as *mut libc::c_void;
        // SAFETY (all arms): valid descriptors, buffers and paths from setup.
        match self.op {
            Op::Null => {
                for _ in 0..n {
                    unsafe { libc::syscall(libc::SYS_getppid) };
                }
            }
            Op::Read => {
                for _ in 0..n {
                    if unsafe { libc::read(self.fd, buf, 1) } != 1 {
                        return Err(std::io::Error::last_os_error().into());
                    }
                }
            }
            Op::Write => {
                for _ in 0..n {
                    if unsafe { libc::write(self.fd, buf, 1) } != 1 {
                        return Err(std::io::Error::last_os_error().into());
                    }
                }
            }
            Op::Stat => {
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                for _ in 0..n {
                    if unsafe { libc::stat(self.path.as_ptr(), &mut st) } != 0 {
                        return Err(std::io::Error::last_os_error().into());
                    }
                }
            }
            Op::Fstat => {
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                for _ in 0..n {
                    if unsafe { libc::fstat(self.fd, &mut st) } != 0 {
                        return Err(std::io::Error::last_os_error().into());
                    }
                }
            }
            Op::Open => {
                for _ in 0..n {
                    let fd = unsafe { libc::open(self.path.as_ptr(), libc::O_RDONLY) };
                    if fd < 0 {
                        return Err(std::io::Error::last_os_error().into());
                    }
                    unsafe { libc::close(fd) };
                }
            }
        }
        Ok(())
    }

    fn cleanup(&mut self) {
        if self.fd >= 0 {
            // SAFETY: closing the descriptor setup opened.
            unsafe { libc::close(self.fd) };
            self.fd = -1;
        }
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let op = Op::of(p, "op")?;
    Ok(Built::new(
        LatSyscall {
            op,
            fd: -1,
            path: CString::default(),
        },
        Shape::latency(1.0),
    ))
}

pub const FAMILY: Family = Family {
    params: &[Param::choice("op", Op::NAMES)
        .positional()
        .help("which system call")],
    ..Family::new(
        "lat_syscall",
        "proc",
        "system call latency: null (getppid), 1-byte read/write, stat, fstat, open+close",
        build,
    )
};
