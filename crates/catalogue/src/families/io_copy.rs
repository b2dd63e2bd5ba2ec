//! io_copy: copying a file with a block size, as dd and lmbench's lmdd do
//! (seed 002 measured disks with dd at 16 KB and 128 KB blocks): read(2)
//! a block of the source, write(2) it to the destination, to the end. One
//! iteration copies the whole source (a fixed volume, `size`), after
//! truncating the destination as dd's O_TRUNC does; MB/s counts the bytes
//! copied once. Both files are made in setup in the scratch directory or
//! `--dir` and unlinked at once; the source is laid out as `io` lays out
//! its file (blocks of `bs`, written back, its pages then dropped).
//! `direct` opens both with O_DIRECT (dd's iflag=direct oflag=direct). A
//! block device is refused: io_copy copies files.

use std::os::fd::RawFd;
use std::path::PathBuf;

use touchstone_harness::{BenchError, Context, Fallible, Shape};

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::io::{self, create_unlinked, SyncMode};
use crate::support::memory::{Buf, Pages};
use crate::support::sys::{self, errno};

pub struct IoCopy {
    bs: usize,
    size: u64,
    mode: SyncMode,
    dir: Option<PathBuf>,
    drop_caches: bool,
    /// The directory written in, set in setup.
    at: PathBuf,
    src: RawFd,
    dst: RawFd,
    buf: Option<Buf>,
}

impl touchstone_harness::Benchmark for IoCopy {
    fn setup(&mut self, ctx: &Context) -> Fallible {
        self.at = self.dir.clone().unwrap_or_else(|| ctx.scratch.clone());
        self.buf = Some(Buf::new(self.bs, Pages::Default)?);
        // dd's iflag=direct oflag=direct.
        let flags = self.mode.open_flags();
        self.src = io::test_file(&self.at, "io_copy-src", self.size, flags, self.bs as u64)?;
        self.dst = io::reopen(create_unlinked(&self.at, "io_copy-dst", 0)?, flags)?;
        Ok(())
    }

    fn prepare(&mut self, _n: u64) -> Fallible {
        io::prepare_interval(self.drop_caches)
    }

    /// Timed: `n` copies, each ftruncate(2) of the destination to 0 (dd's
    /// O_TRUNC), then pread(2) of `bs` from the source and pwrite(2) of
    /// what was read to the destination, block after block to the end.
    fn run(&mut self, n: u64) -> Fallible {
        let p = self.buf.as_ref().expect("setup made the buffer").ptr() as *mut libc::c_void;
        for _ in 0..n {
            // SAFETY: our descriptor.
            if unsafe { libc::ftruncate(self.dst, 0) } != 0 {
                return Err(errno("ftruncate"));
            }
            let mut off = 0u64;
            while off < self.size {
                let want = (self.size - off).min(self.bs as u64) as usize;
                // SAFETY: reading into our buffer of bs bytes.
                let r = unsafe { libc::pread(self.src, p, want, off as libc::off_t) };
                if r <= 0 {
                    return Err(if r == 0 {
                        BenchError("read: unexpected end of the source".into())
                    } else {
                        errno("read")
                    });
                }
                // SAFETY: writing what was just read.
                let w = unsafe { libc::pwrite(self.dst, p, r as usize, off as libc::off_t) };
                if w != r {
                    return Err(io::write_error(&self.at, "writing the copy"));
                }
                off += r as u64;
            }
        }
        Ok(())
    }

    fn cleanup(&mut self) {
        for fd in [&mut self.src, &mut self.dst] {
            if *fd >= 0 {
                sys::close(*fd);
                *fd = -1;
            }
        }
        self.buf = None;
    }
}

fn build(p: &Point, ctx: &RunContext) -> Result<Built, String> {
    let (bs, size) = io::block_and_size(p)?;
    let mode = SyncMode::parse(p.text("mode"));
    let target = io::file_target(ctx, "io_copy", "copies files, not devices")?;
    let dir = target.dir.clone();
    let probe = dir.clone().unwrap_or_else(io::scratch_parent);
    if mode == SyncMode::Direct {
        let align = io::direct_alignment(&probe) as u64;
        if !bs.is_multiple_of(align) || !size.is_multiple_of(align) {
            return Err(format!(
                "mode:direct needs bs and size that are multiples of the logical block ({align} bytes here)"
            ));
        }
    }
    io::probe_dir(&probe, mode.open_flags())?;
    if let Some(free) = io::free_bytes(&probe) {
        if free < 2 * size {
            return Err(format!(
                "two files of size:{} do not fit in {} ({}): {} MB free",
                p.text("size"),
                probe.display(),
                io::describe_place(&probe),
                free / 1_000_000
            ));
        }
    }
    Ok(Built::new(
        IoCopy {
            bs: bs as usize,
            size,
            mode,
            dir,
            drop_caches: target.drop_caches,
            at: PathBuf::new(),
            src: -1,
            dst: -1,
            buf: None,
        },
        Shape::bandwidth(size as f64),
    ))
}

pub const FAMILY: Family = Family {
    params: &[
        io::block_param(
            "block size of each read and write (002: 16k, 128k)",
            64 << 20,
            &["16k", "128k"],
            &[],
        ),
        Param::choice("mode", &["buffered", "direct"])
            .measured(&["buffered"])
            .help("buffered, or direct (O_DIRECT on both files, dd's iflag=direct oflag=direct)"),
        io::size_param("bytes copied per pass", &["64m"], &["16m"]),
    ],
    default_suite: false,
    options: io::TARGET_OPTIONS,
    run_note: Some(io::target_note),
    ..Family::new(
        "io_copy",
        "file_io",
        "copy a file with a block size, as dd and lmdd (MB/s)",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_sane, measure_spec, refusal, tiny_plan};

    #[test]
    fn copies_and_refuses_bad_sizes() {
        let m = measure_spec(
            "io_copy/bs:16k/size:1m",
            &tiny_plan(1),
            &RunContext::new(true),
        )
        .unwrap()
        .remove(0);
        assert_sane(&m);
        let e = refusal("io_copy/bs:1m/size:64k");
        assert!(e.contains("smaller than one block"), "{e}");
    }
}
