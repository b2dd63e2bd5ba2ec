//! Energy counters the machine exposes, read around a timed interval or a
//! workload window (issue #30). Sources: the kernel's powercap (RAPL package,
//! core and DRAM zones, Intel and AMD), hwmon energy and power sensors, and
//! the BMC through `ipmitool dcmi power reading`. Nothing is estimated: a
//! source that cannot be read is reported with its reason, and a machine with
//! none says so (`Discovery::summary`).

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What part of the machine a reading covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Coverage {
    Package,
    Core,
    Dram,
    /// The whole node (a BMC reading, or a hwmon sensor labelled so).
    Node,
    /// A sensor whose label names something else; kept as labelled.
    Other(String),
}

impl Coverage {
    fn from_label(label: &str) -> Coverage {
        let lower = label.to_ascii_lowercase();
        if lower.starts_with("package") {
            Coverage::Package
        } else if lower == "core" || lower.starts_with("core") {
            Coverage::Core
        } else if lower == "dram" {
            Coverage::Dram
        } else if lower == "node" || lower == "system" {
            Coverage::Node
        } else {
            Coverage::Other(label.to_string())
        }
    }
}

/// How a source reports: a cumulative energy counter (microjoules) or an
/// instantaneous power (microwatts), which gives energy only when sampled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Cumulative microjoules that wrap to zero after `max_uj` (RAPL's
    /// max_energy_range_uj); `None` when the counter does not say.
    Counter {
        max_uj: Option<u64>,
    },
    PowerMicrowatts,
}

/// One readable source: the file read, what it covers, how it reports, and
/// its resolution in the unit it reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub path: PathBuf,
    pub coverage: Coverage,
    pub kind: Kind,
    /// The smallest step the file reports: 1 µJ or 1 µW as the kernel
    /// exposes it (RAPL's true granularity is the hardware's energy unit,
    /// about 61 µJ, which the kernel hides).
    pub resolution: u64,
}

/// What was found under a sysfs root: the sources that read, and those that
/// exist but could not be read (with why: energy_uj is root-only on recent
/// kernels).
#[derive(Debug, Default)]
pub struct Discovery {
    pub sources: Vec<Source>,
    pub unreadable: Vec<(PathBuf, String)>,
}

impl Discovery {
    /// The one line a run prints about its energy sources.
    pub fn summary(&self) -> String {
        if self.sources.is_empty() && self.unreadable.is_empty() {
            return "energy: this machine exposes no energy counter (no powercap or hwmon \
                    energy/power files); no energy is recorded"
                .to_string();
        }
        let mut line = format!("energy: {} source(s)", self.sources.len());
        if !self.unreadable.is_empty() {
            let (path, why) = &self.unreadable[0];
            line.push_str(&format!(
                ", {} unreadable ({}: {why})",
                self.unreadable.len(),
                path.display()
            ));
        }
        line
    }
}

impl Discovery {
    /// The line a run prints once where no energy source can be read (a
    /// virtual machine, or counters a normal user may not read), so that
    /// a run never leaves a reader to guess; None where one can.
    pub fn run_note(&self) -> Option<String> {
        if !self.sources.is_empty() {
            return None;
        }
        let why = match self.unreadable.first() {
            Some((path, why)) => format!(
                "{} energy file(s) refused ({}: {why}; run as root, or allow reading them)",
                self.unreadable.len(),
                path.display()
            ),
            None => "this machine exposes none (no powercap or hwmon energy/power files)".into(),
        };
        Some(format!(
            "no energy counter readable: {why}; this run records no energy"
        ))
    }
}

/// Reads one sysfs file; a parameter so tests can refuse a file as the
/// kernel refuses a normal user (the test machine runs as root).
pub type ReadFile<'a> = &'a dyn Fn(&Path) -> io::Result<String>;

pub fn read_to_string(path: &Path) -> io::Result<String> {
    std::fs::read_to_string(path)
}

/// Finds the energy sources under `sys` (normally "/sys").
pub fn discover(sys: &Path, read: ReadFile) -> Discovery {
    let mut found = Discovery::default();
    discover_powercap(&sys.join("class/powercap"), read, &mut found);
    discover_hwmon(&sys.join("class/hwmon"), read, &mut found);
    found
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(list) => list.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(_) => Vec::new(),
    };
    entries.sort();
    entries
}

fn read_trimmed(read: ReadFile, path: &Path) -> io::Result<String> {
    read(path).map(|text| text.trim().to_string())
}

fn discover_powercap(dir: &Path, read: ReadFile, found: &mut Discovery) {
    for zone in sorted_entries(dir) {
        let energy = zone.join("energy_uj");
        if !energy.exists() {
            continue;
        }
        let name = read_trimmed(read, &zone.join("name")).unwrap_or_default();
        if let Err(err) = read_trimmed(read, &energy).and_then(|t| parse_u64(&t)) {
            found.unreadable.push((energy, err.to_string()));
            continue;
        }
        let max_uj = read_trimmed(read, &zone.join("max_energy_range_uj"))
            .and_then(|t| parse_u64(&t))
            .ok();
        found.sources.push(Source {
            path: energy,
            coverage: Coverage::from_label(&name),
            kind: Kind::Counter { max_uj },
            resolution: 1,
        });
    }
}

fn discover_hwmon(dir: &Path, read: ReadFile, found: &mut Discovery) {
    for chip in sorted_entries(dir) {
        let chip_name = read_trimmed(read, &chip.join("name")).unwrap_or_default();
        for file in sorted_entries(&chip) {
            let Some(base) = file.file_name().and_then(OsStr::to_str) else {
                continue;
            };
            let (prefix, kind) = if let Some(p) = base.strip_suffix("_input") {
                if p.starts_with("energy") {
                    (p.to_string(), Kind::Counter { max_uj: None })
                } else if p.starts_with("power") {
                    (p.to_string(), Kind::PowerMicrowatts)
                } else {
                    continue;
                }
            } else {
                continue;
            };
            if let Err(err) = read_trimmed(read, &file).and_then(|t| parse_u64(&t)) {
                found.unreadable.push((file, err.to_string()));
                continue;
            }
            let label = read_trimmed(read, &chip.join(format!("{prefix}_label")))
                .unwrap_or_else(|_| format!("{chip_name} {prefix}"));
            found.sources.push(Source {
                path: file,
                coverage: Coverage::from_label(&label),
                kind,
                resolution: 1,
            });
        }
    }
}

fn parse_u64(text: &str) -> io::Result<u64> {
    text.parse::<u64>()
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, format!("not a count: {text:?}")))
}

/// Reads a source's current value (µJ for a counter, µW for power).
pub fn read_source(source: &Source, read: ReadFile) -> io::Result<u64> {
    read_trimmed(read, &source.path).and_then(|t| parse_u64(&t))
}

/// The microjoules a counter advanced from `before` to `after`, across one
/// wrap at `max_uj` (the interval must be shorter than one wrap: about an
/// hour for a package at 70 W with a 2^38 µJ range). `None` when the counter
/// went backwards and its range is unknown.
pub fn counter_delta(before: u64, after: u64, max_uj: Option<u64>) -> Option<u64> {
    if after >= before {
        return Some(after - before);
    }
    max_uj.map(|max| max - before + after + 1)
}

/// One source's reading at an instant, taken at the edges of a timed
/// interval or a workload window.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub values: Vec<Option<u64>>,
}

/// Reads every source once; a source that fails now is `None` (its window
/// gets no figure).
pub fn snapshot(sources: &[Source], read: ReadFile) -> Snapshot {
    Snapshot {
        values: sources.iter().map(|s| read_source(s, read).ok()).collect(),
    }
}

/// What one source says about one window.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowEnergy {
    pub coverage: Coverage,
    pub joules: f64,
    pub watts: f64,
    /// Joules per operation, only where the counter advanced by at least
    /// `MIN_STEPS_PER_FIGURE` of its resolution (quantisation under 0.1 %).
    pub joules_per_op: Option<f64>,
}

/// A per-operation figure needs this many counter steps in the window.
pub const MIN_STEPS_PER_FIGURE: u64 = 1_000;

/// The energy each source saw between two snapshots `seconds` apart, over
/// `ops` operations. A power sensor gives the mean of its two readings
/// times the window (two points: a figure for long windows, not short ones).
pub fn window(
    sources: &[Source],
    before: &Snapshot,
    after: &Snapshot,
    seconds: f64,
    ops: u64,
) -> Vec<WindowEnergy> {
    let mut out = Vec::new();
    if seconds <= 0.0 {
        return out;
    }
    for (i, source) in sources.iter().enumerate() {
        let (Some(b), Some(a)) = (before.values[i], after.values[i]) else {
            continue;
        };
        let (joules, steps) = match source.kind {
            Kind::Counter { max_uj } => match counter_delta(b, a, max_uj) {
                Some(uj) => (uj as f64 / 1e6, uj / source.resolution.max(1)),
                None => continue,
            },
            Kind::PowerMicrowatts => ((a as f64 + b as f64) / 2.0 / 1e6 * seconds, 0),
        };
        let resolvable = steps >= MIN_STEPS_PER_FIGURE && ops > 0;
        out.push(WindowEnergy {
            coverage: source.coverage.clone(),
            joules,
            watts: joules / seconds,
            joules_per_op: resolvable.then(|| joules / ops as f64),
        });
    }
    out
}

/// The discovered sources and the reader a measurement snapshots them with,
/// discovered once per run and handed to the process that takes the
/// machine-wide counters (one process only: they are not per process).
pub struct Probe {
    pub sources: Vec<Source>,
    pub read: Box<dyn Fn(&Path) -> io::Result<String> + Send>,
}

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Probe")
            .field("sources", &self.sources)
            .finish()
    }
}

impl Probe {
    pub fn snapshot(&self) -> Snapshot {
        snapshot(&self.sources, &*self.read)
    }

    /// A window's figures as measurement extras (`named_extras`), over
    /// `seconds` and `ops` operations.
    pub fn extras(
        &self,
        before: &Snapshot,
        after: &Snapshot,
        seconds: f64,
        ops: u64,
    ) -> Vec<(String, f64)> {
        named_extras(window(&self.sources, before, after, seconds, ops))
    }

    /// A workload trial's figures: the snapshots were taken `sampled_ns`
    /// apart around a window of `window_ns` in which `ops` operations
    /// completed. Watts are over the sampled span; joules are scaled to
    /// the window, as the trial's CPU clocks are, and joules per operation
    /// are those over the window's operations (where the counter resolves
    /// them over the sampled span).
    pub fn trial_extras(
        &self,
        before: &Snapshot,
        after: &Snapshot,
        sampled_ns: u64,
        window_ns: u64,
        ops: u64,
    ) -> Vec<(String, f64)> {
        if sampled_ns == 0 || window_ns == 0 {
            return Vec::new();
        }
        let seconds = sampled_ns as f64 / 1e9;
        let scale = window_ns as f64 / sampled_ns as f64;
        let mut windows = window(&self.sources, before, after, seconds, ops);
        for w in &mut windows {
            w.joules *= scale;
            if w.joules_per_op.is_some() {
                w.joules_per_op = Some(w.joules / ops as f64);
            }
        }
        named_extras(windows)
    }
}

/// Figures as extras: `energy_<zone>_j` (joules), `energy_<zone>_w` (mean
/// watts) and, where the counter resolves it, `energy_<zone>_j_per_op`
/// (joules per operation). A second source of the same coverage (a second
/// package) gets `_2`, `_3` after the zone.
pub fn named_extras(windows: Vec<WindowEnergy>) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for w in windows {
        let zone = match &w.coverage {
            Coverage::Package => "package".to_string(),
            Coverage::Core => "core".to_string(),
            Coverage::Dram => "dram".to_string(),
            Coverage::Node => "node".to_string(),
            Coverage::Other(l) => l
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() {
                        c.to_ascii_lowercase()
                    } else {
                        '_'
                    }
                })
                .collect(),
        };
        let n = seen.iter().filter(|z| **z == zone).count();
        seen.push(zone.clone());
        let key = if n == 0 {
            zone
        } else {
            format!("{zone}_{}", n + 1)
        };
        out.push((format!("energy_{key}_j"), w.joules));
        out.push((format!("energy_{key}_w"), w.watts));
        if let Some(j) = w.joules_per_op {
            out.push((format!("energy_{key}_j_per_op"), j));
        }
    }
    out
}

/// A workload point's energy over its kept trials, each given as its
/// extras, its window (ns) and its operations: joules summed, watts as
/// those joules over the windows summed, joules per operation over the
/// operations summed where every trial resolved one. A zone some trial
/// lacks (a read that failed) gets no figure rather than a partial one.
pub fn over_trials(
    trials: &[(&std::collections::BTreeMap<String, f64>, u64, u64)],
) -> std::collections::BTreeMap<String, f64> {
    let mut out = std::collections::BTreeMap::new();
    let Some((first, _, _)) = trials.first() else {
        return out;
    };
    let seconds: f64 = trials.iter().map(|t| t.1 as f64 / 1e9).sum();
    let ops: u64 = trials.iter().map(|t| t.2).sum();
    for key in first.keys() {
        let Some(zone) = key
            .strip_prefix("energy_")
            .and_then(|k| k.strip_suffix("_j"))
        else {
            continue;
        };
        let Some(joules) = trials
            .iter()
            .map(|t| t.0.get(key).copied())
            .sum::<Option<f64>>()
        else {
            continue;
        };
        out.insert(key.clone(), joules);
        if seconds > 0.0 {
            out.insert(format!("energy_{zone}_w"), joules / seconds);
        }
        let per_op = format!("energy_{zone}_j_per_op");
        if ops > 0 && trials.iter().all(|t| t.0.contains_key(&per_op)) {
            out.insert(per_op, joules / ops as f64);
        }
    }
    out
}

/// The BMC's instantaneous whole-node power through `ipmitool dcmi power
/// reading`, looked up on `path` (the PATH to search; tests point it at a
/// fake). `Ok(None)` when ipmitool is absent; an error when it runs and
/// fails (no BMC, not allowed).
pub fn ipmi_power_watts(path: &OsStr) -> io::Result<Option<u64>> {
    let found = std::env::split_paths(path).any(|dir| dir.join("ipmitool").is_file());
    if !found {
        return Ok(None);
    }
    let output = Command::new("ipmitool")
        .env("PATH", path)
        .args(["dcmi", "power", "reading"])
        .output()?;
    if !output.status.success() {
        let why = String::from_utf8_lossy(&output.stderr).trim().to_string();
        return Err(io::Error::other(format!(
            "ipmitool dcmi power reading failed: {why}"
        )));
    }
    parse_ipmi_reading(&String::from_utf8_lossy(&output.stdout)).map(Some)
}

fn parse_ipmi_reading(text: &str) -> io::Result<u64> {
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if key.trim() == "Instantaneous power reading" {
            let number = value.split_whitespace().next().unwrap_or("");
            return parse_u64(number);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        "ipmitool printed no \"Instantaneous power reading\" line",
    ))
}

#[cfg(test)]
#[path = "energy_tests.rs"]
pub(crate) mod tests;
