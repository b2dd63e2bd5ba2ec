//! The process that owns a stored `running` run, and whether it is still
//! there.
//!
//! A run is stored as `running` when it starts and given its final status
//! when it ends; a process killed outright (SIGKILL, the OOM killer, a power
//! cut) never gets there. So the store records who owns each run it is
//! writing — the process id, the kernel's boot id and the process's start
//! time (a pid alone is reused) — and a reader that finds a `running` run
//! whose owner is gone shows it as `crashed`.
//!
//! Only what can be decided is decided: a run owned by another PID namespace
//! (a container sharing the store) or by another machine is left `running`,
//! since its owner cannot be looked up from here.

/// Who owns a run: enough to tell the owning process from a later one that
/// reuses its pid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub pid: i64,
    /// /proc/sys/kernel/random/boot_id: a new value after every boot.
    pub boot: String,
    /// The process's start time, clock ticks after boot (/proc/PID/stat,
    /// field 22): a pid reused by a later process has a later start.
    pub start: i64,
    /// The PID namespace (/proc/self/ns/pid), where the pid means something.
    pub pid_namespace: String,
}

/// What a reader can say of a stored `running` run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Liveness {
    Alive,
    /// The owner is gone; the text says how it was found out.
    Gone(String),
    /// The owner cannot be looked up from here (another machine or PID
    /// namespace).
    Unknown,
}

impl Owner {
    /// This process. Without /proc the fields it cannot read are empty
    /// (0), and readers leave such a run `running`: an owner that cannot be
    /// checked is never declared gone.
    pub fn current() -> Owner {
        let pid = std::process::id() as i64;
        Owner {
            pid,
            boot: boot_id().unwrap_or_default(),
            start: start_ticks(pid).unwrap_or(0),
            pid_namespace: pid_namespace().unwrap_or_default(),
        }
    }

    /// Whether the owner of a run stored on `hostname` is still running.
    pub fn liveness(&self, hostname: &str) -> Liveness {
        let Some(boot) = boot_id() else {
            return Liveness::Unknown;
        };
        if self.boot.is_empty() || self.pid_namespace.is_empty() || self.start == 0 {
            return Liveness::Unknown;
        }
        if boot != self.boot {
            // Another boot of this machine: nothing of the old one runs.
            // Another machine (a store on shared storage): unknowable.
            return if same_host(hostname) {
                Liveness::Gone(format!(
                    "the machine rebooted after it started (process {})",
                    self.pid
                ))
            } else {
                Liveness::Unknown
            };
        }
        if pid_namespace().as_deref() != Some(self.pid_namespace.as_str()) {
            return Liveness::Unknown;
        }
        match process_state(self.pid) {
            Some((state, start)) if start == self.start && state != 'Z' && state != 'X' => {
                Liveness::Alive
            }
            _ => Liveness::Gone(format!(
                "its process ({}) is gone: killed or crashed before it could finish",
                self.pid
            )),
        }
    }
}

fn boot_id() -> Option<String> {
    let text = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(text.trim().to_string()).filter(|b| !b.is_empty())
}

fn pid_namespace() -> Option<String> {
    let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
    Some(link.to_string_lossy().into_owned())
}

fn start_ticks(pid: i64) -> Option<i64> {
    process_state(pid).map(|(_, start)| start)
}

/// A process's state letter and start time from /proc/PID/stat. The command
/// name (field 2) may hold spaces and parentheses, so fields are counted
/// after its last ')'.
fn process_state(pid: i64) -> Option<(char, i64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state); field 22 (starttime) is index 19.
    let state = fields.first()?.chars().next()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

fn same_host(hostname: &str) -> bool {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into a local buffer.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) } == 0;
    if !ok {
        return false;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]) == hostname
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_reused_pid_is_not() {
        let me = Owner::current();
        assert_eq!(me.liveness("any host"), Liveness::Alive);
        let earlier = Owner {
            start: me.start - 1,
            ..me.clone()
        };
        assert!(matches!(earlier.liveness("any"), Liveness::Gone(_)));
    }

    #[test]
    fn an_exited_process_is_gone() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let owner = Owner {
            pid: child.id() as i64,
            // Already reaped before it was read: any other start will do.
            start: start_ticks(child.id() as i64).unwrap_or(1),
            ..Owner::current()
        };
        child.wait().unwrap();
        assert!(matches!(owner.liveness("any"), Liveness::Gone(_)));
    }

    #[test]
    fn an_owner_recorded_without_proc_is_never_declared_gone() {
        let blind = Owner {
            pid: i64::from(i32::MAX),
            boot: String::new(),
            start: 0,
            pid_namespace: String::new(),
        };
        assert_eq!(blind.liveness("any"), Liveness::Unknown);
    }

    #[test]
    fn another_boot_is_gone_here_and_unknown_elsewhere() {
        let me = Owner::current();
        let old = Owner {
            boot: "00000000-0000-0000-0000-000000000000".into(),
            ..me
        };
        let mut buf = [0u8; 256];
        unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
        let end = buf.iter().position(|&b| b == 0).unwrap();
        let here = String::from_utf8_lossy(&buf[..end]).into_owned();
        assert!(matches!(old.liveness(&here), Liveness::Gone(_)));
        assert_eq!(old.liveness("some-other-machine"), Liveness::Unknown);
    }
}
