//! The run options families declare (`--dir`, `--postgres`, …), made into
//! flags of `touchstone run` from the catalogue's table
//! (`touchstone_catalogue::run_options`) and handed back to it, by name,
//! as the run's context. This file names no option and no family: a
//! family's new option is declared in the catalogue and appears here, in
//! help, completions and the man page, with no change to this crate.

use std::ffi::OsString;

use clap::builder::{OsStringValueParser, TypedValueParser};
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches, ValueHint};
use touchstone_catalogue::{honoured_by, run_options, OptionValue, RunContext, RunOption};

/// Where the family options are listed in `touchstone run --help`.
const HEADING: &str = "Options of some families";

/// The family options given on the command line, in the table's order.
#[derive(Debug, Clone, Default)]
pub struct FamilyOptions(Vec<(&'static RunOption, OsString)>);

impl FamilyOptions {
    /// The run's context: quick mode and these options.
    pub fn context(&self, quick: bool) -> RunContext {
        self.0
            .iter()
            .fold(RunContext::new(quick), |ctx, (o, v)| ctx.with(o, v.clone()))
    }
}

fn arg(o: &'static RunOption) -> Arg {
    let help = format!("{}: {}", honoured_by(o.name).join(", "), o.help);
    let arg = Arg::new(o.name)
        .long(o.name)
        .help(help)
        .help_heading(HEADING);
    // A value must not be empty: `--dir ""` names no directory.
    let non_empty = OsStringValueParser::new().try_map(|v: OsString| {
        if v.is_empty() {
            Err("a value is required")
        } else {
            Ok(v)
        }
    });
    match o.value {
        OptionValue::Flag => arg.action(ArgAction::SetTrue),
        OptionValue::Path(name) => arg
            .value_name(name)
            .value_parser(non_empty)
            .value_hint(ValueHint::AnyPath),
        OptionValue::Text(name) => arg.value_name(name).value_parser(non_empty),
    }
}

impl Args for FamilyOptions {
    fn augment_args(cmd: Command) -> Command {
        run_options()
            .into_iter()
            .fold(cmd, |cmd, o| cmd.arg(arg(o)))
    }
    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for FamilyOptions {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut given = Vec::new();
        for o in run_options() {
            match o.value {
                OptionValue::Flag if m.get_flag(o.name) => given.push((o, OsString::new())),
                OptionValue::Flag => {}
                _ => {
                    if let Some(v) = m.get_one::<OsString>(o.name) {
                        given.push((o, v.clone()));
                    }
                }
            }
        }
        Ok(FamilyOptions(given))
    }
    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &[&str]) -> Result<FamilyOptions, clap::Error> {
        let cmd = FamilyOptions::augment_args(Command::new("run").arg(Arg::new("spec")));
        let m = cmd.try_get_matches_from(["run"].iter().chain(words))?;
        FamilyOptions::from_arg_matches(&m)
    }

    fn option(name: &str) -> &'static RunOption {
        run_options().into_iter().find(|o| o.name == name).unwrap()
    }

    /// Every option of the table is a flag, and what was given reaches
    /// the context under its declared name.
    #[test]
    fn every_declared_option_is_a_flag_and_reaches_the_context() {
        let cmd = FamilyOptions::augment_args(Command::new("run"));
        cmd.clone().debug_assert();
        for o in run_options() {
            assert!(
                cmd.get_arguments().any(|a| a.get_long() == Some(o.name)),
                "--{} is not a flag",
                o.name
            );
        }
        let given = parse(&["io", "--dir", "/tmp", "--drop-caches"]).unwrap();
        let ctx = given.context(true);
        assert_eq!(ctx.path(option("dir")), Some(std::path::Path::new("/tmp")));
        assert!(ctx.flag(option("drop-caches")));
        assert!(!ctx.flag(option("device")));
        assert!(ctx.quick);
        assert!(!parse(&["io"]).unwrap().context(false).flag(option("dir")));
        // An empty value names nothing.
        assert!(parse(&["io", "--dir", ""]).is_err());
    }
}
