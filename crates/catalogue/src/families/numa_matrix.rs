//! numa_matrix: memory latency and bandwidth between NUMA nodes (Intel
//! MLC's `--latency_matrix` and `--bandwidth_matrix`). A case is one cell:
//! threads on the CPUs of `cpu_node`, memory bound to `mem_node` with
//! mbind(2) before it is touched (`support::numa`).
//!
//! `lat`: one thread pinned to the first CPU of `cpu_node` chases
//! lat_mem_rd's fully random chain (same seed, one 64-byte line an element)
//! of `size` bytes on `mem_node`: ns per load, the fastest interval.
//! `bw`: one `rd` stream (`support::line_mix::Streams`, bw_mix's) on every
//! CPU of `cpu_node`, each buffer of `size` bytes on `mem_node`: MB/s, the
//! best interval. The cases name their nodes (`cpu_node:0,1 mem_node:0,1`
//! is the 2×2 matrix, the default); the run records the topology in its
//! note. On a machine with one node the family is not run, and says so:
//! its 1×1 figures are lat_mem_rd's `rand` chain and bw_mix.

use touchstone_harness::{BenchError, Benchmark, Context, Fallible, Shape};
use touchstone_results::Statistic;

use crate::family::{Built, Family, Parallel, RunContext};
use crate::params::{Param, Point};
use crate::support::line_mix::{beyond_llc_size, iterate_streams, pattern, Streams, LINE};
use crate::support::memory::{check_memory, Order, Pages};
use crate::support::numa::Topology;
use crate::support::pointer_chase::{Chase, CHAIN_SEED};

pub const NAME: &str = "numa_matrix";

/// A NUMA node number, nodes 0 and 1 measured (the matrix's corner).
const fn node(name: &'static str, help: &'static str) -> Param {
    Param::int(name, 0, 1023)
        .measured(&["0", "1"])
        .quick(&["0", "1"])
        .help(help)
}

pub const PARAMS: &[Param] = &[
    Param::choice("op", &["lat", "bw"])
        .quick(&["lat"])
        .positional()
        .help("lat (a random chase, ns per load) or bw (a read stream on every CPU of the node, MB/s)"),
    node("cpu_node", "the node whose CPUs run the threads"),
    node("mem_node", "the node the memory is bound to (mbind)"),
    beyond_llc_size("the chain, and each stream's buffer: well beyond the last-level cache"),
];

/// Why the family cannot run on `topology`: fewer than two nodes, or no
/// topology to read.
fn one_node(topology: Result<Topology, String>) -> Option<String> {
    match topology {
        Err(e) => Some(format!("no NUMA topology: {e}")),
        Ok(t) if t.nodes.len() < 2 => Some(format!(
            "one NUMA node ({}): no matrix between nodes; its 1×1 figures are \
             lat_mem_rd/stride:rand/size:256m and bw_mix/rd/streams:all",
            t.describe()
        )),
        Ok(_) => None,
    }
}

fn unsupported_here() -> Option<String> {
    one_node(Topology::here())
}

/// The CPUs a cell's threads run on: `cpu_node`'s online CPUs, once both
/// nodes are known, the one has CPUs and the other memory (a memory-only
/// node is a target, never a place for threads).
fn cell_cpus(t: &Topology, cpu_node: usize, mem_node: usize) -> Result<Vec<usize>, String> {
    let cpus = match t.node(cpu_node) {
        Some(n) if !n.cpus.is_empty() => n.cpus.clone(),
        Some(_) => {
            return Err(format!(
                "{NAME}: node {cpu_node} has no online CPUs to run threads on ({})",
                t.describe()
            ))
        }
        None => return Err(format!("{NAME}: no node {cpu_node} ({})", t.describe())),
    };
    match t.node(mem_node) {
        Some(n) if n.memory_kb > 0 => Ok(cpus),
        Some(_) => Err(format!(
            "{NAME}: node {mem_node} has no memory ({})",
            t.describe()
        )),
        None => Err(format!("{NAME}: no node {mem_node} ({})", t.describe())),
    }
}

fn note(_: &RunContext) -> String {
    Topology::here().map_or_else(|e| format!("no NUMA topology: {e}"), |t| t.describe())
}

/// One cell of the bandwidth matrix.
struct Bandwidth {
    cpus: Vec<usize>,
    node: usize,
    size: usize,
    streams: Option<Streams>,
}

impl Benchmark for Bandwidth {
    fn setup(&mut self, _: &Context) -> Fallible {
        let rd = pattern("rd").map_err(BenchError)?;
        self.streams = Some(Streams::start(&self.cpus, self.size, rd, Some(self.node))?);
        Ok(())
    }
    fn run(&mut self, n: u64) -> Fallible {
        iterate_streams(self.streams.as_ref(), NAME, n)
    }
    fn cleanup(&mut self) {
        self.streams = None;
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let t = Topology::here()?;
    let (cpu_node, mem_node) = (p.num("cpu_node") as usize, p.num("mem_node") as usize);
    let size = p.num("size") as usize;
    let cpus = cell_cpus(&t, cpu_node, mem_node)?;
    let what = format!(
        "{NAME}/{}/cpu_node:{cpu_node}/mem_node:{mem_node}",
        p.text("op")
    );
    if p.text("op") == "lat" {
        let rand = Order::Rand { elem: LINE };
        let placed = Some((cpus[0], mem_node));
        return Chase::placed_case(&what, size, rand, Pages::Default, CHAIN_SEED, placed);
    }
    check_memory(&what, (size * cpus.len()) as u64)?;
    let (bytes, cpus_len) = ((cpus.len() * (size / LINE * LINE)) as f64, cpus.len());
    Ok(Built::new(
        Bandwidth {
            cpus,
            node: mem_node,
            size,
            streams: None,
        },
        Shape::bandwidth(bytes).with_statistic(Statistic::Max),
    )
    // Every stream's buffer faulted in each round, as bw_mix's.
    .with_setup_bytes((size * cpus_len) as u64))
}

pub const FAMILY: Family = Family {
    params: PARAMS,
    parallel: Parallel::No("numa_matrix places its own threads on the node's CPUs"),
    default_suite: false,
    unsupported: unsupported_here,
    run_note: Some(note),
    ..Family::new(
        NAME,
        "mem_lat",
        "memory latency and bandwidth between NUMA nodes, memory bound with mbind (Intel MLC's matrices)",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Point;

    /// A point from "op cpu_node mem_node size" (select refuses the family
    /// on a one-node machine, so the test builds its cells directly).
    fn cell(op: &str, cpu: usize, mem: usize) -> Point {
        let v = |p: &Param, raw: &str| (p.name, p.parse(raw).unwrap());
        Point(vec![
            v(&PARAMS[0], op),
            v(&PARAMS[1], &cpu.to_string()),
            v(&PARAMS[2], &mem.to_string()),
            v(&PARAMS[3], "1m"),
        ])
    }

    fn recorded(name: &str) -> Topology {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/sysfs-node")
            .join(name);
        Topology::read(&root).unwrap()
    }

    /// On one node the family says so, naming the node and the families
    /// that give its 1×1 figures; on two it runs; with no tree it says why.
    #[test]
    fn one_node_is_a_reason_not_a_matrix() {
        let reason = one_node(Ok(recorded("one-node"))).unwrap();
        assert!(
            reason.starts_with("one NUMA node (1 node: node0 CPUs 0-1"),
            "{reason}"
        );
        assert!(reason.contains("bw_mix/rd/streams:all"), "{reason}");
        assert_eq!(one_node(Ok(recorded("two-nodes"))), None);
        assert_eq!(one_node(Ok(recorded("memory-only"))), None);
        let none = one_node(Err("no /sys/devices/system/node".into())).unwrap();
        assert!(none.contains("no NUMA topology"), "{none}");
        // This machine: the reason stands exactly when it has one node.
        let here = Topology::here().unwrap();
        assert_eq!(unsupported_here().is_some(), here.nodes.len() < 2);
    }

    /// A cell's threads run on its CPU node's online CPUs, whichever node
    /// holds the memory; a memory-only node holds memory and no threads;
    /// an absent node is named.
    #[test]
    fn cells_on_recorded_trees() {
        let two = recorded("two-nodes");
        let node1 = cell_cpus(&two, 1, 0).unwrap();
        assert_eq!(crate::support::numa::cpulist(&node1), "8-15,24-31");
        assert_eq!(cell_cpus(&two, 0, 1).unwrap()[..2], [0, 1]);
        let e = cell_cpus(&two, 2, 0).unwrap_err();
        assert!(e.starts_with("numa_matrix: no node 2 (2 nodes"), "{e}");
        let e = cell_cpus(&two, 0, 7).unwrap_err();
        assert!(e.starts_with("numa_matrix: no node 7"), "{e}");

        let far = recorded("memory-only");
        assert_eq!(cell_cpus(&far, 0, 2).unwrap(), far.nodes[0].cpus);
        let e = cell_cpus(&far, 2, 0).unwrap_err();
        assert!(e.contains("node 2 has no online CPUs"), "{e}");

        let offline = recorded("offline-cpus");
        assert_eq!(cell_cpus(&offline, 1, 1).unwrap(), vec![4, 7]);
    }

    /// A cell on this machine's first node measures (node 0 to node 0 is
    /// the 1×1 matrix a one-node machine has).
    #[test]
    fn the_local_cell_measures() {
        let t = Topology::here().unwrap();
        let node = t.cpu_nodes()[0].id;
        for op in ["lat", "bw"] {
            let mut built = build(&cell(op, node, node), &RunContext::default()).unwrap();
            let ctx = Context {
                process: 0,
                parallel: 1,
                scratch: std::env::temp_dir(),
            };
            built.bench.setup(&ctx).unwrap();
            built.bench.run(2).unwrap();
            built.bench.cleanup();
        }
        let e = build(&cell("lat", 999, 0), &RunContext::default())
            .err()
            .unwrap();
        assert!(e.contains("no node 999"), "{e}");
        let built = build(&cell("bw", node, node), &RunContext::default()).unwrap();
        let cpus = t.node(node).unwrap().cpus.len() as u64;
        assert_eq!(built.cost.setup_bytes, cpus << 20);
    }
}
