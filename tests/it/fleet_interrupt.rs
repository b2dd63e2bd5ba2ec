//! `fleet run` stopped: Ctrl-C or SIGTERM ends it promptly (it ran on and
//! reported "ok"), with status 130 and "interrupted", and leaves nothing on
//! either side — no run or copied binary on the host, no ssh or private
//! directory here; killed outright (SIGKILL), the copy on the host is
//! still removed, and the private directory here is swept by the next
//! fleet run. On the namespaced sshd hosts of `fleet_ssh`.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

use crate::common::{text, Sandbox};
use crate::fleet_ssh::{runs, Lab};

/// The private directories (ssh's sockets) of the fleet run `pid`.
fn control_dirs(pid: u32) -> Vec<PathBuf> {
    std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&format!("tsf.{pid}.")))
        })
        .collect()
}

/// Wait for `child` to end, at most `within`.
fn ends_within(child: &mut Child, within: Duration) -> Option<std::process::ExitStatus> {
    let t = Instant::now();
    while t.elapsed() < within {
        if let Some(st) = child.try_wait().unwrap() {
            return Some(st);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    None
}

#[test]
fn ctrl_c_or_sigterm_stops_a_fleet_run_promptly_and_leaves_nothing_on_either_side() {
    let Some(lab) = Lab::start(1) else {
        return;
    };
    let s = Sandbox::new();
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let mut child = lab.long_fleet_run(&s);
        let pid = child.id();
        let dirs = control_dirs(pid);
        assert_eq!(dirs.len(), 1, "{dirs:?}");
        let mode = std::fs::metadata(&dirs[0]).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{}", dirs[0].display());
        assert_eq!(lab.copies_left().len(), 1, "the copy on the host");

        let t = Instant::now();
        // SAFETY: signalling our own child (ip netns exec became touchstone).
        unsafe { libc::kill(pid as i32, sig) };
        let status = ends_within(&mut child, Duration::from_secs(30))
            .unwrap_or_else(|| panic!("signal {sig}: the fleet run goes on"));
        let took = t.elapsed();
        let o = child.wait_with_output().unwrap();
        let out = text(&o);
        eprintln!("signal {sig}: ended in {took:?}\n{out}");
        assert_eq!(status.code(), Some(130), "{out}");
        assert!(out.contains("interrupted"), "{out}");
        assert!(!out.contains("ok in"), "{out}");
        assert!(took < Duration::from_secs(20), "{took:?}");
        // Nothing left: no run or ssh on either side, no copy, no socket dir.
        lab.wait_until_quiet(1, Duration::from_secs(20))
            .unwrap_or_else(|e| panic!("signal {sig}: {e}"));
        assert!(lab.copies_left().is_empty(), "{:?}", lab.copies_left());
        assert!(control_dirs(pid).is_empty(), "{:?}", control_dirs(pid));
    }
    assert!(runs(&s).is_empty(), "nothing was finished to import");
}

#[test]
fn a_fleet_run_killed_outright_leaves_no_copy_on_the_host() {
    let Some(lab) = Lab::start(1) else {
        return;
    };
    let s = Sandbox::new();
    let mut child = lab.long_fleet_run(&s);
    let pid = child.id();
    assert_eq!(lab.copies_left().len(), 1);
    child.kill().unwrap();
    child.wait().unwrap();
    // Its ssh clients live on, see their input end, and so do the shells
    // they started on the host: the run stops and the copy goes.
    let t = Instant::now();
    while !lab.copies_left().is_empty() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "copied binaries left behind: {:?}",
            lab.copies_left()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The shared connection's master outlives a fleet run killed outright
    // by its ControlPersist (30 s after its last client), and the host's
    // sshd session with it: bounded, not for ever.
    let want: std::collections::BTreeSet<i32> = lab.sshd_pid(1).into_iter().collect();
    while Lab::pids(&lab.ns(1)) != want {
        assert!(
            t.elapsed() < Duration::from_secs(50),
            "still running on the host: {:?}",
            Lab::pids(&lab.ns(1))
                .iter()
                .map(|p| {
                    let cmd = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
                    format!("{p} {}", String::from_utf8_lossy(&cmd).replace('\0', " "))
                })
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Here, its private directory stays until the next fleet run sweeps it.
    assert_eq!(control_dirs(pid).len(), 1);
    let o =
        s.run_line("fleet run --hosts no-such-host.invalid --connect-timeout 2s lat_syscall/null");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(control_dirs(pid).is_empty(), "{:?}", control_dirs(pid));
}
