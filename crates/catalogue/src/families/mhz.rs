//! mhz: the processor's clock from a dependent chain of the simplest
//! operation (lmbench's mhz): 64-bit register adds, one cycle each on every
//! x86-64, so adds per microsecond is the clock in MHz. The headline is the
//! fastest interval (lmbench takes the minimum time): interference only
//! ever slows the chain. `derive` sets the OS's figure beside it.

use touchstone_harness::{Benchmark, Context, Fallible, Shape};
use touchstone_results::{Measurement, Statistic, Unit, Warning, WarningCode};

use crate::family::{derived, Built, Family, Parallel, RunContext};
use crate::params::Point;
use crate::support::ops::{kernel, x86_64_only, Kernel};

pub struct Mhz {
    k: Kernel,
    sink: u64,
}

impl Benchmark for Mhz {
    fn setup(&mut self, _: &Context) -> Fallible {
        Ok(())
    }
    /// Timed: `n` calls of 100 dependent one-cycle adds (inline assembly,
    /// so nothing can be folded); the loop counter runs beside the chain.
    fn run(&mut self, n: u64) -> Fallible {
        self.sink ^= (self.k.f)(n);
        self.sink = std::hint::black_box(self.sink);
        Ok(())
    }
}

fn build(_: &Point, _: &RunContext) -> Result<Built, String> {
    let k = kernel("int64_add", 1).ok_or("no add kernel on this architecture")?;
    Ok(Built::new(
        Mhz { k, sink: 0 },
        // ops/s / 1e6 = MHz; the maximum rate is lmbench's minimum time.
        Shape::rate(k.ops, Unit::Mhz, 1e6).with_statistic(Statistic::Max),
    ))
}

/// What the OS says the clock is: cpufreq's maximum, else /proc/cpuinfo.
pub fn os_mhz() -> Option<f64> {
    touchstone_results::host::collect().cpu.mhz
}

/// The OS's figure beside the measured one, with a warning when they differ
/// by more than 10 % (turbo, power saving, or a hypervisor's nominal figure).
pub fn derive(ms: &[Measurement]) -> Vec<Measurement> {
    let Some(m) = ms.iter().find(|m| m.name == "mhz" && m.parallel == 1) else {
        return Vec::new();
    };
    let Some(os) = os_mhz() else {
        return Vec::new();
    };
    vec![compare(m.value(), os)]
}

pub fn compare(measured: f64, os: f64) -> Measurement {
    let ratio = measured / os;
    let mut w = Vec::new();
    if !(0.9..=1.1).contains(&ratio) {
        w.push(Warning::new(
            WarningCode::MhzDiffers,
            format!("measured {measured:.0} MHz; the OS reports {os:.0} MHz"),
        ));
    }
    derived(
        "mhz/source:os",
        "mhz",
        "proc",
        Unit::Mhz,
        os,
        &[],
        &[("measured_mhz", measured), ("ratio", ratio)],
        w,
    )
}

pub const FAMILY: Family = Family {
    parallel: Parallel::No("the clock of one processor; several copies only measure sharing"),
    unsupported: x86_64_only,
    derive: Some(derive),
    ..Family::new(
        "mhz",
        "proc",
        "processor clock from a chain of dependent one-cycle adds (fastest interval); OS figure beside it",
        build,
    )
};

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::testing::{assert_sane, measure_spec, measure_tiny, tiny_plan};

    /// The measured clock agrees with a loop of known cost: a dependent
    /// chain of 32-bit imul takes 3 cycles per operation on x86-64 CPUs
    /// since Core 2 and K10 (Intel and AMD manuals).
    #[test]
    fn agrees_with_a_known_cost_loop() {
        let plan = tiny_plan(1);
        let mhz = measure_spec("mhz", &plan, &RunContext::default()).unwrap()[0].value();
        let mul =
            measure_spec("lat_ops/int_mul", &plan, &RunContext::default()).unwrap()[0].value();
        let cycles = mul * mhz / 1000.0;
        assert!(
            (2.5..=3.6).contains(&cycles),
            "imul took {cycles:.2} cycles at {mhz:.0} MHz"
        );
    }

    #[test]
    fn measures_and_compares() {
        let m = &measure_tiny("mhz").unwrap()[0];
        assert_sane(m);
        assert_eq!(m.unit, Unit::Mhz);
        let d = compare(3000.0, 2000.0);
        assert!(d.warnings.iter().any(|w| w.code == "mhz-differs"));
        assert!(compare(3000.0, 3100.0).warnings.is_empty());
    }
}
