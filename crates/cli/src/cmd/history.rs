//! `touchstone history`: a host's stored runs in time order, each figure's
//! track with the change points E-divisive means finds in it, and what the
//! runs' fingerprints say changed across each (`touchstone_analysis::history`).

use std::path::PathBuf;

use touchstone_analysis::change_points::Options;
use touchstone_analysis::history::history as build;
use touchstone_report::history;
use touchstone_results::store::{Open, StoreError};
use touchstone_results::Run;

use crate::args::{HistoryArgs, HistoryFormat};
use crate::error::CliError;
use crate::store::open;

/// This machine's name, as its runs record it (uname's nodename).
fn this_host() -> String {
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: uname fills the struct it is given; nodename is NUL-terminated.
    if unsafe { libc::uname(&mut u) } != 0 {
        return String::new();
    }
    unsafe { std::ffi::CStr::from_ptr(u.nodename.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// Whether a figure's name is selected by `spec`: the name itself, or a
/// prefix of it ending at a `/` (`lat_mem_rd` selects
/// `lat_mem_rd/stride:rand/size:64m`).
fn selects(spec: &str, name: &str) -> bool {
    name == spec
        || name
            .strip_prefix(spec)
            .is_some_and(|rest| rest.starts_with('/') || rest.starts_with(' '))
}

pub fn show(db: Option<PathBuf>, a: &HistoryArgs) -> Result<(), CliError> {
    let store = open(db, Open::ReadOnly)?;
    if let Some(p) = &a.html {
        crate::output::refuse_store(p, store.path())?;
    }
    let host = a.host.clone().unwrap_or_else(this_host);
    let rows = store.list_runs()?;
    let mine: Vec<_> = rows.iter().filter(|r| r.hostname == host).collect();
    if mine.is_empty() {
        let mut hosts: Vec<&str> = rows.iter().map(|r| r.hostname.as_str()).collect();
        hosts.sort();
        hosts.dedup();
        return Err(CliError::Usage(format!(
            "the store holds no run of host `{host}` (its hosts: {})",
            match hosts.is_empty() {
                true => "none".to_string(),
                false => hosts.join(", "),
            }
        )));
    }
    let mut runs: Vec<Run> = Vec::new();
    for row in mine {
        match store.load_run(&row.id) {
            Ok(r) => runs.push(r),
            Err(e @ StoreError::Unreadable { .. }) => {
                crate::output::eprint_line(&format!("warning: skipped: {e}"))
            }
            Err(e) => return Err(e.into()),
        }
    }
    let refs: Vec<&Run> = runs.iter().collect();
    let keep =
        |name: &str| a.benchmarks.is_empty() || a.benchmarks.iter().any(|s| selects(s, name));
    let h = build(&refs, keep, &Options::default());
    if let Some(missing) = a
        .benchmarks
        .iter()
        .find(|s| !h.tracks.iter().any(|t| selects(s, &t.name)))
    {
        return Err(CliError::Usage(format!(
            "no stored figure of host `{host}` is named `{missing}` or starts with `{missing}/`"
        )));
    }
    if let Some(path) = &a.html {
        let generated = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
        let page = touchstone_report::html::history_page::page(&host, &h, &generated);
        crate::output::write_file(path, page.as_bytes(), store.path())?;
        crate::output::eprint_line(&format!("HTML history written to {}", path.display()));
        return Ok(());
    }
    match a.format {
        HistoryFormat::Table => crate::output::print(&history::text(&host, &h)),
        HistoryFormat::Json => crate::output::print_json(&history::json(&host, &h)),
        HistoryFormat::Csv => crate::output::print(&history::csv(&h)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::selects;

    #[test]
    fn a_benchmark_selects_its_figures_by_whole_segments() {
        assert!(selects("lat_mem_rd", "lat_mem_rd/stride:rand/size:64m"));
        assert!(selects("lat_ctx/procs:2", "lat_ctx/procs:2/size:0"));
        assert!(selects("dhrystone", "dhrystone ×2"));
        assert!(!selects("lat_mem", "lat_mem_rd/stride:rand"));
    }
}
