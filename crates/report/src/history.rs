//! `touchstone history`'s rendering (`touchstone_analysis::history`): on the
//! terminal a line per benchmark with a sparkline of its figures (a `│`
//! where a change point falls), then each change point with its shift, its
//! interval and what changed on the machine; as JSON the history whole; as
//! CSV one line per figure with its interval.

use std::fmt::Write;

use touchstone_analysis::compare::Verdict;
use touchstone_analysis::history::{History, Shift, Track};
use touchstone_results::units::format_value;

use crate::csv::field;
use crate::health::percent;

/// The most figures a sparkline shows (the newest).
const SPARK_WIDTH: usize = 60;

/// The figures of a track as a sparkline scaled from its smallest to its
/// largest figure, with `│` before the first figure after a change point.
pub fn sparkline(t: &Track) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let skip = t.entries.len().saturating_sub(SPARK_WIDTH);
    let shown = &t.entries[skip..];
    let (lo, hi) = shown
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), e| {
            (l.min(e.value), h.max(e.value))
        });
    let mut out = String::new();
    if skip > 0 {
        out.push('…');
    }
    for (i, e) in shown.iter().enumerate() {
        if t.shifts.iter().any(|s| s.at == skip + i) && i > 0 {
            out.push('│');
        }
        let level = if hi > lo {
            ((e.value - lo) / (hi - lo) * 7.0).round() as usize
        } else {
            3
        };
        out.push(BARS[level.min(7)]);
    }
    out
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Slower => "slower",
        Verdict::Faster => "faster",
        Verdict::Same => "size not bounded away from 0",
        _ => "unranked",
    }
}

/// "change at run 13 (3f2a…, 2026-11-26 12:00): 100.0 ns → 130.0 ns, +30 %
/// [+25 %, +35 %], slower (p 0.010; 12 runs before, 8 after)" and what changed.
pub fn shift_text(h: &History, t: &Track, s: &Shift) -> String {
    let mut out = String::new();
    shift_lines(&mut out, h, t, s);
    out
}

/// As `shift_text`, onto `out`.
fn shift_lines(out: &mut String, h: &History, t: &Track, s: &Shift) {
    let run = &h.runs[s.after_row];
    let _ = writeln!(
        out,
        "  change at run {} ({}, {}): {} → {}, {} [{}, {}], {} (p {:.3}; {} runs before, {} after)",
        s.after_row + 1,
        &run.id[..run.id.len().min(8)],
        run.started_at.format("%Y-%m-%d %H:%M"),
        format_value(t.unit, s.median_before),
        format_value(t.unit, s.median_after),
        percent(s.ratio.ratio - 1.0),
        percent(s.ratio.low - 1.0),
        percent(s.ratio.high - 1.0),
        verdict_word(s.verdict),
        s.pvalue,
        s.before_n,
        s.after_n,
    );
    let changed: Vec<String> = s.changes.iter().map(|c| c.to_string()).collect();
    let _ = match changed.is_empty() {
        true => writeln!(
            out,
            "    what changed: nothing the runs' records show (between runs {} and {})",
            s.before_row + 1,
            s.after_row + 1
        ),
        false => writeln!(out, "    what changed: {}", changed.join(", ")),
    };
}

/// The history for a terminal.
pub fn text(host: &str, h: &History) -> String {
    let mut out = String::new();
    let (Some(first), Some(last)) = (h.runs.first(), h.runs.last()) else {
        let _ = writeln!(out, "History of {host}: no stored runs.");
        return out;
    };
    let _ = writeln!(
        out,
        "History of {host}: {} run(s), {} … {}; change points by E-divisive means with a \
         permutation test (docs/reports.md)",
        h.runs.len(),
        first.started_at.format("%Y-%m-%d %H:%M"),
        last.started_at.format("%Y-%m-%d %H:%M UTC"),
    );
    let width = h
        .tracks
        .iter()
        .map(|t| t.name.chars().count())
        .max()
        .unwrap_or(0);
    let values: Vec<String> = h
        .tracks
        .iter()
        .map(|t| {
            t.entries
                .last()
                .map_or(String::new(), |e| format_value(t.unit, e.value))
        })
        .collect();
    let vwidth = values.iter().map(|v| v.chars().count()).max().unwrap_or(0);
    for (t, newest) in h.tracks.iter().zip(&values) {
        let _ = writeln!(
            out,
            "{:<width$}  {:>4} run(s)  newest {:>vwidth$}  {}",
            t.name,
            t.entries.len(),
            newest,
            sparkline(t),
        );
        for s in &t.shifts {
            shift_lines(&mut out, h, t, s);
        }
    }
    let changed = h.tracks.iter().filter(|t| !t.shifts.is_empty()).count();
    let _ = writeln!(
        out,
        "{changed} of {} benchmark(s) changed. Every figure with its interval: --format csv or json.",
        h.tracks.len()
    );
    out
}

/// The history as JSON: the host, its runs and each track with its
/// figures (and intervals) and change points.
pub fn json(host: &str, h: &History) -> String {
    #[derive(serde::Serialize)]
    struct Doc<'a> {
        host: &'a str,
        #[serde(flatten)]
        history: &'a History,
    }
    let doc = Doc { host, history: h };
    format!(
        "{}\n",
        serde_json::to_string_pretty(&doc).expect("serialisable")
    )
}

/// The history as CSV: one line per figure, in the stored unit, with its
/// interval, and on the first figure after a change point the shift.
pub fn csv(h: &History) -> String {
    let mut out =
        String::from("benchmark,unit,run,started_at,value,low,high,change_point,shift,shift_low,shift_high,what_changed\n");
    for t in &h.tracks {
        for (i, e) in t.entries.iter().enumerate() {
            let run = &h.runs[e.row];
            let opt = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
            let shift = t.shifts.iter().find(|s| s.at == i);
            let (mark, ratio, low, high, what) = match shift {
                Some(s) => (
                    "1".to_string(),
                    s.ratio.ratio.to_string(),
                    s.ratio.low.to_string(),
                    s.ratio.high.to_string(),
                    s.changes
                        .iter()
                        .map(|c| c.to_string())
                        .collect::<Vec<_>>()
                        .join("; "),
                ),
                None => (
                    "0".into(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                ),
            };
            let fields = [
                t.name.clone(),
                t.unit.as_str().to_string(),
                run.id.clone(),
                run.started_at.to_rfc3339(),
                e.value.to_string(),
                opt(e.low),
                opt(e.high),
                mark,
                ratio,
                low,
                high,
                what,
            ];
            let line: Vec<String> = fields.iter().map(|f| field(f)).collect();
            out.push_str(&line.join(","));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};
    use touchstone_analysis::compare::Ratio;
    use touchstone_analysis::history::{Entry, RunRef};
    use touchstone_results::fingerprint::Change;
    use touchstone_results::Unit;

    fn history() -> History {
        let runs: Vec<RunRef> = (0..6)
            .map(|i| RunRef {
                id: format!("run{i:02}abcdef"),
                label: None,
                started_at: Utc.with_ymd_and_hms(2026, 11, 26, 10 + i, 0, 0).unwrap(),
            })
            .collect();
        let entries = (0..6)
            .map(|row| {
                let value = if row < 3 { 100.0 } else { 130.0 };
                Entry {
                    row,
                    value,
                    low: Some(value - 1.0),
                    high: Some(value + 1.0),
                }
            })
            .collect();
        let shift = Shift {
            at: 3,
            before_row: 2,
            after_row: 3,
            before_n: 3,
            after_n: 3,
            median_before: 100.0,
            median_after: 130.0,
            ratio: Ratio {
                ratio: 1.3,
                low: 1.27,
                high: 1.33,
                level: 0.95,
            },
            pvalue: 0.0099,
            verdict: Verdict::Slower,
            changes: vec![Change {
                item: "THP".into(),
                before: "never".into(),
                after: "always".into(),
            }],
        };
        History {
            runs,
            tracks: vec![Track {
                name: "lat_mem_rd/stride:rand/size:64m".into(),
                unit: Unit::Ns,
                entries,
                shifts: vec![shift],
            }],
        }
    }

    #[test]
    fn a_change_point_is_marked_sized_and_named() {
        let h = history();
        assert_eq!(sparkline(&h.tracks[0]), "▁▁▁│███");
        let t = text("node-7", &h);
        assert!(t.contains("History of node-7: 6 run(s)"), "{t}");
        assert!(
            t.contains(
                "change at run 4 (run03abc, 2026-11-26 13:00): 100.0 ns → 130.0 ns, +30 % \
                 [+27 %, +33 %], slower (p 0.010; 3 runs before, 3 after)"
            ),
            "{t}"
        );
        assert!(t.contains("what changed: THP never → always"), "{t}");
        let c = csv(&h);
        assert_eq!(c.lines().count(), 7, "{c}");
        assert!(
            c.lines()
                .nth(4)
                .unwrap()
                .ends_with(",1,1.3,1.27,1.33,THP never → always"),
            "{c}"
        );
        let v: serde_json::Value = serde_json::from_str(&json("node-7", &h)).unwrap();
        assert_eq!(v["host"], "node-7");
        assert_eq!(v["tracks"][0]["shifts"][0]["at"], 3);
    }
}
