//! `touchstone list`: generated from the catalogue table.

use touchstone_catalogue::family::LOAD;
use touchstone_catalogue::{Parallel, FAMILIES};
use touchstone_results::groups::title;

use crate::error::CliError;

#[derive(serde::Serialize)]
struct ParamInfo {
    name: &'static str,
    help: &'static str,
    range: String,
    default: Vec<&'static str>,
    quick: Vec<&'static str>,
    positional: bool,
}

#[derive(serde::Serialize)]
struct FamilyInfo {
    name: &'static str,
    group: &'static str,
    group_title: String,
    summary: &'static str,
    params: Vec<ParamInfo>,
    parallel: Option<&'static str>,
    default_suite: bool,
    unsupported: Option<String>,
    /// A workload (measured as a load curve): what one operation is.
    #[serde(skip_serializing_if = "Option::is_none")]
    workload: Option<&'static str>,
    /// The run options it honours (`--dir`), as flags.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    options: Vec<String>,
}

pub fn list(json: bool) -> Result<(), CliError> {
    let infos = family_infos();
    if json {
        crate::output::print_json(&format!(
            "{}\n",
            serde_json::to_string_pretty(&infos).expect("serialisable")
        ));
        return Ok(());
    }
    crate::output::print(&listing(
        &infos,
        touchstone_report::terminal::listing_width(),
    ));
    Ok(())
}

/// Every family of the catalogue, as `list` shows it.
fn family_infos() -> Vec<FamilyInfo> {
    FAMILIES
        .iter()
        .map(|f| FamilyInfo {
            name: f.name,
            group: f.group,
            group_title: title(f.group).to_string(),
            summary: f.summary,
            params: f
                .params
                .iter()
                .chain(f.is_workload().then_some(&LOAD))
                .map(|p| ParamInfo {
                    name: p.name,
                    help: p.help,
                    // The ladder's bounds are the workload's and the machine's,
                    // checked when the sweep is planned.
                    range: if p.name == LOAD.name {
                        "1,2,4,…".to_string()
                    } else {
                        p.range_text()
                    },
                    default: p.default.to_vec(),
                    quick: p.defaults(true).to_vec(),
                    positional: p.positional,
                })
                .collect(),
            parallel: match f.parallel {
                Parallel::Allowed => None,
                Parallel::No(r) => Some(r),
            },
            default_suite: f.default_suite,
            unsupported: (f.unsupported)(),
            workload: f.operation(),
            options: f.options.iter().map(|o| o.flag()).collect(),
        })
        .collect()
}

/// A parameter as the listing shows it: `name = a | b | c [defaults]`, with
/// spaces round the separators so a narrow column wraps between values,
/// never inside a name; "[all]" when every choice is a default.
fn param_text(p: &ParamInfo) -> String {
    let range = p.range.replace('|', " | ");
    let all_choices = p.range.contains('|') && p.default.len() == p.range.split('|').count();
    let defaults = match (p.name, p.default.is_empty()) {
        ("load", true) => "doubling to 4 × CPUs".to_string(),
        _ if all_choices => "all".to_string(),
        _ => p.default.join(", "),
    };
    format!("{} = {range} [{defaults}]", p.name)
}

/// What sets a family apart, or nothing: most run in the default suite
/// and take --parallel, so only the exceptions are noted.
fn notes(f: &FamilyInfo) -> String {
    let mut notes = Vec::new();
    if let Some(op) = f.workload {
        notes.push(format!("workload: {op}s/s against load"));
    }
    if !f.default_suite {
        notes.push("not in the default suite".to_string());
    }
    if f.parallel.is_some() {
        notes.push("no --parallel".to_string());
    }
    if !f.options.is_empty() {
        notes.push(format!("takes {}", f.options.join(", ")));
    }
    if let Some(u) = &f.unsupported {
        notes.push(format!("unsupported here: {u}"));
    }
    notes.join("; ")
}

/// The catalogue as one table per report group, fitted to `width` columns.
fn listing(infos: &[FamilyInfo], width: u16) -> String {
    let mut out = String::from(
        "Every family runs in the default suite and takes --parallel unless noted (`run all`: every one).\n",
    );
    let mut groups: Vec<&str> = Vec::new();
    for f in infos {
        if !groups.contains(&f.group) {
            groups.push(f.group);
        }
    }
    for g in groups {
        let rows: Vec<Vec<String>> = infos
            .iter()
            .filter(|f| f.group == g)
            .map(|f| {
                vec![
                    f.name.to_string(),
                    f.summary.to_string(),
                    f.params
                        .iter()
                        .map(param_text)
                        .collect::<Vec<_>>()
                        .join("\n"),
                    notes(f),
                ]
            })
            .collect();
        out.push_str(&format!("\n{} ({g})\n", title(g)));
        out.push_str(&touchstone_report::terminal::fitted_table(
            &[
                "benchmark",
                "what it measures",
                "parameters [defaults]",
                "notes",
            ],
            &rows,
            width,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn infos() -> Vec<FamilyInfo> {
        family_infos()
    }

    /// The issue: ~360 characters wide without a terminal, parameter names
    /// wrapped mid-word, "default" in the notes of nearly every row.
    #[test]
    fn the_listing_fits_100_columns_and_never_splits_a_word() {
        let infos = infos();
        let text = listing(&infos, 100);
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= 100, "{widest} columns:\n{text}");
        // Every parameter name and value appears whole on some line.
        for f in &infos {
            for p in &f.params {
                for word in param_text(p).split_whitespace() {
                    assert!(
                        text.lines()
                            .any(|l| l.split_whitespace().any(|w| w == word)),
                        "'{word}' of {} split:\n{text}",
                        f.name
                    );
                }
            }
        }
        let noted: Vec<&str> = infos
            .iter()
            .filter(|f| notes(f).contains("default"))
            .map(|f| f.name)
            .collect();
        // Only the exceptions, outside the default suite: the system
        // workloads, the I/O families, which write files, and the NUMA
        // matrix, which has nothing to measure on one node.
        let exceptions: Vec<&str> = infos
            .iter()
            .filter(|f| {
                f.group == "workload" || f.name.starts_with("io") || f.name == "numa_matrix"
            })
            .map(|f| f.name)
            .collect();
        assert!(exceptions.contains(&"tcp_rr") && exceptions.contains(&"io"));
        assert_eq!(noted, exceptions, "only the exceptions are noted");
    }
}
