//! The reading order of lmbench's reports for many runs: one table per
//! benchmark family, the swept parameter (size, stride, process count …)
//! down the rows, runs side by side in the columns. This module only
//! decides the rows: which parameter a family sweeps, which "case" each
//! measurement belongs to, and their order. `sheet` fills the cells.

use std::collections::BTreeMap;

use touchstone_analysis::table::Matrix;
use touchstone_results::host::parse_size_suffix;

/// One benchmark family of a report group, its rows in reading order.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    pub group: String,
    pub name: String,
    /// The swept parameter's heading ("size", "procs", "processes" for
    /// `-P`); None when no parameter of the family takes several values.
    pub sweep: Option<String>,
    pub rows: Vec<FamilyRow>,
}

/// One measurement column of the matrix as a row of its family's table.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyRow {
    /// The measurement's name without its family and swept segment, with
    /// "×N" when N processes ran it and the process count is not the
    /// sweep ("stride:64", "rd ×2"); "" for a family's only case.
    pub case: String,
    /// The swept parameter's value ("64m", "8"); "" when the row's
    /// measurement does not carry it.
    pub value: String,
    /// Index into the matrix's columns.
    pub column: usize,
}

/// The heading of a sweep over process counts (`-P 1,2,4`).
pub const PROCESSES: &str = "processes";

/// A parameter value as a number for ordering rows: sizes with k/m/g
/// (powers of 1024), durations with ns/us/ms/s, plain numbers.
pub fn numeric(value: &str) -> Option<f64> {
    for (suffix, ns) in [
        ("ns", 1.0),
        ("us", 1e3),
        ("µs", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
    ] {
        if let Some(n) = value.strip_suffix(suffix) {
            if let Ok(x) = n.parse::<f64>() {
                return Some(x * ns);
            }
        }
    }
    parse_size_suffix(value)
        .map(|x| x as f64)
        .or_else(|| value.parse::<f64>().ok().filter(|x| x.is_finite()))
}

/// The `key:value` segments of a measurement name after its family.
fn keyed(name: &str) -> impl Iterator<Item = (&str, &str)> {
    name.split('/').skip(1).filter_map(|s| s.split_once(':'))
}

/// The family's swept parameter: of the `key:value` parameters whose
/// values are all numbers, the one taking the most distinct values (at
/// least two); ties go to the one met first. None when nothing varies.
fn swept_key(names: &[&str]) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut values: BTreeMap<String, (Vec<String>, bool)> = BTreeMap::new();
    for name in names {
        for (k, v) in keyed(name) {
            if !seen.iter().any(|s| s == k) {
                seen.push(k.to_string());
            }
            let e = values.entry(k.to_string()).or_default();
            if !e.0.iter().any(|x| x == v) {
                e.0.push(v.to_string());
            }
            if numeric(v).is_none() {
                e.1 = true; // a non-numeric value: not a sweep
            }
        }
    }
    let mut best: Option<(usize, &String)> = None;
    for k in &seen {
        let (vals, non_numeric) = &values[k];
        if *non_numeric || vals.len() < 2 {
            continue;
        }
        if best.is_none_or(|(n, _)| vals.len() > n) {
            best = Some((vals.len(), k));
        }
    }
    best.map(|(_, k)| k.clone())
}

/// The tables of the matrix, group by group: first one table of the
/// group's families that sweep nothing (as lmbench prints its processor or
/// communication latencies together; `name` is "" and each row's case is
/// the measurement's name), then one table per family that sweeps, in
/// order of first appearance. Rows go by case (first appearance), then by
/// the swept value ascending.
pub fn families(m: &Matrix) -> Vec<Family> {
    let mut out: Vec<Family> = Vec::new();
    for f in each_family(m) {
        if f.sweep.is_some() {
            out.push(f);
            continue;
        }
        let rows = f.rows.iter().map(|r| FamilyRow {
            case: m.columns[r.column].label(),
            value: String::new(),
            column: r.column,
        });
        let merged = out
            .iter()
            .position(|o| o.group == f.group && o.name.is_empty());
        match merged {
            Some(i) => out[i].rows.extend(rows),
            None => {
                // Before the group's swept families.
                let at = out
                    .iter()
                    .position(|o| o.group == f.group)
                    .unwrap_or(out.len());
                out.insert(
                    at,
                    Family {
                        group: f.group.clone(),
                        name: String::new(),
                        sweep: None,
                        rows: rows.collect(),
                    },
                );
            }
        }
    }
    out
}

/// Every family on its own, in group order.
fn each_family(m: &Matrix) -> Vec<Family> {
    let mut out = Vec::new();
    for g in m.groups() {
        let cols = m.group_columns(&g);
        let mut names: Vec<&str> = Vec::new();
        for &c in &cols {
            let b = m.columns[c].benchmark.as_str();
            if !names.contains(&b) {
                names.push(b);
            }
        }
        for fam in names {
            let fcols: Vec<usize> = cols
                .iter()
                .copied()
                .filter(|&c| m.columns[c].benchmark == fam)
                .collect();
            out.push(family(m, &g, fam, &fcols));
        }
    }
    out
}

fn family(m: &Matrix, group: &str, name: &str, cols: &[usize]) -> Family {
    let names: Vec<&str> = cols.iter().map(|&c| m.columns[c].name.as_str()).collect();
    let key = swept_key(&names);
    let mut parallels: Vec<u32> = cols.iter().map(|&c| m.columns[c].parallel).collect();
    parallels.sort_unstable();
    parallels.dedup();
    // With no parameter swept, several process counts are the sweep.
    let by_processes = key.is_none() && parallels.len() > 1;
    let mut rows: Vec<(usize, f64, FamilyRow)> = Vec::new();
    let mut cases: Vec<String> = Vec::new();
    for &c in cols {
        let col = &m.columns[c];
        let mut value = String::new();
        let mut rest: Vec<&str> = Vec::new();
        for seg in col.name.split('/').skip(1) {
            match (seg.split_once(':'), &key) {
                (Some((k, v)), Some(key)) if k == key => value = v.to_string(),
                _ => rest.push(seg),
            }
        }
        let mut case = rest.join("/");
        if by_processes {
            value = col.parallel.to_string();
        } else if col.parallel > 1 {
            case = if case.is_empty() {
                format!("×{}", col.parallel)
            } else {
                format!("{case} ×{}", col.parallel)
            };
        }
        let rank = match cases.iter().position(|x| *x == case) {
            Some(i) => i,
            None => {
                cases.push(case.clone());
                cases.len() - 1
            }
        };
        // Rows without the swept value first within their case.
        let order = if value.is_empty() {
            f64::NEG_INFINITY
        } else {
            numeric(&value).unwrap_or(f64::INFINITY)
        };
        rows.push((
            rank,
            order,
            FamilyRow {
                case,
                value,
                column: c,
            },
        ));
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let sweep = if by_processes {
        Some(PROCESSES.to_string())
    } else {
        key
    };
    Family {
        group: group.to_string(),
        name: name.to_string(),
        sweep,
        rows: rows.into_iter().map(|r| r.2).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{measurement, run_with};
    use touchstone_results::{Measurement, Unit};

    /// The families of one run's measurements.
    fn one_runs(ms: Vec<Measurement>) -> Vec<Family> {
        families(&Matrix::build(&[run_with("aaaa0001", "alpha", ms)]).unwrap())
    }

    /// Each row's case and swept value.
    fn case_and_value(f: &Family) -> Vec<(&str, &str)> {
        f.rows
            .iter()
            .map(|r| (r.case.as_str(), r.value.as_str()))
            .collect()
    }

    #[test]
    fn a_memory_sweep_reads_down_the_rows_by_size_within_each_stride() {
        let names = [
            "lat_mem_rd/stride:64/size:8m",
            "lat_mem_rd/stride:64/size:4k",
            "lat_mem_rd/stride:rand_page/size:4k",
            "lat_mem_rd/stride:64/size:512k",
            "lat_mem_rd/level:L1",
            "lat_syscall/null",
            "lat_syscall/read",
        ];
        let ms = names
            .iter()
            .map(|n| {
                let fam = n.split('/').next().unwrap();
                let g = if fam == "lat_syscall" {
                    "proc"
                } else {
                    "mem_lat"
                };
                measurement(n, g, Unit::Ns, 1, 1.0)
            })
            .collect();
        let fams = one_runs(ms);
        assert_eq!(fams.len(), 2);
        // Families that sweep nothing share their group's first table.
        let sys = &fams[0];
        assert_eq!((sys.name.as_str(), sys.sweep.as_deref()), ("", None));
        let cases: Vec<&str> = sys.rows.iter().map(|r| r.case.as_str()).collect();
        assert_eq!(cases, ["lat_syscall/null", "lat_syscall/read"]);
        let mem = &fams[1];
        // stride has a non-numeric value: size is the sweep, not stride.
        assert_eq!(mem.sweep.as_deref(), Some("size"));
        let rows = case_and_value(mem);
        assert_eq!(
            rows,
            [
                ("stride:64", "4k"),
                ("stride:64", "512k"),
                ("stride:64", "8m"),
                ("stride:rand_page", "4k"),
                ("level:L1", ""),
            ]
        );
    }

    #[test]
    fn process_counts_are_the_sweep_only_when_no_parameter_varies() {
        let ms = vec![
            measurement("lat_syscall/null", "proc", Unit::Ns, 1, 1.0),
            measurement("lat_syscall/null", "proc", Unit::Ns, 2, 1.0),
            measurement("bw_mem/rd/size:4k", "mem_bw", Unit::MBps, 1, 1.0),
            measurement("bw_mem/rd/size:4k", "mem_bw", Unit::MBps, 2, 1.0),
            measurement("bw_mem/rd/size:1m", "mem_bw", Unit::MBps, 2, 1.0),
        ];
        let fams = one_runs(ms);
        assert_eq!(fams[0].sweep.as_deref(), Some(PROCESSES));
        let rows = case_and_value(&fams[0]);
        assert_eq!(rows, [("null", "1"), ("null", "2")]);
        assert_eq!(fams[1].sweep.as_deref(), Some("size"));
        let rows = case_and_value(&fams[1]);
        assert_eq!(rows, [("rd", "4k"), ("rd ×2", "4k"), ("rd ×2", "1m")]);
        // Two families that sweep nothing: one table.
        let ms = vec![
            measurement("lat_pipe", "comm_lat", Unit::Ns, 1, 1.0),
            measurement("lat_tcp/size:1", "comm_lat", Unit::Ns, 1, 1.0),
            measurement("lat_tcp/size:1", "comm_lat", Unit::Ns, 2, 1.0),
        ];
        let fams = one_runs(ms);
        assert_eq!(fams.len(), 2, "{fams:?}");
        let cases: Vec<&str> = fams[0].rows.iter().map(|r| r.case.as_str()).collect();
        assert_eq!(cases, ["lat_pipe"]);
        assert_eq!(fams[1].sweep.as_deref(), Some(PROCESSES));
        assert_eq!(numeric("1ms"), Some(1e6));
        assert_eq!(numeric("16k"), Some(16384.0));
        assert_eq!(numeric("rand_page"), None);
    }
}
