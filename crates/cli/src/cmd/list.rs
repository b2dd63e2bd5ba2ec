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
}

pub fn list(json: bool) -> Result<(), CliError> {
    let infos: Vec<FamilyInfo> = FAMILIES
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
        })
        .collect();
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&infos).expect("serialisable")
        );
        return Ok(());
    }
    let rows: Vec<Vec<String>> = infos
        .iter()
        .map(|f| {
            let params: Vec<String> = f
                .params
                .iter()
                .map(|p| match (p.name, p.default.is_empty()) {
                    ("load", true) => format!("{}={} [doubling to 4 × CPUs]", p.name, p.range),
                    _ => format!("{}={} [{}]", p.name, p.range, p.default.join(",")),
                })
                .collect();
            let mut notes = Vec::new();
            if let Some(op) = f.workload {
                notes.push(format!("workload: {op}s/s against load"));
            }
            if f.default_suite {
                notes.push("default".to_string());
            }
            if f.parallel.is_some() {
                notes.push("no --parallel".to_string());
            }
            if let Some(u) = &f.unsupported {
                notes.push(format!("unsupported: {u}"));
            }
            vec![
                f.name.to_string(),
                f.group.to_string(),
                f.summary.to_string(),
                params.join("\n"),
                notes.join(", "),
            ]
        })
        .collect();
    print!(
        "{}",
        touchstone_report::terminal::text_table(
            &[
                "benchmark",
                "group",
                "what it measures",
                "parameters [defaults]",
                "notes"
            ],
            &rows
        )
    );
    Ok(())
}
