//! One host's part of a fleet run, step by step over ssh: connect and
//! check the architecture (`uname -m`) before copying anything, copy the
//! binary into a private directory there (or use a path already there),
//! run `touchstone run … --json --no-store` under a time limit that also
//! binds the remote process (coreutils `timeout`), read the document back
//! (checked as `import` checks it), and remove what was copied.
//! `touchstone serve` for network pairs is started and stopped here too.
//!
//! What was copied is removed even when this process cannot do it: a
//! remote shell started beside the copy (`Keeper`) waits for its standard
//! input — our pipe — to end and then removes the directory, so a fleet
//! run stopped, crashed or killed outright (SIGKILL: its ssh clients live
//! on and see the pipe close) leaves no binary on the host.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use touchstone_results::json::{self, Document};

use crate::hosts::Host;
use crate::ssh::{self, quote, HostError, Ssh};

/// Where the binary comes from.
#[derive(Debug, Clone)]
pub enum Binary {
    /// Copy this local file to each host.
    Copy(PathBuf),
    /// Already on every host at this path.
    Remote(String),
}

/// A host that is ready to run touchstone.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub host: Host,
    /// The binary's path on the host.
    pub binary: String,
    /// The directory we made there (removed by `finish`).
    pub dir: Option<String>,
    /// The remote shell that removes `dir` when released or when we are gone.
    keeper: Option<Arc<Keeper>>,
}

/// A remote `sh` that removes a directory once its standard input ends:
/// when `release`d, or when this process dies however it dies.
pub struct Keeper {
    session: Mutex<Option<(Child, ChildStdin)>>,
}

impl std::fmt::Debug for Keeper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keeper")
    }
}

impl Keeper {
    /// Start it on `host` for `dir`; None if it could not be started (then
    /// `finish` removes the directory the ordinary way).
    fn start(ssh: &Ssh, host: &Host, dir: &str) -> Option<Keeper> {
        let script = format!("cat >/dev/null; rm -rf -- {}", quote(dir));
        let mut c = ssh.command(host, &format!("sh -c {}", quote(&script)));
        c.stdin(Stdio::piped());
        let mut child = ssh::spawn(c).ok()?;
        let stdin = child.stdin.take()?;
        Some(Keeper {
            session: Mutex::new(Some((child, stdin))),
        })
    }

    /// Close its input and wait (until `deadline`) for the directory to go;
    /// whether it went.
    fn release(&self, deadline: Instant) -> bool {
        let session = self.session.lock().ok().and_then(|mut s| s.take());
        let Some((child, stdin)) = session else {
            return false;
        };
        drop(stdin);
        matches!(ssh::wait(child, deadline), Ok(o) if o.status == Some(0))
    }
}

/// The local machine's architecture as `uname -m` spells it.
fn local_arch() -> &'static str {
    std::env::consts::ARCH
}

/// `uname -m` spellings of one architecture, as Rust names it.
fn same_arch(uname_m: &str, rust_arch: &str) -> bool {
    let canonical = match uname_m {
        "arm64" | "aarch64" => "aarch64",
        "i386" | "i486" | "i586" | "i686" => "x86",
        "amd64" | "x86_64" => "x86_64",
        "ppc64le" | "powerpc64le" => "powerpc64",
        other => other,
    };
    canonical == rust_arch
}

/// Fail with the ssh error, or the remote command's own failure.
fn check(out: ssh::Output, what: &str) -> Result<ssh::Output, HostError> {
    if let Some(e) = ssh::classify(&out) {
        return Err(e);
    }
    if out.status != Some(0) {
        let (status, msg) = failure(&out, |_| false);
        return Err(HostError::RunFailed(format!(
            "{what} exited with status {status}: {msg}"
        )));
    }
    Ok(out)
}

/// A failed remote command's exit status, and the last line of its standard
/// error that `telling` picks (else the last that is not empty).
fn failure(out: &ssh::Output, telling: impl Fn(&str) -> bool) -> (String, &str) {
    let line = out
        .stderr
        .lines()
        .rfind(|l| telling(l))
        .or_else(|| out.stderr.lines().rfind(|l| !l.trim().is_empty()))
        .unwrap_or("no message")
        .trim();
    (out.status.map_or("?".into(), |s| s.to_string()), line)
}

/// Connect, check the architecture, and put the binary in place.
pub fn prepare(
    ssh: &Ssh,
    host: &Host,
    binary: &Binary,
    deadline: Instant,
) -> Result<Prepared, HostError> {
    let out = check(
        ssh.run(ssh.command(host, "uname -m"), deadline)?,
        "uname -m",
    )?;
    let arch = String::from_utf8_lossy(&out.stdout).trim().to_string();
    match binary {
        Binary::Remote(path) => Ok(Prepared {
            host: host.clone(),
            binary: path.clone(),
            dir: None,
            keeper: None,
        }),
        Binary::Copy(local) => {
            if !same_arch(&arch, local_arch()) {
                return Err(HostError::Architecture(format!(
                    "the host is {arch}, this binary is {}: give --remote-binary with a {arch} build there",
                    local_arch()
                )));
            }
            let out = check(
                ssh.run(
                    ssh.command(host, "mktemp -d /tmp/touchstone-fleet.XXXXXX"),
                    deadline,
                )?,
                "mktemp",
            )?;
            let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if !dir.starts_with("/tmp/touchstone-fleet.") || dir.contains('\'') {
                return Err(HostError::RunFailed(format!(
                    "mktemp on the host said '{dir}'"
                )));
            }
            let prepared = Prepared {
                host: host.clone(),
                binary: format!("{dir}/touchstone"),
                keeper: Keeper::start(ssh, host, &dir).map(Arc::new),
                dir: Some(dir),
            };
            let copied = ssh.run(ssh.copy(host, local, &prepared.binary), deadline);
            match copied.and_then(|o| check(o, "scp")) {
                Ok(_) => Ok(prepared),
                Err(e) => {
                    finish(ssh, &prepared);
                    Err(match e {
                        HostError::RunFailed(m) => HostError::Copy(m),
                        e => e,
                    })
                }
            }
        }
    }
}

/// `timeout` ends the remote command at the deadline even when the link
/// to it is gone (SIGTERM, then SIGKILL 5 s later), so nothing we start
/// outlives the run on the host.
fn bounded(deadline: Instant, command: &str) -> String {
    let secs = deadline
        .saturating_duration_since(Instant::now())
        .as_secs()
        .max(1);
    format!("exec timeout -k 5 {secs} {command}")
}

/// `command` in a remote shell that ends it (SIGTERM) when our ssh
/// session is gone: its standard input, which we hold open for as long as
/// we wait, reaches end of file. A link that dies mid-run thus leaves
/// nothing running on the host once sshd gives the session up. (A
/// background job's own stdin is /dev/null in sh, hence fd 3.)
fn ended_with_session(command: &str) -> String {
    let script = format!(
        "exec 3<&0; {command} </dev/null 3<&- & p=$!; \
         {{ cat >/dev/null <&3; kill $p 2>/dev/null; }} >/dev/null 2>&1 & \
         exec 3<&-; wait $p"
    );
    format!("sh -c {}", quote(&script))
}

/// Run `touchstone run ARGS --json --no-store` there and read the document.
pub fn run_suite(
    ssh: &Ssh,
    p: &Prepared,
    run_args: &[String],
    deadline: Instant,
) -> Result<Document, HostError> {
    let mut words = vec![quote(&p.binary), "run".into()];
    words.extend(run_args.iter().map(|a| quote(a)));
    words.extend(["--json".into(), "--no-store".into()]);
    let remote = bounded(deadline, &ended_with_session(&words.join(" ")));
    // The local deadline is a little later than the remote one, so that a
    // run the remote `timeout` ends is reported with its message.
    let out = ssh.run_holding_stdin(
        ssh.command(&p.host, &remote),
        deadline + Duration::from_secs(8),
    )?;
    if out.status == Some(124) || out.status == Some(137) {
        return Err(HostError::Timeout(
            "the run did not finish before the deadline (--timeout)".into(),
        ));
    }
    if let Some(e) = ssh::classify(&out) {
        return Err(e);
    }
    // touchstone exits 1 when some measurements failed: the others are in
    // the document and worth importing.
    if out.status != Some(0) && (out.status != Some(1) || out.stdout.is_empty()) {
        let (status, msg) = failure(&out, |l| l.contains("touchstone") || l.contains("error"));
        return Err(HostError::RunFailed(format!("exit status {status}: {msg}")));
    }
    json::read(&out.stdout[..])
        .map_err(|e| HostError::RunFailed(format!("its output is no results document: {e}")))
}

/// Remove what `prepare` copied (also after a stop): its keeper, else an
/// `rm` of its own. Best effort: a host gone is gone.
pub fn finish(ssh: &Ssh, p: &Prepared) {
    let Some(dir) = &p.dir else {
        return;
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    if p.keeper.as_ref().is_some_and(|k| k.release(deadline)) {
        return;
    }
    let cmd = format!("rm -rf -- {}", quote(dir));
    let _ = ssh.run_to_end(ssh.command(&p.host, &cmd), deadline);
}

/// `touchstone serve` running on a host over ssh; it stops when this is
/// dropped (its standard input, our pipe, closes; it also stops after its
/// own idle timeout should the link die).
pub struct Server {
    child: Option<std::process::Child>,
    stdin: Option<std::process::ChildStdin>,
    /// The serving host's identity (`Host::identity`) as serve announced it.
    pub identity: Option<String>,
}

/// The identity at the end of serve's line "listening on ADDR (TCP and
/// UDP) as IDENTITY".
fn announced_identity(line: &str) -> Option<String> {
    line.trim_end()
        .rsplit_once(" as ")
        .map(|(_, id)| id.to_string())
        .filter(|id| !id.is_empty() && !id.contains(char::is_whitespace))
}

/// How long a served host waits without a client before it stops by itself.
const SERVE_IDLE: &str = "60s";

impl Server {
    /// Start serve on `p` listening on `addr` and wait for its "listening" line.
    pub fn start(
        ssh: &Ssh,
        p: &Prepared,
        addr: &str,
        deadline: Instant,
    ) -> Result<Server, HostError> {
        let cmd = format!(
            "{} serve --listen {} --idle-timeout {SERVE_IDLE}",
            quote(&p.binary),
            quote(addr)
        );
        let mut c = ssh.command(&p.host, &bounded(deadline, &cmd));
        c.stdin(Stdio::piped());
        let mut child = ssh::spawn(c)?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let until = Instant::now() + Duration::from_secs(30);
        let until = until.min(deadline);
        // In slices, to stop with the run.
        let line = loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => break line,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                    if Instant::now() < until && !ssh.stopped() => {}
                Err(_) => break String::new(),
            }
        };
        if line.starts_with("listening on ") {
            return Ok(Server {
                child: Some(child),
                stdin,
                identity: announced_identity(&line),
            });
        }
        drop(stdin);
        if ssh.stopped() {
            ssh::kill_group(&mut child);
            return Err(HostError::Interrupted);
        }
        // Its error is on stderr; collect it with the exit status.
        let out = ssh::wait(child, Instant::now() + Duration::from_secs(5))?;
        Err(ssh::classify(&out).unwrap_or_else(|| {
            HostError::RunFailed(format!(
                "serve did not start: {}",
                out.stderr
                    .lines()
                    .rfind(|l| !l.trim().is_empty())
                    .unwrap_or("no message")
            ))
        }))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut w) = self.stdin.take() {
            let _ = w.flush();
        }
        if let Some(child) = self.child.take() {
            let _ = ssh::wait(child, Instant::now() + Duration::from_secs(10));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architectures_match_across_spellings() {
        assert!(same_arch("x86_64", "x86_64"));
        assert!(same_arch("arm64", "aarch64"));
        assert!(same_arch("i686", "x86"));
        assert!(!same_arch("aarch64", "x86_64"));
    }

    #[test]
    fn the_remote_run_ends_with_its_session() {
        // Run the wrapper here: closing its stdin must end the command.
        let script = ended_with_session("sleep 30");
        let mut child = std::process::Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let t = Instant::now();
        drop(child.stdin.take());
        child.wait().unwrap();
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        let ok = std::process::Command::new("sh")
            .args(["-c", &ended_with_session("echo hi")])
            .stdin(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&ok.stdout), "hi\n");
    }

    #[test]
    fn serve_announces_its_host() {
        assert_eq!(
            announced_identity("listening on 10.0.0.1:7717 (TCP and UDP) as node-1#0123\n")
                .as_deref(),
            Some("node-1#0123")
        );
        assert_eq!(
            announced_identity("listening on 10.0.0.1:7717 (TCP and UDP)\n"),
            None
        );
    }

    #[test]
    fn remote_commands_are_bounded() {
        let c = bounded(Instant::now() + Duration::from_secs(90), "t run");
        assert!(c.starts_with("exec timeout -k 5 "), "{c}");
        assert!(c.ends_with(" t run"));
    }
}
