//! The network between hosts as matrices: from the stored runs'
//! measurements against another host (the `remote:ADDR` parameter; the
//! run's host is the client end), one matrix per benchmark case, rows the
//! client hosts, columns the server hosts, each cell the figure of that
//! pair (the newest run's) with the CPU both ends used. A server address
//! becomes a host where some run recorded who served it (`fleet run`
//! stores the identity `touchstone serve` announced as the host extra
//! `remote:ADDR`), else it stays the address. Pure functions.

use std::collections::BTreeMap;

use serde::Serialize;
use touchstone_results::{Brief, Run, Unit};

use crate::outliers::host_key;

/// The measurement and curve parameter naming the server.
pub const REMOTE: &str = "remote";

/// The host-extra key under which a run records who served `addr`.
pub fn peer_key(addr: &str) -> String {
    format!("{REMOTE}:{addr}")
}

/// One pair's figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    pub value: f64,
    /// CPU use over the measurement, % of one CPU, at the client and the server.
    pub cpu_pct: (Option<f64>, Option<f64>),
}

/// One benchmark case between every measured pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairMatrix {
    /// The case without its server (`lat_tcp/size:1`, `tcp_rr/size:4 load 1 p50`).
    pub case: String,
    pub unit: Unit,
    /// Row labels: client hosts.
    pub clients: Vec<String>,
    /// Column labels: server hosts (or addresses).
    pub servers: Vec<String>,
    /// (row, column) → the pair's figure.
    pub cells: BTreeMap<(usize, usize), Cell>,
}

impl PairMatrix {
    pub fn cell(&self, client: &str, server: &str) -> Option<&Cell> {
        let r = self.clients.iter().position(|c| c == client)?;
        let c = self.servers.iter().position(|s| s == server)?;
        self.cells.get(&(r, c))
    }
}

/// Whether a run measured only against other hosts (a network pair's run
/// from `fleet run`): it stands for the pair, not for its host's own
/// figures, so the side-by-side view of hosts leaves it out.
pub fn is_pair_run(run: &Run) -> bool {
    let briefs: Vec<Brief> = run.measurements.iter().map(Brief::of).collect();
    is_pair(run, &briefs)
}

/// `is_pair_run` of a run's header (with its curves) and its
/// measurements in brief.
pub fn is_pair(run: &Run, measurements: &[Brief]) -> bool {
    let any = !measurements.is_empty() || !run.curves.is_empty();
    any && measurements.iter().all(|m| m.params.contains_key(REMOTE))
        && run.curves.iter().all(|c| c.params.contains_key(REMOTE))
}

/// Whether a measurement was taken against another host (what `build`
/// reads of a run besides its curves).
pub fn is_remote(m: &Brief) -> bool {
    m.params.contains_key(REMOTE)
}

/// "name#machine-id" (`Host::identity`) as reports label hosts (`host_key`).
fn identity_label(identity: &str) -> String {
    match identity.split_once('#') {
        Some((name, id)) if !id.is_empty() => format!("{name} ({})", &id[..id.len().min(8)]),
        Some((name, _)) => name.to_string(),
        None => identity.to_string(),
    }
}

/// The case's name without its `remote:` segment.
fn case_of(name: &str) -> String {
    name.split('/')
        .filter(|s| !s.starts_with("remote:"))
        .collect::<Vec<_>>()
        .join("/")
}

/// Every remote measurement of the runs as matrices, cases in name order.
pub fn build(runs: &[Run]) -> Vec<PairMatrix> {
    let briefs: Vec<Vec<Brief>> = runs
        .iter()
        .map(|r| r.measurements.iter().map(Brief::of).collect())
        .collect();
    let pairs: Vec<(&Run, &[Brief])> = runs.iter().zip(&briefs).map(|(r, b)| (r, &b[..])).collect();
    build_from(&pairs)
}

/// `build` from each run's header (host, start, curves) and its remote
/// measurements in brief (`is_remote`; others are passed over).
pub fn build_from(runs: &[(&Run, &[Brief])]) -> Vec<PairMatrix> {
    // Who served each address, as any run recorded it.
    let mut served_by: BTreeMap<String, String> = BTreeMap::new();
    for (r, _) in runs {
        for (k, v) in &r.host.extra {
            if let Some(addr) = k.strip_prefix("remote:") {
                served_by.insert(addr.to_string(), identity_label(v));
            }
        }
    }
    let server_of = |r: &Run, addr: &str| {
        r.host
            .extra
            .get(&peer_key(addr))
            .map(|id| identity_label(id))
            .or_else(|| served_by.get(addr).cloned())
            .unwrap_or_else(|| addr.to_string())
    };
    // (case, unit) → (client, server) → (started, cell): the newest run wins.
    type Cells = BTreeMap<(String, String), (usize, Cell)>;
    let mut found: BTreeMap<(String, Unit), Cells> = BTreeMap::new();
    let mut put = |case: String, unit: Unit, i: usize, addr: &str, cell: Cell| {
        let r = runs[i].0;
        let slot = found
            .entry((case, unit))
            .or_default()
            .entry((host_key(r), server_of(r, addr)));
        let newer = (i, cell);
        match slot {
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(newer);
            }
            std::collections::btree_map::Entry::Occupied(mut o) => {
                if r.started_at > runs[o.get().0].0.started_at {
                    o.insert(newer);
                }
            }
        }
    };
    for (i, &(r, measurements)) in runs.iter().enumerate() {
        for m in measurements {
            let Some(addr) = m.params.get(REMOTE) else {
                continue;
            };
            if m.invalid.is_some() || !m.value().is_finite() {
                continue;
            }
            let pct = |a: &str, b: &str| m.extra.get(a).or(m.extra.get(b)).copied();
            let cell = Cell {
                value: m.value(),
                cpu_pct: (
                    pct("cpu_pct_client", "cpu_pct_receiver"),
                    pct("cpu_pct_server", "cpu_pct_sender"),
                ),
            };
            let mut case = case_of(&m.name);
            if m.parallel > 1 {
                case = format!("{case} ×{}", m.parallel);
            }
            put(case, m.unit, i, addr, cell);
        }
        for c in &r.curves {
            let Some(addr) = c.params.get(REMOTE) else {
                continue;
            };
            let params: Vec<String> = c
                .params
                .iter()
                .filter(|(k, _)| *k != REMOTE)
                .map(|(k, v)| format!("{k}:{v}"))
                .collect();
            let base = std::iter::once(c.workload.clone())
                .chain(params)
                .collect::<Vec<_>>()
                .join("/");
            for p in &c.points {
                // Utilisation from CPU per operation × operations per second.
                let pct = |ns_per_op: f64| 100.0 * ns_per_op * p.throughput / 1e9;
                let cell = Cell {
                    value: p.latency.p50_ns as f64,
                    cpu_pct: (
                        Some(pct(p.service_demand.client_ns_per_op)),
                        p.service_demand.server_ns_per_op.map(pct),
                    ),
                };
                let case = format!("{base} load {} ×{} CPU(s), median latency", p.load, p.cpus);
                put(case, Unit::Ns, i, addr, cell);
            }
        }
    }
    found
        .into_iter()
        .map(|((case, unit), cells)| {
            let mut clients: Vec<String> = cells.keys().map(|(c, _)| c.clone()).collect();
            let mut servers: Vec<String> = cells.keys().map(|(_, s)| s.clone()).collect();
            clients.dedup();
            servers.sort();
            servers.dedup();
            let at = |v: &[String], x: &String| v.iter().position(|y| y == x).expect("listed");
            let cells = cells
                .into_iter()
                .map(|((c, s), (_, cell))| ((at(&clients, &c), at(&servers, &s)), cell))
                .collect();
            PairMatrix {
                case,
                unit,
                clients,
                servers,
                cells,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{meas, run};

    /// A measurement whose parameters are those its name spells.
    fn measurement(name: &str, unit: Unit, value: f64) -> touchstone_results::Measurement {
        let mut m = meas(name, "comm", unit, value);
        m.params = name
            .split('/')
            .skip(1)
            .filter_map(|s| s.split_once(':'))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        m
    }

    fn remote(
        name: &str,
        unit: Unit,
        value: f64,
        cpu: (f64, f64),
    ) -> touchstone_results::Measurement {
        let mut m = measurement(name, unit, value);
        let (c, s) = if unit == Unit::MBps {
            ("cpu_pct_receiver", "cpu_pct_sender")
        } else {
            ("cpu_pct_client", "cpu_pct_server")
        };
        m.extra.insert(c.into(), cpu.0);
        m.extra.insert(s.into(), cpu.1);
        m
    }

    /// Two clients against two servers: rows, columns and cells land where
    /// they belong; a server address some run resolved becomes its host,
    /// the other stays an address; the newer of two runs of a pair wins.
    #[test]
    fn cells_sit_at_their_client_and_server() {
        let a = "10.0.0.1:7717";
        let b = "10.0.0.9:7717";
        let mut n2 = run(
            "r2",
            "node-2",
            vec![
                remote(
                    &format!("lat_tcp/size:1/remote:{a}"),
                    Unit::Ns,
                    30_000.0,
                    (15.0, 14.0),
                ),
                remote(
                    &format!("bw_tcp/size:64k/remote:{a}"),
                    Unit::MBps,
                    900.0,
                    (12.0, 16.0),
                ),
            ],
        );
        n2.host.extra.insert(
            peer_key(a),
            "node-1#0123456789abcdef0123456789abcdef".into(),
        );
        let mut n3 = run(
            "r3",
            "node-3",
            vec![
                remote(
                    &format!("lat_tcp/size:1/remote:{a}"),
                    Unit::Ns,
                    40_000.0,
                    (1.0, 2.0),
                ),
                remote(
                    &format!("lat_tcp/size:1/remote:{b}"),
                    Unit::Ns,
                    50_000.0,
                    (3.0, 4.0),
                ),
            ],
        );
        n3.started_at = n2.started_at + chrono::Duration::seconds(1);
        let mut older = run(
            "r0",
            "node-2",
            vec![remote(
                &format!("lat_tcp/size:1/remote:{a}"),
                Unit::Ns,
                99_000.0,
                (1.0, 1.0),
            )],
        );
        older.started_at = n2.started_at - chrono::Duration::seconds(60);
        let own = run(
            "r4",
            "node-1",
            vec![measurement("lat_syscall/null", Unit::Ns, 50.0)],
        );
        let runs = vec![older, n2, n3, own];
        assert!(is_pair_run(&runs[1]) && !is_pair_run(&runs[3]));
        let ms = build(&runs);
        let cases: Vec<&str> = ms.iter().map(|m| m.case.as_str()).collect();
        assert_eq!(cases, ["bw_tcp/size:64k", "lat_tcp/size:1"]);
        let lat = &ms[1];
        assert_eq!(lat.unit, Unit::Ns);
        assert_eq!(lat.clients, ["node-2", "node-3"]);
        assert_eq!(lat.servers, ["10.0.0.9:7717", "node-1 (01234567)"]);
        let cell = |c: &str, s: &str| lat.cell(c, s).map(|c| c.value);
        assert_eq!(
            cell("node-2", "node-1 (01234567)"),
            Some(30_000.0),
            "the newer run"
        );
        assert_eq!(
            cell("node-3", "node-1 (01234567)"),
            Some(40_000.0),
            "resolved by node-2's run"
        );
        assert_eq!(cell("node-3", "10.0.0.9:7717"), Some(50_000.0));
        assert_eq!(cell("node-2", "10.0.0.9:7717"), None);
        assert_eq!(
            lat.cell("node-3", "10.0.0.9:7717").unwrap().cpu_pct,
            (Some(3.0), Some(4.0))
        );
        let bw = &ms[0];
        assert_eq!(
            bw.cell("node-2", "node-1 (01234567)").unwrap().cpu_pct,
            (Some(12.0), Some(16.0))
        );
        assert_eq!(bw.cells.len(), 1);
    }
}
