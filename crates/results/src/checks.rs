//! Conditions that spoil results, each a small pure function that returns a
//! warning carrying its remedy. Run-level checks look at the host; the
//! measurement-level check looks at the spread of the samples.

use crate::host::Host;
use crate::model::Warning;
use crate::stats::{Summary, NOMINAL_LEVEL};
use crate::warnings::WarningCode;

/// Load average above this fraction of a CPU means another program competes.
pub const LOAD_LIMIT: f64 = 0.5;
/// A median whose confidence interval is wider than this fraction of it.
pub const CI_LIMIT: f64 = 0.05;

/// Other work on the machine at the start (1-minute load average).
pub fn check_load(load1: Option<f64>, usable_cpus: u32) -> Option<Warning> {
    let l = load1?;
    (l > LOAD_LIMIT).then(|| {
        Warning::new(WarningCode::Load, format!("load average {l:.2} at start on {usable_cpus} CPUs: other work competes with the benchmarks"))
    })
}

/// A frequency governor that scales the clock with load.
pub fn check_governor(governor: Option<&str>) -> Option<Warning> {
    let g = governor?;
    (g != "performance").then(|| {
        Warning::new(
            WarningCode::Governor,
            format!("CPU frequency governor is '{g}': the clock speed changes with load"),
        )
    })
}

/// Running inside a virtual machine.
pub fn check_virtualised(hypervisor: Option<&str>) -> Option<Warning> {
    let h = hypervisor?;
    Some(Warning::new(
        WarningCode::Virtualised,
        format!("running under a hypervisor ({h}): timers, scheduling and memory are virtualised"),
    ))
}

/// A container or cgroup CPU limit smaller than the CPUs the OS shows.
pub fn check_cpu_quota(quota: Option<f64>, usable_cpus: u32) -> Option<Warning> {
    let q = quota?;
    (q < usable_cpus as f64).then(|| {
        Warning::new(WarningCode::CpuQuota, format!("a cgroup CPU quota allows {q:.2} CPUs of the {usable_cpus} visible: the scheduler throttles beyond it"))
    })
}

/// An unoptimised build measures itself, not the machine.
pub fn check_profile(profile: &str) -> Option<Warning> {
    (profile != "release").then(|| {
        Warning::new(
            WarningCode::DebugBuild,
            format!(
                "touchstone was built with the '{profile}' profile: inner loops are not optimised"
            ),
        )
    })
}

/// All run-level checks of a host.
pub fn host_warnings(host: &Host, profile: &str) -> Vec<Warning> {
    [
        check_load(host.loadavg.map(|l| l[0]), host.cpu.usable),
        check_governor(host.governor.as_deref()),
        check_virtualised(host.virtualization.as_deref()),
        check_cpu_quota(host.cpu_quota, host.cpu.usable),
        check_profile(profile),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The confidence interval of the median is wider than 5 % of it.
pub fn check_ci(summary: &Summary) -> Option<Warning> {
    if summary.median == 0.0 || summary.n < 2 {
        return None;
    }
    let width = (summary.ci_high - summary.ci_low) / summary.median.abs();
    (width > CI_LIMIT).then(|| {
        Warning::new(
            WarningCode::CiWide,
            format!(
                "the {:.0} % confidence interval of the median is {:.1} % of it",
                summary.ci_level * 100.0,
                width * 100.0
            ),
        )
    })
}

/// Too few samples for the median's interval to reach 95 % (sign-test
/// coverage, see `stats`): the level reached, or that there is none.
pub fn check_few_repetitions(summary: &Summary) -> Option<Warning> {
    (summary.ci_level + 1e-12 < NOMINAL_LEVEL).then(|| {
        let message = if summary.n < 2 {
            format!("{} sample: no confidence interval", summary.n)
        } else {
            format!(
                "{} samples: the interval of the median (min … max) covers {:.0} %, not 95 %",
                summary.n,
                summary.ci_level * 100.0
            )
        };
        Warning::new(WarningCode::FewRepetitions, message)
    })
}

/// Timed intervals during which other work took the CPU from the benchmark.
pub fn check_preempted(preempted: usize, total: usize) -> Option<Warning> {
    (preempted > 0).then(|| {
        Warning::new(WarningCode::Preempted, format!("{preempted} of {total} timed intervals were preempted by other work (involuntary context switches), so they read long"))
    })
}

/// More processes than CPUs: they time-share, which is what is measured.
pub fn check_oversubscribed(parallel: u32, usable_cpus: u32) -> Option<Warning> {
    (parallel > usable_cpus).then(|| {
        Warning::new(
            WarningCode::Oversubscribed,
            format!(
                "{parallel} processes on {usable_cpus} CPUs: the processes time-share the CPUs"
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(usable: u32, loadavg: [f64; 3], governor: &str) -> Host {
        let mut h = Host::default();
        h.cpu.usable = usable;
        h.loadavg = Some(loadavg);
        h.governor = Some(governor.into());
        h
    }

    #[test]
    fn quiet_host_has_no_host_warnings() {
        let h = host(2, [0.1, 0.1, 0.1], "performance");
        assert!(host_warnings(&h, "release").is_empty());
    }

    #[test]
    fn each_condition_warns_with_a_remedy() {
        let mut h = host(4, [2.0, 1.0, 1.0], "powersave");
        h.virtualization = Some("kvm".into());
        h.cpu_quota = Some(1.5);
        let w = host_warnings(&h, "debug");
        let codes: Vec<_> = w.iter().map(|w| w.code.as_str()).collect();
        assert_eq!(
            codes,
            [
                "load",
                "governor",
                "virtualised",
                "cpu-quota",
                "debug-build"
            ]
        );
        assert!(w.iter().all(|w| !w.remedy.is_empty()));
    }

    #[test]
    fn three_repetitions_are_flagged_with_the_level_reached() {
        let w = check_few_repetitions(&Summary::of(&[1.0, 2.0, 3.0]).unwrap()).unwrap();
        assert_eq!(w.code, "few-repetitions");
        assert!(w.message.contains("75 %"), "{}", w.message);
        let one = check_few_repetitions(&Summary::of(&[1.0]).unwrap()).unwrap();
        assert!(
            one.message.contains("no confidence interval"),
            "{}",
            one.message
        );
        let six = Summary::of(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        assert!(check_few_repetitions(&six).is_none());
    }

    #[test]
    fn ci_check_uses_five_percent_of_median() {
        let tight = Summary::of(&[100.0, 101.0, 99.0, 100.0, 100.5, 99.5, 100.0]).unwrap();
        assert!(check_ci(&tight).is_none());
        let wide = Summary::of(&[100.0, 120.0, 80.0, 100.0, 130.0, 70.0, 100.0]).unwrap();
        assert!(check_ci(&wide).is_some());
    }
}
