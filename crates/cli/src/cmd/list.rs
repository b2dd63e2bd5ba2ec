//! `touchstone list`: generated from the catalogue table.

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
                .map(|p| ParamInfo {
                    name: p.name,
                    help: p.help,
                    range: p.range_text(),
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
                .map(|p| format!("{}={} [{}]", p.name, p.range, p.default.join(",")))
                .collect();
            let mut notes = Vec::new();
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
