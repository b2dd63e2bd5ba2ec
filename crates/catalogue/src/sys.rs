//! Small, direct wrappers over the libc calls many benchmark families share:
//! helper processes that cannot outlive the run, pipes, exact reads and
//! writes on raw descriptors. Kept out of timed loops' way: they return
//! plain results and allocate nothing.

use std::io;
use std::os::fd::RawFd;

pub type Pid = libc::pid_t;

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Fork a helper process that runs `body` and exits with its return value.
/// The helper stays in the benchmark process's group and is killed if its
/// parent dies (PR_SET_PDEATHSIG), so the harness can always clean it up.
/// `body` must not return into the caller's code: the helper `_exit`s.
pub fn fork_helper(body: impl FnOnce() -> i32) -> io::Result<Pid> {
    let parent = unsafe { libc::getpid() };
    // SAFETY: fork; the child runs `body` then _exit, never returning.
    let pid = check(unsafe { libc::fork() })?;
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
pub fn reap(pid: Pid) -> io::Result<i32> {
    let mut st = 0;
    loop {
        let r = unsafe { libc::waitpid(pid, &mut st, 0) };
        if r == pid {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    if libc::WIFEXITED(st) {
        Ok(libc::WEXITSTATUS(st))
    } else {
        Err(io::Error::other(format!(
            "helper {pid} killed by signal {}",
            libc::WTERMSIG(st)
        )))
    }
}

/// A pipe as (read end, write end), close-on-exec.
pub fn pipe() -> io::Result<(RawFd, RawFd)> {
    let mut fds = [0; 2];
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    Ok((fds[0], fds[1]))
}

pub fn close(fd: RawFd) {
    if fd >= 0 {
        unsafe { libc::close(fd) };
    }
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

/// Fill all of `buf`, retrying short reads and EINTR; end-of-file is an error.
#[inline]
pub fn read_exact(fd: RawFd, mut buf: &mut [u8]) -> io::Result<()> {
    while !buf.is_empty() {
        let r = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if r == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "peer closed"));
        }
        buf = &mut buf[r as usize..];
    }
    Ok(())
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
}
