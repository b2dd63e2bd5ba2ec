//! lat_dram_page: open versus closed DRAM page (lmbench's lat_dram_page),
//! where measurable. Two random chains over 4× the last-level cache in huge
//! pages (no TLB misses to speak of): `open` visits the lines of each 4 KiB
//! block in random order before moving to a random next block, so
//! consecutive misses tend to hit a DRAM row already open; `closed` visits
//! every line in random order, so consecutive misses land in different rows.
//! The difference bounds the open-page benefit from above: the spatial
//! prefetchers also favour `open`, and physical-to-DRAM address mapping is
//! unknown (inside a VM, unknowable). `derive` reports the difference.

use touchstone_harness::{Benchmark, Context, Fallible, Shape};
use touchstone_results::{Measurement, Statistic, Unit};

use super::memlib::{
    chain_offsets, chase, check_memory, derived, lay_chain, llc_bytes, Buf, Order, Pages,
    CHASE_LOADS,
};
use crate::family::{always_supported, Built, Family, Mode, Parallel};
use crate::params::{Kind, Param, Point};

pub struct LatDramPage {
    open: bool,
    size: usize,
    buf: Option<Buf>,
    cur: *const usize,
}

// SAFETY: `cur` points into `buf`, owned by the same value.
unsafe impl Send for LatDramPage {}

impl Benchmark for LatDramPage {
    fn setup(&mut self, _: &Context) -> Fallible {
        let mut buf = Buf::new(self.size, Pages::Huge)?;
        let order = if self.open {
            Order::RandBlocks {
                elem: 64,
                block: 4096,
            }
        } else {
            Order::Rand { elem: 64 }
        };
        self.cur = lay_chain(&mut buf, &chain_offsets(self.size, order, 19));
        self.buf = Some(buf);
        Ok(())
    }
    /// Timed: `n` × 100 dependent loads along the chain.
    fn run(&mut self, n: u64) -> Fallible {
        self.cur = chase(self.cur, n);
        Ok(())
    }
    fn cleanup(&mut self) {
        self.buf = None;
    }
}

fn build(p: &Point, _: Mode) -> Result<Built, String> {
    let size = super::par_mem::working_set();
    let _ = llc_bytes;
    check_memory("lat_dram_page", size as u64)?;
    Ok(Built::new(
        LatDramPage {
            open: p.text("page") == "open",
            size,
            buf: None,
            cur: std::ptr::null(),
        },
        Shape::latency(CHASE_LOADS).with_statistic(Statistic::Min),
    ))
}

pub fn derive(ms: &[Measurement]) -> Vec<Measurement> {
    let get = |p: &str| {
        ms.iter()
            .find(|m| m.parallel == 1 && m.params.get("page").map(String::as_str) == Some(p))
            .map(|m| m.value())
    };
    let (Some(open), Some(closed)) = (get("open"), get("closed")) else {
        return Vec::new();
    };
    vec![derived(
        "lat_dram_page/difference",
        "lat_dram_page",
        "mem_lat",
        Unit::Ns,
        closed - open,
        &[],
        &[("open_ns", open), ("closed_ns", closed)],
        Vec::new(),
    )]
}

pub const FAMILY: Family = Family {
    name: "lat_dram_page",
    group: "mem_lat",
    summary:
        "DRAM latency with consecutive misses in the same 4 KiB block (open page) or not (closed)",
    params: &[Param {
        name: "page",
        help: "open: misses clustered by 4 KiB block; closed: scattered",
        kind: Kind::Choice(&["open", "closed"]),
        default: &["open", "closed"],
        quick: &[],
        positional: true,
    }],
    parallel: Parallel::Allowed,
    default_suite: true,
    unsupported: always_supported,
    build,
    derive: Some(derive),
};
