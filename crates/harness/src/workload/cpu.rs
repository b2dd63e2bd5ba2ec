//! CPUs of a workload point: which CPUs are usable, confining a process
//! (and the threads it will start) to the first k of them, and accounting
//! for a measurement window — where those CPUs' time went (/proc/stat
//! deltas, restricted to the point's CPUs) and how much CPU each side's
//! processes used (their process CPU clocks, exact to the nanosecond and
//! summed over all their threads).

use std::io;

use touchstone_results::curve::CpuSplit;

/// The CPUs this process may run on (its affinity mask), ascending, so
/// `taskset` and cgroup cpusets are respected.
pub fn usable_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the kernel fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0
    {
        return Err(io::Error::last_os_error());
    }
    let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect();
    if cpus.is_empty() {
        return Err(io::Error::other("the affinity mask is empty"));
    }
    Ok(cpus)
}

/// Confine the calling thread — and every process and thread it starts
/// afterwards, which inherit the mask — to `cpus`.
pub fn confine(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t with valid bits set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::other(format!(
                "cannot confine to CPUs {cpus:?}: {}",
                io::Error::last_os_error()
            )));
        }
    }
    Ok(())
}

/// One CPU's counters from /proc/stat, in USER_HZ ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTicks {
    fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }

    fn minus(&self, o: &CpuTicks) -> CpuTicks {
        CpuTicks {
            user: self.user.saturating_sub(o.user),
            nice: self.nice.saturating_sub(o.nice),
            system: self.system.saturating_sub(o.system),
            idle: self.idle.saturating_sub(o.idle),
            iowait: self.iowait.saturating_sub(o.iowait),
            irq: self.irq.saturating_sub(o.irq),
            softirq: self.softirq.saturating_sub(o.softirq),
            steal: self.steal.saturating_sub(o.steal),
        }
    }

    fn plus(&self, o: &CpuTicks) -> CpuTicks {
        CpuTicks {
            user: self.user + o.user,
            nice: self.nice + o.nice,
            system: self.system + o.system,
            idle: self.idle + o.idle,
            iowait: self.iowait + o.iowait,
            irq: self.irq + o.irq,
            softirq: self.softirq + o.softirq,
            steal: self.steal + o.steal,
        }
    }
}

/// The per-CPU lines of /proc/stat text: (cpu number, counters). Guest
/// time is already inside user and nice, so it is not added again.
pub fn parse_proc_stat(text: &str) -> Vec<(usize, CpuTicks)> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            let cpu = f.next()?.strip_prefix("cpu")?.parse::<usize>().ok()?;
            let v: Vec<u64> = f.map(|x| x.parse().unwrap_or(0)).collect();
            let at = |i: usize| v.get(i).copied().unwrap_or(0);
            Some((
                cpu,
                CpuTicks {
                    user: at(0),
                    nice: at(1),
                    system: at(2),
                    idle: at(3),
                    iowait: at(4),
                    irq: at(5),
                    softirq: at(6),
                    steal: at(7),
                },
            ))
        })
        .collect()
}

/// Read the per-CPU counters now.
pub fn read_proc_stat() -> io::Result<Vec<(usize, CpuTicks)>> {
    Ok(parse_proc_stat(&std::fs::read_to_string("/proc/stat")?))
}

/// Where the time of `cpus` went between two readings, as fractions.
pub fn split(
    before: &[(usize, CpuTicks)],
    after: &[(usize, CpuTicks)],
    cpus: &[usize],
) -> CpuSplit {
    let sum = |r: &[(usize, CpuTicks)]| {
        r.iter()
            .filter(|(c, _)| cpus.contains(c))
            .fold(CpuTicks::default(), |acc, (_, t)| acc.plus(t))
    };
    let d = sum(after).minus(&sum(before));
    let total = d.total();
    if total == 0 {
        return CpuSplit::default();
    }
    let f = |x: u64| x as f64 / total as f64;
    CpuSplit {
        user: f(d.user + d.nice),
        system: f(d.system),
        irq: f(d.irq),
        softirq: f(d.softirq),
        steal: f(d.steal),
        idle: f(d.idle + d.iowait),
    }
}

/// The CPU clock of process `pid` (all its threads, live and ended).
pub fn process_clock(pid: libc::pid_t) -> io::Result<libc::clockid_t> {
    let mut id: libc::clockid_t = 0;
    // SAFETY: fills a local clockid.
    let r = unsafe { libc::clock_getcpuclockid(pid, &mut id) };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    Ok(id)
}

/// CPU time used so far on `clock`, ns (None if the process is gone).
pub fn cpu_time_ns(clock: libc::clockid_t) -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: reading a CPU clock into a local timespec.
    (unsafe { libc::clock_gettime(clock, &mut ts) } == 0)
        .then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "cpu  10 0 10 100 0 0 0 0 0 0\n\
        cpu0 100 10 200 1000 5 1 2 0 0 0\n\
        cpu1 50 0 50 2000 0 0 0 3 0 0\n\
        intr 12345\n\
        ctxt 999\n";
    const AFTER: &str = "cpu  10 0 10 100 0 0 0 0 0 0\n\
        cpu0 140 20 300 1020 15 3 8 4 0 0\n\
        cpu1 50 0 150 2000 0 0 0 3 0 0\n";

    #[test]
    fn parses_only_the_per_cpu_lines() {
        let r = parse_proc_stat(BEFORE);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].0, 0);
        assert_eq!(r[1].1.steal, 3);
        assert_eq!(r[0].1.iowait, 5);
    }

    #[test]
    fn split_is_restricted_to_the_points_cpus() {
        let (b, a) = (parse_proc_stat(BEFORE), parse_proc_stat(AFTER));
        // cpu0 delta: user 40 + nice 10, system 100, idle 20 + iowait 10,
        // irq 2, softirq 6, steal 4: 192 ticks in all.
        let s = split(&b, &a, &[0]);
        assert_eq!(s.user, 50.0 / 192.0);
        assert_eq!(s.system, 100.0 / 192.0);
        assert_eq!(s.idle, 30.0 / 192.0);
        assert_eq!(s.irq, 2.0 / 192.0);
        assert_eq!(s.softirq, 6.0 / 192.0);
        assert_eq!(s.steal, 4.0 / 192.0);
        let sum = s.user + s.system + s.irq + s.softirq + s.steal + s.idle;
        assert!((sum - 1.0).abs() < 1e-12);
        // cpu1 alone: all system.
        assert_eq!(split(&b, &a, &[1]).system, 1.0);
        // Both: 292 ticks, 200 of them system.
        assert_eq!(split(&b, &a, &[0, 1]).system, 200.0 / 292.0);
        // No time passed: an all-zero split, not NaN.
        assert_eq!(split(&b, &b, &[0]), CpuSplit::default());
    }

    #[test]
    fn a_busy_child_shows_on_its_process_clock() {
        // The child burns 20 ms of CPU by its own clock, says so, and waits.
        let mut fds = [0; 2];
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let own = process_clock(0).unwrap_or(libc::CLOCK_PROCESS_CPUTIME_ID);
            while cpu_time_ns(own).unwrap_or(u64::MAX) < 20_000_000 {}
            unsafe {
                libc::write(fds[1], b"x".as_ptr() as *const libc::c_void, 1);
                libc::pause();
                libc::_exit(0)
            };
        }
        let clock = process_clock(pid).unwrap();
        let mut b = 0u8;
        assert_eq!(
            unsafe { libc::read(fds[0], &mut b as *mut u8 as *mut libc::c_void, 1) },
            1
        );
        let used = cpu_time_ns(clock).unwrap();
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        assert!(used >= 20_000_000, "{used} ns");
        assert!(cpu_time_ns(clock).is_none(), "clock of a reaped process");
    }

    #[test]
    fn usable_cpus_are_known() {
        let c = usable_cpus().unwrap();
        assert!(!c.is_empty());
        assert!(c.windows(2).all(|w| w[0] < w[1]));
    }
}
