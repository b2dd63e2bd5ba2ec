//! The benchmark catalogue. Each family is one file in `families/` that ends
//! with its self-description (`FAMILY`), registered by one line, its module
//! in `families/mod.rs`, from which the build script makes the `FAMILIES`
//! table. `list`, help and the docs are generated from the table; `select`
//! turns what the user typed into concrete cases, and each case is built
//! for the run's `RunContext` (quick mode, the run options its family
//! declares). What the families share lives in `support/`; the families
//! themselves are reached only through the table.

pub mod app;
mod families;
pub mod family;

pub mod params;
mod run_context;
pub mod select;
pub mod support;
pub mod testing;

pub use family::{Built, Cost, Family, Parallel};
pub use params::{Kind, Param, Point, Value};
pub use run_context::{
    honoured_by, run_options, Held, OptionValue, RunCheck, RunContext, RunOption,
};
pub use select::{select, SelectError, Selected};

// `FAMILIES`, made by build.rs from the module list in families/mod.rs.
include!(concat!(env!("OUT_DIR"), "/families.rs"));

/// A family by exact name.
pub fn family(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().copied().find(|f| f.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A family is found by its file name: `lat_pipe` is families/lat_pipe.rs.
    #[test]
    fn each_family_is_named_after_its_file() {
        assert_eq!(FAMILIES.len(), MODULES.len());
        for (f, module) in FAMILIES.iter().zip(MODULES) {
            assert_eq!(f.name, *module);
        }
    }

    /// docs/writing-a-benchmark.md lists every module of support/, so a
    /// newcomer finds what is shared before writing it again.
    #[test]
    fn the_guide_lists_every_support_module() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let guide =
            std::fs::read_to_string(root.join("../../docs/writing-a-benchmark.md")).unwrap();
        let mut missing = Vec::new();
        for e in std::fs::read_dir(root.join("src/support")).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            if e.path().is_dir() {
                // A module that is a folder: the folder and each file in it.
                if !guide.contains(&format!("    {name}/ ")) {
                    missing.push(format!("{name}/"));
                }
                for f in std::fs::read_dir(e.path()).unwrap() {
                    let file = f.unwrap().file_name().to_string_lossy().into_owned();
                    if !guide.contains(&format!("      {file} ")) {
                        missing.push(format!("{name}/{file}"));
                    }
                }
            } else if name != "mod.rs" && !guide.contains(&format!("    {name} ")) {
                missing.push(name);
            }
        }
        assert!(missing.is_empty(), "not in the guide's map: {missing:?}");
    }
}
