//! What one client of a workload does in a trial, after the start barrier:
//! operations in a loop until the supervisor says stop. Each operation is
//! bracketed by two clock reads; it counts when it completes inside the
//! measurement window [w0, w1), and only then is its latency recorded, in
//! the histogram of its type. The first operation completed tells the
//! supervisor the client is running (warm); the first one completed at or
//! after w1 tells it the client ran through the whole window (done).
//!
//! Open loop: operation k of client i is meant to start at
//! t0 + (i/L + k) / r for a per-client rate r; a client that falls behind
//! starts the next one at once, and latency runs from the intended start
//! (wrk2's correction for coordinated omission).
//!
//! Generic over the clock and the link to the supervisor so that tests drive
//! it with a clock that moves only when operations take time.

use hdrhistogram::Histogram;

use crate::bench::Fallible;
use crate::clock::{Clock, Monotonic};

use super::plan::Pacing;
use super::{Client, MAX_OP_TYPES};

/// A clock that can also wait.
pub trait Timer: Clock {
    /// Return at or after `t_ns` on this clock.
    fn sleep_until(&self, t_ns: u64);
}

impl Timer for Monotonic {
    fn sleep_until(&self, t_ns: u64) {
        let ts = libc::timespec {
            tv_sec: (t_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (t_ns % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: an absolute sleep on CLOCK_MONOTONIC; EINTR just retries.
        while unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        } == libc::EINTR
        {}
    }
}

/// A client's link to the supervisor during the loop.
pub trait Board {
    /// The measurement window [w0, w1), once the supervisor has fixed it.
    fn window(&self) -> Option<(u64, u64)>;
    /// The trial is over: leave the loop.
    fn stop(&self) -> bool;
    /// Operations completed so far (the supervisor's stall detection).
    fn progress(&mut self, ops_total: u64);
    /// The first operation has completed.
    fn warm(&mut self) -> Fallible;
    /// An operation has completed at or after w1.
    fn done(&mut self) -> Fallible;
}

/// An open-loop client's schedule: start k at t0 + offset + k · interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    pub interval_ns: f64,
    pub offset_ns: f64,
}

impl Schedule {
    /// Client `client` of `load` under `pacing` (None: closed loop). The
    /// clients' schedules are staggered evenly over one interval.
    pub fn for_client(pacing: Pacing, client: u32, load: u32) -> Option<Schedule> {
        match pacing {
            Pacing::Closed => None,
            Pacing::Open { rate } => {
                let interval_ns = 1e9 * load as f64 / rate;
                Some(Schedule {
                    interval_ns,
                    offset_ns: interval_ns * client as f64 / load as f64,
                })
            }
        }
    }

    fn start(&self, t0: u64, k: u64) -> u64 {
        t0 + (self.offset_ns + k as f64 * self.interval_ns) as u64
    }
}

/// What one client did in a trial (CLOCK_MONOTONIC ns).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientRecord {
    pub client: u32,
    /// Start of its first operation: it was running from here…
    pub first_start_ns: u64,
    /// …to the end of its last one.
    pub last_end_ns: u64,
    /// Operations completed inside the window.
    pub window_ops: u64,
    /// Operations completed in the whole trial.
    pub total_ops: u64,
    /// Bytes those window operations moved (`Client::bytes`).
    pub window_bytes: u64,
    /// CPU time of the window's operations, per type, for a client that
    /// measures it (`Client::cpu_ns`).
    pub cpu: OpCpu,
}

/// CPU time per operation type, summed over the operations whose client
/// measured it: the mean is `ns[t] / ops[t]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpCpu {
    pub ns: [u64; MAX_OP_TYPES],
    pub ops: [u64; MAX_OP_TYPES],
}

impl OpCpu {
    pub fn add(&mut self, other: &OpCpu) {
        for t in 0..MAX_OP_TYPES {
            self.ns[t] += other.ns[t];
            self.ops[t] += other.ops[t];
        }
    }
    /// Mean CPU time of one operation of type `ty`, if any was measured.
    pub fn mean_ns(&self, ty: usize) -> Option<f64> {
        (self.ops[ty] > 0).then(|| self.ns[ty] as f64 / self.ops[ty] as f64)
    }
}

impl ClientRecord {
    /// Whether the client was running throughout [w0, w1).
    pub fn ran_through(&self, w0: u64, w1: u64) -> bool {
        self.total_ops > 0 && self.first_start_ns <= w0 && self.last_end_ns >= w1
    }
}

/// The longest an open-loop client sleeps before looking at `stop` again.
const SLEEP_SLICE_NS: u64 = 10_000_000;

/// Run `client` until the board says stop, recording each operation that
/// completes in the window into `hists[type]`.
pub fn drive(
    client: &mut dyn Client,
    schedule: Option<Schedule>,
    timer: &dyn Timer,
    board: &mut dyn Board,
    hists: &mut [Histogram<u64>],
) -> Fallible<ClientRecord> {
    let types = hists.len();
    let mut rec = ClientRecord::default();
    let mut window: Option<(u64, u64)> = None;
    let mut done = false;
    let t0 = timer.now_ns();
    let mut k: u64 = 0;
    'ops: while !board.stop() {
        let intended = match schedule {
            None => 0,
            Some(s) => {
                let t = s.start(t0, k);
                k += 1;
                loop {
                    let now = timer.now_ns();
                    if now >= t {
                        break;
                    }
                    if board.stop() {
                        break 'ops;
                    }
                    timer.sleep_until(t.min(now + SLEEP_SLICE_NS));
                }
                t
            }
        };
        let start = timer.now_ns();
        let ty = client.op()?;
        let end = timer.now_ns();
        if ty >= types {
            return Err(format!("operation type {ty} out of range (the mix has {types})").into());
        }
        rec.total_ops += 1;
        board.progress(rec.total_ops);
        rec.last_end_ns = end;
        if rec.total_ops == 1 {
            rec.first_start_ns = start;
            board.warm()?;
        }
        if window.is_none() {
            window = board.window();
        }
        if let Some((w0, w1)) = window {
            if end >= w0 && end < w1 {
                let from = match schedule {
                    Some(_) => intended,
                    None => client.started_ns().unwrap_or(start),
                };
                let steps = client.steps().max(1);
                let took = end.saturating_sub(from);
                hists[ty].saturating_record((took + steps / 2) / steps);
                rec.window_ops += 1;
                rec.window_bytes += client.bytes();
                if let Some(ns) = client.cpu_ns() {
                    rec.cpu.ns[ty] += ns;
                    rec.cpu.ops[ty] += 1;
                }
            } else if end >= w1 && !done {
                done = true;
                board.done()?;
            }
        }
    }
    Ok(rec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;
    use touchstone_results::curve::latency_histogram;

    /// Time moves only when an operation takes time or the client sleeps.
    #[derive(Clone)]
    struct FakeTimer(Rc<Cell<u64>>);
    impl Clock for FakeTimer {
        fn now_ns(&self) -> u64 {
            self.0.get()
        }
    }
    impl Timer for FakeTimer {
        fn sleep_until(&self, t: u64) {
            self.0.set(self.0.get().max(t));
        }
    }

    /// Each operation costs `costs[k % len]` ns and has type k % types.
    struct Known {
        now: Rc<Cell<u64>>,
        costs: Vec<u64>,
        types: usize,
        k: usize,
    }
    impl Known {
        /// Ops costing `costs` in turn on the fake clock `now`, typed
        /// round-robin over `types`.
        fn new(now: &Rc<Cell<u64>>, costs: Vec<u64>, types: usize) -> Known {
            Known {
                now: now.clone(),
                costs,
                types,
                k: 0,
            }
        }
    }
    impl Client for Known {
        fn op(&mut self) -> Fallible<usize> {
            let c = self.costs[self.k % self.costs.len()];
            self.now.set(self.now.get() + c);
            self.k += 1;
            Ok((self.k - 1) % self.types)
        }
    }

    /// Publishes the window once the clock passes `publish_at`; says stop
    /// after `done` has been reported and `tail` more operations ran.
    struct FakeBoard {
        now: Rc<Cell<u64>>,
        publish_at: u64,
        window: (u64, u64),
        warm_calls: u32,
        done_at: Option<u64>,
        progress: u64,
        tail: u64,
    }
    impl Board for FakeBoard {
        fn window(&self) -> Option<(u64, u64)> {
            (self.now.get() >= self.publish_at).then_some(self.window)
        }
        fn stop(&self) -> bool {
            self.done_at.is_some_and(|d| self.progress >= d + self.tail)
        }
        fn progress(&mut self, ops: u64) {
            self.progress = ops;
        }
        fn warm(&mut self) -> Fallible {
            self.warm_calls += 1;
            Ok(())
        }
        fn done(&mut self) -> Fallible {
            assert!(self.done_at.is_none(), "done reported twice");
            self.done_at = Some(self.progress);
            Ok(())
        }
    }

    fn board(now: &Rc<Cell<u64>>, publish_at: u64, window: (u64, u64)) -> FakeBoard {
        FakeBoard {
            now: now.clone(),
            publish_at,
            window,
            warm_calls: 0,
            done_at: None,
            progress: 0,
            tail: 3,
        }
    }

    /// Drives ops costing `costs` (typed round-robin over `types`)
    /// closed-loop against `board(publish_at, window)`, into `histograms`
    /// latency histograms: what `drive` returned, the board and histograms.
    fn drive_known(
        costs: Vec<u64>,
        types: usize,
        publish_at: u64,
        window: (u64, u64),
        histograms: usize,
    ) -> (Fallible<ClientRecord>, FakeBoard, Vec<Histogram<u64>>) {
        let now = Rc::new(Cell::new(0));
        let mut c = Known::new(&now, costs, types);
        let mut b = board(&now, publish_at, window);
        let mut h = vec![latency_histogram(); histograms];
        let rec = drive(&mut c, None, &FakeTimer(now), &mut b, &mut h);
        (rec, b, h)
    }

    #[test]
    fn counts_exactly_the_operations_that_end_inside_the_window() {
        // Ends at 1000·k; [10 500, 20 500) holds 11 000 … 20 000: 10 ops.
        let (rec, b, h) = drive_known(vec![1000], 1, 5_000, (10_500, 20_500), 1);
        let rec = rec.unwrap();
        assert_eq!(rec.window_ops, 10);
        assert_eq!(h[0].len(), 10);
        assert_eq!((h[0].min(), h[0].max()), (1000, 1000));
        assert_eq!(b.warm_calls, 1);
        // Done at the op ending at 21 000 (the 21st), then 3 more.
        assert_eq!(b.done_at, Some(21));
        assert_eq!(rec.total_ops, 24);
        assert_eq!(rec.first_start_ns, 0);
        assert_eq!(rec.last_end_ns, 24_000);
        assert!(rec.ran_through(10_500, 20_500));
        assert!(!rec.ran_through(10_500, 30_000));
    }

    /// A batch of equal steps (a chase's loads) records each step's mean:
    /// the batch's time over its steps, to the nearest ns.
    #[test]
    fn an_operation_of_several_steps_records_the_time_of_one() {
        struct Batch(Known);
        impl Client for Batch {
            fn op(&mut self) -> Fallible<usize> {
                self.0.op()
            }
            fn steps(&self) -> u64 {
                100
            }
        }
        let now = Rc::new(Cell::new(0));
        let mut c = Batch(Known::new(&now, vec![15_049, 15_051], 1));
        let mut b = board(&now, 0, (30_100, 30_100 + 10 * 30_100));
        let mut h = vec![latency_histogram()];
        let rec = drive(&mut c, None, &FakeTimer(now.clone()), &mut b, &mut h).unwrap();
        assert_eq!(rec.window_ops, 20);
        assert_eq!((h[0].min(), h[0].max()), (150, 151));
        assert_eq!(h[0].count_at(150), 10);
    }

    #[test]
    fn a_mix_lands_in_the_histogram_of_each_type() {
        // Types 0, 1, 2 in turn, costing 100, 200, 300 ns. Each round of
        // three ops takes 600 ns; a window of 100 rounds starting on a
        // round boundary holds 100 of each.
        let (rec, _, h) = drive_known(vec![100, 200, 300], 3, 0, (60_000, 120_000), 3);
        let rec = rec.unwrap();
        // Ends at 600r+100, 600r+300, 600r+600: the last op of round 99
        // (ends at 60 000) opens the window, round 199's last closes it.
        assert_eq!(rec.window_ops, 300);
        for (ty, cost) in [(0, 100), (1, 200), (2, 300)] {
            assert_eq!(h[ty].len(), 100, "type {ty}");
            assert_eq!(h[ty].max(), cost);
        }
    }

    #[test]
    fn an_operation_type_outside_the_mix_is_an_error() {
        let e = drive_known(vec![10], 2, 0, (0, 1000), 1).0.unwrap_err();
        assert!(e.0.contains("out of range"), "{e}");
    }

    #[test]
    fn open_loop_measures_from_the_intended_start() {
        let now = Rc::new(Cell::new(0));
        // One client at 500 000 ops/s: every 2000 ns. Ops cost 1000 ns,
        // except every 50th, which costs 11 000 (a stall of 5 intervals).
        let mut costs = vec![1000; 50];
        costs[49] = 11_000;
        let mut c = Known::new(&now, costs, 1);
        let schedule = Schedule::for_client(Pacing::Open { rate: 500_000.0 }, 0, 1).unwrap();
        assert_eq!(schedule.interval_ns, 2000.0);
        let mut b = board(&now, 0, (0, 1_000_000));
        let mut h = vec![latency_histogram()];
        drive(
            &mut c,
            Some(schedule),
            &FakeTimer(now.clone()),
            &mut b,
            &mut h,
        )
        .unwrap();
        // The stalled op took 11 000; the four scheduled during the stall
        // started late, at 11 000, 12 000, 13 000, 14 000 after their slots
        // … each op behind schedule shows the wait in its latency.
        assert_eq!(h[0].max(), h[0].highest_equivalent(11_000));
        let late = h[0]
            .iter_recorded()
            .filter(|v| v.value_iterated_to() > 1001)
            .count();
        assert!(late > 1, "no op after the stall was charged for the wait");
        // On schedule, the rest show exactly their cost.
        assert_eq!(h[0].min(), 1000);
        // Throughput follows the schedule, not the ops' speed: 500 in 1 ms.
        assert!((499..=501).contains(&h[0].len()), "{}", h[0].len());
        // A closed loop on the same ops records no wait at all.
        let now2 = Rc::new(Cell::new(0));
        let mut c2 = Known::new(&now2, c.costs.clone(), 1);
        let mut b2 = board(&now2, 0, (0, 1_000_000));
        let mut h2 = vec![latency_histogram()];
        drive(&mut c2, None, &FakeTimer(now2), &mut b2, &mut h2).unwrap();
        assert_eq!(h2[0].iter_recorded().count(), 2, "only the two op costs");
        assert_eq!(h2[0].min(), 1000);
    }

    /// Each operation "delivers" a message sent `age` ns before the call.
    struct Delivering {
        inner: Known,
        age: u64,
        origin: u64,
    }
    impl Client for Delivering {
        fn op(&mut self) -> Fallible<usize> {
            self.origin = self.inner.now.get() - self.age;
            self.inner.op()
        }
        fn started_ns(&self) -> Option<u64> {
            Some(self.origin)
        }
    }

    #[test]
    fn latency_runs_from_the_start_a_client_reports() {
        let now = Rc::new(Cell::new(10_000));
        let mut c = Delivering {
            inner: Known::new(&now, vec![1000], 1),
            age: 5000,
            origin: 0,
        };
        let mut b = board(&now, 0, (20_000, 40_000));
        let mut h = vec![latency_histogram()];
        drive(&mut c, None, &FakeTimer(now), &mut b, &mut h).unwrap();
        // Each op: 5000 ns in flight before the call, 1000 in it.
        assert_eq!(
            (h[0].min(), h[0].max()),
            (6000, h[0].highest_equivalent(6000))
        );
        assert_eq!(h[0].len(), 20);
    }

    /// Wakes each sleeper late by the next of `late` (ns), in turn.
    struct LateTimer {
        now: Rc<Cell<u64>>,
        late: Vec<u64>,
        k: Cell<usize>,
    }
    impl Clock for LateTimer {
        fn now_ns(&self) -> u64 {
            self.now.get()
        }
    }
    impl Timer for LateTimer {
        fn sleep_until(&self, t: u64) {
            let k = self.k.get();
            self.k.set(k + 1);
            self.now
                .set(self.now.get().max(t + self.late[k % self.late.len()]));
        }
    }

    struct Nothing;
    impl Client for Nothing {
        fn op(&mut self) -> Fallible<usize> {
            Ok(0)
        }
    }

    /// rt_wake's measurement: a no-op client in an open loop records how
    /// late each wake-up was, and the figures read from the histogram are
    /// those of the samples themselves (to the histogram's 0.1 %).
    #[test]
    fn wake_up_lateness_percentiles_match_the_samples() {
        let now = Rc::new(Cell::new(0));
        // 10 000 lateness values over four decades, in a scrambled order.
        let mut late: Vec<u64> = (0..10_000u64)
            .map(|i| 1000 + (i * i * 7919) % 5_000_000)
            .collect();
        let timer = LateTimer {
            now: now.clone(),
            late: late.clone(),
            k: Cell::new(0),
        };
        // One wake-up every 10 ms: each wakes before the next deadline.
        let schedule = Schedule::for_client(Pacing::Open { rate: 100.0 }, 0, 1).unwrap();
        let mut b = board(&now, 0, (0, 10_000 * 10_000_000));
        b.tail = 0;
        let mut h = vec![latency_histogram()];
        drive(&mut Nothing, Some(schedule), &timer, &mut b, &mut h).unwrap();
        let l = touchstone_results::curve::Latency::of(&h[0]);
        assert_eq!(l.count, 10_000);
        // The first deadline is the start itself (no sleep, 0 late); the
        // k-th sleep gives the k-th value: the samples are 0 and all but
        // the last value.
        late.pop();
        late.push(0);
        late.sort_unstable();
        let exact = |q: f64| late[((q * late.len() as f64).ceil() as usize).max(1) - 1];
        let close = |got: u64, want: u64| (got as f64 - want as f64).abs() <= want as f64 * 0.001;
        for (q, got) in [
            (0.5, l.p50_ns),
            (0.99, l.p99_ns),
            (0.999, l.p999_ns),
            (0.9999, l.p9999_ns),
        ] {
            assert!(close(got, exact(q)), "q {q}: {got} vs {}", exact(q));
        }
        assert_eq!(l.min_ns, 0);
        assert!(
            close(l.max_ns, late[9_999]),
            "{} vs {}",
            l.max_ns,
            late[9_999]
        );
        let mean = late.iter().sum::<u64>() as f64 / 1e4;
        assert!(
            (l.mean_ns - mean).abs() <= mean * 0.001,
            "{} vs {mean}",
            l.mean_ns
        );
    }

    /// The engine's own cost per wake-up of `rt_wake`: `drive` on a no-op
    /// client with the real clock and the deadline always already passed,
    /// so each iteration is the engine's work alone (the deadline check,
    /// the two reads around the op, the board and the histogram). Prints
    /// it; asserts no time. Run: `cargo test --release -p
    /// touchstone-harness engine_cost -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn engine_cost_per_wake_up() {
        struct Stop(u64, u64);
        impl Board for Stop {
            fn window(&self) -> Option<(u64, u64)> {
                Some((0, u64::MAX))
            }
            fn stop(&self) -> bool {
                self.0 >= self.1
            }
            fn progress(&mut self, ops: u64) {
                self.0 = ops;
            }
            fn warm(&mut self) -> Fallible {
                Ok(())
            }
            fn done(&mut self) -> Fallible {
                Ok(())
            }
        }
        let n = 2_000_000;
        // 1e12 per second: every deadline is in the past, so no sleep.
        let schedule = Schedule::for_client(Pacing::Open { rate: 1e12 }, 0, 1).unwrap();
        let mut best = f64::MAX;
        for _ in 0..5 {
            let mut h = vec![latency_histogram()];
            let t0 = Monotonic.now_ns();
            drive(
                &mut Nothing,
                Some(schedule),
                &Monotonic,
                &mut Stop(0, n),
                &mut h,
            )
            .unwrap();
            best = best.min((Monotonic.now_ns() - t0) as f64 / n as f64);
        }
        let t0 = Monotonic.now_ns();
        for _ in 0..n {
            std::hint::black_box(Monotonic.now_ns());
        }
        let read = (Monotonic.now_ns() - t0) as f64 / n as f64;
        println!("engine loop per wake-up: {best:.1} ns (clock read {read:.1} ns)");
    }

    #[test]
    fn schedules_stagger_clients_over_one_interval() {
        let p = Pacing::Open { rate: 4000.0 };
        let s: Vec<Schedule> = (0..4)
            .map(|i| Schedule::for_client(p, i, 4).unwrap())
            .collect();
        for (i, s) in s.iter().enumerate() {
            assert_eq!(s.interval_ns, 1e6);
            assert_eq!(s.offset_ns, 250_000.0 * i as f64);
        }
        assert!(Schedule::for_client(Pacing::Closed, 0, 4).is_none());
    }
}
