//! Scratch directories: one per measurement, under $TMPDIR, named
//! `touchstone-<pid>-<seq>` so that one left by a crashed touchstone (whose
//! pid is gone) is recognised and removed by the next run. Removed on drop,
//! which the harness reaches on success, error and Ctrl-C alike.
//!
//! System V semaphore sets outlive every process, so a benchmark that makes
//! one records it in its scratch directory (`record_sysv_sem`); when a run
//! is killed before its cleanup, the next run's `remove_stale` removes the
//! recorded sets together with the directory.

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
        if ours && dead {
            remove_recorded_sysv_sems(&e.path());
        }
        if ours && dead && std::fs::remove_dir_all(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The name ending of a file that records a System V semaphore set.
pub const SYSV_SEM_SUFFIX: &str = ".sysv-sem";

/// The creation time and creator of semaphore set `id`, if it exists.
fn sysv_sem_identity(id: i32) -> Option<(i64, u32)> {
    // SAFETY: IPC_STAT fills a semid_ds we own.
    let mut ds: libc::semid_ds = unsafe { std::mem::zeroed() };
    if unsafe { libc::semctl(id, 0, libc::IPC_STAT, &mut ds as *mut libc::semid_ds) } != 0 {
        return None;
    }
    Some((ds.sem_ctime as i64, ds.sem_perm.cuid))
}

/// Record semaphore set `id` (just created by this process) in `dir` as
/// `<dir>/<name>.sysv-sem` holding "<id> <creation time>"; returns the
/// file's path, which `forget_sysv_sem` removes after IPC_RMID.
pub fn record_sysv_sem(dir: &Path, name: &str, id: i32) -> std::io::Result<PathBuf> {
    let (ctime, _) = sysv_sem_identity(id).ok_or_else(std::io::Error::last_os_error)?;
    let path = dir.join(format!("{name}{SYSV_SEM_SUFFIX}"));
    std::fs::write(&path, format!("{id} {ctime}\n"))?;
    Ok(path)
}

/// Remove the record written by `record_sysv_sem` (the set is already gone).
pub fn forget_sysv_sem(record: &Path) {
    let _ = std::fs::remove_file(record);
}

/// Remove the semaphore sets recorded in a stale scratch directory. A set
/// is removed only if it still has the recorded creation time and was
/// created by this user (System V ids carry a sequence number, so a reused
/// id with the same creation second as well is not a practical risk).
fn remove_recorded_sysv_sems(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let uid = unsafe { libc::getuid() };
    for e in entries.flatten() {
        if !e.file_name().to_string_lossy().ends_with(SYSV_SEM_SUFFIX) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        let mut it = text.split_whitespace().map(|w| w.parse::<i64>().ok());
        let (Some(Some(id)), Some(Some(ctime))) = (it.next(), it.next()) else {
            continue;
        };
        let Ok(id) = i32::try_from(id) else {
            continue;
        };
        if sysv_sem_identity(id) == Some((ctime, uid)) {
            // SAFETY: removing a set this user created and recorded.
            unsafe { libc::semctl(id, 0, libc::IPC_RMID) };
        }
    }
}

#[cfg(test)]
mod sysv_tests {
    use super::*;

    /// A set recorded in the scratch directory of a dead touchstone is
    /// removed by the next run's sweep, with the directory.
    #[test]
    fn stale_semaphore_sets_are_removed() {
        // A pid that no longer exists: a child that has been reaped.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            unsafe { libc::_exit(0) };
        }
        assert!(pid > 0);
        unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
        let dir = std::env::temp_dir().join(format!("{PREFIX}{pid}-999"));
        std::fs::create_dir(&dir).unwrap();
        let id = unsafe { libc::semget(libc::IPC_PRIVATE, 2, libc::IPC_CREAT | 0o600) };
        assert!(id >= 0);
        record_sysv_sem(&dir, "lat_sem.0", id).unwrap();
        assert!(sysv_sem_identity(id).is_some());
        remove_stale();
        let gone = sysv_sem_identity(id).is_none();
        if !gone {
            unsafe { libc::semctl(id, 0, libc::IPC_RMID) };
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert!(gone, "the recorded semaphore set survived the sweep");
    }
}
