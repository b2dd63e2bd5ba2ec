//! multiuser: N simulated interactive users of a build or analysis machine
//! (seed 004's multi-user environment: "multiple background tasks
//! ('users')"; a transaction is "any command that causes a prompt"), a
//! workload on the load-curve engine.
//!
//! Each user is one client process that runs a fixed, versioned script of
//! shell commands (`multiuser/script-v1.txt`, compiled into the binary with
//! the C program it edits, so every machine runs the same mix): list files,
//! edit a file with sed, compile a small C program, grep, sort, wc, copy a
//! file, and a word-frequency pipeline. Each command is one transaction, and
//! each line of the script its own operation type, so every command has its
//! own latency histogram. A user runs the script in order, round and round,
//! starting at its own line (users are spread over the mix), in its own
//! directory under the trial's scratch directory (removed with it; it is
//! also the commands' $TMPDIR, so what a killed cc leaves goes too). An
//! optional mean think time (`think`, default 0: capacity) is drawn from an
//! exponential distribution before each command and is not part of its
//! latency (it does lower the rate, as a thinking user does).
//!
//! Throughput is transactions per second (× 60 for 004's per minute)
//! against users; the default ladder doubles from 1 to 8 × the usable CPUs;
//! the engine finds the peak, knee and crossover.
//!
//! Timed (by the engine, per transaction): launching `/bin/sh -c COMMAND`
//! (a vfork-style clone and exec, `support::launch`, allocating nothing),
//! everything the shell runs, and the wait4 that reaps it — what a user
//! waits between pressing return and the next prompt. With a think time,
//! the sleep before it is outside (`Client::started_ns`).
//!
//! Tools: every program a line names must be on $PATH before anything is
//! measured; a missing one is named in the error. The C compiler is the one
//! a machine may lack for good reason: `compile:off` leaves the compile
//! transaction out of the mix, and the result's name says so
//! (`multiuser/script:v1/compile:off/…`), so it compares only with runs of
//! the same mix; with the default `compile:on` a missing `cc` is an error
//! that names this remedy. (Dropping it silently would make two results
//! with the same name measure different mixes.)
//!
//! Nothing outlives a trial: the commands stay in their user's process
//! group, which the engine kills whole when the trial ends, fails or is
//! interrupted, and they die with their user (PR_SET_PDEATHSIG).

use std::ffi::{CString, OsStr};
use std::os::fd::RawFd;
use std::path::Path;

use touchstone_harness::clock::now_ns;
use touchstone_harness::workload::{
    default_loads_from, tasks_limit, Client, ClientContext, Workload, MAX_OP_TYPES,
};
use touchstone_harness::{BenchError, Fallible};

use crate::family::{Family, RunContext};
use crate::params::{Param, Point};
use crate::support::launch::{resolve_on, Launcher, Output, DEFAULT_PATH};
use crate::support::memory::Rng;
use crate::support::sys::{close, cstring, open_as};

pub const NAME: &str = "multiuser";
pub const SUMMARY: &str =
    "N simulated users running a fixed script of shell commands (edit, compile, grep, sort, pipelines), transactions/s (seed 004)";
/// What one operation is: one command, from return to the next prompt.
pub const OPERATION: &str = "transaction";
/// The most users.
pub const MAX_LOAD: u32 = 512;
/// The shell every command runs in.
pub const SHELL: &str = "/bin/sh";
/// The line of the script that `compile:off` leaves out.
pub const COMPILE: &str = "compile";
/// The longest single think time: a user silent for the engine's stall
/// timeout (30 s) would be taken for a stalled one. At the largest mean
/// (5 s) 1.8 % of the draws are cut to this.
const MAX_THINK_NS: u64 = 20_000_000_000;
/// The most processes one user runs at once (its own, the shell, and the
/// longest pipeline's five), for the `ulimit -u` check.
const PROCESSES_PER_USER: u64 = 7;

/// The scripts, by version: the commands and the C program they compile.
/// A new version is a new entry; an old one is never changed.
const SCRIPTS: &[(&str, &str, &str)] = &[(
    "v1",
    include_str!("multiuser/script-v1.txt"),
    include_str!("multiuser/calc-v1.c"),
)];

pub const SCRIPT: Param = Param::choice("script", &["v1"])
    .help("the version of the script every user runs (stored with the result)");

pub const COMPILE_PARAM: Param = Param::choice("compile", &["on", "off"])
    .measured(&["on"])
    .help("on: the mix compiles a C program (needs cc); off: the compile transaction is left out");

pub const THINK: Param = Param::duration("think", 0, 5_000_000_000)
    .measured(&["0s"])
    .help("mean think time before each command (exponentially distributed, each at most 20 s; 0: none, to measure capacity)");

pub const PARAMS: &[Param] = &[SCRIPT, COMPILE_PARAM, THINK];

/// One line of a script: a transaction type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub name: &'static str,
    pub tools: Vec<&'static str>,
    pub command: &'static str,
}

/// A parsed script and the C program its users compile.
#[derive(Debug, Clone)]
pub struct Script {
    pub version: &'static str,
    pub lines: Vec<Line>,
    pub program: &'static str,
}

impl Script {
    /// The shipped script of `version`.
    pub fn shipped(version: &str) -> Result<Script, String> {
        let (v, text, program) = SCRIPTS
            .iter()
            .find(|(v, _, _)| *v == version)
            .ok_or_else(|| format!("script:{version}: no such version"))?;
        Script::parse(v, text, program)
    }

    /// Parse `NAME TOOLS COMMAND` lines ('#' starts a comment line).
    pub fn parse(
        version: &'static str,
        text: &'static str,
        program: &'static str,
    ) -> Result<Script, String> {
        let mut lines: Vec<Line> = Vec::new();
        for (n, raw) in text.lines().enumerate() {
            let l = raw.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let bad = |why: &str| format!("script {version}, line {}: {why}: {l}", n + 1);
            let (name, rest) = l
                .split_once(char::is_whitespace)
                .ok_or_else(|| bad("give NAME TOOLS COMMAND"))?;
            let rest = rest.trim_start();
            let (tools, command) = rest
                .split_once(char::is_whitespace)
                .ok_or_else(|| bad("give NAME TOOLS COMMAND"))?;
            if lines.iter().any(|x| x.name == name) {
                return Err(bad("a transaction name is used twice"));
            }
            lines.push(Line {
                name,
                tools: tools.split(',').collect(),
                command: command.trim(),
            });
        }
        if lines.is_empty() || lines.len() > MAX_OP_TYPES {
            return Err(format!(
                "script {version}: {} commands; a script has 1 to {MAX_OP_TYPES}",
                lines.len()
            ));
        }
        Ok(Script {
            version,
            lines,
            program,
        })
    }

    /// The script without its compile transaction (`compile:off`).
    pub fn without_compile(mut self) -> Script {
        self.lines.retain(|l| l.name != COMPILE);
        self
    }

    /// Refuse, naming them, the tools the script needs that `path` (a
    /// $PATH) lacks; a missing C compiler with the `compile:off` remedy.
    pub fn check_tools(&self, path: &OsStr) -> Result<(), String> {
        if !Path::new(SHELL).is_file() {
            return Err(format!(
                "{NAME}: every command runs in {SHELL}, which this machine lacks"
            ));
        }
        let shown = path.to_string_lossy();
        let mut missing: Vec<&str> = Vec::new();
        let mut compiler = None;
        for l in &self.lines {
            for t in &l.tools {
                if resolve_on(t, path).is_err() && !missing.contains(t) {
                    if l.name == COMPILE {
                        compiler = Some(*t);
                    } else {
                        missing.push(t);
                    }
                }
            }
        }
        if !missing.is_empty() {
            let also = compiler
                .map(|c| format!(" (and the C compiler `{c}`)"))
                .unwrap_or_default();
            return Err(format!(
                "{NAME}: the script ({}) needs {}{also}, not found on $PATH ({shown}); install \
                 them (Debian: coreutils, sed, grep) or run with a $PATH that has them",
                self.version,
                missing
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ));
        }
        if let Some(c) = compiler {
            return Err(format!(
                "{NAME}: the script's {COMPILE} transaction needs a C compiler, `{c}`, not found on \
                 $PATH ({shown}); install one (Debian: apt install gcc) or leave compiling out of \
                 the mix with {NAME}/compile:off (the result's name then says so)"
            ));
        }
        Ok(())
    }
}

/// Build the workload from a point of its parameters; a missing tool is
/// refused here, before anything runs.
pub fn build(p: &Point, ctx: &RunContext) -> Result<Box<dyn Workload>, String> {
    let mut script = Script::shipped(p.text(SCRIPT.name))?;
    if p.text(COMPILE_PARAM.name) == "off" {
        script = script.without_compile();
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
    script.check_tools(&path)?;
    let mut w = MultiUser::new(script, p.num(THINK.name));
    w.quick = ctx.quick;
    Ok(Box::new(w))
}

/// The workload: the script and the think time.
pub struct MultiUser {
    pub script: Script,
    /// Mean think time before each command, ns (0: none).
    pub think_ns: u64,
    /// Quick mode: a shorter default ladder.
    pub quick: bool,
    /// The transaction types: the script's line names, in order.
    types: Vec<&'static str>,
}

impl MultiUser {
    pub fn new(script: Script, think_ns: u64) -> MultiUser {
        let types = script.lines.iter().map(|l| l.name).collect();
        MultiUser {
            script,
            think_ns,
            quick: false,
            types,
        }
    }
}

impl Workload for MultiUser {
    fn op_types(&self) -> &[&str] {
        &self.types
    }
    fn max_load(&self) -> Option<u32> {
        Some(MAX_LOAD)
    }
    /// Doubling from 1 to 8 × the usable CPUs (the knee lies about at the
    /// CPUs; past it, the curve shows what overload does). Quick: three
    /// points, 1, the CPUs and 4 × the CPUs — one user, the machine full,
    /// and overloaded — within its time budget.
    fn default_loads(&self, usable: usize) -> Vec<u32> {
        if self.quick {
            let mut loads = vec![1, usable as u32, 4 * usable as u32];
            loads.dedup();
            loads.iter_mut().for_each(|l| *l = (*l).min(MAX_LOAD));
            loads
        } else {
            // default_loads_from doubles up to 4 × the CPUs it is given.
            default_loads_from(1, 2 * usable, Some(MAX_LOAD))
        }
    }
    /// Every user runs up to `PROCESSES_PER_USER` processes at once.
    fn check_load(&self, load: u32) -> Result<(), String> {
        let needed = load as u64 * PROCESSES_PER_USER + 2;
        let limit = tasks_limit();
        if needed > limit {
            return Err(format!(
                "load {load} needs up to {needed} processes ({PROCESSES_PER_USER} per user: the \
                 user, its shell and a pipeline), above this user's limit of {limit} \
                 (`ulimit -u`); raise it or use fewer users"
            ));
        }
        Ok(())
    }

    fn client(&self, ctx: &ClientContext) -> Fallible<Box<dyn Client + '_>> {
        let dir = ctx.scratch.join(format!("user-{}", ctx.client));
        let io = |what: &str, e: std::io::Error| BenchError(format!("{what}: {e}"));
        std::fs::create_dir(&dir).map_err(|e| io(&format!("mkdir {}", dir.display()), e))?;
        std::fs::write(dir.join("calc.c"), self.script.program)
            .map_err(|e| io("write calc.c", e))?;
        std::fs::write(dir.join("notes.txt"), notes()).map_err(|e| io("write notes.txt", e))?;
        // This process is the user's alone: its directory is the commands'
        // working directory and their temporary directory (what cc leaves
        // there when a trial kills it goes with the scratch directory), and
        // the C locale makes sort and grep do the same work on every machine.
        std::env::set_current_dir(&dir).map_err(|e| io("chdir", e))?;
        std::env::set_var("TMPDIR", &dir);
        std::env::set_var("LC_ALL", "C");
        // Closed on exec: each command gets it as its standard error
        // through dup2.
        let err_fd = open_as(
            "open",
            &dir.join(".stderr"),
            libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND,
        )?;
        let shell = cstring(SHELL)?;
        let dash_c = cstring("-c")?;
        let commands = self
            .script
            .lines
            .iter()
            .map(|l| cstring(l.command))
            .collect::<Fallible<Vec<_>>>()?;
        let argvs = commands
            .iter()
            .map(|c| {
                [
                    shell.as_ptr(),
                    dash_c.as_ptr(),
                    c.as_ptr(),
                    std::ptr::null(),
                ]
            })
            .collect();
        let lines = self.script.lines.len();
        Ok(Box::new(User {
            launcher: Launcher::new()?,
            argvs,
            _strings: (shell, dash_c, commands),
            next: (ctx.client as usize * lines) / ctx.load.max(1) as usize % lines,
            think_ns: self.think_ns,
            rng: Rng::new(ctx.seed),
            started: 0,
            err_fd,
            user: ctx.client,
            script: &self.script,
        }))
    }
}

/// One simulated user: its launcher, each command's argv, where it is in
/// the script.
struct User<'a> {
    launcher: Launcher,
    /// `sh -c COMMAND` for each line, pointing into `_strings`.
    argvs: Vec<[*const libc::c_char; 4]>,
    _strings: (CString, CString, Vec<CString>),
    next: usize,
    think_ns: u64,
    rng: Rng,
    /// When the current command began (after any think time).
    started: u64,
    /// The commands' standard error (a file in the user's directory).
    err_fd: RawFd,
    user: u32,
    script: &'a Script,
}

impl User<'_> {
    /// Sleep an exponentially distributed think time of mean `think_ns`.
    fn think(&mut self) {
        // Uniform in (0, 1]: 53 random bits, never 0.
        let u = ((self.rng.next() >> 11) + 1) as f64 / (1u64 << 53) as f64;
        let ns = (-(self.think_ns as f64) * u.ln()).min(MAX_THINK_NS as f64) as u64;
        let ts = libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: a relative sleep on a valid timespec; an early wake-up
        // (a signal) only shortens one think time.
        unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &ts, std::ptr::null_mut()) };
    }

    /// What the commands wrote to standard error lately, for an error.
    fn stderr_tail(&self) -> String {
        let text = std::fs::read("/proc/self/cwd/.stderr").unwrap_or_default();
        let tail = &text[text.len().saturating_sub(400)..];
        String::from_utf8_lossy(tail).trim().to_string()
    }
}

impl Client for User<'_> {
    /// Timed: one command — the launch of `/bin/sh -c COMMAND`, everything
    /// it runs, and reaping it. The think time, if any, comes before and
    /// is not part of it (`started_ns`).
    #[inline]
    fn op(&mut self) -> Fallible<usize> {
        if self.think_ns > 0 {
            self.think();
        }
        self.started = now_ns();
        let ty = self.next;
        let argv = &self.argvs[ty];
        let ran = self
            .launcher
            .run(argv[0], argv.as_ptr(), Output::ErrorTo(self.err_fd));
        if let Err(why) = ran {
            let line = &self.script.lines[ty];
            let said = self.stderr_tail();
            return Err(BenchError(format!(
                "user {}: the {} transaction `{}` {why}{}",
                self.user,
                line.name,
                line.command,
                if said.is_empty() {
                    String::new()
                } else {
                    format!("; it said: {said}")
                }
            )));
        }
        self.next = (ty + 1) % self.argvs.len();
        Ok(ty)
    }

    fn started_ns(&self) -> Option<u64> {
        (self.think_ns > 0).then_some(self.started)
    }
}

impl Drop for User<'_> {
    fn drop(&mut self) {
        close(self.err_fd);
    }
}

/// Words of the text each user searches and sorts (part of the script's
/// version: changing them, or `notes`, is a new version).
const WORDS: &[&str] = &[
    "kernel",
    "buffer",
    "cache",
    "page",
    "thread",
    "socket",
    "signal",
    "queue",
    "driver",
    "inode",
    "block",
    "memory",
    "process",
    "scheduler",
    "interrupt",
    "timer",
    "file",
    "network",
    "packet",
    "device",
    "module",
    "config",
    "build",
    "release",
    "patch",
    "branch",
    "merge",
    "commit",
    "review",
    "test",
    "report",
    "latency",
    "throughput",
    "load",
    "knee",
    "curve",
    "sample",
    "median",
    "window",
    "trial",
];
/// Lines of notes.txt.
const NOTE_LINES: usize = 2000;

/// notes.txt: NOTE_LINES lines of a number and 4 to 11 words, from a fixed
/// generator (the same bytes on every machine; about 120 KB).
pub fn notes() -> String {
    let mut s = String::with_capacity(NOTE_LINES * 64);
    // A 64-bit LCG (Knuth's MMIX constants), private to this file so that
    // the text cannot change with the rest of the code base.
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = |n: u64| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) % n
    };
    for i in 0..NOTE_LINES {
        s.push_str(&format!("{:05}", (i as u64 * 7919) % 100_000));
        for _ in 0..4 + next(8) {
            s.push(' ');
            s.push_str(WORDS[next(WORDS.len() as u64) as usize]);
        }
        s.push('\n');
    }
    s
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
    use crate::testing::{in_child, reaped, short_trial};
    use touchstone_harness::workload::{cpu::usable_cpus, run_trial, TrialPlan};

    fn shipped() -> Script {
        Script::shipped("v1").unwrap()
    }

    #[test]
    fn the_shipped_script_parses_into_its_mix() {
        let s = shipped();
        let names: Vec<&str> = s.lines.iter().map(|l| l.name).collect();
        assert_eq!(
            names,
            ["list", "edit", "compile", "search", "sort", "count", "copy", "pipeline"]
        );
        let pipeline = s.lines.last().unwrap();
        assert_eq!(pipeline.tools, ["tr", "sort", "uniq", "head"]);
        assert!(pipeline.command.starts_with("tr -cs"), "{pipeline:?}");
        assert!(s.program.contains("#define SCALE 1000"));
        let off = shipped().without_compile();
        assert_eq!(off.lines.len(), 7);
        assert!(off.lines.iter().all(|l| l.name != COMPILE));
        assert!(Script::shipped("v9").is_err());
        // The text is the same bytes every time (part of the version).
        assert_eq!(notes(), notes());
        assert_eq!(notes().lines().count(), NOTE_LINES);
    }

    #[test]
    fn malformed_scripts_are_refused() {
        assert!(Script::parse("t", "a sh\n", "")
            .unwrap_err()
            .contains("NAME TOOLS COMMAND"));
        let twice = "a sh true\na sh true\n";
        assert!(Script::parse("t", twice, "").unwrap_err().contains("twice"));
        assert!(Script::parse("t", "# nothing\n", "")
            .unwrap_err()
            .contains("1 to"));
    }

    #[test]
    fn a_missing_tool_is_named_before_anything_runs() {
        let empty =
            std::env::temp_dir().join(format!("touchstone-mu-empty-{}", std::process::id()));
        std::fs::create_dir_all(&empty).unwrap();
        let e = shipped().check_tools(empty.as_os_str()).unwrap_err();
        for tool in ["`ls`", "`sed`", "`grep`", "`sort`", "`tr`", "`cc`", "$PATH"] {
            assert!(e.contains(tool), "{tool}: {e}");
        }
        // Only the compiler missing: the remedy is compile:off.
        let bins = std::env::temp_dir().join(format!("touchstone-mu-bins-{}", std::process::id()));
        std::fs::create_dir_all(&bins).unwrap();
        for l in &shipped().without_compile().lines {
            for t in &l.tools {
                let _ = std::os::unix::fs::symlink(
                    crate::support::launch::resolve(t).unwrap(),
                    bins.join(t),
                );
            }
        }
        let e = shipped().check_tools(bins.as_os_str()).unwrap_err();
        assert!(e.contains("C compiler") && e.contains("compile:off"), "{e}");
        shipped()
            .without_compile()
            .check_tools(bins.as_os_str())
            .unwrap();
        let _ = std::fs::remove_dir_all(&empty);
        let _ = std::fs::remove_dir_all(&bins);
    }

    /// One user, outside the engine: each command of the script once per
    /// round, in order from its starting line, each exiting 0, in its own
    /// directory.
    #[test]
    fn a_user_runs_every_command_in_order_round_after_round() {
        let scratch =
            std::env::temp_dir().join(format!("touchstone-mu-user-{}", std::process::id()));
        std::fs::create_dir_all(&scratch).unwrap();
        let at = scratch.clone();
        let verdict = in_child(move || {
            let w = MultiUser::new(shipped(), 0);
            let ctx = ClientContext {
                client: 1,
                clients: 2,
                load: 2,
                cpus: usable_cpus().unwrap(),
                scratch: at.clone(),
                seed: 7,
            };
            let mut user = w.client(&ctx).map_err(|e| e.0)?;
            let seen: Vec<usize> = (0..16).map(|_| user.op().unwrap()).collect();
            // User 1 of 2 starts half-way through the 8 lines.
            let expected: Vec<usize> = (0..16).map(|i| (4 + i) % 8).collect();
            if seen != expected {
                return Err(format!("{seen:?}"));
            }
            let dir = at.join("user-1");
            for f in ["calc", "top.txt", "sorted.txt", "found.txt", "notes.bak"] {
                if !dir.join(f).exists() {
                    return Err(format!("{f} was not made"));
                }
            }
            // The edit leaves the program as it was.
            let c = std::fs::read_to_string(dir.join("calc.c")).unwrap();
            (c == shipped().program)
                .then_some(())
                .ok_or("calc.c changed".into())
        });
        let _ = std::fs::remove_dir_all(&scratch);
        verdict.unwrap();
    }

    #[test]
    fn a_failing_command_fails_the_trial_saying_which_and_why() {
        let script =
            Script::parse("t", "ok sh true\nbroken ls ls no-such-file-here\n", "").unwrap();
        let mut w = MultiUser::new(script, 0);
        let cpus = usable_cpus().unwrap();
        let e = run_trial(&mut w, 1, &cpus, &short_trial(), 0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the broken transaction `ls no-such-file-here`"),
            "{e}"
        );
        assert!(e.contains("exited with status 2"), "{e}");
        assert!(e.contains("No such file"), "{e}");
    }

    /// Two users through the engine: every transaction type is counted,
    /// the counts add up, and no process (user, shell or command) is left.
    #[test]
    fn the_mix_runs_and_every_transaction_type_is_counted() {
        let mut w = MultiUser::new(shipped(), 0);
        // On one CPU: the tests beside this one, some timing things, keep
        // the other.
        let cpus = &usable_cpus().unwrap()[..1];
        // Long enough for each user to run half the script (they start at
        // opposite ends) even on a busy machine.
        let plan = TrialPlan {
            window_ns: 1_500_000_000,
            ..short_trial()
        };
        let o = run_trial(&mut w, 2, cpus, &plan, 0).unwrap();
        assert!(o.every_client_ran_through(), "{:?}", o.clients);
        assert_eq!(o.histograms.len(), 8);
        let counts: Vec<u64> = o.histograms.iter().map(|h| h.len()).collect();
        assert!(counts.iter().all(|&c| c > 0), "{counts:?}");
        assert_eq!(counts.iter().sum::<u64>(), o.ops);
        // The compile is the heaviest command of the mix.
        let p50 = |i: usize| o.histograms[i].value_at_quantile(0.5);
        assert!(p50(2) > p50(0), "compile {} vs list {}", p50(2), p50(0));
        for &pid in &o.pids {
            assert!(reaped(pid), "process {pid} outlived the trial");
        }
    }

    #[test]
    fn think_time_is_outside_the_transaction() {
        let script = Script::parse("t", "nothing sh true\n", "").unwrap();
        let mut w = MultiUser::new(script, 20_000_000);
        let cpus = usable_cpus().unwrap();
        let plan = TrialPlan {
            window_ns: 400_000_000,
            ..short_trial()
        };
        let o = run_trial(&mut w, 1, &cpus, &plan, 0).unwrap();
        // A mean think of 20 ms: far fewer than the hundreds of `true`s a
        // user without think time runs in 0.4 s; each one's latency is the
        // command alone, well under the think time.
        assert!(o.ops > 2 && o.ops < 100, "{}", o.ops);
        assert!(o.latency().value_at_quantile(0.5) < 20_000_000);
    }

    #[test]
    fn the_ladder_reaches_8_times_the_cpus_and_quick_is_three_points() {
        let mut w = MultiUser::new(shipped(), 0);
        assert_eq!(w.default_loads(2), vec![1, 2, 4, 8, 16]);
        w.quick = true;
        assert_eq!(w.default_loads(2), vec![1, 2, 8]);
        assert_eq!(w.default_loads(1), vec![1, 4]);
        if tasks_limit() < u64::MAX / 2 {
            let e = w.check_load(u32::MAX / 8).unwrap_err();
            assert!(e.contains("ulimit -u"), "{e}");
        }
        assert!(w.check_load(2).is_ok());
    }
}
