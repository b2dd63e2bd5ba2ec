//! bw_mmap_rd: bandwidth of re-reading a cached file through mmap(2)
//! (lmbench's bw_mmap_rd). `io_only`: map the file, read one byte of every
//! page (faulting the mapping in), unmap; `sum`: map, add up every 64-bit
//! word, unmap; `mmap_only`: the file is mapped once in setup and each pass
//! adds up every word (lmbench's mmap_only: memory bandwidth of a file
//! mapping, no page faults after the first pass); `open2close`: lmbench's
//! open2close, each pass opens the file by name, maps it, adds up every
//! word, closes it and unmaps (the file keeps its name in the scratch
//! directory for this mode and is unlinked in cleanup).

use std::ffi::CString;
use std::os::fd::RawFd;

use touchstone_harness::{Context, Fallible, Shape};

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::scratch_file::{
    cached_file_named_if, close_file, map, sum_words, touch_pages, unmap, FILE_SIZE,
};
use crate::support::sys::{self, errno, page_size};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum How {
    IoOnly,
    Sum,
    MmapOnly,
    Open2Close,
}

pub struct BwMmapRd {
    size: usize,
    how: How,
    fd: RawFd,
    page: usize,
    mapped: *const u8,
    path: Option<CString>,
}

// SAFETY: the mapping belongs to the process that made it.
unsafe impl Send for BwMmapRd {}

impl touchstone_harness::Benchmark for BwMmapRd {
    fn setup(&mut self, ctx: &Context) -> Fallible {
        self.page = page_size();
        let keep_name = self.how == How::Open2Close;
        (self.fd, self.path) = cached_file_named_if(ctx, "bw_mmap_rd", self.size, keep_name)?;
        if self.how == How::MmapOnly {
            self.mapped = map(self.fd, self.size)?;
        }
        Ok(())
    }

    /// Timed: `n` passes over the file as described for the mode; every
    /// sum goes to black_box so no read is removed. `open2close`: open(2)
    /// by name, mmap, sum every word, close(2), munmap (lmbench's order).
    fn run(&mut self, n: u64) -> Fallible {
        let mut total = 0u64;
        let path = self.path.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
        for _ in 0..n {
            total = total.wrapping_add(match self.how {
                How::MmapOnly => sum_words(self.mapped, self.size),
                How::Open2Close => {
                    // SAFETY: a NUL-terminated path of our scratch file.
                    let fd = unsafe { libc::open(path, libc::O_RDONLY) };
                    if fd < 0 {
                        return Err(errno("open"));
                    }
                    let p = map(fd, self.size).inspect_err(|_| sys::close(fd))?;
                    let s = sum_words(p, self.size);
                    sys::close(fd);
                    unmap(p, self.size);
                    s
                }
                How::IoOnly | How::Sum => {
                    let p = map(self.fd, self.size)?;
                    let s = if self.how == How::Sum {
                        sum_words(p, self.size)
                    } else {
                        touch_pages(p, self.size, self.page)
                    };
                    unmap(p, self.size);
                    s
                }
            });
        }
        std::hint::black_box(total);
        Ok(())
    }

    fn cleanup(&mut self) {
        if !self.mapped.is_null() {
            unmap(self.mapped, self.size);
            self.mapped = std::ptr::null();
        }
        close_file(&mut self.fd, &mut self.path);
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let size = p.num("size");
    let how = match p.text("mode") {
        "io_only" => How::IoOnly,
        "sum" => How::Sum,
        "open2close" => How::Open2Close,
        _ => How::MmapOnly,
    };
    Ok(Built::new(
        BwMmapRd {
            size: size as usize,
            how,
            fd: -1,
            page: 4096,
            mapped: std::ptr::null(),
            path: None,
        },
        Shape::bandwidth(size as f64),
    ))
}

pub const FAMILY: Family = Family {
    params: &[
        Param::choice("mode", &["io_only", "sum", "mmap_only", "open2close"])
            .positional()
            .help("io_only: map, touch each page, unmap; sum: map, sum, unmap; mmap_only: sum a standing mapping; open2close: open, map, sum, close, unmap"),
        FILE_SIZE,
    ],
    ..Family::new(
        "bw_mmap_rd",
        "comm_bw",
        "re-reading a cached file through mmap: fault-in only, map+sum, or sum of a standing mapping",
        build,
    )
};
