//! What a benchmark family file declares about itself.

use touchstone_harness::{Benchmark, Shape};
use touchstone_results::Measurement;

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
    /// Build one case from a point of the parameter space.
    pub build: fn(&Point, Mode) -> Result<Built, String>,
    /// Figures derived from all of this family's measurements in a run
    /// (cache levels from a latency curve, line size from strides), computed
    /// after the last of them; each derived figure is a measurement itself.
    pub derive: Option<fn(&[Measurement]) -> Vec<Measurement>>,
}

impl Family {
    /// Build one case: the family's `build`, then what every family's case
    /// owes its `cpus` placement (see `placement::settle`). Call this, not
    /// `build`, to get a case ready to measure.
    pub fn make(&self, p: &Point, mode: Mode) -> Result<Built, String> {
        let mut built = (self.build)(p, mode)?;
        if let Some(place) = crate::placement::Placement::asked(p) {
            built.shape = place.settle(built.shape);
        }
        Ok(built)
    }
}

/// For families that run everywhere.
pub fn always_supported() -> Option<String> {
    None
}
