//! The real `ssh` and `scp`: batch mode (never a password prompt), a
//! connect timeout, keep-alives so a link that dies is noticed, and one
//! shared connection per host (ControlMaster) whose sockets live in a
//! private temporary directory (mode 0700, named after this process so
//! that one left by a touchstone killed outright is swept by the next)
//! that goes with the fleet run. Every command runs with a deadline and in
//! its own process group, killed whole when the deadline passes or when
//! the run is stopped (Ctrl-C, SIGTERM: `stop_on`): no ssh outlives the
//! run. Only the clean-up commands, bounded by their own short deadline,
//! run to their end after a stop.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::hosts::Host;

/// How ssh is invoked for every host.
pub struct Ssh {
    /// An ssh_config file (`-F`), else ssh's own (~/.ssh/config).
    pub config: Option<PathBuf>,
    /// Extra `-o` options, as given.
    pub options: Vec<String>,
    pub connect_timeout: Duration,
    /// Where the connection-sharing sockets live (private, 0700).
    control_dir: tempfile::TempDir,
    /// Set when the run is to stop: the commands under way are killed.
    stop: Arc<AtomicBool>,
}

/// What went wrong on one host, in the words an operator acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostError {
    /// The name does not resolve.
    UnknownHost(String),
    /// No answer, refused, or the link went away.
    Unreachable(String),
    /// The host answered but would not let us in (key, user, host key).
    Authentication(String),
    /// Our binary cannot run there.
    Architecture(String),
    /// Copying the binary failed.
    Copy(String),
    /// touchstone ran and failed, or its output was no results document.
    RunFailed(String),
    /// The host took longer than the time allowed.
    Timeout(String),
    /// The fleet run was stopped (Ctrl-C, SIGTERM) before the host was done.
    Interrupted,
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kind, m) = match self {
            HostError::UnknownHost(m) => ("unknown host", m),
            HostError::Unreachable(m) => ("unreachable", m),
            HostError::Authentication(m) => ("authentication failed", m),
            HostError::Architecture(m) => ("different architecture", m),
            HostError::Copy(m) => ("copying the binary failed", m),
            HostError::RunFailed(m) => ("run failed", m),
            HostError::Timeout(m) => ("timed out", m),
            HostError::Interrupted => return write!(f, "interrupted"),
        };
        write!(f, "{kind}: {m}")
    }
}

/// What a finished command said.
pub struct Output {
    pub status: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

/// The most of a remote command's output kept: a results document of a
/// full run is a few MB; more is a runaway.
const MAX_OUTPUT: u64 = 256 << 20;

impl Ssh {
    pub fn new(
        config: Option<PathBuf>,
        options: Vec<String>,
        connect_timeout: Duration,
    ) -> std::io::Result<Ssh> {
        // Socket paths must fit sun_path (108 bytes): a short dir under /tmp.
        let tmp = Path::new(CONTROL_PARENT);
        sweep_stale_control_dirs(tmp);
        let control_dir = tempfile::Builder::new()
            .prefix(&format!("{CONTROL_PREFIX}{}.", std::process::id()))
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(tmp)?;
        Ok(Ssh {
            config,
            options,
            connect_timeout,
            control_dir,
            stop: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Stop every command under way, and start no more, once `flag` is set
    /// (the CLI's interrupt flag).
    pub fn stop_on(mut self, flag: Arc<AtomicBool>) -> Ssh {
        self.stop = flag;
        self
    }

    /// Whether the run is to stop.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The private directory of the shared connections' sockets.
    pub fn control_dir(&self) -> &Path {
        self.control_dir.path()
    }

    /// The options every ssh and scp gets.
    fn common(&self) -> Vec<String> {
        let secs = self.connect_timeout.as_secs().max(1);
        let mut a = Vec::new();
        if let Some(c) = &self.config {
            a.push("-F".into());
            a.push(c.display().to_string());
        }
        for o in [
            "BatchMode=yes".to_string(),
            format!("ConnectTimeout={secs}"),
            // A dead link ends the session within about 3 × the connect timeout.
            format!("ServerAliveInterval={secs}"),
            "ServerAliveCountMax=2".into(),
            "ControlMaster=auto".into(),
            format!("ControlPath={}/%C", self.control_dir.path().display()),
            // The master lingers briefly between our commands, never longer.
            "ControlPersist=30".into(),
        ] {
            a.push("-o".into());
            a.push(o);
        }
        for o in &self.options {
            a.push("-o".into());
            a.push(o.clone());
        }
        a
    }

    /// `ssh HOST -- COMMAND` (COMMAND one string for the remote shell).
    pub fn command(&self, host: &Host, remote: &str) -> Command {
        let mut c = Command::new("ssh");
        c.args(self.common()).arg("-T").arg(&host.destination);
        c.arg("--").arg(remote);
        c
    }

    /// `scp LOCAL HOST:REMOTE`.
    pub fn copy(&self, host: &Host, local: &Path, remote: &str) -> Command {
        let mut c = Command::new("scp");
        c.arg("-q").args(self.common()).arg("--").arg(local);
        c.arg(scp_target(&host.destination, remote));
        c
    }

    /// Run `cmd` (stdin closed) to its end, until `deadline` or until the
    /// run is stopped.
    pub fn run(&self, mut cmd: Command, deadline: Instant) -> Result<Output, HostError> {
        if self.stopped() {
            return Err(HostError::Interrupted);
        }
        cmd.stdin(Stdio::null());
        let child = spawn(cmd)?;
        wait_or_stop(child, deadline, Some(&self.stop))
    }

    /// Run a clean-up command to its end or until `deadline`, stopped or not.
    pub fn run_to_end(&self, mut cmd: Command, deadline: Instant) -> Result<Output, HostError> {
        cmd.stdin(Stdio::null());
        let child = spawn(cmd)?;
        wait(child, deadline)
    }

    /// Run `cmd` with its stdin a pipe held open until it ends (the remote
    /// side sees end of file only when we are gone).
    pub fn run_holding_stdin(
        &self,
        mut cmd: Command,
        deadline: Instant,
    ) -> Result<Output, HostError> {
        if self.stopped() {
            return Err(HostError::Interrupted);
        }
        cmd.stdin(Stdio::piped());
        let child = spawn(cmd)?;
        wait_or_stop(child, deadline, Some(&self.stop))
    }

    /// Close the shared connection to `host` (if one is open).
    pub fn close(&self, host: &Host) {
        let mut c = Command::new("ssh");
        c.args(self.common())
            .args(["-O", "exit"])
            .arg(&host.destination);
        let _ = self.run_to_end(c, Instant::now() + Duration::from_secs(5));
    }
}

/// Where the sockets' private directories are made, and their names:
/// `tsf.<pid>.<random>`.
const CONTROL_PARENT: &str = "/tmp";
const CONTROL_PREFIX: &str = "tsf.";

/// Remove the sockets' directories of fleet runs that no longer exist
/// (killed outright: SIGKILL gives no chance to clean up), only this
/// user's and only names this module makes.
fn sweep_stale_control_dirs(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(CONTROL_PREFIX))
            .and_then(|rest| rest.split_once('.'))
            .and_then(|(pid, _)| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let ours = std::fs::symlink_metadata(e.path())
            .map(|m| m.is_dir() && m.uid() == uid)
            .unwrap_or(false);
        // SAFETY: kill with signal 0 only asks whether the process exists.
        let gone = pid > 0
            && unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if ours && gone {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// scp's target for a destination: `ssh://u@h:p` becomes `scp://u@h:p/PATH`.
fn scp_target(destination: &str, remote: &str) -> String {
    match destination.strip_prefix("ssh://") {
        Some(rest) => format!("scp://{rest}/{remote}"),
        None => format!("{destination}:{remote}"),
    }
}

/// Spawn in a new process group (so the whole of it can be killed) with
/// stdout and stderr captured.
pub fn spawn(mut cmd: Command) -> Result<Child, HostError> {
    use std::os::unix::process::CommandExt;
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.process_group(0);
    cmd.spawn()
        .map_err(|e| HostError::RunFailed(format!("cannot start ssh: {e}")))
}

/// Collect a child's output until it exits or `deadline` passes (then its
/// process group is killed and the result is a timeout).
pub fn wait(child: Child, deadline: Instant) -> Result<Output, HostError> {
    wait_or_stop(child, deadline, None)
}

/// `wait`, also killing the child's group when `stop` is set (the result
/// is then `Interrupted`).
pub fn wait_or_stop(
    mut child: Child,
    deadline: Instant,
    stop: Option<&AtomicBool>,
) -> Result<Output, HostError> {
    let out = child.stdout.take();
    let err = child.stderr.take();
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(out) = out {
            let _ = out.take(MAX_OUTPUT).read_to_end(&mut v);
        }
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(err) = err {
            let _ = err.take(1 << 20).read_to_end(&mut v);
        }
        String::from_utf8_lossy(&v).into_owned()
    });
    let mut stopped = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if stop.is_some_and(|s| s.load(Ordering::Relaxed)) => {
                kill_group(&mut child);
                stopped = true;
                break None;
            }
            Ok(None) if Instant::now() >= deadline => {
                kill_group(&mut child);
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => {
                kill_group(&mut child);
                break None;
            }
        }
    };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    if stopped {
        return Err(HostError::Interrupted);
    }
    match status {
        None => Err(HostError::Timeout(last_line(&stderr).unwrap_or_else(
            || "no answer before the deadline (--timeout)".into(),
        ))),
        Some(s) => Ok(Output {
            status: s.code(),
            stdout,
            stderr,
        }),
    }
}

/// SIGKILL the child's process group and reap the child.
pub fn kill_group(child: &mut Child) {
    // SAFETY: signalling the group we created for this child.
    unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
    let _ = child.wait();
}

fn last_line(s: &str) -> Option<String> {
    s.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(String::from)
}

/// What ssh's exit status 255 and its message mean. Any other status is
/// the remote command's own and is None here.
pub fn classify(out: &Output) -> Option<HostError> {
    if out.status != Some(255) {
        return None;
    }
    // ssh's own message, not the remote command's last words before it.
    let msg = out
        .stderr
        .lines()
        .map(str::trim)
        .rfind(|l| {
            let l = l.to_ascii_lowercase();
            l.starts_with("ssh:")
                || [
                    "timeout",
                    "connection",
                    "permission denied",
                    "host key",
                    "resolve",
                ]
                .iter()
                .any(|w| l.contains(w))
        })
        .map(String::from)
        // A shared connection's client that loses its master says nothing.
        .unwrap_or_else(|| "the connection was lost (ssh exited with status 255)".into());
    let lower = out.stderr.to_ascii_lowercase();
    Some(
        if lower.contains("could not resolve hostname")
            || lower.contains("name or service not known")
        {
            HostError::UnknownHost(msg)
        } else if lower.contains("permission denied")
            || lower.contains("host key verification failed")
            || lower.contains("no matching host key")
            || lower.contains("too many authentication failures")
        {
            HostError::Authentication(msg)
        } else {
            HostError::Unreachable(msg)
        },
    )
}

/// Quote one word for the remote POSIX shell.
pub fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,@%+".contains(&b))
    {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(status: i32, stderr: &str) -> Output {
        Output {
            status: Some(status),
            stdout: Vec::new(),
            stderr: stderr.into(),
        }
    }

    /// The sockets' directory was 0755 (tempfile's default, not the 0700
    /// said here); one left by a fleet run killed outright stayed forever.
    #[test]
    fn the_sockets_directory_is_private_and_a_dead_runs_is_swept() {
        // SAFETY: the child only exits; reaped at once, its pid is free.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            unsafe { libc::_exit(0) };
        }
        unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
        let stale = Path::new(CONTROL_PARENT).join(format!("{CONTROL_PREFIX}{pid}.aBcDeF"));
        std::fs::create_dir(&stale).unwrap();
        let live = Path::new(CONTROL_PARENT)
            .join(format!("{CONTROL_PREFIX}{}.gHiJkL", std::process::id()));
        std::fs::create_dir(&live).unwrap();
        let ssh = Ssh::new(None, Vec::new(), Duration::from_secs(4)).unwrap();
        let swept = !stale.exists();
        let kept = live.exists();
        let _ = std::fs::remove_dir(&stale);
        let _ = std::fs::remove_dir(&live);
        assert!(swept, "{} was not swept", stale.display());
        assert!(kept, "a live run's directory was swept");
        let dir = ssh.control_dir().to_path_buf();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{}", dir.display());
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with(&format!("tsf.{}.", std::process::id())),
            "{name}"
        );
        drop(ssh);
        assert!(!dir.exists());
    }

    #[test]
    fn ssh_failures_are_told_apart() {
        let e = classify(&out(
            255,
            "ssh: Could not resolve hostname nope: Name or service not known\n",
        ));
        assert!(matches!(e, Some(HostError::UnknownHost(_))), "{e:?}");
        let e = classify(&out(255, "root@10.0.0.1: Permission denied (publickey).\n"));
        assert!(matches!(e, Some(HostError::Authentication(_))), "{e:?}");
        let e = classify(&out(
            255,
            "ssh: connect to host 10.0.0.1 port 22: Connection refused\n",
        ));
        assert!(matches!(e, Some(HostError::Unreachable(_))), "{e:?}");
        assert!(classify(&out(2, "touchstone: bad input")).is_none());
    }

    #[test]
    fn words_are_quoted_for_the_remote_shell() {
        assert_eq!(
            quote("lat_tcp/remote:10.0.0.1:7717"),
            "lat_tcp/remote:10.0.0.1:7717"
        );
        assert_eq!(quote("node 7's run"), r"'node 7'\''s run'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$(reboot)"), "'$(reboot)'");
    }

    #[test]
    fn options_batch_mode_timeouts_and_sharing() {
        let ssh = Ssh::new(None, vec!["Port=2222".into()], Duration::from_secs(4)).unwrap();
        let args = ssh.common().join(" ");
        for want in [
            "BatchMode=yes",
            "ConnectTimeout=4",
            "ControlMaster=auto",
            "ServerAliveInterval=4",
            "Port=2222",
        ] {
            assert!(args.contains(want), "{want} missing from {args}");
        }
        assert!(args.contains(&format!("ControlPath={}", ssh.control_dir.path().display())));
        assert_eq!(scp_target("n1", "/tmp/x"), "n1:/tmp/x");
        assert_eq!(
            scp_target("ssh://u@n1:22", "/tmp/x"),
            "scp://u@n1:22//tmp/x"
        );
    }
}
