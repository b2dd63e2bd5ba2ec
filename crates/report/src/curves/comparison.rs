//! Load curves compared: for each curve the runs share, a sheet per CPU
//! count with each run's throughput at every load against the base's
//! (ratio with its interval, verdict), and the peaks and knees side by side.

use super::*;

fn verdict_cell(v: Verdict) -> String {
    v.mark().to_string()
}

fn ratio_cell(r: Option<&Ratio>) -> String {
    r.map_or("-".into(), ratio_text)
}

/// Every curve title of `base` and the other runs, in order of appearance.
fn titles(per_other: &[Vec<CurveComparison>]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for c in per_other.iter().flatten() {
        if !out.iter().any(|t| t.0 == c.title()) {
            out.push((c.title(), c.operation.clone()));
        }
    }
    out
}

/// A peak in words: "105.0 at 8" (its mean throughput and load; the
/// ratio beside it carries the interval), or why there is none.
fn peak_cell(scale: &Scale, side: Option<&PeakSide>) -> String {
    match side.map(|s| &s.peak) {
        None => "-".into(),
        Some(Ok((load, t))) => format!("{} at {load}", scale.format(t.mean)),
        Some(Err(e)) => format!("none ({e})"),
    }
}

fn knee_cell(side: Option<&PeakSide>) -> String {
    match side.map(|s| &s.knee) {
        None => "-".into(),
        Some(Ok(load)) => load.to_string(),
        Some(Err(reason)) => format!("not detected ({reason})"),
    }
}

fn point_at(c: Option<&CurveComparison>, cpus: u32, load: u32) -> Option<&PointComparison> {
    c?.points.iter().find(|p| p.cpus == cpus && p.load == load)
}

fn peak_at(c: Option<&CurveComparison>, cpus: u32) -> Option<&PeakComparison> {
    c?.peaks.iter().find(|p| p.cpus == cpus)
}

/// The cells of a run that lacks the curve.
fn missing() -> [String; 4] {
    ["-".into(), "-".into(), "missing".into(), "-".into()]
}

/// A comparison sheet of the group "curves": its header is `keys` (the
/// base's columns), then for each other run its figure (its heading and
/// `figure`), the ratio, the verdict and `last`, each with whether it
/// holds numbers.
fn compared_sheet(
    title: String,
    keys: [(String, bool); 3],
    others: &[&Run],
    figure: &str,
    last: (&str, bool),
    rows: Vec<Vec<String>>,
) -> Sheet {
    let (mut header, mut numeric): (Vec<String>, Vec<bool>) = keys.into_iter().unzip();
    for o in others {
        header.extend([
            format!("{} {figure}", run_heading(o)),
            "ratio [CI]".into(),
            String::new(),
            last.0.into(),
        ]);
        numeric.extend([true, true, false, last.1]);
    }
    Sheet {
        title,
        group: "curves".into(),
        header,
        numeric,
        key_columns: 3,
        rows,
    }
}

/// The load curves of `base` and `others` compared: per curve, one sheet
/// point by point (throughput with its ratio, interval and verdict, p99
/// ratio) and one of peaks and knees by CPU count. Empty when no run has a
/// curve.
pub fn comparison_sheets(m: &Matrix, compared: &Compared) -> Vec<Sheet> {
    let base = m.runs[compared.comparison.base];
    let others: Vec<&Run> = compared
        .comparison
        .others
        .iter()
        .map(|&o| m.runs[o])
        .collect();
    let per_other = &compared.curves;
    let mut sheets = Vec::new();
    for (title, operation) in titles(per_other) {
        let comps: Vec<Option<&CurveComparison>> = per_other
            .iter()
            .map(|v| v.iter().find(|c| c.title() == title))
            .collect();
        let present = || comps.iter().flatten();
        let means: Vec<f64> = present()
            .flat_map(|c| &c.points)
            .flat_map(|p| [p.base, p.other])
            .flatten()
            .map(|s| s.throughput.mean)
            .collect();
        let scale = Scale::for_column(Unit::OpsPerSec, &means);
        let unit = rate_label(&operation, &scale);
        let mut keys: Vec<(u32, u32)> = present()
            .flat_map(|c| c.points.iter().map(|p| (p.cpus, p.load)))
            .collect();
        keys.sort_unstable();
        keys.dedup();

        // Point by point.
        let side_text = |s: Option<&PointSide>| {
            s.map_or("-".to_string(), |s| {
                let mut text = scale.format(s.throughput.mean);
                if !s.converged {
                    text.push_str(WARNING_MARK);
                }
                text
            })
        };
        let rows = keys
            .iter()
            .map(|&(cpus, load)| {
                let base_side = comps
                    .iter()
                    .filter_map(|c| point_at(*c, cpus, load))
                    .find_map(|p| p.base);
                let mut row = vec![
                    cpus.to_string(),
                    load.to_string(),
                    side_text(base_side.as_ref()),
                ];
                row.extend(comps.iter().flat_map(|c| {
                    point_at(*c, cpus, load).map_or_else(missing, |p| {
                        [
                            side_text(p.other.as_ref()),
                            ratio_cell(p.ratio.as_ref()),
                            verdict_cell(p.verdict),
                            p.p99_ratio.map_or("-".into(), format_sig),
                        ]
                    })
                }));
                row
            })
            .collect();
        sheets.push(compared_sheet(
            format!("Load curve {title}: throughput point by point"),
            [
                ("CPUs".into(), true),
                ("load".into(), true),
                (format!("base: {} ({unit})", run_heading(base)), true),
            ],
            &others,
            &format!("({unit})"),
            ("p99 ratio", true),
            rows,
        ));

        // Peaks and knees.
        let mut cpus: Vec<u32> = keys.iter().map(|k| k.0).collect();
        cpus.dedup();
        let rows = cpus
            .iter()
            .map(|&k| {
                let base_side = comps
                    .iter()
                    .filter_map(|c| peak_at(*c, k))
                    .find_map(|p| p.base.as_ref());
                let mut row = vec![
                    k.to_string(),
                    peak_cell(&scale, base_side),
                    knee_cell(base_side),
                ];
                row.extend(comps.iter().flat_map(|c| {
                    peak_at(*c, k).map_or_else(missing, |p| {
                        [
                            peak_cell(&scale, p.other.as_ref()),
                            ratio_cell(p.ratio.as_ref()),
                            verdict_cell(p.verdict),
                            knee_cell(p.other.as_ref()),
                        ]
                    })
                }));
                row
            })
            .collect();
        sheets.push(compared_sheet(
            format!("Load curve {title}: peaks and knees"),
            [
                ("CPUs".into(), true),
                (format!("base: {} peak ({unit})", run_heading(base)), true),
                ("knee (load)".into(), false),
            ],
            &others,
            &format!("peak ({unit})"),
            ("knee (load)", false),
            rows,
        ));
    }
    sheets
}
