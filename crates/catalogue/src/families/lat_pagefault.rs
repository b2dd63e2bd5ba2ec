//! lat_pagefault: the cost per page of faulting in a shared mapping of a
//! cached file (lmbench's lat_pagefault). The file (`size` bytes, made and
//! unlinked in setup) stays in the page cache; before each interval fresh
//! mappings of it are made (untimed) so that the interval's `n` pages are
//! all unmapped in this process; the interval reads one byte of each; the
//! mappings are removed after it (untimed). The figure is time per page
//! touched: the kernel's fault-around maps up to 16 neighbouring cached
//! pages per fault, so it is the amortised cost a program sees (lmbench's
//! figure includes the same effect).

use touchstone_harness::{Context, Fallible, Shape};

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::scratch_file::{unmap, MappedFile};

pub struct LatPagefault {
    file: MappedFile,
    maps: Vec<*const u8>,
}

// SAFETY: the mappings belong to the process that made them.
unsafe impl Send for LatPagefault {}

impl LatPagefault {
    fn unmap_all(&mut self) {
        for &p in &self.maps {
            unmap(p, self.file.size);
        }
        self.maps.clear();
    }
}

impl touchstone_harness::Benchmark for LatPagefault {
    fn setup(&mut self, ctx: &Context) -> Fallible {
        self.file.open(ctx, "lat_pagefault")
    }

    /// Untimed: map the file as many times as `n` pages need.
    fn prepare(&mut self, n: u64) -> Fallible {
        let per_map = (self.file.size / self.file.page) as u64;
        for _ in 0..n.div_ceil(per_map) {
            let p = self.file.map()?;
            self.maps.push(p);
        }
        Ok(())
    }

    /// Timed: `n` volatile one-byte reads, one in each page of the fresh
    /// mappings in order; each first touch of a page faults (or was mapped
    /// by a neighbour's fault-around). The sum goes to black_box.
    fn run(&mut self, n: u64) -> Fallible {
        let mut left = n as usize;
        let mut sum = 0u64;
        let (size, page) = (self.file.size, self.file.page);
        for &p in &self.maps {
            let pages = left.min(size / page);
            for i in 0..pages {
                // SAFETY: page i of a live mapping of `size` bytes.
                sum = sum.wrapping_add(unsafe { std::ptr::read_volatile(p.add(i * page)) } as u64);
            }
            left -= pages;
        }
        std::hint::black_box(sum);
        Ok(())
    }

    fn conclude(&mut self, _n: u64) -> Fallible {
        self.unmap_all();
        Ok(())
    }

    fn cleanup(&mut self) {
        self.unmap_all();
        self.file.close();
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    Ok(Built::new(
        LatPagefault {
            file: MappedFile::of(p.num("size") as usize),
            maps: Vec::new(),
        },
        Shape::latency(1.0),
    ))
}

pub const FAMILY: Family = Family {
    params: &[Param::size("size", 64 << 10, 1 << 30)
        .measured(&["16m"])
        .quick(&["8m"])
        .help("file size (each fresh mapping covers the whole file)")],
    ..Family::new(
        "lat_pagefault",
        "fs_lat",
        "time per page to fault in a shared mapping of a cached file",
        build,
    )
};
