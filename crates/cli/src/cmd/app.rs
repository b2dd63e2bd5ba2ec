//! `touchstone app 'CMD' 'CMD'…` (hyperfine's form) or `touchstone app --
//! PROGRAM ARGS…`: time whole programs with the harness's rigour. The benchmark itself is the
//! catalogue's (`touchstone_catalogue::app`); this command parses, plans,
//! and measures each command in one run session, so each result is stored
//! as the measurement `app/NAME` of one run, and the run is finished
//! (complete, failed with its reason, interrupted) on every path. With
//! several commands, a summary names the fastest and how many times faster
//! it ran than each of the others, with the ratio's confidence interval
//! (as hyperfine's summary does). `--export-json` and `--export-markdown`
//! write hyperfine's shapes (`touchstone_report::hyperfine`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use touchstone_analysis::compare::ratio;
use touchstone_catalogue::app::{AppCase, AppSpec};
use touchstone_catalogue::params::Param;
use touchstone_harness::plan::MAX_REPETITIONS;
use touchstone_report::hyperfine;
use touchstone_results::store::Store;
use touchstone_results::units::format_value;
use touchstone_results::{Measurement, Run, Unit};

use crate::args::AppArgs;
use crate::error::CliError;
use crate::option_values;
use crate::output;
use crate::session::{Request, Session};

/// Timed runs of a command by default: each is a fresh process already, so
/// `app` measures one round of them (the median and its sign-test interval).
const APP_REPETITIONS: u32 = 11;

/// The longest --timeout: the harness's own stall limit for a program.
const MAX_TIMEOUT_NS: u64 = 30 * 24 * 3600 * 1_000_000_000;

/// The commands to time, each as its argument vector: each string given
/// as an argument (or with --command) split as a shell splits words, or
/// the words after `--` as they are.
fn commands(a: &AppArgs) -> Result<Vec<Vec<String>>, CliError> {
    let strings = command_strings(a);
    match (strings.is_empty(), a.argv.is_empty()) {
        (true, true) => Err(no_command(a)),
        (false, false) => Err(CliError::Usage(format!(
            "both commands as arguments ({}) and a program after `--` ({}): give several \
             commands as arguments, each one string ('CMD' 'CMD'), or one program and its \
             words after `--`, not both",
            strings.join(", "),
            a.argv.join(" ")
        ))),
        (true, false) => Ok(vec![a.argv.clone()]),
        (false, true) => strings
            .iter()
            .map(|c| match shlex::split(c) {
                Some(words) if !words.is_empty() => Ok(words),
                Some(_) => Err(CliError::Usage("an empty command ('')".into())),
                None => Err(CliError::Usage(format!(
                    "command {c}: unbalanced quotes or a trailing backslash"
                ))),
            })
            .collect(),
    }
}

/// The commands given as strings: as arguments, or with --command.
fn command_strings(a: &AppArgs) -> &[String] {
    if a.command_options.is_empty() {
        &a.commands
    } else {
        &a.command_options
    }
}

fn no_command(a: &AppArgs) -> CliError {
    let mut message = "no command to time: give each as an argument (touchstone app 'CMD'), \
                       or one program and its words after `--` (touchstone app -- PROGRAM ARGS)"
        .to_string();
    if !a.cleanup.is_empty() {
        message += &format!(
            "; -c is --cleanup, as in hyperfine (run once after all the runs), not a command \
             to time: to time {0}, give {1} as {2}: touchstone app {0}",
            quoted(&a.cleanup),
            if a.cleanup.len() == 1 { "it" } else { "each" },
            if a.cleanup.len() == 1 {
                "an argument"
            } else {
                "arguments"
            },
        );
    }
    CliError::Usage(message)
}

fn quoted(commands: &[String]) -> String {
    commands
        .iter()
        .map(|c| shlex::try_quote(c).map_or_else(|_| c.clone(), |q| q.into_owned()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// An option given once for every command or once per command, in order
/// (hyperfine's rule for --prepare), spread over `n` commands.
fn per_command(option: &str, given: &[String], n: usize) -> Result<Vec<Option<String>>, CliError> {
    match given.len() {
        0 => Ok(vec![None; n]),
        1 => Ok(vec![Some(given[0].clone()); n]),
        k if k == n => Ok(given.iter().cloned().map(Some).collect()),
        k => {
            let mut message = format!(
                "{k} --{option} for {n} command{}: give one for all commands, or one per \
                 command, in order",
                if n == 1 { "" } else { "s" }
            );
            if option == "cleanup" {
                message += &format!(
                    " (-c is --cleanup, as in hyperfine; to time several commands, give each \
                     as an argument: touchstone app {})",
                    quoted(given)
                );
            }
            Err(CliError::Usage(message))
        }
    }
}

/// A command given as a string that cannot be run, when several were
/// given: perhaps one command's words were given as separate arguments
/// (`touchstone app sleep 0.1`). Says how to give them as one.
fn ambiguity_hint(a: &AppArgs, i: usize, words: &[String]) -> String {
    let strings = command_strings(a);
    if strings.len() < 2 || words.len() != 1 || i == 0 {
        return String::new();
    }
    let joined = strings.join(" ");
    format!(
        "; each argument is a whole command, as in hyperfine: to time `{joined}`, quote it \
         (touchstone app {}) or give it after -- (touchstone app -- {joined})",
        quoted(&[joined.clone()])
    )
}

/// One name per command: those given with --name, in order, or each
/// program's file name; programs named alike are told apart by their
/// place (`sleep-1`, `sleep-2`).
fn names(given: &[String], commands: &[Vec<String>]) -> Result<Vec<Option<String>>, CliError> {
    if !given.is_empty() {
        if given.len() != commands.len() {
            return Err(CliError::Usage(format!(
                "{} --name for {} commands: give one per command, in order, or none",
                given.len(),
                commands.len()
            )));
        }
        for (i, n) in given.iter().enumerate() {
            if given[..i].contains(n) {
                return Err(CliError::Usage(format!(
                    "--name {n} is given twice: each command needs its own name"
                )));
            }
        }
        return Ok(given.iter().cloned().map(Some).collect());
    }
    let program = |c: &Vec<String>| {
        let first = c.first().map(String::as_str).unwrap_or_default();
        std::path::Path::new(first)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| first.to_string())
    };
    let programs: Vec<String> = commands.iter().map(program).collect();
    Ok(programs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let alike = programs.iter().filter(|q| *q == p).count();
            (alike > 1).then(|| format!("{p}-{}", i + 1))
        })
        .collect())
}

fn timeout(text: Option<&str>) -> Result<Option<Duration>, CliError> {
    let Some(t) = text else { return Ok(None) };
    let p = Param::duration("--timeout", 1_000_000, MAX_TIMEOUT_NS).help("");
    Ok(Some(Duration::from_nanos(
        p.parse(t).map_err(CliError::Usage)?.num,
    )))
}

pub fn app(db: Option<PathBuf>, a: AppArgs) -> Result<(), CliError> {
    // Stage one: everything checked before anything runs.
    option_values::check_label(a.label.as_deref())?;
    let repetitions = a.repetitions.unwrap_or(APP_REPETITIONS);
    if repetitions == 0 || repetitions > MAX_REPETITIONS {
        return Err(CliError::Usage(format!(
            "--repetitions {repetitions}: must be 1..={MAX_REPETITIONS}"
        )));
    }
    let timeout = timeout(a.timeout.as_deref())?;
    let commands = commands(&a)?;
    let n = commands.len();
    let names = names(&a.name, &commands)?;
    let setup = per_command("setup", &a.setup, n)?;
    let prepare = per_command("prepare", &a.prepare, n)?;
    let conclude = per_command("conclude", &a.conclude, n)?;
    let cleanup = per_command("cleanup", &a.cleanup, n)?;
    let store_path = db.clone().unwrap_or_else(Store::default_path);
    for path in [&a.export_json, &a.export_markdown].into_iter().flatten() {
        check_export(path, &store_path)?;
    }
    let specs: Vec<AppSpec> = commands
        .iter()
        .enumerate()
        .map(|(i, command)| AppSpec {
            command: command.clone(),
            name: names[i].clone(),
            setup: setup[i].clone(),
            prepare: prepare[i].clone(),
            conclude: conclude[i].clone(),
            cleanup: cleanup[i].clone(),
            show_output: a.show_output,
            warmup: a.warmup,
            repetitions,
            timeout,
        })
        .collect();
    let mut cases: Vec<AppCase> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            s.check()
                .map_err(|e| CliError::Usage(e + &ambiguity_hint(&a, i, &s.command)))
        })
        .collect::<Result<_, _>>()?;
    let mut plan = specs[0].plan();

    let mut session = Session::start(
        Request {
            db,
            store: !a.no_store,
            label: a.label.clone(),
            selection: cases.iter().map(|c| c.label.name.clone()).collect(),
            parallel: vec![1],
            quick: false,
            planned: cases.len(),
            steps: cases.len(),
            seed: None,
            workload: None,
            notes: Vec::new(),
        },
        &mut plan,
    )?;
    let mut body = Ok(());
    for case in &mut cases {
        if session.interrupted() {
            break;
        }
        session.start_case(&case.label.name);
        body = session.measure(&case.label, &mut case.bench, &case.shape, None, &plan);
        if body.is_err() {
            break;
        }
    }
    // Exported only when every command was measured, as hyperfine does,
    // and after the run is closed, so a file that cannot be written loses
    // nothing measured.
    let measured: Vec<Measurement> = session.measurements().to_vec();
    let all_measured = body.is_ok() && measured.len() == cases.len();
    session.finish(body, a.json, |run| {
        per_run(run, a.warmup, repetitions) + &summary(&run.measurements)
    })?;
    if all_measured {
        // What hyperfine calls the command: its name when one was given,
        // else the command line as typed.
        let strings = command_strings(&a);
        let exported: Vec<(String, &Measurement)> = measured
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let command = match (a.name.get(i), strings.get(i)) {
                    (Some(name), _) => name.clone(),
                    (None, Some(typed)) => typed.clone(),
                    (None, None) => commands[i].join(" "),
                };
                (command, m)
            })
            .collect();
        if let Some(path) = &a.export_json {
            output::write_file(path, hyperfine::json(&exported).as_bytes(), &store_path)?;
        }
        if let Some(path) = &a.export_markdown {
            output::write_file(path, hyperfine::markdown(&exported).as_bytes(), &store_path)?;
        }
    }
    Ok(())
}

/// An export file named before anything runs: not the store, not a
/// directory, in a directory that exists.
fn check_export(path: &Path, store: &Path) -> Result<(), CliError> {
    output::refuse_store(path, store)?;
    let refused = |message: &str| {
        Err(CliError::File {
            path: path.display().to_string(),
            message: message.to_string(),
        })
    };
    if path.is_dir() {
        return refused("is a directory: name a file for the export");
    }
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() && !d.is_dir() => {
            refused("its directory does not exist (nothing is made)")
        }
        _ => Ok(()),
    }
}

/// The resource use each benchmark recorded from wait4, under the table.
fn per_run(run: &Run, warmup: u32, repetitions: u32) -> String {
    let mut out = String::new();
    for m in &run.measurements {
        let get = |k: &str| m.extra.get(k).copied().unwrap_or(f64::NAN);
        let who = if run.measurements.len() > 1 {
            format!("{}: ", m.name)
        } else {
            String::new()
        };
        out += &format!(
            "{who}per run: user {}, system {}, peak RSS {:.1} MiB; {warmup} warm-up and {repetitions} timed runs, all exited 0\n",
            format_value(Unit::Ns, get("user_cpu_s") * 1e9),
            format_value(Unit::Ns, get("system_cpu_s") * 1e9),
            get("peak_rss_bytes") / (1024.0 * 1024.0),
        );
    }
    if let Some(overhead) = run
        .measurements
        .iter()
        .filter_map(|m| m.extra.get("launch_overhead_ns"))
        .copied()
        .find(|x| x.is_finite())
    {
        out += &format!(
            "launching and reaping a process (no program) takes {} here; it is part of every run's time, as with a shell or hyperfine -N\n",
            format_value(Unit::Ns, overhead)
        );
    }
    out
}

/// With several commands: the fastest, and how many times faster it ran
/// than each other one, with the ratio's interval; "about as fast" when the
/// interval includes 1.
fn summary(ms: &[Measurement]) -> String {
    if ms.len() < 2 {
        return String::new();
    }
    let fastest = ms
        .iter()
        .min_by(|a, b| a.value().total_cmp(&b.value()))
        .expect("two or more");
    let mut out = format!("summary: {} ran\n", fastest.name);
    for m in ms.iter().filter(|m| m.name != fastest.name) {
        match ratio(&fastest.figure(), &m.figure()) {
            Some(r) if r.differs() => {
                out += &format!(
                    "  {:.2} × faster than {} ({:.2}–{:.2}, {:.0} % interval)\n",
                    r.ratio,
                    m.name,
                    r.low,
                    r.high,
                    r.level * 100.0
                )
            }
            Some(r) => {
                out += &format!(
                    "  about as fast as {} (ratio {:.2}, interval {:.2}–{:.2} includes 1)\n",
                    m.name, r.ratio, r.low, r.high
                )
            }
            None => out += &format!("  (no ratio to {}: its figure is not positive)\n", m.name),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(c: &[&str]) -> Vec<String> {
        c.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn programs_named_alike_are_told_apart_by_place() {
        let cmds = vec![
            words(&["sleep", "0.1"]),
            words(&["/bin/true"]),
            words(&["/usr/bin/sleep", "0.2"]),
        ];
        assert_eq!(
            names(&[], &cmds).unwrap(),
            [
                Some("sleep-1".to_string()),
                None,
                Some("sleep-3".to_string())
            ]
        );
        let given = words(&["a", "b", "c"]);
        assert_eq!(names(&given, &cmds).unwrap()[1], Some("b".to_string()));
        assert!(names(&words(&["a"]), &cmds).is_err());
        assert!(names(&words(&["a", "b", "a"]), &cmds).is_err());
    }

    #[test]
    fn timeouts_are_durations_within_bounds() {
        assert_eq!(
            timeout(Some("250ms")).unwrap(),
            Some(Duration::from_millis(250))
        );
        assert_eq!(timeout(None).unwrap(), None);
        assert!(timeout(Some("0s")).is_err());
        assert!(timeout(Some("soon")).is_err());
    }
}
