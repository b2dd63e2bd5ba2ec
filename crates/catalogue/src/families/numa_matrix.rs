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
use crate::params::{Kind, Param, Point};
use crate::support::line_mix::{pattern, Streams, LINE};
use crate::support::memory::{chain_offsets, check_memory, lay_chain, Buf, Order, Pages};
use crate::support::numa::Topology;
use crate::support::placement::pin_self;
use crate::support::pointer_chase::{chase, CHAIN_SEED, CHASE_LOADS};

pub const NAME: &str = "numa_matrix";

const NODE: Kind = Kind::Int { min: 0, max: 1023 };

pub const PARAMS: &[Param] = &[
    Param {
        name: "op",
        help:
            "lat (a random chase, ns per load) or bw (a read stream on every CPU of the node, MB/s)",
        kind: Kind::Choice(&["lat", "bw"]),
        default: &["lat", "bw"],
        quick: &["lat"],
        positional: true,
    },
    Param {
        name: "cpu_node",
        help: "the node whose CPUs run the threads",
        kind: NODE,
        default: &["0", "1"],
        quick: &["0", "1"],
        positional: false,
    },
    Param {
        name: "mem_node",
        help: "the node the memory is bound to (mbind)",
        kind: NODE,
        default: &["0", "1"],
        quick: &["0", "1"],
        positional: false,
    },
    Param {
        name: "size",
        help: "the chain, and each stream's buffer: well beyond the last-level cache",
        kind: Kind::Size {
            min: 1 << 20,
            max: 64 << 30,
        },
        default: &["256m"],
        quick: &["128m"],
        positional: false,
    },
];

/// Why the family cannot run here: fewer than two nodes.
fn one_node() -> Option<String> {
    match Topology::here() {
        Err(e) => Some(format!("no NUMA topology: {e}")),
        Ok(t) if t.nodes.len() < 2 => Some(format!(
            "one NUMA node ({}): no matrix between nodes; its 1×1 figures are \
             lat_mem_rd/stride:rand/size:256m and bw_mix/rd/streams:all",
            t.describe()
        )),
        Ok(_) => None,
    }
}

fn note(_: &RunContext) -> String {
    Topology::here().map_or_else(|e| format!("no NUMA topology: {e}"), |t| t.describe())
}

/// One cell of the latency matrix.
struct Latency {
    cpu: usize,
    node: usize,
    size: usize,
    buf: Option<Buf>,
    cur: *const usize,
}

// SAFETY: the chain is used by the one thread that runs the benchmark.
unsafe impl Send for Latency {}

impl Benchmark for Latency {
    fn setup(&mut self, _: &Context) -> Fallible {
        pin_self(self.cpu)?;
        let mut buf = Buf::new_on(self.size, Pages::Default, Some(self.node))?;
        let offs = chain_offsets(self.size, Order::Rand { elem: LINE }, CHAIN_SEED);
        self.cur = lay_chain(&mut buf, &offs);
        self.buf = Some(buf);
        Ok(())
    }
    fn run(&mut self, n: u64) -> Fallible {
        self.cur = chase(self.cur, n);
        Ok(())
    }
    fn cleanup(&mut self) {
        self.buf = None;
    }
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
        let s = self
            .streams
            .as_ref()
            .ok_or_else(|| BenchError(format!("{NAME}: no streams")))?;
        s.iterate(n);
        Ok(())
    }
    fn cleanup(&mut self) {
        self.streams = None;
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let t = Topology::here()?;
    let (cpu_node, mem_node) = (p.num("cpu_node") as usize, p.num("mem_node") as usize);
    let size = p.num("size") as usize;
    let cpus = match t.node(cpu_node) {
        Some(n) if !n.cpus.is_empty() => n.cpus.clone(),
        Some(_) => {
            return Err(format!(
                "{NAME}: node {cpu_node} has no online CPUs ({})",
                t.describe()
            ))
        }
        None => return Err(format!("{NAME}: no node {cpu_node} ({})", t.describe())),
    };
    match t.node(mem_node) {
        Some(n) if n.memory_kb > 0 => {}
        _ => {
            return Err(format!(
                "{NAME}: node {mem_node} has no memory ({})",
                t.describe()
            ))
        }
    }
    let what = format!(
        "{NAME}/{}/cpu_node:{cpu_node}/mem_node:{mem_node}",
        p.text("op")
    );
    if p.text("op") == "lat" {
        check_memory(&what, size as u64)?;
        return Ok(Built::new(
            Latency {
                cpu: cpus[0],
                node: mem_node,
                size,
                buf: None,
                cur: std::ptr::null(),
            },
            Shape::latency(CHASE_LOADS).with_statistic(Statistic::Min),
        ));
    }
    check_memory(&what, (size * cpus.len()) as u64)?;
    let bytes = (cpus.len() * (size / LINE * LINE)) as f64;
    Ok(Built::new(
        Bandwidth {
            cpus,
            node: mem_node,
            size,
            streams: None,
        },
        Shape::bandwidth(bytes).with_statistic(Statistic::Max),
    ))
}

pub const FAMILY: Family = Family {
    params: PARAMS,
    parallel: Parallel::No("numa_matrix places its own threads on the node's CPUs"),
    default_suite: false,
    unsupported: one_node,
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

    /// On one node the family says so once, naming the node and the
    /// families that give its 1×1 figures; on several it runs.
    #[test]
    fn one_node_is_a_reason_not_a_matrix() {
        let t = Topology::here().unwrap();
        match one_node() {
            Some(reason) => {
                assert_eq!(t.nodes.len(), 1);
                assert!(reason.contains("one NUMA node (1 node: node0"), "{reason}");
                assert!(reason.contains("bw_mix/rd/streams:all"), "{reason}");
            }
            None => assert!(t.nodes.len() >= 2),
        }
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
    }
}
