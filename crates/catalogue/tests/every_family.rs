//! What every benchmark family owes, checked from one table (FAMILIES)
//! rather than copied into each family file: each quick case measures with
//! a tiny plan and gives a positive, finite figure in the unit and with the
//! statistic it declares, under its own name; where `--parallel` is
//! allowed, a case runs under three processes; where it is not, asking is
//! refused with the family's reason. A workload (measured as a load curve,
//! not as cases) owes instead: every quick case builds its `Workload`, whose
//! quick sweep plans without error and one short trial of which is sound,
//! and `--parallel` is refused. Families keep only the tests of their own
//! correctness.

use touchstone_catalogue::testing::{measure_spec, sane, tiny_plan};
use touchstone_catalogue::{select, Family, Parallel, RunContext, FAMILIES};
use touchstone_results::{Measurement, Unit};

const QUICK: &RunContext = &RunContext::new(true);

/// Families whose quick cases cost too much for a test run (seconds, or
/// hundreds of megabytes), measured here on a smaller spec instead.
const SMALLER: &[(&str, &str, &str)] = &[
    (
        "lat_mem_rd",
        "lat_mem_rd/stride:16,512,rand_page,rand/size:4k,64k",
        "74 quick cases up to 128 MB; every chain kind on two sizes instead",
    ),
    (
        "bw_mem",
        "bw_mem/size:16k",
        "quick sizes reach 256 MB, 512 MB for the copies",
    ),
    (
        "bw_mix",
        "bw_mix/rd/size:1m",
        "a quick stream is 128 MB on every CPU",
    ),
];

/// Families whose run under three processes covers more than their first
/// case, because some of their cases keep state of their own per process.
const IN_PARALLEL: &[(&str, &str, &str)] = &[
    (
        "lat_sig",
        "lat_sig/catch,prot",
        "each process's handlers count its own signals",
    ),
    (
        "lat_thread",
        "lat_thread/create,cond_pingpong",
        "each process has its own partner thread",
    ),
    (
        "lat_usleep",
        "lat_usleep/itimer,nanosleep/time:50us",
        "each process has its own interval timer and SIGALRM handler",
    ),
    (
        "lat_select",
        "lat_select/file,tcp/n:50",
        "each process connects its own sockets to its own listener",
    ),
    (
        "bw_file_rd",
        "bw_file_rd/sum,open2close/size:1m",
        "open2close reopens each process's own file by name",
    ),
    (
        "bw_mmap_rd",
        "bw_mmap_rd/sum,open2close/size:1m",
        "open2close reopens each process's own file by name",
    ),
];

/// The unit a family's name promises (lmbench's convention), and the
/// families that report otherwise, with their reason.
const UNIT_BY_PREFIX: &[(&str, Unit)] = &[("lat_", Unit::Ns), ("bw_", Unit::MBps)];
const UNIT_EXCEPTIONS: &[(&str, Unit, &str)] = &[(
    "lat_fs",
    Unit::OpsPerSec,
    "lmbench's lat_fs reports files created or deleted per second",
)];

fn listed<'a>(table: &'a [(&str, &'a str, &str)], family: &str) -> Option<&'a str> {
    table.iter().find(|e| e.0 == family).map(|e| e.1)
}

/// The spec a family is measured with in one process.
fn spec(f: &Family) -> &str {
    listed(SMALLER, f.name).unwrap_or(f.name)
}

/// Measure `spec`, or say why not, prefixed with the family's name.
fn measure(f: &Family, spec: &str, processes: u32) -> Result<Vec<Measurement>, String> {
    measure_spec(spec, &tiny_plan(processes), QUICK).map_err(|e| format!("{}: {spec}: {e}", f.name))
}

/// Every quick case, one process: named as selected, in the family's group,
/// in the unit and with the statistic its case declares, sane; and what
/// the family derives from them is finite and its own.
fn one_process(f: &'static Family) -> Result<(), String> {
    if f.is_workload() {
        return workload(f);
    }
    let spec = spec(f);
    let cases = select(&[spec.to_string()], QUICK, 1)
        .map_err(|e| format!("{}: {e}", f.name))?
        .cases;
    let ms = measure(f, spec, 1)?;
    if ms.len() != cases.len() {
        return Err(format!(
            "{spec}: {} cases, {} measured",
            cases.len(),
            ms.len()
        ));
    }
    for (m, case) in ms.iter().zip(&cases) {
        let shape = f.make(&case.point, QUICK)?.shape;
        let want = (
            case.name.as_str(),
            f.name,
            f.group,
            1,
            shape.unit(),
            shape.statistic,
        );
        let got = (
            m.name.as_str(),
            m.benchmark.as_str(),
            m.group.as_str(),
            m.parallel,
            m.unit,
            m.statistic,
        );
        if got != want {
            return Err(format!(
                "{}: measured as {got:?}, declared {want:?}",
                case.name
            ));
        }
        sane(m)?;
    }
    for d in f.derive.map_or_else(Vec::new, |derive| derive(&ms)) {
        if !d.value().is_finite() || d.benchmark != f.name || d.group != f.group {
            return Err(format!(
                "derived {} ({} in {}): {}",
                d.name,
                d.benchmark,
                d.group,
                d.value()
            ));
        }
    }
    Ok(())
}

/// A workload: each quick case builds, names its operation, plans its quick
/// sweep on this machine, cannot be built as a case, and runs one short
/// trial at its smallest quick load that is sound (`trial_is_sound`), in a
/// child process (a real-time workload locks memory and changes
/// scheduling).
fn workload(f: &'static Family) -> Result<(), String> {
    use touchstone_catalogue::testing::{in_child_measuring, short_trial, trial_is_sound};
    use touchstone_harness::workload::{cpu::usable_cpus, run_trial, validate, SweepPlan};
    let cpus = usable_cpus().map_err(|e| e.to_string())?;
    let cases = select(&[f.name.to_string()], QUICK, 1)
        .map_err(|e| format!("{}: {e}", f.name))?
        .cases;
    for case in &cases {
        let mut w = f.make_workload(&case.point, QUICK)?;
        let loads = validate(&*w, &SweepPlan::quick(), cpus.len())
            .map_err(|e| format!("{}: {e}", case.name))?;
        let Some(&load) = loads.iter().min() else {
            return Err(format!("{}: no load to measure", case.name));
        };
        if f.operation().is_none() || f.make(&case.point, QUICK).is_ok() {
            return Err(format!("{}: not a well-formed workload", case.name));
        }
        let clients = w.clients(load, cpus.len()).clamp(1, load) as usize;
        in_child_measuring(|| {
            let o =
                run_trial(&mut *w, load, &cpus, &short_trial(), 0).map_err(|e| e.to_string())?;
            trial_is_sound(&o, clients)
        })
        .map_err(|e| format!("{}: a trial at load {load}: {e}", case.name))?;
    }
    Ok(())
}

/// Under three processes: the first quick case (or the cases listed in
/// IN_PARALLEL) runs in all three, or asking is refused with the reason.
fn three_processes(f: &'static Family) -> Result<(), String> {
    match f.parallel {
        Parallel::No(reason) => match measure(f, f.name, 3) {
            Err(e) if e.contains(reason) => Ok(()),
            Err(e) => Err(format!("refused without its reason: {e}")),
            Ok(_) => Err(format!("{}: ran under 3 processes", f.name)),
        },
        Parallel::Allowed => {
            let first;
            let spec = match listed(IN_PARALLEL, f.name) {
                Some(spec) => spec,
                None => {
                    let sel = select(&[spec(f).to_string()], QUICK, 3)
                        .map_err(|e| format!("{}: {e}", f.name))?;
                    first = sel.cases[0].name.clone();
                    &first
                }
            };
            for m in measure(f, spec, 3)? {
                if m.parallel != 3 || m.per_process.len() != 3 {
                    return Err(format!(
                        "{}: parallel {}, {} processes' figures",
                        m.name,
                        m.parallel,
                        m.per_process.len()
                    ));
                }
                sane(&m)?;
            }
            Ok(())
        }
    }
}

/// Run `check` on every family that can run here, then fail once with
/// every family's failure.
fn every_family(check: fn(&'static Family) -> Result<(), String>) {
    let mut failures = Vec::new();
    for f in FAMILIES.iter().copied() {
        if let Some(reason) = (f.unsupported)() {
            match select(&[f.name.to_string()], QUICK, 1) {
                Err(e) if e.to_string().contains(&reason) => continue,
                Err(e) => {
                    failures.push(format!("{}: unsupported ({reason}); refused: {e}", f.name))
                }
                Ok(_) => failures.push(format!("{}: unsupported ({reason}) but selected", f.name)),
            }
            continue;
        }
        if let Err(e) = check(f) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn every_quick_case_measures_in_one_process() {
    every_family(one_process);
}

#[test]
fn every_family_runs_under_three_processes_or_says_why_not() {
    every_family(three_processes);
}

/// `lat_*` families report time, `bw_*` families MB/s, but for the listed
/// exceptions (checked on every quick case's declared unit: no measuring).
#[test]
fn units_follow_the_names() {
    for f in FAMILIES {
        let want = UNIT_EXCEPTIONS
            .iter()
            .find(|e| e.0 == f.name)
            .map(|e| e.1)
            .or_else(|| {
                UNIT_BY_PREFIX
                    .iter()
                    .find(|(p, _)| f.name.starts_with(p))
                    .map(|e| e.1)
            });
        let (Some(want), None) = (want, (f.unsupported)()) else {
            continue;
        };
        for case in select(&[f.name.to_string()], QUICK, 1).unwrap().cases {
            let unit = f.make(&case.point, QUICK).unwrap().shape.unit();
            assert_eq!(unit, want, "{}", case.name);
        }
    }
}

/// The tables above name real families, and the specs they give select.
#[test]
fn the_tables_name_real_families() {
    // SMALLER's specs are measured in one process (a family that places
    // its own threads refuses more); IN_PARALLEL's in three.
    let tables = [(SMALLER, 1), (IN_PARALLEL, 3)];
    for (table, processes) in tables {
        for (family, spec, why) in table {
            assert!(touchstone_catalogue::family(family).is_some(), "{family}");
            assert!(spec.starts_with(family) && !why.is_empty(), "{family}");
            select(&[spec.to_string()], QUICK, processes).unwrap_or_else(|e| panic!("{spec}: {e}"));
        }
    }
    for (family, _, _) in UNIT_EXCEPTIONS {
        assert!(touchstone_catalogue::family(family).is_some(), "{family}");
    }
}
