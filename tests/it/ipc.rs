//! System V IPC objects never outlive a run: a run stopped by Ctrl-C or
//! SIGTERM, or whose benchmark process crashed, leaves none behind. Each
//! run is made in a private IPC namespace (held open by a `sleep` made
//! with `unshare --ipc`, entered with `nsenter`), so every object counted
//! there is the run's own, whatever other tests do meanwhile.
//!
//! The families that make IPC objects: lat_sem (a semaphore set per
//! benchmark process, made in the child) and rt_dispatch via:sem (one set
//! per trial, made in the parent); their FIFOs and Unix sockets (lat_fifo,
//! lat_unix_connect) live in the scratch directory, which the harness's
//! own tests (`tests/it/cli.rs`) check is gone after Ctrl-C.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{scratch_dirs, text, unavailable, wait_within, Sandbox};

/// A private IPC namespace, gone with its holder on drop.
struct IpcNamespace {
    holder: Child,
}

impl IpcNamespace {
    /// None (with the reason printed) where one cannot be made; under CI
    /// (`CI` set) that is a failure.
    fn new() -> Option<IpcNamespace> {
        // SAFETY: geteuid has no preconditions.
        let why = if unsafe { libc::geteuid() } != 0 {
            "not root (an IPC namespace needs it)".to_string()
        } else {
            match Command::new("unshare")
                .args(["--ipc", "sleep", "600"])
                .stdin(Stdio::null())
                .spawn()
            {
                Ok(holder) => {
                    let ns = IpcNamespace { holder };
                    // Until unshare has made the namespace and become sleep.
                    let t = Instant::now();
                    while ns.link() == own_ipc_namespace() {
                        assert!(t.elapsed() < Duration::from_secs(10), "unshare --ipc hangs");
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    return Some(ns);
                }
                Err(e) => format!("cannot run unshare (util-linux): {e}"),
            }
        };
        unavailable(&why);
        None
    }

    fn link(&self) -> String {
        std::fs::read_link(format!("/proc/{}/ns/ipc", self.holder.id()))
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    }

    /// `program ARGS` inside the namespace.
    fn command(&self, program: &Path) -> Command {
        let mut c = Command::new("nsenter");
        c.arg(format!("--ipc=/proc/{}/ns/ipc", self.holder.id()))
            .arg("--")
            .arg(program);
        c
    }

    /// The touchstone command of `s`, inside the namespace (nsenter execs
    /// it: the child's pid is touchstone's).
    fn touchstone(&self, s: &Sandbox) -> Command {
        let t = s.cmd();
        let mut c = self.command(Path::new(t.get_program()));
        for (k, v) in t.get_envs() {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        c
    }

    /// The System V objects in the namespace, one line each
    /// ("sem ID", "shm ID", "msg ID").
    fn objects(&self) -> Vec<String> {
        let mut all = Vec::new();
        for kind in ["sem", "shm", "msg"] {
            let o = self
                .command(Path::new("cat"))
                .arg(format!("/proc/sysvipc/{kind}"))
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", text(&o));
            for line in String::from_utf8_lossy(&o.stdout).lines().skip(1) {
                let id = line.split_whitespace().nth(1).unwrap_or("?");
                all.push(format!("{kind} {id}"));
            }
        }
        all
    }

    fn wait_for_an_object(&self, run: &mut Child) -> bool {
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(60) {
            if !self.objects().is_empty() {
                return true;
            }
            if run.try_wait().unwrap().is_some() {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }
}

impl Drop for IpcNamespace {
    fn drop(&mut self) {
        // Its last process gone, the namespace and anything in it go too.
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

fn own_ipc_namespace() -> String {
    std::fs::read_link("/proc/self/ns/ipc")
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// Wait for `run` to end (at most a minute); its exit code.
fn ended(run: &mut Child) -> Option<i32> {
    wait_within(run, Duration::from_secs(60), "the run did not end").code()
}

/// The children of process `pid`.
fn children(pid: u32) -> Vec<i32> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
    {
        let path = task.unwrap().path().join("children");
        out.extend(
            std::fs::read_to_string(path)
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|p| p.parse::<i32>().ok()),
        );
    }
    out
}

/// Start `args` in the namespace, do `stop` to it once it has an IPC
/// object, and return its exit code and what is left in the namespace.
fn stopped_run(
    ns: &IpcNamespace,
    s: &Sandbox,
    args: &[&str],
    stop: impl FnOnce(&Child),
) -> (Option<i32>, Vec<String>) {
    let mut run = ns
        .touchstone(s)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        ns.wait_for_an_object(&mut run),
        "{args:?} made no IPC object (or ended first)"
    );
    stop(&run);
    let code = ended(&mut run);
    (code, ns.objects())
}

fn signal(run: &Child, sig: libc::c_int) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(run.id() as i32, sig) };
}

/// An IPC namespace of the test's own and a sandbox to run in; None
/// (the test skips, as `IpcNamespace::new` says why) where none can be made.
fn namespace_and_sandbox() -> Option<(IpcNamespace, Sandbox)> {
    Some((IpcNamespace::new()?, Sandbox::new()))
}

/// `touchstone run lat_sem -r 50 & sleep 2; kill -INT %1; ipcs -s` showed
/// the set left behind: the record that would remove it went with the
/// scratch directory. Ctrl-C and SIGTERM now leave nothing.
#[test]
fn lat_sem_stopped_by_ctrl_c_or_sigterm_leaves_no_semaphore_set() {
    let Some((ns, s)) = namespace_and_sandbox() else {
        return;
    };
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let (code, left) = stopped_run(&ns, &s, &["run", "lat_sem", "-r", "50"], |run| {
            signal(run, sig)
        });
        assert_eq!(code, Some(130), "signal {sig}");
        assert!(left.is_empty(), "signal {sig} left {left:?}");
    }
    // The scratch directories went too.
    let scratch = scratch_dirs(&s);
    assert!(scratch.is_empty(), "{scratch:?}");
}

/// The benchmark process that made the set dies (SIGKILL, as a crash):
/// the measurement fails, and the set goes with the scratch directory.
#[test]
fn lat_sem_whose_benchmark_process_crashes_leaves_no_semaphore_set() {
    let Some((ns, s)) = namespace_and_sandbox() else {
        return;
    };
    // One case, long enough to be caught with its set: the run then ends
    // with the failed case (a second case would run on, tens of seconds).
    let args = ["run", "lat_sem/cpus:same", "-r", "500"];
    let (code, left) = stopped_run(&ns, &s, &args, |run| {
        let kids = children(run.id());
        assert!(!kids.is_empty(), "no benchmark process");
        for k in kids {
            // SAFETY: killing the run's own benchmark process.
            unsafe { libc::kill(k, libc::SIGKILL) };
        }
    });
    assert_eq!(code, Some(1), "a failed measurement");
    assert!(left.is_empty(), "left {left:?}");
}

/// rt_dispatch via:sem makes its set in the parent, per trial: Ctrl-C in
/// the middle of a trial leaves nothing either.
#[test]
fn rt_dispatch_via_sem_stopped_by_ctrl_c_leaves_no_semaphore_set() {
    let Some((ns, s)) = namespace_and_sandbox() else {
        return;
    };
    let (code, left) = stopped_run(
        &ns,
        &s,
        &["run", "rt_dispatch/via:sem/background:none", "--quick"],
        |run| signal(run, libc::SIGINT),
    );
    assert_eq!(code, Some(130));
    assert!(left.is_empty(), "left {left:?}");
}
