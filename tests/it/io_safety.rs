//! Safety of the I/O families (io, io_copy), through the binary: device
//! mode refuses without both flags naming one device; an unwritable
//! directory and a full file system (a small tmpfs mounted here, as root)
//! give a clear error, leave nothing behind and keep earlier results;
//! while a run writes, every file its processes hold open lies in --dir,
//! and nothing is left after Ctrl-C.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{assert_says, measurement_names, text, unavailable, Sandbox};

/// A tmpfs mounted for one test, unmounted and removed on drop (also when
/// the test fails).
struct TmpMount {
    dir: PathBuf,
}

impl TmpMount {
    /// Mount a tmpfs of `size` with `opts` at `dir`; None (with the reason
    /// printed) when not root or the mount is refused.
    fn new(dir: PathBuf, size: &str, opts: &str) -> Option<TmpMount> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            unavailable("mounting a tmpfs needs root");
            return None;
        }
        std::fs::create_dir_all(&dir).unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}{opts}"), "tmpfs"])
            .arg(&dir)
            .output();
        match o {
            Ok(o) if o.status.success() => Some(TmpMount { dir }),
            Ok(o) => {
                unavailable(&format!(
                    "mount refused: {}",
                    String::from_utf8_lossy(&o.stderr)
                ));
                let _ = std::fs::remove_dir(&dir);
                None
            }
            Err(e) => {
                unavailable(&format!("cannot run mount: {e}"));
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }
}

impl Drop for TmpMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// What the sandbox holds beside the store (scratch directories, files).
fn sandbox_leftovers(s: &Sandbox, except: &[&str]) -> Vec<String> {
    entries(s.dir.path())
        .into_iter()
        .filter(|n| !n.starts_with("results.sqlite") && !except.contains(&n.as_str()))
        .collect()
}

#[test]
fn device_mode_needs_both_flags_naming_one_block_device() {
    let s = Sandbox::new();
    for (args, says) in [
        (vec!["--device", "/dev/null"], "--destroy-data-on"),
        (vec!["--destroy-data-on", "/dev/null"], "without --device"),
        (
            vec!["--device", "/dev/null", "--destroy-data-on", "/dev/zero"],
            "different devices",
        ),
        (
            vec!["--device", "/dev/null", "--destroy-data-on", "/dev/null"],
            "not a block device",
        ),
    ] {
        let mut all = vec!["run", "io/write/size:64k/bs:8k", "--no-store"];
        all.extend(args);
        let o = s.run(&all);
        assert!(!o.status.success(), "{all:?} ran");
        assert!(text(&o).contains(says), "{all:?}: {}", text(&o));
        // Refused before anything ran: no run was stored or measured.
        assert!(!text(&o).contains("MB/s"), "{}", text(&o));
    }
}

/// An option of some families is refused, from the families' own
/// declarations, where none of them is selected; where one is, the run
/// says where the I/O files go.
#[test]
fn family_options_apply_only_where_a_family_honours_them() {
    let s = Sandbox::new();
    let dir = s.path("target");
    std::fs::create_dir(&dir).unwrap();
    let dir = dir.to_str().unwrap();
    for (args, says) in [
        (
            vec!["lat_syscall/null", "--dir", dir],
            "--dir applies to io, io_copy, io_load; the selection has none",
        ),
        // io_load's trials are not intervals: it declares no --drop-caches.
        (
            vec!["io_load/read/size:64k", "--drop-caches"],
            "--drop-caches applies to io, io_copy; the selection has none",
        ),
    ] {
        let mut all = vec!["run", "--no-store"];
        all.extend(args);
        let o = s.run(&all);
        assert_eq!(o.status.code(), Some(2), "{all:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{all:?}: {}", text(&o));
    }
    let o = s.run(&[
        "run",
        "io/write/size:64k/bs:8k",
        "lat_syscall/null",
        "--dir",
        dir,
        "-r",
        "3",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    // Said once as the run begins (the log), and kept with the run: its
    // header with the tables names it, and so does `show` later.
    let note = format!("I/O: files in {dir} (");
    let log = String::from_utf8_lossy(&o.stderr);
    assert_eq!(log.matches(&note).count(), 1, "{log}");
    let shown = s.run(&["show", "last"]);
    assert!(text(&shown).contains(&note), "{}", text(&shown));
}

/// An I/O figure is also given as IOPS (its bandwidth over the block
/// size) with the blocks' latency percentiles, in the table, the CSV and
/// the Markdown export; other figures leave those cells empty.
#[test]
fn io_figures_carry_iops_and_latency_percentiles_in_tables_and_csv() {
    let s = Sandbox::new();
    let o = s.run_line("run io/read/size:256k/bs:8k lat_syscall/null -r 3");
    assert!(o.status.success(), "{}", text(&o));
    let table = String::from_utf8_lossy(&o.stdout).to_string();
    for head in ["IOPS", "p50 lat", "p99 lat"] {
        assert!(table.contains(head), "{table}");
    }
    let csv = s.run(&["show", "last", "--format", "csv"]);
    assert!(csv.status.success(), "{}", text(&csv));
    let csv = String::from_utf8_lossy(&csv.stdout).to_string();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let (value, iops, p50, p99) = (
        col("value"),
        col("iops"),
        col("lat_p50_us"),
        col("lat_p99_us"),
    );
    let mut io_rows = 0;
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        if f[col("benchmark")] == "io" {
            io_rows += 1;
            let mbps: f64 = f[value].parse().unwrap();
            let ops: f64 = f[iops].parse().unwrap();
            // The same figure in blocks of 8 KiB a second.
            assert!((ops * 8192.0 / 1e6 - mbps).abs() <= 1e-6 * mbps, "{line}");
            let (a, b): (f64, f64) = (f[p50].parse().unwrap(), f[p99].parse().unwrap());
            assert!(a > 0.0 && a <= b, "{line}");
        } else {
            assert_eq!((f[iops], f[p50], f[p99]), ("", "", ""), "{line}");
        }
    }
    assert!(io_rows >= 1, "{csv}");
    let md = s.run(&["show", "last", "--format", "markdown"]);
    let md = String::from_utf8_lossy(&md.stdout).to_string();
    assert!(md.contains("| IOPS | p50 lat | p99 lat |"), "{md}");
    assert!(md.contains("- I/O: files in"), "{md}");
}

#[test]
fn an_unwritable_or_missing_directory_is_refused_before_anything_runs() {
    let s = Sandbox::new();
    let missing = s.path("missing");
    let o = s.run(&[
        "run",
        "io/write/size:64k/bs:8k",
        "--dir",
        missing.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert_says(&o, "not a directory");
    // Root ignores permission bits, so a read-only mount is the unwritable case.
    let Some(ro) = TmpMount::new(s.path("ro"), "1m", ",ro") else {
        return;
    };
    let o = s.run(&[
        "run",
        "io/write/size:64k/bs:8k",
        "--dir",
        ro.dir.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert_says(&o, "cannot write in");
    assert!(entries(&ro.dir).is_empty());
}

#[test]
fn a_full_file_system_fails_clearly_keeps_earlier_results_and_leaves_nothing() {
    let s = Sandbox::new();
    let Some(small) = TmpMount::new(s.path("small"), "1m", "") else {
        return;
    };
    let dir = small.dir.to_str().unwrap();
    // Two processes: 2 × 256 KB fit, 2 × 768 KB do not (each alone does,
    // so the case passes its check and meets the full disk mid-run).
    let o = s.run(&[
        "run",
        "io/write/pattern:seq/bs:64k/size:256k",
        "io/write/pattern:seq/bs:64k/size:768k",
        "-P",
        "2",
        "-r",
        "3",
        "--dir",
        dir,
        "--label",
        "full",
    ]);
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("is full"), "{out}");
    assert!(entries(&small.dir).is_empty(), "{:?}", entries(&small.dir));
    let shown = s.run(&["show", "full", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&shown.stdout).expect("a stored run");
    let names = measurement_names(&v["runs"][0]);
    assert!(
        names.iter().any(|n| n.contains("size:256k")),
        "the earlier case's result is kept: {names:?}"
    );
    assert!(sandbox_leftovers(&s, &["small"]).is_empty());
}

/// Every file under `root` that any process holds open, as /proc shows
/// it (the run's processes are forked at several depths; the sandbox's
/// path is unique to this test, so every such file is the run's).
fn open_files_under(root: &Path) -> Vec<String> {
    let root = root.to_string_lossy().into_owned();
    let mut files = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().parse::<i32>().is_err() {
            continue;
        }
        for fd in std::fs::read_dir(e.path().join("fd"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if let Ok(t) = std::fs::read_link(fd.path()) {
                let t = t.to_string_lossy().into_owned();
                if t.starts_with(&root) {
                    files.push(t);
                }
            }
        }
    }
    files
}

#[test]
fn files_are_written_only_in_dir_and_removed_on_ctrl_c() {
    let s = Sandbox::new();
    let dir = s.path("target");
    std::fs::create_dir(&dir).unwrap();
    let mut child = s.spawn_silent([
        "run",
        "io/write/pattern:rand/bs:8k/size:32m",
        "-r",
        "1001",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    let pid = child.id() as i32;
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen_test_file = false;
    while !seen_test_file {
        assert!(Instant::now() < deadline, "no test file was ever opened");
        for f in open_files_under(s.dir.path()) {
            let in_dir = f.starts_with(dir.to_str().unwrap());
            let store = f.contains("results.sqlite");
            // The harness's (empty) scratch directory may be held open.
            let scratch = Path::new(f.trim_end_matches(" (deleted)")).is_dir();
            assert!(in_dir || store || scratch, "a file outside --dir: {f}");
            seen_test_file |= in_dir;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
    assert!(
        sandbox_leftovers(&s, &["target"]).is_empty(),
        "{:?}",
        sandbox_leftovers(&s, &["target"])
    );
}
