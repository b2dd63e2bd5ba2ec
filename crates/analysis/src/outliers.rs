//! Finding the bad node: hosts grouped by hardware (CPU model, logical CPU
//! count, memory to the nearest GiB), and within each group of at least
//! `MIN_HOSTS` hosts, per benchmark, a host flagged when its figure stands
//! apart from the group's in the slow direction by the robust rule of
//! Iglewicz and Hoaglin's modified z-score:
//!
//!   score = (x − median) / (1.4826 · MAD) , flagged when the score in
//!   the slow direction exceeds 3.5,
//!
//! where median and MAD (median absolute deviation) are over the group's
//! hosts and 1.4826 makes the MAD estimate a standard deviation for normal
//! data. One slow host cannot move the median or the MAD much, so it cannot
//! hide itself (a mean and standard deviation would). The spread is taken
//! as at least `MIN_SPREAD` of the median, so that hosts agreeing to the
//! last digit do not make a host 1 % off "stand apart". The slow direction
//! comes from the unit (`Unit::higher_is_better`); figures that do not rank
//! (sizes, counts) are not judged. Each host is represented by its newest
//! run. Pure functions: the report prints what they find.

use std::collections::BTreeMap;

use serde::Serialize;
use touchstone_results::host::Host;
use touchstone_results::{Run, Unit};

use crate::table::Matrix;

/// The modified z-score beyond which a host is flagged (Iglewicz & Hoaglin 1993).
pub const THRESHOLD: f64 = 3.5;
/// 1.4826 · MAD estimates the standard deviation of normal data.
pub const MAD_SCALE: f64 = 1.4826;
/// Fewer hosts of one hardware than this: too few to judge.
pub const MIN_HOSTS: usize = 3;
/// The spread is at least this fraction of the median: in a group that
/// agrees more tightly, a host must be more than `THRESHOLD` × 1 % = 3.5 %
/// off to be flagged. One host's figures move by a few per cent from run to
/// run, so a smaller difference is no sign of a bad node; and the MAD of
/// hosts agreeing to the last digit is near 0, which would make any
/// difference "stand apart".
pub const MIN_SPREAD: f64 = 0.01;

/// The rule in one sentence, for reports and docs.
pub const RULE: &str = "per benchmark, within hosts of the same hardware (at least 3), a host is \
flagged when |x − median| / (1.4826·MAD) > 3.5 in the slow direction (median and MAD over the \
group's hosts; the spread taken as at least 1 % of the median, so a host must be more than \
3.5 % off to be flagged)";

/// What makes hosts comparable: the same CPU model, logical CPU count and memory.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Hardware {
    pub cpu_model: String,
    pub cpus: u32,
    /// Memory rounded to the nearest GiB: identical machines differ by the
    /// few MB their kernels reserve.
    pub memory_gib: u64,
}

impl Hardware {
    pub fn of(host: &Host) -> Hardware {
        Hardware {
            cpu_model: host.cpu.model.clone(),
            cpus: host.cpu.threads,
            memory_gib: (host.memory_bytes + (1 << 29)) >> 30,
        }
    }
}

impl std::fmt::Display for Hardware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let model = if self.cpu_model.is_empty() {
            "unknown CPU"
        } else {
            &self.cpu_model
        };
        write!(f, "{model} × {} CPUs, {} GiB", self.cpus, self.memory_gib)
    }
}

/// A host's name as reports show it and as the fleet keys it: the host
/// name, with the machine id when the run recorded one (two hosts of the
/// same name are then two hosts).
pub fn host_key(run: &Run) -> String {
    match &run.host.machine_id {
        Some(id) if !id.is_empty() => {
            format!("{} ({})", run.host.hostname, &id[..id.len().min(8)])
        }
        _ => run.host.hostname.clone(),
    }
}

/// The newest run of each host, in order of host: indices into `runs`.
pub fn newest_per_host(runs: &[Run]) -> Vec<usize> {
    let mut newest: BTreeMap<String, usize> = BTreeMap::new();
    for (i, r) in runs.iter().enumerate() {
        newest
            .entry(host_key(r))
            .and_modify(|j| {
                if r.started_at > runs[*j].started_at {
                    *j = i
                }
            })
            .or_insert(i);
    }
    newest.into_values().collect()
}

/// One host flagged on one benchmark.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flag {
    /// Row of the matrix (the host's run).
    pub row: usize,
    pub host: String,
    /// The column's label (name, with ×N for several processes).
    pub benchmark: String,
    pub unit: Unit,
    pub value: f64,
    pub median: f64,
    /// The modified z-score, positive in the slow direction.
    pub score: f64,
    /// How much slower than the median, as a fraction (0.3 = 30 % slower).
    pub slower_by: f64,
}

/// What the test found in one hardware group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    pub hardware: Hardware,
    /// Rows of the matrix, one per host.
    pub rows: Vec<usize>,
    pub hosts: Vec<String>,
    /// False: fewer than `MIN_HOSTS` hosts, nothing judged.
    pub judged: bool,
    /// Benchmarks that at least `MIN_HOSTS` of the group's hosts measured.
    pub benchmarks_judged: usize,
    pub flags: Vec<Flag>,
}

impl Group {
    /// The hosts flagged at least once, each once, most flags first.
    pub fn flagged_hosts(&self) -> Vec<(String, usize)> {
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for f in &self.flags {
            *count.entry(&f.host).or_default() += 1;
        }
        let mut v: Vec<(String, usize)> =
            count.into_iter().map(|(h, n)| (h.to_string(), n)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}

/// The median of sorted figures (the 0.5 quantile: the mean of the middle
/// two of an even count).
fn median(sorted: &[f64]) -> f64 {
    touchstone_results::stats::quantile_sorted(sorted, 0.5)
}

/// Median, and the modified z-score of each value (`(x − median) /
/// max(1.4826·MAD, MIN_SPREAD·|median|)`, signed).
pub fn robust_scores(values: &[f64]) -> (f64, Vec<f64>) {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let med = median(&sorted);
    let mut dev: Vec<f64> = values.iter().map(|x| (x - med).abs()).collect();
    dev.sort_by(f64::total_cmp);
    let spread = (MAD_SCALE * median(&dev)).max(MIN_SPREAD * med.abs());
    let scores = values
        .iter()
        .map(|x| {
            if spread > 0.0 {
                (x - med) / spread
            } else {
                0.0
            }
        })
        .collect();
    (med, scores)
}

/// Judge every hardware group of the matrix, whose rows must be one run per
/// host (`newest_per_host`). Groups in order of hardware.
pub fn judge(m: &Matrix) -> Vec<Group> {
    let mut by_hw: BTreeMap<Hardware, Vec<usize>> = BTreeMap::new();
    for (row, run) in m.runs.iter().enumerate() {
        by_hw.entry(Hardware::of(&run.host)).or_default().push(row);
    }
    by_hw
        .into_iter()
        .map(|(hardware, rows)| {
            let hosts: Vec<String> = rows.iter().map(|&r| host_key(m.runs[r])).collect();
            let mut group = Group {
                hardware,
                hosts,
                judged: rows.len() >= MIN_HOSTS,
                benchmarks_judged: 0,
                flags: Vec::new(),
                rows,
            };
            if group.judged {
                judge_group(m, &mut group);
            }
            group
        })
        .collect()
}

fn judge_group(m: &Matrix, group: &mut Group) {
    for (col, column) in m.columns.iter().enumerate() {
        let Some(higher_better) = column.unit.higher_is_better() else {
            continue;
        };
        let present: Vec<(usize, f64)> = group
            .rows
            .iter()
            .filter_map(|&r| {
                let meas = m.cell(r, col)?;
                let v = meas.value();
                (meas.invalid.is_none() && v.is_finite()).then_some((r, v))
            })
            .collect();
        if present.len() < MIN_HOSTS {
            continue;
        }
        group.benchmarks_judged += 1;
        let values: Vec<f64> = present.iter().map(|p| p.1).collect();
        let (med, scores) = robust_scores(&values);
        for (&(row, value), score) in present.iter().zip(scores) {
            let slow_score = if higher_better { -score } else { score };
            if slow_score > THRESHOLD {
                let slower_by = if higher_better {
                    1.0 - value / med
                } else {
                    value / med - 1.0
                };
                group.flags.push(Flag {
                    row,
                    host: host_key(m.runs[row]),
                    benchmark: column.label(),
                    unit: column.unit,
                    value,
                    median: med,
                    score: slow_score,
                    slower_by,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{meas, run};

    fn host(name: &str, model: &str, latency_ns: f64, bandwidth: f64) -> Run {
        let mut r = run(
            name,
            name,
            vec![
                meas("lat_syscall/null", "proc", Unit::Ns, latency_ns),
                meas("bw_mem/rd/size:64m", "mem", Unit::MBps, bandwidth),
                meas("cache/l2", "mem", Unit::Bytes, 1_048_576.0),
            ],
        );
        r.host.cpu.model = model.into();
        r.host.cpu.threads = 8;
        r.host.memory_bytes = 32 << 30;
        r
    }

    /// Six hosts of one hardware, figures spread ±2 % as real nodes are.
    fn fleet(spread: &[f64]) -> Vec<Run> {
        spread
            .iter()
            .enumerate()
            .map(|(i, s)| host(&format!("node{i}"), "Xeon", 100.0 * s, 10_000.0 / s))
            .collect()
    }

    const NORMAL: [f64; 6] = [1.0, 1.012, 0.985, 1.02, 0.995, 1.006];

    #[test]
    fn a_host_slowed_by_30_percent_is_flagged_in_the_slow_direction() {
        let mut runs = fleet(&NORMAL);
        // node3 is 30 % slower on both: its latency up, its bandwidth down.
        runs[3] = host("node3", "Xeon", 130.0, 10_000.0 / 1.3);
        let m = Matrix::build(&runs).unwrap();
        let groups = judge(&m);
        assert_eq!(groups.len(), 1);
        let g = &groups[0];
        assert!(g.judged);
        assert_eq!(g.benchmarks_judged, 2, "sizes are not judged");
        assert_eq!(g.flagged_hosts(), vec![("node3".to_string(), 2)]);
        let lat = g.flags.iter().find(|f| f.unit == Unit::Ns).unwrap();
        assert!((lat.slower_by - 0.3).abs() < 0.03, "{lat:?}");
        assert!(lat.score > THRESHOLD);
    }

    #[test]
    fn a_faster_host_is_not_a_bad_node() {
        let mut runs = fleet(&NORMAL);
        runs[2] = host("node2", "Xeon", 70.0, 10_000.0 / 0.7);
        let m = Matrix::build(&runs).unwrap();
        assert!(judge(&m)[0].flags.is_empty());
    }

    #[test]
    fn a_normal_spread_flags_nobody() {
        let runs = fleet(&NORMAL);
        let m = Matrix::build(&runs).unwrap();
        let g = &judge(&m)[0];
        assert!(g.judged);
        assert!(g.flags.is_empty(), "{:?}", g.flags);
        // Identical figures: the 1 % floor keeps a 0.5 % host unflagged.
        let runs = fleet(&[1.0, 1.0, 1.0, 1.005]);
        let m = Matrix::build(&runs).unwrap();
        assert!(judge(&m)[0].flags.is_empty());
    }

    /// What the docs say of the floor: in a group that agrees to the last
    /// digit, 3 % off is never flagged, more than 3.5 % is.
    #[test]
    fn in_a_tight_group_the_floor_needs_more_than_3_5_percent() {
        for (off, flagged) in [(1.03, false), (1.034, false), (1.036, true), (1.04, true)] {
            let runs = fleet(&[1.0, 1.0, 1.0, 1.0, off]);
            let m = Matrix::build(&runs).unwrap();
            assert_eq!(!judge(&m)[0].flags.is_empty(), flagged, "{off}");
        }
    }

    #[test]
    fn two_hosts_are_too_few_and_hardware_groups_are_kept_apart() {
        let mut runs = fleet(&NORMAL[..3]);
        // Two hosts of other hardware, one of them far slower: not judged.
        runs.push(host("big0", "EPYC", 50.0, 20_000.0));
        runs.push(host("big1", "EPYC", 90.0, 11_000.0));
        let m = Matrix::build(&runs).unwrap();
        let groups = judge(&m);
        assert_eq!(groups.len(), 2);
        let epyc = groups
            .iter()
            .find(|g| g.hardware.cpu_model == "EPYC")
            .unwrap();
        assert!(!epyc.judged);
        assert!(epyc.flags.is_empty());
        assert_eq!(epyc.hosts, ["big0", "big1"]);
        let xeon = groups
            .iter()
            .find(|g| g.hardware.cpu_model == "Xeon")
            .unwrap();
        assert!(xeon.judged && xeon.flags.is_empty());
        assert_eq!(xeon.hardware.to_string(), "Xeon × 8 CPUs, 32 GiB");
    }

    #[test]
    fn the_newest_run_stands_for_its_host() {
        let mut a = host("a", "X", 1.0, 1.0);
        let mut b = host("a", "X", 1.0, 1.0);
        b.id = "b".into();
        b.started_at += chrono::Duration::hours(1);
        let c = host("c", "X", 1.0, 1.0);
        a.id = "a".into();
        assert_eq!(newest_per_host(&[a, b, c]), vec![1, 2]);
    }

    #[test]
    fn scores_follow_the_modified_z_score() {
        // median 10, MAD 1 → spread 1.4826; 20 scores (20 − 10) / 1.4826.
        let (med, s) = robust_scores(&[9.0, 10.0, 11.0, 10.0, 20.0]);
        assert_eq!(med, 10.0);
        assert!((s[4] - 10.0 / 1.4826).abs() < 1e-9);
        assert_eq!(s[1], 0.0);
    }
}
