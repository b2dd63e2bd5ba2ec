//! The application benchmark (`touchstone app -- COMMAND…`): a whole
//! program timed with the harness's rigour. One iteration is one run of the
//! program (fork, exec, wait4), measured with fixed single-run intervals:
//! warm-up runs, R timed runs, median and confidence interval, and from
//! wait4's rusage the user and system CPU time and peak resident memory of
//! the timed runs. A run that exits non-zero or dies of a signal fails the
//! measurement: it is reported, never timed. The measurement is named
//! `app/NAME` (group `app`, unit ns: lower is better), so `show`, `report`
//! and `compare` treat it like any benchmark. The CLI parses the command
//! line into an `AppSpec`; `AppSpec::check` turns it into a case ready to
//! measure, before anything runs.

use std::collections::BTreeMap;
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use touchstone_harness::{Benchmark, CaseLabel, Context, Fallible, Plan, Shape};

/// Most warm-up runs.
pub const MAX_WARMUP: u32 = 1000;

/// What the user asked to time, as typed.
#[derive(Debug, Clone, Default)]
pub struct AppSpec {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// The NAME of `app/NAME`; the program's file name when absent.
    pub name: Option<String>,
    /// Shell commands run (untimed) before and after each timed run.
    pub setup: Option<String>,
    pub cleanup: Option<String>,
    /// Let the program's output through instead of discarding it.
    pub show_output: bool,
    /// Untimed runs before the timed ones (at least 1).
    pub warmup: u32,
    /// Timed runs (the plan's repetitions).
    pub repetitions: u32,
}

/// A checked application case, ready to measure.
pub struct AppCase {
    pub label: CaseLabel,
    pub bench: AppBench,
    pub shape: Shape,
}

impl AppSpec {
    /// Check everything before anything runs: the warm-up count, the
    /// program (found on $PATH), the stored name, and the arguments.
    pub fn check(&self) -> Result<AppCase, String> {
        if self.warmup == 0 || self.warmup > MAX_WARMUP {
            return Err(format!(
                "--warmup {}: must be 1..={MAX_WARMUP} (the harness always makes one untimed run first)",
                self.warmup
            ));
        }
        let first = self
            .command
            .first()
            .ok_or_else(|| "no command to time".to_string())?;
        let program = resolve(first)?;
        let name = match &self.name {
            Some(n) => n.clone(),
            None => Path::new(first)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| first.clone()),
        };
        check_name(&name)?;
        let argv = self
            .command
            .iter()
            .map(cstring)
            .collect::<Result<Vec<_>, _>>()?;
        let bench = AppBench {
            program: cstring(&program)?,
            argv,
            setup: self.setup.as_deref().map(shell).transpose()?,
            cleanup: self.cleanup.as_deref().map(shell).transpose()?,
            show_output: self.show_output,
            extra_warmups: self.warmup - 1,
            recent: vec![Usage::default(); self.repetitions.max(1) as usize],
            runs: 0,
            devnull: -1,
            argv_ptrs: Vec::new(),
        };
        let mut params = BTreeMap::new();
        params.insert("command".to_string(), self.command.join(" "));
        if let Some(s) = &self.setup {
            params.insert("setup".to_string(), s.clone());
        }
        if let Some(c) = &self.cleanup {
            params.insert("cleanup".to_string(), c.clone());
        }
        Ok(AppCase {
            label: CaseLabel {
                name: format!("app/{name}"),
                benchmark: "app".into(),
                group: "app".into(),
                params,
            },
            bench,
            shape: Shape::latency(1.0).with_fixed_iterations(1),
        })
    }

    /// The plan: one program run per interval, no warm-up interval beyond
    /// the harness's one (the bench makes the extra warm-up runs itself),
    /// and no stall limit to speak of — a program may run for hours.
    pub fn plan(&self) -> Plan {
        Plan {
            repetitions: self.repetitions,
            parallel: 1,
            warmup_ns: 0,
            stall_timeout: Duration::from_secs(30 * 24 * 3600),
            ..Plan::default()
        }
    }
}

/// Resource use of one run, from wait4.
#[derive(Clone, Copy, Default, Debug)]
struct Usage {
    user_s: f64,
    system_s: f64,
    max_rss_bytes: f64,
}

/// One program run per iteration.
pub struct AppBench {
    /// Resolved program path and argv, built in the parent.
    program: CString,
    argv: Vec<CString>,
    setup: Option<Vec<CString>>,
    cleanup: Option<Vec<CString>>,
    show_output: bool,
    /// Untimed runs to make in `setup`, on top of the harness's one warm-up
    /// interval.
    extra_warmups: u32,
    /// The usage of the last `recent.len()` runs, a ring: after the timed
    /// intervals it holds exactly the timed runs.
    recent: Vec<Usage>,
    runs: u64,
    devnull: libc::c_int,
    /// Null-terminated pointer arrays for execv, built in `setup`.
    argv_ptrs: Vec<*const libc::c_char>,
}

// SAFETY: the raw pointers point into `argv`, owned by the same struct, and
// are only used by the process that built them.
unsafe impl Send for AppBench {}

fn describe_status(status: libc::c_int) -> String {
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

fn seconds(tv: libc::timeval) -> f64 {
    tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6
}

impl AppBench {
    /// Fork and exec `argv[0]` (a resolved path) with `argv`, wait for it
    /// with wait4, and return its rusage or why it failed. Between fork
    /// and exec the child only makes system calls.
    fn spawn(
        &self,
        program: &CString,
        argv: &[*const libc::c_char],
        quiet: bool,
    ) -> Result<libc::rusage, String> {
        // SAFETY: this benchmark process is single-threaded; the child only
        // calls async-signal-safe functions before execv or _exit.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(format!("fork: {}", std::io::Error::last_os_error()));
        }
        if pid == 0 {
            unsafe {
                // Die with the benchmark process; read nothing from the terminal.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                libc::dup2(self.devnull, 0);
                if quiet {
                    libc::dup2(self.devnull, 1);
                }
                libc::execv(program.as_ptr(), argv.as_ptr());
                libc::_exit(127);
            }
        }
        let mut status = 0;
        // SAFETY: a zeroed rusage is a valid out-parameter.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: waiting for our own child.
            let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
            if r == pid {
                break;
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(format!("wait4: {e}"));
            }
        }
        if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
            Ok(ru)
        } else {
            Err(describe_status(status))
        }
    }

    fn run_shell(&self, what: &str, cmd: &[CString]) -> Fallible {
        let ptrs: Vec<*const libc::c_char> = cmd
            .iter()
            .map(|c| c.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        self.spawn(&cmd[0], &ptrs, !self.show_output)
            .map(|_| ())
            .map_err(|e| format!("the {what} command `{}` {e}", shell_text(cmd)).into())
    }

    /// One run of the program, its usage recorded.
    fn one_run(&mut self) -> Fallible {
        let ru = self
            .spawn(&self.program, &self.argv_ptrs, !self.show_output)
            .map_err(|e| {
                format!(
                    "`{}` {e}; a failing command is not timed (see its output with --show-output)",
                    command_text(&self.argv)
                )
            })?;
        let slot = (self.runs % self.recent.len() as u64) as usize;
        self.recent[slot] = Usage {
            user_s: seconds(ru.ru_utime),
            system_s: seconds(ru.ru_stime),
            // ru_maxrss is in KiB on Linux.
            max_rss_bytes: ru.ru_maxrss as f64 * 1024.0,
        };
        self.runs += 1;
        Ok(())
    }
}

fn command_text(argv: &[CString]) -> String {
    argv.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_text(cmd: &[CString]) -> String {
    cmd.last()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl Benchmark for AppBench {
    /// Untimed: open /dev/null, build execv's argument array, then the
    /// warm-up runs beyond the harness's own one.
    fn setup(&mut self, _ctx: &Context) -> Fallible {
        let path = CString::new("/dev/null").expect("no NUL");
        // SAFETY: a valid path.
        self.devnull = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if self.devnull < 0 {
            return Err(format!("open /dev/null: {}", std::io::Error::last_os_error()).into());
        }
        self.argv_ptrs = self
            .argv
            .iter()
            .map(|c| c.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        for _ in 0..self.extra_warmups {
            self.prepare(1)?;
            self.one_run()?;
            self.conclude(1)?;
        }
        Ok(())
    }

    /// Untimed: the --setup command, if any.
    fn prepare(&mut self, _n: u64) -> Fallible {
        match &self.setup {
            Some(cmd) => self.run_shell("setup", cmd),
            None => Ok(()),
        }
    }

    /// Timed: `n` (always 1: fixed iterations) runs of the program, each a
    /// fork, an execv and a wait4 for its end; so the interval is the
    /// program's wall-clock time plus process creation and reaping (as any
    /// shell would add, without a shell). A run that exits non-zero or dies
    /// of a signal makes this an error: the harness reports it and records
    /// no figure.
    fn run(&mut self, n: u64) -> Fallible {
        for _ in 0..n {
            self.one_run()?;
        }
        Ok(())
    }

    /// Untimed: the --cleanup command, if any.
    fn conclude(&mut self, _n: u64) -> Fallible {
        match &self.cleanup {
            Some(cmd) => self.run_shell("cleanup", cmd),
            None => Ok(()),
        }
    }

    fn cleanup(&mut self) {
        if self.devnull >= 0 {
            // SAFETY: closing the descriptor setup opened.
            unsafe { libc::close(self.devnull) };
            self.devnull = -1;
        }
    }

    /// Means over the timed runs (the last R) of user and system CPU
    /// seconds; the largest peak resident set size among them.
    fn extras(&mut self) -> Vec<(String, f64)> {
        let k = (self.runs as usize).min(self.recent.len()).max(1);
        let timed = &self.recent[..k];
        let mean = |f: fn(&Usage) -> f64| timed.iter().map(f).sum::<f64>() / k as f64;
        vec![
            ("user_cpu_s".into(), mean(|u| u.user_s)),
            ("system_cpu_s".into(), mean(|u| u.system_s)),
            (
                "peak_rss_bytes".into(),
                timed.iter().map(|u| u.max_rss_bytes).fold(0.0, f64::max),
            ),
        ]
    }
}

/// The program's path: as given if it has a slash, else found on $PATH.
fn resolve(program: &str) -> Result<PathBuf, String> {
    let executable = |p: &Path| {
        let Ok(c) = CString::new(p.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: a valid NUL-terminated path.
        p.is_file() && unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return if executable(&p) {
            Ok(p)
        } else {
            Err(format!("{program}: not an executable file"))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| executable(p))
        .ok_or_else(|| format!("{program}: command not found on $PATH"))
}

fn cstring(s: impl AsRef<OsStr>) -> Result<CString, String> {
    CString::new(s.as_ref().as_bytes())
        .map_err(|_| "arguments may not contain NUL bytes".to_string())
}

fn shell(cmd: &str) -> Result<Vec<CString>, String> {
    Ok(vec![cstring("/bin/sh")?, cstring("-c")?, cstring(cmd)?])
}

/// The stored name's NAME part: checked, so it joins across machines.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || name
            .chars()
            .any(|c| c == '/' || c.is_whitespace() || c.is_control())
    {
        return Err(format!(
            "--name '{name}': give a non-empty name without '/' or spaces (e.g. reco-run-2)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(command: &[&str]) -> AppSpec {
        AppSpec {
            command: command.iter().map(|s| s.to_string()).collect(),
            warmup: 1,
            repetitions: 3,
            ..AppSpec::default()
        }
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("reco-2").is_ok());
        assert!(check_name("a/b").is_err());
        assert!(check_name("a b").is_err());
        assert!(check_name("").is_err());
    }

    #[test]
    fn programs_resolve_on_path() {
        assert!(resolve("sh").unwrap().is_absolute());
        assert!(resolve("no-such-program-here-xyz").is_err());
        assert!(resolve("/nonexistent/x").is_err());
    }

    #[test]
    fn a_spec_becomes_a_named_case_or_is_refused() {
        let case = spec(&["/bin/true", "x"]).check().unwrap();
        assert_eq!(case.label.name, "app/true");
        assert_eq!(case.label.params["command"], "/bin/true x");
        let named = AppSpec {
            name: Some("t-2".into()),
            ..spec(&["true"])
        };
        assert_eq!(named.check().unwrap().label.name, "app/t-2");
        let no_warmup = AppSpec {
            warmup: 0,
            ..spec(&["true"])
        };
        assert!(no_warmup.check().is_err());
        assert!(spec(&["true", "a\u{0}b"]).check().is_err());
    }
}
