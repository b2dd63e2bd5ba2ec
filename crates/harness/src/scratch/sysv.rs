//! System V IPC objects — semaphore sets, shared memory segments, message
//! queues — outlive every process: one left behind stays until `ipcrm` or
//! a reboot. So a benchmark records each one it makes in its scratch
//! directory (`record`, the moment the object exists) and forgets it when
//! it removes the object itself (`forget`, after IPC_RMID). Whatever is
//! still recorded when the scratch directory goes is removed with it
//! (`ScratchDir`'s drop, which the harness reaches after every child is
//! reaped): children killed on Ctrl-C, SIGTERM or a failure, or a child
//! that crashed, leave nothing. A directory left by a touchstone killed
//! outright (SIGKILL) is swept, objects and all, by the next run
//! (`remove_stale`).
//!
//! The other kinds of IPC need no record: FIFOs and Unix sockets are made
//! inside the scratch directory and go with it, memory shared between a
//! benchmark's processes is an anonymous shared mapping that dies with
//! them, and POSIX named objects (mq_open, shm_open, sem_open), which
//! would live in /dev/mqueue and /dev/shm, are not used.
//!
//! A record is `<name>.sysv-sem` (or `-shm`, `-msg`) holding "<id>
//! <ctime>": an object is removed only if it still has the recorded change
//! time and was created by this user, so an id reused by someone else is
//! never touched (a set's ctime also moves with semctl SETVAL/SETALL, so a
//! benchmark records a set after giving it its initial values).

use std::path::{Path, PathBuf};

/// The kinds of System V IPC object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Semaphores,
    SharedMemory,
    MessageQueue,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::Semaphores, Kind::SharedMemory, Kind::MessageQueue];

    /// The name ending of a record of this kind.
    fn suffix(self) -> &'static str {
        match self {
            Kind::Semaphores => ".sysv-sem",
            Kind::SharedMemory => ".sysv-shm",
            Kind::MessageQueue => ".sysv-msg",
        }
    }

    /// The change time and creator of object `id`, if it exists.
    fn identity(self, id: i32) -> Option<(i64, u32)> {
        // SAFETY: each IPC_STAT fills a zeroed struct of the right type we own.
        unsafe {
            match self {
                Kind::Semaphores => {
                    let mut ds: libc::semid_ds = std::mem::zeroed();
                    (libc::semctl(id, 0, libc::IPC_STAT, &mut ds as *mut libc::semid_ds) == 0)
                        .then_some((ds.sem_ctime as i64, ds.sem_perm.cuid))
                }
                Kind::SharedMemory => {
                    let mut ds: libc::shmid_ds = std::mem::zeroed();
                    (libc::shmctl(id, libc::IPC_STAT, &mut ds) == 0)
                        .then_some((ds.shm_ctime as i64, ds.shm_perm.cuid))
                }
                Kind::MessageQueue => {
                    let mut ds: libc::msqid_ds = std::mem::zeroed();
                    (libc::msgctl(id, libc::IPC_STAT, &mut ds) == 0)
                        .then_some((ds.msg_ctime as i64, ds.msg_perm.cuid))
                }
            }
        }
    }

    fn remove(self, id: i32) {
        // SAFETY: IPC_RMID of an object this user created and recorded.
        unsafe {
            match self {
                Kind::Semaphores => libc::semctl(id, 0, libc::IPC_RMID),
                Kind::SharedMemory => libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()),
                Kind::MessageQueue => libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut()),
            }
        };
    }
}

/// Record object `id` of `kind` (just made by this process) in `dir` as
/// `<dir>/<name><suffix>`; returns the record's path for `forget`.
pub fn record(dir: &Path, name: &str, kind: Kind, id: i32) -> std::io::Result<PathBuf> {
    let (ctime, _) = kind
        .identity(id)
        .ok_or_else(std::io::Error::last_os_error)?;
    let path = dir.join(format!("{name}{}", kind.suffix()));
    std::fs::write(&path, format!("{id} {ctime}\n"))?;
    Ok(path)
}

/// Remove the record written by `record` (the object is already gone).
pub fn forget(record: &Path) {
    let _ = std::fs::remove_file(record);
}

/// Remove every object recorded in `dir` that is still the one recorded
/// (same change time, created by this user). Returns how many went.
pub(super) fn remove_recorded(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let Some(kind) = Kind::ALL.into_iter().find(|k| name.ends_with(k.suffix())) else {
            continue;
        };
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
        if kind.identity(id) == Some((ctime, uid)) {
            kind.remove(id);
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::super::{remove_stale, ScratchDir, PREFIX};
    use super::*;

    /// One object of `kind`, private to this process.
    fn make(kind: Kind) -> i32 {
        // SAFETY: private objects, removed by the code under test or below.
        let id = unsafe {
            match kind {
                Kind::Semaphores => libc::semget(libc::IPC_PRIVATE, 2, libc::IPC_CREAT | 0o600),
                Kind::SharedMemory => {
                    libc::shmget(libc::IPC_PRIVATE, 4096, libc::IPC_CREAT | 0o600)
                }
                Kind::MessageQueue => libc::msgget(libc::IPC_PRIVATE, libc::IPC_CREAT | 0o600),
            }
        };
        assert!(id >= 0, "{kind:?}: {}", std::io::Error::last_os_error());
        id
    }

    /// Remove what a failed check left, then fail.
    fn gone_or_removed(kind: Kind, id: i32) -> bool {
        let gone = kind.identity(id).is_none();
        if !gone {
            kind.remove(id);
        }
        gone
    }

    /// Children killed before their cleanup (Ctrl-C, a crash) leave their
    /// recorded objects behind: the scratch directory takes them with it.
    #[test]
    fn recorded_objects_go_with_the_scratch_directory() {
        for kind in Kind::ALL {
            let scratch = ScratchDir::create().unwrap();
            let id = make(kind);
            record(scratch.path(), "bench.0", kind, id).unwrap();
            // One the benchmark removed itself: its record is forgotten.
            let done = make(kind);
            let r = record(scratch.path(), "bench.1", kind, done).unwrap();
            kind.remove(done);
            forget(&r);
            assert!(kind.identity(id).is_some());
            drop(scratch);
            assert!(
                gone_or_removed(kind, id),
                "{kind:?} outlived its scratch directory"
            );
        }
    }

    /// An object is removed only if it is the one recorded: a record whose
    /// change time differs (the id reused since) leaves it alone.
    #[test]
    fn an_object_that_is_not_the_one_recorded_is_left_alone() {
        let scratch = ScratchDir::create().unwrap();
        let id = make(Kind::Semaphores);
        let (ctime, _) = Kind::Semaphores.identity(id).unwrap();
        std::fs::write(
            scratch.path().join("other.sysv-sem"),
            format!("{id} {}\n", ctime - 1000),
        )
        .unwrap();
        drop(scratch);
        let kept = Kind::Semaphores.identity(id).is_some();
        Kind::Semaphores.remove(id);
        assert!(kept, "an object not recorded was removed");
    }

    /// Objects recorded in the scratch directory of a dead touchstone are
    /// removed by the next run's sweep, with the directory.
    #[test]
    fn stale_objects_are_removed_by_the_next_runs_sweep() {
        // A pid that no longer exists: a child that has been reaped.
        // SAFETY: the child only exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            unsafe { libc::_exit(0) };
        }
        assert!(pid > 0);
        unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
        let dir = std::env::temp_dir().join(format!("{PREFIX}{pid}-999"));
        std::fs::create_dir(&dir).unwrap();
        let ids: Vec<(Kind, i32)> = Kind::ALL.into_iter().map(|k| (k, make(k))).collect();
        for (i, &(kind, id)) in ids.iter().enumerate() {
            record(&dir, &format!("lat_x.{i}"), kind, id).unwrap();
        }
        remove_stale();
        let _ = std::fs::remove_dir_all(&dir);
        for (kind, id) in ids {
            assert!(
                gone_or_removed(kind, id),
                "the recorded {kind:?} survived the sweep"
            );
        }
    }
}
