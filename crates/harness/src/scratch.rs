//! Scratch directories: one per measurement, under $TMPDIR, named
//! `touchstone-<pid>-<random>`: the pid lets the next run recognise and
//! remove one left by a crashed touchstone (whose pid is gone); the random
//! part (getrandom) makes the name unpredictable, so that another user of a
//! shared temporary directory cannot pre-create it. Each is made with
//! mkdir (exclusive: an existing name is never reused, a new one is drawn)
//! and mode 0700. Removed on drop, which the harness reaches on success,
//! error and Ctrl-C alike.
//!
//! System V semaphore sets outlive every process, so a benchmark that makes
//! one records it in its scratch directory (`record_sysv_sem`); when a run
//! is killed before its cleanup, the next run's `remove_stale` removes the
//! recorded sets together with the directory.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

const PREFIX: &str = "touchstone-";
/// Names drawn before giving up: a collision of 64 random bits is only
/// ever someone guessing, and a few draws outlast any guess.
const ATTEMPTS: usize = 16;

pub struct ScratchDir {
    path: PathBuf,
}

/// 64 unpredictable bits from the kernel (getrandom), as 16 hex digits.
/// An error, never a predictable fallback: names that must not be guessed
/// are never made from the pid or the time.
pub fn random_suffix() -> std::io::Result<String> {
    let mut b = [0u8; 8];
    let mut filled = 0;
    while filled < b.len() {
        // SAFETY: getrandom fills the rest of a local buffer.
        let got = unsafe {
            libc::getrandom(
                b[filled..].as_mut_ptr() as *mut libc::c_void,
                b.len() - filled,
                0,
            )
        };
        if got < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        filled += got as usize;
    }
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

impl ScratchDir {
    pub fn create() -> std::io::Result<ScratchDir> {
        ScratchDir::create_in(&std::env::temp_dir(), random_suffix)
    }

    /// Make `<dir>/touchstone-<pid>-<suffix>` with mode 0700, drawing a new
    /// suffix while the name exists. Errors name the path.
    fn create_in(
        dir: &Path,
        mut suffix: impl FnMut() -> std::io::Result<String>,
    ) -> std::io::Result<ScratchDir> {
        let pid = std::process::id();
        let mut last = None;
        for _ in 0..ATTEMPTS {
            let path = dir.join(format!("{PREFIX}{pid}-{}", suffix()?));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(ScratchDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(path),
                Err(e) => {
                    return Err(std::io::Error::new(
                        e.kind(),
                        format!("cannot create scratch directory {}: {e}", path.display()),
                    ))
                }
            }
        }
        let path = last.expect("at least one attempt");
        Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!(
                "cannot create a scratch directory in {}: {ATTEMPTS} random names were all taken, the last {} (someone is planting names there?)",
                dir.display(),
                path.display()
            ),
        ))
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
        // `<pid>-<hex>` (and `<pid>-<seq>`, the names of older touchstones).
        let Some(pid) = rest.split_once('-').and_then(|(p, s)| {
            (!s.is_empty() && s.bytes().all(|c| c.is_ascii_hexdigit())).then_some(())?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    /// Another user could pre-create the names older touchstones used
    /// (`touchstone-<pid>-<seq>`) and make every benchmark fail with
    /// "File exists"; now those names are never drawn.
    #[test]
    fn predictable_names_planted_in_advance_do_not_stop_a_benchmark() {
        let pid = std::process::id();
        let planted: Vec<PathBuf> = (0..8)
            .map(|seq| std::env::temp_dir().join(format!("{PREFIX}{pid}-{seq}")))
            .collect();
        for p in &planted {
            let _ = std::fs::create_dir(p);
        }
        let made: Vec<ScratchDir> = (0..8).map(|_| ScratchDir::create().unwrap()).collect();
        for p in &planted {
            let _ = std::fs::remove_dir(p);
        }
        for d in &made {
            assert!(!planted.contains(&d.path().to_path_buf()));
            let meta = std::fs::symlink_metadata(d.path()).unwrap();
            assert!(meta.is_dir());
            assert_eq!(meta.permissions().mode() & 0o777, 0o700, "{:?}", d.path());
            assert_eq!(meta.uid(), unsafe { libc::getuid() });
            let name = d.path().file_name().unwrap().to_str().unwrap();
            let suffix = name.rsplit('-').next().unwrap();
            assert_eq!(suffix.len(), 16, "{name}");
        }
        let names: std::collections::BTreeSet<_> = made.iter().map(|d| d.path()).collect();
        assert_eq!(names.len(), made.len(), "every name is drawn anew");
    }

    /// A name that exists (a planted directory or symlink) is never
    /// reused: another is drawn; when every draw is taken the error names
    /// the path.
    #[test]
    fn an_existing_name_is_never_reused_and_errors_name_the_path() {
        // A private directory to plant in: a scratch directory itself.
        let dir = ScratchDir::create().unwrap();
        let pid = std::process::id();
        let taken = dir.path().join(format!("{PREFIX}{pid}-aaaa"));
        std::os::unix::fs::symlink("/", &taken).unwrap();
        let mut draws = vec!["bbbb".to_string(), "aaaa".to_string()];
        let made = ScratchDir::create_in(dir.path(), || Ok(draws.pop().unwrap())).unwrap();
        assert_eq!(made.path(), dir.path().join(format!("{PREFIX}{pid}-bbbb")));
        assert!(std::fs::symlink_metadata(&taken).unwrap().is_symlink());

        let e = ScratchDir::create_in(dir.path(), || Ok("aaaa".to_string()))
            .err()
            .unwrap();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert!(e.to_string().contains(&taken.display().to_string()), "{e}");

        let missing = dir.path().join("no-such-dir");
        let e = ScratchDir::create_in(&missing, random_suffix)
            .err()
            .unwrap();
        assert!(
            e.to_string().contains(&missing.display().to_string()),
            "{e}"
        );
    }
}
