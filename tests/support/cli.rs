//! The built binary run against a temporary database (`TOUCHSTONE_DB`),
//! never the user's: what the end-to-end test binaries share.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use touchstone_results::store::{Open, Store};
use touchstone_results::Run;

/// `touchstone ARGS` on the database `db`, whatever its exit.
pub fn touchstone(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_touchstone"))
        .args(args)
        .env("TOUCHSTONE_DB", db)
        .output()
        .expect("touchstone runs")
}

/// A command line's words, split at white space (no quoting: for
/// arguments without spaces).
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// `touchstone ARGS` on `db`, which must succeed: its standard output.
pub fn ok(db: &Path, args: &[&str]) -> String {
    let out = touchstone(db, args);
    assert!(
        out.status.success(),
        "touchstone {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `touchstone ARGS` on `db`, which must refuse with exit status 2 (bad
/// input): its standard error.
pub fn fails(db: &Path, args: &[&str]) -> String {
    let out = touchstone(db, args);
    assert_eq!(
        out.status.code(),
        Some(2),
        "touchstone {args:?} should fail"
    );
    String::from_utf8(out.stderr).unwrap()
}

/// A store in `dir` holding `runs`: its path.
pub fn store(dir: &Path, runs: &[Run]) -> PathBuf {
    let db = dir.join("results.sqlite");
    let mut s = Store::open(&db, Open::CreateIfMissing).unwrap();
    s.import_runs(runs).unwrap();
    db
}
