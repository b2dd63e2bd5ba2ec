//! `touchstone fleet slurm` against a real single-node Slurm: munged,
//! slurmctld and slurmd from Debian's packages, configured by this test in
//! a temporary directory (its own slurm.conf, munge key and socket, state,
//! spool, pid and log files, free ports) and started as root in the
//! foreground. A quick suite goes through srun and through an sbatch array,
//! and is imported; a partition that does not exist is a clear error. The
//! `Cluster` guard stops every daemon and job and removes the directory
//! also when an assertion fails. Skipped, with the reason printed, when not
//! root or when the daemons are missing or cannot start. Functional only:
//! the figures are never compared with anything.

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::common::{assert_refused, measurement_names, text, unavailable, Sandbox};

pub(crate) const PARTITION: &str = "tsq";

/// One cluster at a time: tests of this binary run in parallel, and two
/// slurmd would claim the one node name.
static TURN: Mutex<()> = Mutex::new(());

/// A running single-node cluster, torn down on drop (`tests/it/check.rs`
/// uses it too).
pub(crate) struct Cluster {
    dir: Option<tempfile::TempDir>,
    pub(crate) conf: PathBuf,
    daemons: Vec<Child>,
    /// Held until the cluster is torn down (fields drop after `drop`).
    _turn: MutexGuard<'static, ()>,
}

impl Cluster {
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.as_ref().unwrap().path().join(name)
    }

    /// A Slurm client command aimed at this cluster.
    pub(crate) fn slurm(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf).stdin(Stdio::null());
        c
    }

    /// Start a daemon in the foreground, its output into the directory.
    fn spawn(&mut self, name: &str, cmd: &mut Command) -> Result<(), String> {
        let log = fs::File::create(self.path(&format!("{name}.out"))).map_err(|e| e.to_string())?;
        let child = cmd
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("{name} would not start: {e}"))?;
        self.daemons.push(child);
        Ok(())
    }

    fn daemon_output(&self, name: &str) -> String {
        fs::read_to_string(self.path(&format!("{name}.out"))).unwrap_or_default()
    }

    /// Configure and start munged, slurmctld and slurmd; wait until the node
    /// is idle. Err: why the cluster could not be had (the test is skipped).
    pub(crate) fn start() -> Result<Cluster, String> {
        if unsafe { libc::geteuid() } != 0 {
            return Err("not root (the Slurm daemons run as root)".into());
        }
        for program in ["munged", "slurmctld", "slurmd", "srun", "sbatch", "squeue"] {
            if which(program).is_none() {
                return Err(format!(
                    "{program} is not installed (apt-get install slurm-wlm munge)"
                ));
            }
        }
        let node = short_hostname();
        // `slurmd -C` states this machine's CPUs and memory as slurmd will find them.
        let probe = Command::new("slurmd")
            .arg("-C")
            .output()
            .map_err(|e| format!("slurmd -C: {e}"))?;
        let hardware = String::from_utf8_lossy(&probe.stdout)
            .lines()
            .find(|l| l.starts_with("NodeName="))
            .ok_or("slurmd -C printed no NodeName line")?
            .split_whitespace()
            .skip(1)
            .collect::<Vec<_>>()
            .join(" ");
        let dir = tempfile::Builder::new()
            .prefix("ts-slurm-")
            .tempdir_in("/tmp")
            .map_err(|e| e.to_string())?;
        let d = dir.path().to_path_buf();
        let mut cluster = Cluster {
            conf: d.join("slurm.conf"),
            dir: Some(dir),
            daemons: Vec::new(),
            _turn: TURN.lock().unwrap_or_else(|e| e.into_inner()),
        };
        for sub in ["state", "spool", "work"] {
            fs::create_dir(d.join(sub)).map_err(|e| e.to_string())?;
        }
        // munge wants a key only its user can read.
        let key: Vec<u8> = (0..1024).map(|_| rand_byte()).collect();
        fs::write(d.join("munge.key"), key).map_err(|e| e.to_string())?;
        set_mode(&d.join("munge.key"), 0o400);
        let socket = d.join("munge.sock");
        cluster.spawn(
            "munged",
            Command::new("munged")
                .args(["--foreground", "--force"])
                .arg("--socket")
                .arg(&socket)
                .arg("--key-file")
                .arg(d.join("munge.key"))
                .arg("--pid-file")
                .arg(d.join("munged.pid"))
                .arg("--log-file")
                .arg(d.join("munged.log"))
                .arg("--seed-file")
                .arg(d.join("munged.seed")),
        )?;
        wait_for(Duration::from_secs(10), || socket.exists())
            .map_err(|_| format!("munged did not start: {}", cluster.daemon_output("munged")))?;
        let (ctld_port, slurmd_port) = free_ports();
        let p = |name: &str| d.join(name).display().to_string();
        let conf = format!(
            "# Written by tests/it/fleet_slurm.rs: a one-node cluster in {dir}.\n\
             ClusterName=touchstonetest\n\
             SlurmctldHost={node}(127.0.0.1)\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             SlurmctldPort={ctld_port}\n\
             SlurmdPort={slurmd_port}\n\
             AuthType=auth/munge\n\
             CredType=cred/munge\n\
             AuthInfo=socket={socket}\n\
             StateSaveLocation={state}\n\
             SlurmdSpoolDir={spool}\n\
             SlurmctldPidFile={ctld_pid}\n\
             SlurmdPidFile={slurmd_pid}\n\
             SlurmctldLogFile={ctld_log}\n\
             SlurmdLogFile={slurmd_log}\n\
             MailProg=/bin/true\n\
             ProctrackType=proctrack/pgid\n\
             TaskPlugin=task/none\n\
             JobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\n\
             JobCompType=jobcomp/none\n\
             SchedulerType=sched/builtin\n\
             SelectType=select/linear\n\
             MpiDefault=none\n\
             ReturnToService=2\n\
             NodeName={node} NodeAddr=127.0.0.1 {hardware} State=UNKNOWN\n\
             PartitionName={PARTITION} Nodes={node} Default=YES MaxTime=INFINITE State=UP\n",
            dir = d.display(),
            socket = socket.display(),
            state = p("state"),
            spool = p("spool"),
            ctld_pid = p("slurmctld.pid"),
            slurmd_pid = p("slurmd.pid"),
            ctld_log = p("slurmctld.log"),
            slurmd_log = p("slurmd.log"),
        );
        fs::write(&cluster.conf, conf).map_err(|e| e.to_string())?;
        let conf_path = cluster.conf.clone();
        cluster.spawn(
            "slurmctld",
            Command::new("slurmctld")
                .args(["-D", "-c", "-f"])
                .arg(&conf_path)
                .env("SLURM_CONF", &conf_path),
        )?;
        cluster.spawn(
            "slurmd",
            Command::new("slurmd")
                .args(["-D", "-f"])
                .arg(&conf_path)
                .env("SLURM_CONF", &conf_path),
        )?;
        let idle = wait_for(Duration::from_secs(30), || {
            cluster
                .slurm("sinfo")
                .args(["-h", "-p", PARTITION, "-o", "%t"])
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        });
        if idle.is_err() {
            return Err(format!(
                "the node did not become idle within 30 s.\nslurmctld: {}\nslurmd: {}",
                cluster.daemon_output("slurmctld"),
                cluster.daemon_output("slurmd")
            ));
        }
        Ok(cluster)
    }

    /// Jobs of this cluster still pending or running.
    fn queued(&self) -> String {
        self.slurm("squeue")
            .args(["-h", "-o", "%i %T"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    }

    /// touchstone aimed at this cluster, working inside its directory (so
    /// that every job process is found by the final sweep).
    fn touchstone(&self, sandbox: &Sandbox, args: &[&str]) -> Output {
        sandbox
            .cmd()
            .env("SLURM_CONF", &self.conf)
            .current_dir(self.path("work"))
            .args(args)
            .output()
            .unwrap()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Jobs first, while the controller can still end them.
        let _ = self
            .slurm("scancel")
            .args(["--full", "-u", "root"])
            .output();
        let _ = wait_for(Duration::from_secs(10), || self.queued().is_empty());
        for child in self.daemons.iter_mut().rev() {
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        }
        for child in self.daemons.iter_mut().rev() {
            let deadline = Instant::now() + Duration::from_secs(10);
            while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        // Whatever Slurm left behind (a job step's slurmstepd, a task)
        // works in or holds a file of this directory: ours, ended.
        if let Some(dir) = &self.dir {
            for pid in processes_using(dir.path()) {
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
        if let Some(dir) = self.dir.take() {
            let _ = dir.close();
        }
    }
}

fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

pub(crate) fn short_hostname() -> String {
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    unsafe { libc::uname(&mut u) };
    let name = unsafe { std::ffi::CStr::from_ptr(u.nodename.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    name.split('.').next().unwrap_or(&name).to_string()
}

fn rand_byte() -> u8 {
    let mut b = [0u8; 1];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b))
        .unwrap();
    b[0]
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// Two ports nobody listens on now (both held until both are chosen).
fn free_ports() -> (u16, u16) {
    let a = TcpListener::bind("127.0.0.1:0").unwrap();
    let b = TcpListener::bind("127.0.0.1:0").unwrap();
    (
        a.local_addr().unwrap().port(),
        b.local_addr().unwrap().port(),
    )
}

pub(crate) fn wait_for(limit: Duration, mut ready: impl FnMut() -> bool) -> Result<(), ()> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if ready() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Err(())
}

/// Processes (not this one) whose working directory, or an open file, lies under `dir`.
fn processes_using(dir: &Path) -> Vec<i32> {
    let me = std::process::id() as i32;
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            let base = PathBuf::from(format!("/proc/{pid}"));
            let under = |p: PathBuf| fs::read_link(p).is_ok_and(|t| t.starts_with(dir));
            under(base.join("cwd"))
                || fs::read_dir(base.join("fd"))
                    .map(|fds| fds.flatten().any(|fd| under(fd.path())))
                    .unwrap_or(false)
        })
        .collect()
}

/// The runs in the sandbox's store, as `runs --json` lists them.
fn stored_runs(sandbox: &Sandbox) -> Vec<serde_json::Value> {
    let o = sandbox.run(&["runs", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v.as_array()
        .cloned()
        .or_else(|| v["runs"].as_array().cloned())
        .unwrap_or_default()
}

/// `touchstone fleet slurm` on the test partition through `via`, its
/// results written under `out`, then `rest`.
fn slurm_args<'a>(via: &'a str, out: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "fleet", "slurm", "-p", PARTITION, "--via", via, "--out", out,
    ];
    args.extend(rest);
    args
}

#[test]
fn a_quick_suite_runs_through_srun_and_sbatch_and_is_imported() {
    let cluster = match Cluster::start() {
        Ok(c) => c,
        Err(why) => {
            unavailable(&format!("no single-node Slurm here: {why}"));
            return;
        }
    };
    let sandbox = Sandbox::new();
    let suite = [
        "--quick",
        "-r",
        "3",
        "--timeout",
        "5m",
        "lat_syscall/null,read",
        "null_loop",
    ];
    let dir_of_cluster = cluster.path("");

    // A partition that does not exist: a clear error, nothing submitted.
    let o = cluster.touchstone(&sandbox, &["fleet", "slurm", "--partition", "nosuch"]);
    assert_refused(&o, "partition `nosuch` does not exist");

    // --print-script submits nothing.
    let out_dir = cluster.path("results");
    let out = out_dir.to_str().unwrap();
    let args = slurm_args("sbatch", out, &[&["--print-script"], &suite[..]].concat());
    let o = cluster.touchstone(&sandbox, &args);
    assert!(o.status.success(), "{}", text(&o));
    let script = String::from_utf8_lossy(&o.stdout);
    assert!(script.contains("#SBATCH --array=0-0\n"), "{script}");
    assert!(script.contains("--json --no-store --quick"), "{script}");
    assert!(
        cluster.queued().is_empty(),
        "a job was queued: {}",
        cluster.queued()
    );
    assert!(!out_dir.exists(), "--print-script created {out}");

    // srun: one task on the one node, its document imported.
    let kept = cluster.path("srun-results");
    let args = slurm_args("srun", kept.to_str().unwrap(), &suite);
    let o = cluster.touchstone(&sandbox, &args);
    assert!(o.status.success(), "{}", text(&o));
    let said = text(&o);
    assert!(said.contains("1 of 1 task(s) brought results"), "{said}");
    assert!(said.contains("imported 1 run(s)"), "{said}");
    let runs = stored_runs(&sandbox);
    assert_eq!(runs.len(), 1, "{runs:?}");
    let kept: Vec<_> = fs::read_dir(&kept)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(
        kept[0].to_string_lossy().starts_with("touchstone-srun-0-"),
        "{kept:?}"
    );

    // sbatch: an array of one task writing into the directory, waited for, imported.
    let args = slurm_args("sbatch", out, &suite);
    let o = cluster.touchstone(&sandbox, &args);
    assert!(o.status.success(), "{}", text(&o));
    let said = text(&o);
    assert!(said.contains("submitted job"), "{said}");
    assert!(said.contains("1 of 1 task(s) brought results"), "{said}");
    let documents: Vec<_> = fs::read_dir(&out_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    assert_eq!(documents.len(), 1, "{documents:?}");
    let runs = stored_runs(&sandbox);
    assert_eq!(runs.len(), 2, "{runs:?}");
    let show = sandbox.run(&["show", "last", "--json"]);
    assert!(show.status.success(), "{}", text(&show));
    let doc: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    let run = &doc["runs"][0];
    assert_eq!(
        run["host"]["hostname"].as_str().unwrap(),
        short_hostname_full()
    );
    let names = measurement_names(run);
    assert!(
        names.iter().any(|n| n.starts_with("lat_syscall/null")),
        "{names:?}"
    );
    assert!(
        cluster.queued().is_empty(),
        "jobs left: {}",
        cluster.queued()
    );

    // A node whose run fails (here: no binary at that path) is reported as
    // such, in both modes, with exit code 1 and nothing imported.
    for via in ["srun", "sbatch"] {
        let no_binary = [
            "--binary",
            "/nonexistent/touchstone",
            "--quick",
            "null_loop",
        ];
        let o = cluster.touchstone(&sandbox, &slurm_args(via, out, &no_binary));
        let said = text(&o);
        assert_eq!(o.status.code(), Some(1), "{via}: {said}");
        assert!(
            said.contains("task 0 on ") && said.contains("FAILED"),
            "{via}: {said}"
        );
        assert!(said.contains("1 of 1 task(s) failed"), "{via}: {said}");
    }
    assert_eq!(stored_runs(&sandbox).len(), 2);
    let partial = fs::read_dir(&out_dir)
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().ends_with(".partial"));
    assert!(!partial, "a failed task left a .partial document");
    assert!(
        cluster.queued().is_empty(),
        "jobs left: {}",
        cluster.queued()
    );

    let daemons: Vec<i32> = cluster.daemons.iter().map(|c| c.id() as i32).collect();
    drop(cluster);
    assert!(!dir_of_cluster.exists(), "the cluster's directory was left");
    for pid in daemons {
        assert!(
            !crate::common::process_exists(pid),
            "daemon {pid} left running"
        );
    }
}

/// The host name a run records (the full one, as uname gives it).
fn short_hostname_full() -> String {
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    unsafe { libc::uname(&mut u) };
    unsafe { std::ffi::CStr::from_ptr(u.nodename.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}
