//! A finding is confirmed before it counts: the benchmarks behind the
//! first assessment's findings are measured again — a second, independent
//! measurement in fresh processes — and judged against the same references;
//! a figure stays a finding only if the re-measurement is degraded too
//! (significant and beyond the spread, `health`'s two conditions). One
//! measurement that a burst of other work or an unlucky placement slowed
//! (on the development VM, 1 check in 20 read dhrystone 16 % slow) does
//! not repeat in the next; a slow node does. The measuring itself is the
//! caller's (`touchstone check` runs the named benchmarks), so this stays
//! a pure function of what the measurements return.

use touchstone_results::{Measurement, Run};

use super::assess::{assess, Assessment};

/// The spec that measures `m` again: its name where that is its family and
/// `key:value` parameters, else its family and parameters (a derived figure
/// such as `dhrystone/dmips` comes from its family's case).
pub fn spec_of(m: &Measurement) -> String {
    let mut parts = m.name.split('/');
    if parts.next() == Some(m.benchmark.as_str()) && parts.all(|p| p.contains(':')) {
        return m.name.clone();
    }
    let mut spec = m.benchmark.clone();
    for (k, v) in &m.params {
        spec.push_str(&format!("/{k}:{v}"));
    }
    spec
}

/// The specs to measure again for `first`'s findings, each once, in the
/// order of the run's measurements (a curve's peak has none: it is not
/// re-measured and counts on its first judgement).
pub fn to_remeasure(run: &Run, first: &Assessment) -> Vec<String> {
    let flagged: Vec<&str> = first
        .judged
        .iter()
        .filter(|j| j.judgement.degraded())
        .map(|j| j.name.as_str())
        .collect();
    let mut specs: Vec<String> = Vec::new();
    for m in &run.measurements {
        let label = match m.parallel {
            1 => m.name.clone(),
            p => format!("{} ×{p}", m.name),
        };
        let spec = spec_of(m);
        if flagged.contains(&label.as_str()) && !specs.contains(&spec) {
            specs.push(spec);
        }
    }
    specs
}

/// `run` judged as `assess` does, then each finding confirmed by
/// `remeasure` (given the specs to measure, it returns a new run of them,
/// or None when it could not measure): a finding whose figure the new run
/// judges degraded against the same references stays one; one it judges
/// healthy is dismissed (`Judged::dismissed`); one the new run lacks counts
/// on its first judgement. `remeasure` is called at most once, and only
/// when there is a finding to confirm.
pub fn assess_confirmed<F>(run: &Run, own: &[&Run], class: &[&Run], remeasure: F) -> Assessment
where
    F: FnOnce(&[String]) -> Option<Run>,
{
    let mut first = assess(run, own, class);
    let specs = to_remeasure(run, &first);
    if specs.is_empty() {
        return first;
    }
    let Some(again) = remeasure(&specs) else {
        return first;
    };
    // The re-measurement is judged against the references of the first,
    // not against the first itself.
    let own: Vec<&Run> = own.iter().copied().filter(|r| r.id != run.id).collect();
    let second = assess(&again, &own, class);
    for j in first.judged.iter_mut().filter(|j| j.judgement.degraded()) {
        j.recheck = second
            .judged
            .iter()
            .find(|s| s.name == j.name && s.judgement.against == j.judgement.against)
            .map(|s| s.judgement.clone());
    }
    first
}

#[cfg(test)]
#[path = "confirm_tests.rs"]
mod tests;
