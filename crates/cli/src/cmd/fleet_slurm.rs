//! `touchstone fleet slurm`: the suite on a Slurm partition, one exclusive
//! task per node (srun, or an sbatch array writing into a shared
//! directory), each node's document checked and imported through the
//! import path (`import::store_runs`). A node that fails is reported and
//! never stops the others; the exit code is 1 if any did.

use std::path::PathBuf;
use std::time::Duration;

use touchstone_fleet::slurm::{self, Progress, SlurmJob, TaskResult, Via};
use touchstone_results::store::Store;

use crate::args::{SlurmArgs, ViaArg};
use crate::error::CliError;
use crate::option_values;
use crate::output::{eprint_line, print};

/// The CLI's progress: one line per change, on standard error.
struct Lines;
impl Progress for Lines {
    fn note(&mut self, line: &str) {
        eprint_line(&format!("fleet slurm: {line}"));
    }
}

/// `--timeout`: whole seconds, minutes, hours or days (`90s`, `30m`, `2h`, `1d`), at least a minute.
fn timeout(text: &str) -> Result<Duration, CliError> {
    let bad = || {
        CliError::Usage(format!(
            "--timeout {text:?}: a duration such as 90s, 30m, 2h or 1d, at least 1m"
        ))
    };
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let scale = match &text[digits.len()..] {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(bad()),
    };
    let n: u64 = digits.parse().map_err(|_| bad())?;
    match n.checked_mul(scale) {
        Some(secs) if (60..=366 * 86_400).contains(&secs) => Ok(Duration::from_secs(secs)),
        _ => Err(bad()),
    }
}

/// Stage one: the arguments as a checked job (nodes still to be learnt
/// from the partition when not given).
fn job(a: &SlurmArgs) -> Result<SlurmJob, CliError> {
    option_values::check_label(a.label.as_deref())?;
    let mut run_args = Vec::new();
    if a.quick {
        run_args.push("--quick".to_string());
    }
    if let Some(r) = a.repetitions {
        run_args.extend(["--repetitions".to_string(), r.to_string()]);
    }
    if let Some(l) = &a.label {
        run_args.extend(["--label".to_string(), l.clone()]);
    }
    // Checked here, on this host, so that a typo fails before the queue.
    touchstone_catalogue::select(
        &a.benchmarks,
        &touchstone_catalogue::RunContext::new(a.quick),
        1,
    )?;
    run_args.extend(a.benchmarks.iter().cloned());
    let binary = match &a.binary {
        Some(b) => b.clone(),
        None => std::env::current_exe().map_err(|e| {
            CliError::Usage(format!(
                "cannot tell this binary's path ({e}); give --binary"
            ))
        })?,
    };
    let out_dir = match &a.out {
        Some(d) => Some(std::path::absolute(d).map_err(|e| CliError::File {
            path: d.display().to_string(),
            message: e.to_string(),
        })?),
        None if a.via == ViaArg::Sbatch => {
            return Err(CliError::Usage(
                "--via sbatch needs --out DIR: the directory (shared with the nodes) where each task leaves its results".into(),
            ))
        }
        None => None,
    };
    let job = SlurmJob {
        partition: a.partition.clone(),
        nodes: a.nodes.unwrap_or(1),
        binary,
        run_args,
        timeout: timeout(&a.timeout)?,
        out_dir,
    };
    job.check().map_err(fleet_error)?;
    Ok(job)
}

fn fleet_error(e: slurm::SlurmError) -> CliError {
    match e {
        slurm::SlurmError::Usage(m) => CliError::Usage(m),
        other => CliError::Usage(other.to_string()),
    }
}

pub fn slurm(db: Option<PathBuf>, a: SlurmArgs) -> Result<(), CliError> {
    let mut job = job(&a)?;
    let via = match a.via {
        ViaArg::Srun => Via::Srun,
        ViaArg::Sbatch => Via::Sbatch,
    };
    // The partition is asked about before anything is submitted; a script
    // to print with its node count given needs no cluster at all.
    if !(a.print_script && a.nodes.is_some()) {
        slurm::check_partition(&job.partition, a.nodes).map_err(fleet_error)?;
        job.nodes = match a.nodes {
            Some(n) => n,
            None => match slurm::usable_nodes(&job.partition).map_err(fleet_error)? {
                0 => {
                    return Err(CliError::Usage(format!(
                        "partition `{}` has no node that can take a job now (all down, drained or failed: `sinfo -p {}`)",
                        job.partition, job.partition
                    )))
                }
                n => n,
            },
        };
    }
    if a.print_script {
        match via {
            Via::Srun => {
                let words: Vec<String> = job
                    .srun_argv()
                    .iter()
                    .map(|w| slurm::shell_quote(w))
                    .collect();
                print(&format!("{}\n", words.join(" ")));
            }
            Via::Sbatch => print(&job.sbatch_script().map_err(fleet_error)?),
        }
        return Ok(());
    }
    let mut progress = Lines;
    let results = match via {
        Via::Srun => {
            let results = slurm::run_srun(&job, &mut progress).map_err(fleet_error)?;
            if let Some(dir) = &job.out_dir {
                let store = db.clone().unwrap_or_else(Store::default_path);
                keep_documents(dir, &results, &store)?;
            }
            results
        }
        Via::Sbatch => {
            let id = slurm::submit_sbatch(&job).map_err(fleet_error)?;
            let dir = job.out_dir.clone().expect("checked");
            progress.note(&format!(
                "submitted job {id}: {} array task(s) on partition {}, results into {}",
                job.nodes,
                job.partition,
                dir.display()
            ));
            slurm::wait_for_job(
                &id,
                job.timeout,
                Duration::from_secs(1),
                &dir,
                &mut progress,
            )
            .map_err(fleet_error)?;
            let states = slurm::final_states(&id);
            slurm::collect_sbatch(&job, &id, &states)
        }
    };
    finish(db, results)
}

/// srun with --out: each node's checked document kept there as well
/// (`touchstone-srun-TASK-HOST.json`), as sbatch's tasks leave theirs,
/// written as every output file is (`output::write_file`).
fn keep_documents(
    dir: &std::path::Path,
    results: &[TaskResult],
    store: &std::path::Path,
) -> Result<(), CliError> {
    let failed = |e: std::io::Error| CliError::File {
        path: dir.display().to_string(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(failed)?;
    for r in results {
        if let Ok(doc) = &r.outcome {
            let host = r.node.as_deref().unwrap_or("unknown");
            // A host name is the file's only foreign part: keep it to safe characters.
            let host: String = host
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let path = dir.join(format!("touchstone-srun-{}-{host}.json", r.task));
            let text = touchstone_results::json::to_string(doc.runs.clone());
            crate::output::write_file(&path, text.as_bytes(), store)?;
        }
    }
    Ok(())
}

/// Per-task status lines, the import of every document that came back, a summary.
fn finish(db: Option<PathBuf>, results: Vec<TaskResult>) -> Result<(), CliError> {
    let total = results.len();
    let mut runs = Vec::new();
    let mut failed = 0;
    let mut hosts = std::collections::BTreeSet::new();
    for r in results {
        let node = r.node.as_deref().unwrap_or("an unknown node");
        match r.outcome {
            Ok(doc) => {
                let n: usize = doc.runs.iter().map(|r| r.measurements.len()).sum();
                let ids: Vec<&str> = doc.runs.iter().map(|r| r.id.as_str()).collect();
                print(&format!(
                    "task {} on {node}: ok, run {} ({n} measurement(s))\n",
                    r.task,
                    ids.join(", ")
                ));
                hosts.insert(node.to_string());
                runs.extend(doc.runs);
            }
            Err(why) => {
                failed += 1;
                print(&format!("task {} on {node}: FAILED: {why}\n", r.task));
            }
        }
    }
    if !runs.is_empty() {
        print(&format!("{}\n", super::import::store_runs(db, runs)?));
    }
    print(&format!(
        "{} of {total} task(s) brought results, from {} distinct host(s)\n",
        total - failed,
        hosts.len()
    ));
    if hosts.len() < total - failed {
        print("note: Slurm ran some tasks on the same node one after another; each host's runs are kept\n");
    }
    if failed > 0 {
        let rest = if failed == total {
            "nothing imported"
        } else {
            "the others are imported"
        };
        return Err(CliError::Hosts(format!(
            "{failed} of {total} task(s) failed (see above); {rest}"
        )));
    }
    Ok(())
}
