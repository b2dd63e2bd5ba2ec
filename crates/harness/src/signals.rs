//! Ctrl-C and friends. The parent records the signal in a flag and the
//! harness, polling between events, stops the children, removes scratch
//! files and returns `Interrupted`, so the CLI can close the run cleanly.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Route SIGINT, SIGTERM and SIGHUP to the interrupt flag (idempotent).
pub fn install() {
    flag();
}

/// The interrupt flag itself (handlers installed), for code that polls it
/// outside the harness (the fleet's waits on ssh).
pub fn flag() -> Arc<AtomicBool> {
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        for sig in [
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ] {
            let _ = signal_hook::flag::register(sig, flag.clone());
        }
        flag
    })
    .clone()
}

/// Whether an interrupting signal has arrived.
pub fn interrupted() -> bool {
    FLAG.get().is_some_and(|f| f.load(Ordering::Relaxed))
}

/// Make this process the reaper of its descendants' orphans, so a helper a
/// benchmark forked cannot escape to init and outlive the run.
pub fn become_subreaper() {
    // SAFETY: prctl with constant arguments.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
}
