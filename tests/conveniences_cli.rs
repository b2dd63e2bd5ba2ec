//! The conveniences users expect next to hyperfine and fio, end to end on
//! the built binary: shell completions and man pages generated from the
//! command line, examples in --help, `run --dry-run`, `runs` filters,
//! `show --format`, and `app`'s --timeout, several commands per call and
//! discarded output. Stored runs are synthesised into a temporary database.

#[path = "support/cli.rs"]
mod cli;
#[path = "support/synth.rs"]
mod synth;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use cli::{ok, touchstone, words};
use serde_json::Value;
use synth::{measurement, noisy, run, Rng};
use touchstone_results::store::{Open, Store};
use touchstone_results::Unit;

fn all_text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Three stored runs: alpha on 1 March 2024 (label "base"), beta on the
/// 11th (no label), alpha again on the 21st (label "after BIOS update").
fn stored(dir: &Path) -> PathBuf {
    let mut rng = Rng::new(3);
    let mut runs = vec![
        run("aaaa0001", "alpha", Some("base"), 0),
        run("bbbb0002", "beta", None, 10),
        run("cccc0003", "alpha", Some("after BIOS update"), 20),
    ];
    for r in &mut runs {
        r.measurements = vec![
            measurement(
                "lat_syscall/null",
                "proc",
                Unit::Ns,
                1,
                noisy(&mut rng, 100.0, 0.01),
            ),
            measurement(
                "bw_mem/rd/size:1m",
                "mem_bw",
                Unit::MBps,
                1,
                noisy(&mut rng, 1000.0, 0.01),
            ),
        ];
    }
    let db = dir.join("results.sqlite");
    Store::open(&db, Open::CreateIfMissing)
        .unwrap()
        .import_runs(&runs)
        .unwrap();
    db
}

#[test]
fn completions_and_man_pages_come_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.sqlite");
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = ok(&db, &["completions", shell]);
        for word in ["touchstone", "compare", "completions", "dry-run", "timeout"] {
            assert!(script.contains(word), "{shell} completion lacks {word}");
        }
    }
    let out = touchstone(&db, &["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));

    let page = ok(&db, &["man"]);
    assert!(page.contains(".TH touchstone"), "{page}");
    assert!(page.contains("completions"));
    // The examples reach the page, set line by line.
    assert!(
        page.contains(".SH EXAMPLES\n.nf\nExamples:\n  touchstone run \\-\\-quick "),
        "{page}"
    );
    let pages = dir.path().join("man1");
    ok(&db, &["man", "--dir", pages.to_str().unwrap()]);
    for name in [
        "touchstone.1",
        "touchstone-run.1",
        "touchstone-app.1",
        "touchstone-runs.1",
    ] {
        let text = std::fs::read_to_string(pages.join(name)).unwrap_or_default();
        assert!(text.contains(".TH"), "{name} missing or empty");
    }
    let run_page = std::fs::read_to_string(pages.join("touchstone-run.1")).unwrap();
    assert!(run_page.contains("dry\\-run"), "{run_page}");
    assert!(run_page.contains(".SH EXAMPLES"), "{run_page}");
    // Every page a page names (`touchstone\-fleet\-run(1)`) was written,
    // and every page says how it exits, what it keeps and what it reads.
    for entry in std::fs::read_dir(&pages).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for section in [".SH \"EXIT STATUS\"", ".SH FILES", ".SH ENVIRONMENT"] {
            assert!(text.contains(section), "{path:?} lacks {section}");
        }
        for line in text.lines().filter(|l| l.starts_with("touchstone\\-")) {
            if let Some(page) = line.strip_suffix("(1)") {
                let page = page.replace("\\-", "-");
                assert!(
                    pages.join(format!("{page}.1")).exists(),
                    "{path:?} names {page}(1), never written"
                );
            }
        }
    }
    assert!(pages.join("touchstone-fleet-run.1").exists());
    // Nothing here opened or created a store.
    assert!(!db.exists());
}

#[test]
fn help_shows_examples() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.sqlite");
    for (args, example) in [
        (&["--help"][..], "touchstone run --quick"),
        (&["run", "--help"][..], "touchstone run --dry-run --quick"),
        (
            &["app", "--help"][..],
            "touchstone app 'gzip -k -f big.tar' 'zstd -k -f big.tar'",
        ),
        (
            &["report", "--help"][..],
            "touchstone report --html report.html",
        ),
        (&["compare", "--help"][..], "touchstone compare last~1 last"),
    ] {
        let help = ok(&db, args);
        assert!(help.contains("Examples:"), "{args:?}: {help}");
        assert!(help.contains(example), "{args:?}: {help}");
    }
}

#[test]
fn dry_run_lists_cases_and_an_estimate_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let start = Instant::now();
    let json = |line: &str| -> Value { serde_json::from_str(&ok(&db, &words(line))).unwrap() };
    let text = ok(
        &db,
        &words("run --dry-run --quick lat_syscall/null,read -P 1,2"),
    );
    assert!(text.contains("lat_syscall/null"), "{text}");
    assert!(text.contains("lat_syscall/read"), "{text}");
    assert!(text.contains("4 measurement(s)"), "{text}");
    assert!(text.contains("estimated time about"), "{text}");
    assert!(text.contains("Nothing was run"), "{text}");
    // Two cases at 2 processes take at least 7 parallel intervals each.
    let doc = json("run --dry-run --quick --json lat_syscall/null,read -P 1,2");
    assert_eq!(doc["cases"].as_array().unwrap().len(), 4);
    let total = doc["seconds"].as_f64().unwrap();
    assert!(total >= 2.0 * 7.0 * 0.2, "{doc}");
    let sum: f64 = doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["seconds"].as_f64().unwrap())
        .sum();
    assert!((sum - total).abs() < 1e-6, "{doc}");

    // A workload sweep: its points × trials × (warm-up + window).
    let doc = json("run --dry-run --json tcp_rr/load:1,2 --cpus 1 --window 1s --warmup 500ms");
    let sweep = &doc["sweeps"][0];
    assert_eq!(sweep["points"], 2, "{doc}");
    let low = sweep["seconds"].as_f64().unwrap();
    let high = sweep["max_seconds"].as_f64().unwrap();
    assert!(low >= 2.0 * 4.0 * 1.5, "{doc}");
    assert!(high > low, "{doc}");

    // A workload whose trials are shorter than the run's (loaded_latency:
    // 0.1 s + 0.5 s) is estimated at its own: ten levels of four trials,
    // not the 2 min 40 s of the engine's 1 s + 3 s.
    let doc = json("run --dry-run --json loaded_latency/mix:rd/size:1m");
    let sweep = &doc["sweeps"][0];
    assert_eq!(sweep["points"], 10, "{doc}");
    let low = sweep["seconds"].as_f64().unwrap();
    assert!((10.0 * 4.0 * 0.6..60.0).contains(&low), "{doc}");
    // Nothing ran, nothing was stored, and it was quick to say so.
    assert!(!db.exists(), "a dry run created the store");
    assert!(start.elapsed() < Duration::from_secs(60));
    // Bad input is still refused.
    let out = touchstone(&db, &["run", "--dry-run", "no_such_benchmark"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn runs_are_filtered_by_label_host_and_date() {
    let dir = tempfile::tempdir().unwrap();
    let db = stored(dir.path());
    let ids = |args: &[&str]| -> Vec<String> {
        let mut full = vec!["runs", "--json"];
        full.extend_from_slice(args);
        let rows: Value = serde_json::from_str(&ok(&db, &full)).unwrap();
        rows.as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    assert_eq!(ids(&[]).len(), 3);
    assert_eq!(ids(&["--label", "BIOS"]), ["cccc0003"]);
    assert_eq!(sorted(ids(&["--host", "alpha"])), ["aaaa0001", "cccc0003"]);
    assert_eq!(
        sorted(ids(&["--since", "2024-03-05"])),
        ["bbbb0002", "cccc0003"]
    );
    // --until takes in the whole of its day.
    assert_eq!(
        sorted(ids(&["--until", "2024-03-11"])),
        ["aaaa0001", "bbbb0002"]
    );
    assert_eq!(
        ids(&[
            "--host",
            "alpha",
            "--since",
            "2024-03-02T00:00",
            "--until",
            "2024-03-30"
        ]),
        ["cccc0003"]
    );
    // Ages count back from now: these runs are years old.
    assert!(ids(&["--since", "7d"]).is_empty());
    let text = ok(&db, &["runs", "--label", "nothing-like-this"]);
    assert!(text.contains("none of the 3 runs"), "{text}");
    for bad in [
        &["runs", "--since", "last tuesday"][..],
        &["runs", "--since", "2024-03-10", "--until", "2024-03-01"],
    ] {
        let out = touchstone(&db, bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
}

#[test]
fn show_prints_csv_markdown_json_or_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = stored(dir.path());
    let csv = ok(&db, &["show", "cccc0003", "--format", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("run,host,label,name,"), "{csv}");
    assert!(
        lines[1].starts_with("cccc0003,alpha,after BIOS update,"),
        "{csv}"
    );
    assert!(csv.contains(",MB/s,median,"), "{csv}");
    let md = ok(&db, &["show", "cccc0003", "--format", "markdown"]);
    assert!(md.starts_with("# touchstone run cccc0003"), "{md}");
    assert!(md.contains("| lat_syscall/null | 1 |"), "{md}");
    let json: Value =
        serde_json::from_str(&ok(&db, &["show", "cccc0003", "--format", "json"])).unwrap();
    assert_eq!(json["runs"][0]["id"], "cccc0003");
    let same: Value = serde_json::from_str(&ok(&db, &["show", "cccc0003", "--json"])).unwrap();
    assert_eq!(json["runs"], same["runs"]);
    let table = ok(&db, &["show", "cccc0003"]);
    assert!(
        table.contains("lat_syscall/null") && table.contains('│'),
        "{table}"
    );
    let out = touchstone(&db, &["show", "cccc0003", "--json", "--format", "csv"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(marker) {
                found.push(format!("{}: {cmd}", e.file_name().to_string_lossy()));
            }
        }
    }
    found
}

#[test]
fn a_command_past_its_timeout_is_killed_with_everything_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    // The shell starts two sleeps, one in the background: both must go.
    let start = Instant::now();
    let out = touchstone(
        &db,
        &[
            "app",
            "--timeout",
            "300ms",
            "-r",
            "3",
            "--name",
            "hangs",
            "--",
            "sh",
            "-c",
            "sleep 987.25 & sleep 987.5; wait",
        ],
    );
    let took = start.elapsed();
    assert_eq!(out.status.code(), Some(1), "{}", all_text(&out));
    let text = all_text(&out);
    assert!(
        text.contains("did not finish within the --timeout of 300 ms"),
        "{text}"
    );
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_with("sleep 987.").is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(processes_with("sleep 987."), Vec::<String>::new());
    // The run is stored as failed, with the reason.
    let rows: Value = serde_json::from_str(&ok(&db, &["runs", "--json"])).unwrap();
    assert_eq!(rows[0]["status"], "failed");
}

#[test]
fn several_commands_are_compared_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let out = touchstone(&db, &["app", "-r", "5", "sleep 0.02", "sleep '0.08'"]);
    let text = all_text(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("app/sleep-1") && text.contains("app/sleep-2"),
        "{text}"
    );
    // The shorter sleep is the faster, by about 4× (loosely: a busy machine).
    let line = text
        .lines()
        .find(|l| l.contains("faster than app/sleep-2"))
        .unwrap_or_else(|| panic!("no summary line: {text}"));
    assert!(text.contains("summary: app/sleep-1 ran"), "{text}");
    let factor: f64 = line.trim().split(' ').next().unwrap().parse().unwrap();
    assert!((2.0..5.0).contains(&factor), "{line}");
    let doc: Value = serde_json::from_str(&ok(&db, &["show", "last", "--json"])).unwrap();
    let names: Vec<&str> = doc["runs"][0]["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["app/sleep-1", "app/sleep-2"]);
    // Names given per command; a count that does not match is refused.
    let out = touchstone(&db, &["app", "-n", "a", "true", "false"]);
    assert_eq!(out.status.code(), Some(2), "{}", all_text(&out));
    let out = touchstone(&db, &["app", "true", "--", "true"]);
    assert_eq!(out.status.code(), Some(2), "{}", all_text(&out));
    let out = touchstone(&db, &["app", "echo 'unbalanced"]);
    assert_eq!(out.status.code(), Some(2), "{}", all_text(&out));
}

#[test]
fn the_programs_output_and_errors_are_discarded_unless_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let script = "echo marker-on-stdout; echo marker-on-stderr >&2";
    let quiet = touchstone(
        &db,
        &["app", "--no-store", "-r", "1", "--", "sh", "-c", script],
    );
    let text = all_text(&quiet);
    assert!(quiet.status.success(), "{text}");
    assert!(!text.contains("marker-on-stdout"), "{text}");
    assert!(!text.contains("marker-on-stderr"), "{text}");
    let shown = touchstone(
        &db,
        &[
            "app",
            "--no-store",
            "-r",
            "1",
            "--show-output",
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    let text = all_text(&shown);
    assert!(text.contains("marker-on-stdout"), "{text}");
    assert!(text.contains("marker-on-stderr"), "{text}");
    // The launch overhead is reported beside the figure.
    assert!(
        all_text(&quiet).contains("launching and reaping a process"),
        "{}",
        all_text(&quiet)
    );
}
