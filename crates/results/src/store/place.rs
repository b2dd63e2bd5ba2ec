//! Where a store really is, and which files are it.
//!
//! SQLite follows links in a database's name and keeps its `-wal`, `-shm`
//! and `-journal` beside the file the links lead to, so everything that
//! reasons about the store's files — "never write onto the store", which
//! WAL to look at, where the closing reserve goes — works on the resolved
//! path (`locate`), never on the name the user typed. A store is a regular
//! file, or a new name in a directory that exists: a device, FIFO or
//! directory is refused (SQLite would open /dev/null and leave a
//! `/dev/null-journal` beside it), and no directory is created here, so a
//! mistyped `--db` makes nothing (the CLI makes only the default store's
//! own directory).

use std::fs::FileType;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use super::StoreError;

/// SQLite's companions of a database file, by suffix.
pub const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// Most links followed before giving up (the kernel's MAXSYMLINKS).
const MAX_LINKS: usize = 40;

/// `path` with every link followed, absolute, including a last link that
/// leads nowhere yet (its target is where a new file would be made). The
/// directory must exist; the file need not.
pub fn resolve(path: &Path) -> std::io::Result<PathBuf> {
    resolve_or_dir(path).map_err(|(_, e)| e)
}

/// `resolve`, or the directory that could not be resolved and why.
fn resolve_or_dir(path: &Path) -> Result<PathBuf, (PathBuf, std::io::Error)> {
    let mut p = std::path::absolute(path).map_err(|e| (path.to_path_buf(), e))?;
    for _ in 0..MAX_LINKS {
        if let Ok(real) = std::fs::canonicalize(&p) {
            return Ok(real);
        }
        let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
            let e = std::io::Error::new(std::io::ErrorKind::NotFound, "no file name");
            return Err((p, e));
        };
        let dir = std::fs::canonicalize(dir).map_err(|e| (dir.to_path_buf(), e))?;
        let here = dir.join(name);
        match std::fs::read_link(&here) {
            // A relative target is relative to the link's directory.
            Ok(target) => p = dir.join(target),
            Err(_) => return Ok(here),
        }
    }
    Err((p, std::io::Error::from_raw_os_error(libc::ELOOP)))
}

/// What a file that is not a regular file is, in words.
pub fn kind_of(t: FileType) -> &'static str {
    let kinds = [
        (t.is_dir(), "directory"),
        (t.is_char_device(), "character device"),
        (t.is_block_device(), "block device"),
        (t.is_fifo(), "FIFO"),
        (t.is_socket(), "socket"),
        (t.is_symlink(), "symbolic link"),
        (t.is_file(), "regular file"),
    ];
    kinds
        .iter()
        .find(|&&(is, _)| is)
        .map_or("special file", |&(_, kind)| kind)
}

/// `path` with a suffix (SQLite's `-wal`, `-shm` files beside the store).
pub fn companion(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The files SQLite keeps the store at `real` in (a resolved path): the
/// database and its companions.
pub fn files(real: &Path) -> Vec<PathBuf> {
    std::iter::once(real.to_path_buf())
        .chain(COMPANIONS.iter().map(|s| companion(real, s)))
        .collect()
}

/// Where the store named `path` really is: resolved through links, and a
/// regular file, or — when `create` — a new name in a directory that
/// exists. Nothing is created.
pub fn locate(path: &Path, create: bool) -> Result<PathBuf, StoreError> {
    let named = path.to_path_buf();
    let real = match resolve_or_dir(path) {
        Ok(real) => real,
        Err(_) if !create => return Err(StoreError::Missing(named)),
        Err((dir, e)) => {
            let why = match e.kind() {
                std::io::ErrorKind::NotFound => "does not exist".to_string(),
                _ => format!("cannot be used ({e})"),
            };
            return Err(StoreError::NoDirectory {
                path: named,
                dir,
                why,
            });
        }
    };
    match std::fs::metadata(&real) {
        Ok(m) if m.is_file() => Ok(real),
        Ok(m) => Err(StoreError::NotAFile {
            path: named,
            kind: kind_of(m.file_type()),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match create {
            true => Ok(real),
            false => Err(StoreError::Missing(named)),
        },
        Err(source) => Err(StoreError::Io {
            path: named,
            source,
        }),
    }
}

/// An absolute `file:` URI for `path`, every byte outside the unreserved
/// set percent-encoded (a '?' or '#' in a file name must not start the
/// query).
pub(super) fn file_uri(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for &b in abs.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(b as char);
        } else {
            uri += &format!("%{b:02X}");
        }
    }
    uri
}

fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Whether this process may write the store file and create files beside
/// it (SQLite's -wal and -shm).
pub(super) fn writable(path: &Path) -> bool {
    [path, dir_of(path)].iter().all(|p| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            // SAFETY: access only reads a NUL-terminated path.
            .is_ok_and(|c| unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0)
    })
}

/// Whether the file system holding `path` has no space left for us.
pub(super) fn file_system_full(path: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(dir_of(path).as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: statvfs fills a zeroed local struct from a NUL-terminated path.
    unsafe {
        let mut s: libc::statvfs = std::mem::zeroed();
        libc::statvfs(c.as_ptr(), &mut s) == 0 && s.f_bavail == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_escape_what_would_end_the_path() {
        assert_eq!(
            file_uri(Path::new("/a b/r?s#t%.sqlite")),
            "file:/a%20b/r%3Fs%23t%25.sqlite"
        );
    }

    #[test]
    fn links_are_followed_to_the_real_file_even_where_it_is_not_there_yet() {
        let dir = tempfile::tempdir().unwrap();
        let real_dir = dir.path().canonicalize().unwrap();
        let store = real_dir.join("results.sqlite");
        std::fs::write(&store, "db").unwrap();
        let link = dir.path().join("link.sqlite");
        std::os::unix::fs::symlink("results.sqlite", &link).unwrap();
        let chain = dir.path().join("chain.sqlite");
        std::os::unix::fs::symlink(&link, &chain).unwrap();
        assert_eq!(resolve(&chain).unwrap(), store);
        // A link to a name not made yet resolves to that name.
        let later = dir.path().join("later");
        std::os::unix::fs::symlink("sub/../new.sqlite", &later).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert_eq!(resolve(&later).unwrap(), real_dir.join("new.sqlite"));
        // A loop ends.
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::os::unix::fs::symlink(&b, &a).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        assert!(resolve(&a).is_err());
        // The companions are named after the real file.
        assert_eq!(
            files(&resolve(&link).unwrap())[1],
            real_dir.join("results.sqlite-wal")
        );
    }

    #[test]
    fn a_store_is_a_regular_file_or_a_new_name_in_an_existing_directory() {
        let dir = tempfile::tempdir().unwrap();
        let real_dir = dir.path().canonicalize().unwrap();
        let e = locate(&dir.path().join("no/such/x.sqlite"), true).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("no/such") && msg.contains("does not exist"),
            "{msg}"
        );
        assert!(!dir.path().join("no").exists());
        assert!(matches!(
            locate(&dir.path().join("no/x.sqlite"), false),
            Err(StoreError::Missing(_))
        ));
        // Through a link, the directory named is the one the link leads into.
        let link = dir.path().join("link.sqlite");
        std::os::unix::fs::symlink(dir.path().join("gone/x.sqlite"), &link).unwrap();
        let msg = locate(&link, true).unwrap_err().to_string();
        assert!(msg.contains("gone does not exist"), "{msg}");
        let msg = locate(dir.path(), true).unwrap_err().to_string();
        assert!(
            msg.contains("a directory") && msg.contains("regular file"),
            "{msg}"
        );
        let msg = locate(Path::new("/dev/null"), true)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("character device"), "{msg}");
        assert_eq!(
            locate(&dir.path().join("new.sqlite"), true).unwrap(),
            real_dir.join("new.sqlite")
        );
    }
}
