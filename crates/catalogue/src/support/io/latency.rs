//! Per-operation latency as extras: the figures of a histogram and its
//! coarse buckets.

use hdrhistogram::Histogram;
use touchstone_results::model::{LATENCY_P50_US, LATENCY_P99_US};

/// Upper bounds (µs) of the coarse latency histogram kept as extras; the
/// last bucket holds the rest.
pub const HIST_BOUNDS_US: [u64; 7] = [1, 4, 16, 64, 256, 1000, 4000];

/// The per-operation latency figures of a histogram, as extras: min,
/// median, mean, p99, max (µs) and the percentage of operations in each
/// coarse bucket.
pub fn latency_extras(h: &Histogram<u64>) -> Vec<(String, f64)> {
    if h.is_empty() {
        return Vec::new();
    }
    let us = |ns: u64| ns as f64 / 1e3;
    let mut v = vec![
        ("lat_min_us".to_string(), us(h.min())),
        (LATENCY_P50_US.to_string(), us(h.value_at_quantile(0.5))),
        ("lat_mean_us".to_string(), h.mean() / 1e3),
        (LATENCY_P99_US.to_string(), us(h.value_at_quantile(0.99))),
        ("lat_max_us".to_string(), us(h.max())),
    ];
    let total = h.len() as f64;
    let mut below = 0u64;
    for b in HIST_BOUNDS_US {
        let upto = h.count_between(0, b * 1000 - 1);
        v.push((
            format!("hist_lt_{}", us_label(b)),
            100.0 * (upto - below) as f64 / total,
        ));
        below = upto;
    }
    let last = *HIST_BOUNDS_US.last().expect("bounds");
    v.push((
        format!("hist_ge_{}", us_label(last)),
        100.0 * (h.len() - below) as f64 / total,
    ));
    v
}

fn us_label(us: u64) -> String {
    if us >= 1000 {
        format!("{}ms", us / 1000)
    } else {
        format!("{us}us")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_extras_bucket_every_operation() {
        let mut h = touchstone_results::curve::latency_histogram();
        for ns in [500, 2_000, 3_000, 100_000, 10_000_000] {
            h.record(ns).unwrap();
        }
        let x = latency_extras(&h);
        let total: f64 = x
            .iter()
            .filter(|(k, _)| k.starts_with("hist_"))
            .map(|(_, v)| v)
            .sum();
        assert!((total - 100.0).abs() < 1e-9);
        assert!(x.len() <= touchstone_harness::bench::MAX_EXTRAS - 3);
    }
}
