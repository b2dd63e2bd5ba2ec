//! The time each of a trial's own threads — the server's, the clients' —
//! spent on a CPU and waiting for one over the window, for touchstone's
//! check on itself (`touchstone_results::self_check`). The supervisor
//! reads every thread of every process it started, at the window's two
//! edges, from the kernel's scheduler account
//! `/proc/PID/task/TID/schedstat` (ns on a CPU, ns runnable waiting, time
//! slices): another process's thread CPU clock cannot be read with
//! `clock_gettime` (the kernel allows thread clocks only within one's own
//! thread group), and `/proc/…/stat`'s ticks are 10 ms coarse.

use std::collections::HashMap;

use touchstone_results::curve::CpuSplit;
use touchstone_results::self_check::SelfCheck;

/// One thread's account at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadTime {
    pub tid: i32,
    /// ns on a CPU so far.
    pub ran_ns: u64,
    /// ns runnable, waiting on a run queue, so far.
    pub waited_ns: u64,
}

/// The first two fields of a schedstat line: (ran, waited) ns.
pub fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_whitespace();
    let ran = f.next()?.parse().ok()?;
    let waited = f.next()?.parse().ok()?;
    Some((ran, waited))
}

/// Every thread of process `pid` now, by ascending thread id (empty when
/// the process has gone or the kernel keeps no schedstat).
pub fn thread_times(pid: libc::pid_t) -> Vec<ThreadTime> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out: Vec<ThreadTime> = dir
        .flatten()
        .filter_map(|e| {
            let tid: i32 = e.file_name().to_str()?.parse().ok()?;
            let text = std::fs::read_to_string(e.path().join("schedstat")).ok()?;
            let (ran_ns, waited_ns) = parse_schedstat(&text)?;
            Some(ThreadTime {
                tid,
                ran_ns,
                waited_ns,
            })
        })
        .collect();
    out.sort_by_key(|t| t.tid);
    out
}

/// One process of the trial at one edge of the window: what it is
/// ("server", "client 3", "client threads", "generator 2") and its threads.
#[derive(Debug, Clone)]
pub struct ProcessThreads {
    pub role: String,
    pub threads: Vec<ThreadTime>,
    /// A probe: a client whose operations are not the throughput (the
    /// throughput is traffic beside it, `Workload::traffic_ops`), so it
    /// runs flat out by design and cannot be what bounds the figure —
    /// loaded_latency's pointer chase. Its time still counts in what
    /// touchstone's threads used.
    pub probe: bool,
}

/// The name of thread `rank` (by thread id) of a process with `count`
/// threads: the role alone for a one-thread process ("client 3"), else
/// "server thread 2", thread 0 being the process's first.
pub fn thread_name(role: &str, rank: usize, count: usize) -> String {
    if count <= 1 {
        role.to_string()
    } else {
        format!("{role} thread {rank}")
    }
}

/// The check of one window from the accounts read at its edges,
/// `span_ns` apart, on a point of `cpus` CPUs with CPU split `split`.
/// Threads present at both edges count (one that started or ended in
/// between ran only part of it). None when no thread was read at both.
pub fn check(
    before: &[ProcessThreads],
    after: &[ProcessThreads],
    span_ns: u64,
    cpus: u32,
    split: &CpuSplit,
) -> Option<SelfCheck> {
    let span = span_ns.max(1) as f64;
    let mut start: HashMap<i32, ThreadTime> = HashMap::new();
    for p in before {
        for t in &p.threads {
            start.insert(t.tid, *t);
        }
    }
    let mut busiest: Option<(String, f64, f64)> = None;
    let (mut ran, mut wanted, mut threads) = (0.0, 0.0, 0u32);
    for p in after {
        for (rank, t) in p.threads.iter().enumerate() {
            let Some(s) = start.get(&t.tid) else { continue };
            let r = t.ran_ns.saturating_sub(s.ran_ns) as f64 / span;
            let w = r + t.waited_ns.saturating_sub(s.waited_ns) as f64 / span;
            ran += r;
            wanted += w;
            threads += 1;
            if !p.probe && busiest.as_ref().is_none_or(|b| w > b.2) {
                busiest = Some((thread_name(&p.role, rank, p.threads.len()), r, w));
            }
        }
    }
    let (who, busiest_ran, busiest_wanted) = busiest?;
    Some(
        SelfCheck {
            busiest: who,
            busiest_ran: busiest_ran.min(1.0),
            busiest_wanted: busiest_wanted.min(1.0),
            own_ran_cpus: ran,
            own_wanted_cpus: wanted,
            threads,
            cpus_busy: split.busy(),
            bound: false,
        }
        .assessed(cpus),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(tid: i32, ran_ms: u64, waited_ms: u64) -> ThreadTime {
        ThreadTime {
            tid,
            ran_ns: ran_ms * 1_000_000,
            waited_ns: waited_ms * 1_000_000,
        }
    }

    fn procs(server: Vec<ThreadTime>, client: Vec<ThreadTime>) -> Vec<ProcessThreads> {
        vec![
            ProcessThreads {
                role: "server".into(),
                threads: server,
                probe: false,
            },
            ProcessThreads {
                role: "client 0".into(),
                threads: client,
                probe: false,
            },
        ]
    }

    #[test]
    fn schedstat_lines_parse() {
        assert_eq!(
            parse_schedstat("99697839 314670546 303\n"),
            Some((99697839, 314670546))
        );
        assert_eq!(parse_schedstat("12"), None);
        assert_eq!(parse_schedstat("x y z"), None);
    }

    #[test]
    fn the_busiest_thread_and_the_total_over_the_window() {
        // A 1 s window on 4 CPUs: server thread 1 ran 980 ms, the rest little.
        let before = procs(vec![t(10, 0, 0), t(11, 100, 0)], vec![t(20, 50, 0)]);
        let after = procs(
            vec![t(10, 10, 0), t(11, 1080, 5), t(12, 900, 0)],
            vec![t(20, 350, 100)],
        );
        let c = check(&before, &after, 1_000_000_000, 4, &CpuSplit::default()).unwrap();
        assert_eq!(c.busiest, "server thread 1");
        assert!((c.busiest_ran - 0.98).abs() < 1e-9);
        assert!((c.busiest_wanted - 0.985).abs() < 1e-9);
        // Thread 12 started inside the window: not counted.
        assert_eq!(c.threads, 3);
        assert!((c.own_ran_cpus - (0.01 + 0.98 + 0.3)).abs() < 1e-9);
        assert!((c.own_wanted_cpus - (0.01 + 0.985 + 0.4)).abs() < 1e-9);
        assert!(c.bound, "{c:?}");
        // The same on 1 CPU is the machine's limit, not touchstone's.
        assert!(
            !check(&before, &after, 1_000_000_000, 1, &CpuSplit::default())
                .unwrap()
                .bound
        );
        assert_eq!(check(&before, &[], 1, 4, &CpuSplit::default()), None);
    }

    #[test]
    fn a_one_thread_process_is_named_by_its_role() {
        assert_eq!(thread_name("client 3", 0, 1), "client 3");
        assert_eq!(thread_name("server", 2, 5), "server thread 2");
    }

    #[test]
    fn our_own_threads_are_read() {
        // The kernel adds a running thread's time at its next tick or
        // switch: run a little, then yield.
        let end = std::time::Instant::now() + std::time::Duration::from_millis(20);
        while std::time::Instant::now() < end {}
        unsafe { libc::sched_yield() };
        let pid = unsafe { libc::getpid() };
        let mine = thread_times(pid);
        assert!(!mine.is_empty(), "no schedstat for this process");
        assert!(mine.windows(2).all(|w| w[0].tid < w[1].tid));
        let own = mine.iter().find(|t| t.tid == unsafe { libc::gettid() });
        assert!(own.is_some_and(|t| t.ran_ns > 0));
        assert!(thread_times(-1).is_empty());
    }

    /// loaded_latency at 16 CPUs: the chase (a probe: the throughput is
    /// its generators' traffic) flat out while the generators idle is no
    /// touchstone limit; the same thread as a client making the
    /// throughput is one.
    #[test]
    fn a_probe_running_flat_out_bounds_nothing() {
        let before = |probe| {
            vec![ProcessThreads {
                role: "client 0".into(),
                threads: vec![t(1, 0, 0)],
                probe,
            }]
        };
        let after = |probe| {
            vec![ProcessThreads {
                role: "client 0".into(),
                threads: vec![t(1, 1000, 0)],
                probe,
            }]
        };
        let split = CpuSplit::default();
        let client = check(&before(false), &after(false), 1_000_000_000, 16, &split).unwrap();
        assert!(client.bound, "{client:?}");
        assert_eq!(
            check(&before(true), &after(true), 1_000_000_000, 16, &split),
            None
        );
    }
}
