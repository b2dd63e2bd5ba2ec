use super::*;
use crate::testing::{reaped, short_trial, trial_is_sound};
use touchstone_harness::workload::cpu::usable_cpus;
use touchstone_harness::workload::run_trial;

fn workload(mix: &str, size: usize) -> LoadedLatency {
    LoadedLatency {
        pattern: pattern(mix).unwrap(),
        size,
        quick: true,
        chain: None,
        control: None,
        generators: None,
    }
}

#[test]
fn levels_run_from_idle_to_no_delay() {
    assert_eq!(delay_ns(1), None);
    assert_eq!(delay_ns(2), Some(DELAYS_NS[0]));
    assert_eq!(delay_ns(LEVELS), Some(0));
    // Delays shrink level by level: the injection rises with the load.
    assert!(DELAYS_NS.windows(2).all(|d| d[0] > d[1]));
    let w = workload("rd", 1 << 20);
    assert_eq!(w.default_loads(2), vec![1, 6, LEVELS]);
    let e = w.check_load(LEVELS + 1).unwrap_err();
    assert!(e.contains("1 (idle) to 10"), "{e}");
    assert!(w.check_load(LEVELS).is_ok());
    // The trial plan never lengthens the run's, and shortens the engine's.
    let run = TrialPlan::default();
    let own = w.trial_plan(&run, 1);
    assert_eq!(
        (own.warmup_ns, own.window_ns),
        (QUICK_WARMUP_NS, QUICK_WINDOW_NS)
    );
    let short = w.trial_plan(&short_trial(), 1);
    assert_eq!(short.window_ns, short_trial().window_ns);
}

/// The default case (ten levels) fits its 60 s bound at the engine's
/// fewest trials with room for more: it took 72 s at 0.3 s + 1 s trials.
#[test]
fn the_default_case_fits_a_minute() {
    let mut w = workload("rd", 1 << 20);
    w.quick = false;
    let levels = w.default_loads(2);
    assert_eq!(levels.len(), LEVELS as usize);
    let fewest = touchstone_results::convergence::DEFAULT_MIN_TRIALS as u64 + 1;
    let ns: u64 = levels
        .iter()
        .map(|&l| {
            let t = w.trial_plan(&TrialPlan::default(), l);
            fewest * (t.warmup_ns + t.window_ns)
        })
        .sum();
    assert!(
        ns <= 30_000_000_000,
        "{} s at the fewest trials",
        ns / 1_000_000_000
    );
}

#[test]
fn mixes_are_line_mix_patterns() {
    assert!(MIX.parse("rd4wr1").is_err());
    assert_eq!(MIX.default, MIXES);
}

#[test]
fn the_delay_loop_is_calibrated_and_not_removed() {
    let per_ns = spins_per_ns();
    assert!(per_ns.is_finite() && per_ns > 0.0, "{per_ns}");
    // A loop the compiler removed would run 200 000 spins in no time:
    // a finite rate means each spin costs something.
    assert!(
        per_ns < 1000.0,
        "{per_ns} spins per ns: the loop was removed"
    );
}

/// At the idle level nothing moves; with no delay the generators move
/// lines during the window, faster than at the longest delay; the chase's
/// latency per load is a sane distribution; every process is gone after.
#[test]
fn a_point_is_generator_bandwidth_and_chase_latency() {
    let cpus = usable_cpus().unwrap();
    let mut w = workload("rd1wr1", 8 << 20);
    let idle = run_trial(&mut w, 1, &cpus, &short_trial(), 0).unwrap();
    assert_eq!(idle.ops, 0, "idle generators moved lines");
    assert!(idle.traffic);
    trial_is_sound(&idle, 1).unwrap();
    let chase = idle.latency();
    assert!(chase.len() > 0 && chase.value_at_quantile(0.5) > 0);
    assert!(chase.value_at_quantile(0.5) <= chase.value_at_quantile(0.99));
    assert!(idle.every_client_ran_through());
    let generators = w.traffic_pids();
    assert_eq!(generators.len(), cpus.len() - 1);
    // The chase runs flat out by design while idle generators leave the
    // other CPUs free: that is no touchstone limit on the figure (the
    // 16-CPU machine flagged every point so before the generators were
    // read), and the generators are what the check reads beside it.
    if let Some(own) = &idle.self_check {
        assert!(!own.bound, "{own:?}");
        assert_eq!(own.threads as usize, 1 + generators.len(), "{own:?}");
    }
    if cpus.len() >= 2 {
        let slow = run_trial(&mut w, 2, &cpus, &short_trial(), 1).unwrap();
        let full = run_trial(&mut w, LEVELS, &cpus, &short_trial(), 2).unwrap();
        assert!(slow.ops > 0, "a 2 µs delay still moves lines");
        trial_is_sound(&full, 1).unwrap();
        assert!(
            full.throughput > 2.0 * slow.throughput,
            "no delay {} lines/s, 2 µs delay {}",
            full.throughput,
            slow.throughput
        );
        // The generators outlive trials (the sweep reuses them), idle.
        assert_eq!(w.traffic_pids(), generators);
        // Idle: the count settles once each generator has finished the
        // chunk it was in (a generator preempted mid-chunk on a loaded
        // machine finishes it late, so one look 20 ms on is not enough); a
        // generator still running never lets it settle.
        let lines = || w.control.as_ref().unwrap().total_lines();
        let settled = (0..100).any(|_| {
            let held = lines();
            std::thread::sleep(std::time::Duration::from_millis(20));
            lines() == held
        });
        assert!(settled, "the generators kept moving lines between trials");
        for p in full.pids {
            assert!(reaped(p), "trial process {p} left behind");
        }
    }
    drop(w);
    for p in generators {
        assert!(reaped(p), "generator {p} left behind");
    }
}

#[test]
fn a_chase_follows_the_chain_lat_mem_rd_measures() {
    // The same seed and order as lat_mem_rd's `rand` chain: the chain laid
    // here visits the same elements in the same order.
    let size = 1 << 16;
    let mut w = workload("rd", size);
    let ctx = TrialContext {
        load: 1,
        cpus: vec![usable_cpus().unwrap()[0]],
        scratch: std::env::temp_dir(),
    };
    w.prepare(&ctx).unwrap();
    w.release();
    let chain = w.chain.as_ref().unwrap();
    let base = chain._buf.ptr() as usize;
    let offsets =
        crate::support::memory::chain_offsets(size, Order::Rand { elem: LINE }, CHAIN_SEED);
    let at = offsets
        .iter()
        .position(|&o| o == chain.start as usize - base)
        .unwrap();
    // SAFETY: the chain's element holds the next element's address.
    let next = unsafe { *chain.start } - base;
    assert_eq!(next, offsets[(at + 1) % offsets.len()]);
    assert!(w.traffic_pids().is_empty());
}
