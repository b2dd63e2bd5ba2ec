//! Scratch directories: one per measurement, under $TMPDIR, named
//! `touchstone-<pid>-<random>`: the pid lets the next run recognise and
//! remove one left by a crashed touchstone (whose pid is gone); the random
//! part (getrandom) makes the name unpredictable, so that another user of a
//! shared temporary directory cannot pre-create it. Each is made with
//! mkdir (exclusive: an existing name is never reused, a new one is drawn)
//! and mode 0700. Removed on drop, which the harness reaches on success,
//! error and Ctrl-C alike, with the System V IPC objects recorded in it
//! (`sysv`): those outlive every process, and children killed before their
//! cleanup would leave them. When a run is killed outright, the next run's
//! `remove_stale` removes the directory and its recorded objects.

pub mod sysv;

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
    /// The harness drops it once every child is reaped: what they recorded
    /// and did not remove (killed on Ctrl-C, or crashed) goes now.
    fn drop(&mut self) {
        sysv::remove_recorded(&self.path);
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
            sysv::remove_recorded(&e.path());
        }
        if ours && dead && std::fs::remove_dir_all(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
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
