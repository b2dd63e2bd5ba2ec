//! Small, direct wrappers over the libc calls many benchmark families share:
//! the one way an errno becomes an error (`errno`, `check`), helper
//! processes that cannot outlive the run, pipes, exact reads and writes on
//! raw descriptors, C strings for paths, the page size. Kept out of timed
//! loops' way: they return plain results and allocate nothing (but on error).

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use touchstone_harness::{BenchError, Fallible};

pub type Pid = libc::pid_t;

/// The error the libc call that just failed left in errno, named by what
/// failed: "connect 127.0.0.1: Connection refused". Call it straight after
/// the failing call, before anything else can overwrite errno.
#[cold]
pub fn errno(what: &str) -> BenchError {
    BenchError(format!("{what}: {}", io::Error::last_os_error()))
}

/// `r` when the call succeeded (non-negative), else `errno(what)`.
#[inline]
pub fn check(r: libc::c_int, what: &str) -> Fallible<libc::c_int> {
    if r < 0 {
        Err(errno(what))
    } else {
        Ok(r)
    }
}

/// A NUL-terminated copy of a path or name, for the libc calls that take one.
pub fn cstring(s: impl AsRef<OsStr>) -> Fallible<CString> {
    CString::new(s.as_ref().as_bytes()).map_err(|e| BenchError(e.to_string()))
}

/// A fresh anonymous mapping of `len` bytes with protection `prot`,
/// `shared` between this process and its children after a fork or private
/// to it; the caller unmaps it (munmap).
pub fn map_anonymous(len: usize, prot: libc::c_int, shared: bool) -> Fallible<*mut u8> {
    let share = if shared {
        libc::MAP_SHARED
    } else {
        libc::MAP_PRIVATE
    };
    // SAFETY: a new mapping chosen by the kernel; checked for failure.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            prot,
            share | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(errno(&format!("mmap of {len} bytes")));
    }
    Ok(p as *mut u8)
}

/// The system page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(4096) as usize
}

/// Fork a helper process that runs `body` and exits with its return value.
/// The helper stays in the benchmark process's group and is killed if its
/// parent dies (PR_SET_PDEATHSIG), so the harness can always clean it up.
/// `body` must not return into the caller's code: the helper `_exit`s.
pub fn fork_helper(body: impl FnOnce() -> i32) -> Fallible<Pid> {
    let parent = unsafe { libc::getpid() };
    // SAFETY: fork; the child runs `body` then _exit, never returning.
    let pid = check(unsafe { libc::fork() }, "fork")?;
    if pid == 0 {
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(1);
            }
        }
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or(101);
        unsafe { libc::_exit(code) };
    }
    Ok(pid)
}

/// Kill (SIGKILL) and reap a helper; errors are ignored (it may be gone).
pub fn kill_and_reap(pid: Pid) {
    if pid > 0 {
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            let mut st = 0;
            libc::waitpid(pid, &mut st, 0);
        }
    }
}

/// Wait for a helper; Ok(exit code) or an error describing how it died.
pub fn reap(pid: Pid) -> Fallible<i32> {
    let mut st = 0;
    loop {
        let r = unsafe { libc::waitpid(pid, &mut st, 0) };
        if r == pid {
            break;
        }
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return Err(errno("waitpid"));
        }
    }
    if libc::WIFEXITED(st) {
        Ok(libc::WEXITSTATUS(st))
    } else {
        Err(BenchError(format!(
            "helper {pid} killed by signal {}",
            libc::WTERMSIG(st)
        )))
    }
}

/// A pipe as (read end, write end), close-on-exec.
pub fn pipe() -> Fallible<(RawFd, RawFd)> {
    let mut fds = [0; 2];
    check(
        unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) },
        "pipe",
    )?;
    Ok((fds[0], fds[1]))
}

pub fn close(fd: RawFd) {
    if fd >= 0 {
        unsafe { libc::close(fd) };
    }
}

/// Close `*fd` if open and mark it closed (-1), so that closing it again
/// (in `cleanup` or `drop`) does nothing.
pub fn close_and_clear(fd: &mut RawFd) {
    close(std::mem::replace(fd, -1));
}

/// Write all of `buf`, retrying short writes and EINTR.
#[inline]
pub fn write_all(fd: RawFd, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        let r = unsafe { libc::write(fd, buf.as_ptr() as *const libc::c_void, buf.len()) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        buf = &buf[r as usize..];
    }
    Ok(())
}

/// One read(2) into `buf`, retried on EINTR: the bytes read, 0 at end of
/// file.
#[inline]
pub fn read_some(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: reading into our buffer.
        let r = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Fill all of `buf`, retrying short reads and EINTR; end-of-file is an error.
#[inline]
pub fn read_exact(fd: RawFd, mut buf: &mut [u8]) -> io::Result<()> {
    while !buf.is_empty() {
        let n = read_some(fd, buf)?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "peer closed"));
        }
        buf = &mut buf[n..];
    }
    Ok(())
}

/// Read until end of file into `buf` (wrapping around), returning the
/// number of bytes read: for protocols whose reply ends with a close.
#[inline]
pub fn read_to_eof(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    let mut total = 0;
    loop {
        match read_some(fd, buf)? {
            0 => return Ok(total),
            n => total += n,
        }
    }
}

/// pread(2) into `buf` from offset `off`: the bytes read, 0 at the end of
/// the file, -1 on an error (errno says which).
pub fn read_at(fd: RawFd, buf: &mut [u8], off: u64) -> isize {
    // SAFETY: the kernel writes at most buf.len() bytes, into buf.
    unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), off as libc::off_t) }
}

/// pwrite(2) of `buf` at offset `off`: the bytes written, -1 on an error.
pub fn write_at(fd: RawFd, buf: &[u8], off: u64) -> isize {
    // SAFETY: the kernel reads at most buf.len() bytes, from buf.
    unsafe { libc::pwrite(fd, buf.as_ptr().cast(), buf.len(), off as libc::off_t) }
}

/// Create the file `path`, which must not exist yet, for reading and
/// writing by this user only.
pub fn create_new(path: &Path) -> Fallible<RawFd> {
    open_as("create", path, libc::O_RDWR | libc::O_CREAT | libc::O_EXCL)
}

/// Open `path` with `flags` and O_CLOEXEC; a file it creates is this
/// user's alone (0600). The error reads "`doing` PATH: why".
pub fn open_as(doing: &str, path: &Path, flags: libc::c_int) -> Fallible<RawFd> {
    let c = cstring(path)?;
    // SAFETY: a NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o600) };
    if fd < 0 {
        return Err(errno(&format!("{doing} {}", path.display())));
    }
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helper_round_trip_through_pipes() {
        let (r1, w1) = pipe().unwrap();
        let (r2, w2) = pipe().unwrap();
        let pid = fork_helper(|| {
            let mut b = [0u8; 4];
            read_exact(r1, &mut b).unwrap();
            b.reverse();
            write_all(w2, &b).unwrap();
            7
        })
        .unwrap();
        write_all(w1, b"abcd").unwrap();
        let mut b = [0u8; 4];
        read_exact(r2, &mut b).unwrap();
        assert_eq!(&b, b"dcba");
        assert_eq!(reap(pid).unwrap(), 7);
        for fd in [r1, w1, r2, w2] {
            close(fd);
        }
    }

    #[test]
    fn errors_name_what_failed() {
        // SAFETY: closing a descriptor that cannot be open fails with EBADF.
        let r = unsafe { libc::close(-1) };
        let e = check(r, "close -1").unwrap_err();
        assert!(e.0.starts_with("close -1: "), "{e}");
        assert!(e.0.contains("Bad file descriptor"), "{e}");
        assert_eq!(check(3, "anything"), Ok(3));
    }
}
