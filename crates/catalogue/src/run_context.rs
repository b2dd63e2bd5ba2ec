//! The run context: what one run hands every family's build — quick mode
//! and the run options the user gave (`--dir`, `--postgres`, …). A run
//! option belongs to the families that declare it (`Family::options`), as
//! fio hangs each engine's options on the engine: the command line offers
//! every option of the table, routes what was given here by name, and
//! refuses one that no selected family honours; a family sees only the
//! options it declares. So a new family's option is declared in its own
//! file (or in `support/` when several share it) and the command line
//! needs no change; and nothing about a run lives in a process global —
//! what a check must keep for the whole run (an exclusive claim on a
//! device) the context holds, until the run ends.

use std::any::Any;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::sync::Arc;

use crate::family::Family;
use crate::FAMILIES;

/// What a run option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionValue {
    /// Nothing: the flag is given or not (`--drop-caches`).
    Flag,
    /// A path, named so in help (`PATH`, `DEV`).
    Path(&'static str),
    /// Text, named so in help (`URL`).
    Text(&'static str),
}

/// What a check keeps for the run (an exclusive claim on a device): the
/// run's context holds it, and every copy handed to a build, until the run
/// ends.
pub type Held = Arc<dyn Any + Send + Sync>;

/// A check of a run's options (`RunOption::check`), run once before
/// anything is built however many of its options were given: named, so
/// that options sharing one (the I/O target's four) run it once. Its
/// message names the flag; what it returns the run's context holds.
#[derive(Debug)]
pub struct RunCheck {
    pub name: &'static str,
    pub check: fn(&RunContext) -> Result<Option<Held>, String>,
}

/// A run-level option a family honours: one value for the whole run, not a
/// parameter of its cases (a directory to write in, a server to use).
#[derive(Debug, Clone, Copy)]
pub struct RunOption {
    /// The long flag without its dashes: `dir` is `--dir`.
    pub name: &'static str,
    pub value: OptionValue,
    /// What it does, for `--help`; the families that honour it are put
    /// in front of it there.
    pub help: &'static str,
    /// Parameters whose default it changes in the families that honour it,
    /// as (parameter, value): `--postgres URL` makes oltp's `engine`
    /// postgres, so that the case is named by what it measured.
    pub defaults: &'static [(&'static str, &'static str)],
    /// A check of the run's options, run when this one is given, before
    /// anything is built. Several options may share one (the I/O target's
    /// four).
    pub check: Option<&'static RunCheck>,
}

impl RunOption {
    /// `--name`, as the user writes it.
    pub fn flag(&self) -> String {
        format!("--{}", self.name)
    }
}

/// Every run option of the table, once each, in the order of the families
/// that first declare them.
pub fn run_options() -> Vec<&'static RunOption> {
    let mut all: Vec<&'static RunOption> = Vec::new();
    for f in FAMILIES {
        for o in f.options {
            if !all.iter().any(|a| a.name == o.name) {
                all.push(o);
            }
        }
    }
    all
}

/// The families that honour the option named `name`, in table order.
pub fn honoured_by(name: &str) -> Vec<&'static str> {
    FAMILIES
        .iter()
        .filter(|f| f.honours(name))
        .map(|f| f.name)
        .collect()
}

/// What a run hands each family's build (`Family::make`,
/// `Family::make_workload`) and the hooks that see the run (`annotate`,
/// `run_note`).
#[derive(Clone, Default)]
pub struct RunContext {
    /// Quick mode (`--quick`): fewer, shorter intervals and smaller sweeps.
    pub quick: bool,
    /// The run options given, by name; a flag's value is empty.
    given: BTreeMap<&'static str, OsString>,
    /// What the options' checks keep for the run (`RunCheck`).
    held: Vec<Held>,
}

impl std::fmt::Debug for RunContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunContext")
            .field("quick", &self.quick)
            .field("given", &self.given)
            .field("held", &self.held.len())
            .finish()
    }
}

impl RunContext {
    /// A run with no run options.
    pub const fn new(quick: bool) -> RunContext {
        RunContext {
            quick,
            given: BTreeMap::new(),
            held: Vec::new(),
        }
    }

    /// The same run with `option` given (a flag's value is ignored).
    pub fn with(mut self, option: &'static RunOption, value: impl Into<OsString>) -> RunContext {
        let value = match option.value {
            OptionValue::Flag => OsString::new(),
            _ => value.into(),
        };
        self.given.insert(option.name, value);
        self
    }

    /// The value given for `option`, if it was.
    pub fn value(&self, option: &RunOption) -> Option<&OsStr> {
        self.given.get(option.name).map(OsString::as_os_str)
    }

    /// A path option's value.
    pub fn path(&self, option: &RunOption) -> Option<&Path> {
        self.value(option).map(Path::new)
    }

    /// A text option's value, refused when it is not UTF-8.
    pub fn text(&self, option: &RunOption) -> Result<Option<&str>, String> {
        self.value(option)
            .map(|v| {
                v.to_str()
                    .ok_or_else(|| format!("{}: not valid UTF-8", option.flag()))
            })
            .transpose()
    }

    /// Whether a flag (or any option) was given.
    pub fn flag(&self, option: &RunOption) -> bool {
        self.given.contains_key(option.name)
    }

    /// The run as `family` sees it: only the options it declares.
    pub fn for_family(&self, family: &Family) -> RunContext {
        RunContext {
            quick: self.quick,
            given: self
                .given
                .iter()
                .filter(|(name, _)| family.honours(name))
                .map(|(name, v)| (*name, v.clone()))
                .collect(),
            held: self.held.clone(),
        }
    }

    /// What the checks keep for the run, of type `T` (a device's claim).
    pub fn held<T: Any>(&self) -> impl Iterator<Item = &T> {
        self.held.iter().filter_map(|h| h.downcast_ref::<T>())
    }

    /// The default a given option sets for `param` in `family`, if any.
    pub(crate) fn default_for(&self, family: &Family, param: &str) -> Option<&'static str> {
        family
            .options
            .iter()
            .filter(|o| self.given.contains_key(o.name))
            .flat_map(|o| o.defaults)
            .find(|(p, _)| *p == param)
            .map(|(_, v)| *v)
    }

    /// Check the given options against the families about to run: each
    /// must be honoured by one of them ("--dir applies to io, io_copy,
    /// io_load; the selection has none"); then each given option's check
    /// runs once, and what it keeps the context holds for the run. Before
    /// anything is built.
    pub fn check<'a>(
        &mut self,
        families: impl IntoIterator<Item = &'a Family>,
    ) -> Result<(), String> {
        let families: Vec<&Family> = families.into_iter().collect();
        for name in self.given.keys() {
            if !families.iter().any(|f| f.honours(name)) {
                return Err(format!(
                    "--{name} applies to {}; the selection has none",
                    honoured_by(name).join(", ")
                ));
            }
        }
        let mut done: Vec<&str> = Vec::new();
        for option in run_options() {
            let Some(c) = option.check else { continue };
            if self.given.contains_key(option.name) && !done.contains(&c.name) {
                done.push(c.name);
                if let Some(h) = (c.check)(self)? {
                    self.held.push(h);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An option is declared once: where two families name the same one,
    /// it is the same declaration (so help, defaults and checks agree).
    #[test]
    fn each_run_option_has_one_declaration() {
        for f in FAMILIES {
            for o in f.options {
                let first = run_options()
                    .into_iter()
                    .find(|a| a.name == o.name)
                    .unwrap();
                assert_eq!(
                    (first.value, first.help, first.defaults),
                    (o.value, o.help, o.defaults),
                    "{}: --{} differs from its first declaration",
                    f.name,
                    o.name
                );
                assert!(o.name.chars().all(|c| c.is_ascii_lowercase() || c == '-'));
            }
        }
    }

    fn family(name: &str) -> &'static Family {
        crate::family(name).unwrap()
    }

    #[test]
    fn an_option_no_selected_family_honours_is_refused_from_the_table() {
        let dir = run_options().into_iter().find(|o| o.name == "dir").unwrap();
        let mut ctx = RunContext::new(false).with(dir, std::env::temp_dir());
        let e = ctx.check([family("lat_syscall")]).unwrap_err();
        assert_eq!(
            e,
            format!(
                "--dir applies to {}; the selection has none",
                honoured_by("dir").join(", ")
            )
        );
        assert!(e.contains("io, io_copy, io_load"), "{e}");
        ctx.check([family("lat_syscall"), family("io")]).unwrap();
        // A family sees only what it declares.
        assert!(ctx.for_family(family("io")).flag(dir));
        assert!(!ctx.for_family(family("lat_syscall")).flag(dir));
        assert_eq!(ctx.for_family(family("lat_syscall")).quick, ctx.quick);
    }

    #[test]
    fn an_option_may_set_a_parameters_default_in_its_families() {
        let Some(postgres) = run_options().into_iter().find(|o| o.name == "postgres") else {
            return; // built without the oltp feature
        };
        let ctx = RunContext::new(false).with(postgres, "host=/tmp");
        assert_eq!(ctx.default_for(family("oltp"), "engine"), Some("postgres"));
        assert_eq!(ctx.default_for(family("io"), "engine"), None);
        assert_eq!(
            RunContext::new(false).default_for(family("oltp"), "engine"),
            None
        );
    }
}
