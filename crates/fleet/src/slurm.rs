//! Running the suite on a Slurm partition with Slurm's own commands: one
//! exclusive task per node through `srun` (each node's JSON comes back on
//! srun's labelled standard output), or an `sbatch --array` script whose
//! tasks leave their JSON in a directory the user names, which is read when
//! the jobs have ended (polled with `squeue`, final states from `sacct` or
//! `scontrol`). Every document is parsed and checked by
//! `touchstone_results::json` (the import path's validation) before the
//! caller stores it. Nothing here prints: progress goes through `Progress`.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use touchstone_results::json::{self, Document};

/// How the suite reaches the nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `srun -N n --ntasks-per-node=1 --exclusive`, results on srun's output.
    Srun,
    /// An `sbatch --array` script writing one document per task into a directory.
    Sbatch,
}

/// What to submit: validated by `SlurmJob::check` before anything runs.
#[derive(Debug, Clone)]
pub struct SlurmJob {
    pub partition: String,
    /// Nodes (srun) or array tasks (sbatch), one exclusive node each.
    pub nodes: u32,
    /// The touchstone binary as the nodes see it (a shared file system, or
    /// a copy put there beforehand).
    pub binary: PathBuf,
    /// Arguments of `touchstone run` (benchmarks, --quick, …); `--json
    /// --no-store` are added.
    pub run_args: Vec<String>,
    /// Slurm's time limit for each task, and the longest touchstone waits.
    pub timeout: Duration,
    /// sbatch: where the tasks write their documents (absolute, on a file
    /// system the nodes and this host share).
    pub out_dir: Option<PathBuf>,
}

/// The name every job carries, so an operator sees what it is in `squeue`.
pub const JOB_NAME: &str = "touchstone";

#[derive(Debug, thiserror::Error)]
pub enum SlurmError {
    #[error("{0}")]
    Usage(String),
    #[error("`{command}` could not be started ({source}): is this a Slurm submit host with Slurm's commands on PATH?")]
    Missing {
        command: String,
        source: std::io::Error,
    },
    #[error("partition `{0}` does not exist on this cluster (`sinfo -s` lists the partitions)")]
    NoPartition(String),
    #[error("partition `{partition}` is {state}: jobs would not start (`sinfo -p {partition}` says why)")]
    PartitionUnusable { partition: String, state: String },
    #[error("partition `{partition}` has {total} node(s); --nodes {asked} asks for more")]
    TooManyNodes {
        partition: String,
        total: u32,
        asked: u32,
    },
    #[error("`{command}` failed: {message}")]
    Command { command: String, message: String },
    #[error("job {job} has not ended after {waited:?}; it is left queued/running and its results will land in {dir}: `touchstone import {dir}/touchstone-{job}_*.json` brings them in later")]
    StillRunning {
        job: String,
        waited: Duration,
        dir: String,
    },
    #[error("cannot use {path}: {message}")]
    Dir { path: String, message: String },
}

/// Where the job stands, told to whoever drives it (the CLI prints it).
pub trait Progress {
    fn note(&mut self, _line: &str) {}
}

/// A progress that says nothing.
pub struct Quiet;
impl Progress for Quiet {}

/// What came back from one task (one node).
#[derive(Debug)]
pub struct TaskResult {
    /// srun's task number or the array index.
    pub task: u32,
    /// The node Slurm ran it on, where known.
    pub node: Option<String>,
    /// The checked document, or why there is none.
    pub outcome: Result<Document, String>,
}

/// A partition as `scontrol show partition` describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Partition {
    pub name: String,
    pub state: String,
    pub total_nodes: u32,
}

impl SlurmJob {
    /// Refuse what Slurm would misread or what cannot work, before anything is submitted.
    pub fn check(&self) -> Result<(), SlurmError> {
        let usage = |m: String| Err(SlurmError::Usage(m));
        if self.partition.is_empty()
            || !self
                .partition
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return usage(format!(
                "--partition {:?}: a Slurm partition name (letters, digits, '-', '_', '.')",
                self.partition
            ));
        }
        if self.nodes == 0 || self.nodes > 100_000 {
            return usage(format!("--nodes {}: must be 1..=100000", self.nodes));
        }
        if self.timeout < Duration::from_secs(60) {
            return usage("--timeout: at least 1m (Slurm counts time limits in minutes)".into());
        }
        if let Some(dir) = &self.out_dir {
            // #SBATCH lines are not shell-quoted, and '%' starts a Slurm file-name pattern.
            let text = dir.to_string_lossy();
            if !dir.is_absolute()
                || text
                    .chars()
                    .any(|c| c.is_whitespace() || c.is_control() || "%'\"\\$`".contains(c))
            {
                return usage(format!(
                    "--out {text:?}: an absolute path without spaces, quotes, '%', '$' or '\\' \
                     (it is written into the job script)"
                ));
            }
        }
        Ok(())
    }

    /// Slurm's time limit, whole minutes, rounded up.
    fn minutes(&self) -> u64 {
        self.timeout.as_secs().div_ceil(60)
    }

    /// The `touchstone run` command each task runs, as words.
    fn run_words(&self) -> Vec<String> {
        let mut words = vec![
            self.binary.to_string_lossy().into_owned(),
            "run".into(),
            "--json".into(),
            "--no-store".into(),
        ];
        words.extend(self.run_args.iter().cloned());
        words
    }

    /// The srun command line: one exclusive task on each of `nodes` nodes,
    /// every output line labelled with its task number so that the
    /// documents can be told apart.
    pub fn srun_argv(&self) -> Vec<String> {
        let mut argv = vec![
            "srun".to_string(),
            format!("--partition={}", self.partition),
            format!("--nodes={}", self.nodes),
            "--ntasks-per-node=1".into(),
            "--exclusive".into(),
            format!("--job-name={JOB_NAME}"),
            format!("--time={}", self.minutes()),
            "--label".into(),
            // A node that fails must not take the others' results with it.
            "--kill-on-bad-exit=0".into(),
        ];
        argv.extend(self.run_words());
        argv
    }

    /// The sbatch script: an array of `nodes` one-node exclusive tasks, each
    /// writing `touchstone-JOB_TASK.json` into the output directory (first
    /// under a `.partial` name, renamed when complete, so that a half-written
    /// document is never read) and its log beside it.
    pub fn sbatch_script(&self) -> Result<String, SlurmError> {
        let dir = self
            .out_dir
            .as_ref()
            .ok_or_else(|| SlurmError::Usage("--via sbatch needs --out DIR: the directory (shared with the nodes) where each task leaves its results".into()))?;
        let dir = dir.to_string_lossy();
        let command = self
            .run_words()
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ");
        Ok(format!(
            "#!/bin/sh\n\
             # Written by `touchstone fleet slurm`: one array task per node, each with\n\
             # the node to itself, leaving its results document in {dir}.\n\
             #SBATCH --job-name={JOB_NAME}\n\
             #SBATCH --partition={partition}\n\
             #SBATCH --array=0-{last}\n\
             #SBATCH --nodes=1\n\
             #SBATCH --ntasks=1\n\
             #SBATCH --exclusive\n\
             #SBATCH --time={minutes}\n\
             #SBATCH --output={dir}/touchstone-%A_%a.log\n\
             set -u\n\
             name=\"{dir}/touchstone-${{SLURM_ARRAY_JOB_ID}}_${{SLURM_ARRAY_TASK_ID}}\"\n\
             {command} > \"$name.json.partial\"\n\
             status=$?\n\
             # A run that failed part-way still prints the measurements it finished.\n\
             if [ -s \"$name.json.partial\" ]; then mv \"$name.json.partial\" \"$name.json\"; else rm -f \"$name.json.partial\"; fi\n\
             exit $status\n",
            partition = self.partition,
            last = self.nodes - 1,
            minutes = self.minutes(),
        ))
    }
}

/// `word` as one shell word.
pub fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Start Slurm's `command`; one that cannot be started (not installed)
/// is `SlurmError::Missing`.
fn start(command: &str, cmd: &mut Command) -> Result<Child, SlurmError> {
    cmd.spawn().map_err(|source| SlurmError::Missing {
        command: command.into(),
        source,
    })
}

/// Run a Slurm command to its end, returning its standard output; a
/// failure carries its standard error.
fn slurm_output(argv: &[&str]) -> Result<String, SlurmError> {
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .output()
        .map_err(|source| SlurmError::Missing {
            command: argv[0].into(),
            source,
        })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        // scontrol says some of its refusals on standard output.
        let message = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stderr).trim(),
            String::from_utf8_lossy(&out.stdout).trim()
        );
        Err(SlurmError::Command {
            command: argv.join(" "),
            message: message.trim().to_string(),
        })
    }
}

/// `KEY=value` fields of scontrol's one-line (`-o`) records.
fn scontrol_fields(line: &str) -> BTreeMap<&str, &str> {
    line.split_whitespace()
        .filter_map(|w| w.split_once('='))
        .collect()
}

/// Parse `scontrol -o show partition P`.
pub fn parse_partition(text: &str) -> Option<Partition> {
    let line = text.lines().find(|l| l.contains("PartitionName="))?;
    let f = scontrol_fields(line);
    Some(Partition {
        name: f.get("PartitionName")?.to_string(),
        state: f.get("State").unwrap_or(&"UNKNOWN").to_string(),
        total_nodes: f.get("TotalNodes")?.parse().ok()?,
    })
}

/// The partition as the controller knows it; a clear error when it does
/// not exist, is not up, or has fewer nodes than asked for.
pub fn check_partition(name: &str, nodes: Option<u32>) -> Result<Partition, SlurmError> {
    let text = match slurm_output(&["scontrol", "-o", "show", "partition", name]) {
        Ok(t) => t,
        Err(SlurmError::Command { message, .. }) if message.contains("not found") => {
            return Err(SlurmError::NoPartition(name.into()))
        }
        Err(e) => return Err(e),
    };
    let p = parse_partition(&text).ok_or_else(|| SlurmError::NoPartition(name.into()))?;
    if p.state != "UP" {
        return Err(SlurmError::PartitionUnusable {
            partition: p.name,
            state: p.state,
        });
    }
    if let Some(asked) = nodes {
        if asked > p.total_nodes {
            return Err(SlurmError::TooManyNodes {
                partition: p.name,
                total: p.total_nodes,
                asked,
            });
        }
    }
    Ok(p)
}

/// Node states (sinfo's short form, a suffix such as `*` or `~` aside) in
/// which a node will not take a job now.
const UNUSABLE_STATES: [&str; 7] = ["down", "drain", "fail", "maint", "inval", "unk", "futr"];

/// Parse `sinfo -h -N -p P -o %N|%t`: how many distinct nodes can take a job
/// (a node listed twice, in two partitions' lines, counts once).
pub fn parse_usable_nodes(text: &str) -> u32 {
    let mut usable = std::collections::BTreeSet::new();
    for line in text.lines() {
        let Some((node, state)) = line.trim().split_once('|') else {
            continue;
        };
        if !UNUSABLE_STATES.iter().any(|u| state.starts_with(u)) {
            usable.insert(node.to_string());
        }
    }
    usable.len() as u32
}

/// How many of the partition's nodes can take a job now (not down,
/// drained, failed or in maintenance): the default node count, since srun
/// would otherwise wait for nodes that will not come.
pub fn usable_nodes(partition: &str) -> Result<u32, SlurmError> {
    let text = slurm_output(&["sinfo", "-h", "-N", "-p", partition, "-o", "%N|%t"])?;
    Ok(parse_usable_nodes(&text))
}

/// srun's `--label` output split by task: `  3: text` lines gathered per
/// task number, in order. Lines without a label are dropped.
pub fn demux_labelled(output: &str) -> BTreeMap<u32, String> {
    let mut tasks: BTreeMap<u32, String> = BTreeMap::new();
    for line in output.lines() {
        let Some((label, rest)) = line.split_once(": ") else {
            // "N: " followed by an empty line leaves "N:".
            if let Some(n) = line.trim().strip_suffix(':').and_then(|n| n.parse().ok()) {
                tasks.entry(n).or_default().push('\n');
            }
            continue;
        };
        if let Ok(n) = label.trim().parse::<u32>() {
            let text = tasks.entry(n).or_default();
            text.push_str(rest);
            text.push('\n');
        }
    }
    tasks
}

/// The host a document's first run was measured on.
fn document_host(doc: &Document) -> Option<String> {
    doc.runs.first().map(|r| r.host.hostname.clone())
}

/// srun mode: run the suite on the nodes and gather one result per task.
/// srun is given Slurm's time limit; should it outlive that by a minute
/// (a job that never started), it is interrupted as Ctrl-C would.
pub fn run_srun(
    job: &SlurmJob,
    progress: &mut dyn Progress,
) -> Result<Vec<TaskResult>, SlurmError> {
    job.check()?;
    let argv = job.srun_argv();
    progress.note(&format!(
        "srun: {} task(s) on partition {}",
        job.nodes, job.partition
    ));
    let mut child = start(
        "srun",
        Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit()),
    )?;
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + job.timeout + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| SlurmError::Command {
            command: "srun".into(),
            message: e.to_string(),
        })? {
            break s;
        }
        if Instant::now() > deadline {
            // srun cancels its job on two interrupts within a second.
            for _ in 0..2 {
                unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
                std::thread::sleep(Duration::from_millis(200));
            }
            let grace = Instant::now() + Duration::from_secs(10);
            while child.try_wait().ok().flatten().is_none() && Instant::now() < grace {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
            return Err(SlurmError::Command {
                command: "srun".into(),
                message: format!(
                    "no end after {:?}; interrupted (its job is cancelled)",
                    job.timeout + Duration::from_secs(60)
                ),
            });
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let text = reader.join().unwrap_or_default();
    if !status.success() {
        progress.note(&format!("srun ended with {status}; reading what came back"));
    }
    let mut per_task = demux_labelled(&text);
    let results = (0..job.nodes)
        .map(|task| {
            let outcome = match per_task.remove(&task) {
                None => Err("no output (the task failed before printing results; see srun's messages above)".to_string()),
                Some(t) => json::parse(&t).map_err(|e| format!("results unreadable: {e}")),
            };
            let node = outcome.as_ref().ok().and_then(document_host);
            TaskResult {
                task,
                node,
                outcome,
            }
        })
        .collect();
    Ok(results)
}

/// The job id in `sbatch --parsable`'s answer (`ID` or `ID;cluster`).
pub fn parse_job_id(text: &str) -> Option<String> {
    let id = text.trim().split(';').next()?.trim();
    (!id.is_empty() && id.chars().all(|c| c.is_ascii_digit())).then(|| id.to_string())
}

/// Submit the array script; the job id.
pub fn submit_sbatch(job: &SlurmJob) -> Result<String, SlurmError> {
    job.check()?;
    let script = job.sbatch_script()?;
    let dir = job.out_dir.as_ref().expect("checked by sbatch_script");
    std::fs::create_dir_all(dir).map_err(|e| SlurmError::Dir {
        path: dir.display().to_string(),
        message: e.to_string(),
    })?;
    let mut child = start(
        "sbatch",
        Command::new("sbatch")
            .arg("--parsable")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    )?;
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("piped");
        stdin
            .write_all(script.as_bytes())
            .map_err(|e| SlurmError::Command {
                command: "sbatch".into(),
                message: e.to_string(),
            })?;
    }
    let out = child.wait_with_output().map_err(|e| SlurmError::Command {
        command: "sbatch".into(),
        message: e.to_string(),
    })?;
    if !out.status.success() {
        return Err(SlurmError::Command {
            command: "sbatch".into(),
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    let answer = String::from_utf8_lossy(&out.stdout);
    parse_job_id(&answer).ok_or_else(|| SlurmError::Command {
        command: "sbatch --parsable".into(),
        message: format!("no job id in its answer {:?}", answer.trim()),
    })
}

/// A task's final state as sacct or scontrol report it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskState {
    pub task: u32,
    pub state: String,
    pub exit_code: String,
    pub node: String,
}

/// Parse `sacct -n -P -X -o JobID,State,ExitCode,NodeList` (`123_4|COMPLETED|0:0|node7`).
pub fn parse_sacct(text: &str) -> Vec<TaskState> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split('|');
            let id = f.next()?;
            let task = id.split_once('_')?.1.parse().ok()?;
            Some(TaskState {
                task,
                state: f.next()?.split_whitespace().next()?.to_string(),
                exit_code: f.next()?.to_string(),
                node: f.next().unwrap_or("").to_string(),
            })
        })
        .collect()
}

/// Parse `scontrol -o show job ID`: one line per array task.
pub fn parse_scontrol_jobs(text: &str) -> Vec<TaskState> {
    text.lines()
        .filter_map(|l| {
            let f = scontrol_fields(l);
            Some(TaskState {
                task: f.get("ArrayTaskId")?.parse().ok()?,
                state: f.get("JobState")?.to_string(),
                exit_code: f.get("ExitCode").unwrap_or(&"").to_string(),
                node: f.get("NodeList").unwrap_or(&"").to_string(),
            })
        })
        .collect()
}

/// Wait until no task of `job_id` is pending or running (squeue lists none),
/// at most `timeout`, polling every `every`.
pub fn wait_for_job(
    job_id: &str,
    timeout: Duration,
    every: Duration,
    dir: &Path,
    progress: &mut dyn Progress,
) -> Result<(), SlurmError> {
    let start = Instant::now();
    let mut last = String::new();
    let mut failures = 0;
    loop {
        match slurm_output(&["squeue", "-h", "-j", job_id, "-o", "%T"]) {
            Ok(text) => {
                failures = 0;
                let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
                for state in text.split_whitespace() {
                    *counts.entry(state).or_default() += 1;
                }
                if counts.is_empty() {
                    return Ok(());
                }
                let line = counts
                    .iter()
                    .map(|(s, n)| format!("{n} {}", s.to_lowercase()))
                    .collect::<Vec<_>>()
                    .join(", ");
                if line != last {
                    progress.note(&format!("job {job_id}: {line}"));
                    last = line;
                }
            }
            // A job the controller has already forgotten has ended.
            Err(SlurmError::Command { message, .. }) if message.contains("Invalid job id") => {
                return Ok(())
            }
            Err(e) => {
                failures += 1;
                if failures >= 5 {
                    return Err(e);
                }
            }
        }
        if start.elapsed() >= timeout {
            return Err(SlurmError::StillRunning {
                job: job_id.into(),
                waited: timeout,
                dir: dir.display().to_string(),
            });
        }
        std::thread::sleep(every);
    }
}

/// The tasks' final states: from accounting where the cluster keeps it,
/// else from the controller's memory of recent jobs; empty if neither knows.
pub fn final_states(job_id: &str) -> Vec<TaskState> {
    let sacct = slurm_output(&[
        "sacct",
        "-n",
        "-P",
        "-X",
        "-j",
        job_id,
        "-o",
        "JobID,State,ExitCode,NodeList",
    ]);
    if let Ok(text) = sacct {
        let states = parse_sacct(&text);
        if !states.is_empty() {
            return states;
        }
    }
    slurm_output(&["scontrol", "-o", "show", "job", job_id])
        .map(|t| parse_scontrol_jobs(&t))
        .unwrap_or_default()
}

/// The last non-empty line of a task's log, to say why it failed.
fn log_tail(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.chars().take(300).collect())
}

/// sbatch mode, after the job has ended: each task's document from the
/// output directory, checked, or why there is none.
pub fn collect_sbatch(job: &SlurmJob, job_id: &str, states: &[TaskState]) -> Vec<TaskResult> {
    let dir = job.out_dir.as_deref().unwrap_or(Path::new("."));
    (0..job.nodes)
        .map(|task| {
            let state = states.iter().find(|s| s.task == task);
            let base = dir.join(format!("touchstone-{job_id}_{task}"));
            let doc_path = base.with_extension("json");
            let outcome = match std::fs::File::open(&doc_path) {
                Ok(f) => json::read(f).map_err(|e| format!("{}: {e}", doc_path.display())),
                Err(_) => {
                    let log = base.with_extension("log");
                    let mut why = match state {
                        Some(s) => format!("no results: task {} (exit {})", s.state, s.exit_code),
                        None => "no results".to_string(),
                    };
                    if let Some(tail) = log_tail(&log) {
                        why += &format!("; {}: {tail}", log.display());
                    }
                    Err(why)
                }
            };
            let node = outcome
                .as_ref()
                .ok()
                .and_then(document_host)
                .or_else(|| state.map(|s| s.node.clone()).filter(|n| !n.is_empty()));
            TaskResult {
                task,
                node,
                outcome,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> SlurmJob {
        SlurmJob {
            partition: "batch".into(),
            nodes: 3,
            binary: "/shared/bin/touchstone".into(),
            run_args: vec!["--quick".into(), "lat_syscall/null".into(), "it's".into()],
            timeout: Duration::from_secs(90),
            out_dir: Some("/shared/results".into()),
        }
    }

    #[test]
    fn srun_asks_one_exclusive_task_per_node_with_labels() {
        let argv = job().srun_argv();
        for want in [
            "--partition=batch",
            "--nodes=3",
            "--ntasks-per-node=1",
            "--exclusive",
            "--label",
            "--time=2",
        ] {
            assert!(argv.iter().any(|a| a == want), "{want} missing: {argv:?}");
        }
        let run = argv.iter().position(|a| a == "run").unwrap();
        assert_eq!(argv[run - 1], "/shared/bin/touchstone");
        assert_eq!(argv[run + 1..run + 3], ["--json", "--no-store"]);
        assert_eq!(argv.last().unwrap(), "it's");
    }

    #[test]
    fn sbatch_script_is_an_array_writing_into_the_directory() {
        let s = job().sbatch_script().unwrap();
        assert!(s.starts_with("#!/bin/sh\n"));
        assert!(s.contains("#SBATCH --array=0-2\n"));
        assert!(s.contains("#SBATCH --exclusive\n"));
        assert!(s.contains("#SBATCH --partition=batch\n"));
        assert!(s.contains("#SBATCH --output=/shared/results/touchstone-%A_%a.log\n"));
        assert!(s.contains(
            "/shared/bin/touchstone run --json --no-store --quick lat_syscall/null 'it'\\''s' > \"$name.json.partial\"\n"
        ));
        assert!(s.contains("then mv \"$name.json.partial\" \"$name.json\"; else rm -f"));
        assert!(s.ends_with("exit $status\n"));
        let mut no_dir = job();
        no_dir.out_dir = None;
        assert!(matches!(no_dir.sbatch_script(), Err(SlurmError::Usage(_))));
    }

    #[test]
    fn bad_input_is_refused_before_submitting() {
        let mut j = job();
        j.partition = "a b".into();
        assert!(j.check().is_err());
        let mut j = job();
        j.nodes = 0;
        assert!(j.check().is_err());
        let mut j = job();
        j.out_dir = Some("relative/dir".into());
        assert!(j.check().is_err());
        let mut j = job();
        j.out_dir = Some("/a dir/with space".into());
        assert!(j.check().is_err());
        let mut j = job();
        j.out_dir = Some("/a/%j".into());
        assert!(j.check().is_err());
        assert!(job().check().is_ok());
    }

    #[test]
    fn labelled_output_splits_by_task() {
        let out = " 0: {\n 1: {\n 0:   \"a\": 1\n 1:   \"b\": 2\n10: x\n 0: }\n 1:\n 1: }\nnoise\n";
        let t = demux_labelled(out);
        assert_eq!(t[&0], "{\n  \"a\": 1\n}\n");
        assert_eq!(t[&1], "{\n  \"b\": 2\n\n}\n");
        assert_eq!(t[&10], "x\n");
        assert_eq!(t.len(), 3);
    }

    #[test]
    fn controller_answers_parse() {
        let p = parse_partition(
            "PartitionName=tsq AllowGroups=ALL Default=YES State=UP TotalCPUs=2 TotalNodes=1 SelectTypeParameters=NONE\n",
        )
        .unwrap();
        assert_eq!(
            p,
            Partition {
                name: "tsq".into(),
                state: "UP".into(),
                total_nodes: 1
            }
        );
        assert_eq!(
            parse_usable_nodes("n1|idle\nn2|drain*\nn3|down~\nn4|mix\nn4|mix\nn5|alloc\n"),
            3
        );
        assert_eq!(parse_job_id("1234\n").as_deref(), Some("1234"));
        assert_eq!(parse_job_id("1234;cluster\n").as_deref(), Some("1234"));
        assert_eq!(parse_job_id("Submitted batch job 12"), None);
        let s = parse_sacct(
            "7_0|COMPLETED|0:0|n1\n7_1|FAILED|1:0|n2\n7_[2-3]|PENDING|0:0|None assigned\n",
        );
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].state, "FAILED");
        assert_eq!(s[1].node, "n2");
        let c = parse_scontrol_jobs(
            "JobId=8 ArrayJobId=7 ArrayTaskId=1 JobName=touchstone JobState=COMPLETED Reason=None ExitCode=0:0 NodeList=vm\n",
        );
        assert_eq!(c[0].task, 1);
        assert_eq!(c[0].node, "vm");
    }

    #[test]
    fn shell_words_quote_only_when_needed() {
        assert_eq!(shell_quote("lat_ctx/procs:2,8"), "lat_ctx/procs:2,8");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$(x)"), "'$(x)'");
    }
}
