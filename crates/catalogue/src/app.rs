//! The application benchmark (`touchstone app -- COMMAND…`): a whole
//! program timed with the harness's rigour. One iteration is one run of the
//! program (a vfork-style clone, exec, wait4 — as posix_spawn and so
//! hyperfine start programs), measured with fixed single-run intervals:
//! warm-up runs, R timed runs, median and confidence interval, and from
//! wait4's rusage the user and system CPU time and peak resident memory of
//! the timed runs. A run that exits non-zero or dies of a signal fails the
//! measurement: it is reported, never timed. The measurement is named
//! `app/NAME` (group `app`, unit ns: lower is better), so `show`, `report`
//! and `compare` treat it like any benchmark. The CLI parses the command
//! line into an `AppSpec`; `AppSpec::check` turns it into a case ready to
//! measure, before anything runs. Around the runs, untimed shell commands
//! as hyperfine places them: `setup` once before the runs (warm-ups
//! included), `prepare` before and `conclude` after every run, `cleanup`
//! once after the last timed run.
//!
//! Why not fork: a fork copies the benchmark process's page tables and makes
//! every page it then writes a copy-on-write fault, all inside the timed
//! interval; on /bin/true that added about 0.1 ms to every run (0.66 ms
//! against hyperfine -N's 0.54 ms). A clone with CLONE_VM | CLONE_VFORK
//! shares the memory until the exec and copies nothing (`support::launch`,
//! shared with the `multiuser` workload). What remains — the clone, the
//! child's exit and wait4 — is measured once before the timed runs
//! (`launch_overhead_ns`, with no program at all) and reported, not
//! subtracted: any shell or hyperfine -N pays it too.

use std::collections::BTreeMap;
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, Instant};

use touchstone_harness::{Benchmark, CaseLabel, Context, Fallible, Plan, Shape};

use crate::support::launch::{resolve, verdict, wait, Launcher, Output};

/// Most warm-up runs.
pub const MAX_WARMUP: u32 = 1000;

/// What the user asked to time, as typed.
#[derive(Debug, Clone, Default)]
pub struct AppSpec {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// The NAME of `app/NAME`; the program's file name when absent.
    pub name: Option<String>,
    /// Shell commands run untimed once before all runs (warm-ups
    /// included) and once after the last timed run (hyperfine's --setup
    /// and --cleanup).
    pub setup: Option<String>,
    pub cleanup: Option<String>,
    /// Shell commands run untimed before and after every run (hyperfine's
    /// --prepare and --conclude).
    pub prepare: Option<String>,
    pub conclude: Option<String>,
    /// Let the program's output through instead of discarding it.
    pub show_output: bool,
    /// Untimed runs before the timed ones (at least 1).
    pub warmup: u32,
    /// Timed runs (the plan's repetitions).
    pub repetitions: u32,
    /// A run of the program (or of --setup/--cleanup) that lasts longer is
    /// killed and fails the measurement.
    pub timeout: Option<Duration>,
}

/// Launches of no program at all made to measure the launch overhead.
const OVERHEAD_PROBES: usize = 31;

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
            prepare: self.prepare.as_deref().map(shell).transpose()?,
            conclude: self.conclude.as_deref().map(shell).transpose()?,
            intervals: 0,
            // The plan's one warm-up interval (no warm-up time, fixed
            // iterations: exactly one) and its timed intervals.
            last_interval: 1 + self.plan().repetitions as u64,
            show_output: self.show_output,
            timeout: self.timeout,
            extra_warmups: self.warmup - 1,
            recent: vec![Usage::default(); self.repetitions.max(1) as usize],
            runs: 0,
            launcher: None,
            argv_ptrs: Vec::new(),
            launch_overhead_ns: f64::NAN,
        };
        let mut params = BTreeMap::new();
        params.insert("command".to_string(), self.command.join(" "));
        for (key, cmd) in [
            ("setup", &self.setup),
            ("prepare", &self.prepare),
            ("conclude", &self.conclude),
            ("cleanup", &self.cleanup),
        ] {
            if let Some(c) = cmd {
                params.insert(key.to_string(), c.clone());
            }
        }
        if self.timeout == Some(Duration::ZERO) {
            return Err("--timeout 0: give a positive duration (e.g. 30s)".into());
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
            // Every run of the program is a fresh process: one round.
            rounds: 1,
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
    prepare: Option<Vec<CString>>,
    conclude: Option<Vec<CString>>,
    /// Intervals concluded so far, and the last one the plan makes: after
    /// it, `cleanup` runs.
    intervals: u64,
    last_interval: u64,
    show_output: bool,
    timeout: Option<Duration>,
    /// Untimed runs to make in `setup`, on top of the harness's one warm-up
    /// interval.
    extra_warmups: u32,
    /// The usage of the last `recent.len()` runs, a ring: after the timed
    /// intervals it holds exactly the timed runs.
    recent: Vec<Usage>,
    runs: u64,
    /// /dev/null and the clone's stack, made in `setup` (in the measuring
    /// process), so a run allocates nothing.
    launcher: Option<Launcher>,
    /// Null-terminated pointer arrays for execv, built in `setup`.
    argv_ptrs: Vec<*const libc::c_char>,
    /// Median time to launch and reap a child that runs no program.
    launch_overhead_ns: f64,
}

// SAFETY: the raw pointers point into `argv`, owned by the same struct, and
// are only used by the process that built them.
unsafe impl Send for AppBench {}

fn seconds(tv: libc::timeval) -> f64 {
    tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6
}

impl AppBench {
    /// Start `program` (a resolved path; null for no program) with `argv`
    /// (`support::launch`), wait for it with wait4 (within the timeout, if
    /// any), and return its rusage or why it failed. The program stays in
    /// the benchmark process's process group, which the harness kills whole
    /// when a measurement fails or ends, so nothing it started outlives the
    /// measurement.
    fn spawn(
        &mut self,
        program: *const libc::c_char,
        argv: *const *const libc::c_char,
        quiet: bool,
    ) -> Result<libc::rusage, String> {
        let output = if quiet {
            Output::Discard
        } else {
            Output::Inherit
        };
        let launcher = self
            .launcher
            .as_mut()
            .ok_or_else(|| "the launcher is made in setup".to_string())?;
        let started = launcher.start(program, argv, output)?;
        let waited = match self.timeout {
            Some(limit) => wait_within(started.pid, limit),
            None => wait(started.pid),
        };
        let (status, ru) = waited?;
        verdict(status, started.exec_errno).map(|()| ru)
    }

    /// The median time to launch and reap a child that runs no program:
    /// what every run costs before the program's own exec.
    fn measure_launch_overhead(&mut self) -> Fallible<f64> {
        let mut times = Vec::with_capacity(OVERHEAD_PROBES);
        for _ in 0..OVERHEAD_PROBES {
            let start = Instant::now();
            self.spawn(std::ptr::null(), std::ptr::null(), true)
                .map_err(|e| format!("launching an empty child: {e}"))?;
            times.push(start.elapsed().as_nanos() as f64);
        }
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }

    /// Run the `what` command (setup, prepare, …) if one was given.
    fn run_around(
        &mut self,
        what: &str,
        cmd: fn(&mut Self) -> &mut Option<Vec<CString>>,
    ) -> Fallible {
        match cmd(self).take() {
            Some(c) => {
                let r = self.run_shell(what, &c);
                *cmd(self) = Some(c);
                r
            }
            None => Ok(()),
        }
    }

    fn run_shell(&mut self, what: &str, cmd: &[CString]) -> Fallible {
        let ptrs: Vec<*const libc::c_char> = cmd
            .iter()
            .map(|c| c.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        self.spawn(cmd[0].as_ptr(), ptrs.as_ptr(), !self.show_output)
            .map(|_| ())
            .map_err(|e| format!("the {what} command `{}` {e}", shell_text(cmd)).into())
    }

    /// One run of the program, its usage recorded.
    fn one_run(&mut self) -> Fallible {
        let (program, argv) = (self.program.as_ptr(), self.argv_ptrs.as_ptr());
        let ru = self.spawn(program, argv, !self.show_output).map_err(|e| {
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

/// `wait`, but a child still running after `limit` is killed (SIGKILL),
/// reaped, and reported as timed out. The child's end is watched through
/// a pidfd (Linux 5.3), which becomes readable when it exits; the pid cannot
/// be reused before we reap it, so opening the pidfd after clone is safe.
fn wait_within(pid: libc::pid_t, limit: Duration) -> Result<(libc::c_int, libc::rusage), String> {
    // SAFETY: pidfd_open on our own unreaped child.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as libc::c_int;
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: our own child; kill and reap it rather than leave it.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        let _ = wait(pid);
        return Err(format!(
            "--timeout needs pidfd_open (Linux 5.3 or later): {e}"
        ));
    }
    let deadline = Instant::now() + limit;
    let ended = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ts = libc::timespec {
            tv_sec: left.as_secs() as libc::time_t,
            tv_nsec: left.subsec_nanos() as libc::c_long,
        };
        // SAFETY: one valid pollfd and a valid timeout.
        let r = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
        if r > 0 {
            break true;
        }
        if r == 0 && left.is_zero() {
            break false;
        }
        // EINTR, or woken a little early: look again.
    };
    // SAFETY: closing the descriptor opened above.
    unsafe { libc::close(fd) };
    if ended {
        return wait(pid);
    }
    // SAFETY: our own child, not yet reaped, so the pid is still its.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    wait(pid)?;
    Err(format!(
        "did not finish within the --timeout of {}; it was killed, with every process it started",
        timeout_text(limit)
    ))
}

fn timeout_text(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1.0 {
        format!("{:.0} ms", s * 1e3)
    } else {
        format!("{s} s")
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
    /// Untimed: open /dev/null, build execv's argument array, measure the
    /// launch overhead, then the --setup command and the warm-up runs
    /// beyond the harness's own one.
    fn setup(&mut self, _ctx: &Context) -> Fallible {
        self.launcher = Some(Launcher::new()?);
        self.argv_ptrs = self
            .argv
            .iter()
            .map(|c| c.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        self.launch_overhead_ns = self.measure_launch_overhead()?;
        self.run_around("setup", |b| &mut b.setup)?;
        for _ in 0..self.extra_warmups {
            self.run_around("prepare", |b| &mut b.prepare)?;
            self.one_run()?;
            self.run_around("conclude", |b| &mut b.conclude)?;
        }
        Ok(())
    }

    /// Untimed: the --prepare command, if any.
    fn prepare(&mut self, _n: u64) -> Fallible {
        self.run_around("prepare", |b| &mut b.prepare)
    }

    /// Timed: `n` (always 1: fixed iterations) runs of the program, each a
    /// vfork-style clone, an execv and a wait4 for its end (with a pidfd
    /// and ppoll first under --timeout); so the interval is the program's
    /// wall-clock time plus process creation and reaping (as any shell or
    /// hyperfine -N would add, without a shell). A run that exits non-zero or dies
    /// of a signal makes this an error: the harness reports it and records
    /// no figure.
    fn run(&mut self, n: u64) -> Fallible {
        for _ in 0..n {
            self.one_run()?;
        }
        Ok(())
    }

    /// Untimed: the --conclude command, if any; after the last timed run,
    /// the --cleanup command too (its failure fails the measurement, as a
    /// failing run's does).
    fn conclude(&mut self, _n: u64) -> Fallible {
        self.run_around("conclude", |b| &mut b.conclude)?;
        self.intervals += 1;
        if self.intervals == self.last_interval {
            self.run_around("cleanup", |b| &mut b.cleanup)?;
        }
        Ok(())
    }

    fn cleanup(&mut self) {
        // Closes /dev/null.
        self.launcher = None;
    }

    /// Means over the timed runs (the last R) of user and system CPU
    /// seconds; the largest peak resident set size among them; the launch
    /// overhead measured before them.
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
            ("launch_overhead_ns".into(), self.launch_overhead_ns),
        ]
    }
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

    fn ready(spec: AppSpec) -> AppBench {
        let mut b = spec.check().unwrap().bench;
        let ctx = Context {
            process: 0,
            parallel: 1,
            scratch: std::env::temp_dir(),
        };
        b.setup(&ctx).unwrap();
        b
    }

    #[test]
    fn a_run_past_its_timeout_is_killed_with_a_clear_error() {
        let mut b = ready(AppSpec {
            timeout: Some(Duration::from_millis(200)),
            ..spec(&["sleep", "30"])
        });
        let start = Instant::now();
        let e = b.run(1).unwrap_err().0;
        assert!(start.elapsed() < Duration::from_secs(10), "{e}");
        assert!(e.contains("--timeout of 200 ms"), "{e}");
        assert!(e.contains("killed"), "{e}");
        // A quick command under the same limit runs as usual.
        let mut quick = ready(AppSpec {
            timeout: Some(Duration::from_secs(20)),
            ..spec(&["true"])
        });
        quick.run(1).unwrap();
        b.cleanup();
        quick.cleanup();
    }

    #[test]
    fn a_program_that_cannot_be_executed_says_why() {
        // A file that is executable by mode but not a program the kernel runs.
        let path =
            std::env::temp_dir().join(format!("touchstone-not-a-program-{}", std::process::id()));
        std::fs::write(&path, b"\x00\x01\x02 not an executable format").unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let mut b = ready(spec(&[path.to_str().unwrap()]));
        let e = b.run(1).unwrap_err().0;
        assert!(e.contains("could not be executed"), "{e}");
        assert!(e.contains("Exec format error"), "{e}");
        b.cleanup();
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn the_launch_overhead_is_measured_and_reported() {
        let mut b = ready(spec(&["true"]));
        b.run(1).unwrap();
        let extras: BTreeMap<String, f64> = b.extras().into_iter().collect();
        let overhead = extras["launch_overhead_ns"];
        // Launching a process takes some microseconds, never nothing and
        // (even on a loaded machine) far less than a second.
        assert!(overhead > 1_000.0 && overhead < 1e9, "{overhead}");
        b.cleanup();
    }

    #[test]
    fn the_program_does_not_inherit_an_ignored_sigpipe() {
        // Rust ignores SIGPIPE, and an ignored signal stays ignored across
        // exec; a program must start with the default, as from a shell.
        // Bit 13 of SigIgn (0x1000) is SIGPIPE.
        let mut b = ready(spec(&[
            "sh",
            "-c",
            "ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/self/status); test $(( 0x$ign & 0x1000 )) -eq 0",
        ]));
        b.run(1).unwrap();
        b.cleanup();
    }
}
