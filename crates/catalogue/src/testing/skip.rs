//! Tests that cannot run here for want of something outside the code (root,
//! a package, a daemon, a kernel feature) say so by name, in one way: each
//! skip is printed as a marked line and, when `TOUCHSTONE_TEST_SKIPS` names
//! a file (`./run-tests` sets it), appended to that file, so the runner's
//! closing totals list every test that passed without testing, with why.
//! Under CI (`CI` set, other than to `false` or `0`) a missing dependency
//! fails its test instead: CI installs everything in `.ci/apt-packages`.

use std::io::Write;

/// The environment variable naming the file skips are appended to.
pub const LOG_VAR: &str = "TOUCHSTONE_TEST_SKIPS";

/// Whether the tests run under CI, where nothing may be missing.
pub fn under_ci() -> bool {
    ci_value(std::env::var("CI").ok().as_deref())
}

fn ci_value(v: Option<&str>) -> bool {
    v.is_some_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// A dependency this machine lacks (root, a package, a daemon, a mount it
/// may not make): the calling test is recorded as skipped and should
/// return; under CI the test fails here, naming what was missing.
#[track_caller]
pub fn missing(why: &str) {
    assert!(
        !under_ci(),
        "CI: {why} (CI installs what the tests need: .ci/apt-packages)"
    );
    record("skipped", why);
}

/// Something no package gives this machine (a kernel built without a
/// feature, a file system that refuses O_DIRECT): recorded as skipped
/// also under CI, since installing anything would not change it.
pub fn not_supported_here(why: &str) {
    record("skipped", why);
}

/// Part of a test could not run here (as `not_supported_here`); the rest
/// of it did. Recorded so the totals list it, but the test still counts.
pub fn part_not_supported_here(part: &str, why: &str) {
    record("partly", &format!("{part}: {why}"));
}

fn record(kind: &str, why: &str) {
    record_to(std::env::var_os(LOG_VAR).as_deref(), kind, why);
}

/// The test's name is its thread's (libtest names each test's thread after
/// it); the binary's is the executable's, without cargo's hash.
fn record_to(log: Option<&std::ffi::OsStr>, kind: &str, why: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("(unnamed test thread)");
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .map(|n| match n.rsplit_once('-') {
            Some((stem, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => stem.to_string(),
            _ => n,
        })
        .unwrap_or_default();
    let why = why.split_whitespace().collect::<Vec<_>>().join(" ");
    let line = format!("{kind} {binary} {test}: {why}\n");
    eprint!("{line}");
    if let Some(path) = log {
        // One write of one line to a file opened for appending: lines
        // from tests running at once do not interleave.
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            panic!("cannot record the skip in {}: {e}", path.to_string_lossy());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skip_is_recorded_by_test_and_binary_with_its_reason_on_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("skips");
        record_to(Some(log.as_os_str()), "skipped", "no  daemon\nhere");
        record_to(Some(log.as_os_str()), "partly", "the direct half: refused");
        let text = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let test = "testing::skip::tests::a_skip_is_recorded_by_test_and_binary_with_its_reason_on_one_line";
        assert_eq!(
            lines,
            [
                format!("skipped touchstone_catalogue {test}: no daemon here"),
                format!("partly touchstone_catalogue {test}: the direct half: refused"),
            ]
        );
    }

    #[test]
    fn ci_means_set_and_not_false() {
        assert!(!ci_value(None));
        assert!(!ci_value(Some("")));
        assert!(!ci_value(Some("false")));
        assert!(!ci_value(Some("0")));
        assert!(ci_value(Some("true")));
        assert!(ci_value(Some("1")));
    }
}
