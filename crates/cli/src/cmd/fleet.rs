//! `touchstone fleet …`: many hosts through the engines farms already run.
//! `fleet slurm` (`fleet_slurm`) submits to a Slurm partition, `fleet
//! report` (`fleet_report`) judges the fleet's runs. `fleet run` goes over OpenSSH (`touchstone_fleet`): everything is
//! checked here first (hosts, pairs, the `touchstone run` arguments), then
//! each host's document is imported the moment it arrives, as `import`
//! would (the same checks), with a status line per host, errors per host
//! that never stop the others, and a summary.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use clap::Parser;
use touchstone_fleet::{hosts, Binary, Observer, Outcome, Plan, Ssh};
use touchstone_results::store::{Open, Store};

use crate::args::{Cli, Command, FleetArgs, FleetCommand, FleetRunArgs};
use crate::error::CliError;
use crate::option_values;
use crate::output::eprint_line;
use crate::store;

pub fn fleet(db: Option<PathBuf>, a: FleetArgs) -> Result<(), CliError> {
    match a.action {
        FleetCommand::Run(r) => run(db, r),
        FleetCommand::Slurm(s) => super::fleet_slurm::slurm(db, s),
        FleetCommand::Report(r) => super::fleet_report::report(db, r),
    }
}

/// The user's `touchstone run` words, checked as `run` itself would check
/// them, so a typo fails here and not on every host.
struct RunWords {
    all: Vec<String>,
    /// The options alone (for the network pairs, which name their own benchmarks).
    options: Vec<String>,
    has_benchmarks: bool,
}

fn check_run_words(words: &[String]) -> Result<RunWords, CliError> {
    // --json and --no-store are the fleet's own; repeating them is harmless.
    let all: Vec<String> = words
        .iter()
        .filter(|w| *w != "--json" && *w != "--no-store")
        .cloned()
        .collect();
    let argv = ["touchstone", "run"]
        .into_iter()
        .map(String::from)
        .chain(all.iter().cloned());
    let parsed = Cli::try_parse_from(argv).map_err(|e| {
        let first = e.to_string();
        let first = first
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ");
        CliError::Usage(format!(
            "fleet run: the arguments for touchstone run: {first}"
        ))
    })?;
    let Command::Run(r) = parsed.command else {
        unreachable!("parsed as run")
    };
    if r.dry_run {
        return Err(CliError::Usage(
            "fleet run: --dry-run is for one machine (try touchstone run --dry-run here)".into(),
        ));
    }
    option_values::check_label(r.label.as_deref())?;
    touchstone_catalogue::select(&r.benchmarks, &r.family.context(r.quick), 1)?;
    let options = all
        .iter()
        .filter(|w| !r.benchmarks.contains(w))
        .cloned()
        .collect();
    Ok(RunWords {
        all,
        options,
        has_benchmarks: !r.benchmarks.is_empty(),
    })
}

fn seconds(flag: &'static str, text: &str, min_s: u64, max_s: u64) -> Result<Duration, CliError> {
    let ns = option_values::duration(flag, text, min_s * 1_000_000_000, max_s * 1_000_000_000)?;
    Ok(Duration::from_nanos(ns))
}

fn run(db: Option<PathBuf>, a: FleetRunArgs) -> Result<(), CliError> {
    let hosts = hosts::parse_arg(&a.hosts).map_err(CliError::Usage)?;
    let pairs = match (&a.pairs, a.all_pairs) {
        (Some(p), _) => hosts::parse_pairs(p, &hosts).map_err(CliError::Usage)?,
        (None, true) => hosts::all_pairs(hosts.len()),
        (None, false) => Vec::new(),
    };
    let words = check_run_words(&a.run)?;
    if !pairs.is_empty() {
        for spec in &a.net {
            let probe = format!("{spec}/remote:192.0.2.1:{}", a.serve_port);
            touchstone_catalogue::select(&[probe], &Default::default(), 1).map_err(|e| {
                CliError::Usage(format!("--net {spec}: not a network benchmark here: {e}"))
            })?;
        }
    }
    if a.concurrent == 0 {
        return Err(CliError::Usage("--concurrent: at least 1".into()));
    }
    let binary = match (a.remote_binary, a.binary) {
        (Some(r), _) => Binary::Remote(r),
        (None, Some(b)) => Binary::Copy(b),
        (None, None) => Binary::Copy(std::env::current_exe().map_err(|e| CliError::File {
            path: "this touchstone".into(),
            message: format!("cannot find its own binary to copy: {e}"),
        })?),
    };
    if let Binary::Copy(b) = &binary {
        if !b.is_file() {
            return Err(CliError::File {
                path: b.display().to_string(),
                message: "no such binary to copy".into(),
            });
        }
    }
    let plan = Plan {
        binary,
        suite: pairs.is_empty() || words.has_benchmarks,
        run_args: words.all,
        net_args: words.options,
        concurrent: a.concurrent,
        timeout: seconds("--timeout", &a.timeout, 5, 7 * 86_400)?,
        pairs,
        net_specs: a.net,
        serve_port: a.serve_port,
        hosts,
    };
    let connect_timeout = seconds("--connect-timeout", &a.connect_timeout, 1, 600)?;
    // Ctrl-C and SIGTERM stop the hosts' commands; what was copied is
    // still removed before the command ends.
    let interrupt = touchstone_harness::signals::flag();
    let ssh = Ssh::new(a.ssh_config, a.ssh_options, connect_timeout)
        .map_err(|e| CliError::File {
            path: "/tmp".into(),
            message: format!("cannot make the private directory for ssh's sockets: {e}"),
        })?
        .stop_on(interrupt.clone());
    let store = store::open(db, Open::CreateIfMissing)?;
    let importer = Importer {
        store: Mutex::new(store),
        identities: Mutex::new(BTreeMap::new()),
    };
    let outcomes = touchstone_fleet::run(&ssh, &plan, &importer);
    let failed: Vec<&Outcome> = outcomes.iter().filter(|o| o.result.is_err()).collect();
    eprint_line(&format!(
        "fleet: {} of {} ok{}",
        outcomes.len() - failed.len(),
        outcomes.len(),
        if failed.is_empty() {
            String::new()
        } else {
            format!(
                "; failed: {}",
                failed
                    .iter()
                    .map(|o| o.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    ));
    if interrupt.load(std::sync::atomic::Ordering::Relaxed) {
        Err(CliError::FleetInterrupted(
            outcomes.len() - failed.len(),
            plan.hosts.len() * usize::from(plan.suite) + plan.pairs.len(),
        ))
    } else if failed.is_empty() {
        Ok(())
    } else {
        Err(CliError::FleetFailed(failed.len(), outcomes.len()))
    }
}

/// Prints status lines and stores each host's runs as they arrive.
struct Importer {
    store: Mutex<Store>,
    /// Host identity → the destination that reported it first.
    identities: Mutex<BTreeMap<String, String>>,
}

impl Observer for Importer {
    fn step(&self, who: &str, what: &str) {
        eprint_line(&format!("[{who}] {what}"));
    }

    fn done(&self, o: &Outcome) {
        let secs = o.elapsed.as_secs_f64();
        let doc = match &o.result {
            Err(e) => {
                eprint_line(&format!("[{}] error after {secs:.1} s: {e}", o.name));
                return;
            }
            Ok(doc) => doc,
        };
        let mut notes = Vec::new();
        for run in &doc.runs {
            let id = run.host.identity();
            let mut seen = self.identities.lock().unwrap();
            match seen.get(&id) {
                Some(first) if first != &o.name && !o.name.contains(" → ") => notes.push(
                    format!("the same machine as {first} (host {id}): listed twice?"),
                ),
                Some(_) => {}
                None => {
                    seen.insert(id, o.name.clone());
                }
            }
        }
        let measurements: usize = doc.runs.iter().map(|r| r.measurements.len()).sum();
        let result = self.store.lock().unwrap().import_runs(&doc.runs);
        let host = doc.runs.first().map(|r| {
            let h = &r.host;
            match &h.machine_id {
                Some(m) => format!("{} (machine {})", h.hostname, &m[..8.min(m.len())]),
                None => h.hostname.clone(),
            }
        });
        let line = match result {
            Ok(skipped) => format!(
                "[{}] ok in {secs:.1} s: {} run(s), {measurements} measurement(s) from {} imported{}",
                o.name,
                doc.runs.len() - skipped.len(),
                host.unwrap_or_default(),
                if skipped.is_empty() {
                    String::new()
                } else {
                    format!(" ({} already stored)", skipped.len())
                }
            ),
            Err(e) => format!("[{}] measured, but not stored: {e}", o.name),
        };
        eprint_line(&line);
        for n in notes {
            eprint_line(&format!("[{}] note: {n}", o.name));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Result<RunWords, CliError> {
        check_run_words(&w.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn run_words_are_checked_here() {
        let w = words(&["lat_syscall/null", "--quick", "-r", "5", "--json"]).unwrap();
        assert_eq!(w.all, ["lat_syscall/null", "--quick", "-r", "5"]);
        assert_eq!(w.options, ["--quick", "-r", "5"]);
        assert!(w.has_benchmarks);
        assert!(words(&["--quick"]).is_ok_and(|w| !w.has_benchmarks));
        assert!(matches!(
            words(&["no_such_bench"]),
            Err(CliError::Select(_))
        ));
        assert!(words(&["--frobnicate"]).is_err());
        assert!(words(&["--dry-run"]).is_err());
    }
}
