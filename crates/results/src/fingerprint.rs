//! The fingerprint of a run: what can move a figure while the hardware
//! stays the same — the kernel's build and command line, CPU microcode,
//! firmware, vulnerability mitigations, SMT, boost, energy-performance
//! preference, transparent huge pages, NUMA nodes, DIMM speeds, the C
//! library and touchstone's own build. Each item is read where the OS
//! lets us and is `UNKNOWN` otherwise, never guessed; `facts` joins them
//! with what the host record already holds (kernel release, governor,
//! memory, CPUs) so that `diff` can say what changed between two runs.
//! Runs stored before the fingerprint existed have none and still load.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::host::{parse_cpu_list, Host};
use crate::model::Run;

/// An item the OS did not let us read.
pub const UNKNOWN: &str = "unknown";

fn unknown() -> String {
    UNKNOWN.to_string()
}

/// The items of the fingerprint not already in the host record. Every
/// field is the text read, or `UNKNOWN`; a field a newer touchstone adds
/// reads as `UNKNOWN` from an older document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Fingerprint {
    /// The kernel's build (uname -v: "#1 SMP PREEMPT_DYNAMIC Debian
    /// 6.1.76-1"), which moves when a distribution rebuilds the same release.
    pub kernel_build: String,
    /// /proc/cmdline.
    pub kernel_cmdline: String,
    /// CPU microcode revision(s), e.g. "0x2b000603"; several, comma-joined,
    /// when CPUs differ.
    pub microcode: String,
    pub firmware_vendor: String,
    pub firmware_version: String,
    pub firmware_date: String,
    /// /sys/devices/system/cpu/vulnerabilities: name → the kernel's status
    /// line ("Mitigation: Retpolines; …"). Empty: unknown.
    pub mitigations: BTreeMap<String, String>,
    /// "on" or "off" (whether sibling threads are active), with the
    /// control's state when it is neither ("off (notsupported)").
    pub smt: String,
    /// Turbo/boost: "on" or "off".
    pub boost: String,
    /// CPU 0's energy_performance_preference ("balance_performance", …).
    pub energy_performance_preference: String,
    /// Transparent huge pages: the mode chosen in `enabled` and `defrag`.
    pub thp_enabled: String,
    pub thp_defrag: String,
    /// NUMA nodes online, e.g. "2 (0-1)".
    pub numa_nodes: String,
    /// Memory devices from SMBIOS ("2 × 3200 MT/s (configured 2933)");
    /// the table is readable by root only.
    pub dimm_speeds: String,
    /// The C library touchstone runs on ("glibc 2.36").
    pub libc: String,
    /// touchstone's build: its commit and compiler (the version and
    /// profile are the run's `tool`).
    pub touchstone: String,
}

impl Fingerprint {
    /// The text items in the order a reader sees them: (the field's name in
    /// the results format, the item's name for a reader, its value). The
    /// mitigations, a map, come apart.
    pub fn items(&self) -> [(&'static str, &'static str, &String); 15] {
        // The field's name is the item's key: the two cannot drift apart.
        macro_rules! items {
            ($($field:ident: $name:literal),* $(,)?) => {
                [$((stringify!($field), $name, &self.$field)),*]
            };
        }
        items![
            kernel_build: "kernel build",
            kernel_cmdline: "kernel command line",
            microcode: "microcode",
            firmware_vendor: "firmware vendor",
            firmware_version: "firmware version",
            firmware_date: "firmware date",
            smt: "SMT",
            boost: "boost",
            energy_performance_preference: "EPP",
            thp_enabled: "THP",
            thp_defrag: "THP defrag",
            numa_nodes: "NUMA nodes",
            dimm_speeds: "DIMMs",
            libc: "C library",
            touchstone: "touchstone build",
        ]
    }
}

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint {
            kernel_build: unknown(),
            kernel_cmdline: unknown(),
            microcode: unknown(),
            firmware_vendor: unknown(),
            firmware_version: unknown(),
            firmware_date: unknown(),
            mitigations: BTreeMap::new(),
            smt: unknown(),
            boost: unknown(),
            energy_performance_preference: unknown(),
            thp_enabled: unknown(),
            thp_defrag: unknown(),
            numa_nodes: unknown(),
            dimm_speeds: unknown(),
            libc: unknown(),
            touchstone: unknown(),
        }
    }
}

/// A file's text, trimmed; None when unreadable or empty.
fn read(root: &Path, path: &str) -> Option<String> {
    let text = fs::read_to_string(root.join(path.trim_start_matches('/'))).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn or_unknown(v: Option<String>) -> String {
    v.unwrap_or_else(unknown)
}

impl Fingerprint {
    /// Read this machine's fingerprint (`touchstone` left `UNKNOWN`: the
    /// binary states its own build, see `with_build`).
    pub fn collect() -> Fingerprint {
        let mut f = Fingerprint::read_from(Path::new("/"));
        f.libc = or_unknown(libc_version());
        f
    }

    /// The fingerprint as the files under `root` (a copy of /proc and /sys
    /// in tests, "/" for real) state it. Everything but the C library and
    /// touchstone's build, which are not files.
    pub fn read_from(root: &Path) -> Fingerprint {
        let r = |p: &str| read(root, p);
        let cpuinfo = r("/proc/cpuinfo").unwrap_or_default();
        let microcode = microcode_from_cpuinfo(&cpuinfo)
            .or_else(|| r("/sys/devices/system/cpu/cpu0/microcode/version"));
        let dmi = |f: &str| or_unknown(r(&format!("/sys/class/dmi/id/{f}")));
        Fingerprint {
            kernel_build: or_unknown(r("/proc/sys/kernel/version")),
            kernel_cmdline: or_unknown(r("/proc/cmdline")),
            microcode: or_unknown(microcode),
            firmware_vendor: dmi("bios_vendor"),
            firmware_version: dmi("bios_version"),
            firmware_date: dmi("bios_date"),
            mitigations: mitigations(&root.join("sys/devices/system/cpu/vulnerabilities")),
            smt: or_unknown(smt(
                r("/sys/devices/system/cpu/smt/control").as_deref(),
                r("/sys/devices/system/cpu/smt/active").as_deref(),
            )),
            boost: or_unknown(boost(
                r("/sys/devices/system/cpu/cpufreq/boost")
                    .or_else(|| r("/sys/devices/system/cpu/cpu0/cpufreq/boost"))
                    .as_deref(),
                r("/sys/devices/system/cpu/intel_pstate/no_turbo").as_deref(),
            )),
            energy_performance_preference: or_unknown(r(
                "/sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference",
            )),
            thp_enabled: or_unknown(
                r("/sys/kernel/mm/transparent_hugepage/enabled").and_then(|t| chosen_mode(&t)),
            ),
            thp_defrag: or_unknown(
                r("/sys/kernel/mm/transparent_hugepage/defrag").and_then(|t| chosen_mode(&t)),
            ),
            numa_nodes: or_unknown(r("/sys/devices/system/node/online").and_then(|t| numa(&t))),
            dimm_speeds: or_unknown(
                fs::read(root.join("sys/firmware/dmi/tables/DMI"))
                    .ok()
                    .and_then(|t| dimm_speeds(&t)),
            ),
            libc: unknown(),
            touchstone: unknown(),
        }
    }

    /// This fingerprint with touchstone's build stated.
    pub fn with_build(mut self, build: &str) -> Fingerprint {
        self.touchstone = build.to_string();
        self
    }
}

/// The distinct microcode revisions of /proc/cpuinfo, in order of first
/// appearance, comma-joined.
pub fn microcode_from_cpuinfo(cpuinfo: &str) -> Option<String> {
    let mut seen: Vec<&str> = Vec::new();
    for line in cpuinfo.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim();
        if k.trim() == "microcode" && !v.is_empty() && !seen.contains(&v) {
            seen.push(v);
        }
    }
    (!seen.is_empty()).then(|| seen.join(", "))
}

/// Each file of the vulnerabilities directory: its name → its status line.
pub fn mitigations(dir: &Path) -> BTreeMap<String, String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let text = fs::read_to_string(e.path()).ok()?;
            Some((name, text.trim().to_string()))
        })
        .collect()
}

/// SMT from /sys/devices/system/cpu/smt: `active` (1 or 0) says whether
/// sibling threads run; `control` is shown beside it when it says more
/// than on or off (forceoff, notsupported, notimplemented).
pub fn smt(control: Option<&str>, active: Option<&str>) -> Option<String> {
    let state = match active {
        Some("1") => Some("on"),
        Some("0") => Some("off"),
        _ => None,
    };
    match (state, control) {
        (Some(s), Some(c)) if c != "on" && c != "off" => Some(format!("{s} ({c})")),
        (Some(s), _) => Some(s.to_string()),
        (None, Some(c)) => Some(c.to_string()),
        (None, None) => None,
    }
}

/// Boost from cpufreq's `boost` (1: on) or, for intel_pstate, its
/// `no_turbo` (1: off).
pub fn boost(boost: Option<&str>, no_turbo: Option<&str>) -> Option<String> {
    match (boost, no_turbo) {
        (Some("1"), _) | (None, Some("0")) => Some("on".into()),
        (Some("0"), _) | (None, Some("1")) => Some("off".into()),
        _ => None,
    }
}

/// The mode in brackets of a sysfs choice list ("always [madvise] never").
pub fn chosen_mode(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = start + text[start..].find(']')?;
    Some(text[start + 1..end].to_string())
}

/// The count of NUMA nodes online, with the list: "2 (0-1)", or "1".
pub fn numa(online: &str) -> Option<String> {
    let n = parse_cpu_list(online).len();
    match n {
        0 => None,
        1 => Some("1".into()),
        n => Some(format!("{n} ({})", online.trim())),
    }
}

/// The speeds of the memory devices installed, from the SMBIOS table
/// (type 17, Memory Device): "2 × 3200 MT/s (configured 2933)", devices of
/// one speed counted together. None when the table lists none installed.
pub fn dimm_speeds(table: &[u8]) -> Option<String> {
    let mut counts: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    let mut at = 0;
    while at + 4 <= table.len() {
        let kind = table[at];
        let len = table[at + 1] as usize;
        if len < 4 || at + len > table.len() {
            break;
        }
        let s = &table[at..at + len];
        let word = |o: usize| (o + 2 <= s.len()).then(|| u16::from_le_bytes([s[o], s[o + 1]]));
        let dword = |o: usize| {
            (o + 4 <= s.len()).then(|| u32::from_le_bytes([s[o], s[o + 1], s[o + 2], s[o + 3]]))
        };
        // Size 0: an empty slot; speeds of 0 are unknown; 0xFFFF points to
        // the 32-bit extended field (SMBIOS 3.3).
        let installed = word(0x0C).is_some_and(|size| size != 0);
        if kind == 17 && installed {
            let speed = |o: usize, ext: usize| match word(o) {
                Some(0xFFFF) => dword(ext).unwrap_or(0),
                Some(v) => v as u32,
                None => 0,
            };
            *counts
                .entry((speed(0x15, 0x54), speed(0x20, 0x58)))
                .or_default() += 1;
        }
        if kind == 127 {
            break;
        }
        // The formatted area is followed by strings, ended by two NULs.
        let mut end = at + len;
        while end + 1 < table.len() && !(table[end] == 0 && table[end + 1] == 0) {
            end += 1;
        }
        at = end + 2;
    }
    if counts.is_empty() {
        return None;
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(&(speed, configured), n)| {
            let speed = match speed {
                0 => "unknown speed".to_string(),
                s => format!("{s} MT/s"),
            };
            match configured {
                c if c == 0 || speed == format!("{c} MT/s") => format!("{n} × {speed}"),
                c => format!("{n} × {speed} (configured {c})"),
            }
        })
        .collect();
    Some(parts.join(", "))
}

/// The C library's name and version ("glibc 2.36"), where it says.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn libc_version() -> Option<String> {
    let mut buf = [0 as libc::c_char; 64];
    // SAFETY: confstr writes at most buf.len() bytes, NUL-terminated.
    let n = unsafe { libc::confstr(libc::_CS_GNU_LIBC_VERSION, buf.as_mut_ptr(), buf.len()) };
    if n == 0 || n > buf.len() {
        return None;
    }
    let text = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
    Some(text.to_string_lossy().trim().to_string())
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn libc_version() -> Option<String> {
    None
}

/// One difference between two runs' fingerprints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub item: String,
    pub before: String,
    pub after: String,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} → {}", self.item, self.before, self.after)
    }
}

/// Memory as a reader compares it: GiB to one decimal (kernels of one
/// machine reserve a few MB more or less).
fn memory_text(bytes: u64) -> Option<String> {
    (bytes > 0).then(|| format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64))
}

/// Everything recorded about a run that can move its figures, as (item,
/// value): the host's kernel, CPUs, governor and memory, then the
/// fingerprint's items (none for a run recorded before it existed).
pub fn facts(run: &Run) -> Vec<(String, String)> {
    let h: &Host = &run.host;
    let mut out: Vec<(String, String)> = vec![
        ("kernel".into(), h.kernel.clone()),
        ("CPU".into(), h.cpu.model.clone()),
        ("CPUs online".into(), h.cpu.threads.to_string()),
        ("CPUs usable".into(), h.cpu.usable.to_string()),
    ];
    let mut opt = |item: &str, v: Option<String>| {
        if let Some(v) = v {
            out.push((item.into(), v));
        }
    };
    opt("CPU quota", h.cpu_quota.map(|q| format!("{q:.2}")));
    opt("governor", h.governor.clone());
    opt("memory", memory_text(h.memory_bytes));
    opt("virtualisation", h.virtualization.clone());
    if let Some(f) = &h.fingerprint {
        out.extend(
            f.items()
                .into_iter()
                .map(|(_, item, v)| (item.to_string(), v.clone())),
        );
        out.extend(
            f.mitigations
                .iter()
                .map(|(k, v)| (format!("mitigation {k}"), v.clone())),
        );
    }
    out.push((
        "touchstone".into(),
        format!("{} {}", run.tool.version, run.tool.profile),
    ));
    out
}

/// What differs between the facts of two runs, in the order of `facts`.
/// An item unknown or not recorded on either side is no difference: we
/// cannot say it changed.
pub fn diff(before: &Run, after: &Run) -> Vec<Change> {
    let a = facts(before);
    let b: BTreeMap<String, String> = facts(after).into_iter().collect();
    a.into_iter()
        .filter_map(|(item, x)| {
            let y = b.get(&item)?;
            let known = |v: &str| !v.is_empty() && v != UNKNOWN;
            (known(&x) && known(y) && &x != y).then(|| Change {
                item,
                before: x,
                after: y.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "fingerprint/tests.rs"]
mod tests;
