//! `touchstone fleet run` over real OpenSSH, on one machine: each "host"
//! is an sshd in its own network namespace, with its own host name (UTS
//! namespace) and machine id (bind-mounted in its own mount namespace),
//! joined by veth pairs to a bridge in a hub namespace on 10.200.0.0/24;
//! the fleet command itself runs in a controller namespace, so the
//! machine's own network is never touched. Figures from here are
//! functional only — namespaces on one machine say nothing about a
//! network's performance.
//!
//! Skipped, with the reason printed, when not root or when `ip netns` or
//! sshd are not available. Everything (namespaces with their veths and
//! bridge, sshd and every process in the namespaces, key files, remote
//! temporary directories) is removed by `Lab`'s Drop, also when a check
//! fails.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::common::{
    measurement_names, serve_address, spawn_kept, text, unavailable, wait_within, Sandbox,
};

const SSHD: &str = "/usr/sbin/sshd";

/// The hosts of every lab share this machine's /tmp (where the fleet
/// copies its binary, and what a lab cleans up): one lab at a time.
static ONE_LAB: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_lab() -> std::sync::MutexGuard<'static, ()> {
    ONE_LAB.lock().unwrap_or_else(|e| e.into_inner())
}
const SUBNET: &str = "10.200.0";

fn sh(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"))
}

pub(crate) fn must(program: &str, args: &[&str]) {
    let o = sh(program, args);
    assert!(
        o.status.success(),
        "{program} {}: {}",
        args.join(" "),
        text(&o)
    );
}

/// Why this machine cannot host the lab, if it cannot.
pub(crate) fn cannot_run() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root (network namespaces and sshd need it)".into());
    }
    if !Path::new(SSHD).exists() {
        return Some(format!("{SSHD} missing (apt-get install openssh-server)"));
    }
    static PROBES: AtomicU32 = AtomicU32::new(0);
    // One name per call: the tests of this file run at once.
    let probe = format!(
        "tsfprobe{}x{}",
        std::process::id(),
        PROBES.fetch_add(1, Ordering::SeqCst)
    );
    let o = sh("ip", &["netns", "add", &probe]);
    if !o.status.success() {
        return Some(format!("`ip netns add` refused: {}", text(&o).trim()));
    }
    let _ = sh("ip", &["netns", "del", &probe]);
    None
}

/// Several hosts on one machine, torn down on drop.
pub(crate) struct Lab {
    tag: String,
    dir: tempfile::TempDir,
    namespaces: Vec<String>,
    sshd: Vec<Option<Child>>,
    remote_dirs_before: BTreeSet<PathBuf>,
    /// Taken before the lab is built and, the last field, released after
    /// its Drop: one lab at a time.
    _one: std::sync::MutexGuard<'static, ()>,
}

pub(crate) fn remote_dirs() -> BTreeSet<PathBuf> {
    std::fs::read_dir("/tmp")
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("touchstone-fleet."))
                })
                .collect()
        })
        .unwrap_or_default()
}

impl Lab {
    pub(crate) fn ctl(&self) -> String {
        format!("{}ctl", self.tag)
    }
    fn hub(&self) -> String {
        format!("{}hub", self.tag)
    }
    pub(crate) fn ns(&self, i: usize) -> String {
        format!("{}h{i}", self.tag)
    }
    pub(crate) fn addr(i: usize) -> String {
        format!("{SUBNET}.{}", 10 + i)
    }
    fn ssh_config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// `hosts` hosts, numbered from 1, at 10.200.0.11, .12, …; None, said
    /// as unavailable, where labs cannot run here (`cannot_run`).
    pub(crate) fn start(hosts: usize) -> Option<Lab> {
        if let Some(why) = cannot_run() {
            unavailable(&why);
            return None;
        }
        Some(Lab::new(hosts))
    }

    fn new(hosts: usize) -> Lab {
        let one = one_lab();
        static N: AtomicU32 = AtomicU32::new(0);
        let tag = format!(
            "tsf{}x{}",
            std::process::id() % 100_000,
            N.fetch_add(1, Ordering::SeqCst)
        );
        let mut lab = Lab {
            tag,
            dir: tempfile::tempdir().unwrap(),
            namespaces: Vec::new(),
            sshd: Vec::new(),
            remote_dirs_before: remote_dirs(),
            _one: one,
        };
        let (hub, ctl) = (lab.hub(), lab.ctl());
        let all: Vec<String> = [hub.clone(), ctl.clone()]
            .into_iter()
            .chain((1..=hosts).map(|i| lab.ns(i)))
            .collect();
        for ns in all {
            must("ip", &["netns", "add", &ns]);
            lab.namespaces.push(ns.clone());
            must("ip", &["-n", &ns, "link", "set", "lo", "up"]);
        }
        must("ip", &["-n", &hub, "link", "add", "br0", "type", "bridge"]);
        must("ip", &["-n", &hub, "link", "set", "br0", "up"]);
        let mut members = vec![(ctl.clone(), format!("{SUBNET}.1"), "bctl".to_string())];
        for i in 1..=hosts {
            members.push((lab.ns(i), Lab::addr(i), format!("b{i}")));
        }
        for (ns, addr, port) in &members {
            // Made inside the namespaces: no interface ever appears in the machine's own.
            must(
                "ip",
                &[
                    "-n", &hub, "link", "add", port, "type", "veth", "peer", "name", "eth0",
                    "netns", ns,
                ],
            );
            must(
                "ip",
                &["-n", &hub, "link", "set", port, "master", "br0", "up"],
            );
            must(
                "ip",
                &[
                    "-n",
                    ns,
                    "addr",
                    "add",
                    &format!("{addr}/24"),
                    "dev",
                    "eth0",
                ],
            );
            must("ip", &["-n", ns, "link", "set", "eth0", "up"]);
        }
        lab.keys(hosts);
        std::fs::create_dir_all("/run/sshd").unwrap();
        for i in 1..=hosts {
            let child = lab.start_sshd(i);
            lab.sshd.push(Some(child));
        }
        for i in 1..=hosts {
            lab.wait_for_sshd(i);
        }
        lab
    }

    /// A client key, one host key, known_hosts and the ssh config.
    fn keys(&self, hosts: usize) {
        let d = self.dir.path();
        for name in ["id", "hostkey"] {
            must(
                "ssh-keygen",
                &[
                    "-q",
                    "-t",
                    "ed25519",
                    "-N",
                    "",
                    "-f",
                    d.join(name).to_str().unwrap(),
                ],
            );
        }
        let host_pub = std::fs::read_to_string(d.join("hostkey.pub")).unwrap();
        let names: Vec<String> = (1..=hosts).map(Lab::addr).collect();
        std::fs::write(
            d.join("known_hosts"),
            format!("{} {}", names.join(","), host_pub),
        )
        .unwrap();
        std::fs::copy(d.join("id.pub"), d.join("authorized_keys")).unwrap();
        std::fs::write(
            self.ssh_config(),
            format!(
                "Host *\n  User root\n  IdentityFile {id}\n  IdentitiesOnly yes\n  \
                 UserKnownHostsFile {kh}\n  GlobalKnownHostsFile /dev/null\n  \
                 StrictHostKeyChecking yes\n  LogLevel ERROR\n",
                id = d.join("id").display(),
                kh = d.join("known_hosts").display()
            ),
        )
        .unwrap();
    }

    fn start_sshd(&self, i: usize) -> Child {
        let d = self.dir.path().join(format!("h{i}"));
        std::fs::create_dir_all(&d).unwrap();
        let config = d.join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "ListenAddress {addr}:22\nHostKey {hk}\nPidFile {pid}\nAuthorizedKeysFile {ak}\n\
                 PermitRootLogin prohibit-password\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n\
                 Subsystem sftp /usr/lib/openssh/sftp-server\n\
                 ClientAliveInterval 1\nClientAliveCountMax 3\nMaxStartups 100\nLogLevel ERROR\n",
                addr = Lab::addr(i),
                hk = self.dir.path().join("hostkey").display(),
                pid = d.join("sshd.pid").display(),
                ak = self.dir.path().join("authorized_keys").display(),
            ),
        )
        .unwrap();
        let machine_id = d.join("machine-id");
        std::fs::write(
            &machine_id,
            format!("{:08x}{:024x}\n", 0xfeed_0000_u64 + i as u64, i),
        )
        .unwrap();
        let script = format!(
            "hostname node-{i} && mount --bind {mid} /etc/machine-id && exec {SSHD} -D -f {cfg} -E {log}",
            mid = machine_id.display(),
            cfg = config.display(),
            log = d.join("sshd.log").display()
        );
        Command::new("ip")
            .args([
                "netns",
                "exec",
                &self.ns(i),
                "unshare",
                "--uts",
                "--mount",
                "sh",
                "-c",
            ])
            .arg(script)
            .stdin(Stdio::null())
            .spawn()
            .unwrap()
    }

    /// ssh from the controller namespace, as the fleet does.
    fn ssh(&self, i: usize, command: &str) -> Output {
        sh(
            "ip",
            &[
                "netns",
                "exec",
                &self.ctl(),
                "ssh",
                "-F",
                self.ssh_config().to_str().unwrap(),
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=2",
                &Lab::addr(i),
                command,
            ],
        )
    }

    fn wait_for_sshd(&self, i: usize) {
        let t = Instant::now();
        loop {
            let o = self.ssh(i, "true");
            if o.status.success() {
                return;
            }
            assert!(
                t.elapsed() < Duration::from_secs(15),
                "sshd of host {i} does not answer: {}\n{}",
                text(&o),
                std::fs::read_to_string(self.dir.path().join(format!("h{i}/sshd.log")))
                    .unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn stop_sshd(&mut self, i: usize) {
        if let Some(mut c) = self.sshd[i - 1].take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub(crate) fn sshd_pid(&self, i: usize) -> Option<i32> {
        self.sshd[i - 1].as_ref().map(|c| c.id() as i32)
    }

    /// Processes in a namespace.
    pub(crate) fn pids(ns: &str) -> BTreeSet<i32> {
        String::from_utf8_lossy(&sh("ip", &["netns", "pids", ns]).stdout)
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()
    }

    /// Wait until host `i` runs nothing but its sshd (or nothing if it was
    /// stopped) and the controller runs nothing; the leftovers otherwise.
    pub(crate) fn wait_until_quiet(&self, i: usize, within: Duration) -> Result<(), String> {
        let t = Instant::now();
        loop {
            let want: BTreeSet<i32> = self.sshd_pid(i).into_iter().collect();
            let host = Lab::pids(&self.ns(i));
            let ctl = Lab::pids(&self.ctl());
            if host == want && ctl.is_empty() {
                return Ok(());
            }
            if t.elapsed() > within {
                let show = |p: &BTreeSet<i32>| {
                    p.iter()
                        .map(|p| {
                            let cmd = std::fs::read(format!("/proc/{p}/cmdline"))
                                .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                                .unwrap_or_default();
                            format!("{p} {cmd}")
                        })
                        .collect::<Vec<_>>()
                        .join("; ")
                };
                return Err(format!(
                    "left on host {i}: {} (its sshd: {want:?}); on the controller: {}",
                    show(&host),
                    show(&ctl)
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Wait (a minute at most) until host `i` runs the copied touchstone's
    /// `run`; false if it never did or `fleet` ended first.
    pub(crate) fn wait_for_remote_run(&self, i: usize, fleet: &mut Child) -> bool {
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(60) && fleet.try_wait().unwrap().is_none() {
            let running = Lab::pids(&self.ns(i)).into_iter().any(|p| {
                std::fs::read(format!("/proc/{p}/cmdline"))
                    .map(|c| {
                        let c = String::from_utf8_lossy(&c);
                        c.contains("touchstone-fleet.") && c.contains("\0run\0")
                    })
                    .unwrap_or(false)
            });
            if running {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    /// A fleet run on host 1 long enough to be stopped or cut in the middle
    /// (full lat_syscall, 101 repetitions: tens of seconds, even on a quiet
    /// machine), once its run is under way there.
    pub(crate) fn long_fleet_run(&self, s: &Sandbox) -> Child {
        let mut child = spawn_kept(&mut self.fleet(
            s,
            &[
                "--hosts",
                &Lab::addr(1),
                "--timeout",
                "300s",
                "lat_syscall",
                "-r",
                "101",
            ],
        ));
        assert!(
            self.wait_for_remote_run(1, &mut child),
            "the remote run never started"
        );
        child
    }

    /// The directories copied to the hosts since the lab began.
    pub(crate) fn copies_left(&self) -> Vec<PathBuf> {
        remote_dirs()
            .difference(&self.remote_dirs_before)
            .cloned()
            .collect()
    }

    /// `touchstone fleet run ARGS` from the controller namespace.
    pub(crate) fn fleet(&self, s: &Sandbox, args: &[&str]) -> Command {
        let c = s.cmd();
        let program = c.get_program().to_owned();
        let mut ip = Command::new("ip");
        ip.args(["netns", "exec", &self.ctl()]).arg(program);
        ip.args(["fleet", "run", "--ssh-config"])
            .arg(self.ssh_config())
            .args(["--connect-timeout", "2s"])
            .args(args);
        for (k, v) in c.get_envs() {
            match v {
                Some(v) => ip.env(k, v),
                None => ip.env_remove(k),
            };
        }
        ip.stdin(Stdio::null());
        ip
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for i in 1..=self.sshd.len() {
            self.stop_sshd(i);
        }
        for ns in &self.namespaces {
            for p in Lab::pids(ns) {
                // SAFETY: killing processes inside our own test namespaces.
                unsafe { libc::kill(p, libc::SIGKILL) };
            }
        }
        // Pid files too, should an sshd have re-executed under another pid.
        for i in 1..=self.sshd.len() {
            let pid_file = self.dir.path().join(format!("h{i}/sshd.pid"));
            if let Some(p) = std::fs::read_to_string(pid_file)
                .ok()
                .and_then(|s| s.trim().parse::<i32>().ok())
            {
                unsafe { libc::kill(p, libc::SIGKILL) };
            }
        }
        std::thread::sleep(Duration::from_millis(100));
        for ns in &self.namespaces {
            let _ = sh("ip", &["netns", "del", ns]);
        }
        for d in self.copies_left() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

pub(crate) fn runs(s: &Sandbox) -> Vec<serde_json::Value> {
    let o = s.run(&["export"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["runs"].as_array().unwrap().clone()
}

#[test]
fn a_quick_suite_on_three_hosts_a_network_pair_and_a_host_that_is_down() {
    let Some(mut lab) = Lab::start(4) else {
        return;
    };
    // Host 4's sshd is stopped: it must be an error of its own, nothing more.
    lab.stop_sshd(4);
    let s = Sandbox::new();
    let hosts = (1..=4).map(Lab::addr).collect::<Vec<_>>().join(",");
    let pair = format!("{}:{}", Lab::addr(1), Lab::addr(2));
    let t = Instant::now();
    let o = lab
        .fleet(
            &s,
            &[
                "--hosts",
                &hosts,
                "--concurrent",
                "2",
                "--timeout",
                "240s",
                "--pairs",
                &pair,
                "--net",
                "lat_tcp,lat_udp,bw_tcp,lat_connect,tcp_rr/load:1",
                "lat_syscall/null",
                "--quick",
            ],
        )
        .output()
        .unwrap();
    let out = text(&o);
    eprintln!("{out}\n(network figures from namespaces on one machine: functional only)");
    assert_eq!(o.status.code(), Some(1), "{out}");
    let down = Lab::addr(4);
    assert!(
        out.contains(&format!("[{down}] error")) && out.contains("unreachable"),
        "{out}"
    );
    assert!(out.contains("fleet: 4 of 5 ok"), "{out}");
    assert!(t.elapsed() < Duration::from_secs(200), "{:?}", t.elapsed());

    let runs = runs(&s);
    assert_eq!(runs.len(), 4, "three suites and one pair");
    let mut identities = BTreeSet::new();
    let mut pair_runs = 0;
    for r in &runs {
        let host = &r["host"];
        let name = host["hostname"].as_str().unwrap().to_string();
        let id = host["machine_id"].as_str().unwrap_or("").to_string();
        assert_eq!(id.len(), 32, "{host}");
        let names = measurement_names(r);
        if names.iter().any(|n| n.contains("/remote:")) {
            pair_runs += 1;
            assert_eq!(name, "node-2", "the client of the pair ran it");
            let want = format!("{}:7717", Lab::addr(1));
            for family in ["lat_tcp", "lat_udp", "bw_tcp", "lat_connect"] {
                assert!(
                    names
                        .iter()
                        .any(|n| n.starts_with(family) && n.ends_with(&format!("/remote:{want}"))),
                    "{family} against {want} missing: {names:?}"
                );
            }
            // tcp_rr is a workload: its load curve records the server.
            let curves = r["curves"].as_array().cloned().unwrap_or_default();
            assert!(
                curves
                    .iter()
                    .any(|c| c["workload"] == "tcp_rr" && c["params"]["remote"] == want.as_str()),
                "tcp_rr against {want} missing: {curves:?}"
            );
            // CPU at both ends, the server's from serve itself: present,
            // not negative, and above zero where serve sent the data.
            for m in r["measurements"].as_array().unwrap() {
                let name = m["name"].as_str().unwrap();
                let ends: &[&str] = if name.starts_with("bw_tcp") {
                    &[
                        "cpu_s_per_mb_receiver",
                        "cpu_s_per_mb_sender",
                        "cpu_pct_sender",
                    ]
                } else {
                    &[
                        "cpu_us_per_op_client",
                        "cpu_us_per_op_server",
                        "cpu_pct_server",
                    ]
                };
                for k in ends {
                    let v = m["extra"][k].as_f64();
                    assert!(v.is_some_and(|v| v >= 0.0), "{name}: {k} = {v:?}");
                }
                if name.starts_with("bw_tcp") {
                    let v = m["extra"]["cpu_s_per_mb_sender"].as_f64().unwrap();
                    assert!(v > 0.0, "{name}: serve's CPU per MB {v}");
                    eprintln!(
                        "{name}: {} MB/s, CPU client {:.0} % server {:.0} % (functional only)",
                        m["summary"]["median"],
                        m["extra"]["cpu_pct_receiver"].as_f64().unwrap(),
                        m["extra"]["cpu_pct_sender"].as_f64().unwrap()
                    );
                }
            }
            let rr = curves.iter().find(|c| c["workload"] == "tcp_rr").unwrap();
            let served = rr["points"][0]["service_demand"]["server_ns_per_op"].as_f64();
            assert!(
                served.is_some_and(|ns| ns > 0.0),
                "tcp_rr: serve's CPU {served:?}"
            );
            // Who served the pair, as serve announced it.
            let by = host["extra"][format!("remote:{want}")]
                .as_str()
                .unwrap_or("");
            assert!(by.starts_with("node-1#"), "{host}");
        } else {
            identities.insert((name, id));
        }
    }
    assert_eq!(pair_runs, 1);
    // The report: the side by side keeps each host's own run (the pair run
    // of node-2 is newer, but it is the pair's), and the matrix of the
    // network puts the pair at node-2's row and node-1's column.
    let o = s.run(&["fleet", "report"]);
    let report = text(&o);
    assert!(o.status.success(), "{report}");
    eprintln!("{report}");
    assert!(report.contains("Fleet: 3 host(s)"), "{report}");
    assert!(report.contains("Network between hosts"), "{report}");
    let lines: Vec<&str> = report.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("lat_tcp/"))
        .unwrap_or_else(|| panic!("no lat_tcp matrix: {report}"));
    assert!(
        lines[at + 1].contains("client \\ server") && lines[at + 1].contains("node-1 ("),
        "{report}"
    );
    assert!(
        lines[at + 2].trim_start().starts_with("node-2 (") && lines[at + 2].contains(" µs"),
        "{report}"
    );
    let names: Vec<&str> = identities.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["node-1", "node-2", "node-3"],
        "three distinct hosts"
    );
    assert_eq!(
        identities
            .iter()
            .map(|(_, id)| id)
            .collect::<BTreeSet<_>>()
            .len(),
        3
    );
    for i in 1..=4 {
        lab.wait_until_quiet(i, Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let left = lab.copies_left();
    assert!(left.is_empty(), "copied binaries left behind: {left:?}");
}

#[test]
fn a_link_that_goes_down_mid_run_is_an_error_of_its_host_and_leaves_nothing_running() {
    let Some(lab) = Lab::start(1) else {
        return;
    };
    let s = Sandbox::new();
    // Cut its link once the run is under way on the host; the cut ends it
    // sooner than its tens of seconds.
    let mut child = lab.long_fleet_run(&s);
    must("ip", &["-n", &lab.hub(), "link", "set", "b1", "down"]);
    let cut = Instant::now();
    let status = wait_within(
        &mut child,
        Duration::from_secs(60),
        "the fleet hangs on a dead link",
    );
    let o = child.wait_with_output().unwrap();
    let out = text(&o);
    eprintln!("{out}");
    assert_eq!(status.code(), Some(1), "{out}");
    let host = Lab::addr(1);
    assert!(out.contains(&format!("[{host}] error")), "{out}");
    assert!(
        out.contains("unreachable: ") || out.contains("timed out: "),
        "{out}"
    );
    assert!(
        !out.contains("unreachable: measuring"),
        "ssh's message, not the run's: {out}"
    );
    assert!(
        cut.elapsed() < Duration::from_secs(30),
        "noticed after {:?}",
        cut.elapsed()
    );
    // sshd gives the session up (ClientAlive), the run sees its session end.
    lab.wait_until_quiet(1, Duration::from_secs(30))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(runs(&s).is_empty());
}

#[test]
fn an_unknown_host_is_an_error_of_that_host() {
    let s = Sandbox::new();
    let o = s.run_line(
        "fleet run --hosts no-such-host.invalid --connect-timeout 2s lat_syscall/null --quick",
    );
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("[no-such-host.invalid] error") && out.contains("unknown host"),
        "{out}"
    );
    assert!(out.contains("fleet: 0 of 1 ok"), "{out}");
}

#[test]
fn a_malformed_host_file_names_its_line_and_nothing_runs() {
    let s = Sandbox::new();
    let file = s.file("farm.txt", "# rack 4\nnode-1\nnode-2 node-3\n");
    let o = s.run(&[
        "fleet",
        "run",
        "--hosts",
        &format!("@{}", file.display()),
        "--quick",
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains(&format!("{}:3: ", file.display())), "{out}");
    assert!(!out.contains("connecting"), "{out}");
    // A bad benchmark name is found here, not on every host.
    let o = s.run(&["fleet", "run", "--hosts", "node-1", "lat_sycsall"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn serve_refuses_a_port_in_use_listens_only_where_told_and_stops_when_its_client_is_gone() {
    let s = Sandbox::new();
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let o = s.run(&["serve", "--listen", &format!("127.0.0.1:{port}")]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("in use"), "{out}");
    drop(busy);

    let mut serve = s.spawn_fed(["serve", "--listen", "127.0.0.1:0"]);
    let bound = serve_address(&mut serve);
    let port = bound.rsplit_once(':').unwrap().1;
    // Served on the address given…
    assert!(std::net::TcpStream::connect(&bound).is_ok());
    // …and on no other (127.0.0.2 is loopback too, but not what it was given).
    assert!(std::net::TcpStream::connect(format!("127.0.0.2:{port}")).is_err());
    let o = s.run(&[
        "run",
        &format!("lat_tcp/remote:{bound}"),
        "--quick",
        "--no-store",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    drop(serve.stdin.take());
    let status = wait_within(
        &mut serve,
        Duration::from_secs(10),
        "serve outlived its client",
    );
    assert!(status.success());
}
