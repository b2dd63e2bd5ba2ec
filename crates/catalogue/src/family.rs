//! What a benchmark family file declares about itself, and how the figures
//! a family derives from its measurements are made into measurements.

use chrono::Utc;
use touchstone_harness::{Benchmark, Shape};
use touchstone_results::{Measurement, Statistic, Summary, Unit, Warning};

use crate::params::{Param, Point};

/// Whether `--parallel N` makes sense for a family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parallel {
    Allowed,
    /// Not parallelisable, with the reason shown to the user.
    No(&'static str),
}

/// How the suite is being run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mode {
    pub quick: bool,
}

/// A case ready to measure: built in the parent, set up in each child.
pub struct Built {
    pub bench: Box<dyn Benchmark>,
    pub shape: Shape,
    /// An overhead to measure the same way and subtract (name, benchmark).
    pub baseline: Option<(String, Box<dyn Benchmark>)>,
}

impl Built {
    pub fn new(bench: impl Benchmark + 'static, shape: Shape) -> Built {
        Built {
            bench: Box::new(bench),
            shape,
            baseline: None,
        }
    }
    pub fn with_baseline(mut self, name: &str, b: impl Benchmark + 'static) -> Built {
        self.baseline = Some((name.to_string(), Box::new(b)));
        self
    }
}

/// A benchmark family: its name (lmbench's where one exists), report group,
/// one-line description, parameters with bounds, and how to build a case.
/// Each family file ends with one, made by `Family::new` and stating only
/// what differs from what most families share:
///
/// ```ignore
/// pub const FAMILY: Family = Family {
///     params: &[placement::PARAM],
///     ..Family::new("lat_pipe", "comm_lat", "pipe round trip of 1 byte", build)
/// };
/// ```
pub struct Family {
    pub name: &'static str,
    pub group: &'static str,
    pub summary: &'static str,
    pub params: &'static [Param],
    pub parallel: Parallel,
    /// Part of the default suite (`touchstone run` with no names).
    pub default_suite: bool,
    /// Why the family cannot run on this machine, if it cannot.
    pub unsupported: fn() -> Option<String>,
    /// Build one case from a point of the parameter space; reached only
    /// through `make`.
    pub(crate) build: fn(&Point, Mode) -> Result<Built, String>,
    /// Figures derived from all of this family's measurements in a run
    /// (cache levels from a latency curve, line size from strides), computed
    /// after the last of them; each derived figure is a measurement itself.
    pub derive: Option<fn(&[Measurement]) -> Vec<Measurement>>,
}

impl Family {
    /// A family with what most share: no parameters, `--parallel` allowed,
    /// in the default suite, supported everywhere, nothing derived.
    pub const fn new(
        name: &'static str,
        group: &'static str,
        summary: &'static str,
        build: fn(&Point, Mode) -> Result<Built, String>,
    ) -> Family {
        Family {
            name,
            group,
            summary,
            params: &[],
            parallel: Parallel::Allowed,
            default_suite: true,
            unsupported: always_supported,
            build,
            derive: None,
        }
    }

    /// Build one case, ready to measure: the family's `build`, and for a
    /// family with a `cpus` parameter the warm-up and interval its
    /// placement needs (`Placement::settle`). The one way a case is built:
    ///
    /// ```compile_fail
    /// let f = touchstone_catalogue::family("lat_pipe").unwrap();
    /// let p = touchstone_catalogue::Point(Vec::new());
    /// // The raw build is private to the catalogue.
    /// let _ = (f.build)(&p, touchstone_catalogue::Mode::default());
    /// ```
    pub fn make(&self, p: &Point, mode: Mode) -> Result<Built, String> {
        let mut built = (self.build)(p, mode)?;
        if let Some(place) = crate::support::placement::Placement::asked(p) {
            built.shape = place.settle(built.shape);
        }
        Ok(built)
    }
}

/// For families that run everywhere.
pub fn always_supported() -> Option<String> {
    None
}

/// A measurement derived from others (not timed itself): its samples are
/// the figures it was computed from, its headline `value`.
pub fn derived(
    name: &str,
    family: &str,
    group: &str,
    unit: Unit,
    value: f64,
    from: &[f64],
    extra: &[(&str, f64)],
    warnings: Vec<Warning>,
) -> Measurement {
    let samples = if from.is_empty() {
        vec![value]
    } else {
        from.to_vec()
    };
    let mut summary = Summary::of(&samples).unwrap_or_else(|| Summary::of(&[value]).unwrap());
    summary.median = value;
    let params = name
        .split('/')
        .skip(1)
        .filter_map(|seg| seg.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Measurement {
        name: name.to_string(),
        benchmark: family.to_string(),
        group: group.to_string(),
        params,
        parallel: 1,
        unit,
        statistic: Statistic::Median,
        samples,
        per_process: Vec::new(),
        summary,
        intervals: Vec::new(),
        baseline: None,
        warnings,
        extra: extra.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        started_at: Utc::now(),
        ended_at: Utc::now(),
    }
}

#[cfg(test)]
mod tests {
    use crate::support::placement::{CROSS_CPU_INTERVAL_NS, SETTLE_NS};
    use crate::{select, Mode};

    fn shape_of(spec: &str) -> touchstone_harness::Shape {
        let sel = select(&[spec.to_string()], Mode::default(), 1).unwrap();
        let c = &sel.cases[0];
        c.family.make(&c.point, Mode::default()).unwrap().shape
    }

    /// Cases that may run on several CPUs get the placement's warm-up and
    /// interval whatever their family's build says; others are left alone.
    #[test]
    fn make_settles_what_the_placement_needs() {
        for spec in ["lat_pipe/cpus:spread", "bw_tcp/size:64k/cpus:free"] {
            let s = shape_of(spec);
            assert_eq!(s.warmup_ns, SETTLE_NS, "{spec}");
            assert_eq!(s.enough_ns, CROSS_CPU_INTERVAL_NS, "{spec}");
        }
        for spec in ["lat_pipe/cpus:same", "lat_syscall/null"] {
            let s = shape_of(spec);
            assert_eq!((s.warmup_ns, s.enough_ns), (0, 0), "{spec}");
        }
    }
}
