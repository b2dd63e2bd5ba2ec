//! Scratch directories: one per measurement, under $TMPDIR, named
//! `touchstone-<pid>-<seq>` so that one left by a crashed touchstone (whose
//! pid is gone) is recognised and removed by the next run. Removed on drop,
//! which the harness reaches on success, error and Ctrl-C alike.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

static SEQ: AtomicU32 = AtomicU32::new(0);
const PREFIX: &str = "touchstone-";

pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    pub fn create() -> std::io::Result<ScratchDir> {
        let pid = std::process::id();
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("{PREFIX}{pid}-{seq}"));
        std::fs::create_dir(&path)?;
        Ok(ScratchDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Remove scratch directories of touchstone processes that no longer exist.
/// Only directories named by this module and owned by this user are touched.
pub fn remove_stale() -> usize {
    let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) else {
        return 0;
    };
    let uid = unsafe { libc::getuid() };
    let mut removed = 0;
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        let Some(pid) = rest.split_once('-').and_then(|(p, s)| {
            s.parse::<u32>().ok()?;
            p.parse::<i32>().ok()
        }) else {
            continue;
        };
        use std::os::unix::fs::MetadataExt;
        let ours = e
            .metadata()
            .map(|m| m.is_dir() && m.uid() == uid)
            .unwrap_or(false);
        // kill(pid, 0) fails with ESRCH when no such process exists.
        let dead = unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if ours && dead && std::fs::remove_dir_all(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}
