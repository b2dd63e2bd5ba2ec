//! Which charts a set of runs calls for, built from the summary matrix:
//! the memory-latency staircase (`lat_mem_rd` by its `size` parameter),
//! bandwidth against size (any MB/s measurement with a `size` parameter),
//! throughput against parallel load (one name at several process counts),
//! and histograms of every measurement's raw samples.

use std::collections::BTreeMap;

use touchstone_analysis::table::{run_title, short_id, Matrix};
use touchstone_results::host::parse_size_suffix;
use touchstone_results::units::Scale;
use touchstone_results::Unit;

use super::svg::{color, histogram, line_chart, Series, XAxis};

/// A chart ready for the page.
pub struct Chart {
    pub title: String,
    pub svg: String,
}

/// A measurement's name with its `size:` segment removed: the series key
/// of a sweep over sizes ("lat_mem_rd/stride:64/size:1m" → "lat_mem_rd/stride:64").
pub fn without_size(name: &str) -> String {
    name.split('/')
        .filter(|seg| !seg.starts_with("size:"))
        .collect::<Vec<_>>()
        .join("/")
}

fn series_name(m: &Matrix, r: usize) -> String {
    format!("{} {}", run_title(m.runs[r]), short_id(&m.runs[r].id))
}

/// Line charts of figure against size, one chart per sweep (name without
/// its size, process count), one line per run. `pick` chooses columns.
fn by_size(m: &Matrix, pick: impl Fn(usize) -> bool, y_name: &str, log_y: bool) -> Vec<Chart> {
    let mut sweeps: BTreeMap<(String, u32), Vec<(usize, f64)>> = BTreeMap::new();
    let mut order: Vec<(String, u32)> = Vec::new();
    for (i, c) in m.columns.iter().enumerate() {
        if !pick(i) {
            continue;
        }
        let Some(size) = c.params.get("size").and_then(|s| parse_size_suffix(s)) else {
            continue;
        };
        let key = (without_size(&c.name), c.parallel);
        if !sweeps.contains_key(&key) {
            order.push(key.clone());
        }
        sweeps.entry(key).or_default().push((i, size as f64));
    }
    order
        .into_iter()
        .filter_map(|key| {
            let cols = &sweeps[&key];
            if cols.len() < 2 {
                return None;
            }
            let unit = m.columns[cols[0].0].unit;
            let values: Vec<f64> = cols
                .iter()
                .flat_map(|&(c, _)| m.column_values(c).into_iter().flatten())
                .collect();
            let scale = Scale::for_column(unit, &values);
            let series: Vec<Series> = (0..m.runs.len())
                .map(|r| {
                    let mut points: Vec<(f64, f64)> = cols
                        .iter()
                        .filter_map(|&(c, size)| m.cell(r, c).map(|x| (size, x.value())))
                        .collect();
                    points.sort_by(|a, b| a.0.total_cmp(&b.0));
                    Series {
                        name: series_name(m, r),
                        color: color(r),
                        points,
                    }
                })
                .collect();
            let title = if key.1 > 1 {
                format!("{} ×{}", key.0, key.1)
            } else {
                key.0.clone()
            };
            let svg = line_chart(
                &title,
                XAxis::LogBytes,
                "size (bytes, log scale)",
                &format!("{y_name} ({})", scale.label),
                scale.divisor,
                log_y,
                &series,
            );
            Some(Chart { title, svg })
        })
        .collect()
}

/// The memory-latency staircase: `lat_mem_rd` latency against array size.
pub fn staircase(m: &Matrix) -> Vec<Chart> {
    by_size(
        m,
        |c| m.columns[c].benchmark == "lat_mem_rd",
        "load latency",
        true,
    )
}

/// Bandwidth against size (bw_mem, STREAM and any other MB/s sweep).
pub fn bandwidth(m: &Matrix) -> Vec<Chart> {
    by_size(
        m,
        |c| m.columns[c].unit == Unit::MBps && m.columns[c].benchmark != "lat_mem_rd",
        "bandwidth",
        false,
    )
}

/// System throughput against the number of processes: for latencies,
/// processes × 10^9 / latency operations per second; bandwidths and rates
/// are already summed over processes.
pub fn throughput(m: &Matrix) -> Vec<Chart> {
    let mut names: Vec<&str> = Vec::new();
    for c in &m.columns {
        if !names.contains(&c.name.as_str()) {
            names.push(&c.name);
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let cols: Vec<usize> = (0..m.columns.len())
                .filter(|&c| m.columns[c].name == name)
                .collect();
            let unit = m.columns[cols[0]].unit;
            if cols.len() < 2 || !matches!(unit, Unit::Ns | Unit::MBps | Unit::OpsPerSec) {
                return None;
            }
            let figure = |c: usize, v: f64| match unit {
                Unit::Ns if v > 0.0 => Some(m.columns[c].parallel as f64 * 1e9 / v),
                Unit::Ns => None,
                _ => Some(v),
            };
            let series: Vec<Series> = (0..m.runs.len())
                .map(|r| Series {
                    name: series_name(m, r),
                    color: color(r),
                    points: cols
                        .iter()
                        .filter_map(|&c| {
                            let v = figure(c, m.cell(r, c)?.value())?;
                            Some((m.columns[c].parallel as f64, v))
                        })
                        .collect(),
                })
                .collect();
            let yunit = if unit == Unit::MBps {
                Unit::MBps
            } else {
                Unit::OpsPerSec
            };
            let ys: Vec<f64> = series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1))
                .collect();
            let scale = Scale::for_column(yunit, &ys);
            let svg = line_chart(
                name,
                XAxis::Linear,
                "processes",
                &format!("throughput ({})", scale.label),
                scale.divisor,
                false,
                &series,
            );
            Some(Chart {
                title: name.to_string(),
                svg,
            })
        })
        .collect()
}

/// One histogram per column of a group: every run's raw samples overlaid.
pub fn histograms(m: &Matrix, group: &str) -> Vec<Chart> {
    m.group_columns(group)
        .into_iter()
        .filter_map(|c| {
            let col = &m.columns[c];
            let series: Vec<(String, &'static str, &[f64])> = (0..m.runs.len())
                .filter_map(|r| {
                    let x = m.cell(r, c)?;
                    Some((series_name(m, r), color(r), x.samples.as_slice()))
                })
                .filter(|s| !s.2.is_empty())
                .collect();
            if series.is_empty() {
                return None;
            }
            let values: Vec<f64> = m.column_values(c).into_iter().flatten().collect();
            let scale = Scale::for_column(col.unit, &values);
            let title = col.label();
            let svg = histogram(&title, scale.label, scale.divisor, &series);
            Some(Chart { title, svg })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_segment_is_dropped() {
        assert_eq!(
            without_size("lat_mem_rd/stride:64/size:1m"),
            "lat_mem_rd/stride:64"
        );
        assert_eq!(without_size("bw_mem/rd/size:4k"), "bw_mem/rd");
    }

    /// The y axis's label, rotated on the chart's left.
    fn y_axis_label(svg: &str) -> &str {
        let at = svg.find("rotate(-90)").unwrap();
        let text = &svg[at..];
        &text[text.find('>').unwrap() + 1..text.find("</text>").unwrap()]
    }

    #[test]
    fn the_staircase_says_log_scale_only_on_a_log_axis() {
        use crate::testdata::{measurement, run_with};
        let staircase = |ns: [f64; 3]| {
            let ms = ["4k", "64k", "8m"]
                .iter()
                .zip(ns)
                .map(|(size, v)| {
                    let name = format!("lat_mem_rd/stride:64/size:{size}");
                    measurement(&name, "memory", Unit::Ns, 1, v)
                })
                .collect();
            let runs = [run_with("aaaa0001", "alpha", ms)];
            let m = Matrix::build(&runs).unwrap();
            let charts = staircase(&m);
            assert_eq!(charts.len(), 1);
            y_axis_label(&charts[0].svg).to_string()
        };
        // 1 to 90 ns: a log axis, and the label says so.
        assert_eq!(staircase([1.0, 4.0, 90.0]), "load latency (ns, log scale)");
        // 1.0 to 1.3 ns: a linear axis, which must not be called log.
        assert_eq!(staircase([1.0, 1.1, 1.3]), "load latency (ns)");
    }
}
