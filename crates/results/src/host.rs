//! Host metadata captured automatically at the start of a run: the facts a
//! reader needs to compare figures across machines, and the conditions that
//! could spoil them (load, frequency scaling, virtualisation, CPU limits).
//! Linux is read from /proc and /sys; anything unreadable is left empty,
//! never guessed.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::fingerprint::Fingerprint;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Host {
    pub hostname: String,
    /// /etc/machine-id (systemd's, or D-Bus's): with the host name it is
    /// the host's identity, so two machines of the same name stay apart
    /// (`Host::identity`). Absent where the OS has none, and in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<String>,
    pub os: String,
    pub kernel: String,
    #[serde(default)]
    pub distribution: Option<String>,
    pub arch: String,
    pub cpu: Cpu,
    #[serde(default)]
    pub caches: Vec<Cache>,
    pub memory_bytes: u64,
    #[serde(default)]
    pub page_size: u64,
    /// The hypervisor if the machine is virtual ("kvm", "vmware", …).
    #[serde(default)]
    pub virtualization: Option<String>,
    /// Container runtime if detectable ("docker", "lxc", …).
    #[serde(default)]
    pub container: Option<String>,
    /// CPUs granted by a cgroup CPU quota, if any (e.g. 1.5).
    #[serde(default)]
    pub cpu_quota: Option<f64>,
    #[serde(default)]
    pub governor: Option<String>,
    /// Load average (1, 5, 15 min) at the start of the run.
    #[serde(default)]
    pub loadavg: Option<[f64; 3]>,
    /// Anything else worth keeping (e.g. boot-time kernel arguments).
    #[serde(default)]
    pub extra: BTreeMap<String, String>,
    /// What else can move a figure (kernel build, microcode, firmware,
    /// mitigations, SMT, boost, THP, …; see `fingerprint`). Absent in runs
    /// recorded before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<Fingerprint>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Cpu {
    pub model: String,
    #[serde(default)]
    pub vendor: Option<String>,
    pub sockets: u32,
    pub cores: u32,
    /// Logical CPUs online.
    pub threads: u32,
    /// CPUs this process may run on (affinity mask).
    pub usable: u32,
    /// Nominal or current maximum frequency the OS reports, MHz.
    #[serde(default)]
    pub mhz: Option<f64>,
    #[serde(default)]
    pub flags: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    pub level: u32,
    /// "data", "instruction" or "unified".
    pub kind: String,
    pub size_bytes: u64,
    #[serde(default)]
    pub line_bytes: Option<u64>,
    #[serde(default)]
    pub ways: Option<u32>,
    /// How many logical CPUs share one instance.
    #[serde(default)]
    pub shared_by: Option<u32>,
}

fn read(path: impl AsRef<Path>) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// Collect what the OS says about this machine now.
pub fn collect() -> Host {
    let uts = uname();
    let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
    let mut host = Host {
        hostname: uts.0,
        machine_id: machine_id(),
        os: uts.1,
        kernel: uts.2,
        arch: std::env::consts::ARCH.to_string(),
        distribution: distribution(),
        cpu: cpu(&cpuinfo),
        caches: caches(Path::new("/sys/devices/system/cpu/cpu0/cache")),
        memory_bytes: meminfo_total().unwrap_or(0),
        page_size: unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as u64,
        virtualization: virtualization(&cpuinfo),
        container: container(),
        cpu_quota: cgroup_cpu_quota(),
        governor: read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        loadavg: loadavg(),
        extra: BTreeMap::new(),
        fingerprint: Some(Fingerprint::collect()),
    };
    if let Some(d) = read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver") {
        host.extra.insert("cpufreq_driver".into(), d);
    }
    if let Some(b) = read("/sys/devices/system/cpu/intel_pstate/no_turbo") {
        host.extra.insert("intel_no_turbo".into(), b);
    }
    host
}

fn uname() -> (String, String, String) {
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return Default::default();
    }
    let s = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    (s(&u.nodename), s(&u.sysname), s(&u.release))
}

/// The machine id: 32 hex digits in /etc/machine-id (or D-Bus's copy);
/// anything else is not trusted as an identity.
fn machine_id() -> Option<String> {
    ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        .iter()
        .find_map(|p| read(p).filter(|id| is_machine_id(id)))
}

/// 32 lowercase hex digits, the format machine-id(5) prescribes.
pub fn is_machine_id(id: &str) -> bool {
    id.len() == 32
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn distribution() -> Option<String> {
    let text = read("/etc/os-release")?;
    parse_os_release(&text)
}

/// PRETTY_NAME from an os-release file.
pub fn parse_os_release(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
}

fn cpu(cpuinfo: &str) -> Cpu {
    let field = |key: &str| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    let model = field("model name")
        .or_else(|| field("Model"))
        .or_else(|| field("cpu model"))
        .unwrap_or_else(|| "unknown".into());
    let online = online_cpus();
    let mut packages = std::collections::BTreeSet::new();
    let mut cores = std::collections::BTreeSet::new();
    for &c in &online {
        let base = format!("/sys/devices/system/cpu/cpu{c}/topology");
        let pkg = read(format!("{base}/physical_package_id")).unwrap_or_else(|| "0".into());
        let core = read(format!("{base}/core_id")).unwrap_or_else(|| c.to_string());
        packages.insert(pkg.clone());
        cores.insert((pkg, core));
    }
    let max_khz = read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
        .and_then(|s| s.parse::<f64>().ok());
    let mhz = max_khz
        .map(|k| k / 1000.0)
        .or_else(|| field("cpu MHz").and_then(|s| s.parse().ok()));
    let flags = field("flags")
        .map(|f| f.split_whitespace().map(String::from).collect())
        .unwrap_or_default();
    Cpu {
        model,
        vendor: field("vendor_id"),
        sockets: packages.len().max(1) as u32,
        cores: cores.len().max(1) as u32,
        threads: online.len().max(1) as u32,
        usable: usable_cpus(),
        mhz,
        flags,
    }
}

fn online_cpus() -> Vec<u32> {
    read("/sys/devices/system/cpu/online")
        .map(|s| parse_cpu_list(&s))
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| {
            (0..std::thread::available_parallelism().map_or(1, |n| n.get() as u32)).collect()
        })
}

/// Parse a kernel CPU list such as "0-3,8,10-11".
pub fn parse_cpu_list(s: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<u32>().ok()),
        }
    }
    out
}

/// CPUs in this process's affinity mask.
pub fn usable_cpus() -> u32 {
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    }
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
        .count() as u32
}

/// The caches one CPU sees, from sysfs `cache/index*`.
pub fn caches(dir: &Path) -> Vec<Cache> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    let mut paths: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("index"))
        })
        .collect();
    paths.sort();
    for p in paths {
        let get = |f: &str| read(p.join(f));
        let Some(level) = get("level").and_then(|s| s.parse().ok()) else {
            continue;
        };
        let Some(size_bytes) = get("size").and_then(|s| parse_size_suffix(&s)) else {
            continue;
        };
        out.push(Cache {
            level,
            kind: get("type").unwrap_or_default().to_lowercase(),
            size_bytes,
            line_bytes: get("coherency_line_size").and_then(|s| s.parse().ok()),
            ways: get("ways_of_associativity").and_then(|s| s.parse().ok()),
            shared_by: get("shared_cpu_list").map(|s| parse_cpu_list(&s).len() as u32),
        });
    }
    out
}

/// "32K" / "1024K" / "8M" as sysfs writes cache sizes.
pub fn parse_size_suffix(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1024),
        'M' | 'm' => (&s[..s.len() - 1], 1024 * 1024),
        'G' | 'g' => (&s[..s.len() - 1], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok().map(|n| n * mult)
}

fn meminfo_total() -> Option<u64> {
    let text = read("/proc/meminfo")?;
    meminfo_field(&text, "MemTotal")
}

/// A field of /proc/meminfo in bytes.
pub fn meminfo_field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(key)?.strip_prefix(':')?;
        let kb: u64 = rest.split_whitespace().next()?.parse().ok()?;
        Some(kb * 1024)
    })
}

/// Memory the kernel could give us now without swapping (MemAvailable).
pub fn available_memory_bytes() -> Option<u64> {
    meminfo_field(&read("/proc/meminfo")?, "MemAvailable")
}

/// The hypervisor this machine runs under now, if it is virtual (what
/// `collect` stores as `virtualization`).
pub fn virtualization_now() -> Option<String> {
    virtualization(&read("/proc/cpuinfo").unwrap_or_default())
}

fn virtualization(cpuinfo: &str) -> Option<String> {
    let vendor = read("/sys/class/dmi/id/sys_vendor")
        .unwrap_or_default()
        .to_lowercase();
    let product = read("/sys/class/dmi/id/product_name")
        .unwrap_or_default()
        .to_lowercase();
    let known = [
        ("qemu", "kvm"),
        ("kvm", "kvm"),
        ("vmware", "vmware"),
        ("virtualbox", "virtualbox"),
        ("microsoft corporation", "hyper-v"),
        ("xen", "xen"),
        ("amazon ec2", "kvm"),
        ("google", "kvm"),
        ("firecracker", "firecracker"),
        ("cloud hypervisor", "cloud-hypervisor"),
    ];
    for (needle, name) in known {
        if vendor.contains(needle) || product.contains(needle) {
            return Some(name.to_string());
        }
    }
    if let Some(t) = read("/sys/hypervisor/type") {
        return Some(t);
    }
    let hypervisor_flag = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .is_some_and(|l| l.split_whitespace().any(|f| f == "hypervisor"));
    hypervisor_flag.then(|| cpuid_hypervisor().unwrap_or_else(|| "unknown hypervisor".to_string()))
}

/// The hypervisor's CPUID signature (leaf 0x40000000), where there is one.
#[cfg(target_arch = "x86_64")]
fn cpuid_hypervisor() -> Option<String> {
    // Leaf 0x40000000 is reserved for hypervisors; on bare metal it reads
    // as zeros or garbage, which the table lookup below ignores.
    let r = std::arch::x86_64::__cpuid(0x4000_0000);
    let mut sig = Vec::with_capacity(12);
    for w in [r.ebx, r.ecx, r.edx] {
        sig.extend_from_slice(&w.to_le_bytes());
    }
    hypervisor_from_signature(&sig)
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_hypervisor() -> Option<String> {
    None
}

/// Name a hypervisor from its 12-byte CPUID vendor signature.
pub fn hypervisor_from_signature(sig: &[u8]) -> Option<String> {
    let known: [(&[u8], &str); 7] = [
        (b"KVMKVMKVM", "kvm"),
        (b"Microsoft Hv", "hyper-v"),
        (b"VMwareVMware", "vmware"),
        (b"XenVMMXenVMM", "xen"),
        (b"TCGTCGTCGTCG", "qemu-tcg"),
        (b"bhyve bhyve ", "bhyve"),
        (b"ACRNACRNACRN", "acrn"),
    ];
    known
        .iter()
        .find(|(k, _)| sig.starts_with(k))
        .map(|(_, n)| n.to_string())
}

fn container() -> Option<String> {
    if Path::new("/.dockerenv").exists() {
        return Some("docker".into());
    }
    if let Some(c) = read("/run/systemd/container") {
        return Some(c);
    }
    let env = fs::read("/proc/1/environ").unwrap_or_default();
    for var in env.split(|&b| b == 0) {
        if let Some(v) = var.strip_prefix(b"container=") {
            return Some(String::from_utf8_lossy(v).into_owned());
        }
    }
    let cg = read("/proc/1/cgroup").unwrap_or_default();
    ["docker", "kubepods", "lxc", "containerd"]
        .iter()
        .find(|k| cg.contains(*k))
        .map(|k| k.to_string())
}

/// CPUs granted by the cgroup (v2 cpu.max or v1 cfs quota), if limited.
fn cgroup_cpu_quota() -> Option<f64> {
    let own = read("/proc/self/cgroup").unwrap_or_default();
    let rel = own
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .unwrap_or("/")
        .to_string();
    // Walk up the hierarchy: the tightest limit on the way to the root applies.
    let mut best: Option<f64> = None;
    let mut path = std::path::PathBuf::from(format!("/sys/fs/cgroup{rel}"));
    loop {
        if let Some(q) = read(path.join("cpu.max")).and_then(|s| parse_cpu_max(&s)) {
            best = Some(best.map_or(q, |b: f64| b.min(q)));
        }
        if !path.pop() || !path.starts_with("/sys/fs/cgroup") {
            break;
        }
    }
    if best.is_none() {
        let q = read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").and_then(|s| s.parse::<f64>().ok());
        let p = read("/sys/fs/cgroup/cpu/cpu.cfs_period_us").and_then(|s| s.parse::<f64>().ok());
        if let (Some(q), Some(p)) = (q, p) {
            if q > 0.0 && p > 0.0 {
                best = Some(q / p);
            }
        }
    }
    best
}

/// cgroup v2 `cpu.max`: "max 100000" (no limit) or "150000 100000" (1.5 CPUs).
pub fn parse_cpu_max(s: &str) -> Option<f64> {
    let mut it = s.split_whitespace();
    let quota = it.next()?;
    let period: f64 = it.next()?.parse().ok()?;
    if quota == "max" || period <= 0.0 {
        return None;
    }
    Some(quota.parse::<f64>().ok()? / period)
}

fn loadavg() -> Option<[f64; 3]> {
    let t = read("/proc/loadavg")?;
    let v: Vec<f64> = t
        .split_whitespace()
        .take(3)
        .filter_map(|x| x.parse().ok())
        .collect();
    (v.len() == 3).then(|| [v[0], v[1], v[2]])
}

/// Load average right now (1 minute), for checks between measurements.
pub fn loadavg_now() -> Option<f64> {
    loadavg().map(|l| l[0])
}

impl Host {
    /// Who ran it: the host name plus the machine id where one is known
    /// ("node-7#3d1219c7…"), so two machines that share a name never count
    /// as one.
    pub fn identity(&self) -> String {
        match &self.machine_id {
            Some(id) => format!("{}#{id}", self.hostname),
            None => self.hostname.clone(),
        }
    }

    /// The largest cache's size (the last level), if the OS reports caches.
    pub fn last_level_cache_bytes(&self) -> Option<u64> {
        self.caches
            .iter()
            .filter(|c| c.kind != "instruction")
            .max_by_key(|c| c.level)
            .map(|c| c.size_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_is_the_name_plus_the_machine_id() {
        let mut h = Host {
            hostname: "node-7".into(),
            ..Host::default()
        };
        assert_eq!(h.identity(), "node-7");
        h.machine_id = Some("3d1219c7c4c5404aaa1f6d2a48adfda4".into());
        assert_eq!(h.identity(), "node-7#3d1219c7c4c5404aaa1f6d2a48adfda4");
        assert!(is_machine_id("3d1219c7c4c5404aaa1f6d2a48adfda4"));
        assert!(!is_machine_id("uninitialized"));
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,8,10-11"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("0\n"), vec![0]);
    }

    #[test]
    fn sysfs_sizes() {
        assert_eq!(parse_size_suffix("32K"), Some(32 * 1024));
        assert_eq!(parse_size_suffix("8M"), Some(8 << 20));
        assert_eq!(parse_size_suffix("bogus"), None);
    }

    #[test]
    fn cpu_max() {
        assert_eq!(parse_cpu_max("max 100000"), None);
        assert_eq!(parse_cpu_max("150000 100000"), Some(1.5));
    }

    #[test]
    fn os_release() {
        let t = "NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
        assert_eq!(
            parse_os_release(t).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
    }

    #[test]
    fn hypervisor_signatures() {
        assert_eq!(
            hypervisor_from_signature(b"KVMKVMKVM\0\0\0").as_deref(),
            Some("kvm")
        );
        assert_eq!(hypervisor_from_signature(b"GenuineIntel"), None);
    }

    #[test]
    fn collects_this_machine() {
        let h = collect();
        assert!(h.cpu.threads >= 1 && h.cpu.usable >= 1);
        assert!(h.memory_bytes > 0);
        assert!(!h.kernel.is_empty());
    }
}
