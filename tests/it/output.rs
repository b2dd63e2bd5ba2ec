//! Where the command's output goes: a reader that has gone (`| head`)
//! ends every command quietly, and a standard output that cannot be
//! written for another reason is an error said once.

use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Output, Stdio};

use crate::common::{quick_run, text, Sandbox, Terminal};

/// Run `args` with standard output a pipe whose reading end is already
/// closed, so that the first write fails with EPIPE (as `| head` does once
/// head has its lines), whatever the output's size or timing.
fn into_a_closed_pipe(s: &Sandbox, args: &[&str]) -> Output {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills a local array; both descriptors are ours.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    s.cmd()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(write))
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// `report | head`, `show last | head`, `export | head` panicked ("failed
/// printing to stdout: Broken pipe") and exited 101; every command that
/// prints now ends with status 0 and says nothing.
#[test]
fn output_into_a_closed_pipe_ends_every_command_quietly() {
    let s = Sandbox::new();
    let a = quick_run(&s, "a");
    let b = quick_run(&s, "b");
    let commands: &[&[&str]] = &[
        &["report"],
        &["report", "--format", "json"],
        &["show", "last"],
        &["show", "last", "--json"],
        &["export"],
        &["runs"],
        &["runs", "--json"],
        &["compare", &a, &b],
        &["list"],
        &["list", "--json"],
        &["completions", "bash"],
        &["man"],
        &["run", "null_loop", "--quick", "--no-store"],
        &["run", "null_loop", "--quick", "--dry-run"],
    ];
    for args in commands {
        let o = into_a_closed_pipe(&s, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o));
    }
    // A run whose table went nowhere is stored all the same.
    let o = into_a_closed_pipe(&s, &["run", "null_loop", "--quick", "--label", "c"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let runs = s.run(&["runs", "--json"]);
    let listed: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 3, "{listed}");
}

/// A full disk behind `>` is not a closed pipe: the command says it could
/// not write and exits 2.
#[test]
fn a_standard_output_that_cannot_be_written_is_an_error() {
    let s = Sandbox::new();
    quick_run(&s, "a");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = s
        .cmd()
        .args(["report"])
        .stdout(Stdio::from(full))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot write to standard output") && err.contains("No space left"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

/// A pseudo-terminal that reports 0 columns (some consoles and CI runners
/// do) collapsed every table to one character per column; 0 now means
/// "unknown", as 80 columns.
#[test]
fn a_terminal_that_reports_no_width_gets_tables_80_columns_wide() {
    let s = Sandbox::new();
    let id = quick_run(&s, "narrow");
    let widest_table_line = |printed: &str| {
        printed
            .lines()
            .filter(|l| l.starts_with('│') || l.starts_with('┌'))
            .map(|l| l.chars().count())
            .max()
            .unwrap_or_else(|| panic!("no table in {printed}"))
    };
    let zero = Terminal::open();
    zero.set_columns(0);
    let printed = zero.printed(&s, &["show", &id]);
    let widest = widest_table_line(&printed);
    assert!((40..=80).contains(&widest), "{widest} wide:\n{printed}");
    // The same on a real 80-column terminal.
    let eighty = Terminal::open();
    eighty.set_columns(80);
    assert_eq!(
        widest_table_line(&eighty.printed(&s, &["show", &id])),
        widest
    );
}

/// On a terminal a run ends with its summary — each family's headline, the
/// warnings counted, where the full tables are — and nothing wider than
/// the terminal; `--tables` adds the tables, whose names never break
/// mid-token (`lat_usleep/clock_nanosleep/time:10` / `0us` read as another
/// case). Off a terminal the tables are printed, as before.
#[test]
fn a_run_on_a_terminal_ends_with_a_summary_that_fits_it() {
    let s = Sandbox::new();
    let args = [
        "run",
        "--quick",
        "lat_syscall/null",
        "lat_usleep/clock_nanosleep",
    ];
    let fits = |printed: &str, columns: usize| {
        for line in printed.lines() {
            assert!(
                line.chars().count() <= columns,
                "{line:?} wider than {columns}:\n{printed}"
            );
        }
    };
    let eighty = Terminal::open();
    eighty.set_columns(80);
    let printed = eighty.printed(&s, &args);
    fits(&printed, 80);
    let summary = &printed[printed.find("Summary: ").expect("a summary")..];
    assert!(summary.contains("lat_syscall/null "), "{printed}");
    assert!(
        summary.contains("lat_usleep/clock_nanosleep/time:1us "),
        "{printed}"
    );
    assert!(
        summary.contains("Full tables: touchstone show "),
        "{printed}"
    );
    assert!(
        !printed.contains('┌'),
        "no tables without --tables:\n{printed}"
    );
    assert!(summary.lines().count() <= 12, "{summary}");

    let mut with_tables = args.to_vec();
    with_tables.push("--tables");
    let eighty = Terminal::open();
    eighty.set_columns(80);
    let printed = eighty.printed(&s, &with_tables);
    fits(&printed, 80);
    assert!(printed.contains('┌'), "{printed}");
    for t in ["1us", "100us", "1ms", "10ms"] {
        let name = format!("lat_usleep/clock_nanosleep/time:{t}");
        assert!(printed.contains(&name), "{name} broken:\n{printed}");
    }
    // Each figure once: the tables stand in for the summary.
    assert!(!printed.contains("Summary: "), "{printed}");

    // Into a pipe: the tables, as before.
    let out = s.cmd().args(args).output().unwrap();
    let piped = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(piped.contains('┌'), "tables off a terminal: {piped}");
    assert!(!piped.contains("Summary: "), "{piped}");
}
