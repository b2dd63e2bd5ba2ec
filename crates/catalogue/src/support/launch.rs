//! Starting a program from a timed loop without copying the caller: a
//! vfork-style clone (CLONE_VM | CLONE_VFORK, as posix_spawn does), an
//! execv, and a wait4 for its end. Shared by `app` (one program run per
//! iteration) and the `multiuser` workload (one shell command per
//! transaction).
//!
//! Why not fork: a fork copies the calling process's page tables and makes
//! every page it then writes a copy-on-write fault, all inside the timed
//! interval; on /bin/true that added about 0.1 ms to every run. A clone that
//! shares the memory until the exec copies nothing. The stack the child
//! runs on until its exec is allocated once, with the launcher, so a launch
//! allocates nothing.
//!
//! The launched program stays in the caller's process group, so whoever
//! kills that group (the harness after a measurement, the workload engine
//! after a trial or on Ctrl-C) kills it and whatever it started; it also
//! dies with the caller (PR_SET_PDEATHSIG).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use touchstone_harness::Fallible;

use super::sys;

/// Bytes of stack for the cloned child: it only makes system calls.
const CHILD_STACK_BYTES: usize = 64 * 1024;

/// Where a launched program's standard output and error go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Inherited from the caller.
    Inherit,
    /// To /dev/null.
    Discard,
    /// Output discarded, error to this descriptor (kept open by the caller).
    ErrorTo(libc::c_int),
}

/// Launches programs; holds what every launch reuses: /dev/null (the
/// programs' standard input) and the clone's stack. Make one per process
/// that launches (it is not shared across a fork's children).
pub struct Launcher {
    devnull: libc::c_int,
    stack: Vec<u8>,
}

/// What the cloned child needs, and where it reports a failed exec (the
/// memory is shared until the exec, so the parent reads it after clone
/// returns).
#[repr(C)]
struct Launch {
    /// Null: run no program (an empty launch, to measure the overhead).
    program: *const libc::c_char,
    argv: *const *const libc::c_char,
    devnull: libc::c_int,
    /// Descriptors for standard output and error; -1: inherit.
    out: libc::c_int,
    err: libc::c_int,
    exec_errno: libc::c_int,
}

/// The cloned child, on its own stack in the parent's memory until execv
/// replaces it: only system calls, no allocation, no locks. The launching
/// process has no signal handlers a signal could run here (the harness
/// resets Ctrl-C's and Rust's own only catch faults), and the handler table
/// is the child's own copy (no CLONE_SIGHAND), so resetting SIGPIPE to its
/// default — Rust ignores it, and a program must not inherit that — leaves
/// the parent's alone.
extern "C" fn launched(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the parent's `Launch`, alive until clone returns,
    // which is after this child has exec'd or exited (CLONE_VFORK).
    unsafe {
        let l = &mut *(arg as *mut Launch);
        // Die with the launching process; read nothing from the terminal.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::dup2(l.devnull, 0);
        if l.out >= 0 {
            libc::dup2(l.out, 1);
        }
        if l.err >= 0 {
            libc::dup2(l.err, 2);
        }
        if l.program.is_null() {
            libc::_exit(0);
        }
        libc::execv(l.program, l.argv);
        l.exec_errno = *libc::__errno_location();
        libc::_exit(127)
    }
}

/// A launched child, not yet waited for.
#[derive(Debug, Clone, Copy)]
pub struct Started {
    pub pid: libc::pid_t,
    /// Non-zero: the exec failed with this errno (the child exited 127).
    pub exec_errno: libc::c_int,
}

impl Launcher {
    /// Open /dev/null and allocate the clone's stack (untimed).
    pub fn new() -> Fallible<Launcher> {
        let devnull = sys::open_as("open", Path::new("/dev/null"), libc::O_RDWR)?;
        Ok(Launcher {
            devnull,
            stack: vec![0u8; CHILD_STACK_BYTES],
        })
    }

    /// Start `program` (a resolved path; null for no program) with `argv`
    /// (null-terminated) in a vfork-style clone; returns once the child has
    /// exec'd or exited. Allocates nothing.
    pub fn start(
        &mut self,
        program: *const libc::c_char,
        argv: *const *const libc::c_char,
        output: Output,
    ) -> Result<Started, String> {
        let (out, err) = match output {
            Output::Inherit => (-1, -1),
            Output::Discard => (self.devnull, self.devnull),
            Output::ErrorTo(fd) => (self.devnull, fd),
        };
        let mut launch = Launch {
            program,
            argv,
            devnull: self.devnull,
            out,
            err,
            exec_errno: 0,
        };
        // SAFETY: the stack is ours and outlives the child's use of it
        // (CLONE_VFORK suspends us until the child execs or exits); the top
        // is 16-byte aligned as the ABI wants.
        let pid = unsafe {
            let base = self.stack.as_mut_ptr();
            let top = base.add(self.stack.len());
            let top = top.sub(top as usize % 16);
            libc::clone(
                launched,
                top as *mut libc::c_void,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                &mut launch as *mut Launch as *mut libc::c_void,
            )
        };
        if pid < 0 {
            return Err(format!("clone: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: the child has exec'd or exited; it no longer writes here.
        let exec_errno = unsafe { std::ptr::read_volatile(&launch.exec_errno) };
        Ok(Started { pid, exec_errno })
    }

    /// Start and wait: Ok(rusage) when the program exited with status 0,
    /// otherwise why not ("could not be executed: …", "exited with status
    /// 2", "was killed by signal 9 (Killed)").
    pub fn run(
        &mut self,
        program: *const libc::c_char,
        argv: *const *const libc::c_char,
        output: Output,
    ) -> Result<libc::rusage, String> {
        let started = self.start(program, argv, output)?;
        let (status, ru) = wait(started.pid)?;
        verdict(status, started.exec_errno).map(|()| ru)
    }
}

impl Drop for Launcher {
    fn drop(&mut self) {
        // SAFETY: closing the descriptor `new` opened.
        unsafe { libc::close(self.devnull) };
    }
}

/// Ok when `status` is an exit with 0; otherwise why not, the failed
/// exec's errno first.
pub fn verdict(status: libc::c_int, exec_errno: libc::c_int) -> Result<(), String> {
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Ok(())
    } else if exec_errno != 0 {
        Err(format!(
            "could not be executed: {}",
            std::io::Error::from_raw_os_error(exec_errno)
        ))
    } else {
        Err(describe_status(status))
    }
}

/// "exited with status 2", "was killed by signal 9 (Killed)".
pub fn describe_status(status: libc::c_int) -> String {
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        // SAFETY: strsignal returns a static string for any number.
        let name = unsafe { std::ffi::CStr::from_ptr(libc::strsignal(sig)) };
        format!("was killed by signal {sig} ({})", name.to_string_lossy())
    } else if libc::WEXITSTATUS(status) == 127 {
        "exited with status 127 (could not be executed)".to_string()
    } else {
        format!("exited with status {}", libc::WEXITSTATUS(status))
    }
}

/// Wait for our child `pid` to end: its status and rusage.
pub fn wait(pid: libc::pid_t) -> Result<(libc::c_int, libc::rusage), String> {
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            return Ok((status, ru));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("wait4: {e}"));
        }
    }
}

/// The program's path: as given if it has a slash, else found on $PATH
/// (the default path when $PATH is unset).
pub fn resolve(program: &str) -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
    resolve_on(program, &path)
}

/// The search path a shell uses when $PATH is unset.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// `resolve` on the search path `path`.
pub fn resolve_on(program: &str, path: &std::ffi::OsStr) -> Result<PathBuf, String> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return if executable(&p) {
            Ok(p)
        } else {
            Err(format!("{program}: not an executable file"))
        };
    }
    std::env::split_paths(path)
        .map(|d| d.join(program))
        .find(|p| executable(p))
        .ok_or_else(|| format!("{program}: command not found on $PATH"))
}

/// A regular file this process may execute.
fn executable(p: &Path) -> bool {
    let Ok(c) = CString::new(p.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated path.
    p.is_file() && unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&CString]) -> Vec<*const libc::c_char> {
        args.iter()
            .map(|c| c.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect()
    }

    #[test]
    fn programs_run_and_failures_say_why() {
        let mut l = Launcher::new().unwrap();
        let sh = CString::new("/bin/sh").unwrap();
        let c = CString::new("-c").unwrap();
        let ok = CString::new("exit 0").unwrap();
        let three = CString::new("exit 3").unwrap();
        let v = argv(&[&sh, &c, &ok]);
        l.run(sh.as_ptr(), v.as_ptr(), Output::Discard).unwrap();
        let v = argv(&[&sh, &c, &three]);
        let e = l.run(sh.as_ptr(), v.as_ptr(), Output::Discard).unwrap_err();
        assert_eq!(e, "exited with status 3");
        let missing = CString::new("/nonexistent/program").unwrap();
        let v = argv(&[&missing]);
        let e = l
            .run(missing.as_ptr(), v.as_ptr(), Output::Discard)
            .unwrap_err();
        assert!(e.contains("could not be executed"), "{e}");
        // An empty launch: no program at all.
        l.run(std::ptr::null(), std::ptr::null(), Output::Discard)
            .unwrap();
    }

    #[test]
    fn programs_resolve_on_a_path() {
        assert!(resolve("sh").unwrap().is_absolute());
        assert!(resolve("no-such-program-here-xyz").is_err());
        assert!(resolve("/nonexistent/x").is_err());
        let empty = tempfile_dir();
        let e = resolve_on("sh", empty.as_os_str()).unwrap_err();
        assert!(e.contains("sh: command not found"), "{e}");
        let _ = std::fs::remove_dir(&empty);
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("touchstone-launch-test-{}", std::process::id()));
        let _ = std::fs::create_dir(&d);
        d
    }
}
