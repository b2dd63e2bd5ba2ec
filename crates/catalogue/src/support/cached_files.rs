//! A set of equal-sized files held in the page cache, for the buffer-cache
//! workload (fscache) and whatever else reads many cached files: made in a
//! scratch directory, each file unlinked as soon as it is open (so no file
//! outlives the run, whatever happens: the open descriptors are all that
//! keep them, and they die with the process), written back to disk once so
//! that no writeback runs during a measurement, and read once so that every
//! page is cached. Forked clients inherit the descriptors and read them
//! with pread(2), which shares no file offset between processes.
//!
//! Also the refusals a file set needs before anything runs: a set that does
//! not fit well in the memory the machine can give it (MemAvailable), and
//! more files than the open-files limit allows.

use std::os::fd::RawFd;
use std::path::Path;

use touchstone_harness::{BenchError, Fallible};
use touchstone_results::host;

use super::sys::{self, cstring, errno};

/// The share of MemAvailable a set may take: half, so that the set stays
/// cached while the rest of the system (and other helpers' builds) runs.
pub const MEMORY_SHARE: u64 = 2;

/// Descriptors kept free beside a file set's (the engine's pipes, sockets).
const SPARE_FDS: u64 = 64;

/// Equal-sized cached files, unlinked, open read-only.
pub struct FileSet {
    fds: Vec<RawFd>,
    file_size: usize,
}

impl FileSet {
    /// `count` files of `file_size` bytes each in `dir`, written, flushed
    /// to disk, unlinked and read once (cached). On error, everything made
    /// so far is closed (and was already unlinked).
    pub fn create(dir: &Path, count: usize, file_size: usize) -> Fallible<FileSet> {
        let mut set = FileSet {
            fds: Vec::with_capacity(count),
            file_size,
        };
        // Non-zero bytes, different in every file, so no page is shared
        // or trivially compressible anywhere below.
        let mut chunk: Vec<u8> = (0..64usize << 10).map(|i| (i % 251 + 1) as u8).collect();
        for i in 0..count {
            chunk[0] = (i % 251 + 1) as u8;
            let fd = new_unlinked_file(dir, i, &chunk, file_size)?;
            set.fds.push(fd);
        }
        for &fd in &set.fds {
            // SAFETY: flushing our own file; the data stay cached, clean.
            if unsafe { libc::fdatasync(fd) } != 0 {
                return Err(errno("fdatasync of the file set"));
            }
        }
        set.warm()?;
        Ok(set)
    }

    /// Read every file once (untimed) so that each page is in the cache,
    /// whatever reclaimed it since.
    pub fn warm(&self) -> Fallible {
        let mut buf = vec![0u8; 64 << 10];
        for &fd in &self.fds {
            let mut off = 0;
            while off < self.file_size {
                let want = (self.file_size - off).min(buf.len());
                let r = sys::read_at(fd, &mut buf[..want], off as u64);
                if r <= 0 {
                    return Err(if r == 0 {
                        BenchError("a cached file ended early".into())
                    } else {
                        errno("read of the file set")
                    });
                }
                off += r as usize;
            }
        }
        Ok(())
    }

    /// The open descriptors, one per file.
    pub fn fds(&self) -> &[RawFd] {
        &self.fds
    }

    pub fn file_size(&self) -> usize {
        self.file_size
    }
}

impl Drop for FileSet {
    fn drop(&mut self) {
        for &fd in &self.fds {
            sys::close(fd);
        }
    }
}

/// A new file `dir/set.<i>` of `size` bytes written from `chunk`, unlinked
/// at once; its descriptor, read-only use from here on.
fn new_unlinked_file(dir: &Path, i: usize, chunk: &[u8], size: usize) -> Fallible<RawFd> {
    let path = dir.join(format!("set.{i}"));
    let c = cstring(&path)?;
    let fd = sys::create_new(&path)?;
    // SAFETY: removing the file just made; the descriptor keeps it.
    unsafe { libc::unlink(c.as_ptr()) };
    let mut left = size;
    while left > 0 {
        let k = left.min(chunk.len());
        if let Err(e) = sys::write_all(fd, &chunk[..k]) {
            sys::close(fd);
            return Err(BenchError(format!("write {}: {e}", path.display())));
        }
        left -= k;
    }
    Ok(fd)
}

/// Refuse a set of `set_bytes` that would not stay cached: more than
/// 1/`MEMORY_SHARE` of MemAvailable (`avail`; unknown: accepted).
pub fn check_fits(what: &str, set_bytes: u64, avail: Option<u64>) -> Result<(), String> {
    let Some(avail) = avail else { return Ok(()) };
    if set_bytes > avail / MEMORY_SHARE {
        return Err(format!(
            "{what} of {} MB does not fit well in the memory this machine can give it: \
             MemAvailable is {} MB and a set may take at most 1/{MEMORY_SHARE} of it to stay \
             cached; use a smaller set",
            set_bytes / 1_000_000,
            avail / 1_000_000
        ));
    }
    Ok(())
}

/// `check_fits` against this machine's MemAvailable now.
pub fn check_fits_here(what: &str, set_bytes: u64) -> Result<(), String> {
    check_fits(what, set_bytes, host::available_memory_bytes())
}

/// Refuse a set of `files` open files over the open-files limit `limit`
/// (`ulimit -n`), naming the limit and the remedy.
pub fn check_descriptors(files: u64, limit: u64) -> Result<(), String> {
    let needed = files + SPARE_FDS;
    if needed > limit {
        return Err(format!(
            "a set of {files} files keeps {files} descriptors open, with the engine's needing \
             {needed}, above this shell's limit of {limit} (`ulimit -n`); raise it (e.g. \
             `ulimit -n {}`) or use fewer, larger files",
            needed.next_power_of_two()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::unlinked_until_closed;

    #[test]
    fn a_set_is_cached_unlinked_and_closed_on_drop() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let set = FileSet::create(dir, 5, 12 << 10).unwrap();
        assert_eq!(set.fds().len(), 5);
        assert_eq!(
            std::fs::read_dir(dir).unwrap().count(),
            0,
            "every file is unlinked once open"
        );
        // Each file holds its size in non-zero bytes.
        let mut buf = vec![0u8; 13 << 10];
        for &fd in set.fds() {
            let r = sys::read_at(fd, &mut buf, 0);
            assert_eq!(r, 12 << 10);
            assert!(buf[..12 << 10].iter().all(|&b| b != 0));
        }
        let fds = set.fds().to_vec();
        unlinked_until_closed(&fds, || drop(set));
        // remove_dir, not the TempDir drop: it fails unless the test left nothing.
        std::fs::remove_dir(tmp.keep()).unwrap();
    }

    #[test]
    fn sets_too_big_for_memory_or_descriptors_are_refused_with_the_remedy() {
        let gb = 1_000_000_000;
        assert!(check_fits("a set", 64 << 20, Some(8 * gb)).is_ok());
        let e = check_fits("a file set", 5 * gb, Some(8 * gb)).unwrap_err();
        assert!(
            e.contains("5000 MB") && e.contains("MemAvailable is 8000 MB"),
            "{e}"
        );
        assert!(check_fits("a set", u64::MAX, None).is_ok());
        assert!(check_descriptors(512, 1024).is_ok());
        let e = check_descriptors(8192, 1024).unwrap_err();
        assert!(e.contains("ulimit -n") && e.contains("8192 files"), "{e}");
    }
}
