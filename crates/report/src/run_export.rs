//! One stored run as CSV or Markdown (`touchstone show --format csv|markdown`):
//! the run's measurements one per row. CSV keeps the stored unit at full
//! precision (a spreadsheet gets numbers, not display text); Markdown shows
//! the same figures as the terminal does, one table per report group, then
//! the run's load curves.

use touchstone_results::groups::{title, GROUPS};
use touchstone_results::{Measurement, Run, Statistic};

use crate::csv::field;
use crate::model::Model;
use crate::terminal::{figure_cells, io_cells, IO_HEADER};

/// The CSV columns, one row per measurement.
/// I/O figures fill the last three (`Measurement::io_figures`).
const CSV_COLUMNS: [&str; 24] = [
    "run",
    "host",
    "label",
    "name",
    "benchmark",
    "group",
    "params",
    "procs",
    "unit",
    "statistic",
    "value",
    "median",
    "ci_low",
    "ci_high",
    "ci_level",
    "n",
    "min",
    "max",
    "q1",
    "q3",
    "warnings",
    "iops",
    "lat_p50_us",
    "lat_p99_us",
];

fn statistic(s: Statistic) -> &'static str {
    match s {
        Statistic::Median => "median",
        Statistic::Min => "min",
        Statistic::Max => "max",
    }
}

fn num(x: f64) -> String {
    if x.is_finite() {
        x.to_string()
    } else {
        String::new()
    }
}

/// `key=value` pairs joined with `;` (the measurement's parameters).
fn params(m: &Measurement) -> String {
    m.params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(";")
}

fn warning_codes(m: &Measurement) -> Vec<&str> {
    m.warnings.iter().map(|w| w.code.as_str()).collect()
}

/// Every measurement of `run` as one CSV row (RFC 4180), figures in the
/// unit named on the row. Load curves are not rows here: `--format json`
/// carries them whole.
pub fn csv(run: &Run) -> String {
    let mut out = CSV_COLUMNS.join(",") + "\n";
    for m in &run.measurements {
        let s = &m.summary;
        let io = m.io_figures();
        let row = [
            run.id.clone(),
            run.host.hostname.clone(),
            run.label.clone().unwrap_or_default(),
            m.name.clone(),
            m.benchmark.clone(),
            m.group.clone(),
            params(m),
            m.parallel.to_string(),
            m.unit.as_str().to_string(),
            statistic(m.statistic).to_string(),
            num(m.value()),
            num(s.median),
            num(s.ci_low),
            num(s.ci_high),
            num(s.ci_level),
            s.n.to_string(),
            num(s.min),
            num(s.max),
            num(s.q1),
            num(s.q3),
            warning_codes(m).join(";"),
            num(io.and_then(|f| f.iops).unwrap_or(f64::NAN)),
            num(io.and_then(|f| f.p50_us).unwrap_or(f64::NAN)),
            num(io.and_then(|f| f.p99_us).unwrap_or(f64::NAN)),
        ];
        out += &row.iter().map(|f| field(f)).collect::<Vec<_>>().join(",");
        out.push('\n');
    }
    out
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The run as GitHub-flavoured Markdown: a heading with the host and
/// label, one table per report group (the terminal's figures), the
/// warnings with their remedies, then the load curves (the model of the
/// one run: `Model::run`).
pub fn markdown(model: &Model) -> String {
    let run = model.matrix.runs[0];
    let mut out = format!(
        "# touchstone run {}\n\n- host: {}\n- started: {}\n- status: {}\n",
        run.id,
        cell(&run.host.hostname),
        run.started_at.format("%Y-%m-%d %H:%M:%S UTC"),
        run.status.as_str()
    );
    if let Some(l) = &run.label {
        out += &format!("- label: {}\n", cell(l));
    }
    for n in &run.notes {
        out += &format!("- {}\n", cell(n));
    }
    out.push('\n');
    let mut order: Vec<&str> = GROUPS.iter().map(|g| g.name).collect();
    for m in &run.measurements {
        if !order.contains(&m.group.as_str()) {
            order.push(&m.group);
        }
    }
    for g in order {
        let rows: Vec<&Measurement> = run.measurements.iter().filter(|m| m.group == g).collect();
        if rows.is_empty() {
            continue;
        }
        let io = rows.iter().any(|m| m.io_figures().is_some());
        let (io_head, io_rule) = if io {
            (
                format!(" {} |", IO_HEADER.join(" | ")),
                " ---: | ---: | ---: |",
            )
        } else {
            (String::new(), "")
        };
        out += &format!(
            "## {}\n\n| benchmark | procs | figure | 95 % CI | ± | n |{io_head} notes |\n\
             | --- | ---: | ---: | ---: | ---: | ---: |{io_rule} --- |\n",
            title(g)
        );
        for m in rows {
            let [fig, ci, rel] = figure_cells(m);
            let io_cells = if io {
                io_cells(m).map(|c| format!(" {} |", cell(&c))).concat()
            } else {
                String::new()
            };
            out += &format!(
                "| {} | {} | {} | {} | {} | {} |{io_cells} {} |\n",
                cell(&m.name),
                m.parallel,
                cell(&fig),
                cell(&ci),
                cell(&rel),
                m.summary.n,
                cell(&warning_codes(m).join(", "))
            );
        }
        out.push('\n');
    }
    let notes: Vec<String> = run
        .measurements
        .iter()
        .flat_map(|m| {
            m.warnings
                .iter()
                .map(move |w| format!("- {}: {} — {}", cell(&m.name), w.message, w.remedy))
        })
        .collect();
    if !notes.is_empty() {
        out += &format!("## Notes\n\n{}\n\n", notes.join("\n"));
    }
    if !run.curves.is_empty() {
        out += &crate::markdown::curves(model);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use touchstone_results::{Unit, Warning, WarningCode};

    fn measurement(name: &str, group: &str, unit: Unit, samples: Vec<f64>) -> Measurement {
        Measurement {
            params: [("size".to_string(), "64k".to_string())].into(),
            ..Measurement::synthetic(name, group, unit, samples)
        }
    }

    fn run() -> Run {
        let mut r = crate::testdata::run("0123abcd", "node-7", vec![]);
        r.measurements = vec![
            measurement(
                "lat_syscall/null",
                "proc",
                Unit::Ns,
                vec![101.25, 100.5, 99.75, 100.125, 102.0, 100.0, 100.0],
            ),
            measurement(
                "bw_mem/rd/size:64k",
                "mem",
                Unit::MBps,
                vec![
                    20_000.5, 20_100.25, 19_900.0, 20_050.0, 20_000.0, 20_010.0, 20_020.0,
                ],
            ),
        ];
        r.measurements[0]
            .warnings
            .push(Warning::new(WarningCode::CiWide, "wide, too"));
        r
    }

    #[test]
    fn csv_has_one_row_per_measurement_in_stored_units() {
        let r = run();
        let text = csv(&r);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + r.measurements.len());
        assert_eq!(lines[0].split(',').count(), CSV_COLUMNS.len());
        let m = &r.measurements[0];
        assert!(lines[1].contains(&m.name), "{}", lines[1]);
        // Full precision, not display text.
        assert!(
            lines[1].contains(&m.summary.median.to_string()),
            "{}",
            lines[1]
        );
        assert!(lines[1].contains(m.unit.as_str()));
        // A field with a comma is quoted; parameters are key=value.
        assert!(lines[1].contains(",size=64k,"), "{}", lines[1]);
        // The I/O columns stay empty for a figure that is not one.
        assert!(lines[1].ends_with(",ci-wide,,,"), "{}", lines[1]);
    }

    #[test]
    fn markdown_has_a_table_per_group_and_escapes_pipes() {
        let mut r = run();
        r.label = Some("a|b".into());
        let text = markdown(&Model::run(&r));
        assert!(text.starts_with("# touchstone run "));
        assert!(text.contains("- label: a\\|b"), "{text}");
        assert!(text.contains("| benchmark | procs |"));
        for m in &r.measurements {
            assert!(text.contains(&format!("| {} |", m.name)), "{text}");
        }
        assert!(
            text.contains("- lat_syscall/null: wide, too — re-run"),
            "{text}"
        );
    }
}
