//! lat_ctx: context-switch time (lmbench's lat_ctx). A ring of `procs`
//! processes passes a token through pipes; on each pass a process sums its
//! own private working set of `size` bytes. The same work without switching
//! (one process writing the token to its own pipe, reading it back and
//! summing one working set) is measured as a baseline and subtracted, so the
//! figure is the switch itself plus the cache refill the working sets cause.
//! Under `--parallel N`, N independent rings run at once (lmbench3).

use std::os::fd::RawFd;

use touchstone_harness::{Benchmark, Context, Fallible, Shape};

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::placement::{self, Placement};
use crate::support::sys::{self, Pid};

/// A private working set, written once after the fork so that its pages
/// belong to this process alone.
struct WorkingSet(Vec<u64>);

impl WorkingSet {
    fn new(bytes: usize, seed: u64) -> WorkingSet {
        WorkingSet((0..bytes / 8).map(|i| i as u64 ^ seed).collect())
    }
    /// Read every word; the sum goes into the token so it cannot be elided.
    #[inline]
    fn touch(&self) -> u64 {
        let mut s = 0u64;
        for &w in &self.0 {
            s = s.wrapping_add(w);
        }
        std::hint::black_box(s)
    }
}

/// One pass: read the token, touch the working set, write the token on.
#[inline]
fn pass(from: RawFd, to: RawFd, ws: &WorkingSet) -> std::io::Result<()> {
    let mut token = [0u8; 4];
    sys::read_exact(from, &mut token)?;
    token[0] = token[0].wrapping_add(ws.touch() as u8);
    sys::write_all(to, &token)
}

pub struct LatCtx {
    procs: usize,
    size: usize,
    /// This process's ends of the ring: it writes `out` and reads `inp`.
    out: RawFd,
    inp: RawFd,
    helpers: Vec<Pid>,
    ws: WorkingSet,
    place: Placement,
}

impl Benchmark for LatCtx {
    /// Build the ring: pipe i carries the token from member i to member
    /// i+1; member 0 is this process. Each helper keeps only its own two
    /// ends and leaves when its input reaches end-of-file.
    fn setup(&mut self, ctx: &Context) -> Fallible {
        let pins = self.place.pin(ctx, self.procs)?;
        let mut pipes = Vec::with_capacity(self.procs);
        for _ in 0..self.procs {
            pipes.push(sys::pipe()?);
        }
        for member in 1..self.procs {
            let (inp, out) = (pipes[member - 1].0, pipes[member].1);
            let all = pipes.clone();
            let size = self.size;
            let pid = pins.fork_helper(member, move || {
                for &(r, w) in &all {
                    if r != inp {
                        sys::close(r);
                    }
                    if w != out {
                        sys::close(w);
                    }
                }
                let ws = WorkingSet::new(size, member as u64);
                while pass(inp, out, &ws).is_ok() {}
                0
            });
            match pid {
                Ok(pid) => self.helpers.push(pid),
                Err(e) => {
                    for (r, w) in pipes {
                        sys::close(r);
                        sys::close(w);
                    }
                    for pid in self.helpers.drain(..) {
                        sys::kill_and_reap(pid);
                    }
                    return Err(e);
                }
            }
        }
        self.out = pipes[0].1;
        self.inp = pipes[self.procs - 1].0;
        for (r, w) in pipes {
            if r != self.inp {
                sys::close(r);
            }
            if w != self.out {
                sys::close(w);
            }
        }
        self.ws = WorkingSet::new(self.size, 0);
        Ok(())
    }

    /// Timed: `n` trips of the token round the ring: `procs` passes, each a
    /// pipe write, a context switch, a pipe read and one sum over a private
    /// working set (the sum feeds the token, so it stays). The baseline
    /// (the same writes, reads and sums in one process) is subtracted.
    fn run(&mut self, n: u64) -> Fallible {
        let mut token = [0u8; 4];
        for _ in 0..n {
            sys::write_all(self.out, &token)?;
            sys::read_exact(self.inp, &mut token)?;
            token[0] = token[0].wrapping_add(self.ws.touch() as u8);
        }
        Ok(())
    }

    fn cleanup(&mut self) {
        sys::close(self.out);
        sys::close(self.inp);
        self.out = -1;
        self.inp = -1;
        for pid in self.helpers.drain(..) {
            sys::kill_and_reap(pid);
        }
    }
}

/// The overhead: one process, its own pipe, `procs` passes per iteration.
pub struct CtxOverhead {
    procs: usize,
    size: usize,
    fds: (RawFd, RawFd),
    ws: WorkingSet,
    place: Placement,
}

impl Benchmark for CtxOverhead {
    /// On the CPU the ring's first member uses, so that what is subtracted
    /// was measured where the ring's own passes run.
    fn setup(&mut self, ctx: &Context) -> Fallible {
        self.place.pin(ctx, self.procs)?;
        self.fds = sys::pipe()?;
        self.ws = WorkingSet::new(self.size, 0);
        Ok(())
    }

    /// Timed: `n × procs` passes without a switch: write the token to our
    /// own pipe, read it back, sum the working set into it.
    fn run(&mut self, n: u64) -> Fallible {
        let mut token = [0u8; 4];
        sys::write_all(self.fds.1, &token)?;
        for _ in 0..n * self.procs as u64 {
            pass(self.fds.0, self.fds.1, &self.ws)?;
        }
        sys::read_exact(self.fds.0, &mut token)?;
        Ok(())
    }

    fn cleanup(&mut self) {
        sys::close(self.fds.0);
        sys::close(self.fds.1);
        self.fds = (-1, -1);
    }
}

fn build(p: &Point, _: &RunContext) -> Result<Built, String> {
    let procs = p.num("procs") as usize;
    let size = p.num("size") as usize;
    if size % 8 != 0 {
        return Err(format!("size: {size} is not a multiple of 8 bytes"));
    }
    let bench = LatCtx {
        procs,
        size,
        out: -1,
        inp: -1,
        helpers: Vec::new(),
        ws: WorkingSet(Vec::new()),
        place: Placement::of(p),
    };
    let base = CtxOverhead {
        procs,
        size,
        fds: (-1, -1),
        ws: WorkingSet(Vec::new()),
        place: Placement::of(p),
    };
    Ok(Built::new(
        bench,
        Shape::latency(procs as f64).with_switches_by_design(),
    )
    .with_baseline("pipe write+read and working-set sum in one process", base))
}

pub const FAMILY: Family = Family {
    params: &[
        Param::int("procs", 2, 1024)
            .measured(&["2", "4", "8", "16", "24", "32", "64", "96"])
            .quick(&["2", "8", "32", "96"])
            .help("processes in the ring"),
        Param::size("size", 0, 64 << 20)
            .measured(&["0", "16k", "64k"])
            .help("private working set each process sums per pass"),
        placement::PARAM,
    ],
    ..Family::new(
        "lat_ctx",
        "ctx",
        "context switch: a token passed round a ring of processes through pipes, each summing a private working set; the one-process overhead is subtracted",
        build,
    )
};

#[cfg(test)]
mod tests {
    use crate::testing::measure_tiny;

    #[test]
    fn subtraction_is_never_negative() {
        let mut ms = measure_tiny("lat_ctx/procs:2,4/size:0,16k/cpus:same").unwrap();
        // One cross-CPU case: those warm up and time longer (placement::settle).
        ms.extend(measure_tiny("lat_ctx/procs:2/size:0/cpus:spread").unwrap());
        assert_eq!(ms.len(), 5);
        for m in &ms {
            assert!(m.baseline.is_some(), "{}: no baseline", m.name);
            assert!(m.samples.iter().all(|&x| x >= 0.0 && x.is_finite()));
            let swamped = m.warnings.iter().any(|w| w.code == "overhead-swamps");
            // Either a positive figure or an explicit warning, never silence;
            // a zero is marked invalid, so nothing ranks or compares it.
            assert!(
                m.value() > 0.0 || (swamped && m.invalid.is_some()),
                "{}: zero without warning",
                m.name
            );
            assert_eq!(m.invalid.is_some(), m.value() <= 0.0, "{}", m.name);
        }
    }

    #[test]
    fn ring_members_are_reaped() {
        use touchstone_harness::{Benchmark, Context};
        let mut b = super::LatCtx {
            procs: 4,
            size: 1024,
            out: -1,
            inp: -1,
            helpers: Vec::new(),
            ws: super::WorkingSet(Vec::new()),
            place: super::Placement::Free,
        };
        let ctx = Context {
            process: 0,
            parallel: 1,
            scratch: std::env::temp_dir(),
        };
        b.setup(&ctx).unwrap();
        b.run(100).unwrap();
        let pids = b.helpers.clone();
        assert_eq!(pids.len(), 3);
        b.cleanup();
        for pid in pids {
            // Reaped means gone: a zombie would still have its /proc entry.
            assert!(
                !std::path::Path::new(&format!("/proc/{pid}")).exists(),
                "ring member {pid} is still there"
            );
        }
    }

    /// `cpus:spread` puts ring members on distinct CPUs (wrapping round),
    /// `cpus:same` all on one; checked on the live helpers' affinity masks,
    /// in a forked process so the test runner's threads stay unpinned.
    #[test]
    fn ring_members_are_placed() {
        use crate::support::placement::{usable_cpus, Placement};
        use touchstone_harness::{Benchmark, Context};
        let cpus = usable_cpus().unwrap();
        for place in [Placement::Same, Placement::Spread] {
            let cpus = cpus.clone();
            crate::testing::in_child(move || {
                let mut b = super::LatCtx {
                    procs: 3,
                    size: 0,
                    out: -1,
                    inp: -1,
                    helpers: Vec::new(),
                    ws: super::WorkingSet(Vec::new()),
                    place,
                };
                let ctx = Context {
                    process: 0,
                    parallel: 1,
                    scratch: std::env::temp_dir(),
                };
                b.setup(&ctx).map_err(|e| e.0)?;
                let mut pids = vec![0];
                pids.extend(b.helpers.iter().copied());
                for (k, &pid) in pids.iter().enumerate() {
                    let want = match place {
                        Placement::Same => cpus[0],
                        _ => cpus[k % cpus.len()],
                    };
                    // SAFETY: a zeroed set filled by the kernel.
                    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
                    let r = unsafe {
                        libc::sched_getaffinity(
                            pid,
                            std::mem::size_of::<libc::cpu_set_t>(),
                            &mut set,
                        )
                    };
                    let on: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
                        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
                        .collect();
                    if r != 0 || on != [want] {
                        b.cleanup();
                        return Err(format!("{place:?}: member {k} on {on:?}, not [{want}]"));
                    }
                }
                b.cleanup();
                Ok(())
            })
            .unwrap();
        }
    }
}
