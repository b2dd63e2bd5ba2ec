//! The load-curve model (DESIGN.md "Workloads"): a `Curve` is the points of
//! one sweep of one workload; a `Point` is one (load, CPUs) pair measured by
//! trials repeated until the mean throughput converged, with the merged
//! latency histogram of its operations, the CPU split over the measurement
//! windows and the CPU time per operation on each side.
//!
//! Latency histograms are HdrHistograms of nanoseconds (1 ns to 100 s, three
//! significant digits: 0.1 % resolution). They are stored in the HdrHistogram
//! V2 deflate encoding, base64, the form other HdrHistogram tools read, and
//! decode back to exactly the counts that were encoded.

use std::collections::BTreeMap;

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::convergence::{Assessment, Rule, Verdict};
use crate::self_check::SelfCheck;

/// The smallest latency a histogram tells apart, ns.
pub const HISTOGRAM_LOWEST_NS: u64 = 1;
/// The largest latency a histogram tracks, ns (100 s); longer ones are
/// recorded as this value.
pub const HISTOGRAM_HIGHEST_NS: u64 = 100_000_000_000;
/// Significant decimal digits kept: 3 gives 0.1 % resolution.
pub const HISTOGRAM_SIGFIG: u8 = 3;

/// An empty latency histogram with the bounds every point uses, so that
/// histograms of clients, trials and hosts always merge.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(HISTOGRAM_LOWEST_NS, HISTOGRAM_HIGHEST_NS, HISTOGRAM_SIGFIG)
        .expect("constant histogram bounds are valid")
}

/// A latency histogram in the HdrHistogram V2 deflate encoding, base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EncodedHistogram(pub String);

impl EncodedHistogram {
    pub fn encode(h: &Histogram<u64>) -> EncodedHistogram {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(h, &mut bytes)
            .expect("serialising into memory cannot fail");
        EncodedHistogram(base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub fn decode(&self) -> Result<Histogram<u64>, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(self.0.as_bytes())
            .map_err(|e| format!("latency histogram: not base64: {e}"))?;
        Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("latency histogram: not an HdrHistogram V2 encoding: {e:?}"))
    }
}

/// Latency figures of a set of operations, ns, and their histogram.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Operations recorded.
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    /// The 99.99th percentile (added later: absent in older documents,
    /// where it reads as 0; recompute it from `histogram`).
    #[serde(default)]
    pub p9999_ns: u64,
    pub max_ns: u64,
    pub histogram: EncodedHistogram,
}

impl Latency {
    /// The figures of `h` (percentiles are the histogram's values at those
    /// quantiles: exact to its 0.1 % resolution).
    pub fn of(h: &Histogram<u64>) -> Latency {
        let empty = h.is_empty();
        let at = |q: f64| if empty { 0 } else { h.value_at_quantile(q) };
        Latency {
            count: h.len(),
            min_ns: if empty { 0 } else { h.min() },
            mean_ns: if empty { 0.0 } else { h.mean() },
            p50_ns: at(0.50),
            p90_ns: at(0.90),
            p99_ns: at(0.99),
            p999_ns: at(0.999),
            p9999_ns: at(0.9999),
            max_ns: if empty { 0 } else { h.max() },
            histogram: EncodedHistogram::encode(h),
        }
    }
}

/// Latency of one operation type of a mix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TypeLatency {
    pub name: String,
    pub latency: Latency,
    /// Mean CPU time of one operation of this type, ns, where the
    /// workload's clients measure it (seed 004's CPU time per transaction:
    /// `oltp`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ns_per_op: Option<f64>,
}

/// Where the confined CPUs' time went during the measurement windows, as
/// fractions summing to 1 (from /proc/stat; `user` includes nice, `idle`
/// includes iowait).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CpuSplit {
    pub user: f64,
    pub system: f64,
    pub irq: f64,
    pub softirq: f64,
    pub steal: f64,
    pub idle: f64,
}

impl CpuSplit {
    /// Everything but idle.
    pub fn busy(&self) -> f64 {
        1.0 - self.idle
    }

    /// The mean of several splits (e.g. of the kept trials).
    pub fn mean(splits: &[CpuSplit]) -> CpuSplit {
        let n = splits.len().max(1) as f64;
        let sum = |f: fn(&CpuSplit) -> f64| splits.iter().map(f).sum::<f64>() / n;
        CpuSplit {
            user: sum(|s| s.user),
            system: sum(|s| s.system),
            irq: sum(|s| s.irq),
            softirq: sum(|s| s.softirq),
            steal: sum(|s| s.steal),
            idle: sum(|s| s.idle),
        }
    }
}

/// CPU time spent per operation on each side (netperf's service demand),
/// from the processes' own CPU clocks over the measurement windows.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ServiceDemand {
    /// All client processes or threads together, ns of CPU per operation.
    pub client_ns_per_op: f64,
    /// The server side, when the workload has one.
    #[serde(default)]
    pub server_ns_per_op: Option<f64>,
}

/// One trial at a point: a warm-up, then one measurement window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// Operations completed inside the window / the window, per second.
    pub throughput: f64,
    /// Operations completed inside the window, over all clients.
    pub ops: u64,
    pub window_ns: u64,
    /// Bytes the window's operations moved, when the workload counts them
    /// (operations of different sizes, as web's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Set aside as warm-up (significantly below the others).
    #[serde(default)]
    pub dropped: bool,
    pub cpu: CpuSplit,
    pub service_demand: ServiceDemand,
    /// touchstone's own threads over the window (`self_check`); absent in
    /// earlier documents and where the kernel gives no thread account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_check: Option<SelfCheck>,
    /// Named figures over the window: the machine's energy where it exposes
    /// a counter (`energy_<zone>_j`, `_w`, `_j_per_op`, as a measurement's
    /// extras). Absent where nothing was readable and in earlier documents.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, f64>,
}

/// How the trials of a point converged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Convergence {
    /// The rule: confidence and target total width (fractions), trial bounds.
    pub rule: Rule,
    /// Total width of the interval reached, as a fraction of the mean
    /// (None: no interval exists, e.g. a mean of zero).
    pub width: Option<f64>,
    /// False: `max_trials` ran without reaching the width; the point is flagged.
    pub converged: bool,
    /// The sweep's time budget stopped the trials before `max_trials`
    /// (only with `converged` false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_by_budget: bool,
}

impl Convergence {
    pub fn from_assessment(rule: Rule, a: &Assessment) -> Convergence {
        Convergence {
            rule,
            width: a.width.is_finite().then_some(a.width),
            converged: a.verdict == Verdict::Converged,
            cut_by_budget: false,
        }
    }
}

/// One point of a curve: a load level at a CPU count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Clients (connections, users, processes) running concurrently.
    pub load: u32,
    /// CPUs the whole workload was confined to.
    pub cpus: u32,
    /// Which CPUs those were.
    #[serde(default)]
    pub cpu_ids: Vec<u32>,
    /// Why those: "one thread on each of 4 core(s), SMT siblings left
    /// idle, in package 0 (node 0); …" (whole cores before SMT siblings,
    /// one NUMA node before the next). Absent in earlier documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_choice: Option<String>,
    /// Every trial run, a dropped warm-up trial included (marked).
    pub trials: Vec<Trial>,
    /// Mean throughput of the kept trials, operations per second.
    pub throughput: f64,
    /// Half the confidence interval of that mean.
    pub throughput_half_width: f64,
    /// Bytes per second the kept trials' operations moved (their bytes
    /// over their windows), when the workload counts bytes; reports divide
    /// it by the load for the bit rate per connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_s: Option<f64>,
    pub convergence: Convergence,
    /// All operations of the kept trials' windows, every type merged.
    pub latency: Latency,
    /// Per operation type when the workload has a mix of several; empty otherwise.
    #[serde(default)]
    pub by_type: Vec<TypeLatency>,
    /// Mean over the kept trials.
    pub cpu: CpuSplit,
    /// Over the kept trials: CPU time summed / operations summed.
    pub service_demand: ServiceDemand,
    /// touchstone's check on its own threads over the kept trials
    /// (`SelfCheck::of_trials`): whether the point measured touchstone
    /// rather than the machine. Absent in earlier documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_check: Option<SelfCheck>,
    /// Named figures over the kept trials: the energy of their windows
    /// (`energy_<zone>_j` summed, `_w` over the windows, `_j_per_op` over
    /// their operations). Absent where nothing was readable.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, f64>,
}

impl Point {
    /// Bits per second each of the `load` clients (connections) received,
    /// when the workload counts bytes: SPECweb99's bit rate per connection.
    pub fn bit_rate_per_load(&self) -> Option<f64> {
        self.bytes_per_s
            .map(|b| 8.0 * b / f64::from(self.load.max(1)))
    }

    /// The trials that count (not dropped as warm-up).
    pub fn kept_trials(&self) -> impl Iterator<Item = &Trial> {
        self.trials.iter().filter(|t| !t.dropped)
    }

    /// Whether one of touchstone's own threads was the limit at this
    /// point while its CPUs had room (`self_check`).
    pub fn is_touchstone_bound(&self) -> bool {
        self.self_check.as_ref().is_some_and(|c| c.bound)
    }

    /// "touchstone-bound: server thread 0 at 99 % of a CPU, …" when the
    /// point is.
    pub fn touchstone_bound(&self) -> Option<String> {
        self.self_check.as_ref()?.flag(self.cpus)
    }
}

/// The skeletons that synthetic curves (tests, the farm generator) fill in.
impl Trial {
    /// A kept trial of `throughput` over a window of 3 s.
    pub fn synthetic(throughput: f64, cpu: CpuSplit, service_demand: ServiceDemand) -> Trial {
        Trial {
            throughput,
            ops: (throughput * 3.0) as u64,
            window_ns: 3_000_000_000,
            bytes: None,
            dropped: false,
            cpu,
            service_demand,
            self_check: None,
            extra: Default::default(),
        }
    }
}

impl Point {
    /// The point of `trials` at (`load`, `cpus`): `throughput` ± `half`,
    /// converged under the default rule where that width is reached, with
    /// `latency` and the CPU split and service demand of the first trial.
    pub fn synthetic(
        load: u32,
        cpus: u32,
        trials: Vec<Trial>,
        (throughput, half): (f64, f64),
        latency: Latency,
    ) -> Point {
        let rule = Rule::default();
        let width = 2.0 * half / throughput;
        Point {
            load,
            cpus,
            cpu_ids: (0..cpus).collect(),
            cpu_choice: None,
            cpu: trials[0].cpu,
            service_demand: trials[0].service_demand,
            trials,
            throughput,
            throughput_half_width: half,
            bytes_per_s: None,
            convergence: Convergence {
                rule,
                width: Some(width),
                converged: width <= rule.width,
                cut_by_budget: false,
            },
            latency,
            by_type: vec![],
            self_check: None,
            extra: Default::default(),
        }
    }
}

impl Curve {
    /// A curve of `workload`'s transactions at `params`, made of `points`.
    pub fn synthetic(workload: &str, params: &[(&str, &str)], points: Vec<Point>) -> Curve {
        Curve {
            workload: workload.into(),
            params: params
                .iter()
                .map(|&(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            operation: "transaction".into(),
            points,
            bytes_per_op: None,
            unmeasured_cpus: vec![],
        }
    }
}

/// The points of one sweep of one workload in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    /// The workload, e.g. "tcp_rr".
    pub workload: String,
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    /// What one operation is, e.g. "transaction", "request".
    pub operation: String,
    /// Bytes one operation moves, when the workload is a bandwidth (one
    /// read of a fixed buffer): throughput × this is bytes per second, and
    /// reports show MB/s. Absent in curves of other workloads and of
    /// earlier files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_op: Option<u64>,
    /// In sweep order: for each CPU count, each load.
    pub points: Vec<Point>,
    /// CPU counts asked for that this machine does not have (measured as
    /// many as it has instead).
    #[serde(default)]
    pub unmeasured_cpus: Vec<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_histogram() -> Histogram<u64> {
        let mut h = latency_histogram();
        // A spread over six decades, with repeats, and one past the top.
        let mut x: u64 = 12_345;
        for i in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            h.saturating_record(1 + (x >> 40) % (1 + i * 1000));
        }
        h.saturating_record(HISTOGRAM_HIGHEST_NS * 3);
        h
    }

    #[test]
    fn histogram_encodes_and_decodes_exactly() {
        let h = sample_histogram();
        let enc = EncodedHistogram::encode(&h);
        let back = enc.decode().unwrap();
        assert_eq!(back, h);
        assert_eq!(back.len(), h.len());
        for v in h.iter_recorded() {
            assert_eq!(back.count_at(v.value_iterated_to()), v.count_at_value());
        }
        // Compact: far smaller than the counts array.
        assert!(enc.0.len() < 40_000, "{} bytes", enc.0.len());
        assert!(EncodedHistogram("not base64!".into()).decode().is_err());
        assert!(EncodedHistogram("AAAA".into()).decode().is_err());
    }

    #[test]
    fn percentiles_are_ordered_and_taken_from_the_histogram() {
        let h = sample_histogram();
        let l = Latency::of(&h);
        assert!(l.min_ns <= l.p50_ns && l.p50_ns <= l.p90_ns && l.p90_ns <= l.p99_ns);
        assert!(l.p99_ns <= l.p999_ns && l.p999_ns <= l.max_ns);
        assert_eq!(l.p99_ns, h.value_at_quantile(0.99));
        assert_eq!(l.count, 20_001);
        let empty = Latency::of(&latency_histogram());
        assert_eq!((empty.count, empty.max_ns, empty.p50_ns), (0, 0, 0));
    }

    #[test]
    fn a_curve_round_trips_through_json() {
        let h = sample_histogram();
        let trial = Trial {
            throughput: 1000.0,
            ops: 3000,
            window_ns: 3_000_000_000,
            bytes: None,
            dropped: false,
            cpu: CpuSplit {
                user: 0.2,
                system: 0.5,
                irq: 0.0,
                softirq: 0.1,
                steal: 0.0,
                idle: 0.2,
            },
            service_demand: ServiceDemand {
                client_ns_per_op: 4000.0,
                server_ns_per_op: Some(3000.0),
            },
            self_check: Some(
                SelfCheck {
                    busiest: "server thread 0".into(),
                    busiest_ran: 0.99,
                    busiest_wanted: 1.0,
                    own_ran_cpus: 1.5,
                    own_wanted_cpus: 1.6,
                    threads: 5,
                    cpus_busy: 0.4,
                    bound: false,
                }
                .assessed(4),
            ),
            extra: BTreeMap::from([
                ("energy_package_j".to_string(), 45.5),
                ("energy_package_w".to_string(), 15.2),
                ("energy_package_j_per_op".to_string(), 0.015),
            ]),
        };
        let rule = Rule::default();
        let point = Point {
            load: 4,
            cpus: 2,
            cpu_ids: vec![0, 1],
            cpu_choice: Some("one thread on each of 2 core(s), in package 0 (node 0)".into()),
            trials: vec![
                Trial {
                    dropped: true,
                    throughput: 500.0,
                    ..trial.clone()
                },
                trial.clone(),
                trial.clone(),
                trial.clone(),
            ],
            throughput: 1000.0,
            throughput_half_width: 0.0,
            bytes_per_s: None,
            convergence: Convergence {
                rule,
                width: Some(0.01),
                converged: true,
                cut_by_budget: false,
            },
            latency: Latency::of(&h),
            by_type: vec![TypeLatency {
                name: "get".into(),
                latency: Latency::of(&h),
                cpu_ns_per_op: Some(1234.5),
            }],
            cpu: trial.cpu,
            service_demand: trial.service_demand,
            self_check: trial.self_check.clone(),
            extra: trial.extra.clone(),
        };
        let curve = Curve {
            workload: "tcp_rr".into(),
            params: [("size".to_string(), "4".to_string())].into(),
            operation: "transaction".into(),
            points: vec![point],
            bytes_per_op: None,
            unmeasured_cpus: vec![4],
        };
        let json = serde_json::to_string(&curve).unwrap();
        let back: Curve = serde_json::from_str(&json).unwrap();
        assert_eq!(back, curve);
        assert_eq!(back.points[0].latency.histogram.decode().unwrap(), h);
        assert_eq!(back.points[0].kept_trials().count(), 3);
        // The self-check travels with the trials and the point.
        assert!(json.contains("\"self_check\""));
        assert!(back.points[0].is_touchstone_bound());
        assert!(back.points[0]
            .touchstone_bound()
            .unwrap()
            .starts_with("touchstone-bound: server thread 0 at 99 % of a CPU"));
        // Documents from before the self-check read as unchecked.
        let old = json.replace("\"self_check\"", "\"ignored_field\"");
        let back: Curve = serde_json::from_str(&old).unwrap();
        assert_eq!(back.points[0].self_check, None);
        assert!(!back.points[0].is_touchstone_bound());
        // Energy travels with the trials and the point; documents from
        // before it, and points where nothing was readable, carry none.
        assert_eq!(back.points[0].extra["energy_package_w"], 15.2);
        let old = json.replace("\"extra\"", "\"ignored_extra\"");
        let back: Curve = serde_json::from_str(&old).unwrap();
        assert!(back.points[0].extra.is_empty());
        let mut none = curve.clone();
        none.points[0].extra.clear();
        none.points[0]
            .trials
            .iter_mut()
            .for_each(|t| t.extra.clear());
        assert!(!serde_json::to_string(&none).unwrap().contains("extra"));
    }

    #[test]
    fn cpu_split_mean_and_busy() {
        let a = CpuSplit {
            user: 0.5,
            idle: 0.5,
            ..CpuSplit::default()
        };
        let b = CpuSplit {
            system: 0.5,
            idle: 0.5,
            ..CpuSplit::default()
        };
        let m = CpuSplit::mean(&[a, b]);
        assert_eq!((m.user, m.system, m.idle), (0.25, 0.25, 0.5));
        assert_eq!(m.busy(), 0.5);
    }
}
