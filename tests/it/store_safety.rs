//! A store that never loses or hides a result (issue 18): several runs and
//! a report on one store at once, a result the store cannot take for a
//! while, a killed run, deleting and relabelling, an older store, a
//! read-only and a full file system, and a damaged stored document. The
//! file-system tests mount a tmpfs of their own (root only; skipped, saying
//! why, otherwise) and unmount it in a guard, also when they fail.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;
use touchstone_results::store::BUSY_TIMEOUT;

use crate::common::{
    assert_refused, assert_says, quick_run, spawn_kept, stored_runs, text, unavailable, Sandbox,
    Terminal,
};

/// The one document `show --json` prints for `spec`.
fn shown_run(s: &Sandbox, spec: &str) -> Value {
    let o = s.run(&["show", spec, "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice::<Value>(&o.stdout).unwrap()["runs"][0].clone()
}

/// That the run a command printed (`--json`) is stored complete as printed,
/// with `measurements` measurements.
#[track_caller]
fn assert_stored_as_printed(s: &Sandbox, printed: &Value, measurements: usize) {
    let stored = shown_run(s, printed["id"].as_str().unwrap());
    assert_eq!(stored["status"], "complete");
    assert_eq!(stored["measurements"], printed["measurements"]);
    assert_eq!(
        stored["measurements"].as_array().unwrap().len(),
        measurements
    );
}

fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether the first stored run holds at least `n` measurements (false
/// while no store or run exists yet).
fn first_run_has(s: &Sandbox, n: u64) -> bool {
    let o = s.run(&["runs", "--json"]);
    o.status.success()
        && serde_json::from_slice::<Value>(&o.stdout)
            .is_ok_and(|v| v[0]["measurements"].as_u64().is_some_and(|m| m >= n))
}

fn is_root() -> bool {
    // SAFETY: geteuid has no failure mode.
    unsafe { libc::geteuid() == 0 }
}

/// A file system mounted for one test; unmounted when dropped, so a failed
/// assertion never leaves it behind.
struct Mount {
    point: PathBuf,
}

impl Mount {
    fn mount(args: &[&str], point: &Path) -> Option<Mount> {
        match Command::new("mount").args(args).arg(point).output() {
            Ok(o) if o.status.success() => Some(Mount {
                point: point.to_path_buf(),
            }),
            Ok(o) => {
                unavailable(&format!(
                    "mount {args:?} failed: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                ));
                None
            }
            Err(e) => {
                unavailable(&format!("cannot run mount: {e}"));
                None
            }
        }
    }

    /// A tmpfs of `size` (e.g. "1m") at `point`, or None, saying why.
    fn tmpfs(point: &Path, size: &str) -> Option<Mount> {
        if !is_root() {
            unavailable("mounting a tmpfs needs root");
            return None;
        }
        std::fs::create_dir_all(point).unwrap();
        Mount::mount(
            &[
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ],
            point,
        )
    }

    /// `file` made read-only by binding it onto itself, read-only.
    fn read_only_file(file: &Path) -> Option<Mount> {
        let m = Mount::mount(&["--bind", file.to_str().unwrap()], file)?;
        let o = Command::new("mount")
            .args(["-o", "remount,bind,ro"])
            .arg(file)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        Some(m)
    }

    fn remount_read_only(&self) {
        let o = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&self.point)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let unmounted = Command::new("umount")
            .arg(&self.point)
            .status()
            .is_ok_and(|s| s.success());
        if !unmounted {
            // Busy (a process still inside): detach it now, freed when idle.
            let _ = Command::new("umount").arg("-l").arg(&self.point).status();
        }
    }
}

/// Four runs started together on one store while another process holds
/// its write lock for longer than the old 2 s busy timeout, and reports read
/// during all of it: every run waits its turn, completes, and stores every
/// measurement it printed.
#[test]
fn four_runs_and_reports_at_once_on_one_store_all_complete() {
    let s = Sandbox::new();
    quick_run(&s, "before");
    let holder = rusqlite::Connection::open(s.db()).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let children: Vec<_> = (0..4)
        .map(|i| {
            spawn_kept(
                s.cmd()
                    .args(["run", "lat_syscall/null,read", "--quick", "--json"])
                    .args(["--label", &format!("writer-{i}")]),
            )
        })
        .collect();
    let held = Instant::now();
    let mut reports = 0;
    while held.elapsed() < Duration::from_secs(3) {
        let o = s.run(&["report"]);
        assert!(o.status.success(), "report under a held lock: {}", text(&o));
        reports += 1;
    }
    holder.execute_batch("COMMIT").unwrap();
    drop(holder);
    // And while they write.
    for _ in 0..3 {
        let o = s.run(&["report"]);
        assert!(o.status.success(), "report during runs: {}", text(&o));
    }
    assert!(reports > 0);
    let mut printed = Vec::new();
    for child in children {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        printed.push(doc["runs"][0].clone());
    }
    let runs = stored_runs(&s);
    assert_eq!(runs.len(), 5, "{runs:?}");
    for p in printed {
        assert_stored_as_printed(&s, &p, 2);
    }
}

/// Three cases; the store's write lock is taken by another process after
/// the first is stored and held past the busy timeout. The next result is
/// refused, kept, said so, and stored before the following case: nothing
/// dropped, nothing out of order, the run complete.
#[test]
fn a_result_the_store_refuses_for_a_while_is_kept_and_stored_later() {
    let s = Sandbox::new();
    let child = s.spawn([
        "run",
        "null_loop",
        // Each case longer than the store's interval (a second), so
        // the lock is taken while one is still to be stored.
        "spin/time:50ms,60ms",
        // One round: the cases in the order given, each stored when done.
        "--rounds",
        "1",
        "-r",
        "30",
        "--json",
    ]);
    wait_until(
        "the first measurement stored",
        Duration::from_secs(60),
        || first_run_has(&s, 1),
    );
    let holder = rusqlite::Connection::open(s.db()).unwrap();
    holder.busy_timeout(Duration::from_secs(10)).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    std::thread::sleep(BUSY_TIMEOUT + Duration::from_secs(4));
    holder.execute_batch("COMMIT").unwrap();
    drop(holder);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("locked by another process") && err.contains("kept in memory"),
        "{err}"
    );
    assert!(err.contains("that had waited for the store"), "{err}");
    let printed: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_stored_as_printed(&s, &printed["runs"][0], 3);
}

/// The same, fast and exactly: the second attempt to store a measurement
/// fails once (failpoint); it is stored at the next case.
#[test]
fn a_refused_measurement_is_stored_at_the_next_case_in_order() {
    let s = Sandbox::new();
    let o = s.run_failing(
        "store_add@2-2",
        ["run", "null_loop", "spin/time:1ms,2ms", "--quick", "--json"],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_says(&o, "failpoint store_add");
    let printed: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_stored_as_printed(&s, &printed["runs"][0], 3);
}

/// A run killed outright reads as crashed in every reading command, says
/// why, and can be deleted — but not while it is alive.
#[test]
fn a_sigkilled_run_shows_crashed_everywhere_and_can_be_deleted() {
    let s = Sandbox::new();
    let fine = quick_run(&s, "fine");
    let mut child = s.spawn_silent(["run", "spin/time:20ms", "-r", "500", "--label", "doomed"]);
    wait_until("the run stored as running", Duration::from_secs(60), || {
        stored_runs(&s)
            .get(1)
            .is_some_and(|r| r["status"] == "running")
    });
    let o = s.run(&["runs", "delete", "doomed", "--yes"]);
    assert_refused(&o, "still running");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();

    assert_eq!(stored_runs(&s)[1]["status"], "crashed");
    // The killed run left its room for closing behind; the next run that
    // begins gives it back (a finished run leaves none).
    assert_eq!(reserves(s.dir.path()).len(), 1);
    let later = quick_run(&s, "later");
    assert!(reserves(s.dir.path()).is_empty());
    let o = s.run(&["runs", "delete", &later]);
    assert!(o.status.success(), "{}", text(&o));
    let listed = text(&s.run(&["runs"]));
    assert!(listed.contains("crashed"), "{listed}");
    let run = shown_run(&s, "doomed");
    assert_eq!(run["status"], "crashed");
    let shown = s.run(&["show", "doomed"]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("— crashed\n"), "{shown}");
    assert!(
        !shown.lines().any(|l| l.trim_end().ends_with(',')),
        "{shown}"
    );
    assert!(shown.contains("reason: its process"), "{shown}");
    let report = text(&s.run(&["report"]));
    assert!(report.contains("[crashed]"), "{report}");
    let compare = s.run(&["compare", &fine, "doomed"]);
    assert_says(&compare, "[crashed]");
    let export = s.run(&["export"]);
    let doc: Value = serde_json::from_slice(&export.stdout).unwrap();
    assert_eq!(doc["runs"][1]["status"], "crashed");

    let o = s.run(&["runs", "delete", "doomed"]);
    assert!(o.status.success(), "{}", text(&o));
    let left = stored_runs(&s);
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["id"], fine.as_str());
}

impl Terminal {
    /// Run `args` with this terminal as standard input, answering `answer`.
    fn answer(&mut self, s: &Sandbox, args: &[&str], answer: &str) -> Output {
        self.master.write_all(answer.as_bytes()).unwrap();
        s.cmd()
            .args(args)
            .stdin(self.slave.try_clone().unwrap())
            .output()
            .unwrap()
    }
}

#[test]
fn runs_are_relabelled_and_deleted_asking_first_on_a_terminal() {
    let s = Sandbox::new();
    let a = quick_run(&s, "a");
    let b = quick_run(&s, "b");

    // Not a terminal: no question.
    let o = s.run(&["runs", "relabel", &a, "node-7 after BIOS update"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(shown_run(&s, &a)["label"], "node-7 after BIOS update");
    assert_eq!(stored_runs(&s)[0]["label"], "node-7 after BIOS update");
    let o = s.run(&["runs", "relabel", &a, "bad\u{1b}]0;title\u{7}"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = s.run(&["runs", "relabel", &a, ""]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(shown_run(&s, &a).get("label").is_none_or(Value::is_null));

    // A terminal: asked, and "no" changes nothing.
    let mut t = Terminal::open();
    let o = t.answer(&s, &["runs", "delete", "b"], "n\n");
    assert!(o.status.success(), "{}", text(&o));
    assert_says(&o, "[y/N]");
    assert_says(&o, "nothing deleted");
    assert_eq!(stored_runs(&s).len(), 2);
    let o = t.answer(&s, &["runs", "relabel", "b", "renamed"], "no\n");
    assert_says(&o, "nothing changed");
    assert_eq!(shown_run(&s, &b)["label"], "b");
    // "yes" deletes the run with its measurements; --yes does not ask.
    let o = t.answer(&s, &["runs", "delete", "b"], "y\n");
    assert!(o.status.success(), "{}", text(&o));
    assert_says(&o, "deleted 1 run(s)");
    let c = rusqlite::Connection::open(s.db()).unwrap();
    let left: i64 = c
        .query_row(
            "SELECT count(*) FROM measurements WHERE run_id = ?1",
            [&b],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(left, 0);
    let o = s.run(&["runs", "delete", "--yes", &a]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(stored_runs(&s).is_empty());
}

/// A schema-2 store (before owners and briefs were recorded): reading
/// commands read it as it is (a run left `running` by then reads as
/// crashed); the first command that writes brings it to the current
/// schema, keeping every run.
#[test]
fn a_schema_2_store_reads_as_is_and_upgrades_when_written() {
    let s = Sandbox::new();
    let id = quick_run(&s, "old");
    let before = shown_run(&s, &id);
    {
        // Take the store back to schema 2: no owner columns, one run left
        // `running` by a touchstone of that time.
        let c = rusqlite::Connection::open(s.db()).unwrap();
        c.execute_batch(
            "ALTER TABLE runs DROP COLUMN owner_pid;
             ALTER TABLE runs DROP COLUMN owner_boot;
             ALTER TABLE runs DROP COLUMN owner_start;
             ALTER TABLE runs DROP COLUMN owner_pidns;
             DROP TABLE briefs;
             DROP TABLE inventory;
             PRAGMA user_version = 2;",
        )
        .unwrap();
        let mut header = before.clone();
        header["id"] = "0123456789abcdef".into();
        header["status"] = "running".into();
        header["measurements"] = serde_json::json!([]);
        c.execute(
            "INSERT INTO runs VALUES ('0123456789abcdef', 99, NULL, ?1, ?2, 'running', ?3)",
            rusqlite::params![
                header["host"]["hostname"].as_str(),
                header["started_at"].as_str(),
                header.to_string()
            ],
        )
        .unwrap();
    }
    let version = || -> i32 {
        rusqlite::Connection::open(s.db())
            .unwrap()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap()
    };
    let runs = stored_runs(&s);
    assert_eq!(runs[1]["status"], "crashed");
    assert_eq!(shown_run(&s, &id), before);
    // A store from before the inventory reads as one with none.
    let o = s.run(&["inventory", "list"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_says(&o, "no host inventory");
    assert_eq!(version(), 2, "reading never writes");
    let o = s.run(&["runs", "relabel", &id, "relabelled"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(version(), touchstone_results::store::SCHEMA_VERSION);
    let mut after = shown_run(&s, &id);
    after["label"] = before["label"].clone();
    assert_eq!(after, before);
    // A run stored now records its owner.
    quick_run(&s, "new");
    let c = rusqlite::Connection::open(s.db()).unwrap();
    let (pid, boot): (Option<i64>, Option<String>) = c
        .query_row(
            "SELECT owner_pid, owner_boot FROM runs WHERE label = 'new'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(pid.is_some_and(|p| p > 0));
    assert_eq!(
        boot.unwrap(),
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .unwrap()
            .trim()
    );
}

/// Every reading command on a store in a read-only file system, and on a
/// read-only store file in a writable directory; writing is refused
/// clearly and changes nothing.
#[test]
fn reading_commands_work_on_a_read_only_store() {
    let s = Sandbox::new();
    let Some(fs) = Mount::tmpfs(&s.path("ro"), "16m") else {
        return;
    };
    let db = s.path("ro/results.sqlite");
    let run = |args: &[&str]| {
        s.cmd()
            .env("TOUCHSTONE_DB", &db)
            .args(args)
            .output()
            .unwrap()
    };
    for label in ["one", "two"] {
        let o = run(&["run", "null_loop", "--quick", "--label", label]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let reads: [&[&str]; 6] = [
        &["runs"],
        &["runs", "--json"],
        &["show", "last"],
        &["report"],
        &["export"],
        &["compare", "one", "two"],
    ];
    let check_reads = |how: &str| {
        for args in reads {
            let o = run(args);
            assert!(o.status.success(), "{how}: {args:?}: {}", text(&o));
            assert!(text(&o).contains("null_loop") || args[0] == "runs");
        }
    };

    // The file alone read-only (its directory writable).
    {
        let _file = Mount::read_only_file(&db).expect("bind mount");
        check_reads("read-only file");
        let o = run(&["run", "null_loop", "--quick"]);
        assert_refused(&o, "cannot be written");
    }

    // The whole file system read-only.
    fs.remount_read_only();
    check_reads("read-only file system");
    let o = run(&["runs", "delete", "--yes", "one"]);
    assert_refused(&o, "cannot be written");
    let o = run(&["runs", "--json"]);
    let listed: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 2);
}

/// A 1 MB file system fills while a run measures: "disk full" by name, the
/// run ends failed with what it measured (printed, and stored as far as it
/// was), the case it did not reach named as not run, the summary printed;
/// and every reading command still works on the full disk.
#[test]
fn a_disk_that_fills_mid_run_loses_nothing_stored_before() {
    let s = Sandbox::new();
    let Some(_fs) = Mount::tmpfs(&s.path("small"), "1m") else {
        return;
    };
    let db = s.path("small/results.sqlite");
    let cmd = |args: &[&str]| {
        let mut c = s.cmd();
        c.env("TOUCHSTONE_DB", &db).args(args);
        c
    };
    let child = spawn_kept(&mut cmd(&[
        "run",
        "null_loop",
        "spin/time:20ms",
        // Longer than the store's interval (a second): the store is tried
        // after it, finds the disk full and stops the run before the last.
        "spin/time:30ms",
        "lat_syscall/null",
        // One round: the cases in the order given, each stored when done.
        "--rounds",
        "1",
        "-r",
        "100",
    ]));
    let first_stored = || {
        let o = cmd(&["runs", "--json"]).output().unwrap();
        o.status.success()
            && serde_json::from_slice::<Value>(&o.stdout)
                .is_ok_and(|v| v[0]["measurements"].as_u64().is_some_and(|m| m >= 1))
    };
    wait_until(
        "the first measurement stored",
        Duration::from_secs(60),
        first_stored,
    );
    let before = cmd(&["show", "last", "--json"]).output().unwrap();
    assert!(before.status.success(), "{}", text(&before));
    let before: Value = serde_json::from_slice(&before.stdout).unwrap();
    let null_loop = before["runs"][0]["measurements"][0].clone();
    assert_eq!(null_loop["name"], "null_loop");

    fill(&s.path("small/filler"));

    let o = child.wait_with_output().unwrap();
    let all = text(&o);
    assert_eq!(o.status.code(), Some(2), "{all}");
    assert!(all.contains("disk full"), "{all}");
    assert!(!all.contains("disk I/O error"), "{all}");
    // The summary: the run's header with its reason, and both measured cases.
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("— failed"), "{out}");
    // The store is tried at most a second apart: the fill is found after
    // spin/20ms or spin/30ms, whichever the store tried first on this
    // machine's load; the last case is never reached.
    let not_run = |text: &str| {
        text.lines()
            .any(|l| l.contains("case(s) not run: ") && l.trim_end().ends_with("lat_syscall/null"))
    };
    assert!(not_run(&out), "{out}");
    assert!(
        out.contains("null_loop") && out.contains("spin/20ms"),
        "{out}"
    );

    // Reads on the full disk.
    for args in [&["runs"][..], &["report"], &["export"], &["show", "last"]] {
        let o = cmd(args).output().unwrap();
        assert!(o.status.success(), "{args:?} on a full disk: {}", text(&o));
    }
    let after = cmd(&["show", "last", "--json"]).output().unwrap();
    let after: Value = serde_json::from_slice(&after.stdout).unwrap();
    let run = &after["runs"][0];
    assert_eq!(run["measurements"][0], null_loop, "nothing earlier is lost");
    // Full again, with no -shm file (as when the last reader's close
    // removed it): a reader cannot create one that works (SQLite leaves a
    // 3-byte file and fails), and must read all the same.
    let _ = std::fs::remove_file(s.path("small/results.sqlite-shm"));
    fill(&s.path("small/filler-2"));
    for args in [&["runs"][..], &["report"], &["show", "last"]] {
        let o = cmd(args).output().unwrap();
        assert!(o.status.success(), "{args:?} on a full disk: {}", text(&o));
    }
    let shown = cmd(&["show", "last", "--json"]).output().unwrap();
    let again = serde_json::from_slice::<Value>(&shown.stdout).unwrap();
    assert!(again["runs"][0] == after["runs"][0], "read differently");

    // Closed in the room set aside when the run began.
    assert_eq!(run["status"], "failed", "{run}");
    let reason = run["reason"].as_str().unwrap();
    assert!(reason.contains("disk full") && not_run(reason), "{reason}");
    assert!(reserves(&s.path("small")).is_empty());
}

/// Write `path` until its file system has not one byte left.
fn fill(path: &Path) {
    let mut filler = std::fs::File::create(path).unwrap();
    for chunk in [65536, 4096, 1] {
        let block = vec![0u8; chunk];
        while filler.write_all(&block).is_ok() {}
    }
}

/// The room set aside for closing runs beside the store in `dir`.
fn reserves(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".reserve-"))
        .collect()
}

/// One run's stored measurements no longer parse (the document and the
/// brief a report reads): report, export and compare skip that run with a
/// warning naming it, `show` names the remedy, and `runs delete` removes it.
#[test]
fn a_damaged_stored_document_is_skipped_with_a_warning_and_can_be_deleted() {
    let s = Sandbox::new();
    let a = quick_run(&s, "a");
    let bad = quick_run(&s, "bad");
    let c = quick_run(&s, "c");
    let damaged = rusqlite::Connection::open(s.db()).unwrap();
    for sql in [
        "UPDATE measurements SET doc = '{\"name\": \"null_loop\", trunc' WHERE run_id = ?1",
        "UPDATE briefs SET brief = '{\"na' WHERE run_id = ?1",
    ] {
        damaged.execute(sql, [&bad]).unwrap();
    }
    drop(damaged);
    let warned = |o: &Output| {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("run {bad} cannot be read")),
            "{}",
            text(o)
        );
        assert!(err.contains("runs delete"), "{err}");
    };
    let report = s.run(&["report"]);
    assert!(report.status.success(), "{}", text(&report));
    warned(&report);
    let table = String::from_utf8_lossy(&report.stdout);
    assert!(
        table.contains(&a[..8]) && table.contains(&c[..8]),
        "{table}"
    );
    assert!(!table.contains(&bad[..8]), "{table}");

    let export = s.run(&["export"]);
    assert!(export.status.success(), "{}", text(&export));
    warned(&export);
    let doc: Value = serde_json::from_slice(&export.stdout).unwrap();
    assert_eq!(doc["runs"].as_array().unwrap().len(), 2);

    let compare = s.run(&["compare", &a, &bad, &c]);
    assert!(compare.status.success(), "{}", text(&compare));
    warned(&compare);

    let show = s.run(&["show", &bad]);
    assert_refused(&show, "runs delete");

    let o = s.run(&["runs", "delete", &bad]);
    assert!(o.status.success(), "{}", text(&o));
    let report = s.run(&["report"]);
    assert!(report.status.success());
    assert!(report.stderr.is_empty(), "{}", text(&report));
}

/// `compare GOOD BAD` said "none of the runs to compare can be read" when
/// GOOD could be: the error names the run that cannot be read and why, and
/// `report` over damaged runs only names each of them the same way.
#[test]
fn compare_with_an_unreadable_run_names_that_run_and_why() {
    let s = Sandbox::new();
    let good = quick_run(&s, "good");
    let bad = quick_run(&s, "bad");
    rusqlite::Connection::open(s.db())
        .unwrap()
        .execute(
            "UPDATE measurements SET doc = '{\"name\": \"null_loop\", trunc' WHERE run_id = ?1",
            [&bad],
        )
        .unwrap();
    let o = s.run(&["compare", &good, &bad]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(!out.contains("none of the runs"), "{out}");
    assert!(
        out.contains(&format!("nothing to compare run {good} with")),
        "{out}"
    );
    assert!(
        out.contains(&format!("run {bad} cannot be read: its stored measurement")),
        "{out}"
    );
    assert!(out.contains(&format!("runs delete {bad}")), "{out}");
    // Said once: no warning about the same run before the error.
    assert_eq!(
        out.matches(&format!("run {bad} cannot be read")).count(),
        1,
        "{out}"
    );

    // The damaged run as the base: the error is that run's own.
    let o = s.run(&["compare", &bad, &good]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains(&format!("run {bad} cannot be read")), "{out}");

    // report of that run alone names it too (report reads measurements in
    // brief: damaged as well).
    rusqlite::Connection::open(s.db())
        .unwrap()
        .execute(
            "UPDATE briefs SET brief = '{\"na' WHERE run_id = ?1",
            [&bad],
        )
        .unwrap();
    let o = s.run(&["report", &bad]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains("none of the runs can be read")
            && out.contains(&format!("run {bad} cannot be read")),
        "{out}"
    );
}
