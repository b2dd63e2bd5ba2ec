//! The clock: CLOCK_MONOTONIC read through the vDSO, its resolution and the
//! cost of one read measured at start. Every interval is made at least
//! 1000 × (resolution + read cost) long, so clock error stays under 0.1 %.
//! The read cost is reported with the run, never folded into results: an
//! interval includes one read's worth of overhead, which the 1000× rule
//! bounds to 0.1 %.

use touchstone_results::ClockInfo;

/// A source of nanosecond timestamps. Real runs use `Monotonic`; tests can
/// substitute a clock whose time only moves when the benchmark says so.
pub trait Clock {
    fn now_ns(&self) -> u64;
}

/// CLOCK_MONOTONIC: system-wide, so timestamps of different processes of one
/// run can be compared (needed to prove intervals overlap).
#[derive(Debug, Clone, Copy, Default)]
pub struct Monotonic;

impl Clock for Monotonic {
    #[inline(always)]
    fn now_ns(&self) -> u64 {
        now_ns()
    }
}

/// CLOCK_MONOTONIC in nanoseconds.
#[inline(always)]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// How much longer than (resolution + read cost) an interval must be for the
/// clock's error to stay under 0.1 %.
pub const ERROR_FACTOR: f64 = 1000.0;

/// Measure the clock: the smallest positive step seen between consecutive
/// reads (its effective resolution) and the median cost of one read.
pub fn calibrate() -> ClockInfo {
    let mut res = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut res) };
    let declared = (res.tv_sec as f64 * 1e9 + res.tv_nsec as f64).max(1.0);

    // Effective resolution: the smallest non-zero difference of two reads.
    let mut step = u64::MAX;
    for _ in 0..20_000 {
        let a = now_ns();
        let mut b = now_ns();
        while b == a {
            b = now_ns();
        }
        step = step.min(b - a);
    }
    let resolution = (step as f64).max(declared);

    // Read cost: time batches of reads; the median batch is representative.
    const BATCH: u64 = 20_000;
    let mut costs: Vec<f64> = (0..15)
        .map(|_| {
            let t0 = now_ns();
            let mut sink = 0u64;
            for _ in 0..BATCH {
                // The sum keeps every read alive.
                sink = sink.wrapping_add(now_ns());
            }
            let t1 = now_ns();
            std::hint::black_box(sink);
            (t1 - t0) as f64 / BATCH as f64
        })
        .collect();
    costs.sort_by(f64::total_cmp);
    let read_cost = costs[costs.len() / 2];
    ClockInfo {
        source: "clock_gettime(CLOCK_MONOTONIC)".into(),
        resolution_ns: resolution,
        declared_resolution_ns: declared,
        read_cost_ns: read_cost,
        min_interval_ns: ((resolution + read_cost) * ERROR_FACTOR).ceil() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_is_plausible() {
        let c = calibrate();
        assert!(c.resolution_ns >= 1.0 && c.resolution_ns < 1e7, "{c:?}");
        assert!(c.read_cost_ns > 0.0 && c.read_cost_ns < 1e5, "{c:?}");
        assert!(c.min_interval_ns as f64 >= 1000.0 * c.resolution_ns);
    }

    #[test]
    fn monotonic_never_goes_back() {
        let mut last = now_ns();
        for _ in 0..10_000 {
            let t = now_ns();
            assert!(t >= last);
            last = t;
        }
    }
}
