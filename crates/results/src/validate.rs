//! What an imported run must satisfy before it is stored: the checks of
//! docs/results-format.md ("Limits and checks on import"). A document from
//! another machine is untrusted input; a run that passes holds figures the
//! reports can compute with (finite, non-negative samples; summaries that
//! are those of its samples; intervals that end after they start; counts
//! within bounds) and strings of reasonable length.
//!
//! Summaries are recomputed from the samples and the stored ones replaced;
//! a stored summary that disagrees beyond rounding (`SUMMARY_TOLERANCE`)
//! refuses the run. The same for load curves: latency figures are
//! recomputed from their histogram, which is decoded within bounds first
//! (an HdrHistogram header can ask for gigabytes).
//!
//! Errors name where the problem is as a path of field names and indices
//! (`runs[2].measurements[5].samples[3]`); they never echo the document's
//! strings, which may be huge or hold terminal escape sequences.

use std::io::Read;

use base64::Engine as _;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;

use crate::curve::{
    CpuSplit, Curve, EncodedHistogram, Latency, Point, ServiceDemand, Trial, HISTOGRAM_HIGHEST_NS,
    HISTOGRAM_LOWEST_NS, HISTOGRAM_SIGFIG,
};
use crate::model::{Baseline, Interval, Measurement, Run, Warning};
use crate::stats::{Statistic, Summary};

/// `[("f", x.f), …]`: figures of `x` named as their fields are, which is
/// also their name in the results format.
macro_rules! named_fields {
    ($x:ident: $($field:ident),* $(,)?) => {
        [$((stringify!($field), $x.$field)),*]
    };
}

/// A run id: 1 to 128 bytes of ASCII letters, digits, '-', '_' and '.'
/// (not "." or ".."): no path separators, spaces or control characters.
pub const MAX_ID_BYTES: usize = 128;
/// A run's label.
pub const MAX_LABEL_BYTES: usize = 1024;
/// A host name (a fully qualified DNS name is at most 253).
pub const MAX_HOSTNAME_BYTES: usize = 255;
/// Names: measurement, family, group, workload, operation, parameter keys
/// and values, warning codes, host facts (OS, kernel, CPU model, …). Room
/// for `app/` and a file name of 255 bytes (`touchstone app`).
pub const MAX_NAME_BYTES: usize = 512;
/// Free text: a run's reason, warning messages and remedies, selections,
/// extra host facts.
pub const MAX_TEXT_BYTES: usize = 16 * 1024;
/// A latency histogram's base64 text (ours are a few kB).
pub const MAX_HISTOGRAM_BYTES: usize = 1 << 20;
/// A decoded histogram's uncompressed encoding.
const MAX_HISTOGRAM_DECODED_BYTES: u64 = 4 << 20;
/// Processes of a measurement, clients of a load point, CPUs.
pub const MAX_PARALLEL: u32 = 65_536;
/// Repetitions asked for.
pub const MAX_REPETITIONS: u32 = 100_000;
/// Entries of any one list (samples, intervals, points, trials, …).
pub const MAX_ITEMS: usize = 1_000_000;
/// Entries of a map or short list (parameters, extras, warnings, CPU flags).
pub const MAX_ENTRIES: usize = 4096;
/// How far a stored summary figure may lie from the one recomputed from the
/// samples, as a fraction of the largest sample's magnitude: rounding by a
/// writer that prints fewer digits, not a different figure.
pub const SUMMARY_TOLERANCE: f64 = 1e-6;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct Invalid {
    /// Where, e.g. `runs[0].measurements[3].samples[2]`.
    pub path: String,
    pub message: String,
}

type Checked = Result<(), Invalid>;

fn bad(path: impl Into<String>, message: impl Into<String>) -> Invalid {
    Invalid {
        path: path.into(),
        message: message.into(),
    }
}

/// Check run `index` of a document and replace its summaries by those
/// recomputed from its samples. Nothing is changed when it is refused.
pub fn run(index: usize, r: &mut Run) -> Checked {
    let at = format!("runs[{index}]");
    let mut checked = r.clone();
    check_run(&at, &mut checked)?;
    *r = checked;
    Ok(())
}

fn check_run(at: &str, r: &mut Run) -> Checked {
    id(&format!("{at}.id"), &r.id)?;
    if let Some(l) = &r.label {
        text(&format!("{at}.label"), l, MAX_LABEL_BYTES)?;
    }
    host(&format!("{at}.host"), &r.host)?;
    let t = &r.tool;
    for (f, v) in [
        ("name", &t.name),
        ("version", &t.version),
        ("profile", &t.profile),
    ] {
        text(&format!("{at}.tool.{f}"), v, MAX_NAME_BYTES)?;
    }
    if let Some(v) = &t.rustc {
        text(&format!("{at}.tool.rustc"), v, MAX_NAME_BYTES)?;
    }
    let c = &r.clock;
    text(&format!("{at}.clock.source"), &c.source, MAX_NAME_BYTES)?;
    for (f, v) in [
        ("resolution_ns", c.resolution_ns),
        ("declared_resolution_ns", c.declared_resolution_ns),
        ("read_cost_ns", c.read_cost_ns),
    ] {
        non_negative(&format!("{at}.clock.{f}"), v)?;
    }
    let o = &r.options;
    each(
        &format!("{at}.options.selection"),
        &o.selection,
        MAX_ENTRIES,
        |at, s| text(at, s, MAX_TEXT_BYTES),
    )?;
    within(
        &format!("{at}.options.repetitions"),
        o.repetitions as u64,
        1,
        MAX_REPETITIONS as u64,
    )?;
    within(
        &format!("{at}.options.rounds"),
        o.rounds as u64,
        1,
        MAX_REPETITIONS as u64,
    )?;
    each(
        &format!("{at}.options.parallel"),
        &o.parallel,
        MAX_ENTRIES,
        |at, &p| within(at, p as u64, 1, MAX_PARALLEL as u64),
    )?;
    if let Some(w) = &o.workload {
        let at = format!("{at}.options.workload");
        each(&format!("{at}.cpus"), &w.cpus, MAX_ENTRIES, |at, &k| {
            within(at, k as u64, 1, MAX_PARALLEL as u64)
        })?;
        w.converge
            .validate()
            .map_err(|m| bad(format!("{at}.converge"), m))?;
        if w.window_ns == 0 {
            return Err(bad(format!("{at}.window_ns"), "a window of 0 ns"));
        }
    }
    if let Some(reason) = &r.reason {
        text(&format!("{at}.reason"), reason, MAX_TEXT_BYTES)?;
    }
    warnings(&format!("{at}.warnings"), &r.warnings)?;
    each(&format!("{at}.notes"), &r.notes, MAX_ENTRIES, |at, n| {
        text(at, n, MAX_TEXT_BYTES)
    })?;
    each(
        &format!("{at}.measurements"),
        &mut r.measurements,
        MAX_ITEMS,
        measurement,
    )?;
    each(&format!("{at}.curves"), &r.curves, MAX_ITEMS, curve)
}

/// A run id: it names a run in commands and may one day name a file.
pub fn id(at: &str, v: &str) -> Checked {
    if v.is_empty() {
        return Err(bad(at, "an empty run id"));
    }
    if v.len() > MAX_ID_BYTES {
        return Err(bad(
            at,
            format!("a run id of {} bytes (at most {MAX_ID_BYTES})", v.len()),
        ));
    }
    if v == "." || v == ".." {
        return Err(bad(at, "a run id of '.' or '..'"));
    }
    if let Some(c) = v
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        let what = match c {
            '/' | '\\' => "a path separator".to_string(),
            c if c.is_control() => format!("the control character U+{:04X}", c as u32),
            c => format!("the character U+{:04X}", c as u32),
        };
        return Err(bad(
            at,
            format!("a run id holding {what} (ids are ASCII letters, digits, '-', '_' and '.')"),
        ));
    }
    Ok(())
}

fn text(at: &str, v: &str, max: usize) -> Checked {
    if v.len() > max {
        return Err(bad(
            at,
            format!("{} bytes of text (at most {max})", v.len()),
        ));
    }
    Ok(())
}

fn name(at: &str, v: &str) -> Checked {
    if v.is_empty() {
        return Err(bad(at, "an empty name"));
    }
    text(at, v, MAX_NAME_BYTES)
}

fn count(at: &str, n: usize, max: usize) -> Checked {
    if n > max {
        return Err(bad(at, format!("{n} entries (at most {max})")));
    }
    Ok(())
}

/// A list of at most `max` items, each checked where it stands (`{at}[{i}]`).
fn each<I>(
    at: &str,
    items: I,
    max: usize,
    mut check: impl FnMut(&str, I::Item) -> Checked,
) -> Checked
where
    I: IntoIterator,
    I::IntoIter: ExactSizeIterator,
{
    let items = items.into_iter();
    count(at, items.len(), max)?;
    for (i, item) in items.enumerate() {
        check(&format!("{at}[{i}]"), item)?;
    }
    Ok(())
}

fn within(at: &str, v: u64, lo: u64, hi: u64) -> Checked {
    if v < lo || v > hi {
        return Err(bad(at, format!("{v} is outside {lo}..={hi}")));
    }
    Ok(())
}

fn finite(at: &str, v: f64) -> Checked {
    if !v.is_finite() {
        return Err(bad(at, format!("{v} is not a finite number")));
    }
    Ok(())
}

fn non_negative(at: &str, v: f64) -> Checked {
    finite(at, v)?;
    if v < 0.0 {
        return Err(bad(at, format!("{v} is negative")));
    }
    Ok(())
}

fn fraction(at: &str, v: f64) -> Checked {
    non_negative(at, v)?;
    if v > 1.0 + SUMMARY_TOLERANCE {
        return Err(bad(at, format!("{v} is not a fraction (0 to 1)")));
    }
    Ok(())
}

fn params(at: &str, p: &std::collections::BTreeMap<String, String>) -> Checked {
    count(at, p.len(), MAX_ENTRIES)?;
    for (k, v) in p {
        name(&format!("{at} (a key)"), k)?;
        text(&format!("{at} (a value)"), v, MAX_NAME_BYTES)?;
    }
    Ok(())
}

fn warnings(at: &str, ws: &[Warning]) -> Checked {
    each(at, ws, MAX_ENTRIES, |at, w| {
        name(&format!("{at}.code"), &w.code)?;
        text(&format!("{at}.message"), &w.message, MAX_TEXT_BYTES)?;
        text(&format!("{at}.remedy"), &w.remedy, MAX_TEXT_BYTES)
    })
}

fn host(at: &str, h: &crate::host::Host) -> Checked {
    text(&format!("{at}.hostname"), &h.hostname, MAX_HOSTNAME_BYTES)?;
    if let Some(id) = &h.machine_id {
        if !crate::host::is_machine_id(id) {
            return Err(bad(
                format!("{at}.machine_id"),
                "not 32 lowercase hex digits (machine-id(5))",
            ));
        }
    }
    let short = [
        ("os", Some(&h.os)),
        ("kernel", Some(&h.kernel)),
        ("arch", Some(&h.arch)),
        ("distribution", h.distribution.as_ref()),
        ("virtualization", h.virtualization.as_ref()),
        ("container", h.container.as_ref()),
        ("governor", h.governor.as_ref()),
        ("cpu.model", Some(&h.cpu.model)),
        ("cpu.vendor", h.cpu.vendor.as_ref()),
    ];
    for (f, v) in short {
        if let Some(v) = v {
            text(&format!("{at}.{f}"), v, MAX_NAME_BYTES)?;
        }
    }
    each(
        &format!("{at}.cpu.flags"),
        &h.cpu.flags,
        MAX_ENTRIES,
        |at, f| text(at, f, MAX_NAME_BYTES),
    )?;
    if let Some(m) = h.cpu.mhz {
        non_negative(&format!("{at}.cpu.mhz"), m)?;
    }
    if let Some(q) = h.cpu_quota {
        non_negative(&format!("{at}.cpu_quota"), q)?;
    }
    if let Some(l) = h.loadavg {
        for (i, v) in l.iter().enumerate() {
            non_negative(&format!("{at}.loadavg[{i}]"), *v)?;
        }
    }
    each(&format!("{at}.caches"), &h.caches, MAX_ENTRIES, |at, c| {
        text(&format!("{at}.kind"), &c.kind, MAX_NAME_BYTES)
    })?;
    count(&format!("{at}.extra"), h.extra.len(), MAX_ENTRIES)?;
    for (k, v) in &h.extra {
        text(&format!("{at}.extra (a key)"), k, MAX_NAME_BYTES)?;
        text(&format!("{at}.extra (a value)"), v, MAX_TEXT_BYTES)?;
    }
    if let Some(f) = &h.fingerprint {
        fingerprint(&format!("{at}.fingerprint"), f)?;
    }
    Ok(())
}

fn fingerprint(at: &str, f: &crate::fingerprint::Fingerprint) -> Checked {
    for (field, _, v) in f.items() {
        // The command line is free text; the other items are short.
        let max = if field == "kernel_cmdline" {
            MAX_TEXT_BYTES
        } else {
            MAX_NAME_BYTES
        };
        text(&format!("{at}.{field}"), v, max)?;
    }
    count(
        &format!("{at}.mitigations"),
        f.mitigations.len(),
        MAX_ENTRIES,
    )?;
    for (k, v) in &f.mitigations {
        name(&format!("{at}.mitigations (a key)"), k)?;
        text(&format!("{at}.mitigations.{k}"), v, MAX_TEXT_BYTES)?;
    }
    Ok(())
}

fn figures(at: &str, xs: &[f64]) -> Checked {
    each(at, xs, MAX_ITEMS, |at, &x| non_negative(at, x))
}

fn measurement(at: &str, m: &mut Measurement) -> Checked {
    name(&format!("{at}.name"), &m.name)?;
    name(&format!("{at}.benchmark"), &m.benchmark)?;
    name(&format!("{at}.group"), &m.group)?;
    params(&format!("{at}.params"), &m.params)?;
    within(
        &format!("{at}.parallel"),
        m.parallel as u64,
        1,
        MAX_PARALLEL as u64,
    )?;
    if m.samples.is_empty() {
        return Err(bad(format!("{at}.samples"), "no samples"));
    }
    figures(&format!("{at}.samples"), &m.samples)?;
    if !m.per_process.is_empty() {
        if m.per_process.len() != m.parallel as usize {
            return Err(bad(
                format!("{at}.per_process"),
                format!(
                    "figures of {} processes for a parallelism of {}",
                    m.per_process.len(),
                    m.parallel
                ),
            ));
        }
        for (p, xs) in m.per_process.iter().enumerate() {
            let at = format!("{at}.per_process[{p}]");
            figures(&at, xs)?;
            if xs.len() < m.samples.len() {
                return Err(bad(
                    at,
                    format!(
                        "{} figures for {} samples (each sample combines one of every process)",
                        xs.len(),
                        m.samples.len()
                    ),
                ));
            }
        }
    }
    each(
        &format!("{at}.intervals"),
        &m.intervals,
        MAX_ITEMS,
        |at, iv| interval(at, iv, m.parallel),
    )?;
    // A measurement derived from others (no intervals of its own) may
    // headline a figure its samples were computed around (e.g. lat_mem_rd's
    // level latency among the staircase's points): its median is kept when
    // within the samples' range.
    let derived = m.intervals.is_empty();
    rounds(&format!("{at}.rounds"), &m.rounds, m.samples.len())?;
    m.summary = summary(
        &format!("{at}.summary"),
        &m.summary,
        (&m.samples, &m.rounds, m.statistic),
        derived,
    )?;
    if let Some(b) = &mut m.baseline {
        baseline(&format!("{at}.baseline"), b)?;
    }
    warnings(&format!("{at}.warnings"), &m.warnings)?;
    count(&format!("{at}.extra"), m.extra.len(), MAX_ENTRIES)?;
    for (k, &v) in &m.extra {
        name(&format!("{at}.extra (a key)"), k)?;
        finite(&format!("{at}.extra (a value)"), v)?;
        // CPU time and utilisation (`cpu_s_per_mb_…`, `cpu_us_per_op_…`,
        // `cpu_pct_…`) cannot be below zero.
        if k.starts_with("cpu_") {
            non_negative(&format!("{at}.extra.{k}"), v)?;
        }
    }
    Ok(())
}

fn interval(at: &str, iv: &Interval, parallel: u32) -> Checked {
    if iv.end_ns <= iv.start_ns {
        return Err(bad(
            at,
            format!(
                "ends at {} ns, not after its start at {} ns",
                iv.end_ns, iv.start_ns
            ),
        ));
    }
    if iv.process >= parallel {
        return Err(bad(
            format!("{at}.process"),
            format!("process {} of a measurement of {parallel}", iv.process),
        ));
    }
    if iv.iterations == 0 {
        return Err(bad(format!("{at}.iterations"), "0 iterations"));
    }
    Ok(())
}

fn baseline(at: &str, b: &mut Baseline) -> Checked {
    name(&format!("{at}.name"), &b.name)?;
    if b.samples.is_empty() {
        // Older documents kept only the summary: its figures must at least
        // be figures.
        let s = &b.summary;
        for (f, v) in summary_fields(s) {
            non_negative(&format!("{at}.summary.{f}"), v)?;
        }
        return Ok(());
    }
    figures(&format!("{at}.samples"), &b.samples)?;
    rounds(&format!("{at}.rounds"), &b.rounds, b.samples.len())?;
    b.summary = summary(
        &format!("{at}.summary"),
        &b.summary,
        (&b.samples, &b.rounds, Statistic::Median),
        false,
    )?;
    Ok(())
}

/// The round of each sample: none, or one per sample.
fn rounds(at: &str, rounds: &[u32], samples: usize) -> Checked {
    if !rounds.is_empty() && rounds.len() != samples {
        return Err(bad(
            at,
            format!("{} rounds for {samples} samples", rounds.len()),
        ));
    }
    Ok(())
}

fn summary_fields(s: &Summary) -> [(&'static str, f64); 9] {
    named_fields!(s: median, min, max, q1, q3, mean, ci_low, ci_high, ci_level)
}

/// The summary of `samples` (with the round of each and the statistic
/// each round is summarised by), when `stored` agrees with it to rounding
/// (`keep_median`: the stored median is kept if within the samples' range).
fn summary(
    at: &str,
    stored: &Summary,
    (samples, rounds, stat): (&[f64], &[u32], Statistic),
    keep_median: bool,
) -> Result<Summary, Invalid> {
    let mut s = Summary::of_rounds(samples, rounds, stat)
        .ok_or_else(|| bad(at, "no finite samples to summarise"))?;
    if stored.n != s.n {
        return Err(bad(
            format!("{at}.n"),
            format!("{} samples counted, {} present", stored.n, s.n),
        ));
    }
    let scale = samples.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let tol = SUMMARY_TOLERANCE * scale;
    let near = |a: f64, b: f64, tol: f64| a.is_finite() && (a - b).abs() <= tol;
    if keep_median {
        let m = stored.median;
        if !(m.is_finite() && m >= s.min - tol && m <= s.max + tol) {
            return Err(bad(
                format!("{at}.median"),
                format!("{m} lies outside its samples ({} to {})", s.min, s.max),
            ));
        }
        s.median = m;
    }
    for ((f, want), (_, got)) in summary_fields(&s).into_iter().zip(summary_fields(stored)) {
        let tol = if f == "ci_level" {
            SUMMARY_TOLERANCE
        } else {
            tol
        };
        if !near(got, want, tol) {
            return Err(bad(
                format!("{at}.{f}"),
                format!("{got} disagrees with its samples, which give {want}"),
            ));
        }
    }
    // Not the samples' to give: the stored run-level term stays.
    if let (Some(w), Some(g)) = (s.rounds.as_mut(), stored.rounds.as_ref()) {
        w.keep_run_level_of(g)
            .map_err(|e| bad(format!("{at}.rounds.run_level"), e))?;
    }
    match (&s.rounds, &stored.rounds) {
        (None, None) => {}
        (Some(want), Some(got)) => {
            let pairs = [
                ("headline", want.headline, got.headline),
                ("low", want.low, got.low),
                ("high", want.high, got.high),
                ("level", want.level, got.level),
            ];
            let figures = want.figures.len() == got.figures.len()
                && want
                    .figures
                    .iter()
                    .zip(&got.figures)
                    .all(|(a, b)| near(*b, *a, tol));
            if !figures {
                return Err(bad(
                    format!("{at}.rounds.figures"),
                    format!(
                        "{:?} disagree with its samples, which give {:?}",
                        got.figures, want.figures
                    ),
                ));
            }
            for (f, want, got) in pairs {
                if !near(got, want, tol.max(SUMMARY_TOLERANCE * want.abs())) {
                    return Err(bad(
                        format!("{at}.rounds.{f}"),
                        format!("{got} disagrees with its samples, which give {want}"),
                    ));
                }
            }
        }
        (Some(_), None) => {
            return Err(bad(
                format!("{at}.rounds"),
                "missing, though the samples come from several rounds",
            ))
        }
        (None, Some(_)) => {
            return Err(bad(
                format!("{at}.rounds"),
                "present, though the samples come from one round",
            ))
        }
    }
    Ok(s)
}

mod curve;
use curve::curve;
pub use curve::decode_histogram;

#[cfg(test)]
mod tests;
