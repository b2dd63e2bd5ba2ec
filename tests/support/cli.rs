//! The built binary run against a temporary database (`TOUCHSTONE_DB`),
//! never the user's: what the end-to-end test binaries share.

use std::path::Path;
use std::process::{Command, Output};

/// `touchstone ARGS` on the database `db`, whatever its exit.
pub fn touchstone(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_touchstone"))
        .args(args)
        .env("TOUCHSTONE_DB", db)
        .output()
        .expect("touchstone runs")
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
