//! Which k CPUs a point of `--cpus k` runs on. Scalability S(k) asks what
//! k more CPUs give, and a second hardware thread of a busy core gives far
//! less than a core (the two share its execution units and caches), as a
//! CPU of another socket or NUMA node gives something else again (remote
//! memory, a cache of its own). So the first CPUs are whole cores — one
//! hardware thread of each — and those of one NUMA node (then socket)
//! before the next; SMT siblings come only once every usable core has one
//! CPU chosen, again node by node. The order, from the usable CPUs (the
//! affinity mask: `taskset` and cpusets are respected):
//! (thread rank within its core, NUMA node, package, core, CPU number).
//!
//! The topology is read from sysfs (`cpu/cpuN/topology/`, `node/nodeM/
//! cpulist` under `/sys/devices/system`); where it is missing, the first k
//! usable CPUs are taken, and the choice says so.

use std::collections::BTreeSet;
use std::path::Path;

/// Where one CPU sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuPlace {
    pub cpu: usize,
    pub node: u32,
    pub package: u32,
    /// The core, named by its lowest-numbered hardware thread.
    pub core: usize,
    /// Its rank among its core's usable threads (0: the first).
    pub thread: u32,
}

/// The usable CPUs' places; empty when sysfs says nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Topology {
    pub places: Vec<CpuPlace>,
}

/// The CPUs of one point and why those.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuChoice {
    /// Ascending.
    pub cpus: Vec<usize>,
    /// "one thread on each of 2 cores of package 0 (node 0); …".
    pub why: String,
}

/// A sysfs CPU list ("0-3,8,10-11") as CPU numbers; None if malformed.
pub fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                if b < a {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

fn read_number(path: &Path) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

impl Topology {
    /// The places of `usable` CPUs under `root` (`/sys/devices/system`);
    /// empty unless every usable CPU's package and siblings are there.
    pub fn read(root: &Path, usable: &[usize]) -> Topology {
        let mut node_of = std::collections::HashMap::new();
        if let Ok(nodes) = std::fs::read_dir(root.join("node")) {
            for e in nodes.flatten() {
                let name = e.file_name();
                let Some(n) = name
                    .to_str()
                    .and_then(|s| s.strip_prefix("node"))
                    .and_then(|s| s.parse::<u32>().ok())
                else {
                    continue;
                };
                let list = std::fs::read_to_string(e.path().join("cpulist")).unwrap_or_default();
                for c in parse_cpu_list(&list).unwrap_or_default() {
                    node_of.insert(c, n);
                }
            }
        }
        let usable_set: BTreeSet<usize> = usable.iter().copied().collect();
        let mut places = Vec::with_capacity(usable.len());
        for &cpu in usable {
            let dir = root.join(format!("cpu/cpu{cpu}/topology"));
            let package = read_number(&dir.join("physical_package_id"));
            let siblings = std::fs::read_to_string(dir.join("thread_siblings_list"))
                .ok()
                .and_then(|t| parse_cpu_list(&t));
            let (Some(package), Some(siblings)) = (package, siblings) else {
                return Topology::default();
            };
            let core = siblings.iter().copied().min().unwrap_or(cpu).min(cpu);
            let thread = siblings
                .iter()
                .filter(|&&s| s < cpu && usable_set.contains(&s))
                .count() as u32;
            places.push(CpuPlace {
                cpu,
                node: node_of.get(&cpu).copied().unwrap_or(package),
                package,
                core,
                thread,
            });
        }
        Topology { places }
    }

    /// The places in the order CPUs are chosen (the module's header).
    fn order(&self) -> Vec<CpuPlace> {
        let mut v = self.places.clone();
        v.sort_by_key(|p| (p.thread, p.node, p.package, p.core, p.cpu));
        v
    }

    /// The `k` CPUs of `usable` a point runs on, and why those.
    pub fn choose(&self, usable: &[usize], k: usize) -> CpuChoice {
        let k = k.clamp(1, usable.len().max(1));
        if self.places.len() != usable.len() || usable.is_empty() {
            return CpuChoice {
                cpus: usable[..k.min(usable.len())].to_vec(),
                why: format!("the first {k} usable CPU(s): no CPU topology in sysfs"),
            };
        }
        let order = self.order();
        let chosen: Vec<CpuPlace> = order[..k].to_vec();
        let mut cpus: Vec<usize> = chosen.iter().map(|p| p.cpu).collect();
        cpus.sort_unstable();
        CpuChoice {
            cpus,
            why: self.explain(&chosen),
        }
    }

    /// Why `chosen`: the cores and threads, the packages and nodes, and
    /// what of the machine was left.
    fn explain(&self, chosen: &[CpuPlace]) -> String {
        let set = |f: fn(&CpuPlace) -> usize, of: &[CpuPlace]| -> BTreeSet<usize> {
            of.iter().map(f).collect()
        };
        let cores = set(|p| p.core, chosen);
        let all_cores = set(|p| p.core, &self.places);
        let smt = self.places.iter().any(|p| p.thread > 0);
        let doubled = cores.len() < chosen.len();
        let threads = if doubled {
            format!(
                "{} thread(s) on {} core(s): every usable core has one, then SMT siblings",
                chosen.len(),
                cores.len()
            )
        } else {
            format!(
                "one thread on each of {} core(s){}",
                cores.len(),
                if smt { ", SMT siblings left idle" } else { "" }
            )
        };
        let names =
            |s: &BTreeSet<usize>| s.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        let packages = set(|p| p.package as usize, chosen);
        let nodes = set(|p| p.node as usize, chosen);
        let all_nodes = set(|p| p.node as usize, &self.places);
        let all_packages = set(|p| p.package as usize, &self.places);
        let mut place = format!("package {} (node {})", names(&packages), names(&nodes));
        if packages.len() > 1 || nodes.len() > 1 {
            place = format!(
                "packages {} (nodes {}), each filled before the next",
                names(&packages),
                names(&nodes)
            );
        }
        let left = if nodes.len() < all_nodes.len() || packages.len() < all_packages.len() {
            format!(
                "; {} of {} core(s), {} of {} node(s)",
                cores.len(),
                all_cores.len(),
                nodes.len(),
                all_nodes.len()
            )
        } else {
            String::new()
        };
        format!("{threads}, in {place}{left}")
    }
}

/// The choice for `k` of this process's usable CPUs on this machine.
pub fn choose_cpus(usable: &[usize], k: usize) -> CpuChoice {
    Topology::read(Path::new("/sys/devices/system"), usable).choose(usable, k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Recorded sysfs trees (only the files read), `testdata/topology/`.
    fn recorded(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/topology")
            .join(name)
    }

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list("5"), Some(vec![5]));
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
    }

    /// Two sockets (one NUMA node each) of 4 cores with 2 threads, the
    /// siblings numbered side by side (cpu 2c and 2c+1): the first k CPUs
    /// would be one core's two threads.
    #[test]
    fn two_socket_smt_cores_first_then_the_next_socket_then_siblings() {
        let usable: Vec<usize> = (0..16).collect();
        let t = Topology::read(&recorded("two-socket-smt"), &usable);
        assert_eq!(t.places.len(), 16);
        let pick = |k| t.choose(&usable, k).cpus;
        assert_eq!(pick(1), [0]);
        assert_eq!(pick(2), [0, 2], "two cores, not one core's two threads");
        assert_eq!(pick(4), [0, 2, 4, 6], "socket 0's four cores");
        assert_eq!(pick(6), [0, 2, 4, 6, 8, 10], "then socket 1's");
        assert_eq!(pick(8), [0, 2, 4, 6, 8, 10, 12, 14]);
        assert_eq!(
            pick(10),
            [0, 1, 2, 3, 4, 6, 8, 10, 12, 14],
            "then siblings, socket 0 first"
        );
        assert_eq!(pick(16), usable);
        let why = t.choose(&usable, 4).why;
        assert!(why.contains("one thread on each of 4 core(s)"), "{why}");
        assert!(why.contains("SMT siblings left idle"), "{why}");
        assert!(why.contains("package 0 (node 0)"), "{why}");
        assert!(why.contains("4 of 8 core(s), 1 of 2 node(s)"), "{why}");
        let why = t.choose(&usable, 10).why;
        assert!(why.contains("10 thread(s) on 8 core(s)"), "{why}");
        assert!(why.contains("packages 0,1 (nodes 0,1)"), "{why}");
        // taskset to one socket's second threads and another's cores.
        let some = [1, 3, 8, 9];
        let t = Topology::read(&recorded("two-socket-smt"), &some);
        assert_eq!(
            t.choose(&some, 2).cpus,
            [1, 3],
            "1 and 3 are whole cores here"
        );
        assert_eq!(t.choose(&some, 3).cpus, [1, 3, 8]);
    }

    #[test]
    fn one_socket_without_smt_takes_the_cpus_in_order() {
        let usable: Vec<usize> = (0..4).collect();
        let t = Topology::read(&recorded("one-socket"), &usable);
        assert_eq!(t.choose(&usable, 3).cpus, [0, 1, 2]);
        let why = t.choose(&usable, 3).why;
        assert_eq!(
            why,
            "one thread on each of 3 core(s), in package 0 (node 0)"
        );
    }

    #[test]
    fn without_sysfs_the_first_cpus_and_says_so() {
        let usable = [2, 5, 7];
        let t = Topology::read(Path::new("/nonexistent"), &usable);
        let c = t.choose(&usable, 2);
        assert_eq!(c.cpus, [2, 5]);
        assert!(c.why.contains("no CPU topology"), "{}", c.why);
        assert_eq!(t.choose(&usable, 9).cpus, usable, "never more than usable");
    }

    #[test]
    fn this_machine_gives_a_choice_within_its_usable_cpus() {
        let usable = super::super::cpu::usable_cpus().unwrap();
        let c = choose_cpus(&usable, usable.len());
        assert_eq!(c.cpus, usable);
        assert!(!c.why.is_empty());
    }
}
