//! The fleet layer of DESIGN.md: running touchstone on many hosts through
//! OpenSSH and Slurm and bringing the results home. It drives the real
//! `ssh`, `scp`, `srun` and `sbatch` commands a farm already has; there is no
//! agent of ours on the hosts and no protocol beyond the JSON result
//! documents `import` already reads.

pub mod glibc;
pub mod hosts;
pub mod remote;
pub mod slurm;
pub mod ssh;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use touchstone_results::json::Document;

pub use hosts::Host;
pub use remote::{Binary, Prepared};
pub use ssh::{HostError, Ssh};

/// Hosts cleaned up at once at the end of a run (at least).
const CLEANUP_AT_ONCE: usize = 8;

/// A checked fleet run.
pub struct Plan {
    pub hosts: Vec<Host>,
    pub binary: Binary,
    /// Whether every host runs the suite (else only the network pairs run).
    pub suite: bool,
    /// Arguments for `touchstone run` on every host (without --json/--no-store).
    pub run_args: Vec<String>,
    /// Options (no benchmark names) for the network pairs' `touchstone run`.
    pub net_args: Vec<String>,
    /// Hosts worked on at once for the suite (network pairs: one at a time).
    pub concurrent: usize,
    /// The most one host (or one pair) may take, connecting included.
    pub timeout: Duration,
    /// Network pairs (server index, client index) and what to run on them.
    pub pairs: Vec<(usize, usize)>,
    /// Specs of communication benchmarks, each run against `remote:ADDR:PORT`.
    pub net_specs: Vec<String>,
    pub serve_port: u16,
}

/// What one host (or pair) gave.
pub struct Outcome {
    /// The host, or "server → client" for a pair.
    pub name: String,
    pub result: Result<Document, HostError>,
    pub elapsed: Duration,
}

/// Progress, told as it happens (the CLI prints status lines; measuring
/// code never prints).
pub trait Observer: Sync {
    fn step(&self, _who: &str, _what: &str) {}
    /// A host or pair is done; its document (if any) can be stored now.
    fn done(&self, _outcome: &Outcome) {}
}

/// Run the plan: the suite on every host (`concurrent` at once), then each
/// network pair alone. One host's failure never stops the others; a stop
/// (`Ssh::stop_on`) ends the commands under way, starts no more, and
/// still removes what was copied, from every host at once.
pub fn run(ssh: &Ssh, plan: &Plan, obs: &dyn Observer) -> Vec<Outcome> {
    let prepared: Vec<Mutex<Option<Prepared>>> =
        plan.hosts.iter().map(|_| Mutex::new(None)).collect();
    let outcomes = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    let workers = plan.concurrent.clamp(1, plan.hosts.len().max(1));
    let suite = plan.suite;
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                if ssh.stopped() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(host) = plan.hosts.get(i) else { break };
                let who = host.destination.as_str();
                let start = Instant::now();
                let deadline = start + plan.timeout;
                obs.step(who, "connecting");
                let result = remote::prepare(ssh, host, &plan.binary, deadline).and_then(|p| {
                    *prepared[i].lock().unwrap() = Some(p.clone());
                    if !suite {
                        return Ok(None);
                    }
                    obs.step(who, "running");
                    remote::run_suite(ssh, &p, &plan.run_args, deadline).map(Some)
                });
                let result = match result {
                    Ok(None) => continue,
                    Ok(Some(doc)) => Ok(doc),
                    Err(e) => Err(e),
                };
                let o = Outcome {
                    name: who.to_string(),
                    result,
                    elapsed: start.elapsed(),
                };
                obs.done(&o);
                outcomes.lock().unwrap().push(o);
            });
        }
    });
    let mut outcomes = outcomes.into_inner().unwrap();
    for &(a, b) in &plan.pairs {
        if ssh.stopped() {
            break;
        }
        let o = run_pair(ssh, plan, a, b, &prepared, obs);
        obs.done(&o);
        outcomes.push(o);
    }
    // Clean-up, several hosts at once: after a stop, hosts that do not
    // answer must not keep the others waiting in turn.
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..workers.max(CLEANUP_AT_ONCE).min(plan.hosts.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(host) = plan.hosts.get(i) else { break };
                let taken = prepared[i].lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some(p) = taken {
                    remote::finish(ssh, &p);
                }
                ssh.close(host);
            });
        }
    });
    outcomes
}

/// The network benchmarks between one pair: serve on `a`, clients on `b`.
fn run_pair(
    ssh: &Ssh,
    plan: &Plan,
    a: usize,
    b: usize,
    prepared: &[Mutex<Option<Prepared>>],
    obs: &dyn Observer,
) -> Outcome {
    let (server, client) = (&plan.hosts[a], &plan.hosts[b]);
    let name = format!("{} → {}", client.destination, server.destination);
    let start = Instant::now();
    let deadline = start + plan.timeout;
    let ready = |i: usize| prepared[i].lock().unwrap().clone();
    let result = (|| {
        let (Some(ps), Some(pc)) = (ready(a), ready(b)) else {
            return Err(HostError::RunFailed(
                "one of the two hosts could not be prepared (see its error above)".into(),
            ));
        };
        let addr = match server.address() {
            a if a.contains(':') => format!("[{a}]:{}", plan.serve_port),
            a => format!("{a}:{}", plan.serve_port),
        };
        obs.step(&name, &format!("starting serve on {addr}"));
        let server_end = remote::Server::start(ssh, &ps, &addr, deadline)?;
        let mut args: Vec<String> = plan
            .net_specs
            .iter()
            .map(|s| format!("{s}/remote:{addr}"))
            .collect();
        args.extend(plan.net_args.iter().cloned());
        obs.step(&name, "running the network benchmarks");
        let mut doc = remote::run_suite(ssh, &pc, &args, deadline)?;
        // Who served ADDR, for the report's matrix of hosts (the client's
        // run records it; the address alone may be any host's later).
        if let Some(id) = &server_end.identity {
            for run in &mut doc.runs {
                run.host.extra.insert(format!("remote:{addr}"), id.clone());
            }
        }
        Ok(doc)
        // `server_end` drops here: serve's stdin closes and it stops.
    })();
    Outcome {
        name,
        result,
        elapsed: start.elapsed(),
    }
}
