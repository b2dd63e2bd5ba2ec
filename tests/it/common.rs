//! Shared helpers: run the built binary against a private temporary store.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use touchstone_results::store::{Open, Store};
use touchstone_results::Run;

pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("results.sqlite")
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A file `name` in the sandbox holding `contents`.
    pub fn file(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// The touchstone command with this sandbox's store and temp dir.
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_touchstone"));
        c.env("TOUCHSTONE_DB", self.db())
            .env("TMPDIR", self.dir.path())
            .env_remove("XDG_DATA_HOME");
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().unwrap()
    }

    /// The sandbox's store, created, holding `runs` as imported.
    pub fn store(&self, runs: &[Run]) {
        let mut store = Store::open(&self.db(), Open::CreateIfMissing).unwrap();
        store.import_runs(runs).unwrap();
    }

    /// The command started in the background, its output kept for
    /// `wait_with_output`.
    pub fn spawn<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&self, args: I) -> Child {
        spawn_kept(self.cmd().args(args))
    }

    /// The command started in the background, its output thrown away.
    pub fn spawn_silent<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&self, args: I) -> Child {
        self.cmd()
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    /// The command started in the background reading what the test writes
    /// to its standard input, its output kept for `wait_with_output`.
    pub fn spawn_fed<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&self, args: I) -> Child {
        spawn_kept(self.cmd().args(args).stdin(Stdio::piped()))
    }

    /// `run` with the test-only failpoint `at` armed (`TOUCHSTONE_FAILPOINT`,
    /// see crates/cli/src/session.rs): a build or store failure injected.
    pub fn run_failing<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(
        &self,
        at: &str,
        args: I,
    ) -> Output {
        self.cmd()
            .args(args)
            .env("TOUCHSTONE_FAILPOINT", at)
            .output()
            .unwrap()
    }

    /// `run` of a command line as typed, its words split at white space.
    pub fn run_line(&self, line: &str) -> Output {
        self.run(&words(line))
    }
}

/// A command line's words, split at white space (no quoting: for
/// arguments without spaces).
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// That the command succeeded and its standard output says each of
/// `phrases`; that output.
#[track_caller]
pub fn succeeded_saying(o: &Output, phrases: &[&str]) -> String {
    assert!(o.status.success(), "{}", text(o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    for phrase in phrases {
        assert!(out.contains(phrase), "{phrase:?} not in: {out}");
    }
    out
}

/// That the command's output (standard output and error) says `phrase`.
#[track_caller]
pub fn assert_says(o: &Output, phrase: &str) {
    let out = text(o);
    assert!(out.contains(phrase), "{phrase:?} not in: {out}");
}

/// That the command was refused as bad input (exit status 2) saying `phrase`.
#[track_caller]
pub fn assert_refused(o: &Output, phrase: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", text(o));
    assert_says(o, phrase);
}

/// A fast run of the harness self-check so tests have something stored.
pub fn quick_run(s: &Sandbox, label: &str) -> String {
    let o = s.run(&["run", "null_loop", "--quick", "--label", label, "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["runs"][0]["id"].as_str().unwrap().to_string()
}

/// `child`'s exit once it ends, at most `limit` from now; past that it is
/// killed and the test fails saying `stuck`.
#[track_caller]
pub fn wait_within(child: &mut Child, limit: Duration, stuck: &str) -> ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("{stuck}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The address a started `touchstone serve` says it listens on (its first
/// line: "listening on ADDR …").
pub fn serve_address(serve: &mut Child) -> String {
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(serve.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    line.strip_prefix("listening on ")
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("serve said {line:?}"))
        .to_string()
}

/// `cmd` started in the background, its standard output and error kept
/// for `wait_with_output`.
pub fn spawn_kept(cmd: &mut Command) -> Child {
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Whether a process exists at all (a zombie counts as existing).
pub fn process_exists(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// What the sandbox's temporary directory holds besides the store: the
/// scratch directories and files a run left behind.
pub fn leftovers(s: &Sandbox) -> Vec<String> {
    std::fs::read_dir(s.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("results.sqlite"))
        .collect()
}

/// The scratch directories (`touchstone-*`) in the sandbox's temporary
/// directory: none outlives a run, once the next run swept a crashed one's.
pub fn scratch_dirs(s: &Sandbox) -> Vec<String> {
    leftovers(s)
        .into_iter()
        .filter(|n| n.starts_with("touchstone-"))
        .collect()
}

/// The stored runs as `runs --json` lists them (a reading command).
pub fn stored_runs(s: &Sandbox) -> Vec<Value> {
    let o = s.run(&["runs", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice::<Value>(&o.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// The names of a run's measurements (a run of an exported or shown document).
pub fn measurement_names(run: &Value) -> Vec<&str> {
    run["measurements"]
        .as_array()
        .expect("a run's measurements")
        .iter()
        .map(|m| m["name"].as_str().expect("a measurement's name"))
        .collect()
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no failure mode.
    unsafe { libc::geteuid() == 0 }
}

/// A prerequisite a test cannot have here (root, a tool, a daemon): the
/// test is recorded as skipped, by name with why, for `./run-tests`'s
/// totals, and should return; under CI a failure, never a silent pass.
pub use touchstone_catalogue::testing::skip::missing as unavailable;
/// What no package gives this machine (a kernel feature): recorded as
/// skipped, also under CI.
pub use touchstone_catalogue::testing::skip::not_supported_here;

/// A pseudo-terminal pair: the child gets `slave` as a standard stream,
/// the test reads or types through `master`.
pub struct Terminal {
    pub master: std::fs::File,
    pub slave: std::fs::File,
}

impl Terminal {
    pub fn open() -> Terminal {
        use std::os::fd::FromRawFd;
        // SAFETY: the standard sequence for a new pseudo-terminal pair;
        // each call is checked and the master descriptor is owned below.
        unsafe {
            let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
            assert!(fd >= 0, "posix_openpt");
            assert_eq!(libc::grantpt(fd), 0);
            assert_eq!(libc::unlockpt(fd), 0);
            let mut name = [0 as libc::c_char; 128];
            assert_eq!(libc::ptsname_r(fd, name.as_mut_ptr(), name.len()), 0);
            let name = std::ffi::CStr::from_ptr(name.as_ptr()).to_str().unwrap();
            let slave = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(name)
                .unwrap();
            Terminal {
                master: std::fs::File::from_raw_fd(fd),
                slave,
            }
        }
    }

    /// Say the terminal is `columns` wide (and 24 rows), as its window would.
    pub fn set_columns(&self, columns: u16) {
        use std::os::fd::AsRawFd;
        let size = libc::winsize {
            ws_row: 24,
            ws_col: columns,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCSWINSZ reads one winsize from a valid pointer.
        let r = unsafe { libc::ioctl(self.slave.as_raw_fd(), libc::TIOCSWINSZ, &size) };
        assert_eq!(r, 0, "TIOCSWINSZ");
    }

    /// Run `args` with this terminal as standard output and return what it
    /// printed there (line ends as written, the terminal's \r removed).
    pub fn printed(self, s: &Sandbox, args: &[&str]) -> String {
        use std::io::Read;
        let mut child = s
            .cmd()
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(self.slave)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // The last descriptor of the slave side closes with the child, and
        // reading the master then ends (EIO on Linux).
        let mut master = self.master;
        let reader = std::thread::spawn(move || {
            let mut out = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = master.read(&mut buf) {
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&buf[..n]);
            }
            out
        });
        assert!(child.wait().unwrap().success());
        String::from_utf8_lossy(&reader.join().unwrap()).replace('\r', "")
    }
}
