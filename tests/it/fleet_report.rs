//! `touchstone fleet report` end to end on synthetic runs imported into a
//! private store: one host of five slowed by 30 % is flagged (terminal and
//! HTML), a normal spread flags nobody, two hosts of one hardware are too
//! few to judge, and each host counts once (its newest run); network pair
//! runs become the matrix of client and server hosts.

#[path = "../support/synth.rs"]
#[allow(dead_code)]
mod synth;

use synth::{measurement, noisy, run, Rng};
use touchstone_results::{Run, Unit};

use crate::common::{succeeded_saying, text, Sandbox};

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

const SPREAD: [f64; 5] = [1.0, 1.015, 0.99, 1.02, 0.995];

/// One run each of `n` nodes (run `r<i>` of `node<i>`) of the same
/// hardware at the normal `SPREAD`; `slow`: which node is how many times
/// slower.
fn nodes(rng: &mut Rng, n: usize, slow: Option<(usize, f64)>) -> Vec<Run> {
    SPREAD[..n]
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let slowed = slow
                .filter(|&(node, _)| node == i)
                .map_or(1.0, |(_, by)| by);
            host(rng, &format!("r{i}"), &format!("node{i}"), s, slowed)
        })
        .collect()
}

/// `fleet report --html` over a store of `runs`: what it prints and the
/// page it writes.
fn fleet_report_of(sandbox: &Sandbox, runs: &[Run]) -> (String, String) {
    sandbox.store(runs);
    let html = sandbox.path("fleet.html");
    let o = sandbox.run(&["fleet", "report", "--html", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    (String::from_utf8_lossy(&o.stdout).into_owned(), page)
}

#[test]
fn the_slow_node_is_flagged_and_the_rule_is_stated() {
    let sandbox = Sandbox::new();
    let mut rng = Rng::new(17);
    let mut runs = nodes(&mut rng, 5, Some((2, 1.3)));
    // An older run of node2, from before it went slow, is not its figure now.
    let mut old = host(&mut rng, "r2-old", "node2", 1.0, 1.0);
    old.started_at -= chrono::Duration::days(3);
    runs.push(old);
    let (out, page) = fleet_report_of(&sandbox, &runs);
    assert!(out.contains("Fleet: 5 host(s)"), "{out}");
    assert!(out.contains("|x − median| / (1.4826·MAD) > 3.5"), "{out}");
    assert!(
        out.contains("FLAGGED node2: slow on 2 of 2 benchmark(s) judged"),
        "{out}"
    );
    assert_eq!(out.matches("FLAGGED").count(), 1, "{out}");
    assert!(page.contains(r#"<section id="fleet">"#));
    assert!(page.contains(r#"<td class="slower">node2</td>"#));
}

#[test]
fn a_normal_spread_flags_nobody_and_two_hosts_are_too_few() {
    let sandbox = Sandbox::new();
    let mut rng = Rng::new(5);
    let mut runs = nodes(&mut rng, 5, None);
    // Two hosts of other hardware, one far slower: not judged.
    for (i, slow) in [1.0, 1.5].into_iter().enumerate() {
        let mut r = host(&mut rng, &format!("big{i}"), &format!("big{i}"), 1.0, slow);
        r.host.memory_bytes = 512 << 30;
        runs.push(r);
    }
    sandbox.store(&runs);
    let out = succeeded_saying(
        &sandbox.run(&["fleet", "report"]),
        &[
            "no host stands apart (2 benchmark(s) judged)",
            "512 GiB — 2 host(s): big0, big1",
            "too few hosts of this hardware to judge",
        ],
    );
    assert!(!out.contains("FLAGGED"), "{out}");
}

/// Network pair runs (`fleet run --pairs`: measurements against
/// `remote:ADDR`, newer than the suites) become the matrix of the network
/// between hosts, on the terminal and in HTML, and never stand for their
/// client host in the side by side.
#[test]
fn pair_runs_become_the_network_matrix_and_leave_the_hosts_own_runs_alone() {
    let sandbox = Sandbox::new();
    let mut rng = Rng::new(3);
    let mut runs = nodes(&mut rng, 3, None);
    let addr = "10.0.0.10:7717";
    for (i, client) in ["node1", "node2"].into_iter().enumerate() {
        let mut r = run(&format!("pair{i}"), client, None, 1);
        let mut m = measurement(
            &format!("lat_tcp/size:1/remote:{addr}"),
            "comm",
            Unit::Ns,
            1,
            noisy(&mut rng, 40_000.0 * (i + 1) as f64, 0.0),
        );
        m.extra.insert("cpu_pct_client".into(), 20.0);
        m.extra.insert("cpu_pct_server".into(), 30.0);
        r.measurements = vec![m];
        r.host
            .extra
            .insert(format!("remote:{addr}"), "node0".into());
        runs.push(r);
    }
    let (out, page) = fleet_report_of(&sandbox, &runs);
    assert!(out.contains("Fleet: 3 host(s)"), "{out}");
    assert!(
        out.contains("no host stands apart (2 benchmark(s) judged)"),
        "{out}"
    );
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == "lat_tcp/size:1")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(lines[at + 1].trim_end().ends_with("node0"), "{out}");
    assert!(
        lines[at + 2].trim_start().starts_with("node1") && lines[at + 2].contains("40.00 µs"),
        "{out}"
    );
    assert!(
        lines[at + 3].trim_start().starts_with("node2")
            && lines[at + 3].contains("80.00 µs")
            && lines[at + 3].contains("CPU 20/30 %"),
        "{out}"
    );
    assert!(page.contains(r#"<section id="pairs">"#), "{page}");
    assert!(page.contains("<th>node0</th>"));
}
