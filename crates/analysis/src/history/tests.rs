//! A host's history on synthetic runs: the change found at the run it was
//! made, its size with an interval, and the fingerprint difference named.

use super::*;
use crate::testdata::{curve, point, run};
use touchstone_results::fingerprint::Fingerprint;

/// Twenty runs of one host; from run 12 on THP is `always` and the figure
/// 30 % higher (a latency: slower).
fn runs() -> Vec<Run> {
    (0..20)
        .map(|i| {
            let mut r = run(&format!("r{i:02}"), "node-7", vec![]);
            r.host.kernel = "6.1.0-18-amd64".into();
            r.host.fingerprint = Some(Fingerprint {
                thp_enabled: if i < 12 { "madvise" } else { "always" }.into(),
                ..Fingerprint::default()
            });
            r
        })
        .collect()
}

fn entries(values: &[f64]) -> Vec<Entry> {
    values
        .iter()
        .enumerate()
        .map(|(row, &value)| Entry {
            row,
            value,
            low: Some(value * 0.99),
            high: Some(value * 1.01),
        })
        .collect()
}

/// Figures around `level` with a deterministic ±1 % wobble.
fn wobble(i: usize, level: f64) -> f64 {
    level * (1.0 + 0.01 * ((i * 7 % 5) as f64 - 2.0) / 2.0)
}

/// `track` with the default options of `values`, one for each of `runs()`.
fn track_of(name: &str, unit: Unit, values: &[f64]) -> Track {
    let runs = runs();
    let refs: Vec<&Run> = runs.iter().collect();
    track(
        name.into(),
        unit,
        entries(values),
        &refs,
        &Options::default(),
    )
}

#[test]
fn a_change_is_found_at_its_run_with_its_size_and_what_changed() {
    let values: Vec<f64> = (0..20)
        .map(|i| wobble(i, if i < 12 { 100.0 } else { 130.0 }))
        .collect();
    let t = track_of("lat_mem_rd/x", Unit::Ns, &values);
    assert_eq!(t.shifts.len(), 1, "{:?}", t.shifts);
    let s = &t.shifts[0];
    assert_eq!((s.at, s.before_row, s.after_row), (12, 11, 12));
    assert_eq!((s.before_n, s.after_n), (12, 8));
    assert!((s.ratio.ratio - 1.3).abs() < 0.01, "{:?}", s.ratio);
    assert!(s.ratio.low > 1.25 && s.ratio.high < 1.35, "{:?}", s.ratio);
    assert_eq!(s.verdict, Verdict::Slower);
    let named: Vec<String> = s.changes.iter().map(|c| c.to_string()).collect();
    assert_eq!(named, ["THP madvise → always"]);
    // The same figures as a bandwidth: faster.
    let t = track_of("bw", Unit::MBps, &values);
    assert_eq!(t.shifts[0].verdict, Verdict::Faster);
}

#[test]
fn a_steady_history_has_no_change_point() {
    let values: Vec<f64> = (0..20).map(|i| wobble(i, 100.0)).collect();
    let t = track_of("x", Unit::Ns, &values);
    assert!(t.shifts.is_empty(), "{:?}", t.shifts);
}

#[test]
fn the_shift_interval_is_that_of_two_medians() {
    let before = [10.0, 11.0, 9.0, 10.0, 10.5, 9.5, 10.0];
    let after = [20.0, 21.0, 19.0, 20.0, 20.5, 19.5, 20.0];
    let (mb, ma, r) = segment_ratio(&before, &after).unwrap();
    assert_eq!((mb, ma), (10.0, 20.0));
    assert_eq!(r.ratio, 2.0);
    // Seven a side: the extremes at 97.5 % → [19/11, 21/9].
    assert!((r.low - 19.0 / 11.0).abs() < 1e-12 && (r.high - 21.0 / 9.0).abs() < 1e-12);
    assert!(r.level >= 0.95);
    // Two figures a side reach only 50 % each: the level says so.
    let (_, _, r) = segment_ratio(&[1.0, 1.1], &[2.0, 2.1]).unwrap();
    assert!(r.level < 0.5, "{r:?}");
    assert!(segment_ratio(&[0.0, 0.0], &[1.0]).is_none());
}

#[test]
fn curve_peaks_are_named_as_compare_names_them() {
    let mut r = run("r", "h", vec![]);
    r.curves.push(curve(vec![
        point(1, 2, 100.0, 1.0),
        point(2, 2, 180.0, 2.0),
        point(4, 2, 150.0, 2.0),
    ]));
    let peaks = curve_peaks(&r);
    assert_eq!(peaks.len(), 1);
    assert_eq!(peaks[0].0, "synthetic_rr/cpus:2/peak");
    assert_eq!(peaks[0].1.value, 180.0);
    let (lo, hi) = (peaks[0].1.low.unwrap(), peaks[0].1.high.unwrap());
    // Three identical trials: the interval from them is the mean itself.
    assert!(lo <= 180.0 && hi >= 180.0);
}

#[test]
fn a_history_tracks_each_figure_in_time_order_and_keeps_what_is_asked() {
    // Stored out of order: the history sorts by start time.
    let mut runs = runs();
    for (i, r) in runs.iter_mut().enumerate() {
        r.started_at += chrono::Duration::hours(i as i64);
        let level = if i < 12 { 100.0 } else { 130.0 };
        r.measurements = vec![
            crate::testdata::meas("lat_mem_rd/x", "mem", Unit::Ns, wobble(i, level)),
            crate::testdata::meas("lat_syscall/null", "proc", Unit::Ns, wobble(i, 50.0)),
            crate::testdata::meas("count", "proc", Unit::Count, 3.0),
        ];
    }
    runs.reverse();
    let refs: Vec<&Run> = runs.iter().collect();
    let h = history(&refs, |_| true, &Options::default());
    assert_eq!(h.runs.len(), 20);
    assert_eq!(h.runs[0].id, "r00");
    // A count does not rank: not a figure to track.
    let names: Vec<&str> = h.tracks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["lat_mem_rd/x", "lat_syscall/null"]);
    let mem = &h.tracks[0];
    assert_eq!(mem.entries.len(), 20);
    assert_eq!(mem.shifts.len(), 1);
    assert_eq!(mem.shifts[0].after_row, 12);
    assert_eq!(mem.shifts[0].changes[0].to_string(), "THP madvise → always");
    assert!(h.tracks[1].shifts.is_empty());
    let only = history(&refs, |n| n.starts_with("lat_sys"), &Options::default());
    assert_eq!(only.tracks.len(), 1);
}
