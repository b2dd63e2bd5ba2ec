//! A measurement in brief: what the tables and comparisons of many runs
//! read — its key (name, parallel level, unit…), its headline with the
//! summary of its samples, and what qualifies it — without the raw
//! intervals and per-process figures that make up most of a stored
//! measurement. The store keeps one beside each measurement (schema
//! version 4), so a report over a farm's history reads these and never
//! every sample of every run; a [`Figure`] is one cell of such a table.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::Measurement;
use crate::stats::{Statistic, Summary};
use crate::units::Unit;
use crate::warnings::code_moves_headline;

/// A measurement in brief, as the store keeps it beside the measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Brief {
    pub name: String,
    pub benchmark: String,
    pub group: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
    pub parallel: u32,
    pub unit: Unit,
    #[serde(default)]
    pub statistic: Statistic,
    pub summary: Summary,
    /// The codes of the measurement's warnings, in its order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// How many timing intervals the measurement kept, and how many of
    /// them other work preempted: what `moves_headline` reads.
    #[serde(default)]
    pub intervals: usize,
    #[serde(default)]
    pub preempted: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, f64>,
    /// The raw samples: never stored in a brief, filled only when it is
    /// made from the whole measurement (`Brief::with_samples`).
    #[serde(skip)]
    pub samples: Vec<f64>,
}

impl Brief {
    /// The headline figure (as `Measurement::value`: over rounds where
    /// there are rounds).
    pub fn value(&self) -> f64 {
        self.summary.headline(self.statistic)
    }

    /// The brief of `m`, without its samples.
    pub fn of(m: &Measurement) -> Brief {
        Brief {
            name: m.name.clone(),
            benchmark: m.benchmark.clone(),
            group: m.group.clone(),
            params: m.params.clone(),
            parallel: m.parallel,
            unit: m.unit,
            statistic: m.statistic,
            summary: m.summary.clone(),
            warnings: m.warnings.iter().map(|w| w.code.clone()).collect(),
            intervals: m.intervals.len(),
            preempted: m.intervals.iter().filter(|i| i.preemptions > 0).count(),
            invalid: m.invalid.clone(),
            extra: m.extra.clone(),
            samples: Vec::new(),
        }
    }

    /// The brief of `m` with its samples, for comparisons and histograms.
    pub fn with_samples(m: &Measurement) -> Brief {
        Brief {
            samples: m.samples.clone(),
            ..Brief::of(m)
        }
    }

    /// The table cell this brief fills.
    pub fn figure(self) -> Figure {
        let marked = self
            .warnings
            .iter()
            .any(|code| code_moves_headline(code, self.statistic, self.intervals, self.preempted));
        Figure {
            statistic: self.statistic,
            summary: self.summary,
            invalid: self.invalid,
            warnings: self.warnings,
            marked,
            samples: self.samples,
            extra: self.extra,
        }
    }
}

/// One run's figure for one measurement: a cell of a table of runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub statistic: Statistic,
    pub summary: Summary,
    /// Why the headline is not a figure (see `Measurement::invalid`).
    pub invalid: Option<String>,
    /// The codes of the measurement's warnings.
    pub warnings: Vec<String>,
    /// Whether one of them can move the headline (`moves_headline`): the
    /// figure is then marked.
    pub marked: bool,
    /// Every raw sample where they were read (the runs a report compares
    /// or draws); empty where only the brief was.
    pub samples: Vec<f64>,
    pub extra: BTreeMap<String, f64>,
}

impl Figure {
    /// The headline figure (as `Measurement::value`: over rounds where
    /// there are rounds).
    pub fn value(&self) -> f64 {
        self.summary.headline(self.statistic)
    }

    /// The headline when it is a figure; None when marked invalid.
    pub fn valid_value(&self) -> Option<f64> {
        self.invalid.is_none().then(|| self.value())
    }
}

impl Measurement {
    /// This measurement as a table cell, with its samples.
    pub fn figure(&self) -> Figure {
        Brief::with_samples(self).figure()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Interval, Warning};
    use crate::warnings::{moves_headline, WarningCode};

    fn measured(preempted: usize, codes: &[WarningCode]) -> Measurement {
        let samples = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        Measurement {
            params: [("size".to_string(), "1m".to_string())].into(),
            intervals: Interval::synthetic(samples.len(), preempted),
            warnings: codes
                .iter()
                .map(|&c| Warning::new(c, "it happened"))
                .collect(),
            extra: [("l2".to_string(), 1.5)].into(),
            ..Measurement::synthetic("lat_mem_rd/size:1m", "mem_lat", Unit::Ns, samples)
        }
    }

    /// A brief read back from its stored text marks the same figures as
    /// the whole measurement does, and carries no samples.
    #[test]
    fn a_stored_brief_marks_what_the_measurement_marks() {
        for (preempted, codes) in [
            (1, vec![WarningCode::Preempted]),
            (2, vec![WarningCode::Preempted]),
            (0, vec![WarningCode::CiWide]),
            (0, vec![WarningCode::FewRepetitions]),
            (0, vec![]),
        ] {
            let m = measured(preempted, &codes);
            let stored = serde_json::to_string(&Brief::of(&m)).unwrap();
            let read: Brief = serde_json::from_str(&stored).unwrap();
            let figure = read.figure();
            let marked = m.warnings.iter().any(|w| moves_headline(w, &m));
            assert_eq!(figure.marked, marked, "{preempted} {codes:?}");
            assert!(figure.samples.is_empty());
            assert_eq!(figure.value(), m.value());
            assert_eq!(figure.extra, m.extra);
            assert_eq!(m.figure().samples, m.samples);
        }
    }

    /// A brief is a small part of the measurement it stands for.
    #[test]
    fn a_brief_leaves_the_raw_data_behind() {
        let m = measured(1, &[WarningCode::Preempted]);
        let whole = serde_json::to_string(&m).unwrap().len();
        let brief = serde_json::to_string(&Brief::of(&m)).unwrap().len();
        assert!(brief * 2 < whole, "{brief} of {whole}");
    }
}
