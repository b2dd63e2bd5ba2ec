//! From one round's timing intervals to its samples. One process: one
//! figure per interval. Several processes: figures from wall-clock windows
//! that all of them spent timing, so that what they did together is
//! measured over the same time. Summing each process's own interval
//! figures, repetition by repetition, would add up rates from different
//! moments: a process that was preempted leaves the others more of the
//! machine, and their faster intervals then stand beside its slow one as if
//! they had been simultaneous (`stream -P 16` read 1.23 × STREAM with 16
//! threads; four `lat_syscall` processes on two CPUs claimed twice what two
//! achieved).

use crate::bench::{Report, Shape};
use crate::parallel::Timing;

/// Per-repetition figures: (combined over processes, per process).
///
/// With several processes the span every process was timing —
/// from the latest first interval's start to the earliest last interval's
/// end — is cut into as many equal windows as a process timed intervals.
/// Each process's work in a window is its intervals' iterations, each
/// interval's counted in proportion to the part of it inside the window
/// (the untimed moments between its intervals count as no work). Then:
/// - bandwidth and rates: all processes' work in the window over its
///   length (each process's own work over the same length);
/// - latency: the window's length times the processes over all their
///   operations in it — the harmonic mean of the processes' own figures,
///   so that processes ÷ latency is what they achieved together.
///
/// When no instant saw every process timing (the first finished before the
/// last began), one window spans all the intervals.
pub fn samples(shape: &Shape, timing: &Timing) -> (Vec<f64>, Vec<Vec<f64>>) {
    let per_interval: Vec<Vec<f64>> = timing
        .processes
        .iter()
        .map(|p| {
            p.intervals
                .iter()
                .map(|iv| shape.figure(iv.iterations, iv.elapsed_ns()))
                .collect()
        })
        .collect();
    if timing.processes.len() <= 1 {
        let combined = per_interval.first().cloned().unwrap_or_default();
        return (combined, per_interval);
    }
    let reps = timing
        .processes
        .iter()
        .map(|p| p.intervals.len())
        .min()
        .unwrap_or(0);
    if reps == 0 {
        return (Vec::new(), vec![Vec::new(); timing.processes.len()]);
    }
    let starts = timing.processes.iter().map(|p| p.intervals[0].start_ns);
    let ends = timing
        .processes
        .iter()
        .map(|p| p.intervals[p.intervals.len() - 1].end_ns);
    let (mut from, mut to) = (starts.clone().max().unwrap(), ends.clone().min().unwrap());
    let mut windows = reps;
    if to <= from {
        (from, to) = (starts.min().unwrap(), ends.max().unwrap());
        windows = 1;
    }
    let length = (to - from) as f64 / windows as f64;
    let processes = timing.processes.len() as f64;
    let mut combined = Vec::with_capacity(windows);
    let mut per_process = vec![Vec::with_capacity(windows); timing.processes.len()];
    for w in 0..windows {
        let a = from as f64 + w as f64 * length;
        let b = a + length;
        let mut total = 0.0;
        for (p, t) in timing.processes.iter().enumerate() {
            let work: f64 = t
                .intervals
                .iter()
                .map(|iv| {
                    let (s, e) = (iv.start_ns as f64, iv.end_ns as f64);
                    let inside = (e.min(b) - s.max(a)).max(0.0);
                    iv.iterations as f64 * inside / (e - s).max(1.0)
                })
                .sum();
            total += work;
            per_process[p].push(window_figure(shape, work, length, 1.0));
        }
        combined.push(window_figure(shape, total, length, processes));
    }
    (combined, per_process)
}

/// The figure of `iterations` (fractional: counted in proportion) done by
/// `processes` processes over `ns`: a throughput is the work over the time;
/// a latency is the time each process spent per operation. A process that
/// completed nothing in the window took at least all of it.
fn window_figure(shape: &Shape, iterations: f64, ns: f64, processes: f64) -> f64 {
    match shape.report {
        Report::Latency => {
            let ops = iterations * shape.amount();
            ns * processes / ops.max(1.0)
        }
        Report::Bandwidth | Report::Rate { .. } => shape.figure_of(iterations, ns),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::ProcessTiming;
    use touchstone_results::{Interval, Unit};

    /// One process's timing from (start, end, iterations) in ms.
    fn process(p: u32, intervals: &[(u64, u64, u64)]) -> ProcessTiming {
        let ms = 1_000_000;
        ProcessTiming {
            process: p,
            iterations: 0,
            running_since: 0,
            running_until: 0,
            intervals: intervals
                .iter()
                .map(|&(s, e, n)| Interval {
                    process: p,
                    start_ns: s * ms,
                    end_ns: e * ms,
                    iterations: n,
                    preemptions: 0,
                    round: 0,
                })
                .collect(),
            extras: Vec::new(),
        }
    }

    /// Two processes share a memory bus of 1000 MB/s: 500 MB/s each while
    /// both run. Process 1 is stopped from 10 to 20 ms, between two of its
    /// intervals, when process 0 alone moves 1000 MB/s. Summed by
    /// repetition, the processes' own intervals claim 1000 + 500 = 1500
    /// MB/s; what they moved together never exceeds what the bus carries.
    #[test]
    fn a_stopped_neighbour_does_not_inflate_the_sum() {
        // 1 MB per iteration; 10 ms intervals.
        let shape = Shape::bandwidth(1e6);
        let timing = Timing {
            processes: vec![
                // 5 MB per 10 ms, but 10 MB in the stretch process 1 was stopped.
                process(0, &[(0, 10, 5), (10, 20, 10), (20, 30, 5), (30, 40, 5)]),
                process(1, &[(0, 10, 5), (20, 30, 5), (30, 40, 5), (40, 50, 5)]),
            ],
        };
        let summed_by_repetition: Vec<f64> = (0..4)
            .map(|r| {
                timing
                    .processes
                    .iter()
                    .map(|p| {
                        let iv = &p.intervals[r];
                        shape.figure(iv.iterations, iv.elapsed_ns())
                    })
                    .sum()
            })
            .collect();
        assert!(
            summed_by_repetition.iter().any(|&x| x > 1400.0),
            "{summed_by_repetition:?}"
        );
        let (combined, per_process) = samples(&shape, &timing);
        assert_eq!(combined.len(), 4);
        assert!(combined.iter().all(|&x| x <= 1000.0 + 1e-9), "{combined:?}");
        // All they moved from 0 to 40 ms (40 MB) over 40 ms.
        let mean = combined.iter().sum::<f64>() / combined.len() as f64;
        assert!((mean - 1000.0).abs() < 1e-6, "{mean}");
        for w in 0..4 {
            let sum: f64 = per_process.iter().map(|p| p[w]).sum();
            assert!((sum - combined[w]).abs() < 1e-9);
        }
    }

    /// Four processes time-sharing two CPUs: each runs uninterrupted for a
    /// while and then waits, so each process's intervals read as fast as on
    /// a CPU of its own. Together they complete what two CPUs can.
    #[test]
    fn time_sharing_processes_report_what_they_achieved_together() {
        // 1 op per iteration; 1000 ops per interval of 1 ms of CPU; each
        // process runs 1 ms of every 2 (two CPUs, four processes).
        let shape = Shape::latency(1.0);
        let timing = Timing {
            processes: (0..4u32)
                .map(|p| {
                    let off = u64::from(p % 2);
                    let ivs: Vec<(u64, u64, u64)> = (0..8)
                        .map(|k| (2 * k + off, 2 * k + off + 1, 1000))
                        .collect();
                    process(p, &ivs)
                })
                .collect(),
        };
        let own = shape.figure(1000, 1_000_000);
        assert!((own - 1000.0).abs() < 1e-9, "{own}");
        let (combined, per_process) = samples(&shape, &timing);
        // 4 processes × window / ops: 2000 ns per operation each.
        for x in &combined {
            assert!((x - 2000.0).abs() < 1e-6 * 2000.0, "{combined:?}");
        }
        assert_eq!(per_process.len(), 4);
        // And as a rate: 2 million operations per second in all.
        let rate = Shape::rate(1.0, Unit::OpsPerSec, 1.0);
        let (together, _) = samples(&rate, &timing);
        for x in &together {
            assert!((x - 2e6).abs() < 1e-6 * 2e6, "{together:?}");
        }
    }

    #[test]
    fn one_process_keeps_one_figure_per_interval() {
        let shape = Shape::latency(1.0);
        let timing = Timing {
            processes: vec![process(0, &[(0, 1, 1000), (1, 3, 1000)])],
        };
        let (combined, per_process) = samples(&shape, &timing);
        assert_eq!(combined, [1000.0, 2000.0]);
        assert_eq!(per_process, [vec![1000.0, 2000.0]]);
    }

    /// The first process finished timing before the second began: one
    /// window over all of it, no figure from a moment one of them idled.
    #[test]
    fn processes_that_never_overlapped_share_one_window() {
        let shape = Shape::bandwidth(1e6);
        let timing = Timing {
            processes: vec![
                process(0, &[(0, 10, 10), (10, 20, 10)]),
                process(1, &[(20, 30, 10), (30, 40, 10)]),
            ],
        };
        let (combined, _) = samples(&shape, &timing);
        assert_eq!(combined.len(), 1);
        assert!((combined[0] - 1000.0).abs() < 1e-9, "{combined:?}");
    }
}
