//! Shared helpers: run the built binary against a private temporary store.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

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
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A fast run of the harness self-check so tests have something stored.
pub fn quick_run(s: &Sandbox, label: &str) -> String {
    let o = s.run(&["run", "null_loop", "--quick", "--label", label, "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["runs"][0]["id"].as_str().unwrap().to_string()
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
