//! `touchstone report` and `touchstone compare` end to end: runs are
//! synthesised into a temporary database through the public results API
//! (never the user's), then the command's output is checked: sorting,
//! ratios, significance marks, indices, exports, the HTML page in a real
//! headless browser, and the bad-input cases.

#[path = "support/browser.rs"]
mod browser;
#[path = "support/cli.rs"]
mod cli;
#[path = "support/synth.rs"]
mod synth;

use std::path::Path;

use browser::{chromium, headless, rendered};
use cli::{fails, ok, store, touchstone};
use serde_json::Value;
use synth::{measurement, noisy, run, usl_curve, Rng};
use touchstone_results::{Run, Unit};

/// Eleven samples within ±0.5 % of `v`: any 2× difference is real.
fn tight(rng: &mut Rng, v: f64) -> Vec<f64> {
    noisy(rng, v, 0.005)
}

/// Three machines: beta is twice as fast as alpha at syscalls, gamma half
/// as fast; bandwidth: beta the same as alpha within noise, gamma 4×.
/// beta also has lat_pipe, which alpha (the base) lacks.
fn three_runs() -> Vec<Run> {
    let mut rng = Rng::new(7);
    let mut a = run("aaaa0001", "alpha", Some("base"), 0);
    let mut b = run("bbbb0002", "beta", None, 1);
    let mut c = run("cccc0003", "gamma", Some("old"), 2);
    let lat = "lat_syscall/null";
    let bw = "bw_mem/rd/size:1m";
    a.measurements = vec![
        measurement(lat, "proc", Unit::Ns, 1, tight(&mut rng, 100.0)),
        measurement(bw, "mem_bw", Unit::MBps, 1, tight(&mut rng, 1000.0)),
    ];
    b.measurements = vec![
        measurement(lat, "proc", Unit::Ns, 1, tight(&mut rng, 50.0)),
        measurement(bw, "mem_bw", Unit::MBps, 1, noisy(&mut rng, 1010.0, 0.1)),
        measurement("lat_pipe", "comm_lat", Unit::Ns, 1, tight(&mut rng, 5000.0)),
    ];
    c.measurements = vec![
        measurement(lat, "proc", Unit::Ns, 1, tight(&mut rng, 200.0)),
        measurement(bw, "mem_bw", Unit::MBps, 1, tight(&mut rng, 4000.0)),
    ];
    vec![a, b, c]
}

#[test]
fn report_sorts_on_any_column() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path(), &three_runs());
    // Latency: lowest first. The runs are the CSV's columns, in that order.
    let csv = ok(
        &db,
        &["report", "--sort", "lat_syscall/null", "--format", "csv"],
    );
    assert!(
        csv.starts_with(
            "group,family,measurement,parallel,case,sweep,sweep_value,unit,bbbb0002,aaaa0001,cccc0003\n"
        ),
        "{csv}"
    );
    let line = |csv: &str, name: &str| -> Vec<String> {
        csv.lines()
            .find(|l| l.split(',').nth(2) == Some(name))
            .unwrap_or_else(|| panic!("no {name}: {csv}"))
            .split(',')
            .map(String::from)
            .collect()
    };
    let lat = line(&csv, "lat_syscall/null");
    assert_eq!(
        lat[..8],
        [
            "proc",
            "lat_syscall",
            "lat_syscall/null",
            "1",
            "lat_syscall/null",
            "",
            "",
            "ns"
        ]
    );
    let bw = line(&csv, "bw_mem/rd/size:1m");
    assert_eq!(
        bw[4..7],
        ["bw_mem/rd/size:1m", "", ""],
        "one size: no sweep"
    );
    // A run lacking the figure is empty, not zero.
    let pipe = line(&csv, "lat_pipe");
    assert!(pipe[8].parse::<f64>().unwrap() > 4000.0, "{pipe:?}");
    assert_eq!(pipe[9..], ["", ""]);
    // Bandwidth: highest first; by a unique part of the name.
    let csv = ok(&db, &["report", "--sort", "bw_mem", "--format", "csv"]);
    assert!(
        csv.lines().next().unwrap().contains(",unit,cccc0003,"),
        "{csv}"
    );
    // --wide: the older layout, a run per row, sorted the same way.
    let csv = ok(
        &db,
        &["report", "--wide", "--sort", "lat_pipe", "--format", "csv"],
    );
    assert!(
        csv.starts_with(
            "run,host,label,started,lat_syscall/null (ns),lat_pipe (ns),bw_mem/rd/size:1m (MB/s)"
        ),
        "{csv}"
    );
    let ids: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(ids[0], "bbbb0002", "{csv}");
    let last = csv.lines().last().unwrap();
    assert_eq!(
        last.split(',').nth(5),
        Some(""),
        "missing figure must be empty: {last}"
    );
    // The terminal table: one per family, titled with its group, the runs
    // named in full above and by label (else host) over their columns.
    let table = ok(&db, &["report", "--sort", "host"]);
    for want in [
        "Processor & processes\n",
        "Memory bandwidth\n",
        "alpha (base), started",
        "gamma (old), started",
        "│ lat_syscall/null ┆ ns   ┆",
    ] {
        assert!(table.contains(want), "missing {want}:\n{table}");
    }
    let head = table.lines().find(|l| l.contains("┆ base")).unwrap();
    assert!(
        head.find("base") < head.find("beta") && head.find("beta") < head.find("old"),
        "{head}"
    );
    let wide = ok(&db, &["report", "--wide", "--sort", "host"]);
    assert!(
        wide.contains("lat_syscall/null (ns)") && wide.contains("alpha (base)"),
        "{wide}"
    );
    // Markdown and JSON of the same report.
    let md = ok(&db, &["report", "--format", "markdown"]);
    assert!(
        md.contains("## Processor & processes")
            && md.contains("| case | unit | base aaaa0001 | beta bbbb0002 | old cccc0003 |")
            && md.contains("aaaa0001  alpha (base), started"),
        "{md}"
    );
    let json: Value = serde_json::from_str(&ok(&db, &["report", "--format=json"])).unwrap();
    assert_eq!(json["rows"].as_array().unwrap().len(), 3);
    // Selecting runs by label, prefix and `last`.
    let csv = ok(&db, &["report", "base", "bbbb", "last", "--format", "csv"]);
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .ends_with(",unit,aaaa0001,bbbb0002,cccc0003"));
}

#[test]
fn compare_gives_ratios_marks_and_index() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path(), &three_runs());
    let doc: Value = serde_json::from_str(&ok(
        &db,
        &["compare", "base", "bbbb", "cccc", "--format", "json"],
    ))
    .unwrap();
    let rows = doc["rows"].as_array().unwrap();
    let row = |name: &str| rows.iter().find(|r| r["name"] == name).unwrap().clone();
    let lat = row("lat_syscall/null");
    let (b, c) = (&lat["runs"][0], &lat["runs"][1]);
    assert!(
        (b["ratio"]["ratio"].as_f64().unwrap() - 0.5).abs() < 0.01,
        "{b}"
    );
    assert!(
        b["ratio"]["low"].as_f64().unwrap() < 0.5 && b["ratio"]["high"].as_f64().unwrap() > 0.5
    );
    assert_eq!(b["verdict"], "faster");
    assert!(
        (c["ratio"]["ratio"].as_f64().unwrap() - 2.0).abs() < 0.02,
        "{c}"
    );
    assert_eq!(c["verdict"], "slower");
    let bw = row("bw_mem/rd/size:1m");
    assert_eq!(bw["runs"][0]["verdict"], "same", "{bw}");
    assert_eq!(bw["runs"][1]["verdict"], "faster");
    let pipe = row("lat_pipe");
    assert_eq!(pipe["base"], Value::Null);
    assert_eq!(pipe["runs"][0]["verdict"], "base_missing");
    assert_eq!(pipe["runs"][0]["ratio"], Value::Null);
    assert_eq!(pipe["runs"][1]["verdict"], "missing");
    // Index: beta 2× on syscalls, ~1× on bandwidth → overall ≈ √2 × 100.
    let index = doc["index"].as_array().unwrap();
    let line = |g: &str| index.iter().find(|l| l["group"] == g).unwrap().clone();
    let proc_ = line("proc");
    assert!(
        (proc_["values"][0].as_f64().unwrap() - 200.0).abs() < 2.0,
        "{proc_}"
    );
    assert!((proc_["values"][1].as_f64().unwrap() - 50.0).abs() < 0.5);
    let overall = line("overall");
    let ob = overall["values"][0].as_f64().unwrap();
    assert!(
        (ob - 100.0 * (2.0f64 * 1010.0 / 1000.0).sqrt()).abs() < 8.0,
        "{overall}"
    );
    let oc = overall["values"][1].as_f64().unwrap();
    assert!(
        (oc - 100.0 * 2f64.sqrt()).abs() < 2.0,
        "√(0.5 × 4) → 141: {overall}"
    );
    // The terminal form shows the marks and the missing base.
    let text = ok(&db, &["compare", "base", "bbbb", "cccc"]);
    for want in [
        "faster", "slower", "~", "no base", "missing", "overall", "Index",
    ] {
        assert!(text.contains(want), "missing {want}:\n{text}");
    }
    let csv = ok(&db, &["compare", "base", "bbbb", "--format", "csv"]);
    assert!(
        csv.lines().any(
            |l| l.starts_with("proc,lat_syscall/null,1,ns,aaaa0001,") && l.ends_with(",faster")
        ),
        "{csv}"
    );
    assert!(csv.contains("overall,INDEX"));
    let md = ok(&db, &["compare", "base", "bbbb", "--format", "markdown"]);
    let null = md
        .lines()
        .find(|l| l.starts_with("| lat_syscall/null | ns | 100"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        null.contains(" | 0.499") && null.ends_with(" | faster |"),
        "{null}"
    );
}

#[test]
fn bad_input_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path(), &three_runs());
    let e = fails(&db, &["report", "nosuchrun"]);
    assert!(e.contains("no stored run matches 'nosuchrun'"), "{e}");
    let e = fails(&db, &["compare", "base", "zzzz"]);
    assert!(e.contains("no stored run matches 'zzzz'"), "{e}");
    let e = fails(&db, &["report", "--sort", "no_such_bench"]);
    assert!(
        e.contains("no column matches --sort 'no_such_bench'"),
        "{e}"
    );
    let e = fails(&db, &["report", "-o", "/nonexistent-dir/report.txt"]);
    assert!(
        e.contains("/nonexistent-dir/report.txt: cannot write"),
        "{e}"
    );
    let e = fails(&db, &["report", "--html", "/nonexistent-dir/report.html"]);
    assert!(e.contains("cannot write"), "{e}");
    let e = fails(
        &db,
        &[
            "compare",
            "base",
            "bbbb",
            "-o",
            dir.path().to_str().unwrap(),
        ],
    );
    assert!(e.contains("cannot write"), "{e}");
    // Mixed units for one name are refused with the name and the runs.
    let mut rng = Rng::new(1);
    let mut d = run("dddd0004", "delta", None, 3);
    d.measurements = vec![measurement(
        "lat_syscall/null",
        "proc",
        Unit::OpsPerSec,
        1,
        tight(&mut rng, 1e6),
    )];
    let dir2 = tempfile::tempdir().unwrap();
    let mut runs = three_runs();
    runs.push(d);
    let db2 = store(dir2.path(), &runs);
    let e = fails(&db2, &["report"]);
    assert!(
        e.contains("'lat_syscall/null' has different units") && e.contains("ops/s in run dddd0004"),
        "{e}"
    );
    let e = fails(&db2, &["compare", "base", "dddd"]);
    assert!(e.contains("different units"), "{e}");
    // An empty or absent database.
    let e = fails(&dir2.path().join("none.sqlite"), &["report"]);
    assert!(e.contains("no results database here yet"), "{e}");
}

#[test]
fn report_over_imported_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path(), &three_runs());
    let file = dir.path().join("farm.json");
    ok(&db, &["export", "-o", file.to_str().unwrap()]);
    let other = dir.path().join("collected.sqlite");
    ok(&other, &["import", file.to_str().unwrap()]);
    let csv = ok(
        &other,
        &["report", "--sort", "lat_syscall/null", "--format", "csv"],
    );
    assert_eq!(csv.lines().count(), 4);
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .ends_with(",unit,bbbb0002,aaaa0001,cccc0003"));
    let text = ok(&other, &["compare", "base", "bbbb0002"]);
    assert!(text.contains("faster"));
}

/// A farm-like set: three machines with a lat_mem_rd staircase, a bw_mem
/// size sweep and a syscall at 1, 2 and 4 processes; the first also swept
/// tcp_rr over loads 1–64 at 1 and 2 CPUs, the second at 2 CPUs only.
fn chart_runs() -> Vec<Run> {
    let mut rng = Rng::new(3);
    let ladder = [1, 2, 4, 8, 16, 32, 64];
    let mut runs: Vec<Run> = (0..3)
        .map(|i| {
            let speed = 1.0 + i as f64 * 0.5;
            let mut r = run(
                &format!("{i}eee000{i}"),
                &format!("node{i}"),
                Some("farm"),
                i,
            );
            for (k, size) in ["4k", "32k", "256k", "2m", "16m", "64m"].iter().enumerate() {
                let v = [1.5, 1.5, 5.0, 15.0, 90.0, 95.0][k] / speed;
                r.measurements.push(measurement(
                    &format!("lat_mem_rd/stride:64/size:{size}"),
                    "mem_lat",
                    Unit::Ns,
                    1,
                    noisy(&mut rng, v, 0.03),
                ));
                let b = [50e3, 50e3, 30e3, 20e3, 10e3, 10e3][k] * speed;
                r.measurements.push(measurement(
                    &format!("bw_mem/rd/size:{size}"),
                    "mem_bw",
                    Unit::MBps,
                    1,
                    noisy(&mut rng, b, 0.03),
                ));
            }
            for p in [1, 2, 4] {
                r.measurements.push(measurement(
                    "lat_syscall/null",
                    "proc",
                    Unit::Ns,
                    p,
                    noisy(&mut rng, 50.0 * (1.0 + 0.1 * p as f64) / speed, 0.05),
                ));
            }
            r
        })
        .collect();
    // Run warnings as long as real ones: the runs table must wrap them.
    for text in [
        "load average 12.66 at start on 2 CPUs: other work competes with the benchmarks",
        "running under a hypervisor (kvm): timers, scheduling and memory are virtualised",
        "the CPU frequency governor is 'powersave': clocks may change during a measurement",
    ] {
        runs[0].warnings.push(touchstone_results::Warning::new(
            touchstone_results::warnings::WarningCode::Load,
            text,
        ));
    }
    runs[0].curves = vec![usl_curve(
        &mut rng,
        &[1, 2],
        &ladder,
        20_000.0,
        0.03,
        0.0008,
        0.01,
    )];
    runs[1].curves = vec![usl_curve(
        &mut rng,
        &[2],
        &ladder,
        26_000.0,
        0.03,
        0.0008,
        0.01,
    )];
    runs
}

#[test]
fn html_report_renders_in_a_headless_browser() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path(), &chart_runs());
    let page = dir.path().join("report.html");
    let out = touchstone(&db, &["report", "--html", page.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: nothing to fetch.
    for remote in ["http://", "https://", "src=", "<link"] {
        let hits: Vec<_> = html
            .match_indices(remote)
            .filter(|(i, _)| !html[..*i].ends_with("xmlns=\""))
            .collect();
        assert!(hits.is_empty(), "the page refers to {remote}");
    }
    let Some(dom) = rendered(&page, &["--window-size=1280,2400"]) else {
        return;
    };
    // Readable labels: no chart's tick label is drawn smaller than 9 px
    // (histograms in a grid once shrank them to about 5 px); the runs
    // table's long warnings wrap instead of overflowing.
    let attr = |name: &str| -> String {
        let at = dom
            .find(&format!("{name}=\""))
            .unwrap_or_else(|| panic!("no {name}"));
        let rest = &dom[at + name.len() + 2..];
        rest[..rest.find('"').unwrap()].to_string()
    };
    let smallest: f64 = attr("data-min-tick-px").parse().unwrap();
    assert!(smallest >= 9.0, "tick labels drawn at {smallest} px");
    assert_eq!(
        attr("data-runs-overflow"),
        "false",
        "the runs table overflows"
    );
    // The comparison with the base run: every measurement, the others'
    // figures, ratios with intervals and verdicts; node1 and node2 are
    // 1.5× and 2× as fast as node0 with tight samples.
    let cmp = &dom[dom.find("id=\"comparison\"").expect("a comparison section")..];
    let cmp = &cmp[..cmp.find("</section>").unwrap()];
    assert!(cmp.contains("Memory latency · lat_mem_rd"), "{cmp}");
    let mem = &cmp[cmp.find("Memory latency · lat_mem_rd").unwrap()..];
    let row = mem
        .split("<tr>")
        .find(|r| r.contains(">256k<"))
        .expect("the 256k row of lat_mem_rd");
    assert_eq!(row.matches("class=\"faster\"").count(), 2, "{row}");
    assert!(row.contains(">0.6"), "ratio about 1/1.5: {row}");
    // One staircase, one bandwidth sweep, one throughput chart; one
    // histogram per measurement column (6 + 6 + 3).
    let lines = dom.matches("<svg class=\"chart line").count();
    let hists = dom.matches("<svg class=\"chart hist").count();
    assert_eq!((lines, hists), (3, 15), "charts in the DOM");
    // Load curves: throughput, latency and scalability for the first run
    // (two CPU counts), throughput and latency for the second (one).
    let plots = dom.matches("<svg class=\"chart plot").count();
    assert_eq!(plots, 5, "load-curve charts in the DOM");
    let curves = &dom[dom.find("id=\"curves\"").expect("a load-curve section")..];
    for want in [
        "tcp_rr size:4 — transactions per second against load · run node0",
        "USL fit, 2 CPUs",
        "ideal S(k) = k",
        "p99.9, 1 CPU",
        "peak ",
        "knee",
    ] {
        assert!(curves.contains(want), "no {want} in the load curves");
    }
    for id in [
        "lat_mem_rd/stride:64",
        "bw_mem/rd",
        "lat_syscall/null",
        "Raw samples",
        "Index",
    ] {
        assert!(dom.contains(id), "no {id} in the page");
    }
    assert!(dom.contains("<polyline"), "no chart lines");
    let browser = chromium().expect("the browser that rendered the page");
    let profile = tempfile::tempdir().unwrap();
    let shot = dir.path().join("report.png");
    let arg = format!("--screenshot={}", shot.display());
    let out = headless(
        &browser,
        profile.path(),
        &[&arg, "--window-size=1280,2400"],
        &page,
    );
    if let Some(keep) = std::env::var_os("TOUCHSTONE_KEEP_SCREENSHOT") {
        let _ = std::fs::copy(&shot, &keep);
        let _ = std::fs::copy(&page, format!("{}.html", Path::new(&keep).display()));
    }
    let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 10_000,
        "no screenshot ({size} bytes): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Two runs of tcp_rr: beta 30 % faster at every point than alpha.
fn curve_runs() -> Vec<Run> {
    let mut rng = Rng::new(11);
    let ladder = [1, 2, 4, 8, 16, 32];
    let mut a = run("aaaa0001", "alpha", Some("base"), 0);
    let mut b = run("bbbb0002", "beta", None, 1);
    a.curves = vec![usl_curve(
        &mut rng,
        &[1, 2],
        &ladder,
        20_000.0,
        0.03,
        0.002,
        0.005,
    )];
    b.curves = vec![usl_curve(
        &mut rng,
        &[1, 2],
        &ladder,
        26_000.0,
        0.03,
        0.002,
        0.005,
    )];
    vec![a, b]
}

#[test]
fn report_and_compare_show_load_curves() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path(), &curve_runs());
    // The terminal report: one table per run, curve and CPU count, and its line.
    let text = ok(&db, &["report"]);
    for want in [
        "Load curves of run alpha (base) aaaa0001",
        "tcp_rr size:4 · 2 CPUs (0,1)",
        "throughput (k trans/s)",
        "S(k) [CI]",
        "USL over load: σ ",
        "scalability of the peaks: S(2) ",
    ] {
        assert!(text.contains(want), "missing {want}:\n{text}");
    }
    assert_eq!(
        text.matches("; crossover").count(),
        4,
        "one line per table:\n{text}"
    );
    // CSV: one line per point and figure, the two runs across.
    let csv = ok(&db, &["report", "--format", "csv"]);
    assert_eq!(csv.lines().count(), 1 + 12 * 7, "{csv}");
    assert!(csv.lines().nth(1).unwrap().starts_with(
        "curve,tcp_rr,tcp_rr/size:4/cpus:1/load:1/throughput,1,cpus:1 throughput,load,1,ops/s,"
    ));
    // --wide: one line per point after the run lines.
    let csv = ok(&db, &["report", "--wide", "--format", "csv"]);
    assert_eq!(csv.lines().count(), 1 + 2 + 2 * 12, "{csv}");
    assert!(csv
        .lines()
        .nth(3)
        .unwrap()
        .contains(",tcp_rr,size:4,transaction,1,1,"));
    // compare: 30 % faster everywhere, the intervals say so.
    let text = ok(&db, &["compare", "base", "bbbb"]);
    assert!(
        text.contains("Load curve tcp_rr size:4: throughput point by point"),
        "{text}"
    );
    assert!(
        text.contains("Load curve tcp_rr size:4: peaks and knees"),
        "{text}"
    );
    let doc: Value =
        serde_json::from_str(&ok(&db, &["compare", "base", "bbbb", "--format", "json"])).unwrap();
    let points = doc["curves"][0]["curves"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 12);
    for p in points {
        assert_eq!(p["verdict"], "faster", "{p}");
        let r = p["ratio"]["ratio"].as_f64().unwrap();
        assert!((r - 1.3).abs() < 0.03, "{p}");
    }
    let peaks = doc["curves"][0]["curves"][0]["peaks"].as_array().unwrap();
    assert_eq!(peaks.len(), 2);
    assert!(peaks.iter().all(|p| p["verdict"] == "faster"));
    // The same runs the other way round: slower.
    let csv = ok(&db, &["compare", "bbbb", "base", "--format", "csv"]);
    assert!(
        csv.lines()
            .filter(|l| l.starts_with("curve,") && !l.contains("/p99,"))
            .all(|l| l.ends_with(",slower")),
        "{csv}"
    );
}

/// `history --html FILE`: the page alone (nothing on stdout), a chart per
/// benchmark, the changed one first with a ring at its change point and
/// the change in words; it renders in the browser with no console message
/// and readable ticks.
#[test]
fn history_page_marks_the_change_points_and_renders_in_a_headless_browser() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(26);
    let runs: Vec<Run> = (0..12)
        .map(|d| {
            let slow = if d < 8 { 1.0 } else { 1.3 };
            let mut r = run(&format!("day{d:02}"), "node-7", None, d);
            r.measurements = vec![
                measurement("bw_mem/rd", "mem", Unit::MBps, 1, tight(&mut rng, 9000.0)),
                measurement(
                    "lat_syscall/null",
                    "proc",
                    Unit::Ns,
                    1,
                    tight(&mut rng, 100.0 * slow),
                ),
            ];
            r
        })
        .collect();
    let db = store(dir.path(), &runs);
    let page = dir.path().join("history.html");
    let printed = ok(
        &db,
        &[
            "history",
            "--host",
            "node-7",
            "--html",
            page.to_str().unwrap(),
        ],
    );
    assert!(printed.is_empty(), "only the page: {printed}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<svg class=\"chart plot").count(), 2);
    // The changed benchmark first, with one ring, labelled at run 9.
    let changed = html.find("<figcaption>lat_syscall/null").unwrap();
    assert!(changed < html.find("<figcaption>bw_mem/rd").unwrap());
    assert_eq!(html.matches("<g class=\"mark\">").count(), 1);
    assert!(
        html.contains(">run 9: +3"),
        "a ring labelled with the shift"
    );
    assert!(
        html.contains("change at run 9 (day08"),
        "the change in words"
    );
    let Some(dom) = rendered(&page, &[]) else {
        return;
    };
    let at = dom.find("data-min-tick-px=\"").expect("ticks measured") + 18;
    let px: f64 = dom[at..at + dom[at..].find('"').unwrap()].parse().unwrap();
    assert!(px >= 9.0, "tick labels drawn at {px} px");
}
