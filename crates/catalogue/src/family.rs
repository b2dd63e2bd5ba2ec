//! What a benchmark family file declares about itself, and how the figures
//! a family derives from its measurements are made into measurements.

use chrono::Utc;
use touchstone_harness::workload::Workload;
use touchstone_harness::{Benchmark, Shape};
use touchstone_results::{Measurement, Statistic, Summary, Unit, Warning};

use crate::params::{Param, Point};
pub use crate::run_context::{Held, OptionValue, RunCheck, RunContext, RunOption};

/// Whether `--parallel N` makes sense for a family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parallel {
    Allowed,
    /// Not parallelisable, with the reason shown to the user.
    No(&'static str),
}

/// A case ready to measure: built in the parent, set up in each child.
pub struct Built {
    pub bench: Box<dyn Benchmark>,
    pub shape: Shape,
    /// An overhead to measure the same way and subtract (name, benchmark).
    pub baseline: Option<(String, Box<dyn Benchmark>)>,
    /// What the case costs beyond its timed intervals, for `run --dry-run`.
    pub cost: Cost,
}

/// What a case costs beyond its warm-up and timed intervals, declared by
/// its family so that `run --dry-run` (and the progress bar's time left)
/// know it (crates/cli/src/cmd/dry_run.rs turns it into time).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cost {
    /// Bytes each process faults in or writes before its first interval,
    /// in every round (each round builds the case afresh): buffers, arrays,
    /// files.
    pub setup_bytes: u64,
    /// About how long one iteration takes when that can outlast the
    /// interval target (one whole pass of an I/O file): an interval is
    /// never shorter than one iteration. 0: short.
    pub iteration_ns: u64,
    /// Untimed work around each interval, as a multiple of the timed work
    /// (lat_fs delete creates, untimed, the files it then unlinks).
    pub untimed_ratio: f64,
    /// The setup bytes are a file written and fsynced (io's test file),
    /// not memory faulted in.
    pub synced_file: bool,
}

impl Built {
    pub fn new(bench: impl Benchmark + 'static, shape: Shape) -> Built {
        Built {
            bench: Box::new(bench),
            shape,
            baseline: None,
            cost: Cost::default(),
        }
    }
    /// The bytes each process faults in or writes before timing (`Cost`).
    pub fn with_setup_bytes(mut self, bytes: u64) -> Built {
        self.cost.setup_bytes = bytes;
        self
    }
    /// The bytes the timed loop walks, where that decides which cache
    /// serves it: one in a cache the host's other tenants share takes the
    /// run-level term measured for such figures
    /// (`support::tenants::tenants_share`).
    pub fn with_working_set(mut self, bytes: u64) -> Built {
        let shared = crate::support::tenants::tenants_share(bytes);
        self.shape = self.shape.with_tenants_share_cache(shared);
        self
    }
    /// About how long one iteration takes, when it can be long (`Cost`).
    pub fn with_iteration_ns(mut self, ns: u64) -> Built {
        self.cost.iteration_ns = ns;
        self
    }
    /// The setup bytes are a file written and fsynced (`Cost`).
    pub fn with_synced_file(mut self, synced: bool) -> Built {
        self.cost.synced_file = synced;
        self
    }
    /// Untimed work around each interval over the timed (`Cost`).
    pub fn with_untimed_ratio(mut self, ratio: f64) -> Built {
        self.cost.untimed_ratio = ratio;
        self
    }
    pub fn with_baseline(mut self, name: &str, b: impl Benchmark + 'static) -> Built {
        self.baseline = Some((name.to_string(), Box::new(b)));
        self
    }
}

/// How a workload family builds its `Workload` from a point of its parameters.
pub type BuildWorkload = fn(&Point, &RunContext) -> Result<Box<dyn Workload>, String>;
/// How a micro-benchmark family builds the case of a point.
pub type BuildCase = fn(&Point, &RunContext) -> Result<Built, String>;

/// How a family's cases are built.
pub(crate) enum Build {
    /// A micro-benchmark case the harness times.
    Case(BuildCase),
    /// A system workload, swept into a load curve (DESIGN.md "Workloads").
    Workload {
        /// What one operation is ("transaction"): the unit of its throughput.
        operation: &'static str,
        build: BuildWorkload,
    },
}

/// The load ladder of a workload spec (`tcp_rr/load:1,2,4`): the numbers
/// of concurrent clients measured, one point each. Not one of a family's
/// own parameters: the loads of a spec make one case, swept as a curve,
/// not one case each. Unnamed, the ladder doubles up to 4 × the usable CPUs,
/// bounded by the workload. Load 0 is refused when the sweep is planned,
/// with the other bounds the workload and the machine set.
pub const LOAD: Param = Param::int("load", 0, u32::MAX as u64)
    .help("concurrent clients, one point of the curve each (default 1, 2, 4, … up to 4 × the usable CPUs)");

/// A benchmark family: its name (lmbench's where one exists), report group,
/// one-line description, parameters with bounds, and how to build a case.
/// Each family file ends with one, made by `Family::new` (a micro-benchmark)
/// or `Family::workload` (a system workload) and stating only what differs
/// from what most families share:
///
/// ```ignore
/// pub const FAMILY: Family = Family {
///     params: &[MSG_SIZE, placement::PARAM],
///     ..Family::new("lat_unix", "comm_lat", "AF_UNIX stream socket round trip", build)
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
    /// The run options it honours (`--dir`, `--postgres`): the command
    /// line offers them and refuses them where no selected family does;
    /// its build sees only these (`RunContext`).
    pub options: &'static [RunOption],
    /// A line about the run the command prints before measuring, once
    /// however many families give the same (where the I/O files go).
    pub run_note: Option<fn(&RunContext) -> String>,
    /// Build one case from a point of the parameter space; reached only
    /// through `make` (or `make_workload`).
    pub(crate) build: Build,
    /// Figures derived from all of this family's measurements in a run
    /// (cache levels from a latency curve, line size from strides), computed
    /// after the last of them; each derived figure is a measurement itself.
    pub derive: Option<fn(&[Measurement]) -> Vec<Measurement>>,
    /// What a family adds to each of its measurements once it is made
    /// (warnings about the conditions it ran in, figures computed from the
    /// headline such as IOPS from MB/s), before it is stored; reached
    /// through `Family::annotate`.
    pub(crate) annotate: Option<fn(&mut Measurement, &RunContext)>,
    /// Parameters that do not apply at a point (rt_wake's `priority` under
    /// `policy:other`): left out of the case's name and stored parameters,
    /// so a result never names a setting that had no effect.
    pub inert: fn(&Point) -> &'static [&'static str],
}

fn none_inert(_: &Point) -> &'static [&'static str] {
    &[]
}

impl Family {
    /// A family with what most share: no parameters, `--parallel` allowed,
    /// in the default suite, supported everywhere, nothing derived.
    pub const fn new(
        name: &'static str,
        group: &'static str,
        summary: &'static str,
        build: BuildCase,
    ) -> Family {
        Family {
            name,
            group,
            summary,
            params: &[],
            parallel: Parallel::Allowed,
            default_suite: true,
            unsupported: always_supported,
            options: &[],
            run_note: None,
            build: Build::Case(build),
            derive: None,
            annotate: None,
            inert: none_inert,
        }
    }

    /// A system workload: measured as a load curve (`Workload`, swept over
    /// the spec's `load` ladder and `--cpus`), not timed as a case. Its
    /// clients are its parallelism, so `--parallel` is refused; it is not
    /// in the default suite (a sweep takes tens of seconds); `operation`
    /// names what one operation is ("transaction").
    ///
    /// ```ignore
    /// pub const FAMILY: Family = Family {
    ///     params: PARAMS,
    ///     ..Family::workload("tcp_rr", "workload", SUMMARY, "transaction", build)
    /// };
    /// ```
    pub const fn workload(
        name: &'static str,
        group: &'static str,
        summary: &'static str,
        operation: &'static str,
        build: BuildWorkload,
    ) -> Family {
        Family {
            name,
            group,
            summary,
            params: &[],
            parallel: Parallel::No(
                "a workload runs its own clients: give its load (e.g. load:1,2,4), not --parallel",
            ),
            default_suite: false,
            unsupported: always_supported,
            options: &[],
            run_note: None,
            build: Build::Workload { operation, build },
            derive: None,
            annotate: None,
            inert: none_inert,
        }
    }

    /// The same family with `params` (for a `const fn` that declares a
    /// kind of family, where `Family { params, ..f }` reads worse).
    pub const fn with_params(self, params: &'static [Param]) -> Family {
        Family { params, ..self }
    }

    /// Whether it honours the run option named `name`.
    pub fn honours(&self, name: &str) -> bool {
        self.options.iter().any(|o| o.name == name)
    }

    /// Add what the family adds to a measurement of one of its cases
    /// (`annotate`), for the run `ctx`.
    pub fn annotate(&self, m: &mut Measurement, ctx: &RunContext) {
        if let Some(annotate) = self.annotate {
            annotate(m, &ctx.for_family(self));
        }
    }

    /// The family's line about the run `ctx`, if it has one.
    pub fn run_note(&self, ctx: &RunContext) -> Option<String> {
        self.run_note.map(|note| note(&ctx.for_family(self)))
    }

    /// Whether this family is a system workload (measured as a load curve).
    pub fn is_workload(&self) -> bool {
        matches!(self.build, Build::Workload { .. })
    }

    /// What one operation of a workload is ("transaction"); None for a
    /// micro-benchmark.
    pub fn operation(&self) -> Option<&'static str> {
        match self.build {
            Build::Workload { operation, .. } => Some(operation),
            Build::Case(_) => None,
        }
    }

    /// Build a workload family's `Workload` from a point of its parameters,
    /// for a sweep (`touchstone_harness::workload::sweep`).
    pub fn make_workload(&self, p: &Point, ctx: &RunContext) -> Result<Box<dyn Workload>, String> {
        match self.build {
            Build::Workload { build, .. } => build(p, &ctx.for_family(self)),
            Build::Case(_) => Err(format!(
                "{} is a micro-benchmark, not a workload",
                self.name
            )),
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
    /// let _ = (f.build)(&p, &touchstone_catalogue::RunContext::default());
    /// ```
    pub fn make(&self, p: &Point, ctx: &RunContext) -> Result<Built, String> {
        let Build::Case(build) = self.build else {
            return Err(format!(
                "{} is a workload: it is swept into a load curve (make_workload), not timed as a case",
                self.name
            ));
        };
        let mut built = build(p, &ctx.for_family(self))?;
        if let Some(place) = crate::support::placement::Placement::asked(p) {
            built.shape = place.settle(built.shape);
        }
        Ok(built)
    }
}

/// The loads a workload measures when none are named, on `usable` CPUs
/// (up to `max`): in quick mode one client and one per usable CPU (one
/// load where they agree), else the engine's ladder.
pub fn one_and_per_cpu_when_quick(quick: bool, usable: usize, max: u32) -> Vec<u32> {
    if quick {
        let mut loads = vec![1, (usable as u32).clamp(1, max)];
        loads.dedup();
        loads
    } else {
        touchstone_harness::workload::default_loads_from(1, usable, Some(max))
    }
}

/// For families that run everywhere.
pub fn always_supported() -> Option<String> {
    None
}

/// The single-process measurements' figures by their numeric parameter
/// `param` ((stride, ns) for line, (chains, ns) for par_mem): the curve a
/// derived measurement is read from.
pub fn curve_by(ms: &[Measurement], param: &str) -> Vec<(u64, f64)> {
    ms.iter()
        .filter(|m| m.parallel == 1)
        .filter_map(|m| Some((m.params.get(param)?.parse().ok()?, m.value())))
        .collect()
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
    let params = crate::params::named_in(name);
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
        rounds: Vec::new(),
        summary,
        intervals: Vec::new(),
        baseline: None,
        warnings,
        extra: extra.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        invalid: None,
        started_at: Utc::now(),
        ended_at: Utc::now(),
        convergence: None,
    }
}

/// A derived level (a cache or TLB level the machine reports) that the
/// measured curve does not confirm: stored with its name so that every run
/// has the same names, but `invalid` ("not detected" and `reason`), so no
/// report, comparison or index reads a number from it. The reason also
/// travels as a `level-not-detected` warning, which reports print.
pub fn not_detected_level(
    name: &str,
    group: &str,
    unit: Unit,
    reason: &str,
    extra: &[(&str, f64)],
) -> Measurement {
    let family = name.split('/').next().unwrap_or(name);
    let text = format!("not detected: {reason}");
    let mut m = derived(
        name,
        family,
        group,
        unit,
        0.0,
        &[],
        extra,
        vec![touchstone_results::Warning::new(
            touchstone_results::WarningCode::LevelNotDetected,
            text.clone(),
        )],
    );
    m.invalid = Some(text);
    m
}

#[cfg(test)]
mod tests {
    use crate::support::placement::{CROSS_CPU_INTERVAL_NS, SETTLE_NS};
    use crate::{select, RunContext};

    fn shape_of(spec: &str) -> touchstone_harness::Shape {
        let ctx = RunContext::default();
        let sel = select(&[spec.to_string()], &ctx, 1).unwrap();
        let c = &sel.cases[0];
        c.family.make(&c.point, &ctx).unwrap().shape
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
