//! The benchmark catalogue. Each family is one file in `families/` that ends
//! with its self-description (`FAMILY`), registered by one line, its module
//! in `families/mod.rs`, from which the build script makes the `FAMILIES`
//! table. `list`, help and the docs are generated from the table; `select`
//! turns what the user typed into concrete cases. What the families share
//! lives in `support/`.

pub mod app;
mod families;
pub mod family;

pub mod params;
mod run_context;
pub mod select;
pub mod support;
pub mod testing;

pub use family::{Built, Family, Parallel};
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
}
