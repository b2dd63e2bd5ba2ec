//! `touchstone serve --listen ADDR:PORT`: the other end of the network
//! benchmarks run from another host (`lat_tcp/remote:ADDR:PORT`, …). It
//! listens on exactly the address given, refuses a port in use, and stops
//! when the client that started it is gone — its standard input (the ssh
//! session of `fleet run`) closes — or after the idle timeout with no
//! client, so it never lingers on a host. Its first line names the host
//! (`Host::identity`), so that `fleet run` can say who served a pair.

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use touchstone_catalogue::support::remote::{self, ServeLimits};

use crate::args::ServeArgs;
use crate::error::CliError;

/// Whether standard input is a pipe or socket (as under ssh): then its end
/// means the client is gone. A terminal or /dev/null says nothing.
fn stdin_is_a_link() -> bool {
    let Ok(meta) = std::fs::metadata("/proc/self/fd/0") else {
        return false;
    };
    let t = meta.file_type();
    t.is_fifo() || t.is_socket()
}

pub fn serve(a: &ServeArgs) -> Result<(), CliError> {
    let idle_ns = super::run::duration(
        "--idle-timeout",
        &a.idle_timeout,
        1_000_000_000,
        86_400 * 1_000_000_000,
    )?;
    let (tcp, udp, bound) = remote::bind(&a.listen).map_err(CliError::Usage)?;
    let limits = ServeLimits {
        idle: Duration::from_nanos(idle_ns),
        client_gone: Arc::new(AtomicBool::new(false)),
    };
    if stdin_is_a_link() {
        let gone = limits.client_gone.clone();
        std::thread::spawn(move || {
            let mut sink = [0u8; 256];
            let mut stdin = std::io::stdin().lock();
            while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
            gone.store(true, Ordering::SeqCst);
        });
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
