//! Conditions that spoil results, each a small pure function that returns a
//! warning carrying its remedy. Run-level checks look at the host; the
//! measurement-level check looks at the spread of the samples.

use crate::host::Host;
use crate::model::Warning;
use crate::stats::Summary;

fn warning(code: &str, message: String, remedy: &str) -> Warning {
    Warning {
        code: code.into(),
        message,
        remedy: remedy.into(),
    }
}

/// Load average above this fraction of a CPU means another program competes.
pub const LOAD_LIMIT: f64 = 0.5;
/// A median whose confidence interval is wider than this fraction of it.
pub const CI_LIMIT: f64 = 0.05;

/// Other work on the machine at the start (1-minute load average).
pub fn check_load(load1: Option<f64>, usable_cpus: u32) -> Option<Warning> {
    let l = load1?;
    (l > LOAD_LIMIT).then(|| {
        warning(
            "load",
            format!("load average {l:.2} at start on {usable_cpus} CPUs: other work competes with the benchmarks"),
            "re-run on a quiet machine (see `top`), or stop the other work",
        )
    })
}

/// A frequency governor that scales the clock with load.
pub fn check_governor(governor: Option<&str>) -> Option<Warning> {
    let g = governor?;
    (g != "performance").then(|| {
        warning(
            "governor",
            format!("CPU frequency governor is '{g}': the clock speed changes with load"),
            "set the 'performance' governor (`cpupower frequency-set -g performance`) before measuring",
        )
    })
}

/// Running inside a virtual machine.
pub fn check_virtualised(hypervisor: Option<&str>) -> Option<Warning> {
    let h = hypervisor?;
    Some(warning(
        "virtualised",
        format!("running under a hypervisor ({h}): timers, scheduling and memory are virtualised"),
        "compare only with runs on the same kind of virtual machine, or measure on bare metal",
    ))
}

/// A container or cgroup CPU limit smaller than the CPUs the OS shows.
pub fn check_cpu_quota(quota: Option<f64>, usable_cpus: u32) -> Option<Warning> {
    let q = quota?;
    (q < usable_cpus as f64).then(|| {
        warning(
            "cpu-quota",
            format!("a cgroup CPU quota allows {q:.2} CPUs of the {usable_cpus} visible: the scheduler throttles beyond it"),
            "run outside the container or raise its CPU limit; keep --parallel at or below the quota",
        )
    })
}

/// An unoptimised build measures itself, not the machine.
pub fn check_profile(profile: &str) -> Option<Warning> {
    (profile != "release").then(|| {
        warning(
            "debug-build",
            format!(
                "touchstone was built with the '{profile}' profile: inner loops are not optimised"
            ),
            "build with `cargo build --release` and run target/release/touchstone",
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
    if summary.median == 0.0 {
        return None;
    }
    let width = (summary.ci_high - summary.ci_low) / summary.median.abs();
    (width > CI_LIMIT).then(|| {
        warning(
            "ci-wide",
            format!(
                "95 % confidence interval is {:.1} % of the median",
                width * 100.0
            ),
            "re-run on a quiet machine or raise --repetitions",
        )
    })
}

/// Timed intervals during which other work took the CPU from the benchmark.
pub fn check_preempted(preempted: usize, total: usize) -> Option<Warning> {
    (preempted > 0).then(|| {
        warning(
            "preempted",
            format!("{preempted} of {total} timed intervals were preempted by other work (involuntary context switches), so they read long"),
            "re-run on a quiet machine; the median resists a few such intervals, not a majority",
        )
    })
}

/// More processes than CPUs: they time-share, which is what is measured.
pub fn check_oversubscribed(parallel: u32, usable_cpus: u32) -> Option<Warning> {
    (parallel > usable_cpus).then(|| {
        warning(
            "oversubscribed",
            format!("{parallel} processes on {usable_cpus} CPUs: the processes time-share the CPUs"),
            "read the figure as throughput under time-sharing, or use --parallel up to the CPU count",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_host_has_no_host_warnings() {
        let mut h = Host::default();
        h.cpu.usable = 2;
        h.loadavg = Some([0.1, 0.1, 0.1]);
        h.governor = Some("performance".into());
        assert!(host_warnings(&h, "release").is_empty());
    }

    #[test]
    fn each_condition_warns_with_a_remedy() {
        let mut h = Host::default();
        h.cpu.usable = 4;
        h.loadavg = Some([2.0, 1.0, 1.0]);
        h.governor = Some("powersave".into());
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
    fn ci_check_uses_five_percent_of_median() {
        let tight = Summary::of(&[100.0, 101.0, 99.0, 100.0, 100.5, 99.5, 100.0]).unwrap();
        assert!(check_ci(&tight).is_none());
        let wide = Summary::of(&[100.0, 120.0, 80.0, 100.0, 130.0, 70.0, 100.0]).unwrap();
        assert!(check_ci(&wide).is_some());
    }
}
