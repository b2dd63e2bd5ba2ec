//! bw_mmap_rd: bandwidth of re-reading a cached file through mmap(2)
//! (lmbench's bw_mmap_rd). `io_only`: map the file, read one byte of every
//! page (faulting the mapping in), unmap; `sum`: map, add up every 64-bit
//! word, unmap; `mmap_only`: the file is mapped once in setup and each pass
//! adds up every word (lmbench's mmap_only: memory bandwidth of a file
//! mapping, no page faults after the first pass).

use std::os::fd::RawFd;

use touchstone_harness::{Context, Fallible, Shape};

use super::bw_file_rd::FILE_SIZE;
use super::file_common::{cached_file, map, page_size, sum_words, touch_pages, unmap};
use crate::family::{always_supported, Built, Family, Mode, Parallel};
use crate::params::{Kind, Param, Point};
use crate::sys;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum How {
    IoOnly,
    Sum,
    MmapOnly,
}

pub struct BwMmapRd {
    size: usize,
    how: How,
    fd: RawFd,
    page: usize,
    mapped: *const u8,
}

// SAFETY: the mapping belongs to the process that made it.
unsafe impl Send for BwMmapRd {}

impl touchstone_harness::Benchmark for BwMmapRd {
    fn setup(&mut self, ctx: &Context) -> Fallible {
        self.page = page_size();
        self.fd = cached_file(ctx, "bw_mmap_rd", self.size)?;
        if self.how == How::MmapOnly {
            self.mapped = map(self.fd, self.size)?;
        }
        Ok(())
    }

    /// Timed: `n` passes over the file as described for the mode; every
    /// sum goes to black_box so no read is removed.
    fn run(&mut self, n: u64) -> Fallible {
        let mut total = 0u64;
        for _ in 0..n {
            total = total.wrapping_add(match self.how {
                How::MmapOnly => sum_words(self.mapped, self.size),
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
        sys::close(self.fd);
        self.fd = -1;
    }
}

fn build(p: &Point, _: Mode) -> Result<Built, String> {
    let size = p.num("size");
    let how = match p.text("mode") {
        "io_only" => How::IoOnly,
        "sum" => How::Sum,
        _ => How::MmapOnly,
    };
    Ok(Built::new(
        BwMmapRd {
            size: size as usize,
            how,
            fd: -1,
            page: 4096,
            mapped: std::ptr::null(),
        },
        Shape::bandwidth(size as f64),
    ))
}

pub const FAMILY: Family = Family {
    name: "bw_mmap_rd",
    group: "comm_bw",
    summary: "re-reading a cached file through mmap: fault-in only, map+sum, or sum of a standing mapping",
    params: &[
        Param {
            name: "mode",
            help: "io_only: map, touch each page, unmap; sum: map, sum, unmap; mmap_only: sum a standing mapping",
            kind: Kind::Choice(&["io_only", "sum", "mmap_only"]),
            default: &["io_only", "sum", "mmap_only"],
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
        for m in measure_spec("bw_mmap_rd/size:1m", &tiny_plan(1), Mode::default()).unwrap() {
            assert_sane(&m);
        }
        let ms = measure_spec("bw_mmap_rd/sum/size:1m", &tiny_plan(3), Mode::default()).unwrap();
        assert_eq!(ms[0].per_process.len(), 3);
        assert_sane(&ms[0]);
    }
}
