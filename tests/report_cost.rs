//! Reports that rank by cost (issue 30): the index per 1,000 of the
//! currency and per watt from the hosts' inventory, `--sort` on them, the
//! Pareto fronts, and the page's scatter of index against price and power.

#[path = "support/browser.rs"]
mod browser;
#[path = "support/cli.rs"]
mod cli;
#[path = "support/synth.rs"]
mod synth;

use std::path::{Path, PathBuf};

use browser::rendered;
use cli::{fails, ok, store, words};
use serde_json::Value;
use synth::{measurement, noisy, run, Rng};
use touchstone_results::{Run, Unit};

/// Three hosts of known speed, price and power (issue 30): alpha the
/// base (index 100), beta twice as fast (200), gamma four times (400).
/// alpha 1,000 EUR and 100 W busy; beta 4,000 EUR and 50 W busy; gamma
/// 2,000 EUR and an 800 W nameplate.
fn priced_hosts(dir: &Path) -> PathBuf {
    let mut rng = Rng::new(30);
    let lat = "lat_syscall/null";
    let runs: Vec<Run> = [
        ("aaaa0001", "alpha", 100.0),
        ("bbbb0002", "beta", 50.0),
        ("cccc0003", "gamma", 25.0),
    ]
    .iter()
    .enumerate()
    .map(|(day, &(id, host, ns))| {
        let mut r = run(id, host, None, day as i64);
        r.measurements = vec![measurement(
            lat,
            "proc",
            Unit::Ns,
            1,
            noisy(&mut rng, ns, 0.005),
        )];
        r
    })
    .collect();
    let db = store(dir, &runs);
    for args in [
        ["alpha", "--price", "1000", "--watts-busy", "100"],
        ["beta", "--price", "4000", "--watts-busy", "50"],
        ["gamma", "--price", "2000", "--watts-nameplate", "800"],
    ] {
        let mut all = vec!["inventory", "set"];
        all.extend(args);
        all.extend(["--currency", "EUR", "--date", "2026-03-01"]);
        ok(&db, &all);
    }
    db
}

/// The hosts of a JSON report's cost figures, in its order, and those on
/// the price's and the power's Pareto fronts.
fn cost_ranking(report: &str) -> (Vec<String>, Vec<String>, Vec<String>) {
    let v: Value = serde_json::from_str(report).unwrap();
    let runs = v["cost"]["runs"].as_array().unwrap().clone();
    let hosts = |pick: &dyn Fn(&Value) -> bool| -> Vec<String> {
        runs.iter()
            .filter(|r| pick(r))
            .map(|r| r["host"].as_str().unwrap().to_string())
            .collect()
    };
    (
        hosts(&|_| true),
        hosts(&|r| r["front_price"] == true),
        hosts(&|r| r["front_power"] == true),
    )
}

#[test]
fn report_ranks_three_hosts_by_cost_and_marks_the_pareto_front() {
    let dir = tempfile::tempdir().unwrap();
    let db = priced_hosts(dir.path());
    let json = |sort: &str| ok(&db, &["report", "--sort", sort, "--format", "json"]);
    let (by_price, front_price, front_power) = cost_ranking(&json("per-price"));
    // Per 1,000 EUR: gamma 200, alpha 100, beta 50.
    assert_eq!(by_price, ["gamma", "alpha", "beta"]);
    // gamma is faster and cheaper than beta; alpha is the cheapest.
    assert_eq!(front_price, ["gamma", "alpha"]);
    // beta is faster than alpha at less power; gamma is the fastest.
    assert_eq!(front_power, ["gamma", "beta"]);
    // Per watt: beta 4, alpha 1, gamma 0.5 (its nameplate, said so).
    assert_eq!(
        cost_ranking(&json("per-watt")).0,
        ["beta", "alpha", "gamma"]
    );
    assert_eq!(cost_ranking(&json("index")).0, ["gamma", "beta", "alpha"]);
    let v: Value = serde_json::from_str(&json("per-price")).unwrap();
    let gamma = &v["cost"]["runs"][0];
    assert!(
        (gamma["per_price"]["value"].as_f64().unwrap() - 200.0).abs() < 2.0,
        "{gamma}"
    );
    assert_eq!(gamma["power"], "nameplate");
    // The interval is the index's, scaled by the same price.
    let (i, p) = (&gamma["index"]["interval"], &gamma["per_price"]["interval"]);
    assert!((i[0].as_f64().unwrap() / 2.0 - p[0].as_f64().unwrap()).abs() < 1e-9);

    // The terminal and Markdown show the same sheet.
    let text = ok(&db, &["report", "--sort", "per-price"]);
    assert!(
        text.contains("index per 1,000 EUR") && text.contains("800 (nameplate)"),
        "{text}"
    );
    let md = ok(&db, &["report", "--format", "markdown"]);
    assert!(md.contains("index per W"), "{md}");
    // compare and fleet report give them too.
    let cmp = ok(
        &db,
        &[
            "compare", "aaaa0001", "bbbb0002", "cccc0003", "--sort", "per-watt",
        ],
    );
    assert!(cmp.contains("index per 1,000 EUR"), "{cmp}");
    let fleet = ok(&db, &["fleet", "report", "--sort", "per-price"]);
    assert!(fleet.contains("index per 1,000 EUR"), "{fleet}");

    // The page: the sheet, and the index against price and against power,
    // each with its front joined and ringed, rendered without a console line.
    let page = dir.path().join("cost.html");
    ok(
        &db,
        &[
            "report",
            "--sort",
            "per-price",
            "--html",
            page.to_str().unwrap(),
        ],
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(r#"<section id="cost">"#), "no cost section");
    for chart in ["Index against price", "Index against power"] {
        assert!(
            html.contains(&format!(r#"aria-label="{chart}""#)),
            "no chart {chart}"
        );
    }
    assert_eq!(html.matches("<title>Pareto front</title>").count(), 2);
    if let Some(dom) = rendered(&page, &[]) {
        assert!(dom.contains("Index against power"));
    }

    // Another currency: no per-price figures at all, and the report says why.
    ok(
        &db,
        &words("inventory set gamma --price 2100 --currency USD --date 2026-03-01"),
    );
    let v: Value = serde_json::from_str(&ok(&db, &["report", "--format", "json"])).unwrap();
    assert!(v["cost"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["per_price"].is_null()));
    assert!(
        v["cost"]["notes"][0].as_str().unwrap().contains("EUR, USD"),
        "{}",
        v["cost"]
    );
    let e = fails(&db, &["report", "--sort", "per-price"]);
    assert!(e.contains("several currencies"), "{e}");
}

/// The fields of one CSV line (RFC 4180 quoting).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// A CSV document as a header and rows of named fields.
fn csv_table(text: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut lines = text.lines();
    let head = csv_fields(lines.next().unwrap());
    lines
        .map(|l| head.iter().cloned().zip(csv_fields(l)).collect())
        .collect()
}

fn close_to(field: &str, want: f64, tolerance: f64) -> bool {
    field
        .parse::<f64>()
        .is_ok_and(|v| (v - want).abs() <= tolerance)
}

#[test]
fn csv_reports_carry_the_cost_columns_with_their_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let db = priced_hosts(dir.path());
    let ids = ["aaaa0001", "bbbb0002", "cccc0003"];

    // The summary: one `cost` line per figure, one column per run.
    let rows = csv_table(&ok(&db, &["report", "--format", "csv"]));
    let figure = |name: &str| {
        rows.iter()
            .find(|r| r["group"] == "cost" && r["measurement"] == name)
            .unwrap_or_else(|| panic!("no cost line {name}"))
    };
    let per_price = figure("index_per_price");
    assert_eq!(per_price["unit"], "index per 1,000 EUR");
    // alpha 100 / 1 = 100, beta 200 / 4 = 50, gamma 400 / 2 = 200.
    for (id, want) in ids.iter().zip([100.0, 50.0, 200.0]) {
        assert!(close_to(&per_price[*id], want, 2.0), "{id}: {per_price:?}");
    }
    let per_watt = figure("index_per_watt");
    for (id, want) in ids.iter().zip([1.0, 4.0, 0.5]) {
        assert!(close_to(&per_watt[*id], want, 0.02), "{id}: {per_watt:?}");
    }
    assert_eq!(figure("power")["cccc0003"], "nameplate");
    assert_eq!(figure("price_pareto_front")["bbbb0002"], "false");
    assert_eq!(figure("power_pareto_front")["bbbb0002"], "true");
    // Each interval holds its figure, and is the index's divided alike.
    let (low, high) = (
        figure("index_per_price_low"),
        figure("index_per_price_high"),
    );
    let index_low = figure("index_low");
    for id in &ids[1..] {
        let (l, v, h): (f64, f64, f64) = (
            low[*id].parse().unwrap(),
            per_price[*id].parse().unwrap(),
            high[*id].parse().unwrap(),
        );
        assert!(l <= v && v <= h, "{id}: {l} {v} {h}");
    }
    let gamma_low: f64 = index_low["cccc0003"].parse().unwrap();
    assert!(close_to(&low["cccc0003"], gamma_low / 2.0, 1e-9), "{low:?}");

    // The wide summary: the same figures as columns of each run's line.
    let rows = csv_table(&ok(&db, &["report", "--format", "csv", "--wide"]));
    let gamma = rows.iter().find(|r| r["run"] == "cccc0003").unwrap();
    assert!(
        close_to(&gamma["index_per_price (index per 1,000 EUR)"], 200.0, 2.0),
        "{gamma:?}"
    );
    assert!(
        close_to(&gamma["index_per_watt (index per W)"], 0.5, 0.01),
        "{gamma:?}"
    );
    assert_eq!(gamma["price (currency)"], "2000");
    assert_eq!(gamma["currency (ISO 4217)"], "EUR");
    assert!(!gamma["index_per_watt_low (index per W)"].is_empty());

    // The comparison: a line per other run and figure after the index's.
    let rows = csv_table(&ok(
        &db,
        &[
            "compare", "aaaa0001", "bbbb0002", "cccc0003", "--format", "csv",
        ],
    ));
    let line = |bench: &str, run: &str| {
        rows.iter()
            .find(|r| r["benchmark"] == bench && r["run"] == run)
            .unwrap_or_else(|| panic!("no {bench} line for {run}"))
    };
    let beta = line("INDEX_PER_WATT", "bbbb0002");
    assert!(close_to(&beta["value"], 4.0, 0.05), "{beta:?}");
    assert!(close_to(&beta["base_value"], 1.0, 1e-9), "{beta:?}");
    assert_eq!(beta["verdict"], "pareto front");
    let gamma = line("INDEX_PER_PRICE", "cccc0003");
    assert!(close_to(&gamma["value"], 200.0, 2.0), "{gamma:?}");
    assert!(!gamma["ratio_low"].is_empty() && !gamma["ratio_high"].is_empty());

    // Without an inventory, no cost line or column.
    let bare = tempfile::tempdir().unwrap();
    let db = store(bare.path(), &[run("dddd0004", "delta", None, 0)]);
    let text = ok(&db, &["report", "--format", "csv"]);
    assert!(!text.contains("index_per"), "{text}");
    let text = ok(&db, &["report", "--format", "csv", "--wide"]);
    assert!(!text.contains("index_per"), "{text}");
}
