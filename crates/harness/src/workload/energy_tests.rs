//! A trial's energy (issue #30): the supervisor snapshots the machine's
//! counters at the window's edges, and the trial and its point carry them
//! as extras; a machine with no readable counter gets no energy field.
//! The counters are a recorded powercap tree read through an injected
//! reader, the package counter wrapping inside the window.

use touchstone_results::convergence::{assess, Rule};

use super::tests::{all_cpus, short, Fake};
use super::trial::run_trial_probed;
use super::*;
use crate::energy::tests::rapl_probe_reading;

fn extra(o: &TrialOutcome, key: &str) -> Option<f64> {
    o.energy.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
}

#[test]
fn a_trial_carries_the_energy_of_its_window_across_a_counter_wrap() {
    let max = 262_143_328_850;
    // Read at w0 then at w1: 1 J, across the wrap.
    let probe = rapl_probe_reading(vec![max - 400_000, 599_999]);
    let mut w = Fake::new(ClientKind::Processes);
    let o = run_trial_probed(&mut w, 2, &all_cpus(), &short(), 0, Some(&probe)).unwrap();
    let joules = extra(&o, "energy_package_j").unwrap();
    let watts = extra(&o, "energy_package_w").unwrap();
    // 1 J over the sampled span, scaled to the window as the CPU clocks are.
    assert!(joules > 0.0 && watts > 0.0, "{:?}", o.energy);
    let window_s = o.window_ns() as f64 / 1e9;
    assert!(
        (joules - watts * window_s).abs() < 1e-9 * joules,
        "{:?}",
        o.energy
    );
    assert!(o.ops > 0);
    let per_op = extra(&o, "energy_package_j_per_op").unwrap();
    assert!((per_op - joules / o.ops as f64).abs() < 1e-12 * per_op);
    // The trial and its point carry them as extras.
    let trial = o.to_trial(false);
    assert_eq!(trial.extra["energy_package_j"], joules);
    assert_eq!(trial.extra["energy_core_j"], 0.0);
    let mut second = o.clone();
    second.throughput = o.throughput * 1.001;
    let outcomes = vec![o.clone(), second];
    let rule = Rule::default();
    let series: Vec<f64> = outcomes.iter().map(|o| o.throughput).collect();
    let a = assess(&rule, &series);
    let names = vec!["op".to_string()];
    let p = point_from_trials(2, &all_cpus(), &outcomes, &a, &rule, &names, false);
    let kept = p.kept_trials().count() as f64;
    assert!((p.extra["energy_package_j"] - kept * joules).abs() < 1e-9);
    assert!((p.extra["energy_package_w"] - watts).abs() < 1e-9 * watts);
    // A kept trial whose reads failed leaves the point without energy.
    let mut failed = o.clone();
    failed.energy.clear();
    let outcomes = vec![o, failed];
    let p = point_from_trials(2, &all_cpus(), &outcomes, &a, &rule, &names, false);
    assert!(p.extra.is_empty(), "{:?}", p.extra);
}

#[test]
fn without_an_energy_source_a_trial_and_its_point_carry_no_energy_field() {
    let mut w = Fake::new(ClientKind::Threads);
    let plan = short();
    assert!(plan.energy.is_empty());
    let o = run_trial(&mut w, 1, &all_cpus(), &plan, 0).unwrap();
    assert!(o.energy.is_empty(), "{:?}", o.energy);
    assert!(o.to_trial(false).extra.is_empty());
    let json = serde_json::to_string(&o.to_trial(false)).unwrap();
    assert!(!json.contains("energy"), "{json}");
}
