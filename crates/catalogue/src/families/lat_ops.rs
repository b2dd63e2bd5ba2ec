//! lat_ops: the latency of basic arithmetic (lmbench's lat_ops): add, mul,
//! div, mod and bit (xor) on int (32-bit) and int64, add, mul and div on
//! float and double. Each case times one dependent chain of one instruction
//! in inline assembly, with values that stay bounded; the kernels, what
//! keeps each chain bounded and what the optimiser cannot remove are in
//! `support::ops`. x86-64 only.

use touchstone_harness::{Benchmark, Fallible, Shape};
use touchstone_results::Statistic;

use crate::family::{Built, Family, RunContext};
use crate::params::Point;
use crate::support::ops::{kernel, x86_64_only, Kernel, OP};

/// Runs a kernel `n` times; what `lat_ops` and `par_ops` time.
pub struct Ops {
    pub k: Kernel,
    pub sink: u64,
}

impl Benchmark for Ops {
    /// Timed: `n` calls of the kernel, each a fixed number of dependent
    /// (lat_ops) or 8-way independent (par_ops) register operations in
    /// inline assembly. The result is black_boxed. The loop's own
    /// increment and branch run beside the chain and are not subtracted.
    fn run(&mut self, n: u64) -> Fallible {
        self.sink ^= (self.k.f)(n);
        self.sink = std::hint::black_box(self.sink);
        Ok(())
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let name = p.text("op");
    let k = kernel(name, 1).ok_or_else(|| format!("no kernel for {name} here"))?;
    Ok(Built::new(
        Ops { k, sink: 0 },
        // The chain's latency is a physical limit: the fastest interval.
        Shape::latency(k.ops).with_statistic(Statistic::Min),
    ))
}

pub const FAMILY: Family = Family {
    params: &[OP],
    unsupported: x86_64_only,
    ..Family::new(
        "lat_ops",
        "proc",
        "latency of add, mul, div, mod, bit on int, int64, float, double (dependent chains)",
        build,
    )
};

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use crate::testing::{assert_sane, measure_tiny};

    #[test]
    fn results_are_positive_and_division_is_slower_than_addition() {
        let ms = measure_tiny("lat_ops").unwrap();
        let get = |n: &str| {
            ms.iter()
                .find(|m| m.name == format!("lat_ops/{n}"))
                .unwrap()
                .value()
        };
        for m in &ms {
            assert_sane(m);
        }
        for ty in ["int", "int64", "float", "double"] {
            let (add, div) = (get(&format!("{ty}_add")), get(&format!("{ty}_div")));
            assert!(div > add, "{ty}: div {div} ns not slower than add {add} ns");
        }
    }
}
