//! From what the user typed to concrete cases, checked before anything runs.
//!
//! A spec is a family name, optionally followed by slash-separated values:
//! `lat_syscall/null,read` (the positional parameter), `lat_ctx/procs:2,8/size:16k`
//! (named parameters, comma lists). A group name (`proc`), `default` or `all`
//! selects whole families with their default values. Unnamed parameters take
//! their defaults; the cases are the cartesian product.
//!
//! A workload's spec may also give its load ladder, `tcp_rr/load:1,2,4`:
//! the loads of one case are the points of its curve, not cases of their
//! own, so they are kept with the case (`Selected::loads`) and its name
//! does not include them.

use crate::family::{Family, Parallel, RunContext, LOAD};
use crate::params::{suggest, Point, Value};
use crate::FAMILIES;
use touchstone_results::groups::GROUPS;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SelectError {
    #[error("unknown benchmark or group '{0}'{1}; see `touchstone list`")]
    Unknown(String, String),
    #[error("{family}: unknown parameter '{param}'{hint}; it takes: {known}")]
    UnknownParam {
        family: String,
        param: String,
        hint: String,
        known: String,
    },
    #[error("{family}: {message}")]
    BadValue { family: String, message: String },
    #[error("{family}: '{segment}' names no parameter (write key:value; this family has no positional parameter)")]
    NoPositional { family: String, segment: String },
    #[error("{family} cannot run with --parallel: {reason}")]
    NotParallel { family: String, reason: String },
    #[error("{family} is not supported here: {reason}")]
    Unsupported { family: String, reason: String },
}

/// One case to measure.
#[derive(Debug, Clone)]
pub struct Selected {
    pub family: &'static Family,
    pub point: Point,
    /// The stable measurement name, e.g. "lat_ctx/procs:8/size:16k".
    pub name: String,
    /// A workload's load ladder as the spec gave it (`load:1,2,4`); None:
    /// the default ladder (and always for a micro-benchmark).
    pub loads: Option<Vec<u32>>,
}

impl Selected {
    /// The parameters that apply at this point, as (name, text): what the
    /// case's name shows and its result stores.
    pub fn params(&self) -> impl Iterator<Item = (&'static str, &str)> {
        applying(self.family, &self.point)
    }
}

/// The point's parameters less those the family says do not apply there
/// and an address left at `local` (a measurement on this machine is named
/// as it always was).
fn applying<'a>(
    family: &'a Family,
    point: &'a Point,
) -> impl Iterator<Item = (&'static str, &'a str)> {
    let inert = (family.inert)(point);
    family
        .params
        .iter()
        .zip(&point.0)
        .filter(move |(p, (k, v))| !inert.contains(k) && !unnamed(p, &v.text))
        .map(|(_, (k, v))| (*k, v.text.as_str()))
}

impl std::fmt::Debug for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// The cases to run and the families left out (with the reason) because a
/// group or suite named them implicitly but they cannot run as asked.
#[derive(Debug, Default)]
pub struct Selection {
    pub cases: Vec<Selected>,
    pub skipped: Vec<(String, String)>,
}

impl Selection {
    /// The selected families' lines about the run (`Family::run_note`),
    /// each line once.
    pub fn run_notes(&self, ctx: &RunContext) -> Vec<String> {
        let mut notes: Vec<String> = Vec::new();
        for c in &self.cases {
            if let Some(n) = c.family.run_note(ctx) {
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
        }
        notes
    }
}

/// The `check` suite, `touchstone check`'s default: a few seconds of the
/// micro-benchmarks that tell most about a node's health — entering the
/// kernel, a context switch on one CPU and one that wakes another CPU
/// (inter-processor interrupts, idle-state exits: on the 2-CPU development
/// VM 28–40 µs against 1.6 µs on one CPU, so confining a node's CPUs shows),
/// DRAM latency (random lines, so the TLB and page size count) and
/// bandwidth, a page fault, and integer CPU speed (frequency, boost).
pub const CHECK_SUITE: &[&str] = &[
    "lat_syscall/null",
    "lat_ctx/procs:2/size:0/cpus:same",
    "lat_ctx/procs:2/size:0/cpus:spread",
    "lat_mem_rd/stride:rand/size:64m",
    "bw_mem/rd/size:256m",
    "lat_pagefault/size:8m",
    "dhrystone",
];

/// Resolve specs (empty: the default suite) into cases, for the run `ctx`
/// (quick mode's values; a run option may set a parameter's default).
/// `check` names `CHECK_SUITE`.
pub fn select(specs: &[String], ctx: &RunContext, parallel: u32) -> Result<Selection, SelectError> {
    let mut out = Selection::default();
    let default = ["default".to_string()];
    let specs = if specs.is_empty() {
        &default[..]
    } else {
        specs
    };
    let specs: Vec<String> = specs
        .iter()
        .flat_map(|s| match s.as_str() {
            "check" => CHECK_SUITE.iter().map(|c| c.to_string()).collect(),
            _ => vec![s.clone()],
        })
        .collect();
    for spec in &specs {
        let (head, rest) = spec.split_once('/').unwrap_or((spec.as_str(), ""));
        let implicit: Vec<&'static Family> = match head {
            "all" => FAMILIES.to_vec(),
            "default" => FAMILIES
                .iter()
                .copied()
                .filter(|f| f.default_suite)
                .collect(),
            g if GROUPS.iter().any(|x| x.name == g) => {
                FAMILIES.iter().copied().filter(|f| f.group == g).collect()
            }
            _ => Vec::new(),
        };
        if !implicit.is_empty()
            || GROUPS.iter().any(|g| g.name == head)
            || head == "all"
            || head == "default"
        {
            if !rest.is_empty() {
                return Err(SelectError::BadValue {
                    family: head.into(),
                    message: "parameters go with a benchmark name, not a group".into(),
                });
            }
            for f in implicit {
                if let Some(reason) = refusal(f, parallel) {
                    out.skipped.push((f.name.to_string(), reason));
                    continue;
                }
                push_unique(&mut out.cases, expand(f, "", ctx)?)?;
            }
            continue;
        }
        let family = crate::family(head).ok_or_else(|| {
            let names = FAMILIES
                .iter()
                .map(|f| f.name)
                .chain(GROUPS.iter().map(|g| g.name));
            let hint = suggest(head, names)
                .map(|s| format!(" (did you mean '{s}'?)"))
                .unwrap_or_default();
            SelectError::Unknown(head.to_string(), hint)
        })?;
        if let Some(reason) = (family.unsupported)() {
            return Err(SelectError::Unsupported {
                family: family.name.into(),
                reason,
            });
        }
        if let (Parallel::No(reason), true) = (family.parallel, parallel > 1) {
            return Err(SelectError::NotParallel {
                family: family.name.into(),
                reason: reason.into(),
            });
        }
        push_unique(&mut out.cases, expand(family, rest, ctx)?)?;
    }
    Ok(out)
}

fn refusal(f: &Family, parallel: u32) -> Option<String> {
    if let Some(r) = (f.unsupported)() {
        return Some(format!("not supported here: {r}"));
    }
    match f.parallel {
        Parallel::No(r) if parallel > 1 => Some(format!("not run with --parallel: {r}")),
        _ => None,
    }
}

/// Add the cases not already there. A workload case named again with
/// more loads gets them added to its ladder.
fn push_unique(into: &mut Vec<Selected>, cases: Vec<Selected>) -> Result<(), SelectError> {
    for c in cases {
        let Some(there) = into.iter_mut().find(|x| x.name == c.name) else {
            into.push(c);
            continue;
        };
        match (&mut there.loads, c.loads) {
            (Some(have), Some(more)) => {
                for l in more {
                    if !have.contains(&l) {
                        have.push(l);
                    }
                }
            }
            (have, more) if *have == more => {}
            _ => {
                return Err(SelectError::BadValue {
                    family: c.family.name.into(),
                    message: format!(
                        "{} is named twice, once with the default load ladder and once with \
                         load:…; name it once",
                        c.name
                    ),
                })
            }
        }
    }
    Ok(())
}

/// Expand one family's spec tail ("procs:2,8/size:16k") into cases.
pub fn expand(
    family: &'static Family,
    tail: &str,
    ctx: &RunContext,
) -> Result<Vec<Selected>, SelectError> {
    let bad = |message: String| SelectError::BadValue {
        family: family.name.into(),
        message,
    };
    let mut given: Vec<Option<Vec<Value>>> = vec![None; family.params.len()];
    let mut loads: Option<Vec<u32>> = None;
    // The names a segment may give: the family's parameters, and a
    // workload's load ladder.
    let known = || {
        family
            .params
            .iter()
            .map(|p| p.name)
            .chain(family.is_workload().then_some(LOAD.name))
    };
    for seg in tail.split('/').filter(|s| !s.is_empty()) {
        if let (Some((LOAD_NAME, values)), true) = (seg.split_once(':'), family.is_workload()) {
            if loads.is_some() {
                return Err(bad(format!("{LOAD_NAME} is given twice")));
            }
            let parsed = values
                .split(',')
                .map(|v| LOAD.parse(v).map(|v| v.num as u32))
                .collect::<Result<Vec<_>, _>>()
                .map_err(bad)?;
            loads = Some(parsed);
            continue;
        }
        let (idx, values) = match seg.split_once(':') {
            Some((key, values)) => {
                let idx = family
                    .params
                    .iter()
                    .position(|p| p.name == key)
                    .ok_or_else(|| {
                        let hint = suggest(key, known())
                            .map(|s| format!(" (did you mean '{s}'?)"))
                            .unwrap_or_default();
                        SelectError::UnknownParam {
                            family: family.name.into(),
                            param: key.into(),
                            hint,
                            known: known().collect::<Vec<_>>().join(", "),
                        }
                    })?;
                (idx, values)
            }
            None => {
                let idx = family
                    .params
                    .iter()
                    .position(|p| p.positional)
                    .ok_or_else(|| SelectError::NoPositional {
                        family: family.name.into(),
                        segment: seg.into(),
                    })?;
                (idx, seg)
            }
        };
        let param = &family.params[idx];
        if given[idx].is_some() {
            return Err(bad(format!("{} is given twice", param.name)));
        }
        let parsed = values
            .split(',')
            .map(|v| param.parse(v))
            .collect::<Result<Vec<_>, _>>()
            .map_err(bad)?;
        given[idx] = Some(parsed);
    }
    let mut axes: Vec<Vec<Value>> = Vec::new();
    for (i, p) in family.params.iter().enumerate() {
        match given[i].take() {
            Some(v) => axes.push(v),
            None => {
                let by_option = ctx.default_for(family, p.name).map(|d| [d]);
                let defaults = match &by_option {
                    Some(one) => &one[..],
                    None => p.defaults(ctx.quick),
                };
                axes.push(
                    defaults
                        .iter()
                        .map(|d| {
                            p.parse(d)
                                .unwrap_or_else(|e| panic!("{}: bad default: {e}", family.name))
                        })
                        .collect(),
                )
            }
        }
    }
    // Cartesian product, first parameter varying slowest.
    let mut points: Vec<Vec<Value>> = vec![Vec::new()];
    for axis in &axes {
        points = points
            .into_iter()
            .flat_map(|prefix| {
                axis.iter().map(move |v| {
                    let mut p = prefix.clone();
                    p.push(v.clone());
                    p
                })
            })
            .collect();
    }
    Ok(points
        .into_iter()
        .map(|values| {
            let point = Point(family.params.iter().map(|p| p.name).zip(values).collect());
            Selected {
                family,
                name: case_name(family, &point),
                point,
                loads: loads.clone(),
            }
        })
        .collect())
}

const LOAD_NAME: &str = LOAD.name;

/// Whether a parameter's value is left out of names and stored params: an
/// address at `local`, so that local cases read as they did before the
/// `remote` parameter existed.
fn unnamed(p: &crate::params::Param, text: &str) -> bool {
    matches!(p.kind, crate::params::Kind::Address) && text == crate::params::LOCAL
}

/// "lat_ctx/procs:8/size:16k": positional values bare, others key:value.
pub fn case_name(family: &Family, point: &Point) -> String {
    let mut name = family.name.to_string();
    for (k, v) in applying(family, point) {
        let positional = family.params.iter().any(|p| p.name == k && p.positional);
        name.push('/');
        if !positional {
            name.push_str(k);
            name.push(':');
        }
        name.push_str(v);
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(specs: &[&str]) -> Result<Selection, SelectError> {
        select(
            &specs.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            &RunContext::default(),
            1,
        )
    }

    #[test]
    fn positional_values_and_lists() {
        let s = sel(&["lat_syscall/null,read"]).unwrap();
        let names: Vec<_> = s.cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["lat_syscall/null", "lat_syscall/read"]);
    }

    #[test]
    fn unknown_names_suggest_near_ones() {
        match sel(&["lat_sycall"]) {
            Err(SelectError::Unknown(n, hint)) => {
                assert_eq!(n, "lat_sycall");
                assert!(hint.contains("lat_syscall"), "{hint}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            sel(&["lat_syscall/bogus:1"]),
            Err(SelectError::UnknownParam { .. })
        ));
        assert!(matches!(
            sel(&["lat_syscall/nul"]),
            Err(SelectError::BadValue { .. })
        ));
    }

    #[test]
    fn default_suite_and_groups_expand() {
        let s = sel(&[]).unwrap();
        assert!(!s.cases.is_empty());
        let g = sel(&["proc"]).unwrap();
        assert!(g.cases.iter().all(|c| c.family.group == "proc"));
        // the same case named twice runs once
        let d = sel(&["lat_syscall/null", "lat_syscall/null"]).unwrap();
        assert_eq!(d.cases.len(), 1);
    }

    #[test]
    fn the_check_suite_names_one_case_each() {
        let s = sel(&["check"]).unwrap();
        assert_eq!(s.cases.len(), CHECK_SUITE.len());
        assert!(s.skipped.is_empty());
        assert!(s.cases.iter().all(|c| !c.family.is_workload()));
    }

    #[test]
    fn every_family_default_builds_and_names_are_unique() {
        let mut names = std::collections::HashSet::new();
        for f in FAMILIES {
            // A family that says it cannot run here (numa_matrix on one
            // node) is expanded but not built: building is where it says why.
            let here = (f.unsupported)().is_none();
            for quick in [false, true] {
                let ctx = RunContext::new(quick);
                for c in expand(f, "", &ctx).unwrap() {
                    if !here {
                        continue;
                    }
                    if f.is_workload() {
                        f.make_workload(&c.point, &ctx)
                            .map(|_| ())
                            .unwrap_or_else(|e| panic!("{}: {e}", c.name));
                        continue;
                    }
                    f.make(&c.point, &ctx)
                        .unwrap_or_else(|e| panic!("{}: {e}", c.name));
                    if !quick {
                        assert!(names.insert(c.name.clone()), "duplicate {}", c.name);
                    }
                }
            }
            assert!(
                touchstone_results::groups::group(f.group).is_some(),
                "{}: unknown group {}",
                f.name,
                f.group
            );
        }
    }

    #[test]
    fn a_workloads_loads_are_its_ladder_not_cases() {
        let s = sel(&["tcp_rr/load:1,2,4/size:16"]).unwrap();
        assert_eq!(s.cases.len(), 1);
        let c = &s.cases[0];
        assert_eq!(
            c.name,
            "tcp_rr/size:16/server:per-cpu/client:epoll/cpus:free"
        );
        assert_eq!(c.loads, Some(vec![1, 2, 4]));
        // Unnamed: the default ladder; named again: more loads.
        assert_eq!(sel(&["tcp_rr"]).unwrap().cases[0].loads, None);
        let twice = sel(&["tcp_rr/load:1,2", "tcp_rr/load:2,8"]).unwrap();
        assert_eq!(twice.cases[0].loads, Some(vec![1, 2, 8]));
        assert!(sel(&["tcp_rr", "tcp_rr/load:2"]).is_err());
        // Load 0 parses here; the sweep's plan refuses it with its reason.
        assert_eq!(
            sel(&["tcp_rr/load:0"]).unwrap().cases[0].loads,
            Some(vec![0])
        );
        assert!(matches!(
            sel(&["tcp_rr/load:two"]),
            Err(SelectError::BadValue { .. })
        ));
        match sel(&["tcp_rr/lod:4"]) {
            Err(SelectError::UnknownParam { hint, known, .. }) => {
                assert!(hint.contains("'load'"), "{hint}");
                assert!(known.contains("load") && known.contains("size"), "{known}");
            }
            other => panic!("{other:?}"),
        }
        // A micro-benchmark has no load ladder.
        assert!(matches!(
            sel(&["lat_syscall/load:2"]),
            Err(SelectError::UnknownParam { .. })
        ));
        // Workloads are not in the default suite, and refuse --parallel.
        assert!(sel(&[])
            .unwrap()
            .cases
            .iter()
            .all(|c| !c.family.is_workload()));
        assert!(matches!(
            select(&["tcp_rr".to_string()], &RunContext::default(), 2),
            Err(SelectError::NotParallel { .. })
        ));
    }
}
