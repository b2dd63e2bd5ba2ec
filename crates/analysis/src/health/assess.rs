//! The health rule (`health`) applied to one run: each of its figures
//! against the host's own earlier runs and against the newest run of each
//! other host of the same hardware, with what could not be judged and why.
//! `touchstone check` renders what this returns.

use std::collections::BTreeMap;

use serde::Serialize;
use touchstone_results::{Measurement, Run, Statistic, Unit};

use super::{judge, own_reference, own_spread_bound, Against, Headline, Judgement};
use crate::compare::{median_interval, PER_MEDIAN_LEVEL};
use crate::history::{curve_peaks, Entry};
use crate::outliers::{host_key, Hardware, MIN_HOSTS};

/// One figure of the judged run against one reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judged {
    /// The measurement's label (×N for several processes) or a curve
    /// peak's name (see `history::curve_peaks`).
    pub name: String,
    pub unit: Unit,
    pub judgement: Judgement,
    /// The same figure measured again (a second run, fresh processes)
    /// judged against the same reference, when `judgement` was a finding
    /// and `confirm::assess_confirmed` re-measured it; None otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recheck: Option<Judgement>,
}

impl Judged {
    /// A finding that counts: degraded, and degraded again when re-measured
    /// (one not re-measured counts on its first judgement alone).
    pub fn counts(&self) -> bool {
        self.judgement.degraded() && self.recheck.as_ref().is_none_or(Judgement::degraded)
    }

    /// A finding the re-measurement did not confirm: a false alarm dismissed.
    pub fn dismissed(&self) -> bool {
        self.judgement.degraded() && !self.counts()
    }
}

/// A figure a reference could not judge, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotJudged {
    pub name: String,
    pub against: Against,
    pub why: String,
}

/// One run judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assessment {
    pub run: String,
    pub host: String,
    pub hardware: Hardware,
    /// The host's runs before the judged one, and the other hosts of its
    /// hardware, that the store holds.
    pub own_runs: usize,
    pub class_hosts: usize,
    pub judged: Vec<Judged>,
    pub not_judged: Vec<NotJudged>,
}

impl Assessment {
    /// The judgements that are findings (both conditions hold, and hold
    /// again when re-measured: `Judged::counts`), the strongest first.
    pub fn findings(&self) -> Vec<&Judged> {
        let mut f: Vec<&Judged> = self.judged.iter().filter(|j| j.counts()).collect();
        f.sort_by(|a, b| b.judgement.score.total_cmp(&a.judgement.score));
        f
    }

    /// The first measurement's findings that its re-measurement dismissed.
    pub fn dismissed(&self) -> Vec<&Judged> {
        self.judged.iter().filter(|j| j.dismissed()).collect()
    }

    pub fn degraded(&self) -> bool {
        self.judged.iter().any(Judged::counts)
    }
}

/// A figure of a run: its name, unit and headline with its interval.
pub struct Figure {
    pub name: String,
    pub unit: Unit,
    pub headline: Headline,
}

fn label(m: &Measurement) -> String {
    match m.parallel {
        1 => m.name.clone(),
        p => format!("{} ×{p}", m.name),
    }
}

/// A measurement's headline with its interval at 97.5 %: the median's
/// order-statistic interval, carried over to a min or max headline in
/// proportion (as `compare::ratio` does).
pub fn headline(m: &Measurement) -> Headline {
    let (low, high, level) = median_interval(&m.figure(), PER_MEDIAN_LEVEL);
    let value = m.value();
    let scale = match m.statistic {
        Statistic::Median => 1.0,
        _ if m.summary.median > 0.0 => value / m.summary.median,
        _ => 1.0,
    };
    Headline {
        value,
        low: (low * scale).min(value),
        high: (high * scale).max(value),
        level,
    }
}

/// Every valid figure of a run with a unit that ranks, and its curves'
/// peaks (the figures `check` judges and `history` tracks).
pub fn figures(run: &Run) -> Vec<Figure> {
    let mut out: Vec<Figure> = run
        .measurements
        .iter()
        .filter(|m| m.valid_value().is_some() && m.unit.higher_is_better().is_some())
        .map(|m| Figure {
            name: label(m),
            unit: m.unit,
            headline: headline(m),
        })
        .collect();
    out.extend(curve_peaks(run).into_iter().map(|(name, e)| Figure {
        name,
        unit: Unit::OpsPerSec,
        headline: peak_headline(&e),
    }));
    out
}

fn peak_headline(e: &Entry) -> Headline {
    Headline {
        value: e.value,
        low: e.low.unwrap_or(e.value),
        high: e.high.unwrap_or(e.value),
        level: PER_MEDIAN_LEVEL,
    }
}

/// Each figure's value in a run, by name (the later of a name measured twice).
fn values(run: &Run) -> BTreeMap<String, f64> {
    figures(run)
        .into_iter()
        .map(|f| (f.name, f.headline.value))
        .collect()
}

/// Judge `run` against `own` (the host's earlier runs, any order) and
/// `class` (runs of other hosts; those of other hardware are ignored, and
/// each host counts once, by its newest run).
pub fn assess(run: &Run, own: &[&Run], class: &[&Run]) -> Assessment {
    let me = host_key(run);
    let hardware = Hardware::of(&run.host);
    let mut own: Vec<&Run> = own
        .iter()
        .copied()
        .filter(|r| r.id != run.id && host_key(r) == me && r.started_at <= run.started_at)
        .collect();
    own.sort_by_key(|r| r.started_at);
    let mut newest: BTreeMap<String, &Run> = BTreeMap::new();
    for r in class
        .iter()
        .copied()
        .filter(|r| host_key(r) != me && Hardware::of(&r.host) == hardware)
    {
        let e = newest.entry(host_key(r)).or_insert(r);
        if r.started_at > e.started_at {
            *e = r;
        }
    }
    let own_values: Vec<BTreeMap<String, f64>> = own.iter().map(|r| values(r)).collect();
    let class_values: Vec<BTreeMap<String, f64>> = newest.values().map(|r| values(r)).collect();
    let mut out = Assessment {
        run: run.id.clone(),
        host: me,
        hardware,
        own_runs: own.len(),
        class_hosts: newest.len(),
        judged: Vec::new(),
        not_judged: Vec::new(),
    };
    for f in figures(run) {
        let series: Vec<f64> = own_values
            .iter()
            .filter_map(|v| v.get(&f.name).copied())
            .collect();
        let mut own_spread = None;
        match own_reference(&series) {
            Ok(reference) => {
                own_spread = own_spread_bound(reference);
                if let Some(j) = judge(&f.headline, f.unit, reference, Against::History, None) {
                    out.judged.push(Judged {
                        name: f.name.clone(),
                        unit: f.unit,
                        judgement: j,
                        recheck: None,
                    });
                }
            }
            Err(why) => out.not_judged.push(NotJudged {
                name: f.name.clone(),
                against: Against::History,
                why,
            }),
        }
        let peers: Vec<f64> = class_values
            .iter()
            .filter_map(|v| v.get(&f.name).copied())
            .collect();
        if peers.len() < MIN_HOSTS {
            out.not_judged.push(NotJudged {
                name: f.name.clone(),
                against: Against::Class,
                why: format!(
                    "{} other host(s) of its hardware measured it (need {MIN_HOSTS})",
                    peers.len()
                ),
            });
        } else if let Some(j) = judge(&f.headline, f.unit, &peers, Against::Class, own_spread) {
            out.judged.push(Judged {
                name: f.name,
                unit: f.unit,
                judgement: j,
                recheck: None,
            });
        }
    }
    out
}

#[cfg(test)]
#[path = "assess_tests.rs"]
mod tests;
