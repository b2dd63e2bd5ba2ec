//! `touchstone completions SHELL` and `touchstone man`: shell completion
//! scripts (clap_complete) and manual pages (clap_mangen) generated from
//! the command-line definition itself, at run time, so they always match
//! the binary that prints them (no build step, nothing to keep in sync).

use std::path::Path;

use clap::CommandFactory;

use crate::args::Cli;
use crate::error::CliError;
use crate::output;

pub fn completions(shell: clap_complete::Shell) -> Result<(), CliError> {
    let mut cmd = Cli::command();
    // Into memory first: clap_complete panics when its writer fails.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "touchstone", &mut script);
    output::print_raw(&script);
    Ok(())
}

/// The main page on standard output, or every page (touchstone.1,
/// touchstone-run.1, …) written into `dir`.
pub fn man(dir: Option<&Path>, store: &Path) -> Result<(), CliError> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    match dir {
        None => {
            output::print_raw(page(&cmd).as_bytes());
            Ok(())
        }
        Some(d) => {
            // Written as every output file is (`output::write_file`).
            let write = |c: &clap::Command| {
                let name = c.get_display_name().unwrap_or(c.get_name());
                output::write_file(&d.join(format!("{name}.1")), page(c).as_bytes(), store)
            };
            std::fs::create_dir_all(d).map_err(|e| CliError::File {
                path: d.display().to_string(),
                message: format!("cannot make the directory for the manual pages: {e}"),
            })?;
            // Every page the SUBCOMMANDS sections name, nested ones too
            // (touchstone-fleet-run.1, touchstone-runs-delete.1, …).
            every_command(&cmd).into_iter().try_for_each(write)?;
            output::print(&format!("manual pages written to {}\n", d.display()));
            Ok(())
        }
    }
}

/// `cmd` and every command under it that is not hidden, parents first.
fn every_command(cmd: &clap::Command) -> Vec<&clap::Command> {
    let mut all = vec![cmd];
    for sub in cmd.get_subcommands().filter(|c| !c.is_hide_set()) {
        all.extend(every_command(sub));
    }
    all
}

/// What every page ends with: how the command exits, the files it keeps
/// and the environment it reads (the same for every command).
const COMMON_SECTIONS: &str = r#".SH "EXIT STATUS"
.TP
0
Success.
.TP
1
A measurement, a host or the timed command failed; what finished is stored or imported.
.TP
2
Bad input (an option, a name, a file, a store that cannot be read or written); nothing was measured or changed.
.TP
130
Interrupted (Ctrl\-C, SIGTERM, SIGHUP); what finished before it is stored.
.SH FILES
.TP
\fI$XDG_DATA_HOME/touchstone/results.sqlite\fR
The results store (default \fI~/.local/share/touchstone/results.sqlite\fR; \fB\-\-db\fR or \fBTOUCHSTONE_DB\fR name another).
.TP
\fI$TMPDIR/touchstone\-*\fR
Each measurement's scratch directory, removed when it ends (also on failure or Ctrl\-C).
.SH ENVIRONMENT
.TP
.B TOUCHSTONE_DB
The results store, as \fB\-\-db\fR (which wins).
.TP
.B XDG_DATA_HOME, HOME
Where the default store lies.
.TP
.B TMPDIR
Where scratch directories are made.
.TP
.B NO_COLOR, CLICOLOR_FORCE
No colour at all; colour even off a terminal (no\-color.org).
"#;

/// One manual page. clap_mangen refills the text after the options as a
/// paragraph, which scrambles the aligned examples, so that text becomes an
/// EXAMPLES section of its own, set line by line (`.nf`).
fn page(cmd: &clap::Command) -> String {
    let examples = cmd.get_after_help().map(|t| t.to_string());
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone().after_help(None::<&str>))
        .render(&mut buf)
        .expect("rendering into memory cannot fail");
    let mut text = String::from_utf8(buf).expect("roff is UTF-8");
    let mut sections = String::new();
    if let Some(ex) = examples {
        sections += &format!(".SH EXAMPLES\n.nf\n{}\n.fi\n", roff_lines(&ex));
    }
    sections += COMMON_SECTIONS;
    match text.find(".SH VERSION") {
        Some(at) => text.insert_str(at, &sections),
        None => text.push_str(&sections),
    }
    text
}

/// Text as literal roff lines: backslashes and minus signs escaped, and a
/// line that starts with a control character made plain.
fn roff_lines(text: &str) -> String {
    text.lines()
        .map(|l| {
            let l = l.replace('\\', "\\e").replace('-', "\\-");
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
