//! Where outputs and the store may land (issue 25): a store named through a
//! link is guarded by its real files; `-o` and `--html` write through a
//! character device, FIFO or terminal, follow a link to its target and
//! refuse what cannot hold a report; `--db` is a regular file or a new path
//! in an existing directory. /dev itself is only touched in a private mount
//! namespace with a /dev of its own (a tmpfs), so a failure there cannot
//! damage the machine's /dev/null.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{assert_refused, is_root, spawn_kept, text, unavailable, Sandbox};
use crate::imports::{document, document_file, import_file, stored};

const REFUSED: &str = "refusing to write over the results store";

fn mknod(path: &Path, kind: libc::mode_t, major: u32, minor: u32) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path; mknod reads it only.
    let r = unsafe { libc::mknod(c.as_ptr(), kind | 0o666, libc::makedev(major, minor)) };
    assert_eq!(r, 0, "mknod {}", path.display());
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path; mkfifo reads it only.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Run `cmd`, killing it after `limit` (a write onto a FIFO nobody reads,
/// or a store opened on one, would otherwise hang the test).
fn run_within(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = spawn_kept(cmd);
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A store with one imported run (no measuring).
fn store_with_a_run() -> Sandbox {
    let s = Sandbox::new();
    let o = import_file(&s, "a.json", &document("00000000000000aa", "a"));
    assert!(o.status.success(), "{}", text(&o));
    s
}

#[test]
fn a_store_named_through_a_link_is_guarded_by_its_real_files() {
    let s = store_with_a_run();
    let before = stored(&s);
    let link = s.path("link.sqlite");
    std::os::unix::fs::symlink(s.db(), &link).unwrap();
    // A connection left open keeps the WAL and its index in place, as a
    // run in progress does.
    let reader = rusqlite::Connection::open(s.db()).unwrap();
    reader
        .query_row("SELECT count(*) FROM runs", [], |r| r.get::<_, i64>(0))
        .unwrap();
    let wal = s.path("results.sqlite-wal");
    let shm = s.path("results.sqlite-shm");
    let journal = s.path("results.sqlite-journal");
    let wal_inode = std::fs::metadata(&wal).unwrap().ino();
    let to_shm = s.path("innocent.json");
    std::os::unix::fs::symlink(&shm, &to_shm).unwrap();
    let to_journal = s.path("later.json");
    std::os::unix::fs::symlink(&journal, &to_journal).unwrap();
    let link = link.to_str().unwrap();
    for out in [&wal, &shm, &journal, &to_shm, &to_journal] {
        let out = out.to_str().unwrap();
        for args in [
            vec!["--db", link, "export", "-o", out],
            vec!["--db", link, "report", "-o", out],
            vec!["--db", link, "report", "--html", out],
        ] {
            let o = s.run(&args);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
            assert!(text(&o).contains(REFUSED), "{args:?}: {}", text(&o));
        }
    }
    assert_eq!(std::fs::metadata(&wal).unwrap().ino(), wal_inode);
    assert!(!journal.exists());
    assert!(std::fs::symlink_metadata(&to_shm).unwrap().is_symlink());
    drop(reader);
    assert_eq!(stored(&s), before);
    // Through the link, the store is the real one: an import lands there,
    // and the link stays a link.
    let b = document_file(&s, "b.json", "00000000000000bb", "b");
    let o = s.run(&["--db", link, "import", b.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(stored(&s).contains("00000000000000bb"));
    assert!(std::fs::symlink_metadata(link).unwrap().is_symlink());
}

/// A sandbox holding one run's document (`a.json`), and its path.
fn sandbox_with_a_document() -> (Sandbox, String) {
    let s = Sandbox::new();
    let doc = document_file(&s, "a.json", "00000000000000aa", "a");
    let doc = doc.to_str().unwrap().to_string();
    (s, doc)
}

#[test]
fn a_store_in_a_missing_directory_is_refused_and_nothing_is_created() {
    let (s, doc) = sandbox_with_a_document();
    let doc = doc.as_str();
    let db = s.path("nonexistent/dir/x.sqlite");
    let db = db.to_str().unwrap();
    for args in [
        vec!["--db", db, "import", doc],
        vec!["--db", db, "run", "null_loop", "--quick"],
    ] {
        let o = s.run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains("does not exist") && text(&o).contains("nonexistent/dir"),
            "{args:?}: {}",
            text(&o)
        );
        assert!(!text(&o).contains("MB/s") && !text(&o).contains(" ns"));
    }
    let o = s.run(&["--db", db, "runs"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!s.path("nonexistent").exists(), "a directory was created");
    // The default store's own directory is made where it is missing.
    let xdg = s.path("xdg");
    let o = s
        .cmd()
        .env_remove("TOUCHSTONE_DB")
        .env("XDG_DATA_HOME", &xdg)
        .args(["import", doc])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(xdg.join("touchstone/results.sqlite").is_file());
}

#[test]
fn outputs_write_through_special_files_and_follow_links() {
    let s = store_with_a_run();
    // A FIFO: the reader gets the whole export, and the FIFO stays one.
    let fifo = s.path("fifo");
    mkfifo(&fifo);
    let reader = Command::new("cat")
        .arg(&fifo)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let o = run_within(
        s.cmd().args(["export", "-o", fifo.to_str().unwrap()]),
        Duration::from_secs(30),
    );
    // The reader ends when the writer closes (or is killed with the test).
    let mut reader = reader;
    let deadline = Instant::now() + Duration::from_secs(10);
    while reader.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = reader.kill();
    let got = reader.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let exported: serde_json::Value = serde_json::from_slice(&got.stdout)
        .unwrap_or_else(|e| panic!("the FIFO's reader got no export: {e}"));
    assert_eq!(exported["runs"][0]["id"], "00000000000000aa");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());

    // A link: its target is written, the link stays a link.
    let real = s.file("real.txt", "old");
    let link = s.path("link.txt");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let o = s.run(&["report", "-o", link.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert!(std::fs::read_to_string(&real).unwrap().contains("Medians"));
    // A dangling link: its target is made.
    let made = s.path("made.txt");
    let dangling = s.path("dangling.txt");
    std::os::unix::fs::symlink(&made, &dangling).unwrap();
    let o = s.run(&["export", "-o", dangling.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::symlink_metadata(&dangling).unwrap().is_symlink());
    assert!(std::fs::read_to_string(&made)
        .unwrap()
        .contains("00000000000000aa"));

    // A link to this process's standard output, as /dev/stdout is: printed.
    let stdout = s.path("stdout");
    std::os::unix::fs::symlink("/proc/self/fd/1", &stdout).unwrap();
    let o = s.run(&["report", "-o", stdout.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("Medians"),
        "{}",
        text(&o)
    );
    assert!(std::fs::symlink_metadata(&stdout).unwrap().is_symlink());

    // A directory holds no report.
    let o = s.run(&["export", "-o", s.dir.path().to_str().unwrap()]);
    assert_refused(&o, "is a directory");

    if !is_root() {
        unavailable("device nodes (mknod) need root");
        return;
    }
    // A character device (a private /dev/null): written through, kept.
    let null = s.path("null");
    mknod(&null, libc::S_IFCHR, 1, 3);
    for args in [
        vec!["export", "-o", null.to_str().unwrap()],
        vec!["report", "--html", null.to_str().unwrap()],
    ] {
        let o = s.run(&args);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        let m = std::fs::symlink_metadata(&null).unwrap();
        assert!(m.file_type().is_char_device(), "{args:?} replaced it");
        assert_eq!(m.rdev(), libc::makedev(1, 3));
    }
    // A block device (an unused loop number): refused, kept.
    let disk = s.path("disk");
    mknod(&disk, libc::S_IFBLK, 7, 255);
    let o = s.run(&["export", "-o", disk.to_str().unwrap()]);
    assert_refused(&o, "block device");
    assert!(std::fs::symlink_metadata(&disk)
        .unwrap()
        .file_type()
        .is_block_device());
}

#[test]
fn a_store_must_be_a_regular_file_or_a_new_path() {
    let (s, doc) = sandbox_with_a_document();
    let doc = doc.as_str();
    let fifo = s.path("fifo");
    mkfifo(&fifo);
    let mut places = vec![(fifo, "FIFO")];
    if is_root() {
        let null = s.path("null");
        mknod(&null, libc::S_IFCHR, 1, 3);
        places.push((null, "character device"));
    } else {
        unavailable("device nodes (mknod) need root");
    }
    for (db, kind) in &places {
        let name = db.to_str().unwrap();
        for args in [
            vec!["--db", name, "import", doc],
            vec!["--db", name, "runs"],
        ] {
            let o = run_within(s.cmd().args(&args), Duration::from_secs(30));
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
            assert!(
                text(&o).contains(kind) && text(&o).contains("regular file"),
                "{args:?}: {}",
                text(&o)
            );
        }
        let journal = format!("{name}-journal");
        assert!(!Path::new(&journal).exists(), "{journal} was made");
    }
}

/// In a private mount namespace with a tmpfs of its own on /dev (never the
/// machine's /dev): /dev/null and /dev/stdout as the issue found them.
#[test]
fn dev_null_stays_a_device_and_dev_stdout_prints() {
    if !is_root() {
        unavailable("a private /dev (unshare -m, mount) needs root");
        return;
    }
    let s = store_with_a_run();
    let script = r#"
set -u
mount -t tmpfs -o size=1m,mode=0755 tmpfs /dev || { echo "no-private-dev"; exit 0; }
mknod -m 666 /dev/null c 1 3
mknod -m 666 /dev/urandom c 1 9
ln -s /proc/self/fd /dev/fd
ln -s /proc/self/fd/1 /dev/stdout
ln -s /proc/self/fd/2 /dev/stderr
"$TS" export -o /dev/null; echo "export-rc: $?"
echo "null: $(stat -c '%F %t:%T' /dev/null)"
"$TS" report -o /dev/stdout; echo "report-rc: $?"
echo "stdout: $(stat -c '%F' /dev/stdout)"
"$TS" --db /dev/null import "$DOC" 2>&1; echo "db-rc: $?"
"$TS" --db /dev/null run null_loop --quick 2>&1; echo "run-rc: $?"
echo "dev: $(ls /dev | tr '\n' ' ')"
"#;
    let doc = s.path("a.json");
    let o = run_within(
        Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c", script])
            .env("TS", env!("CARGO_BIN_EXE_touchstone"))
            .env("TOUCHSTONE_DB", s.db())
            .env("TMPDIR", s.dir.path())
            .env("DOC", &doc),
        Duration::from_secs(120),
    );
    let out = text(&o);
    if !o.status.success() || out.contains("no-private-dev") {
        unavailable(&format!("no private mount namespace here: {out}"));
        return;
    }
    let line = |key: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("no '{key}' in: {out}"))
            .trim()
            .to_string()
    };
    assert_eq!(line("export-rc:"), "0", "{out}");
    assert_eq!(line("null:"), "character special file 1:3", "{out}");
    assert_eq!(line("report-rc:"), "0", "{out}");
    assert!(
        out.contains("Medians"),
        "report -o /dev/stdout printed nothing: {out}"
    );
    assert_eq!(line("stdout:"), "symbolic link", "{out}");
    assert_eq!(line("db-rc:"), "2", "{out}");
    assert_eq!(line("run-rc:"), "2", "{out}");
    assert!(out.contains("regular file"), "{out}");
    assert!(!line("dev:").contains("null-journal"), "{out}");
}
