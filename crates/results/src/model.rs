//! The run/measurement model (DESIGN.md "Results"). These types are the JSON
//! exchange format (docs/results-format.md) and what the store persists, so
//! changing a field is a format change: bump `json::FORMAT_VERSION`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::host::Host;
pub use crate::stats::Statistic;
use crate::stats::Summary;
use crate::units::Unit;

/// One invocation of touchstone on one machine, and what it measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Globally unique id (hex); runs imported from other machines keep theirs.
    pub id: String,
    /// A user-given label ("farm-node-7, BIOS 2.1").
    #[serde(default)]
    pub label: Option<String>,
    pub host: Host,
    pub tool: Tool,
    pub clock: ClockInfo,
    pub options: RunOptions,
    pub started_at: DateTime<Utc>,
    #[serde(default)]
    pub ended_at: Option<DateTime<Utc>>,
    pub status: RunStatus,
    /// Why a run that did not complete ended: the error that stopped it, the
    /// measurements that failed, or the interruption. Absent when complete
    /// (and in runs stored before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Conditions that could spoil every figure of the run (load, governor…).
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// What the run said about where and how it measured, as printed
    /// before its first case ("I/O: files in /tmp (ext4 on /dev/vda)",
    /// a skipped case and why): the context a figure needs later. Absent
    /// in runs stored before it was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(default)]
    pub measurements: Vec<Measurement>,
    /// Load curves of the system workloads the run measured (one per
    /// workload case): points of throughput and latency against load and CPUs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub curves: Vec<crate::curve::Curve>,
}

impl Run {
    /// A complete run of host `hostname` that measured nothing, with
    /// neutral settings (11 repetitions, one round, one process, a 1 ns
    /// clock, 1 Jan 2024): the skeleton that synthetic runs (tests, the
    /// farm generator) fill in with `Run { measurements, ..Run::synthetic(..) }`.
    pub fn synthetic(id: &str, hostname: &str) -> Run {
        use chrono::TimeZone;
        Run {
            id: id.into(),
            label: None,
            host: Host {
                hostname: hostname.into(),
                ..Host::default()
            },
            tool: Tool {
                name: "touchstone".into(),
                version: "test".into(),
                profile: "release".into(),
                rustc: None,
            },
            clock: ClockInfo {
                source: "test".into(),
                resolution_ns: 1.0,
                declared_resolution_ns: 1.0,
                read_cost_ns: 20.0,
                min_interval_ns: 1000,
            },
            options: RunOptions {
                selection: vec![],
                repetitions: 11,
                parallel: vec![1],
                quick: false,
                target_interval_ns: 1000,
                parallel_interval_ns: 1000,
                warmup_ns: 0,
                rounds: 1,
                seed: None,
                workload: None,
            },
            started_at: Utc.with_ymd_and_hms(2024, 1, 1, 0, 0, 0).unwrap(),
            ended_at: None,
            status: RunStatus::Complete,
            reason: None,
            warnings: vec![],
            notes: Vec::new(),
            measurements: Vec::new(),
            curves: Vec::new(),
        }
    }
}

/// A stored run in brief: one line of `touchstone runs`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRow {
    pub id: String,
    pub label: Option<String>,
    pub hostname: String,
    pub started_at: DateTime<Utc>,
    pub status: String,
    pub measurements: u64,
    /// Load curves of workloads.
    pub curves: u64,
    /// What the run measured: its micro-benchmark families and workloads,
    /// each named once, in name order.
    pub measured: Vec<String>,
    /// The host's machine id, for its identity (`Host::identity`); not
    /// listed (the identity names it where it matters).
    #[serde(skip)]
    pub machine_id: Option<String>,
}

impl RunRow {
    /// The host's identity, as `Host::identity` gives it.
    pub fn identity(&self) -> String {
        match &self.machine_id {
            Some(id) => format!("{}#{id}", self.hostname),
            None => self.hostname.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Still measuring: the process that owns it is alive.
    Running,
    /// Stored as running, but the process that owned it is gone (killed,
    /// crashed, or the machine rebooted). Never stored: the store reports a
    /// `running` run whose owner is gone as crashed when it is read.
    Crashed,
    Complete,
    /// Stopped by the user (Ctrl-C); the measurements kept are whole.
    Interrupted,
    /// Stopped by an error; the measurements kept are whole.
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Crashed => "crashed",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }
}

/// The build of touchstone that produced a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
    /// "release" or "debug": debug builds measure the harness, not the machine.
    pub profile: String,
    #[serde(default)]
    pub rustc: Option<String>,
}

/// The clock the harness timed with, as measured at the start of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockInfo {
    pub source: String,
    /// Effective resolution: the larger of the declared resolution and the
    /// smallest positive step observed between two reads, ns. A clock finer
    /// than its read cost shows a step of about one read.
    pub resolution_ns: f64,
    /// What clock_getres declares, ns.
    #[serde(default)]
    pub declared_resolution_ns: f64,
    /// Cost of one read, ns (median of several timed batches).
    pub read_cost_ns: f64,
    /// The shortest timing interval that keeps clock error under 0.1 %.
    pub min_interval_ns: u64,
}

/// How the run was asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunOptions {
    pub selection: Vec<String>,
    pub repetitions: u32,
    pub parallel: Vec<u32>,
    pub quick: bool,
    /// Target timing interval for one process and for several, ns.
    pub target_interval_ns: u64,
    pub parallel_interval_ns: u64,
    pub warmup_ns: u64,
    /// Rounds every micro-benchmark case was measured in, each of
    /// `repetitions` intervals in fresh processes (1 in older documents).
    #[serde(default = "one_round")]
    pub rounds: u32,
    /// The seed of the shuffled order the cases ran in, round after round;
    /// absent for one round (and in older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// How the workloads of the run were swept; absent when it measured none
    /// (and in older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadOptions>,
}

fn one_round() -> u32 {
    1
}

/// How a run's workloads were measured (`run --cpus --converge --warmup --window`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadOptions {
    /// CPU counts asked for (`--cpus`); empty: all usable CPUs.
    #[serde(default)]
    pub cpus: Vec<u32>,
    /// When trials stop (`--converge`).
    pub converge: crate::convergence::Rule,
    /// Warm-up of every trial before its window, ns.
    pub warmup_ns: u64,
    /// Measurement window of every trial, ns.
    pub window_ns: u64,
}

/// One timing interval of one process, as the harness recorded it. Times are
/// CLOCK_MONOTONIC nanoseconds, comparable across the processes of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interval {
    pub process: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub iterations: u64,
    /// Involuntary context switches of the process during the interval:
    /// other work took the CPU, so the interval reads long.
    #[serde(default)]
    pub preemptions: u32,
    /// The round the interval belongs to (0 in older documents).
    #[serde(default)]
    pub round: u32,
}

impl Interval {
    /// `n` one-iteration intervals of process 0, the first `preempted` of
    /// them preempted: those of a synthetic measurement.
    pub fn synthetic(n: usize, preempted: usize) -> Vec<Interval> {
        (0..n)
            .map(|i| Interval {
                process: 0,
                start_ns: 0,
                end_ns: 1,
                iterations: 1,
                preemptions: u32::from(i < preempted),
                round: 0,
            })
            .collect()
    }

    pub fn elapsed_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// An overhead measured separately and subtracted from every sample
/// (e.g. lat_ctx's token passing within one process).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub name: String,
    pub summary: Summary,
    #[serde(default)]
    pub samples: Vec<f64>,
    /// The round of each sample, as for a measurement's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<u32>,
}

/// A condition that qualifies a figure, with what to do about it. Built with
/// `Warning::new` from a code of the one list (`warnings::WarningCode`);
/// `non_exhaustive` keeps other crates from writing free-text codes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Warning {
    /// Stable identifier, e.g. "ci-wide", "load", "governor" (see
    /// `warnings::WarningCode`; stored as text, so unknown codes still load).
    pub code: String,
    pub message: String,
    pub remedy: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.message, self.remedy)
    }
}

/// One benchmark case measured: every raw sample and its summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Stable slash-joined name, e.g. "lat_ctx/procs:8/size:16k": the key
    /// that joins results across machines and years.
    pub name: String,
    /// The family, e.g. "lat_ctx".
    pub benchmark: String,
    /// The report group, e.g. "proc", "ctx", "mem".
    pub group: String,
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    /// Number of processes running the benchmark during every interval.
    pub parallel: u32,
    pub unit: Unit,
    #[serde(default)]
    pub statistic: Statistic,
    /// One figure per repetition, in `unit`, round after round; with
    /// several processes each comes from a wall-clock window all of them
    /// shared (see docs/results-format.md).
    pub samples: Vec<f64>,
    /// The round of each sample (same order as `samples`); empty for a
    /// figure of one round (and in documents written before rounds).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<u32>,
    /// Each process's own figures when parallel > 1 (same order as samples).
    #[serde(default)]
    pub per_process: Vec<Vec<f64>>,
    pub summary: Summary,
    /// The raw timing intervals behind the samples.
    #[serde(default)]
    pub intervals: Vec<Interval>,
    #[serde(default)]
    pub baseline: Option<Baseline>,
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// Extra named figures a benchmark derives (e.g. detected cache sizes).
    #[serde(default)]
    pub extra: BTreeMap<String, f64>,
    /// Why the headline is not a figure at all (e.g. a subtracted overhead
    /// at least as large as what it was subtracted from): the measurement is
    /// kept for the record but never sorted, compared or put in an index.
    /// Absent for a valid figure and in documents written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid: Option<String>,
    pub started_at: DateTime<Utc>,
    pub ended_at: DateTime<Utc>,
    /// How the repetitions were extended until the median's interval was
    /// narrow enough (`run --converge`); absent when not asked for (and in
    /// older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub convergence: Option<crate::convergence::MedianConvergence>,
}

/// The extras an I/O figure carries beside its bandwidth (see
/// `Measurement::io_figures`): the headline as blocks a second, and the
/// median and 99th percentile of each block's latency, µs.
pub const IOPS: &str = "iops";
pub const LATENCY_P50_US: &str = "lat_median_us";
pub const LATENCY_P99_US: &str = "lat_p99_us";

/// What an I/O figure says beside its bandwidth, in fio's terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IoFigures {
    /// Blocks per second at the headline bandwidth.
    pub iops: Option<f64>,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
}

impl Measurement {
    /// A figure named `name` ("lat_ctx/procs:2", its benchmark the first
    /// part) of `samples` (at least one), with neutral settings (median
    /// headline, one process, no parameters, intervals, warnings or extras,
    /// 1 Jan 2024): the skeleton that synthetic measurements fill in with
    /// `Measurement { .., ..Measurement::synthetic(..) }`, as `Run::synthetic`.
    pub fn synthetic(name: &str, group: &str, unit: Unit, samples: Vec<f64>) -> Measurement {
        use chrono::TimeZone;
        let t = Utc.with_ymd_and_hms(2024, 1, 1, 0, 0, 0).unwrap();
        Measurement {
            name: name.into(),
            benchmark: name.split('/').next().unwrap_or(name).into(),
            group: group.into(),
            params: Default::default(),
            parallel: 1,
            unit,
            statistic: Statistic::Median,
            rounds: Vec::new(),
            summary: Summary::of(&samples).expect("a synthetic measurement has samples"),
            samples,
            per_process: vec![],
            intervals: vec![],
            baseline: None,
            warnings: vec![],
            extra: Default::default(),
            invalid: None,
            started_at: t,
            ended_at: t,
            convergence: None,
        }
    }

    /// IOPS and latency percentiles of a figure measured in blocks (the
    /// `io` family records them as extras, IOPS from the headline and the
    /// block size so that the two always agree); None for any other figure.
    pub fn io_figures(&self) -> Option<IoFigures> {
        let get = |k: &str| self.extra.get(k).copied().filter(|x| x.is_finite());
        let f = IoFigures {
            iops: get(IOPS).filter(|_| self.invalid.is_none()),
            p50_us: get(LATENCY_P50_US),
            p99_us: get(LATENCY_P99_US),
        };
        (f.iops.is_some() || f.p50_us.is_some() || f.p99_us.is_some()).then_some(f)
    }

    /// The headline figure: the median of the rounds' figures when
    /// measured in rounds, else the chosen statistic of the samples.
    pub fn value(&self) -> f64 {
        self.summary.headline(self.statistic)
    }

    /// The headline when it is a figure; None when the measurement is
    /// marked invalid (see `invalid`).
    pub fn valid_value(&self) -> Option<f64> {
        self.invalid.is_none().then(|| self.value())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(status: RunStatus, reason: Option<&str>) -> Run {
        Run {
            status,
            reason: reason.map(String::from),
            ..Run::synthetic("0123456789abcdef", "")
        }
    }

    #[test]
    fn a_run_without_a_reason_reads_and_writes_as_before_the_field_existed() {
        // A complete run writes no `reason`, so documents and stored headers
        // of older touchstones (which have none) read back the same.
        let complete = run(RunStatus::Complete, None);
        let v = serde_json::to_value(&complete).unwrap();
        assert!(v.get("reason").is_none(), "{v}");
        assert_eq!(serde_json::from_value::<Run>(v).unwrap(), complete);
    }

    #[test]
    fn a_failed_runs_reason_round_trips() {
        let failed = run(RunStatus::Failed, Some("1 of 2 measurements failed: x"));
        let text = serde_json::to_string(&failed).unwrap();
        assert_eq!(serde_json::from_str::<Run>(&text).unwrap(), failed);
    }
}
