//! The test file: created and unlinked at once (nothing outlives the
//! process, even on SIGKILL), laid out as fio lays out its files, reopened
//! with the mode's flags; a full file system named as such; the page-cache
//! probe behind the "measures memory" warning and dropping the page cache.

use std::os::fd::RawFd;
use std::path::Path;

use touchstone_harness::{BenchError, Fallible};

use super::place::describe_place;
use crate::support::memory::Rng;
use crate::support::sys::{self, errno};

/// Create a test file in `dir` and unlink it at once: it lives as long as
/// its descriptor, so nothing is left behind whatever ends the process.
pub fn create_unlinked(dir: &Path, what: &str, flags: libc::c_int) -> Fallible<RawFd> {
    let name = dir.join(format!(
        ".touchstone-{what}-{}-{:x}",
        std::process::id(),
        Rng::new(sys_nanos()).next()
    ));
    let c = sys::cstring(&name)?;
    // SAFETY: a NUL-terminated path.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC | flags,
            0o600,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        let why = match e.raw_os_error() {
            Some(libc::EINVAL) if flags & libc::O_DIRECT != 0 => format!(
                "mode:direct is unsupported here: the file system of {} ({}) refuses O_DIRECT ({e})",
                dir.display(),
                describe_place(dir)
            ),
            Some(libc::EROFS) | Some(libc::EACCES) | Some(libc::EPERM) => format!(
                "cannot write in {} ({}): {e}; choose a writable directory with --dir",
                dir.display(),
                describe_place(dir)
            ),
            Some(libc::ENOSPC) => format!(
                "the file system of {} ({}) is full: {e}",
                dir.display(),
                describe_place(dir)
            ),
            _ => format!("cannot create a test file in {}: {e}", dir.display()),
        };
        return Err(BenchError(why));
    }
    // SAFETY: the path we just created.
    unsafe { libc::unlink(c.as_ptr()) };
    Ok(fd)
}

fn sys_nanos() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: our timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 ^ (ts.tv_nsec as u64) << 20
}

/// Write `size` bytes of `buf`'s pattern to `fd` from offset 0 (the test
/// file's content), in chunks of `buf.len()`; a full file system is a
/// clear error naming it.
pub fn fill(fd: RawFd, size: u64, buf: &[u8], dir: &Path) -> Fallible {
    let mut off = 0u64;
    while off < size {
        let want = (size - off).min(buf.len() as u64) as usize;
        let r = sys::write_at(fd, &buf[..want], off);
        if r < 0 {
            return Err(write_error(dir, "writing the test file"));
        }
        off += r as u64;
    }
    Ok(())
}

/// A test file of `size` bytes in `dir`, unlinked at once, laid out as fio
/// lays out its files: written in blocks of the measurement's `block`,
/// written back, and its pages then dropped from the page cache
/// (POSIX_FADV_DONTNEED), so that the timed passes meet only the pages
/// their own pattern brings in. Why the block matters: the page cache keeps
/// a file in folios as large as the writes that made them (large folios,
/// ext4 since Linux 6.16); a file laid out in 1 MB writes and then
/// overwritten in 32 KB blocks costs about twice as much per write as one
/// whose folios the 32 KB writes made (docs/validation.md, I/O). Then
/// reopened through /proc with the mode's `flags` (O_DIRECT, O_SYNC…).
pub fn test_file(
    dir: &Path,
    what: &str,
    size: u64,
    flags: libc::c_int,
    block: u64,
) -> Fallible<RawFd> {
    let fd = create_unlinked(dir, what, 0)?;
    // Blocks under a page make page-sized folios all the same.
    let chunk = block.clamp(sys::page_size() as u64, 4 << 20) as usize;
    let laid = fill(fd, size, &vec![0x5au8; chunk], dir).and_then(|_| {
        // SAFETY: our descriptor.
        sys::check(unsafe { libc::fsync(fd) }, "fsync")?;
        // SAFETY: our descriptor; advice on clean pages of our own file.
        match unsafe { libc::posix_fadvise(fd, 0, size as libc::off_t, libc::POSIX_FADV_DONTNEED) }
        {
            0 => Ok(()),
            e => Err(BenchError(format!(
                "posix_fadvise(DONTNEED): {}",
                std::io::Error::from_raw_os_error(e)
            ))),
        }
    });
    if let Err(e) = laid {
        sys::close(fd);
        return Err(e);
    }
    reopen(fd, flags)
}

/// Reopen an unlinked file through /proc with the mode's extra open flags
/// (closing the first descriptor); with no flags, the same descriptor.
pub fn reopen(fd: RawFd, flags: libc::c_int) -> Fallible<RawFd> {
    if flags == 0 {
        return Ok(fd);
    }
    let path = sys::cstring(format!("/proc/self/fd/{fd}"));
    // SAFETY: a NUL-terminated path.
    let again =
        path.map(|p| unsafe { libc::open(p.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC | flags) });
    sys::close(fd);
    sys::check(again?, "reopen the test file with the mode's flags")
}

/// The error of a failed write, naming a full file system as such.
pub fn write_error(dir: &Path, doing: &str) -> BenchError {
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::ENOSPC) || e.raw_os_error() == Some(libc::EDQUOT) {
        BenchError(format!(
            "the file system of {} ({}) is full ({e}) {doing}; what was written is removed. Free space, use a smaller size:, or choose another --dir",
            dir.display(),
            describe_place(dir)
        ))
    } else {
        errno(doing)
    }
}

/// The fraction of the first `size` bytes of `fd` in the page cache
/// (mincore(2) of a mapping; no page is touched).
pub fn resident_fraction(fd: RawFd, size: u64) -> Option<f64> {
    if size == 0 {
        return None;
    }
    let len = size as usize;
    let p = crate::support::scratch_file::map(fd, len).ok()?;
    let mut vec = vec![0u8; len.div_ceil(sys::page_size())];
    // SAFETY: our mapping and a vector of one byte per page.
    let r = unsafe { libc::mincore(p as *mut libc::c_void, len, vec.as_mut_ptr()) };
    crate::support::scratch_file::unmap(p, len);
    (r == 0).then(|| vec.iter().filter(|&&b| b & 1 != 0).count() as f64 / vec.len() as f64)
}

/// The `prepare` of the I/O micro-benchmarks: with `--drop-caches`, drop
/// the page cache before every interval.
pub fn prepare_interval(drop: bool) -> Fallible {
    if drop {
        drop_caches()?;
    }
    Ok(())
}

/// Write back and drop the clean page cache, dentries and inodes (root).
pub fn drop_caches() -> Fallible {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(|e| {
        BenchError(format!(
            "--drop-caches: writing /proc/sys/vm/drop_caches: {e}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::io::{mount_of, scratch_parent};

    /// The test file is laid out and written back, then its pages leave the
    /// page cache, so a timed pass meets only the folios its own blocks make
    /// (tmpfs keeps its pages: it has nowhere else to keep them).
    #[test]
    fn test_files_leave_the_page_cache_after_layout() {
        let dir = tempfile::tempdir_in(scratch_parent()).unwrap();
        let size = 1 << 20;
        let fd = test_file(dir.path(), "layout", size, 0, 32 << 10).unwrap();
        let cached = resident_fraction(fd, size).unwrap();
        let mut got = vec![0u8; size as usize];
        let r = sys::read_at(fd, &mut got, 0);
        sys::close(fd);
        assert_eq!(r, size as isize);
        assert!(got.iter().all(|&b| b == 0x5a), "laid out in full");
        match mount_of(dir.path()).map(|m| m.fs_type) {
            Some(fs) if fs == "tmpfs" || fs == "ramfs" => eprintln!("{fs}: pages stay"),
            _ => assert!(cached < 0.1, "{:.0} % still cached", cached * 100.0),
        }
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "unlinked"
        );
    }
}
