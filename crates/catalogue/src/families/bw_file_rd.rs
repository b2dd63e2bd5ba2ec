//! bw_file_rd: bandwidth of re-reading a file that is in the page cache
//! with read(2) in 64 KB chunks (lmbench's bw_file_rd). `io_only` moves
//! the data into the buffer and nothing else; `sum` also adds up every
//! 64-bit word read (what lmbench's io_only does: its figure is read+sum).
//! The file is made in the scratch directory in setup and unlinked at once.

use std::os::fd::RawFd;

use touchstone_harness::{BenchError, Context, Fallible, Shape};

use super::file_common::{cached_file, sum_words};
use crate::family::{always_supported, Built, Family, Mode, Parallel};
use crate::params::{Kind, Param, Point};
use crate::sys;

const CHUNK: usize = 64 << 10;

pub struct BwFileRd {
    size: usize,
    sum: bool,
    fd: RawFd,
    buf: Vec<u64>,
}

impl touchstone_harness::Benchmark for BwFileRd {
    fn setup(&mut self, ctx: &Context) -> Fallible {
        self.fd = cached_file(ctx, "bw_file_rd", self.size)?;
        self.buf = vec![0u64; CHUNK / 8];
        Ok(())
    }

    /// Timed: `n` passes over the file, each pread(2) of 64 KB chunks from
    /// offset 0 to the end; with `sum`, each chunk's words are added and the
    /// total goes to black_box (so the reads of the buffer stay).
    fn run(&mut self, n: u64) -> Fallible {
        let mut total = 0u64;
        let p = self.buf.as_mut_ptr() as *mut u8;
        for _ in 0..n {
            let mut off = 0usize;
            while off < self.size {
                let want = (self.size - off).min(CHUNK);
                // SAFETY: reading into our 64 KB buffer.
                let r = unsafe {
                    libc::pread(self.fd, p as *mut libc::c_void, want, off as libc::off_t)
                };
                if r <= 0 {
                    return Err(BenchError(format!(
                        "read: {}",
                        if r == 0 {
                            "unexpected end of file".to_string()
                        } else {
                            std::io::Error::last_os_error().to_string()
                        }
                    )));
                }
                if self.sum {
                    total = total.wrapping_add(sum_words(p, r as usize & !7));
                }
                off += r as usize;
            }
        }
        std::hint::black_box(total);
        Ok(())
    }

    fn cleanup(&mut self) {
        sys::close(self.fd);
        self.fd = -1;
    }
}

fn build(p: &Point, _: Mode) -> Result<Built, String> {
    let size = p.num("size");
    Ok(Built::new(
        BwFileRd {
            size: size as usize,
            sum: p.text("mode") == "sum",
            fd: -1,
            buf: Vec::new(),
        },
        Shape::bandwidth(size as f64),
    ))
}

/// The file size parameter shared with bw_mmap_rd.
pub const FILE_SIZE: Param = Param {
    name: "size",
    help: "file size",
    kind: Kind::Size {
        min: 64 << 10,
        max: 1 << 30,
    },
    default: &["1m", "8m", "64m"],
    quick: &["8m"],
    positional: false,
};

pub const FAMILY: Family = Family {
    name: "bw_file_rd",
    group: "comm_bw",
    summary: "re-reading a cached file with read(): I/O only, or I/O plus summing the data",
    params: &[
        Param {
            name: "mode",
            help: "io_only: read only; sum: read and add up every word",
            kind: Kind::Choice(&["io_only", "sum"]),
            default: &["io_only", "sum"],
            quick: &[],
            positional: true,
        },
        FILE_SIZE,
    ],
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
    fn measures_in_one_and_three_processes() {
        for m in measure_spec("bw_file_rd/size:1m", &tiny_plan(1), Mode::default()).unwrap() {
            assert_sane(&m);
            assert_eq!(m.unit, touchstone_results::Unit::MBps);
        }
        let ms = measure_spec("bw_file_rd/sum/size:1m", &tiny_plan(3), Mode::default()).unwrap();
        assert_eq!(ms[0].per_process.len(), 3);
        assert_sane(&ms[0]);
    }
}
