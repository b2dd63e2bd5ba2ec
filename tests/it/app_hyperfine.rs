//! `touchstone app` speaks hyperfine where it says it does: --prepare
//! before every run, --setup once before a command's runs and --cleanup
//! once after them (--conclude after every run), commands as arguments
//! beside `-- PROGRAM ARGS`, hyperfine's --export-json and
//! --export-markdown, and clear words where the two forms or hyperfine's
//! `-c` could be misread.

use serde_json::Value;

use crate::common::{assert_refused, assert_says, text, Sandbox};

/// A shell command that appends `word` to `log`.
fn note(word: &str, log: &std::path::Path) -> String {
    format!("echo {word} >> {}", log.display())
}

#[test]
fn setup_and_cleanup_run_once_per_command_prepare_and_conclude_around_every_run() {
    let s = Sandbox::new();
    let log = s.path("log");
    let out = s.run(&[
        "app",
        "--no-store",
        "-w",
        "2",
        "-r",
        "3",
        "--setup",
        &note("setup", &log),
        "--prepare",
        &note("prepare", &log),
        "--conclude",
        &note("conclude", &log),
        "--cleanup",
        &note("cleanup", &log),
        "--",
        "sh",
        "-c",
        &note("run", &log),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    // As hyperfine orders them: setup, then 2 warm-up and 3 timed runs
    // each between prepare and conclude, then cleanup.
    let want = format!("setup\n{}cleanup\n", "prepare\nrun\nconclude\n".repeat(5));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), want);
}

#[test]
fn several_commands_take_one_option_for_all_or_one_each_in_order() {
    let s = Sandbox::new();
    let log = s.path("log");
    let out = s.run(&[
        "app",
        "--no-store",
        "-r",
        "2",
        "-s",
        &note("setup", &log),
        "-p",
        &note("p1", &log),
        "-p",
        &note("p2", &log),
        "-c",
        &note("cleanup", &log),
        &format!("sh -c '{}'", note("one", &log)),
        &format!("sh -c '{}'", note("two", &log)),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let want = format!(
        "setup\n{}cleanup\nsetup\n{}cleanup\n",
        "p1\none\n".repeat(3),
        "p2\ntwo\n".repeat(3)
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), want);
    // Neither one nor one each: refused before anything runs.
    let out = s.run(&[
        "app", "-p", "true", "-p", "true", "-p", "true", "true", "true",
    ]);
    assert_refused(&out, "3 --prepare for 2 commands");
}

#[test]
fn a_failing_cleanup_fails_the_measurement_naming_it() {
    let s = Sandbox::new();
    let out = s.run(&["app", "--no-store", "-r", "2", "-c", "exit 3", "true"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_says(&out, "cleanup command `exit 3`");
}

#[test]
fn commands_as_arguments_are_split_as_hyperfine_and_the_forms_do_not_mix() {
    let s = Sandbox::new();
    let out = s.run(&[
        "app",
        "--json",
        "--no-store",
        "-r",
        "2",
        "sleep 0.01",
        "true",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &doc["runs"][0]["measurements"];
    assert_eq!(m[0]["name"], "app/sleep");
    assert_eq!(m[0]["params"]["command"], "sleep 0.01");
    assert_eq!(m[1]["name"], "app/true");
    // The option form of touchstone before hyperfine's names, kept.
    let out = s.run(&["app", "--no-store", "-r", "2", "--command", "true"]);
    assert!(out.status.success(), "{}", text(&out));
    // A program's words given as separate arguments: each is a command,
    // and the one that is no program says how to give them as one.
    let out = s.run(&["app", "--no-store", "sleep", "0.1"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("each argument is a whole command"), "{t}");
    assert!(t.contains("touchstone app 'sleep 0.1'"), "{t}");
    assert!(t.contains("touchstone app -- sleep 0.1"), "{t}");
    // Strings and a program after `--` at once: refused, saying why.
    let out = s.run(&["app", "--no-store", "true", "--", "true"]);
    assert_refused(&out, "not both");
}

#[test]
fn dash_c_is_hyperfines_cleanup_and_its_old_use_is_explained() {
    let s = Sandbox::new();
    // touchstone's former `-c CMD -c CMD` (commands): now two cleanups and
    // nothing to time; the message shows the hyperfine form.
    let out = s.run(&["app", "-c", "gzip -kf big.tar", "-c", "zstd -kf big.tar"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("-c is --cleanup, as in hyperfine"), "{t}");
    assert!(
        t.contains("touchstone app 'gzip -kf big.tar' 'zstd -kf big.tar'"),
        "{t}"
    );
    assert!(!s.db().exists(), "nothing ran, nothing stored");
}

#[test]
fn an_option_app_lacks_gets_no_tip_to_pass_it_after_the_double_dash() {
    let s = Sandbox::new();
    // clap's tip was "to pass '--min-runs' as a value, use '-- --min-runs'",
    // which would run --min-runs as the program.
    let out = s.run(&["app", "--min-runs", "3", "true"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let t = text(&out);
    assert!(!t.contains("as a value"), "{t}");
    assert!(t.contains("hyperfine's options"), "{t}");
}

#[test]
fn exports_are_hyperfines_json_and_markdown() {
    let s = Sandbox::new();
    let (json, md) = (s.path("t.json"), s.path("t.md"));
    let out = s.run(&[
        "app",
        "--no-store",
        "-r",
        "3",
        "-n",
        "short",
        "-n",
        "shorter",
        "sleep 0.02",
        "true",
        "--export-json",
        json.to_str().unwrap(),
        "--export-markdown",
        md.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["command"], "short");
    let times = results[0]["times"].as_array().unwrap();
    assert_eq!(times.len(), 3);
    // Seconds: sleep 0.02 takes at least 20 ms and (loosely) under 2 s.
    let mean = results[0]["mean"].as_f64().unwrap();
    assert!((0.02..2.0).contains(&mean), "{mean}");
    assert_eq!(results[0]["exit_codes"], serde_json::json!([0, 0, 0]));
    let table = std::fs::read_to_string(&md).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines[0],
        "| Command | Mean [ms] | Min [ms] | Max [ms] | Relative |"
    );
    assert_eq!(lines[1], "|:---|---:|---:|---:|---:|");
    assert!(lines[2].starts_with("| `short` | "), "{table}");
    assert!(
        lines[3].starts_with("| `shorter` | ") && lines[3].ends_with(" | 1.00 |"),
        "{table}"
    );
}

#[test]
fn an_export_is_checked_before_running_and_not_written_when_a_run_fails() {
    let s = Sandbox::new();
    let json = s.path("t.json");
    // Onto the store: refused before anything runs (no store is made).
    let db = s.db();
    let out = s.run(&[
        "app",
        "-r",
        "2",
        "true",
        "--export-json",
        db.to_str().unwrap(),
    ]);
    assert_refused(&out, "results store");
    assert!(!db.exists());
    // A command that fails: no export, as hyperfine.
    let out = s.run(&[
        "app",
        "--no-store",
        "-r",
        "2",
        "false",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(!json.exists());
}
