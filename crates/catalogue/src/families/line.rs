//! line: the cache line size (lmbench's line). A chain visits the `stride`-
//! byte elements of each page in random order, pages in address order, over
//! a working set twice the L2 (so misses go to the next level). Below the
//! line size several elements share a line and only the first misses; from
//! the line size on every load misses, so the latency stops rising there.
//! `derive` reports the smallest stride whose latency is within 20 % of the
//! plateau, next to the OS's coherency_line_size.

use touchstone_results::{Measurement, Unit, Warning, WarningCode};

use crate::family::{curve_by, derived, Built, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::cache_levels::{median, os_caches, os_line_bytes};
use crate::support::memory::{Order, Pages};
use crate::support::pointer_chase::Chase;
use crate::support::sys::page_size;

/// Working set: twice the L2 (or the largest non-last level), at least 1 MiB.
pub fn working_set() -> usize {
    let c = os_caches();
    let l2 = c
        .iter()
        .find(|c| c.level == 2)
        .map_or(1 << 20, |c| c.size_bytes);
    ((2 * l2).max(1 << 20) as usize) / page_size() * page_size()
}

/// Each case chases one chain (`support::pointer_chase`): `n` × 100
/// dependent loads per interval, as lat_mem_rd.
fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let order = Order::RandInPage {
        elem: p.num("stride") as usize,
        page: page_size(),
    };
    let size = working_set();
    Chase::case("line", size, order, Pages::Default, 11).map(|b| b.with_working_set(size as u64))
}

/// The smallest stride whose latency is within 20 % of the plateau (the
/// median of the upper half of strides).
pub fn detect_line(curve: &[(u64, f64)]) -> Option<u64> {
    let mut c = curve.to_vec();
    c.sort_by_key(|p| p.0);
    if c.len() < 3 {
        return None;
    }
    let upper: Vec<f64> = c[c.len() / 2..].iter().map(|p| p.1).collect();
    let plateau = median(&upper);
    c.iter().find(|p| p.1 >= 0.8 * plateau).map(|p| p.0)
}

pub fn derive(ms: &[Measurement]) -> Vec<Measurement> {
    let curve = curve_by(ms, "stride");
    let Some(line) = detect_line(&curve) else {
        return Vec::new();
    };
    let os = os_line_bytes();
    let mut w = Vec::new();
    if let Some(o) = os {
        if o != line {
            w.push(Warning::new(
                WarningCode::LineDiffers,
                format!("line size measured {line} B; the OS reports {o} B"),
            ));
        }
    }
    let mut extra = vec![];
    if let Some(o) = os {
        extra.push(("os_line_bytes", o as f64));
    }
    vec![derived(
        "line/detected",
        "line",
        "mem_lat",
        Unit::Bytes,
        line as f64,
        &[],
        &extra,
        w,
    )]
}

pub const FAMILY: Family = Family {
    params: &[Param::size("stride", 8, 4096)
        .measured(&["8", "16", "32", "64", "128", "256", "512"])
        .quick(&["16", "32", "64", "128", "256"])
        .help("chain element size in bytes")],
    derive: Some(derive),
    ..Family::new(
        "line",
        "mem_lat",
        "cache line size: latency of random in-page chains by element size; line derived",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{measure_spec, tiny_plan};

    #[test]
    fn detection_on_synthetic_curves() {
        let c = [
            (8, 1.5),
            (16, 2.0),
            (32, 3.0),
            (64, 5.0),
            (128, 5.1),
            (256, 5.0),
        ];
        assert_eq!(detect_line(&c), Some(64));
        let c = [
            (16, 2.0),
            (32, 3.0),
            (64, 4.0),
            (128, 8.0),
            (256, 8.1),
            (512, 7.9),
        ];
        assert_eq!(detect_line(&c), Some(128));
    }

    /// On this machine the detected line matches the OS's (a real run).
    /// A shared virtual machine can stall a whole case (vCPU migration to
    /// another cache domain), so up to three attempts are made; a wrong
    /// detection fails all three.
    #[test]
    fn detects_the_os_line_size() {
        let Some(os) = os_line_bytes() else { return };
        let plan = touchstone_harness::Plan {
            repetitions: 21,
            ..tiny_plan(1)
        };
        let mut seen = Vec::new();
        for _ in 0..3 {
            let ms = measure_spec(
                "line/stride:16,32,64,128,256",
                &plan,
                &RunContext::default(),
            )
            .unwrap();
            let got = derive(&ms)[0].value() as u64;
            // An adjacent-line prefetcher may pair lines: allow 2x.
            if got == os || got == 2 * os {
                return;
            }
            seen.push((got, ms.iter().map(|m| m.value()).collect::<Vec<_>>()));
        }
        panic!("line size never matched the OS's {os} B: {seen:?}");
    }
}
