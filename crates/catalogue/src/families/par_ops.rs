//! par_ops: instruction-level parallelism of the basic operations (lmbench's
//! par_ops): the lat_ops kernels with 8 independent chains interleaved. The
//! figure is the time per operation when 8 chains overlap; the parallelism
//! (latency of one chain over that) is reported by `derive` as
//! `par_ops/parallelism:<op>`, from the one-chain latency each process
//! measures itself in `setup` (best of 20 short self-timed runs).

use touchstone_harness::clock::now_ns;
use touchstone_harness::{Benchmark, Context, Fallible, Shape};
use touchstone_results::{Measurement, Statistic, Unit};

use crate::family::{derived, Built, Family, Parallel, RunContext};
use crate::params::Point;
use crate::support::ops::{kernel, x86_64_only, Kernel, OP};

pub struct ParOps {
    one: Kernel,
    eight: Kernel,
    lat_ns: f64,
    sink: u64,
}

/// Best-of-`reps` time per operation of `k`, self-timed over about 200 µs.
pub fn self_timed_ns(k: Kernel, reps: u32) -> f64 {
    let mut calls = 16u64;
    loop {
        let t = now_ns();
        std::hint::black_box((k.f)(calls));
        if now_ns() - t > 200_000 {
            break;
        }
        calls *= 2;
    }
    (0..reps)
        .map(|_| {
            let t = now_ns();
            std::hint::black_box((k.f)(calls));
            (now_ns() - t) as f64 / (calls as f64 * k.ops)
        })
        .fold(f64::INFINITY, f64::min)
}

impl Benchmark for ParOps {
    fn setup(&mut self, _: &Context) -> Fallible {
        self.lat_ns = self_timed_ns(self.one, 20);
        Ok(())
    }
    /// Timed: `n` calls of the 8-chain kernel (128 operations in inline
    /// assembly, 8 independent dependent chains interleaved).
    fn run(&mut self, n: u64) -> Fallible {
        self.sink ^= (self.eight.f)(n);
        self.sink = std::hint::black_box(self.sink);
        Ok(())
    }
    fn extras(&mut self) -> Vec<(String, f64)> {
        vec![("latency_ns".into(), self.lat_ns)]
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let name = p.text("op");
    let one = kernel(name, 1).ok_or_else(|| format!("no kernel for {name}"))?;
    let eight = kernel(name, 8).ok_or_else(|| format!("no kernel for {name}"))?;
    Ok(Built::new(
        ParOps {
            one,
            eight,
            lat_ns: 0.0,
            sink: 0,
        },
        Shape::latency(eight.ops).with_statistic(Statistic::Min),
    ))
}

/// Parallelism = one chain's latency / time per operation with 8 chains.
pub fn derive(ms: &[Measurement]) -> Vec<Measurement> {
    ms.iter()
        .filter(|m| m.parallel == 1)
        .filter_map(|m| {
            let lat = *m.extra.get("latency_ns")?;
            let op = m.params.get("op")?;
            let par = parallelism(lat, m.value());
            Some(derived(
                &format!("par_ops/parallelism:{op}"),
                "par_ops",
                "proc",
                Unit::Count,
                par,
                &[],
                &[("latency_ns", lat), ("ns_per_op_8_chains", m.value())],
                Vec::new(),
            ))
        })
        .collect()
}

pub fn parallelism(latency_ns: f64, overlapped_ns: f64) -> f64 {
    latency_ns / overlapped_ns
}

pub const FAMILY: Family = Family {
    params: &[OP],
    parallel: Parallel::No("parallelism within one processor; other processes only share it"),
    unsupported: x86_64_only,
    derive: Some(derive),
    ..Family::new(
        "par_ops",
        "proc",
        "instruction-level parallelism of the basic operations (8 independent chains)",
        build,
    )
};

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::testing::measure_tiny;

    #[test]
    fn independent_adds_overlap() {
        let ms = measure_tiny("par_ops/int64_add,double_add").unwrap();
        let d = derive(&ms);
        assert_eq!(d.len(), 2);
        for m in &d {
            // Every x86-64 since the Pentium Pro issues more than one add a cycle.
            assert!(m.value() > 1.3, "{}: {}", m.name, m.value());
        }
        assert_eq!(parallelism(4.0, 1.0), 4.0);
    }
}
