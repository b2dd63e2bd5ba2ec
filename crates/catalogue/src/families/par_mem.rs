//! par_mem: memory-level parallelism (lmbench's par_mem): how many
//! independent cache misses overlap. K pointer chasers walk one random
//! chain over a working set of 4× the last-level cache (huge pages asked
//! for, to keep TLB misses out), starting evenly spaced along it so they
//! never meet. The figure is time per load with K chains; `derive` reports
//! the parallelism: one chain's latency over the best time per load.

use touchstone_harness::{Benchmark, Context, Fallible, Shape};
use touchstone_results::{Measurement, Statistic, Unit};

use crate::family::{curve_by, derived, Built, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::cache_levels::beyond_llc;
use crate::support::memory::{chain_offsets, check_memory, lay_chain, Buf, Order, Pages};

pub const MAX_CHAINS: usize = 32;

pub struct ParMem {
    chains: usize,
    size: usize,
    buf: Option<Buf>,
    cur: [*const usize; MAX_CHAINS],
}

// SAFETY: the pointers point into `buf`, owned by the same value.
unsafe impl Send for ParMem {}

/// `n` × 100 steps of each of K chains, interleaved so their misses overlap.
#[inline(never)]
fn chase_k<const K: usize>(cur: &mut [*const usize; MAX_CHAINS], n: u64) {
    let mut q = [std::ptr::null::<usize>(); K];
    q.copy_from_slice(&cur[..K]);
    for _ in 0..n * 100 {
        for p in q.iter_mut() {
            // SAFETY: each chain element holds the address of another.
            *p = unsafe { **p as *const usize };
        }
    }
    cur[..K].copy_from_slice(&std::hint::black_box(q));
}

impl Benchmark for ParMem {
    fn setup(&mut self, _: &Context) -> Fallible {
        let mut buf = Buf::new(self.size, Pages::Huge)?;
        let offs = chain_offsets(self.size, Order::Rand { elem: 64 }, 17);
        lay_chain(&mut buf, &offs);
        for k in 0..self.chains {
            let o = offs[k * offs.len() / self.chains];
            self.cur[k] = buf.ptr().wrapping_add(o) as *const usize;
        }
        self.buf = Some(buf);
        Ok(())
    }
    /// Timed: `n` × 100 × K dependent loads, K chains advanced in turn.
    fn run(&mut self, n: u64) -> Fallible {
        match self.chains {
            1 => chase_k::<1>(&mut self.cur, n),
            2 => chase_k::<2>(&mut self.cur, n),
            4 => chase_k::<4>(&mut self.cur, n),
            6 => chase_k::<6>(&mut self.cur, n),
            8 => chase_k::<8>(&mut self.cur, n),
            12 => chase_k::<12>(&mut self.cur, n),
            16 => chase_k::<16>(&mut self.cur, n),
            24 => chase_k::<24>(&mut self.cur, n),
            32 => chase_k::<32>(&mut self.cur, n),
            k => return Err(format!("unsupported chain count {k}").into()),
        }
        Ok(())
    }
    fn cleanup(&mut self) {
        self.buf = None;
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let chains: usize = p.text("chains").parse().map_err(|_| "bad chains")?;
    let size = beyond_llc();
    check_memory("par_mem", size as u64)?;
    Ok(Built::new(
        ParMem {
            chains,
            size,
            buf: None,
            cur: [std::ptr::null(); MAX_CHAINS],
        },
        Shape::latency(100.0 * chains as f64).with_statistic(Statistic::Min),
    )
    .with_setup_bytes(size as u64))
}

pub fn derive(ms: &[Measurement]) -> Vec<Measurement> {
    let curve = curve_by(ms, "chains");
    let Some(&(_, one)) = curve.iter().find(|p| p.0 == 1) else {
        return Vec::new();
    };
    let (best_k, best) = curve
        .iter()
        .copied()
        .fold((1, one), |a, p| if p.1 < a.1 { p } else { a });
    vec![derived(
        "par_mem/parallelism",
        "par_mem",
        "mem_lat",
        Unit::Count,
        one / best,
        &[],
        &[
            ("latency_ns", one),
            ("best_ns_per_load", best),
            ("best_chains", best_k as f64),
        ],
        Vec::new(),
    )]
}

pub const FAMILY: Family = Family {
    params: &[
        Param::choice("chains", &["1", "2", "4", "6", "8", "12", "16", "24", "32"])
            .quick(&["1", "4", "16", "32"])
            .help("independent chains"),
    ],
    derive: Some(derive),
    ..Family::new(
        "par_mem",
        "mem_lat",
        "memory-level parallelism: K independent random chains beyond the last-level cache",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallelism_from_a_synthetic_sweep() {
        let m = |k: &str, v: f64| {
            let mut d = derived(
                &format!("par_mem/chains:{k}"),
                "par_mem",
                "mem_lat",
                Unit::Ns,
                v,
                &[],
                &[],
                vec![],
            );
            d.params.insert("chains".into(), k.into());
            d
        };
        let d = derive(&[m("1", 100.0), m("4", 30.0), m("8", 20.0), m("16", 25.0)]);
        assert_eq!(d[0].value(), 5.0);
        assert_eq!(d[0].extra["best_chains"], 8.0);
    }
}
