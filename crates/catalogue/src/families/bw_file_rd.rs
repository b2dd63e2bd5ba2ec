//! bw_file_rd: bandwidth of re-reading a file that is in the page cache
//! with read(2) in 64 KB chunks (lmbench's bw_file_rd, whose XFERSIZE is
//! 64 KB too). `io_only` moves the data into the buffer and nothing else;
//! `sum` also adds up every 64-bit word read (what lmbench's io_only does:
//! its figure is read+sum); `open2close` is lmbench's open2close: each pass
//! opens the file by name, reads and sums it, and closes it. The file is
//! made in the scratch directory in setup and unlinked at once, except for
//! `open2close`, which unlinks it in cleanup.

use std::ffi::CString;
use std::os::fd::RawFd;

use touchstone_harness::{BenchError, Context, Fallible, Shape};

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::scratch_file::{cached_file_named_if, close_file, sum_words, FILE_SIZE};
use crate::support::sys::{self, errno};

const CHUNK: usize = 64 << 10;

pub struct BwFileRd {
    size: usize,
    sum: bool,
    open2close: bool,
    fd: RawFd,
    path: Option<CString>,
    buf: Vec<u64>,
}

fn read_error(r: isize) -> BenchError {
    if r == 0 {
        BenchError("read: unexpected end of file".into())
    } else {
        errno("read")
    }
}

impl BwFileRd {
    /// One open2close pass: open(2) by name, read(2) 64 KB chunks to the end
    /// of the file adding up every word, close(2). Returns the sum.
    #[inline]
    fn open_read_close(&mut self, path: *const libc::c_char) -> Fallible<u64> {
        let p = self.buf.as_mut_ptr() as *mut u8;
        // SAFETY: a NUL-terminated path of our scratch file.
        let fd = unsafe { libc::open(path, libc::O_RDONLY) };
        if fd < 0 {
            return Err(errno("open"));
        }
        let mut total = 0u64;
        let mut left = self.size;
        while left > 0 {
            // SAFETY: reading into our 64 KB buffer.
            let r = unsafe { libc::read(fd, p as *mut libc::c_void, left.min(CHUNK)) };
            if r <= 0 {
                let e = read_error(r);
                sys::close(fd);
                return Err(e);
            }
            total = total.wrapping_add(sum_words(p, r as usize & !7));
            left -= r as usize;
        }
        sys::close(fd);
        Ok(total)
    }
}

impl touchstone_harness::Benchmark for BwFileRd {
    fn setup(&mut self, ctx: &Context) -> Fallible {
        (self.fd, self.path) = cached_file_named_if(ctx, "bw_file_rd", self.size, self.open2close)?;
        self.buf = vec![0u64; CHUNK / 8];
        Ok(())
    }

    /// Timed: `n` passes over the file, each pread(2) of 64 KB chunks from
    /// offset 0 to the end; with `sum`, each chunk's words are added and the
    /// total goes to black_box (so the reads of the buffer stay). With
    /// `open2close`, each pass is `open_read_close` (open, read+sum, close).
    fn run(&mut self, n: u64) -> Fallible {
        let mut total = 0u64;
        if self.open2close {
            let path = self.path.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
            for _ in 0..n {
                total = total.wrapping_add(self.open_read_close(path)?);
            }
            std::hint::black_box(total);
            return Ok(());
        }
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
                    return Err(read_error(r));
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
        close_file(&mut self.fd, &mut self.path);
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let size = p.num("size");
    Ok(Built::new(
        BwFileRd {
            size: size as usize,
            sum: p.text("mode") == "sum",
            open2close: p.text("mode") == "open2close",
            fd: -1,
            path: None,
            buf: Vec::new(),
        },
        Shape::bandwidth(size as f64),
    ))
}

pub const FAMILY: Family = Family {
    params: &[
        Param::choice("mode", &["io_only", "sum", "open2close"])
            .positional()
            .help("io_only: read only; sum: read and add up every word; open2close: open, read+sum, close per pass"),
        FILE_SIZE,
    ],
    ..Family::new(
        "bw_file_rd",
        "comm_bw",
        "re-reading a cached file with read(): I/O only, or I/O plus summing the data",
        build,
    )
};
