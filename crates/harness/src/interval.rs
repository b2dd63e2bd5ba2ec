//! What one benchmark process does, in order (lmbench3 Table I):
//! setup → autosize → ready, wait for start → warm up → warm → (keep running
//! until all are warm) → R timed intervals → done → (keep running until all
//! are done) → cleanup. The keep-running phases are what guarantee that,
//! during every timed interval of any process, all N are running the
//! benchmark. The loop is generic over the clock and over its link to the
//! parent, so tests can drive it in-process with a fake clock.

use crate::bench::{Benchmark, Context, Fallible, Shape};
use crate::clock::Clock;
use crate::plan::Plan;

/// A benchmark process's link to the harness parent.
pub trait Link {
    /// Sizing is done: report ready, then block until the start signal.
    fn ready(&mut self) -> Fallible;
    /// Warm-up is done; this process is running the benchmark.
    fn warm(&mut self) -> Fallible;
    /// Non-blocking: have all processes reported warm?
    fn may_measure(&mut self) -> bool;
    /// This process's timed intervals are done.
    fn done(&mut self) -> Fallible;
    /// Non-blocking: have all processes finished timing?
    fn may_stop(&mut self) -> bool;
    fn set_iterations(&mut self, n: u64);
    fn record(&mut self, rep: u32, start_ns: u64, end_ns: u64, iterations: u64, preemptions: u32);
    /// The process's involuntary context switches so far.
    fn preemptions(&self) -> u64 {
        0
    }
    fn running_window(&mut self, since_ns: u64, until_ns: u64);
    /// Progress, for the parent's stall detection.
    fn heartbeat(&mut self);
    /// Extra figures the benchmark reported.
    fn extras(&mut self, extras: &[(String, f64)]);
    /// Only one process: the coordination phases have nothing to wait for.
    fn solo(&self) -> bool;
    /// The energy sources this process snapshots around its timed
    /// intervals; `None` in all but one process (the counters are
    /// machine-wide) and where nothing is readable.
    fn energy(&self) -> Option<&crate::energy::Probe> {
        None
    }
}

/// Run one benchmark process to completion. `cleanup` is called whether the
/// run succeeds or fails after `setup`.
pub fn run_process(
    bench: &mut dyn Benchmark,
    shape: &Shape,
    plan: &Plan,
    ctx: &Context,
    clock: &dyn Clock,
    link: &mut dyn Link,
) -> Fallible {
    bench.setup(ctx)?;
    link.heartbeat();
    let result = measure_loop(bench, shape, plan, clock, link);
    bench.cleanup();
    result
}

fn measure_loop(
    bench: &mut dyn Benchmark,
    shape: &Shape,
    plan: &Plan,
    clock: &dyn Clock,
    link: &mut dyn Link,
) -> Fallible {
    let target = plan.interval_target(shape);
    let mut n = match (shape.fixed_iterations, plan.sizing) {
        (Some(k), _) => k,
        // An earlier round of this case sized the loop already.
        (None, Some(k)) => k.max(1),
        (None, None) => autosize(
            bench,
            target,
            plan.min_interval_ns,
            !shape.switches_by_design,
            clock,
            link,
        )?,
    };
    link.set_iterations(n);
    link.ready()?;
    let since = clock.now_ns();

    // Warm-up under the real load: at least one interval and `warmup_ns`.
    // Sizing may have happened before the others were running; if intervals
    // now fall short of the target, grow n (never shrink it).
    loop {
        let (s, e) = interval(bench, n, clock, link)?;
        if e - s < target && shape.fixed_iterations.is_none() {
            n = extrapolate(n, e - s, target).max(n);
        }
        if e.saturating_sub(since) >= plan.warmup_ns.max(shape.warmup_ns) {
            break;
        }
    }
    link.set_iterations(n);
    link.warm()?;
    if !link.solo() {
        while !link.may_measure() {
            interval(bench, n, clock, link)?;
        }
    }
    // Energy is read outside the timed region (a sysfs read costs µs).
    let energy0 = link
        .energy()
        .filter(|p| !p.sources.is_empty())
        .map(|p| (p.snapshot(), clock.now_ns()));
    let mut timed_iterations = 0u64;
    for rep in 0..plan.repetitions {
        timed_iterations += n;
        // Preemptions are counted just outside the timed region.
        bench.prepare(n)?;
        let p0 = link.preemptions();
        let s = clock.now_ns();
        bench.run(n)?;
        let e = clock.now_ns();
        let p1 = link.preemptions();
        bench.conclude(n)?;
        link.heartbeat();
        link.record(rep, s, e, n, p1.saturating_sub(p0) as u32);
    }
    let mut energy_extras = Vec::new();
    if let (Some((before, t0)), Some(probe)) = (energy0, link.energy()) {
        let after = probe.snapshot();
        let seconds = clock.now_ns().saturating_sub(t0) as f64 / 1e9;
        // Joules per operation only where the shape says what an operation is.
        let ops = match shape.work {
            crate::bench::Work::Ops(k) => (timed_iterations as f64 * k) as u64,
            _ => 0,
        };
        energy_extras = probe.extras(&before, &after, seconds, ops);
    }
    link.done()?;
    if !link.solo() {
        while !link.may_stop() {
            interval(bench, n, clock, link)?;
        }
    }
    link.running_window(since, clock.now_ns());
    let mut extras = bench.extras();
    extras.extend(energy_extras);
    link.extras(&extras);
    Ok(())
}

/// One interval: prepare and conclude untimed around the timed `run(n)`.
/// Only the two clock reads and the call itself surround the body.
#[inline]
fn interval(
    bench: &mut dyn Benchmark,
    n: u64,
    clock: &dyn Clock,
    link: &mut dyn Link,
) -> Fallible<(u64, u64)> {
    bench.prepare(n)?;
    let start = clock.now_ns();
    bench.run(n)?;
    let end = clock.now_ns();
    bench.conclude(n)?;
    link.heartbeat();
    Ok((start, end))
}

/// Find the iteration count whose interval lasts at least `target` ns:
/// grow tenfold while intervals are too short to extrapolate from, then
/// scale to the target with 5 % to spare. An interval that was preempted
/// reads long and would choose too few iterations, so a long-enough trial
/// is only accepted undisturbed (or after a few disturbed tries).
pub fn autosize(
    bench: &mut dyn Benchmark,
    target: u64,
    min_interval: u64,
    reject_preempted: bool,
    clock: &dyn Clock,
    link: &mut dyn Link,
) -> Fallible<u64> {
    const DISTURBED_TRIES: u32 = 3;
    let mut n: u64 = 1;
    let mut disturbed = 0;
    // Below this an interval is too coarse to extrapolate from.
    let measurable = (target / 10_000).max(min_interval / 10).max(1);
    loop {
        let p0 = link.preemptions();
        let (s, e) = interval(bench, n, clock, link)?;
        let preempted = reject_preempted && link.preemptions() != p0;
        let t = e - s;
        if t >= target {
            if !preempted || disturbed >= DISTURBED_TRIES {
                return Ok(n);
            }
            disturbed += 1;
            continue;
        }
        let next = if t < measurable {
            n.saturating_mul(10)
        } else {
            extrapolate(n, t, target)
        };
        if next == n || n == u64::MAX {
            return Err("cannot size the loop: the benchmark takes no measurable time".into());
        }
        n = next.max(n + 1);
    }
}

fn extrapolate(n: u64, t: u64, target: u64) -> u64 {
    let t = t.max(1) as f64;
    let scaled = (n as f64 * target as f64 / t * 1.05).ceil();
    if scaled >= u64::MAX as f64 {
        u64::MAX
    } else {
        scaled as u64
    }
}

/// A link for one process measured in the calling process (tests, tools).
#[derive(Debug, Default)]
pub struct SoloLink {
    pub iterations: u64,
    pub intervals: Vec<(u64, u64, u64, u32)>,
    pub heartbeats: u64,
    pub window: (u64, u64),
    pub extras: Vec<(String, f64)>,
    pub energy: Option<crate::energy::Probe>,
}

impl Link for SoloLink {
    fn ready(&mut self) -> Fallible {
        Ok(())
    }
    fn warm(&mut self) -> Fallible {
        Ok(())
    }
    fn may_measure(&mut self) -> bool {
        true
    }
    fn done(&mut self) -> Fallible {
        Ok(())
    }
    fn may_stop(&mut self) -> bool {
        true
    }
    fn set_iterations(&mut self, n: u64) {
        self.iterations = n;
    }
    fn record(&mut self, _rep: u32, start_ns: u64, end_ns: u64, iterations: u64, preemptions: u32) {
        self.intervals
            .push((start_ns, end_ns, iterations, preemptions));
    }
    fn running_window(&mut self, since_ns: u64, until_ns: u64) {
        self.window = (since_ns, until_ns);
    }
    fn heartbeat(&mut self) {
        self.heartbeats += 1;
    }
    fn extras(&mut self, extras: &[(String, f64)]) {
        self.extras = extras.to_vec();
    }
    fn energy(&self) -> Option<&crate::energy::Probe> {
        self.energy.as_ref()
    }
    fn solo(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;

    /// Time moves only when the benchmark runs: `cost` ns per iteration.
    struct FakeClock(Rc<Cell<u64>>);
    impl Clock for FakeClock {
        fn now_ns(&self) -> u64 {
            self.0.get()
        }
    }

    struct Known {
        now: Rc<Cell<u64>>,
        cost: u64,
        calls: Rc<RefCell<Vec<String>>>,
    }
    // SAFETY of Send: the test never moves it across threads.
    unsafe impl Send for Known {}
    impl Benchmark for Known {
        fn setup(&mut self, _: &Context) -> Fallible {
            self.calls.borrow_mut().push("setup".into());
            Ok(())
        }
        fn prepare(&mut self, n: u64) -> Fallible {
            self.calls.borrow_mut().push(format!("prepare {n}"));
            Ok(())
        }
        fn run(&mut self, n: u64) -> Fallible {
            self.calls.borrow_mut().push(format!("run {n}"));
            self.now.set(self.now.get() + n * self.cost);
            Ok(())
        }
        fn conclude(&mut self, n: u64) -> Fallible {
            self.calls.borrow_mut().push(format!("conclude {n}"));
            Ok(())
        }
        fn cleanup(&mut self) {
            self.calls.borrow_mut().push("cleanup".into());
        }
    }

    fn ctx() -> Context {
        Context {
            process: 0,
            parallel: 1,
            scratch: std::env::temp_dir(),
        }
    }

    /// Runs a `Known` of `cost` ns an iteration under `plan` and `shape`,
    /// on a clock that only it advances, into `link`; its hooks are noted
    /// in `calls`.
    fn run_known(
        cost: u64,
        calls: &Rc<RefCell<Vec<String>>>,
        plan: &Plan,
        shape: &Shape,
        link: &mut SoloLink,
    ) {
        let now = Rc::new(Cell::new(0));
        let mut b = Known {
            now: now.clone(),
            cost,
            calls: calls.clone(),
        };
        run_process(&mut b, shape, plan, &ctx(), &FakeClock(now), link).unwrap();
    }

    #[test]
    fn autosizing_reaches_the_target_and_hooks_see_each_count() {
        let calls = Rc::new(RefCell::new(Vec::new()));
        let plan = Plan {
            repetitions: 5,
            target_ns: 1_000_000,
            warmup_ns: 0,
            min_interval_ns: 1000,
            ..Plan::default()
        };
        let mut link = SoloLink::default();
        run_known(7, &calls, &plan, &Shape::latency(1.0), &mut link);

        assert_eq!(link.intervals.len(), 5);
        for &(s, e, n, _) in &link.intervals {
            assert!(e - s >= 1_000_000, "interval {} ns below target", e - s);
            assert!(e - s < 1_200_000, "interval {} ns overshoots", e - s);
            assert_eq!(e - s, n * 7);
        }
        // Every run(n) is bracketed by prepare(n) and conclude(n) with the same n.
        let calls = calls.borrow();
        assert_eq!(calls.first().unwrap(), "setup");
        assert_eq!(calls.last().unwrap(), "cleanup");
        let body = &calls[1..calls.len() - 1];
        assert_eq!(body.len() % 3, 0);
        for triple in body.chunks(3) {
            let n = triple[1].strip_prefix("run ").unwrap();
            assert_eq!(triple[0], format!("prepare {n}"));
            assert_eq!(triple[2], format!("conclude {n}"));
        }
    }

    /// A shape's own warm-up outlasts a shorter plan warm-up: no interval
    /// is timed before `shape.warmup_ns` of running.
    #[test]
    fn shape_warmup_is_honoured() {
        for (plan_warm, shape_warm) in [(0, 50_000_000), (50_000_000, 0)] {
            let plan = Plan {
                repetitions: 3,
                target_ns: 1_000_000,
                warmup_ns: plan_warm,
                min_interval_ns: 1000,
                ..Plan::default()
            };
            let mut link = SoloLink::default();
            let shape = Shape::latency(1.0).with_warmup_ns(shape_warm);
            run_known(1000, &Rc::default(), &plan, &shape, &mut link);
            let first = link.intervals[0].0;
            assert!(first >= 50_000_000, "first timed interval at {first} ns");
            assert!(first < 60_000_000, "warm-up ran on to {first} ns");
        }
    }

    /// A recorded RAPL tree whose package counter reads `first` at the
    /// snapshot before the timed intervals and `then` ever after.
    fn rapl_probe(first: u64, then: u64) -> crate::energy::Probe {
        use crate::energy::{discover, read_to_string, Probe};
        use std::sync::atomic::{AtomicU32, Ordering};
        let tree =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/energy/rapl-full");
        let found = discover(&tree, &read_to_string);
        let package = found.sources[0].path.clone();
        let reads = AtomicU32::new(0);
        Probe {
            sources: found.sources,
            read: Box::new(move |p: &std::path::Path| {
                if p == package {
                    let k = reads.fetch_add(1, Ordering::SeqCst);
                    Ok(format!("{}\n", if k == 0 { first } else { then }))
                } else {
                    read_to_string(p)
                }
            }),
        }
    }

    fn measured_with(probe: Option<crate::energy::Probe>) -> SoloLink {
        let plan = Plan {
            repetitions: 4,
            warmup_ns: 0,
            ..Plan::default()
        };
        let mut link = SoloLink {
            energy: probe,
            ..SoloLink::default()
        };
        let shape = Shape::latency(2.0);
        run_known(3, &Rc::default(), &plan, &shape, &mut link);
        link
    }

    fn extra(link: &SoloLink, key: &str) -> Option<f64> {
        link.extras.iter().find(|(k, _)| k == key).map(|&(_, v)| v)
    }

    #[test]
    fn energy_over_the_timed_intervals_is_the_counters_delta_across_a_wrap() {
        // max_energy_range_uj is 262_143_328_850: from 850 below the top to
        // 1_999_999_149 is 2_000_000_000 µJ across the wrap.
        let link = measured_with(Some(rapl_probe(262_143_328_000, 1_999_999_149)));
        let seconds = link
            .intervals
            .iter()
            .map(|&(s, e, _, _)| e - s)
            .sum::<u64>() as f64
            / 1e9;
        let ops = link.intervals.iter().map(|&(_, _, n, _)| n).sum::<u64>() * 2;
        assert_eq!(extra(&link, "energy_package_j"), Some(2000.0));
        let w = extra(&link, "energy_package_w").unwrap();
        assert!(
            (w - 2000.0 / seconds).abs() / w < 1e-9,
            "{w} W over {seconds} s"
        );
        assert_eq!(
            extra(&link, "energy_package_j_per_op"),
            Some(2000.0 / ops as f64)
        );
        // The unchanged core counter: zero joules, too few steps for J/op.
        assert_eq!(extra(&link, "energy_core_j"), Some(0.0));
        assert_eq!(extra(&link, "energy_core_j_per_op"), None);
    }

    #[test]
    fn without_an_energy_source_no_energy_extras_are_added() {
        let link = measured_with(None);
        assert!(link.extras.iter().all(|(k, _)| !k.starts_with("energy")));
        let empty = crate::energy::Probe {
            sources: Vec::new(),
            read: Box::new(crate::energy::read_to_string),
        };
        let link = measured_with(Some(empty));
        assert!(link.extras.iter().all(|(k, _)| !k.starts_with("energy")));
    }

    #[test]
    fn known_cost_is_recovered_exactly_with_a_perfect_clock() {
        let plan = Plan {
            repetitions: 11,
            warmup_ns: 0,
            ..Plan::default()
        };
        let mut link = SoloLink::default();
        let shape = Shape::latency(1.0);
        run_known(3, &Rc::default(), &plan, &shape, &mut link);
        for &(s, e, n, _) in &link.intervals {
            assert_eq!(shape.figure(n, e - s), 3.0);
        }
    }

    #[test]
    fn a_failing_benchmark_is_cleaned_up() {
        struct Fails(Rc<Cell<bool>>);
        unsafe impl Send for Fails {}
        impl Benchmark for Fails {
            fn run(&mut self, _: u64) -> Fallible {
                Err("device on fire".into())
            }
            fn cleanup(&mut self) {
                self.0.set(true);
            }
        }
        let cleaned = Rc::new(Cell::new(false));
        let mut b = Fails(cleaned.clone());
        let err = run_process(
            &mut b,
            &Shape::latency(1.0),
            &Plan::default(),
            &ctx(),
            &crate::Monotonic,
            &mut SoloLink::default(),
        )
        .unwrap_err();
        assert_eq!(err.0, "device on fire");
        assert!(cleaned.get());
    }

    #[test]
    fn a_benchmark_that_takes_no_time_is_an_error_not_a_hang() {
        struct Free;
        impl Benchmark for Free {
            fn run(&mut self, _: u64) -> Fallible {
                Ok(())
            }
        }
        let frozen = FakeClock(Rc::new(Cell::new(5)));
        let r = run_process(
            &mut Free,
            &Shape::latency(1.0),
            &Plan::default(),
            &ctx(),
            &frozen,
            &mut SoloLink::default(),
        );
        assert!(r.is_err());
    }
}
