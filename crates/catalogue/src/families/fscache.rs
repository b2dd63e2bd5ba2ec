//! fscache: reads from the buffer cache by N processes (seed 003's FSCache,
//! "kilobytes/second read from the buffer cache"), a workload on the
//! load-curve engine, with its memory-to-memory copy baseline.
//!
//! A set of `file`-byte files (default 128 KB, 003's choice) totalling
//! `set` bytes (default 64 MB: well inside memory; a set over half of
//! MemAvailable is refused) is made once per sweep in the first trial's
//! scratch directory, unlinked as soon as each file is open, written back
//! and read once so every page is cached (`support::cached_files`). Each of the
//! L clients (one process each) picks random files of the set with its own
//! generator and reads them with pread(2) into a `buffer`-byte buffer (512
//! and 4096 bytes by default: 003 found the buffer size mattered):
//! - `access:random` (default; 003 reported its random-read tests): each
//!   read is of a random file at a random buffer-aligned offset;
//! - `access:whole`: a random file is read from start to end, buffer by
//!   buffer, then the next random file.
//!
//! `mode:memcpy` is the baseline 003 ran first to see whether memory-to-
//! memory copy scales before blaming the cache: the same set as one shared
//! in-memory region, and each "read" a memcpy of the same bytes from it
//! into the client's buffer (what a cached read costs above its copy is
//! the difference). Both modes are curves of this family, measured one
//! after the other (mode varies fastest), so a report shows each read curve
//! next to its baseline.
//!
//! One operation is one read of `buffer` bytes (`bytes_per_op`), so
//! reports show MB/s (10^6 bytes) against processes and against CPUs.
//! Quick mode: 4 KB buffers, a 16 MB set, both modes, and by default one
//! load, a process per usable CPU (a reader never blocks, so the curve is
//! flat past one process per CPU); loads named in the spec are all measured.
//! Timed (by the engine, per operation): choosing the file and offset (a
//! few arithmetic instructions) and the pread(2) or memcpy. The files are
//! opened once, before the trial, in the supervising process; the clients
//! inherit the descriptors (pread shares no offset between them).

use std::os::fd::RawFd;

use touchstone_harness::workload::{
    default_loads_from, Client, ClientContext, TrialContext, Workload,
};
use touchstone_harness::{BenchError, Fallible};

use crate::family::{Family, RunContext};
use crate::params::{Param, Point};
use crate::support::cached_files::{check_descriptors, check_fits_here, FileSet};
use crate::support::memory::{Buf, Pages, Rng};
use crate::support::scratch_file::touch_pages;
use crate::support::sys::{self, errno, map_anonymous};

pub const NAME: &str = "fscache";
pub const SUMMARY: &str =
    "random reads of cached files by N processes, MB/s (seed 003's FSCache), and the memcpy baseline";
/// What one operation is: one read of `buffer` bytes.
pub const OPERATION: &str = "read";
/// The most reading processes.
pub const MAX_LOAD: u32 = 1024;

pub const BUFFER: Param = Param::size("buffer", 64, 1 << 20)
    .measured(&["512", "4k"])
    .quick(&["4k"])
    .help("bytes per read (seed 003: 512 and 4096); the file size must be a multiple of it");

pub const ACCESS: Param = Param::choice("access", &["random", "whole"])
    .measured(&["random"])
    .help("random: each read at a random offset of a random file; whole: each random file read start to end");

pub const FILE: Param = Param::size("file", 4 << 10, 64 << 20)
    .measured(&["128k"])
    .help("size of each file of the set (seed 003: 128 KB)");

pub const SET: Param = Param::size("set", 4 << 10, 1 << 40)
    .measured(&["64m"])
    .quick(&["16m"])
    .help("total size of the file set, a multiple of the file size; at most half of MemAvailable");

pub const MODE: Param = Param::choice("mode", &["read", "memcpy"])
    .help("read: pread(2) from the cached files; memcpy: the same bytes copied from memory (the baseline)");

/// Mode varies fastest: each read curve is followed by its baseline.
pub const PARAMS: &[Param] = &[BUFFER, ACCESS, FILE, SET, MODE];

/// Where a read comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// pread(2) from the cached files.
    Cache,
    /// memcpy from the same bytes in a shared memory region.
    Memcpy,
}

/// Where in a file each read is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Random,
    Whole,
}

/// Build the workload from a point of its parameters.
pub fn build(p: &Point, ctx: &RunContext) -> Result<Box<dyn Workload>, String> {
    let source = match p.text(MODE.name) {
        "memcpy" => Source::Memcpy,
        _ => Source::Cache,
    };
    let access = match p.text(ACCESS.name) {
        "whole" => Access::Whole,
        _ => Access::Random,
    };
    let mut w = FsCache::new(
        source,
        access,
        p.num(BUFFER.name) as usize,
        p.num(FILE.name) as usize,
        p.num(SET.name),
    )?;
    w.quick = ctx.quick;
    Ok(Box::new(w))
}

/// A shared anonymous region holding the set in memory (mode memcpy),
/// inherited by the forked clients.
struct Region {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: written once in the supervisor before any client exists, then
// only read (by each client process from its inherited mapping).
unsafe impl Sync for Region {}
unsafe impl Send for Region {}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what was mapped.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// The workload: its parameters, and the set (made by the first trial's
/// `prepare`, kept for the sweep's other trials, gone when it is dropped).
pub struct FsCache {
    pub source: Source,
    pub access: Access,
    pub buffer: usize,
    pub file_size: usize,
    pub files: usize,
    /// Quick mode: the default ladder stops at the usable CPUs.
    pub quick: bool,
    set: Option<FileSet>,
    region: Option<Region>,
}

impl FsCache {
    /// Check the sizes against each other and the machine (memory, open
    /// files), before anything runs.
    pub fn new(
        source: Source,
        access: Access,
        buffer: usize,
        file_size: usize,
        set_bytes: u64,
    ) -> Result<FsCache, String> {
        if buffer == 0 || !file_size.is_multiple_of(buffer) {
            return Err(format!(
                "buffer:{buffer} must divide the file size ({file_size} bytes), so that every \
                 read is a whole buffer"
            ));
        }
        if set_bytes < file_size as u64 || !set_bytes.is_multiple_of(file_size as u64) {
            return Err(format!(
                "set:{set_bytes} must be a whole number (at least 1) of files of {file_size} bytes"
            ));
        }
        let files = set_bytes / file_size as u64;
        check_fits_here("fscache: a file set", set_bytes)?;
        if source == Source::Cache {
            check_descriptors(files, touchstone_harness::workload::open_files_limit())?;
        }
        Ok(FsCache {
            source,
            access,
            buffer,
            file_size,
            files: files as usize,
            quick: false,
            set: None,
            region: None,
        })
    }

    fn set_bytes(&self) -> usize {
        self.files * self.file_size
    }
}

impl Workload for FsCache {
    fn op_types(&self) -> &[&str] {
        &[OPERATION]
    }
    fn max_load(&self) -> Option<u32> {
        Some(MAX_LOAD)
    }
    /// Quick: one load, a process per usable CPU — the read next to its
    /// memcpy baseline where the machine is full, in a few seconds (a
    /// reader never blocks, so past one per CPU the curve is flat).
    /// Otherwise the engine's ladder.
    fn default_loads(&self, usable: usize) -> Vec<u32> {
        if self.quick {
            vec![(usable as u32).clamp(1, MAX_LOAD)]
        } else {
            default_loads_from(1, usable, Some(MAX_LOAD))
        }
    }
    fn bytes_per_op(&self) -> Option<u64> {
        Some(self.buffer as u64)
    }

    /// Make the set once (cached files, or the memory region), and before
    /// every trial read the files once more so that all are cached.
    fn prepare(&mut self, ctx: &TrialContext) -> Fallible {
        match self.source {
            Source::Cache => match &self.set {
                Some(set) => set.warm()?,
                None => self.set = Some(FileSet::create(&ctx.scratch, self.files, self.file_size)?),
            },
            Source::Memcpy => {
                if self.region.is_none() {
                    let len = self.set_bytes();
                    let ptr = map_anonymous(len, libc::PROT_READ | libc::PROT_WRITE, true)?;
                    // SAFETY: filling the whole new mapping with non-zero bytes.
                    unsafe { libc::memset(ptr as *mut libc::c_void, 0x5a, len) };
                    self.region = Some(Region { ptr, len });
                }
            }
        }
        Ok(())
    }

    fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        let buf = Buf::new(self.buffer, Pages::Default)?;
        let (fds, base): (&[RawFd], *const u8) = match self.source {
            Source::Cache => {
                let set = self.set.as_ref().ok_or_else(|| {
                    BenchError("fscache: no file set (prepare did not run)".into())
                })?;
                (set.fds(), std::ptr::null())
            }
            Source::Memcpy => {
                let r = self.region.as_ref().ok_or_else(|| {
                    BenchError("fscache: no memory region (prepare did not run)".into())
                })?;
                // Fault in this process's view of the shared region now,
                // not in the timed reads (fork copies no page tables of it).
                std::hint::black_box(touch_pages(r.ptr, r.len, sys::page_size()));
                (&[], r.ptr as *const u8)
            }
        };
        let mut rng = Rng::new(ctx.seed);
        let file = rng.below(self.files);
        Ok(Box::new(Reader {
            source: self.source,
            access: self.access,
            buffer: self.buffer,
            file_size: self.file_size,
            files: self.files,
            fds,
            base,
            buf,
            rng,
            file,
            offset: 0,
        }))
    }
}

/// One reading process.
struct Reader<'a> {
    source: Source,
    access: Access,
    buffer: usize,
    file_size: usize,
    files: usize,
    fds: &'a [RawFd],
    base: *const u8,
    buf: Buf,
    rng: Rng,
    /// Whole-file access: the file being read and the next offset in it.
    file: usize,
    offset: usize,
}

impl Reader<'_> {
    /// The file and offset of the next read.
    #[inline]
    fn next_read(&mut self) -> (usize, usize) {
        match self.access {
            Access::Random => {
                let file = self.rng.below(self.files);
                let offset = self.rng.below(self.file_size / self.buffer) * self.buffer;
                (file, offset)
            }
            Access::Whole => {
                if self.offset >= self.file_size {
                    self.file = self.rng.below(self.files);
                    self.offset = 0;
                }
                let at = (self.file, self.offset);
                self.offset += self.buffer;
                at
            }
        }
    }
}

impl Client for Reader<'_> {
    /// Timed: one read of `buffer` bytes — pread(2) from the cached file,
    /// or memcpy of the same bytes from the region — into the buffer.
    #[inline]
    fn op(&mut self) -> Fallible<usize> {
        let (file, offset) = self.next_read();
        let dst = self.buf.ptr();
        match self.source {
            Source::Cache => {
                // SAFETY: reading into our own buffer of `buffer` bytes.
                let r = unsafe {
                    libc::pread(
                        self.fds[file],
                        dst as *mut libc::c_void,
                        self.buffer,
                        offset as libc::off_t,
                    )
                };
                if r != self.buffer as isize {
                    return Err(if r < 0 {
                        errno("pread")
                    } else {
                        BenchError(format!("pread: {r} bytes of {}", self.buffer))
                    });
                }
            }
            Source::Memcpy => {
                // SAFETY: within the region (file < files, offset + buffer
                // ≤ file size) into our own buffer; they do not overlap.
                unsafe {
                    let src = self.base.add(file * self.file_size + offset);
                    std::ptr::copy_nonoverlapping(src, dst, self.buffer);
                }
                // The copy must happen: its destination escapes.
                std::hint::black_box(dst);
            }
        }
        Ok(0)
    }
}

/// A workload (measured as a load curve over the spec's `load` ladder and
/// `--cpus`), in the report group of system workloads.
pub const FAMILY: Family = Family {
    params: PARAMS,
    ..Family::workload(NAME, "workload", SUMMARY, OPERATION, build)
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{short_trial, trial_is_sound, unlinked_until_closed};
    use touchstone_harness::workload::{cpu::usable_cpus, run_trial, TrialOutcome};

    fn assert_sound(o: &TrialOutcome, load: u32) {
        trial_is_sound(o, load as usize).unwrap();
        assert!(o.clients.iter().all(|c| c.window_ops > 0));
        assert!(o.service_demand().client_ns_per_op > 0.0);
        assert_eq!(o.pids.len(), load as usize, "L clients, no server");
    }

    #[test]
    fn reads_flow_from_the_cache_and_from_memory_and_nothing_is_left() {
        let cpus = usable_cpus().unwrap();
        for (source, access, buffer) in [
            (Source::Cache, Access::Random, 4096),
            (Source::Cache, Access::Whole, 512),
            (Source::Memcpy, Access::Random, 512),
            (Source::Memcpy, Access::Whole, 4096),
        ] {
            let mut w = FsCache::new(source, access, buffer, 64 << 10, 2 << 20).unwrap();
            assert_eq!(w.files, 32);
            assert_eq!(w.bytes_per_op(), Some(buffer as u64));
            for trial in 0..2 {
                let o = run_trial(&mut w, 2, &cpus, &short_trial(), trial)
                    .unwrap_or_else(|e| panic!("{source:?} {access:?} {buffer}: {e}"));
                assert_sound(&o, 2);
            }
            // The set is kept, unlinked, for the sweep's next trials, and
            // gone with the workload.
            let fds = w
                .set
                .as_ref()
                .map(|set| set.fds().to_vec())
                .unwrap_or_default();
            let files = unlinked_until_closed(&fds, || drop(w));
            assert_eq!(files.len(), if source == Source::Cache { 32 } else { 0 });
        }
    }

    #[test]
    fn reads_cover_the_set_within_bounds() {
        let w = FsCache::new(Source::Memcpy, Access::Whole, 4096, 16 << 10, 64 << 10).unwrap();
        let mut r = Reader {
            source: w.source,
            access: Access::Whole,
            buffer: 4096,
            file_size: 16 << 10,
            files: 4,
            fds: &[],
            base: std::ptr::null(),
            buf: Buf::new(4096, Pages::Default).unwrap(),
            rng: Rng::new(7),
            file: 2,
            offset: 0,
        };
        // Whole: a file start to end, buffer by buffer, then another.
        let first: Vec<(usize, usize)> = (0..4).map(|_| r.next_read()).collect();
        assert_eq!(first, vec![(2, 0), (2, 4096), (2, 8192), (2, 12288)]);
        assert_eq!(r.next_read().1, 0);
        // Random: aligned, inside, every file and offset reached.
        r.access = Access::Random;
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            let (f, o) = r.next_read();
            assert!(f < 4 && o % 4096 == 0 && o + 4096 <= 16 << 10);
            seen.insert((f, o));
        }
        assert_eq!(seen.len(), 16);
    }

    #[test]
    fn bad_sizes_and_sets_too_big_are_refused_before_anything_runs() {
        let p = |buffer: &str, file: &str, set: &str| {
            Point(vec![
                (BUFFER.name, BUFFER.parse(buffer).unwrap()),
                (ACCESS.name, ACCESS.parse("random").unwrap()),
                (FILE.name, FILE.parse(file).unwrap()),
                (SET.name, SET.parse(set).unwrap()),
                (MODE.name, MODE.parse("read").unwrap()),
            ])
        };
        let err = |pt: Point| {
            FAMILY
                .make_workload(&pt, &RunContext::default())
                .err()
                .unwrap()
        };
        assert!(err(p("4k", "6k", "60k")).contains("must divide the file size"));
        assert!(err(p("4k", "128k", "100k")).contains("whole number"));
        let e = err(p("4k", "64m", "1024g"));
        assert!(e.contains("MemAvailable"), "{e}");
        assert!(BUFFER.parse("0").is_err() && BUFFER.parse("2m").is_err());
        assert!(FILE.parse("1k").is_err() && ACCESS.parse("seq").is_err());
        let ok = FAMILY.make_workload(&p("512", "128k", "64m"), &RunContext::default());
        let ok = ok.unwrap();
        assert_eq!(ok.bytes_per_op(), Some(512));
        assert_eq!(ok.default_loads(2), vec![1, 2, 4, 8]);
        let quick = FAMILY.make_workload(&p("512", "128k", "64m"), &RunContext::new(true));
        assert_eq!(quick.unwrap().default_loads(2), vec![2]);
    }
}
