//! A host's history (`touchstone history`): each benchmark's figures in the
//! order the runs started, the change points E-divisive finds in them
//! (`change_points`), and for each the shift — the median of the runs
//! after it against the median of the runs before it, back to the previous
//! change point and on to the next, with the conservative interval
//! `compare.rs` gives two medians — and what the runs' records say changed
//! on the machine between the last run before it and the first after it
//! (`fingerprint::diff`). Pure functions over runs already in time order.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;
use touchstone_results::fingerprint::{diff, Change};
use touchstone_results::stats::median_ci_ranks;
use touchstone_results::{Run, Unit};

use crate::change_points::{e_divisive, Options};
use crate::compare::{verdict, Ratio, Verdict, PER_MEDIAN_LEVEL};
use crate::compare_curves::comparison_interval;
use crate::curve_analysis::{analyse_with, AnalysisOptions};
use crate::health::assess::figures;
use crate::usl::UslOptions;

/// One run's figure in a track.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Entry {
    /// The run's position in the history's runs.
    pub row: usize,
    pub value: f64,
    /// The figure's confidence interval, where it has one (a median's; a
    /// curve peak's mean throughput).
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// A change point of a track, with its shift.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shift {
    /// Index into the track's entries of the first figure after the change.
    pub at: usize,
    /// The runs on either side (rows of the history's runs).
    pub before_row: usize,
    pub after_row: usize,
    /// How many figures the medians compared are of: back to the previous
    /// change point, on to the next.
    pub before_n: usize,
    pub after_n: usize,
    pub median_before: f64,
    pub median_after: f64,
    /// median after / median before, with its interval.
    pub ratio: Ratio,
    /// The permutation test's p-value of the change point.
    pub pvalue: f64,
    /// Slower or faster when the interval excludes 1 (`Same` when it does
    /// not: the change point is significant but its size is not bounded
    /// away from 0); `Unranked` for sizes and counts.
    pub verdict: Verdict,
    /// What the runs' records say changed between the two runs.
    pub changes: Vec<Change>,
}

/// One benchmark's history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Track {
    /// The measurement's label (name, with ×N for several processes) or a
    /// curve peak's `WORKLOAD/PARAM:V…/cpus:K/peak`.
    pub name: String,
    pub unit: Unit,
    pub entries: Vec<Entry>,
    pub shifts: Vec<Shift>,
}

/// The order-statistic interval of the median of `xs` at `level`, with its
/// coverage (min … max and its smaller coverage below enough values).
pub fn median_interval_of(xs: &[f64], level: f64) -> Option<(f64, f64, f64, f64)> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let median = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    let (lo, hi, cov) = median_ci_ranks(n, level);
    Some((median, s[lo], s[hi], cov))
}

/// median(after) / median(before) with the interval [after_low /
/// before_high, after_high / before_low] of the two medians' intervals at
/// 97.5 % each (at least 95 % together; less with fewer than 7 figures a
/// side, as `level` says). None when the before median is not positive.
pub fn segment_ratio(before: &[f64], after: &[f64]) -> Option<(f64, f64, Ratio)> {
    let (mb, bl, bh, bc) = median_interval_of(before, PER_MEDIAN_LEVEL)?;
    let (ma, al, ah, ac) = median_interval_of(after, PER_MEDIAN_LEVEL)?;
    if mb <= 0.0 {
        return None;
    }
    let ratio = ma / mb;
    let low = if bh > 0.0 { al / bh } else { 0.0 };
    let high = if bl > 0.0 { ah / bl } else { f64::INFINITY };
    Some((
        mb,
        ma,
        Ratio {
            ratio,
            low: low.min(ratio),
            high: high.max(ratio),
            level: (1.0 - (1.0 - bc) - (1.0 - ac)).max(0.0),
        },
    ))
}

/// The track of `entries` (in time order; rows into `runs`): its change
/// points with their shifts.
pub fn track(
    name: String,
    unit: Unit,
    entries: Vec<Entry>,
    runs: &[&Run],
    options: &Options,
) -> Track {
    let values: Vec<f64> = entries.iter().map(|e| e.value).collect();
    let points = e_divisive(&values, options);
    let mut shifts = Vec::new();
    for (i, cp) in points.iter().enumerate() {
        let start = if i == 0 { 0 } else { points[i - 1].index };
        let end = points.get(i + 1).map_or(values.len(), |c| c.index);
        let (before, after) = (&values[start..cp.index], &values[cp.index..end]);
        let Some((median_before, median_after, ratio)) = segment_ratio(before, after) else {
            continue;
        };
        let (b, a) = (entries[cp.index - 1].row, entries[cp.index].row);
        shifts.push(Shift {
            at: cp.index,
            before_row: b,
            after_row: a,
            before_n: before.len(),
            after_n: after.len(),
            median_before,
            median_after,
            ratio,
            pvalue: cp.pvalue,
            verdict: match unit.higher_is_better() {
                None => Verdict::Unranked,
                hib => verdict(&ratio, hib),
            },
            changes: diff(runs[b], runs[a]),
        });
    }
    Track {
        name,
        unit,
        entries,
        shifts,
    }
}

/// One run of a history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRef {
    pub id: String,
    pub label: Option<String>,
    pub started_at: DateTime<Utc>,
}

/// A host's history: its runs in the order they started, and a track per
/// figure (in the order the figures first appear).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct History {
    pub runs: Vec<RunRef>,
    pub tracks: Vec<Track>,
}

/// The history of `runs` (one host's, any order): every figure `check`
/// judges (`health::assess::figures`: each valid figure with a unit that
/// ranks, each curve's peak) whose name `keep` accepts, tracked with its
/// change points.
pub fn history(runs: &[&Run], keep: impl Fn(&str) -> bool, options: &Options) -> History {
    let mut runs = runs.to_vec();
    runs.sort_by_key(|r| r.started_at);
    let mut order: Vec<(String, Unit, Vec<Entry>)> = Vec::new();
    let mut at: BTreeMap<String, usize> = BTreeMap::new();
    for (row, run) in runs.iter().enumerate() {
        for f in figures(run).into_iter().filter(|f| keep(&f.name)) {
            let i = *at.entry(f.name.clone()).or_insert_with(|| {
                order.push((f.name.clone(), f.unit, Vec::new()));
                order.len() - 1
            });
            let entries = &mut order[i].2;
            let entry = Entry {
                row,
                value: f.headline.value,
                low: Some(f.headline.low),
                high: Some(f.headline.high),
            };
            // A name measured twice in one run: the later figure.
            match entries.last_mut() {
                Some(last) if last.row == row => *last = entry,
                _ => entries.push(entry),
            }
        }
    }
    History {
        runs: runs
            .iter()
            .map(|r| RunRef {
                id: r.id.clone(),
                label: r.label.clone(),
                started_at: r.started_at,
            })
            .collect(),
        tracks: order
            .into_iter()
            .map(|(name, unit, entries)| track(name, unit, entries, &runs, options))
            .collect(),
    }
}

/// The peak throughput of each load curve of a run, one per CPU count
/// measured: (`WORKLOAD/PARAM:V…/cpus:K/peak`, the peak point's mean
/// throughput with its comparison interval), as `compare` names and
/// judges peaks. Curves whose peak cannot be found are left out.
pub fn curve_peaks(run: &Run) -> Vec<(String, Entry)> {
    // The peak only: no USL bootstrap.
    let options = AnalysisOptions {
        usl: UslOptions {
            resamples: 0,
            ..UslOptions::default()
        },
        ..AnalysisOptions::default()
    };
    let mut out = Vec::new();
    for curve in &run.curves {
        let stem = std::iter::once(curve.workload.clone())
            .chain(curve.params.iter().map(|(k, v)| format!("{k}:{v}")))
            .collect::<Vec<_>>()
            .join("/");
        let analysis = analyse_with(curve, &options);
        for k in &analysis.by_cpus {
            let Ok(summary) = &k.summary else { continue };
            let Some(t) = comparison_interval(&curve.points[summary.peak.index]) else {
                continue;
            };
            out.push((
                format!("{stem}/cpus:{}/peak", k.cpus),
                Entry {
                    row: 0,
                    value: t.mean,
                    low: Some(t.low),
                    high: Some(t.high),
                },
            ));
        }
    }
    out
}

#[cfg(test)]
#[path = "history/tests.rs"]
mod tests;
