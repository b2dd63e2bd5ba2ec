//! NUMA topology from sysfs (`/sys/devices/system/node/node*/{cpulist,
//! distance,meminfo}` and `cpu/online`), and binding memory to a node with
//! mbind(2) (a raw syscall: libnuma is not a dependency). The reader takes
//! the `devices/system` directory, so the tests read recorded trees
//! (`testdata/sysfs-node`: one node, two nodes, a memory-only node,
//! offline CPUs).

use std::path::Path;

use touchstone_harness::{BenchError, Fallible};

/// The real tree.
pub const SYSFS: &str = "/sys/devices/system";

/// One node: its online CPUs (empty: a memory-only node, CXL or HBM), its
/// distances to every node in the order of `Topology::nodes` (the
/// firmware's SLIT: 10 is local), its memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub id: usize,
    pub cpus: Vec<usize>,
    pub distances: Vec<u32>,
    pub memory_kb: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    pub nodes: Vec<Node>,
}

/// A kernel CPU list ("0-3,8,10-11"; empty: none).
pub fn parse_cpulist(s: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        let num = |x: &str| {
            x.trim()
                .parse::<usize>()
                .map_err(|_| format!("bad CPU list '{}': '{x}' is no CPU number", s.trim()))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!(
                        "bad CPU list '{}': range {a}-{b} runs backwards",
                        s.trim()
                    ));
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
    }
    Ok(out)
}

/// A node's `MemTotal` from its meminfo ("Node 0 MemTotal:  20801740 kB").
pub fn parse_mem_total_kb(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|l| {
        let rest = l.split_once("MemTotal:")?.1;
        rest.split_whitespace().next()?.parse().ok()
    })
}

impl Topology {
    /// Read the tree under `root` (`SYSFS` on a live machine). No node
    /// directory (a kernel without NUMA) reads as one node holding every
    /// online CPU, with no distances and no memory figure.
    pub fn read(root: &Path) -> Result<Topology, String> {
        let read = |p: &Path| {
            std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
        };
        let online = parse_cpulist(&read(&root.join("cpu/online"))?)?;
        let mut ids: Vec<usize> = match std::fs::read_dir(root.join("node")) {
            Ok(dir) => dir
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str()?.strip_prefix("node")?.parse().ok())
                .collect(),
            Err(_) => Vec::new(),
        };
        ids.sort_unstable();
        if ids.is_empty() {
            return Ok(Topology {
                nodes: vec![Node {
                    id: 0,
                    cpus: online,
                    distances: vec![],
                    memory_kb: 0,
                }],
            });
        }
        let mut nodes = Vec::new();
        for &id in &ids {
            let dir = root.join(format!("node/node{id}"));
            let cpus = parse_cpulist(&read(&dir.join("cpulist"))?)?
                .into_iter()
                .filter(|c| online.contains(c))
                .collect();
            let distances = read(&dir.join("distance"))?
                .split_whitespace()
                .map(|d| {
                    d.parse::<u32>()
                        .map_err(|_| format!("node{id}/distance: '{d}' is no distance"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if distances.len() != ids.len() {
                return Err(format!(
                    "node{id}/distance has {} entries for {} nodes",
                    distances.len(),
                    ids.len()
                ));
            }
            let memory_kb = parse_mem_total_kb(&read(&dir.join("meminfo"))?)
                .ok_or_else(|| format!("node{id}/meminfo has no MemTotal"))?;
            nodes.push(Node {
                id,
                cpus,
                distances,
                memory_kb,
            });
        }
        Ok(Topology { nodes })
    }

    /// This machine's.
    pub fn here() -> Result<Topology, String> {
        Topology::read(Path::new(SYSFS))
    }

    /// Nodes with online CPUs: where a matrix's threads can run.
    pub fn cpu_nodes(&self) -> Vec<&Node> {
        self.nodes.iter().filter(|n| !n.cpus.is_empty()).collect()
    }

    /// Nodes with memory: where a matrix's buffers can be bound.
    pub fn memory_nodes(&self) -> Vec<&Node> {
        self.nodes.iter().filter(|n| n.memory_kb > 0).collect()
    }

    pub fn node(&self, id: usize) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }

    /// One line, for a run's record: "2 nodes: node0 CPUs 0-7 126 GiB, …;
    /// distances 10 21 / 21 10".
    pub fn describe(&self) -> String {
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|n| {
                let cpus = if n.cpus.is_empty() {
                    "no CPUs".to_string()
                } else {
                    format!("CPUs {}", cpulist(&n.cpus))
                };
                format!(
                    "node{} {cpus} {:.1} GiB",
                    n.id,
                    n.memory_kb as f64 / (1 << 20) as f64
                )
            })
            .collect();
        let dist: Vec<String> = self
            .nodes
            .iter()
            .map(|n| {
                n.distances
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let count = self.nodes.len();
        let s = if count == 1 { "" } else { "s" };
        format!(
            "{count} node{s}: {}; distances {}",
            nodes.join(", "),
            dist.join(" / ")
        )
    }
}

/// A CPU list in the kernel's form.
pub fn cpulist(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Bind the pages of `[ptr, ptr + len)` to `node` (MPOL_BIND, moving any
/// already placed; strict: the call fails if a page cannot be placed), so
/// that the first touch after it allocates them there.
pub fn bind_to_node(ptr: *mut u8, len: usize, node: usize) -> Fallible {
    const MPOL_BIND: libc::c_long = 2;
    const MPOL_MF_STRICT: libc::c_ulong = 1;
    const MPOL_MF_MOVE: libc::c_ulong = 2;
    let mut mask = vec![0u64; node / 64 + 1];
    mask[node / 64] |= 1 << (node % 64);
    // SAFETY: the range is the caller's mapping; the mask outlives the call
    // and holds `64 * mask.len()` bits, which is what maxnode says.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            ptr as libc::c_ulong,
            len as libc::c_ulong,
            MPOL_BIND,
            mask.as_ptr(),
            (64 * mask.len() + 1) as libc::c_ulong,
            MPOL_MF_STRICT | MPOL_MF_MOVE,
        )
    };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(BenchError(format!("mbind to node {node}: {e}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(name: &str) -> Topology {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/sysfs-node")
            .join(name);
        Topology::read(&root).unwrap()
    }

    #[test]
    fn cpu_lists_parse_and_print_back() {
        assert_eq!(
            parse_cpulist("0-3,8,10-11\n").unwrap(),
            vec![0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(parse_cpulist("\n").unwrap(), Vec::<usize>::new());
        assert_eq!(cpulist(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert!(parse_cpulist("3-1").unwrap_err().contains("backwards"));
        assert!(parse_cpulist("0-x").unwrap_err().contains("'x' is no CPU"));
        assert_eq!(
            parse_mem_total_kb("Node 0 MemTotal:       20801740 kB\n"),
            Some(20801740)
        );
        assert_eq!(parse_mem_total_kb("Node 0 MemFree: 1 kB\n"), None);
    }

    #[test]
    fn one_node() {
        let t = recorded("one-node");
        assert_eq!(t.nodes.len(), 1);
        assert_eq!(t.nodes[0].cpus, vec![0, 1]);
        assert_eq!(t.nodes[0].distances, vec![10]);
        assert_eq!(t.cpu_nodes().len(), 1);
        assert_eq!(
            t.describe(),
            "1 node: node0 CPUs 0-1 19.8 GiB; distances 10"
        );
    }

    #[test]
    fn two_nodes() {
        let t = recorded("two-nodes");
        assert_eq!(t.nodes.len(), 2);
        assert_eq!(cpulist(&t.nodes[1].cpus), "8-15,24-31");
        assert_eq!(t.nodes[0].distances, vec![10, 21]);
        assert_eq!(t.nodes[1].distances, vec![21, 10]);
        assert_eq!(t.memory_nodes().len(), 2);
        assert!(t
            .describe()
            .starts_with("2 nodes: node0 CPUs 0-7,16-23 125.8 GiB"));
    }

    /// A node with memory and no CPUs is a target of the matrix, never a
    /// place for its threads.
    #[test]
    fn a_memory_only_node() {
        let t = recorded("memory-only");
        let cpu: Vec<usize> = t.cpu_nodes().iter().map(|n| n.id).collect();
        let mem: Vec<usize> = t.memory_nodes().iter().map(|n| n.id).collect();
        assert_eq!((cpu, mem), (vec![0, 1], vec![0, 1, 2]));
        assert_eq!(t.node(2).unwrap().distances, vec![30, 30, 10]);
        assert!(t.describe().contains("node2 no CPUs 256.0 GiB"));
    }

    /// Offline CPUs are no node's: nothing is pinned to them.
    #[test]
    fn offline_cpus_are_left_out() {
        let t = recorded("offline-cpus");
        assert_eq!(t.nodes[0].cpus, vec![0, 1, 3]);
        assert_eq!(t.nodes[1].cpus, vec![4, 7]);
    }

    #[test]
    fn a_broken_tree_is_named() {
        let dir = std::env::temp_dir().join(format!("touchstone-numa-{}", std::process::id()));
        let node = dir.join("node/node0");
        std::fs::create_dir_all(&node).unwrap();
        std::fs::create_dir_all(dir.join("cpu")).unwrap();
        std::fs::write(dir.join("cpu/online"), "0-1\n").unwrap();
        std::fs::write(node.join("cpulist"), "0-1\n").unwrap();
        std::fs::write(node.join("distance"), "10 20\n").unwrap();
        std::fs::write(node.join("meminfo"), "Node 0 MemTotal: 5 kB\n").unwrap();
        let e = Topology::read(&dir).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            e.contains("node0/distance has 2 entries for 1 nodes"),
            "{e}"
        );
    }

    /// This machine's tree reads, and memory bound to its first node with
    /// memory is usable.
    #[test]
    fn this_machine_and_mbind() {
        let t = Topology::here().unwrap();
        assert!(!t.cpu_nodes().is_empty(), "{t:?}");
        let node = t.memory_nodes().first().map_or(0, |n| n.id);
        let len = 1 << 20;
        let ptr =
            crate::support::sys::map_anonymous(len, libc::PROT_READ | libc::PROT_WRITE, false)
                .unwrap();
        let bound = bind_to_node(ptr, len, node);
        // SAFETY: our mapping.
        unsafe { libc::memset(ptr as *mut libc::c_void, 1, len) };
        // The node of the page at the buffer's end, once touched
        // (get_mempolicy with MPOL_F_NODE | MPOL_F_ADDR).
        let mut placed: libc::c_int = -1;
        // SAFETY: `placed` outlives the call; no mask is asked for.
        let r = unsafe {
            libc::syscall(
                libc::SYS_get_mempolicy,
                &mut placed as *mut libc::c_int,
                std::ptr::null_mut::<u64>(),
                0 as libc::c_ulong,
                ptr.add(len - 1) as libc::c_ulong,
                3 as libc::c_ulong,
            )
        };
        let absent = bind_to_node(ptr, len, 1000);
        // SAFETY: our mapping.
        unsafe { libc::munmap(ptr as *mut libc::c_void, len) };
        bound.unwrap();
        assert_eq!((r, placed), (0, node as libc::c_int));
        let e = absent.unwrap_err().0;
        assert!(e.starts_with("mbind to node 1000: "), "{e}");
    }
}
