//! The harness's four shared pipes. Children send one-byte messages up one
//! pipe (writes of one byte are atomic, so messages never interleave). The
//! parent broadcasts each barrier by closing the write end of that barrier's
//! pipe: every child sees end-of-file, none can miss it or steal it.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub const READY: u8 = b'R';
pub const WARM: u8 = b'W';
pub const DONE: u8 = b'D';
pub const FAILED: u8 = b'E';

pub struct Pipe {
    pub read: Option<OwnedFd>,
    pub write: Option<OwnedFd>,
}

impl Pipe {
    pub fn new() -> std::io::Result<Pipe> {
        let mut fds = [0; 2];
        // SAFETY: fds is a valid array of two ints. O_CLOEXEC keeps the
        // harness's pipes out of programs that benchmarks exec.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: both descriptors were just created and are owned here.
        unsafe {
            Ok(Pipe {
                read: Some(OwnedFd::from_raw_fd(fds[0])),
                write: Some(OwnedFd::from_raw_fd(fds[1])),
            })
        }
    }

    pub fn read_fd(&self) -> RawFd {
        self.read.as_ref().map_or(-1, |f| f.as_raw_fd())
    }
    pub fn write_fd(&self) -> RawFd {
        self.write.as_ref().map_or(-1, |f| f.as_raw_fd())
    }
}

pub fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
}

/// Write one message byte, retrying on EINTR.
pub fn send(fd: RawFd, msg: u8) -> std::io::Result<()> {
    loop {
        // SAFETY: writing one byte from a valid buffer.
        let r = unsafe { libc::write(fd, &msg as *const u8 as *const libc::c_void, 1) };
        if r == 1 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Read the messages waiting on a non-blocking pipe into `buf`: how many
/// bytes came, 0 when none are waiting (or the pipe is at its end).
pub fn read_waiting(fd: RawFd, buf: &mut [u8]) -> usize {
    // SAFETY: non-blocking read into a valid buffer of the stated length.
    let r = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
    r.max(0) as usize
}

/// Block until the write end is closed (the barrier is broadcast).
pub fn wait_closed(fd: RawFd) -> std::io::Result<()> {
    let mut b = 0u8;
    loop {
        // SAFETY: reading one byte into a valid buffer.
        let r = unsafe { libc::read(fd, &mut b as *mut u8 as *mut libc::c_void, 1) };
        match r {
            0 => return Ok(()),
            1 => continue, // nobody writes barrier pipes; ignore stray bytes
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

/// Non-blocking check that the write end has been closed.
pub fn is_closed(fd: RawFd) -> bool {
    let mut b = 0u8;
    // SAFETY: reading one byte into a valid buffer from a non-blocking fd.
    let r = unsafe { libc::read(fd, &mut b as *mut u8 as *mut libc::c_void, 1) };
    r == 0
}
