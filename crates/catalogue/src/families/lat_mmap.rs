//! lat_mmap: the time to map a cached file, read one byte of every page,
//! and unmap it, by mapping size (lmbench's lat_mmap). The file is made in
//! setup (page cache warm) and unlinked at once. Page faults are part of
//! the figure; the kernel's fault-around maps up to 16 cached pages per
//! fault, as it does for any program.

use touchstone_harness::{Context, Fallible, Shape};

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::scratch_file::{touch_pages, unmap, MappedFile};

pub struct LatMmap {
    file: MappedFile,
}

impl touchstone_harness::Benchmark for LatMmap {
    fn setup(&mut self, ctx: &Context) -> Fallible {
        self.file.open(ctx, "lat_mmap")
    }

    /// Timed: `n` times mmap(size), a volatile read of one byte per page,
    /// munmap. The bytes' sum goes to black_box so no read is removed.
    fn run(&mut self, n: u64) -> Fallible {
        for _ in 0..n {
            let f = &self.file;
            let p = f.map()?;
            std::hint::black_box(touch_pages(p, f.size, f.page));
            unmap(p, f.size);
        }
        Ok(())
    }

    fn cleanup(&mut self) {
        self.file.close();
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    Ok(Built::new(
        LatMmap {
            file: MappedFile::of(p.num("size") as usize),
        },
        Shape::latency(1.0),
    ))
}

pub const FAMILY: Family = Family {
    params: &[Param::size("size", 4 << 10, 1 << 30)
        .measured(&["64k", "1m", "16m"])
        .quick(&["1m"])
        .help("bytes mapped")],
    ..Family::new(
        "lat_mmap",
        "fs_lat",
        "mmap a cached file, read a byte of every page, munmap, by size",
        build,
    )
};
