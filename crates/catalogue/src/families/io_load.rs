//! io_load: parallel readers or writers on the load engine — N processes
//! reading or writing blocks, each on its own file (`files:own`) or all on
//! one shared file (`files:shared`), MB/s and per-block latency (the
//! engine's HDR histograms: median, p99, …) against N, and against CPUs.
//!
//! Why a workload beside `io`: `io` is the fixed-volume micro-benchmark
//! (004's repeatable disc test, one fixed sequence per pass, `--parallel`
//! for N identical copies); the question "how does the storage scale with
//! N readers or writers, and what happens to latency" is a load curve,
//! which the engine answers with all N running throughout a window, the
//! knee and the USL fit. One operation is one block of `bs` bytes
//! (`bytes_per_op`), so reports show MB/s.
//!
//! Each client walks the same fixed seeded sequence of `support::io`
//! (`seq` or `rand`, every block once, then again), starting at its own
//! share of the sequence so that readers of a shared file do not move in
//! step. The files are made in `prepare` in the trial's scratch directory
//! or `--dir` (unlinked at once, laid out in blocks of `bs`, written back
//! and dropped from the page cache, as `io` does), opened with
//! the mode's flags and inherited by the clients; they are kept for the
//! sweep's later trials (more are made when the load grows) and closed
//! when the workload is dropped. Timed (by the engine, per operation): one
//! pread(2) or pwrite(2) of `bs` bytes.

use std::os::fd::RawFd;
use std::path::PathBuf;

use touchstone_harness::workload::{Client, ClientContext, TrialContext, Workload};
use touchstone_harness::{BenchError, Fallible};

use crate::family::{one_and_per_cpu_when_quick, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::io::{self, offsets, Pattern, SyncMode};
use crate::support::memory::{Buf, Pages};
use crate::support::sys::{self, errno};

pub const MAX_LOAD: u32 = 256;

pub struct IoLoad {
    write: bool,
    mode: SyncMode,
    bs: usize,
    size: u64,
    shared: bool,
    quick: bool,
    dir: Option<PathBuf>,
    offs: Vec<u64>,
    /// The files made so far (one, or one per client).
    fds: Vec<RawFd>,
    /// The directory the files are in (for messages).
    at: PathBuf,
}

impl Drop for IoLoad {
    fn drop(&mut self) {
        for &fd in &self.fds {
            sys::close(fd);
        }
    }
}

impl Workload for IoLoad {
    fn op_types(&self) -> &[&str] {
        if self.write {
            &["write"]
        } else {
            &["read"]
        }
    }
    fn max_load(&self) -> Option<u32> {
        Some(MAX_LOAD)
    }
    /// Quick: one client and one per usable CPU.
    fn default_loads(&self, usable: usize) -> Vec<u32> {
        one_and_per_cpu_when_quick(self.quick, usable, MAX_LOAD)
    }
    fn bytes_per_op(&self) -> Option<u64> {
        Some(self.bs as u64)
    }
    /// The files of `load` clients must fit where they go.
    fn check_load(&self, load: u32) -> Result<(), String> {
        let dir = self.dir.clone().unwrap_or_else(io::scratch_parent);
        let files = if self.shared { 1 } else { load as u64 };
        match io::free_bytes(&dir) {
            Some(free) if free < files * self.size => Err(format!(
                "{files} file(s) of {} bytes do not fit in {} ({}): {} MB free",
                self.size,
                dir.display(),
                io::describe_place(&dir),
                free / 1_000_000
            )),
            _ => Ok(()),
        }
    }
    fn prepare(&mut self, ctx: &TrialContext) -> Fallible {
        self.at = self.dir.clone().unwrap_or_else(|| ctx.scratch.clone());
        let want = if self.shared { 1 } else { ctx.load as usize };
        while self.fds.len() < want {
            let fd = io::test_file(
                &self.at,
                "io_load",
                self.size,
                self.mode.open_flags(),
                self.bs as u64,
            )?;
            self.fds.push(fd);
        }
        Ok(())
    }
    fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        let fd = if self.shared {
            self.fds[0]
        } else {
            *self
                .fds
                .get(ctx.client as usize)
                .ok_or_else(|| BenchError("io_load: no file for this client".into()))?
        };
        let mut buf = Buf::new(self.bs, Pages::Default)?;
        buf.words().fill(0x5a5a_5a5a_5a5a_5a5a);
        let start = if self.shared {
            self.offs.len() * ctx.client as usize / ctx.clients.max(1) as usize
        } else {
            0
        };
        Ok(Box::new(Mover {
            write: self.write,
            fd,
            bs: self.bs,
            offs: &self.offs,
            next: start,
            buf,
            at: &self.at,
        }))
    }
}

/// One reading or writing process.
struct Mover<'a> {
    write: bool,
    fd: RawFd,
    bs: usize,
    offs: &'a [u64],
    next: usize,
    buf: Buf,
    at: &'a std::path::Path,
}

impl Client for Mover<'_> {
    /// Timed: one pread(2) or pwrite(2) of `bs` bytes at the next offset
    /// of the fixed sequence (wrapping around).
    #[inline]
    fn op(&mut self) -> Fallible<usize> {
        let off = self.offs[self.next];
        self.next += 1;
        if self.next == self.offs.len() {
            self.next = 0;
        }
        let p = self.buf.ptr() as *mut libc::c_void;
        // SAFETY: our buffer of bs bytes.
        let r = unsafe {
            if self.write {
                libc::pwrite(self.fd, p, self.bs, off as libc::off_t)
            } else {
                libc::pread(self.fd, p, self.bs, off as libc::off_t)
            }
        };
        if r != self.bs as isize {
            return Err(if r < 0 && self.write {
                io::write_error(self.at, "writing a block")
            } else if r < 0 {
                errno("pread")
            } else {
                BenchError(format!("short transfer: {r} of {} bytes", self.bs))
            });
        }
        Ok(0)
    }
}

fn build(p: &Point, ctx: &RunContext) -> Result<Box<dyn Workload>, String> {
    let (bs, size) = io::block_and_size(p)?;
    let sync = SyncMode::parse(p.text("mode"));
    let target = io::file_target(ctx, "io_load", "works on files")?;
    let probe = target.dir.clone().unwrap_or_else(io::scratch_parent);
    if sync == SyncMode::Direct {
        let align = io::direct_alignment(&probe) as u64;
        if !bs.is_multiple_of(align) {
            return Err(format!(
                "mode:direct needs blocks that are multiples of the logical block ({align} bytes here); bs:{} is not",
                p.text("bs")
            ));
        }
    }
    io::probe_dir(&probe, sync.open_flags() & libc::O_DIRECT)?;
    let pattern = if p.text("pattern") == "seq" {
        Pattern::Seq
    } else {
        Pattern::Rand
    };
    Ok(Box::new(IoLoad {
        write: p.text("op") == "write",
        mode: sync,
        bs: bs as usize,
        size,
        shared: p.text("files") == "shared",
        quick: ctx.quick,
        dir: target.dir.clone(),
        offs: offsets(pattern, size, bs),
        fds: Vec::new(),
        at: PathBuf::new(),
    }))
}

pub const FAMILY: Family = Family {
    params: &[
        Param::choice("op", &["read", "write"])
            .positional()
            .quick(&["read"])
            .help("read or write"),
        Param::choice("pattern", &["seq", "rand"])
            .measured(&["rand"])
            .help("seq, or rand (every block once in one fixed shuffled order)"),
        io::block_param("block size of each read or write", 4 << 20, &["8k"], &[]),
        Param::choice("mode", &["buffered", "dsync", "direct"])
            .measured(&["buffered"])
            .help("buffered, dsync (O_DSYNC) or direct (O_DIRECT)"),
        Param::choice("files", &["own", "shared"])
            .quick(&["own"])
            .help("own: a file per client; shared: one file for all"),
        io::size_param("bytes of each file", &["4m"], &[]),
    ],
    // Where the files go; a device is refused; no `--drop-caches` (a
    // workload's trials are not intervals).
    options: &[io::DIR, io::DEVICE, io::DESTROY_DATA_ON],
    run_note: Some(io::target_note),
    ..Family::workload(
        "io_load",
        "workload",
        "parallel readers or writers of files, own or shared: MB/s and block latency against N",
        "block",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::short_trial;
    use touchstone_harness::workload::{run_trial, TrialOutcome};

    #[test]
    fn two_writers_on_a_shared_file_move_blocks() {
        let sel = crate::select(
            &["io_load/write/files:shared/size:256k".into()],
            &RunContext::new(true),
            1,
        )
        .unwrap();
        let c = &sel.cases[0];
        let mut w = c
            .family
            .make_workload(&c.point, &RunContext::new(true))
            .unwrap();
        let cpus = touchstone_harness::workload::cpu::usable_cpus().unwrap();
        let out: TrialOutcome = run_trial(&mut *w, 2, &cpus, &short_trial(), 0).unwrap();
        assert!(out.ops > 0);
        assert_eq!(out.histograms[0].len(), out.ops, "every block timed");
        assert!(out.pids.iter().all(|&p| crate::testing::reaped(p)));
    }
}
