//! `touchstone fleet report` end to end on synthetic runs imported into a
//! private store: one host of five slowed by 30 % is flagged (terminal and
//! HTML), a normal spread flags nobody, two hosts of one hardware are too
//! few to judge, and each host counts once (its newest run).

#[path = "../support/synth.rs"]
#[allow(dead_code)]
mod synth;

use synth::{measurement, noisy, run, Rng};
use touchstone_results::store::{Open, Store};
use touchstone_results::{Run, Unit};

use crate::common::{text, Sandbox};

/// A host of the common hardware: `slow` = 1.3 is 30 % slower on everything.
fn host(rng: &mut Rng, id: &str, name: &str, spread: f64, slow: f64) -> Run {
    let mut r = run(id, name, None, 0);
    r.host.cpu.model = "Synthetic Xeon".into();
    r.measurements = vec![
        measurement(
            "lat_syscall/null",
            "proc",
            Unit::Ns,
            1,
            noisy(rng, 100.0 * spread * slow, 0.005),
        ),
        measurement(
            "bw_mem/rd/size:64m",
            "mem",
            Unit::MBps,
            1,
            noisy(rng, 9000.0 / (spread * slow), 0.005),
        ),
    ];
    r
}

fn stored(sandbox: &Sandbox, runs: &[Run]) {
    let mut s = Store::open(&sandbox.db(), Open::CreateIfMissing).unwrap();
    s.import_runs(runs).unwrap();
}

const SPREAD: [f64; 5] = [1.0, 1.015, 0.99, 1.02, 0.995];

#[test]
fn the_slow_node_is_flagged_and_the_rule_is_stated() {
    let sandbox = Sandbox::new();
    let mut rng = Rng::new(17);
    let mut runs: Vec<Run> = SPREAD
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let slow = if i == 2 { 1.3 } else { 1.0 };
            host(&mut rng, &format!("r{i}"), &format!("node{i}"), s, slow)
        })
        .collect();
    // An older run of node2, from before it went slow, is not its figure now.
    let mut old = host(&mut rng, "r2-old", "node2", 1.0, 1.0);
    old.started_at -= chrono::Duration::days(3);
    runs.push(old);
    stored(&sandbox, &runs);
    let html = sandbox.path("fleet.html");
    let o = sandbox.run(&["fleet", "report", "--html", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Fleet: 5 host(s)"), "{out}");
    assert!(out.contains("|x − median| / (1.4826·MAD) > 3.5"), "{out}");
    assert!(
        out.contains("FLAGGED node2: slow on 2 of 2 benchmark(s) judged"),
        "{out}"
    );
    assert_eq!(out.matches("FLAGGED").count(), 1, "{out}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains(r#"<section id="fleet">"#));
    assert!(page.contains(r#"<td class="slower">node2</td>"#));
}

#[test]
fn a_normal_spread_flags_nobody_and_two_hosts_are_too_few() {
    let sandbox = Sandbox::new();
    let mut rng = Rng::new(5);
    let mut runs: Vec<Run> = SPREAD
        .iter()
        .enumerate()
        .map(|(i, &s)| host(&mut rng, &format!("r{i}"), &format!("node{i}"), s, 1.0))
        .collect();
    // Two hosts of other hardware, one far slower: not judged.
    for (i, slow) in [1.0, 1.5].into_iter().enumerate() {
        let mut r = host(&mut rng, &format!("big{i}"), &format!("big{i}"), 1.0, slow);
        r.host.memory_bytes = 512 << 30;
        runs.push(r);
    }
    stored(&sandbox, &runs);
    let o = sandbox.run(&["fleet", "report"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("FLAGGED"), "{out}");
    assert!(
        out.contains("no host stands apart (2 benchmark(s) judged)"),
        "{out}"
    );
    assert!(out.contains("512 GiB — 2 host(s): big0, big1"), "{out}");
    assert!(
        out.contains("too few hosts of this hardware to judge"),
        "{out}"
    );
}
