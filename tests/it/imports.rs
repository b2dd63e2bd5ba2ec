//! Hostile input and outputs (issue 18): import checks what it reads, never
//! reads without bound and leaves the store as it was when it refuses;
//! outputs never land on the store; strings from imported runs reach the
//! terminal without their escape sequences.

use std::io::Write;
use std::time::{Duration, Instant};

use crate::common::{assert_refused, text, Sandbox};

const CORPUS: &str = include_str!("../data/import-corpus/micro-and-tcp_rr.json");

/// The corpus document with its run's id and label replaced.
pub fn document(id: &str, label: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(CORPUS).unwrap();
    v["runs"][0]["id"] = id.into();
    v["runs"][0]["label"] = label.into();
    v.to_string()
}

/// The corpus document (as `document`) written to `name` in the sandbox:
/// its path.
pub fn document_file(s: &Sandbox, name: &str, id: &str, label: &str) -> std::path::PathBuf {
    s.file(name, document(id, label))
}

/// What `runs --json` lists, to tell whether the store changed.
pub fn stored(s: &Sandbox) -> String {
    let o = s.run(&["runs", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

pub fn import_file(s: &Sandbox, name: &str, doc: &str) -> std::process::Output {
    let f = s.file(name, doc);
    s.run(&["import", f.to_str().unwrap()])
}

#[test]
fn import_of_dev_zero_stops_at_once_with_a_message() {
    let s = Sandbox::new();
    let t = Instant::now();
    let o = s.run(&["import", "/dev/zero"]);
    assert_refused(&o, "/dev/zero: not JSON: expected value at line 1 column 1");
    assert!(t.elapsed() < Duration::from_secs(10));
    assert!(!s.db().exists(), "a refused import creates no store");
}

#[test]
fn an_endless_stream_stops_at_the_size_limit() {
    let s = Sandbox::new();
    let mut child = s.spawn_fed(["import", "-"]);
    let mut stdin = child.stdin.take().unwrap();
    // Whitespace is valid JSON padding: only the limit stops it.
    let feeder = std::thread::spawn(move || {
        let block = vec![b' '; 1 << 20];
        for _ in 0..2048 {
            if stdin.write_all(&block).is_err() {
                return true;
            }
        }
        false
    });
    let o = child.wait_with_output().unwrap();
    assert!(feeder.join().unwrap(), "touchstone read 2 GiB");
    assert_refused(&o, "standard input: larger than 256 MiB");
}

#[test]
fn import_dash_reads_standard_input() {
    let s = Sandbox::new();
    let mut child = s.spawn_fed(["import", "-"]);
    child
        .stdin
        .take()
        .unwrap()
        .write_all(document("0123456789abcdef", "from a pipe").as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(stored(&s).contains("from a pipe"));
}

#[test]
fn a_refused_import_names_the_place_and_changes_nothing() {
    let s = Sandbox::new();
    let o = import_file(&s, "good.json", &document("00000000000000aa", "kept"));
    assert!(o.status.success(), "{}", text(&o));
    let before = stored(&s);
    let db_bytes = std::fs::read(s.db()).unwrap();

    let mut bad: serde_json::Value =
        serde_json::from_str(&document("00000000000000bb", "bad")).unwrap();
    bad["runs"][0]["measurements"][2]["samples"][1] = (-3.5).into();
    let o = import_file(&s, "bad.json", &bad.to_string());
    assert_refused(
        &o,
        "refused, nothing imported: runs[0].measurements[2].samples[1]: -3.5 is negative",
    );
    // A type error: line and column.
    let typed = CORPUS.replacen("\"repetitions\": 7", "\"repetitions\": \"seven\"", 1);
    assert_ne!(typed, CORPUS);
    let line = typed[..typed.find("\"seven\"").unwrap()].lines().count();
    let o = import_file(&s, "typed.json", &typed);
    assert_refused(&o, &format!("expected u32 at line {line} column"));
    // A good file with a bad one: neither goes in.
    let good2 = s.file("good2.json", document("00000000000000cc", "second"));
    let o = s.run(&[
        "import",
        good2.to_str().unwrap(),
        s.path("bad.json").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stored(&s), before);
    assert_eq!(std::fs::read(s.db()).unwrap(), db_bytes);
    // The same run twice in one import goes in once.
    let o = s.run(&["import", good2.to_str().unwrap(), good2.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("imported 1 run(s)") && text(&o).contains("1 already present"),
        "{}",
        text(&o)
    );
}

#[test]
fn outputs_onto_the_store_are_refused_and_the_store_is_intact() {
    let s = Sandbox::new();
    assert!(
        import_file(&s, "a.json", &document("00000000000000aa", "a"))
            .status
            .success()
    );
    assert!(
        import_file(&s, "b.json", &document("00000000000000bb", "b"))
            .status
            .success()
    );
    let before = stored(&s);
    let db = s.db();
    let link = s.path("innocent.html");
    std::os::unix::fs::symlink(&db, &link).unwrap();
    let wal = format!("{}-wal", db.display());
    let db = db.to_str().unwrap().to_string();
    for args in [
        vec!["report", "-o", &db],
        vec!["report", "--html", &db],
        vec!["report", "--html", link.to_str().unwrap()],
        vec!["export", "-o", &db],
        vec!["export", "-o", &wal],
        vec!["compare", "a", "b", "-o", &db],
    ] {
        let o = s.run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains("refusing to write over the results store"),
            "{args:?}: {}",
            text(&o)
        );
        assert_eq!(stored(&s), before, "{args:?}");
    }
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    // Elsewhere: written, and a private file stays private.
    use std::os::unix::fs::PermissionsExt;
    let out = s.file("report.txt", "old");
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = s.run(&["report", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let meta = std::fs::metadata(&out).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert!(std::fs::read_to_string(&out).unwrap().contains("Medians"));
}

#[test]
fn escape_sequences_in_imported_strings_never_reach_the_terminal() {
    let s = Sandbox::new();
    let osc = "\u{1b}]0;pwned title\u{7}";
    let csi = "\u{1b}[31;1m";
    let label = format!("{osc}evil{csi}label\u{1b}[0m\u{9b}2J");
    let mut v: serde_json::Value =
        serde_json::from_str(&document("00000000000000ee", &label)).unwrap();
    let run = &mut v["runs"][0];
    run["host"]["hostname"] = format!("host{csi}x").into();
    run["reason"] = format!("why{osc}").into();
    run["warnings"][0]["message"] = format!("warned{csi}").into();
    run["measurements"][0]["warnings"][0]["remedy"] = format!("remedy{osc}").into();
    run["measurements"][0]["name"] = format!("lat_syscall/null{csi}").into();
    run["curves"][0]["workload"] = format!("tcp_rr{csi}").into();
    assert!(import_file(&s, "evil.json", &v.to_string())
        .status
        .success());
    assert!(
        import_file(&s, "base.json", &document("00000000000000aa", "base"))
            .status
            .success()
    );
    for args in [
        vec!["runs"],
        vec!["show", "00000000000000ee"],
        vec!["report"],
        vec!["report", "--format", "markdown"],
        vec!["compare", "base", "00000000000000ee"],
        vec!["compare", "00000000000000ee", "base", "--format", "csv"],
        vec!["show", "nosuch\u{1b}]0;x\u{7}"],
        vec!["show", "00000000000000ee", "--json"],
        vec!["runs", "--json"],
        vec!["export"],
        vec!["report", "--format", "json"],
    ] {
        let o = s.run(&args);
        let all = [o.stdout.as_slice(), o.stderr.as_slice()].concat();
        assert!(
            !all.contains(&0x1b) && !String::from_utf8_lossy(&all).contains('\u{9b}'),
            "{args:?} echoed an escape: {}",
            text(&o)
        );
        assert!(!String::from_utf8_lossy(&all).contains('\u{7}'), "{args:?}");
    }
    let o = s.run(&["show", "00000000000000ee"]);
    let shown = text(&o);
    assert!(shown.contains("evillabel"), "{shown}");
    assert!(
        shown.contains("hostx") && shown.contains("warned"),
        "{shown}"
    );
    // The JSON forms keep the strings, escaped as JSON escapes them.
    let o = s.run(&["show", "00000000000000ee", "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["runs"][0]["label"], label.as_str());
}

/// A run could not carry a label that import refuses: every stored run
/// can travel to another machine.
#[test]
fn a_label_longer_than_import_takes_is_refused_before_anything_runs() {
    let s = Sandbox::new();
    let long = "x".repeat(2000);
    for args in [
        vec!["run", "null_loop", "--quick", "--label", &long],
        vec!["app", "--label", &long, "--", "/bin/true"],
    ] {
        let o = s.run(&args);
        assert_refused(&o, "--label of 2000 bytes: at most 1024");
    }
    assert!(!s.db().exists());
}

/// `runs` says what each run measured: counts and names in brief, the
/// workload's curve included (a tcp_rr run is not "measurements 0").
#[test]
fn runs_names_what_a_run_measured() {
    let s = Sandbox::new();
    let o = import_file(&s, "one.json", &document("00000000000000ab", "mixed"));
    assert!(o.status.success(), "{}", text(&o));
    let o = s.run(&["runs"]);
    assert!(o.status.success(), "{}", text(&o));
    let shown = String::from_utf8(o.stdout).unwrap();
    assert!(
        shown.contains("16 measurements, 1 curve: dhrystone, lat_ctx, lat_dram_page +4 more"),
        "{shown}"
    );
    let listed: serde_json::Value = serde_json::from_str(&stored(&s)).unwrap();
    assert_eq!(
        listed[0]["measured"],
        serde_json::json!([
            "dhrystone",
            "lat_ctx",
            "lat_dram_page",
            "lat_syscall",
            "line",
            "mhz",
            "tcp_rr"
        ])
    );
}
