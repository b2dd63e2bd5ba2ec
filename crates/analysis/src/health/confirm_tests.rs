//! Findings confirmed by a second measurement, with an injected measurement
//! source standing in for `touchstone check`'s re-run.

use std::cell::RefCell;

use chrono::{Duration, TimeZone, Utc};
use touchstone_results::{Run, Unit};

use super::*;
use crate::testdata::{meas, run};

const LAT: &str = "lat_mem_rd/stride:rand/size:64m";

/// A run of node-7 at `hour` whose lat_mem_rd figure is `ns` and dhrystone
/// figure `dps` (with its derived dmips), parameters as the catalogue sets them.
fn at(hour: i64, ns: f64, dps: f64) -> Run {
    let mut lat = meas(LAT, "mem", Unit::Ns, ns);
    lat.params = [("stride", "rand"), ("size", "64m")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut r = run(
        &format!("node-7-{hour}"),
        "node-7",
        vec![
            lat,
            meas("dhrystone", "cpu", Unit::OpsPerSec, dps),
            meas("dhrystone/dmips", "cpu", Unit::OpsPerSec, dps / 1757.0),
        ],
    );
    r.started_at = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap() + Duration::hours(hour);
    r
}

fn history() -> Vec<Run> {
    (0..12)
        .map(|i| {
            let w = 1.0 + 0.005 * ((i * 7 % 5) as f64 - 2.0) / 2.0;
            at(i, 92.0 * w, 60e6 * w)
        })
        .collect()
}

/// `assess_confirmed` of `first` with a source that returns `second` and
/// records the specs it was asked for.
fn checked(first: &Run, second: Option<Run>) -> (Assessment, Option<Vec<String>>) {
    let own = history();
    let refs: Vec<&Run> = own.iter().collect();
    let asked = RefCell::new(None);
    let a = assess_confirmed(first, &refs, &[], |specs| {
        *asked.borrow_mut() = Some(specs.to_vec());
        second
    });
    (a, asked.into_inner())
}

#[test]
fn a_slow_first_measurement_that_the_second_does_not_repeat_is_healthy() {
    // dhrystone 16 % slow once (the false alarm of the quiet sitting), then normal.
    let (a, asked) = checked(&at(30, 92.0, 50e6), Some(at(31, 92.1, 60.1e6)));
    assert_eq!(
        asked.unwrap(),
        ["dhrystone"],
        "dmips is measured by its family's case"
    );
    assert!(!a.degraded(), "{:?}", a.findings());
    assert!(a.findings().is_empty());
    let dismissed: Vec<&str> = a.dismissed().iter().map(|j| j.name.as_str()).collect();
    assert_eq!(dismissed, ["dhrystone", "dhrystone/dmips"]);
    assert!(a
        .judged
        .iter()
        .all(|j| j.recheck.is_none() || j.dismissed()));
}

#[test]
fn a_slowdown_both_measurements_show_is_degraded() {
    let (a, asked) = checked(&at(30, 120.0, 60e6), Some(at(31, 119.0, 60e6)));
    assert_eq!(asked.unwrap(), ["lat_mem_rd/stride:rand/size:64m"]);
    assert!(a.degraded());
    let f = a.findings();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].name, LAT);
    let again = f[0].recheck.as_ref().expect("re-measured");
    assert!(again.degraded() && (again.value - 119.0).abs() < 1e-9);
    assert!(a.dismissed().is_empty());
}

#[test]
fn a_healthy_run_is_not_measured_again_and_a_failed_re_measurement_keeps_the_finding() {
    let (a, asked) = checked(&at(30, 92.0, 60e6), Some(at(31, 200.0, 1e6)));
    assert!(asked.is_none(), "nothing to confirm: no second measurement");
    assert!(!a.degraded());
    // The source could not measure: the first judgement stands.
    let (a, asked) = checked(&at(30, 120.0, 60e6), None);
    assert!(asked.is_some());
    assert!(a.degraded());
    assert!(a.findings()[0].recheck.is_none());
}
