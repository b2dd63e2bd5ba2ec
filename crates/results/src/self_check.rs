//! touchstone's check on itself at a workload point: whether one of its
//! own threads (a server thread, a client) was the limit instead of the
//! machine. A load curve must describe the machine; when a single thread
//! of touchstone's ran flat out while the point's CPUs had room, the
//! throughput measured is that thread's, and the point says so
//! ("touchstone-bound"). Issue 24 found exactly this: one epoll server
//! thread at 1.00 CPU while 82 % of a 16-CPU machine idled.
//!
//! Each thread's time over the window comes from the kernel's scheduler
//! account (`/proc/PID/task/TID/schedstat`): the time it ran on a CPU and
//! the time it waited, runnable, for one. Their sum — the time the thread
//! *wanted* a CPU — is what saturation means for a thread: a thread that
//! never blocked, whatever it got. The point's CPUs had room when
//! touchstone's threads together wanted less than [`SATURATED`] of them:
//! otherwise touchstone kept the CPUs busy and the machine is what was
//! measured (on one CPU a thread can never be the choke point alone).
//! Other work on the machine does not hide a choke point (the choked
//! thread still wants its CPU all the time, the rest of touchstone waits
//! for it) nor fake one (every thread of a scaled server then waits for a
//! CPU, and together they want all of them).

use serde::{Deserialize, Serialize};

/// A thread that wanted a CPU for at least this share of the window was
/// saturated.
pub const THREAD_SATURATED: f64 = 0.90;
/// touchstone's threads together wanting at least this share of the
/// point's CPUs kept them busy.
pub const SATURATED: f64 = 0.90;

/// touchstone's own threads over one window (or the representative
/// trial's, for a point).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelfCheck {
    /// The thread that wanted a CPU the most: "server thread 0", "client 3".
    pub busiest: String,
    /// Share of the window it ran on a CPU.
    pub busiest_ran: f64,
    /// Share of the window it ran or waited, runnable, for a CPU.
    pub busiest_wanted: f64,
    /// All of touchstone's threads of the trial (clients and server):
    /// CPUs' worth of running over the window.
    pub own_ran_cpus: f64,
    /// The same, running or runnable.
    pub own_wanted_cpus: f64,
    /// Threads counted.
    pub threads: u32,
    /// The point's CPUs, busy share over the window (/proc/stat: other
    /// work included).
    pub cpus_busy: f64,
    /// The busiest thread was saturated while touchstone's threads left
    /// the point's CPUs room: the throughput is touchstone's limit.
    pub bound: bool,
}

impl SelfCheck {
    /// This check with `bound` decided for a window on `cpus` CPUs by
    /// the rule in the module's header.
    pub fn assessed(self, cpus: u32) -> SelfCheck {
        let bound = self.busiest_wanted >= THREAD_SATURATED
            && self.own_wanted_cpus < SATURATED * f64::from(cpus.max(1));
        SelfCheck { bound, ..self }
    }

    /// "server thread 0 at 99 % of a CPU, CPUs 18 % busy (touchstone's
    /// threads wanted 2.9 of 16 CPUs)"; when the thread waited for its
    /// CPU a noticeable part of the time, what it wanted is said too.
    pub fn describe(&self, cpus: u32) -> String {
        let pct = |f: f64| format!("{:.0} %", 100.0 * f);
        let waited = self.busiest_wanted - self.busiest_ran;
        let wanted = if waited >= 0.05 {
            format!(" (runnable {})", pct(self.busiest_wanted))
        } else {
            String::new()
        };
        format!(
            "{} at {} of a CPU{wanted}, CPUs {} busy (touchstone's threads wanted {:.1} of {cpus} CPU{})",
            self.busiest,
            pct(self.busiest_ran),
            pct(self.cpus_busy),
            self.own_wanted_cpus,
            if cpus == 1 { "" } else { "s" }
        )
    }

    /// The flag as printed: "touchstone-bound: …" when bound.
    pub fn flag(&self, cpus: u32) -> Option<String> {
        self.bound
            .then(|| format!("touchstone-bound: {}", self.describe(cpus)))
    }

    /// A point's check from its kept trials': bound when at least half
    /// of them are (one trial's scheduling accident does not flag a
    /// point, nor hide a choke point the others show); the figures are
    /// those of the trial whose busiest thread wanted the most among the
    /// majority's side.
    pub fn of_trials<'a>(checks: impl IntoIterator<Item = &'a SelfCheck>) -> Option<SelfCheck> {
        let all: Vec<&SelfCheck> = checks.into_iter().collect();
        if all.is_empty() {
            return None;
        }
        let bound = all.iter().filter(|c| c.bound).count() * 2 >= all.len();
        all.into_iter()
            .filter(|c| c.bound == bound)
            .max_by(|a, b| a.busiest_wanted.total_cmp(&b.busiest_wanted))
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(who: &str, ran: f64, wanted: f64, own: f64, cpus: u32, busy: f64) -> SelfCheck {
        SelfCheck {
            busiest: who.into(),
            busiest_ran: ran,
            busiest_wanted: wanted,
            own_ran_cpus: own,
            own_wanted_cpus: own,
            threads: 5,
            cpus_busy: busy,
            bound: false,
        }
        .assessed(cpus)
    }

    fn check(wanted: f64, own: f64, cpus: u32) -> SelfCheck {
        window(
            "server thread 0",
            wanted,
            wanted,
            own,
            cpus,
            own / f64::from(cpus),
        )
    }

    #[test]
    fn a_saturated_thread_on_cpus_with_room_is_bound() {
        // Issue 24's 16-CPU tcp_rr: one server thread at a whole CPU while
        // touchstone used under 3 of 16.
        let c = check(0.99, 2.9, 16);
        assert!(c.bound);
        assert_eq!(
            c.flag(16).unwrap(),
            "touchstone-bound: server thread 0 at 99 % of a CPU, CPUs 18 % busy \
             (touchstone's threads wanted 2.9 of 16 CPUs)"
        );
        // Saturated CPUs: the machine is measured, whatever one thread did.
        assert!(!check(0.99, 1.85, 2).bound);
        assert!(!check(1.0, 0.95, 1).bound, "one CPU: never bound");
        // A thread below the bar.
        assert!(!check(0.85, 1.0, 4).bound);
        assert_eq!(check(0.85, 1.0, 4).flag(4), None);
        // Exactly at the bars.
        assert!(check(THREAD_SATURATED, 1.0, 2).bound);
        assert!(!check(0.95, SATURATED * 2.0, 2).bound);
    }

    #[test]
    fn waiting_for_a_cpu_counts_as_wanting_it_and_is_said() {
        let c = window("client 1", 0.40, 0.97, 1.2, 2, 1.0);
        assert!(c.bound);
        assert!(c.describe(2).contains("at 40 % of a CPU (runnable 97 %)"));
    }

    #[test]
    fn a_point_follows_the_majority_of_its_trials() {
        let (yes, no) = (check(0.99, 1.2, 4), check(0.5, 1.2, 4));
        let strong = check(1.0, 1.1, 4);
        assert_eq!(SelfCheck::of_trials([&no, &yes, &no]).unwrap(), no);
        let p = SelfCheck::of_trials([&yes, &no, &strong]).unwrap();
        assert!(p.bound);
        assert_eq!(p.busiest_wanted, 1.0, "the strongest of the bound trials");
        assert!(
            SelfCheck::of_trials([&yes, &no]).unwrap().bound,
            "a tie flags"
        );
        assert_eq!(SelfCheck::of_trials([]), None);
    }

    #[test]
    fn round_trips_through_json() {
        let c = check(0.93, 1.5, 8);
        let back: SelfCheck = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }
}
