//! `touchstone app -- COMMAND…`: time a whole program with the harness's
//! rigour. The command is a benchmark whose one iteration is one run of the
//! program (fork, exec, wait4), measured with fixed single-run intervals:
//! warm-up runs, R timed runs, median and confidence interval, and from
//! wait4's rusage the user and system CPU time and peak resident memory of
//! the timed runs. A run that exits non-zero or dies of a signal fails the
//! measurement: it is reported, never timed. The result is stored as the
//! measurement `app/NAME` (group `app`, unit ns: lower is better) of a run of
//! its own, so `show`, `report` and `compare` treat it like any benchmark.

use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::Utc;
use touchstone_harness::plan::{DEFAULT_REPETITIONS, MAX_REPETITIONS};
use touchstone_harness::{
    calibrate, measure_case, scratch, signals, Benchmark, CaseLabel, Context, Fallible, Plan, Shape,
};
use touchstone_report::terminal;
use touchstone_results::store::{Open, Store};
use touchstone_results::units::format_value;
use touchstone_results::{checks, host, json, Run, RunOptions, RunStatus, Tool, Unit};

use super::run::{new_run_id, profile};
use crate::args::AppArgs;
use crate::error::CliError;
use crate::progress::Progress;

/// Most warm-up runs.
const MAX_WARMUP: u32 = 1000;

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

fn cstring(s: impl AsRef<OsStr>) -> Result<CString, CliError> {
    CString::new(s.as_ref().as_bytes())
        .map_err(|_| CliError::Usage("arguments may not contain NUL bytes".into()))
}

fn shell(cmd: &str) -> Result<Vec<CString>, CliError> {
    Ok(vec![cstring("/bin/sh")?, cstring("-c")?, cstring(cmd)?])
}

/// The stored name's NAME part: checked, so it joins across machines.
fn check_name(name: &str) -> Result<(), CliError> {
    if name.is_empty()
        || name
            .chars()
            .any(|c| c == '/' || c.is_whitespace() || c.is_control())
    {
        return Err(CliError::Usage(format!(
            "--name '{name}': give a non-empty name without '/' or spaces (e.g. reco-run-2)"
        )));
    }
    Ok(())
}

pub fn app(db: Option<PathBuf>, a: AppArgs) -> Result<(), CliError> {
    // Stage one: everything checked before anything runs.
    let repetitions = a.repetitions.unwrap_or(DEFAULT_REPETITIONS);
    if repetitions == 0 || repetitions > MAX_REPETITIONS {
        return Err(CliError::Usage(format!(
            "--repetitions {repetitions}: must be 1..={MAX_REPETITIONS}"
        )));
    }
    if a.warmup == 0 || a.warmup > MAX_WARMUP {
        return Err(CliError::Usage(format!(
            "--warmup {}: must be 1..={MAX_WARMUP} (the harness always makes one untimed run first)",
            a.warmup
        )));
    }
    let program = resolve(&a.command[0]).map_err(CliError::Usage)?;
    let name = match &a.name {
        Some(n) => n.clone(),
        None => Path::new(&a.command[0])
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| a.command[0].clone()),
    };
    check_name(&name)?;
    let full_name = format!("app/{name}");
    let argv = a
        .command
        .iter()
        .map(cstring)
        .collect::<Result<Vec<_>, _>>()?;
    let mut bench = AppBench {
        program: cstring(&program)?,
        argv,
        setup: a.setup.as_deref().map(shell).transpose()?,
        cleanup: a.cleanup.as_deref().map(shell).transpose()?,
        show_output: a.show_output,
        extra_warmups: a.warmup - 1,
        recent: vec![Usage::default(); repetitions as usize],
        runs: 0,
        devnull: -1,
        argv_ptrs: Vec::new(),
    };
    let mut store = if a.no_store {
        None
    } else {
        Some(Store::open(&super::db_path(db), Open::CreateIfMissing)?)
    };

    signals::install();
    scratch::remove_stale();
    let clock = calibrate();
    let plan = Plan {
        repetitions,
        parallel: 1,
        warmup_ns: 0,
        min_interval_ns: clock.min_interval_ns,
        // A program may legitimately run for hours: no stall limit to speak of.
        stall_timeout: Duration::from_secs(30 * 24 * 3600),
        ..Plan::default()
    };
    let shape = Shape::latency(1.0).with_fixed_iterations(1);
    let mut params = std::collections::BTreeMap::new();
    params.insert("command".to_string(), a.command.join(" "));
    if let Some(s) = &a.setup {
        params.insert("setup".to_string(), s.clone());
    }
    if let Some(c) = &a.cleanup {
        params.insert("cleanup".to_string(), c.clone());
    }
    let label = CaseLabel {
        name: full_name.clone(),
        benchmark: "app".into(),
        group: "app".into(),
        params,
    };
    let host = host::collect();
    let warnings = checks::host_warnings(&host, profile());
    let started_at = Utc::now();
    let mut progress = Progress::new(1);
    for w in &warnings {
        progress.line(&format!("warning: {} — {}", w.message, w.remedy));
    }
    progress.start_case(&full_name);
    let result = measure_case(&label, &mut bench, &shape, None, &plan, &mut progress);
    progress.finish();
    let m = result.map_err(CliError::Harness)?;

    let mut run = Run {
        id: new_run_id(),
        label: a.label.clone(),
        host,
        tool: Tool {
            name: "touchstone".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            profile: profile().into(),
            rustc: None,
        },
        clock,
        options: RunOptions {
            selection: vec![full_name.clone()],
            repetitions,
            parallel: vec![1],
            quick: false,
            target_interval_ns: plan.target_ns,
            parallel_interval_ns: plan.parallel_target_ns,
            warmup_ns: 0,
        },
        started_at,
        ended_at: Some(Utc::now()),
        status: RunStatus::Complete,
        warnings,
        measurements: vec![m],
    };
    if let Some(s) = store.as_mut() {
        s.begin_run(&Run {
            measurements: Vec::new(),
            status: RunStatus::Running,
            ..run.clone()
        })?;
        s.add_measurement(&run.id, &run.measurements[0])?;
        s.finish_run(&run.id, run.status, run.ended_at.unwrap(), &run.warnings)?;
    }
    if a.json {
        run.ended_at = run.ended_at.or(Some(Utc::now()));
        println!("{}", json::to_string(vec![run]));
        return Ok(());
    }
    let m = &run.measurements[0];
    print!(
        "{}\n{}",
        terminal::run_header(&run),
        terminal::measurements(&run.measurements)
    );
    let get = |k: &str| m.extra.get(k).copied().unwrap_or(f64::NAN);
    println!(
        "per run: user {}, system {}, peak RSS {:.1} MiB; {} warm-up and {} timed runs, all exited 0",
        format_value(Unit::Ns, get("user_cpu_s") * 1e9),
        format_value(Unit::Ns, get("system_cpu_s") * 1e9),
        get("peak_rss_bytes") / (1024.0 * 1024.0),
        a.warmup,
        repetitions
    );
    if let Some(s) = &store {
        println!("stored as run {} in {}", run.id, s.path().display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
