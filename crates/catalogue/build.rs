//! Makes the `FAMILIES` table (included by src/lib.rs) from the one list of
//! families: the `pub mod` lines of src/families/mod.rs, in their order. A
//! family is registered by its module line alone (a family that needs an
//! optional dependency has its feature's `#[cfg(feature = "…")]` line
//! above it, which the table entry gets too), and the list stays plain
//! Rust, which rustfmt follows into every family file (it does not look
//! inside macros for modules).

use std::fmt::Write;
use std::path::Path;

const LIST: &str = "src/families/mod.rs";

fn main() {
    println!("cargo:rerun-if-changed={LIST}");
    let text = std::fs::read_to_string(LIST).unwrap_or_else(|e| panic!("{LIST}: {e}"));
    // (module, the `#[cfg(...)]` line above it, if any)
    let mut modules: Vec<(&str, Option<&str>)> = Vec::new();
    let mut cfg = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        if line.starts_with("#[cfg(feature = ") && line.ends_with(")]") {
            cfg = Some(line);
            continue;
        }
        match line
            .strip_prefix("pub mod ")
            .and_then(|rest| rest.strip_suffix(';'))
        {
            Some(name) if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                modules.push((name, cfg.take()))
            }
            _ => panic!(
                "{LIST}:{}: expected `pub mod <family>;`, a `#[cfg(feature = \"…\")]` line \
                 above one, or a comment; found `{line}`",
                i + 1
            ),
        }
    }
    let mut out = String::from(
        "/// Every benchmark family, in the order of families/mod.rs: the order\n\
         /// `list` and the default suite use.\n\
         pub static FAMILIES: &[&Family] = &[\n",
    );
    for (m, cfg) in &modules {
        writeln!(out, "    {}&families::{m}::FAMILY,", cfg.unwrap_or("")).unwrap();
    }
    out.push_str("];\n\n/// The module of each entry of `FAMILIES`.\n#[cfg(test)]\nconst MODULES: &[&str] = &[\n");
    for (m, cfg) in &modules {
        writeln!(out, "    {}{m:?},", cfg.unwrap_or("")).unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("families.rs");
    std::fs::write(&dest, out).unwrap_or_else(|e| panic!("{}: {e}", dest.display()));
}
