//! Room kept on disk for closing a run when the disk fills.
//!
//! Every write to a WAL-mode store appends to its `-wal` file, so on a full
//! disk even the small write that marks a run `failed` with its reason has
//! nowhere to go, and the run would be left `running` (read as crashed).
//! While a run is being written, the store keeps a small file of really
//! allocated blocks beside the database (`.NAME.reserve-RUNID`); when
//! closing the run meets a full disk, the file is removed and the close
//! tried again in the room it leaves. Reserves of runs no longer running (a
//! killed process leaves its own behind) are removed when the next run
//! begins.

use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Enough for the close of a run (its header rewritten: a few WAL frames of
/// 4 KiB) with a wide margin.
const RESERVE_BYTES: i64 = 128 * 1024;

fn prefix(store: &Path) -> Option<String> {
    Some(format!(
        ".{}.reserve-",
        store.file_name()?.to_string_lossy()
    ))
}

fn dir(store: &Path) -> &Path {
    match store.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

fn path(store: &Path, run_id: &str) -> Option<PathBuf> {
    Some(dir(store).join(format!("{}{run_id}", prefix(store)?)))
}

/// Set room aside for closing run `run_id` (best effort: a disk already too
/// full for it gets none).
pub fn make(store: &Path, run_id: &str) {
    let Some(path) = path(store, run_id) else {
        return;
    };
    let made = (|| -> std::io::Result<()> {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        // Allocated, not sparse: the blocks must be ours to give back.
        // SAFETY: posix_fallocate on a descriptor we own.
        match unsafe { libc::posix_fallocate(f.as_raw_fd(), 0, RESERVE_BYTES) } {
            0 => Ok(()),
            e => Err(std::io::Error::from_raw_os_error(e)),
        }
    })();
    if made.is_err() {
        let _ = std::fs::remove_file(&path);
    }
}

/// Give the room of run `run_id` back.
pub fn release(store: &Path, run_id: &str) {
    if let Some(path) = path(store, run_id) {
        let _ = std::fs::remove_file(path);
    }
}

/// The run ids that have room set aside beside `store`.
pub fn held(store: &Path) -> Vec<String> {
    let Some(prefix) = prefix(store) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir(store)) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_prefix(&prefix))
                .map(String::from)
        })
        .collect()
}
