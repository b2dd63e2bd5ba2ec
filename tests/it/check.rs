//! `touchstone check` and `touchstone history` end to end: a stored run
//! slowed by 30 % against eight runs of its host is degraded (exit 1, one
//! line naming the benchmark, its shift, interval and baseline; the NHC
//! line), a run like the others is healthy (exit 0, nothing for NHC), bad
//! input exits 2, a check that measures stores its run; the history of the
//! same host finds the change at the slowed run and names what changed; and
//! the Slurm wrapper drains the node of the real single-node cluster
//! (`fleet_slurm::Cluster`) only with --drain, resumes only a node it
//! drained itself.

#[path = "../support/synth.rs"]
#[allow(dead_code)]
mod synth;

use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use synth::{measurement, noisy, run, Rng};
use touchstone_results::fingerprint::Fingerprint;
use touchstone_results::{Run, Unit};

use crate::common::{assert_refused, assert_says, succeeded_saying, text, Sandbox};
use crate::fleet_slurm::{short_hostname, wait_for, Cluster, PARTITION};

/// A run of node-7 on `day`: `slow` = 1.3 is 30 % slower on everything;
/// THP as given.
fn node_run(rng: &mut Rng, id: &str, day: i64, slow: f64, thp: &str) -> Run {
    let mut r = run(id, "node-7", None, day);
    r.host.fingerprint = Some(Fingerprint {
        thp_enabled: thp.into(),
        ..Fingerprint::default()
    });
    r.measurements = vec![
        measurement(
            "lat_syscall/null",
            "proc",
            Unit::Ns,
            1,
            noisy(rng, 100.0 * slow * (1.0 + 0.002 * (day % 3) as f64), 0.005),
        ),
        measurement(
            "bw_mem/rd/size:256m",
            "mem",
            Unit::MBps,
            1,
            noisy(rng, 9000.0 * (1.0 - 0.002 * (day % 2) as f64), 0.005),
        ),
    ];
    r
}

/// Eight runs of node-7 with THP never, then four with THP always and
/// the syscall 30 % slower.
fn store_history(sandbox: &Sandbox) {
    let mut rng = Rng::new(26);
    let runs: Vec<Run> = (0..12)
        .map(|d| match d {
            0..=7 => node_run(&mut rng, &format!("steady{d}"), d, 1.0, "never"),
            _ => node_run(&mut rng, &format!("slowed{d}"), d, 1.3, "always"),
        })
        .collect();
    sandbox.store(&runs);
}

/// A sandbox whose store holds a history of eight steady runs with
/// `judged` last, and that run's id: the store for a check of `judged`.
fn store_with(judged_slow: f64) -> (Sandbox, &'static str) {
    let sandbox = Sandbox::new();
    let mut rng = Rng::new(26);
    let mut runs: Vec<Run> = (0..8)
        .map(|d| node_run(&mut rng, &format!("steady{d}"), d, 1.0, "never"))
        .collect();
    runs.push(node_run(&mut rng, "judged", 8, judged_slow, "never"));
    sandbox.store(&runs);
    (sandbox, "judged")
}

/// `touchstone check --run id` with `more` arguments: it exits with
/// `code`; its standard output.
fn check_run(sandbox: &Sandbox, id: &str, more: &[&str], code: i32) -> String {
    let o = sandbox.run(&[&["check", "--run", id], more].concat());
    assert_eq!(o.status.code(), Some(code), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_slowed_run_is_degraded_with_one_line_per_finding() {
    let (sandbox, id) = store_with(1.3);
    let out = check_run(&sandbox, id, &[], 1);
    assert!(out.contains("DEGRADED"), "{out}");
    let findings: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("  lat_syscall") || l.starts_with("  bw_mem"))
        .collect();
    assert_eq!(findings.len(), 1, "{out}");
    assert!(
        findings[0].starts_with("  lat_syscall/null +30 % ["),
        "{}",
        findings[0]
    );
    assert!(
        findings[0].contains("vs history") && findings[0].contains("of this host's last 8 runs"),
        "{}",
        findings[0]
    );
    assert_eq!(
        check_run(&sandbox, id, &["--format", "nhc"], 1),
        "touchstone: lat_syscall/null +30 % vs history\n"
    );
    let o = sandbox.run(&["check", "--run", id, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verdict"], "degraded");
}

#[test]
fn a_run_like_its_history_is_healthy_and_silent_for_nhc() {
    let (sandbox, id) = store_with(1.0);
    let out = check_run(&sandbox, id, &[], 0);
    assert!(out.contains(": healthy"), "{out}");
    assert!(
        out.contains("judged against its own history (8 earlier run(s)): 2 figure(s)"),
        "{out}"
    );
    let nhc = check_run(&sandbox, id, &["--format", "nhc"], 0);
    assert!(nhc.is_empty(), "{nhc}");
}

#[test]
fn bad_input_exits_2_and_a_measured_check_is_stored() {
    let (sandbox, _) = store_with(1.0);
    let o = sandbox.run(&["check", "--run", "nosuch"]);
    assert_refused(&o, "nosuch");
    let o = sandbox.run(&["check", "no_such_benchmark"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // A check that measures, on a host with no history: healthy (nothing
    // to judge against, said so), its run stored under the label `check`.
    let o = sandbox.run(&["check", "lat_syscall/null", "-r", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("judged against its own history (0 earlier run(s)): 0 figure(s)"),
        "{out}"
    );
    let labels: Vec<String> = crate::common::stored_runs(&sandbox)
        .iter()
        .map(|r| r["label"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        labels.iter().filter(|l| *l == "check").count(),
        1,
        "{labels:?}"
    );
}

#[test]
fn history_finds_the_change_at_its_run_and_names_it() {
    let sandbox = Sandbox::new();
    store_history(&sandbox);
    succeeded_saying(
        &sandbox.run(&["history", "--host", "node-7"]),
        &[
            "History of node-7: 12 run(s)",
            "  change at run 9 (slowed8, 2024-03-09 12:00): ",
            "what changed: THP never → always",
            "1 of 2 benchmark(s) changed",
        ],
    );
    let o = sandbox.run_line("history --host node-7 --format csv lat_syscall");
    assert!(o.status.success(), "{}", text(&o));
    let csv = String::from_utf8_lossy(&o.stdout);
    assert_eq!(csv.lines().count(), 13, "{csv}");
    assert_eq!(
        csv.lines().filter(|l| l.contains(",1,1.")).count(),
        1,
        "{csv}"
    );
    let o = sandbox.run(&["history", "--host", "node-9"]);
    assert_refused(&o, "no run of host `node-9` (its hosts: node-7)");
    let o = sandbox.run(&["history", "--host", "node-7", "lat_nothing"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// The node's state as sinfo abbreviates it ("idle", "drain") and its reason.
fn node_state(cluster: &Cluster) -> (String, String) {
    let o = cluster
        .slurm("sinfo")
        .args(["-h", "-N", "-p", PARTITION, "-o", "%t|%E"])
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let (state, reason) = line.split_once('|').unwrap_or((&line, ""));
    (state.to_string(), reason.to_string())
}

fn wrapper() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("contrib/slurm/touchstone-health")
}

fn health(cluster: &Cluster, sandbox: &Sandbox, args: &[&str]) -> Output {
    std::process::Command::new(wrapper())
        .args(args)
        .env("TOUCHSTONE", env!("CARGO_BIN_EXE_touchstone"))
        .env("TOUCHSTONE_DB", sandbox.db())
        .env("TMPDIR", sandbox.dir.path())
        .env("SLURM_CONF", &cluster.conf)
        .env_remove("TOUCHSTONE_DRAIN")
        .env_remove("TOUCHSTONE_CHECK_ARGS")
        .env_remove("NODE")
        .output()
        .unwrap()
}

fn state_becomes(cluster: &Cluster, want: &str) -> (String, String) {
    let _ = wait_for(Duration::from_secs(10), || node_state(cluster).0 == want);
    node_state(cluster)
}

#[test]
fn the_slurm_wrapper_drains_only_with_drain_and_resumes_only_its_own() {
    let cluster = match Cluster::start() {
        Ok(c) => c,
        Err(why) => {
            crate::common::unavailable(&format!("no single-node Slurm here: {why}"));
            return;
        }
    };
    let (degraded, _) = store_with(1.3);
    let (healthy, _) = store_with(1.0);

    // Without --drain: the finding printed, exit 1, the node left idle.
    let o = health(&cluster, &degraded, &["--run", "judged"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "touchstone: lat_syscall/null +30 % vs history\n"
    );
    assert_eq!(node_state(&cluster).0, "idle");

    // --drain: drained, the finding as the reason.
    let o = health(&cluster, &degraded, &["--drain", "--run", "judged"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let node = short_hostname();
    assert_says(&o, &format!("{node} drained"));
    let (state, reason) = state_becomes(&cluster, "drain");
    assert_eq!(state, "drain", "{reason}");
    assert_eq!(reason, "touchstone: lat_syscall/null +30 % vs history");

    // Healthy again: resumed.
    let o = health(&cluster, &healthy, &["--drain", "--run", "judged"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(state_becomes(&cluster, "idle").0, "idle");

    // A drain by someone else is left alone when healthy; a check that
    // cannot be made (exit 2) touches nothing either.
    let o = cluster
        .slurm("scontrol")
        .args([
            "update",
            &format!("NodeName={node}"),
            "State=DRAIN",
            "Reason=maintenance",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(state_becomes(&cluster, "drain").0, "drain");
    let o = health(&cluster, &healthy, &["--drain", "--run", "judged"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = health(&cluster, &healthy, &["--drain", "--run", "nosuch"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(
        node_state(&cluster),
        ("drain".to_string(), "maintenance".to_string())
    );
}
