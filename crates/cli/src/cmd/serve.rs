//! `touchstone serve --listen ADDR:PORT`: the other end of the network
//! benchmarks run from another host (`lat_tcp/remote:ADDR:PORT`, …). It
//! listens on exactly the address given, refuses a port in use, and stops
//! when the client that started it is gone — its standard input (the ssh
//! session of `fleet run`) closes — or after the idle timeout with no
//! client, so it never lingers on a host. Its first line names the host
//! (`Host::identity`), so that `fleet run` can say who served a pair. The
//! bounds on what a client can make it do (memory, connections, silence)
//! are `remote::serve`'s; here the open-files limit is raised to take
//! `--max-connections`.

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::sync::atomic::Ordering;
use std::time::Duration;

use touchstone_catalogue::support::remote::{self, ServeLimits};

use crate::args::ServeArgs;
use crate::error::CliError;
use crate::option_values;

/// Whether standard input is a pipe or socket (as under ssh): then its end
/// means the client is gone. A terminal or /dev/null says nothing.
fn stdin_is_a_link() -> bool {
    let Ok(meta) = std::fs::metadata("/proc/self/fd/0") else {
        return false;
    };
    let t = meta.file_type();
    t.is_fifo() || t.is_socket()
}

/// The most `--max-connections` accepts (a thread and a descriptor each).
const MOST_CONNECTIONS: usize = 65_536;
/// Descriptors serve needs besides its connections (listeners, standard
/// streams, what the host survey opens).
const SPARE_FILES: u64 = 32;

/// Raise the soft open-files limit toward `want` (up to the hard limit);
/// the limit now.
fn open_files_for(want: u64) -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit on a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
            return want;
        }
        if r.rlim_cur != libc::RLIM_INFINITY && r.rlim_cur < want {
            let raised = libc::rlimit {
                rlim_cur: want.min(r.rlim_max),
                rlim_max: r.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                r.rlim_cur = raised.rlim_cur;
            }
        }
    }
    if r.rlim_cur == libc::RLIM_INFINITY {
        u64::MAX
    } else {
        r.rlim_cur
    }
}

pub fn serve(a: &ServeArgs) -> Result<(), CliError> {
    let idle_ns = option_values::duration(
        "--idle-timeout",
        &a.idle_timeout,
        1_000_000_000,
        86_400 * 1_000_000_000,
    )?;
    if !(1..=MOST_CONNECTIONS).contains(&a.max_connections) {
        return Err(CliError::Usage(format!(
            "--max-connections {}: give 1 to {MOST_CONNECTIONS}",
            a.max_connections
        )));
    }
    let (tcp, udp, bound) = remote::bind(&a.listen).map_err(CliError::Usage)?;
    let mut limits = ServeLimits::new(Duration::from_nanos(idle_ns));
    limits.max_connections = a.max_connections;
    let files = open_files_for(a.max_connections as u64 + SPARE_FILES);
    if files < a.max_connections as u64 + SPARE_FILES {
        limits.max_connections = files.saturating_sub(SPARE_FILES).max(1) as usize;
        crate::output::eprint_line(&format!(
            "touchstone serve: at most {} connections at once (the open-files limit is {files}; \
             raise `ulimit -n` for --max-connections {})",
            limits.max_connections, a.max_connections
        ));
    }
    if stdin_is_a_link() {
        let gone = limits.client_gone.clone();
        let watcher = std::thread::Builder::new().spawn(move || {
            let mut sink = [0u8; 256];
            let mut stdin = std::io::stdin().lock();
            while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
            gone.store(true, Ordering::SeqCst);
        });
        if let Err(e) = watcher {
            crate::output::eprint_line(&format!(
                "touchstone serve: cannot watch standard input ({e}); stopping after the idle timeout only"
            ));
        }
    }
    // The line `fleet run` waits for; flushed at once (stdout is a pipe).
    let me = touchstone_results::host::collect().identity();
    crate::output::print(&format!("listening on {bound} (TCP and UDP) as {me}\n"));
    remote::serve(tcp, udp, &limits).map_err(|e| CliError::File {
        path: bound.to_string(),
        message: e,
    })?;
    crate::output::eprint_line(&format!(
        "touchstone serve: stopping ({})",
        if limits.client_gone.load(Ordering::SeqCst) {
            "the client is gone"
        } else {
            "idle timeout"
        }
    ));
    Ok(())
}
