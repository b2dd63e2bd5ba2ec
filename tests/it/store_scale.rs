//! The store at a farm's scale (issue 25), on synthetic stores of farm
//! nodes' runs (`synth::farm_run`; `examples/synth_runs.rs --farm` makes
//! the 1,000-run store of docs/validation.md): an export imported whole
//! into an empty store, reading commands whose memory grows with the
//! figures and not the samples, a page over many runs that stays
//! readable, and a store from before briefs read the same.

use std::path::{Path, PathBuf};

use touchstone_results::store::{Open, Store};

use crate::common::{assert_refused, assert_says, text, Sandbox};

#[path = "../support/synth.rs"]
#[allow(dead_code)]
mod synth;

/// Store `runs` farm runs of nodes on `hosts` hosts at `path`, fifty runs
/// to a transaction (as `examples/synth_runs.rs --farm` does).
pub fn farm_store(path: &Path, runs: usize, hosts: usize) {
    let mut store = Store::open(path, Open::CreateIfMissing).unwrap();
    let mut batch = Vec::new();
    for i in 0..runs {
        batch.push(synth::farm_run(i, hosts));
        if batch.len() == 50 || i + 1 == runs {
            store.import_runs(&batch).unwrap();
            batch.clear();
        }
    }
}

fn ok(o: &std::process::Output) {
    assert!(o.status.success(), "{}", text(o));
}

/// A sandbox whose store holds a farm's `runs` runs of `hosts` hosts, and
/// their export (`farm.json` in it).
fn exported_farm(runs: usize, hosts: usize) -> (Sandbox, PathBuf) {
    let a = Sandbox::new();
    farm_store(&a.db(), runs, hosts);
    let file = a.path("farm.json");
    ok(&a.run(&["export", "-o", file.to_str().unwrap()]));
    (a, file)
}

/// An export of a farm's store, imported whole into an empty store: every
/// run and every measurement equal, read whole and in brief.
#[test]
fn a_farm_store_exported_imports_whole_into_an_empty_store() {
    let (a, file) = exported_farm(50, 20);
    let b = Sandbox::new();
    let o = b.run(&["import", file.to_str().unwrap()]);
    ok(&o);
    assert_says(&o, "imported 50 run(s)");
    let src = Store::open(&a.db(), Open::ReadOnly).unwrap();
    let dst = Store::open(&b.db(), Open::ReadOnly).unwrap();
    let ids =
        |s: &Store| -> Vec<String> { s.list_runs().unwrap().into_iter().map(|r| r.id).collect() };
    assert_eq!(ids(&src), ids(&dst));
    assert_eq!(ids(&src).len(), 50);
    for id in ids(&src) {
        let (x, y) = (src.load_run(&id).unwrap(), dst.load_run(&id).unwrap());
        assert_eq!(x.measurements.len(), 302);
        assert_eq!(x, y, "run {id}");
        assert_eq!(src.briefs(&id).unwrap(), dst.briefs(&id).unwrap());
    }
}

/// The peak resident memory of `touchstone ARGS` on the store of `s`, KiB.
fn peak_rss_kib(s: &Sandbox, args: &[&str]) -> i64 {
    let child = s.spawn_silent(args);
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    // SAFETY: wait4 on our own child fills the status and usage given.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{args:?}"
    );
    usage.ru_maxrss
}

/// `report` reads the summaries the tables need, not every sample and
/// interval of every run: over 200 runs its peak memory exceeds that over
/// 20 by far less than the 180 runs' stored data (reading them whole, it
/// grew by more than that data).
#[test]
fn report_memory_grows_with_the_summaries_not_the_samples() {
    let (few, many) = (Sandbox::new(), Sandbox::new());
    farm_store(&few.db(), 20, 10);
    farm_store(&many.db(), 200, 100);
    let size = |s: &Sandbox| std::fs::metadata(s.db()).unwrap().len() as i64 / 1024;
    let data = size(&many) - size(&few);
    for args in [vec!["report"], vec!["fleet", "report"]] {
        let out = |s: &Sandbox| peak_rss_kib(s, &args);
        let grown = out(&many) - out(&few);
        assert!(
            grown * 4 < data,
            "{args:?}: {grown} KiB more for {data} KiB more stored"
        );
    }
}

/// `report --html FILE` writes the page and only the page (the text
/// report too only where asked for); over more than twenty runs the page
/// summarises every run and draws the first twenty, so that it grows with
/// the runs by a row each, not by their charts and samples.
#[test]
fn a_page_over_many_runs_stays_readable() {
    let pages: Vec<(usize, String)> = [30, 60]
        .iter()
        .map(|&n| {
            let s = Sandbox::new();
            farm_store(&s.db(), n, n / 2);
            let page = s.path("page.html");
            let o = s.run(&["report", "--html", page.to_str().unwrap()]);
            ok(&o);
            assert!(o.stdout.is_empty(), "only the page: {}", text(&o));
            assert_eq!(
                String::from_utf8_lossy(&o.stderr).trim(),
                format!("HTML report written to {}", page.display())
            );
            (n, std::fs::read_to_string(&page).unwrap())
        })
        .collect();
    for (n, page) in &pages {
        assert!(
            page.contains(&format!("{n} runs: the runs, the index and each figure")),
            "{n}"
        );
        let section = |id: &str| {
            let at = page.find(&format!(r#"<section id="{id}">"#)).unwrap();
            &page[at..at + page[at..].find("</section>").unwrap()]
        };
        // Every run in the runs table and the index, once a row.
        let rows = |s: &str| s.matches("<tr>").count() - 1;
        assert_eq!(rows(section("runs")), *n);
        assert_eq!(rows(section("index")), *n);
        // The figures' spread: one row per measurement (a heading per table).
        let summary = section("summary");
        assert_eq!(
            summary.matches("<tr>").count() - summary.matches("<table").count(),
            302
        );
        // Twenty drawn: each histogram overlays twenty runs' samples.
        let samples = section("histograms");
        let legend = &samples[samples.find(r#"<div class="legend">"#).unwrap()..];
        let legend = &legend[..legend.find("</div>").unwrap()];
        assert_eq!(legend.matches("swatch").count(), 20);
        // The rows per run are shown on demand: the page opens on the
        // figures' spread and the charts.
        let before_chart = &page[..page.find("<svg").unwrap()];
        let mut shown = before_chart.to_string();
        while let Some(at) = shown.find("<details>") {
            let end = at + shown[at..].find("</details>").unwrap() + "</details>".len();
            shown.replace_range(at..end, "");
        }
        let shown_rows = shown.matches("<tr>").count();
        assert!(
            shown_rows <= summary.matches("<tr>").count(),
            "{n} runs: {shown_rows} rows before the first chart"
        );
        assert!(before_chart.contains(&format!("<details><summary>Every run ({n})")));
    }
    let (small, large) = (pages[0].1.len(), pages[1].1.len());
    assert!(
        large < small + small / 2,
        "twice the runs: a page of {large} bytes against {small}"
    );
}

/// With --html and -o, both: the page, and the text report in the file.
#[test]
fn report_html_with_output_writes_both() {
    let s = Sandbox::new();
    farm_store(&s.db(), 3, 3);
    let (page, table) = (s.path("page.html"), s.path("table.txt"));
    let o = s.run(&[
        "report",
        "--html",
        page.to_str().unwrap(),
        "-o",
        table.to_str().unwrap(),
    ]);
    ok(&o);
    assert!(o.stdout.is_empty());
    assert!(std::fs::read_to_string(&page)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    assert!(std::fs::read_to_string(&table)
        .unwrap()
        .starts_with("Runs:"));
}

/// A store of schema 3 (before briefs): read as it is, its measurements
/// read in brief from their documents; once written it is at schema 4, the
/// runs stored before still read from their documents and the runs stored
/// after from their briefs, and every report reads the same throughout.
#[test]
fn a_store_from_before_briefs_reports_the_same_before_and_after_its_upgrade() {
    let s = Sandbox::new();
    farm_store(&s.db(), 4, 4);
    let report = |s: &Sandbox| -> Vec<String> {
        ["table", "csv", "json"]
            .iter()
            .map(|f| {
                let o = s.run(&["report", "--format", f]);
                ok(&o);
                String::from_utf8(o.stdout).unwrap()
            })
            .collect()
    };
    let current = report(&s);
    rusqlite::Connection::open(s.db())
        .unwrap()
        .execute_batch("DROP TABLE briefs; DROP TABLE inventory; PRAGMA user_version = 3;")
        .unwrap();
    assert_eq!(report(&s), current, "read from the documents");
    // Written (an import of one more run) : upgraded, briefs for the new run only.
    let more = s.path("more.json");
    let other = Sandbox::new();
    farm_store(&other.db(), 5, 4);
    ok(&other.run(&["export", "-o", more.to_str().unwrap(), &synth::farm_id(4)]));
    ok(&s.run(&["import", more.to_str().unwrap()]));
    let c = rusqlite::Connection::open(s.db()).unwrap();
    let version: i32 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, touchstone_results::store::SCHEMA_VERSION);
    let briefs: i64 = c
        .query_row("SELECT count(DISTINCT run_id) FROM briefs", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(briefs, 1);
    drop(c);
    let grown = report(&other);
    assert_eq!(
        report(&s),
        grown,
        "four runs read from documents, one in brief"
    );
}

/// An import refused after its first runs went in leaves no store where
/// there was none.
#[test]
fn an_import_refused_half_way_leaves_no_store_behind() {
    let (_farm, file) = exported_farm(3, 3);
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    doc["runs"][2]["measurements"][0]["samples"][0] = (-1.0).into();
    std::fs::write(&file, doc.to_string()).unwrap();
    let b = Sandbox::new();
    let o = b.run(&["import", file.to_str().unwrap()]);
    assert_refused(&o, "runs[2].measurements[0].samples[0]");
    assert!(!b.db().exists(), "the store this import made is gone");
}

/// `report` on a terminal over more than twenty runs prints each figure's
/// spread across them (a row per measurement, whatever the runs), not a
/// column per run: over 1,000 farm runs that was 19.6 MB of tables and
/// 6.5 s. `--wide` still gives every run its row.
#[test]
fn a_text_report_over_many_runs_prints_the_spread() {
    let lines: Vec<usize> = [30, 60]
        .iter()
        .map(|&n| {
            let s = Sandbox::new();
            farm_store(&s.db(), n, n / 2);
            let o = s.run(&["report"]);
            ok(&o);
            let out = String::from_utf8_lossy(&o.stdout).to_string();
            assert!(
                out.starts_with(&format!("{n} runs: each figure's spread")),
                "{out}"
            );
            assert!(out.contains("run with the highest"), "{out}");
            let wide = s.run(&["report", "--wide"]);
            ok(&wide);
            let wide = String::from_utf8_lossy(&wide.stdout).to_string();
            let farm_rows = wide.lines().filter(|l| l.contains("farm sitting")).count();
            assert!(farm_rows >= n, "--wide: {farm_rows} rows for {n} runs");
            out.lines().count()
        })
        .collect();
    assert_eq!(lines[0], lines[1], "the same rows for 30 runs as for 60");
}
