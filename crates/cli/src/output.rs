//! Everything the command writes, through one door each:
//! - text for the user (`print`, `eprint_line`): stripped of control
//!   characters and escape sequences (`touchstone_report::sanitize`), since
//!   stored and imported runs carry strings someone else wrote; JSON
//!   (`print_json`) keeps them as JSON escapes; text of our own making
//!   (completion scripts, manual pages) goes out as it is (`print_raw`);
//! - standard output whose reader has gone (`touchstone report | head`):
//!   what follows is dropped and the command ends as it would have, status
//!   0 when nothing else failed — what ripgrep does. Rust ignores SIGPIPE,
//!   so the closed pipe arrives as an EPIPE error rather than the signal
//!   that ends a C tool with 141; restoring the signal instead would let
//!   any write to a closed pipe (ssh's stdin in a fleet run, a workload's
//!   own pipes) kill touchstone before it stops its children and removes
//!   its scratch files. Another failure to write standard output (a full
//!   disk behind `>`) is reported once, at the end (`finish`), status 2.
//!   Standard error that cannot be written is given up silently: there is
//!   nowhere left to say so;
//! - files (`write_file`): never onto the store or its -wal/-shm/-journal
//!   (compared by device and inode, and by name with every link followed —
//!   the store's and the output's — for those not there yet, since SQLite
//!   keeps them beside the file the store's links lead to). What is written
//!   depends on what the name is: a regular file or a new name is written
//!   atomically — a temporary file in the target's directory, created
//!   exclusively (O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC) under a name with 64
//!   random bits, so a link planted beside the target cannot redirect the
//!   write; the target's mode kept when it exists; then renamed over it. A
//!   link is followed and the file it leads to written (the link stays). A
//!   character device, FIFO or terminal (/dev/null, /dev/stdout) is written
//!   through, never replaced; a directory, block device or socket is refused.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use touchstone_harness::scratch::random_suffix;
use touchstone_report::sanitize::{json_text, terminal_text};
use touchstone_results::store::place;

use crate::error::CliError;

/// Standard output's reader has gone: nothing more is written there.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
/// The first other error writing standard output.
static STDOUT_FAILED: Mutex<Option<String>> = Mutex::new(None);

/// The one place that writes standard output (see the header).
fn write_stdout(bytes: &[u8]) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::Relaxed)
        }
        Err(e) => {
            let mut failed = STDOUT_FAILED.lock().unwrap_or_else(|p| p.into_inner());
            failed.get_or_insert_with(|| e.to_string());
        }
    }
}

/// The exit code once the command is done with `code`: a closed pipe
/// changes nothing; another failure to write standard output, unless the
/// command failed already, is reported and is status 2.
pub fn finish(code: i32) -> i32 {
    let failed = STDOUT_FAILED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    match failed {
        Some(e) if code == 0 => {
            eprint_line(&format!("touchstone: cannot write to standard output: {e}"));
            2
        }
        _ => code,
    }
}

/// Print to standard output, sanitized.
pub fn print(text: &str) {
    write_stdout(terminal_text(text).as_bytes());
}

/// Print JSON to standard output, its control characters as JSON escapes
/// (the same document, safe on a terminal).
pub fn print_json(json: &str) {
    write_stdout(json_text(json).as_bytes());
}

/// Whether standard output's reader has gone: a long output stops early.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Standard output as a writer, through the same door as `print_raw`
/// (its bytes as they are: the writer sanitizes what it writes).
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        write_stdout(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Print text of touchstone's own making (no stored strings in it) as it is.
pub fn print_raw(bytes: &[u8]) {
    write_stdout(bytes);
}

/// Print a report to standard output as its format asks: JSON with its
/// control characters escaped, anything else sanitized.
pub fn print_as(media: touchstone_report::Media, text: &str) {
    match media {
        touchstone_report::Media::Json => print_json(text),
        _ => print(text),
    }
}

/// Print a line to standard error, sanitized.
pub fn eprint_line(text: &str) {
    eprint(&format!("{text}\n"));
}

/// Print to standard error, sanitized, with no newline added (a prompt).
pub fn eprint(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err
        .write_all(terminal_text(text).as_bytes())
        .and_then(|()| err.flush());
}

/// Refuse an output path that is the store or one of its files: the same
/// file (device and inode, whatever the path: a symlink or a hard link to
/// it), or the same name, links followed on both sides, where a -wal or
/// -shm is not there yet.
pub fn refuse_store(target: &Path, store: &Path) -> Result<(), CliError> {
    let target_id = std::fs::metadata(target).ok().map(|m| (m.dev(), m.ino()));
    let target_name = place::resolve(target).ok();
    let real_store = place::resolve(store).unwrap_or_else(|_| store.to_path_buf());
    for f in place::files(&real_store) {
        let same_file = match (target_id, std::fs::metadata(&f)) {
            (Some(t), Ok(m)) => t == (m.dev(), m.ino()),
            _ => false,
        };
        if same_file || target_name.as_ref() == Some(&f) {
            return Err(CliError::File {
                path: target.display().to_string(),
                message: format!(
                    "refusing to write over the results store ({}); choose another output file",
                    f.display()
                ),
            });
        }
    }
    Ok(())
}

/// Write `bytes` to `path` (see the header), after `refuse_store`.
pub fn write_file(path: &Path, bytes: &[u8], store: &Path) -> Result<(), CliError> {
    write_file_with(path, store, |w| {
        w.write_all(bytes).map_err(|e| cannot_write(path, e))
    })
}

/// A file that could not be written, as the user is told.
pub fn cannot_write(path: &Path, e: std::io::Error) -> CliError {
    CliError::File {
        path: path.display().to_string(),
        message: format!("cannot write: {e}"),
    }
}

/// Write to `path` what `fill` writes, a piece at a time (see the header:
/// a file appears whole or not at all), after `refuse_store`. `fill`'s own
/// error stops the writing and is returned as it is.
pub fn write_file_with(
    path: &Path,
    store: &Path,
    fill: impl FnOnce(&mut dyn Write) -> Result<(), CliError>,
) -> Result<(), CliError> {
    refuse_store(path, store)?;
    let failed = |message: String| CliError::File {
        path: path.display().to_string(),
        message,
    };
    let mut stopped = None;
    let write = |w: &mut dyn Write| -> std::io::Result<()> {
        // Large pieces: a reader at the other end of a FIFO gets few writes.
        let mut out = std::io::BufWriter::with_capacity(1 << 20, w);
        match fill(&mut out) {
            Err(e) => {
                stopped = Some(e);
                Err(std::io::Error::other("stopped"))
            }
            Ok(()) => out.flush(),
        }
    };
    let written = match std::fs::metadata(path) {
        // The file a link leads to is replaced, never the link.
        Ok(m) if m.is_file() => std::fs::canonicalize(path)
            .and_then(|target| write_atomically_with(&target, |f| write(f), random_suffix)),
        Ok(m) if m.file_type().is_char_device() || m.file_type().is_fifo() => {
            write_through(path, write)
        }
        Ok(m) if m.file_type().is_block_device() => {
            return Err(failed(
                "cannot write: is a block device, and a report is never written onto a disk \
                 (choose a file)"
                    .into(),
            ))
        }
        Ok(m) => {
            return Err(failed(format!(
                "cannot write: is a {} (choose a file)",
                place::kind_of(m.file_type())
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => place::resolve(path)
            .and_then(|target| write_atomically_with(&target, |f| write(f), random_suffix)),
        Err(e) => Err(e),
    };
    match (stopped, written) {
        (Some(e), _) => Err(e),
        (None, Ok(())) => Ok(()),
        (None, Err(e)) => Err(failed(format!("cannot write: {e}"))),
    }
}

/// Write into a character device or FIFO as it is (a terminal, /dev/null,
/// a pipe): opened without creating or truncating anything, and checked
/// once open to be still such a file, so a regular file put in its place
/// meanwhile is never written into.
fn write_through(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)?;
    let t = file.metadata()?.file_type();
    if !(t.is_char_device() || t.is_fifo()) {
        return Err(std::io::Error::other(
            "it was replaced while being opened; nothing was written",
        ));
    }
    fill(&mut file)?;
    file.flush()
}

/// Names drawn for the temporary file before giving up.
const ATTEMPTS: usize = 16;

/// Write via a temporary file in the same directory and rename it into
/// place, so a reader never sees half a document and a failure leaves any
/// existing file untouched.
#[cfg(test)]
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomically_with(path, |f| f.write_all(bytes), random_suffix)
}

fn write_atomically_with(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
    mut suffix: impl FnMut() -> std::io::Result<String>,
) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?
        .to_string_lossy();
    // The mode of the file replaced is kept: a private report stays private.
    let kept_mode = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => return Err(std::io::Error::other("is a directory")),
        Ok(m) if m.is_file() => Some(m.permissions().mode() & 0o7777),
        _ => None,
    };
    // Short enough that the temporary name fits NAME_MAX whatever the target's.
    let stem: String = name
        .chars()
        .scan(0, |len, c| {
            *len += c.len_utf8();
            (*len <= 200).then_some(c)
        })
        .collect();
    let mut created = None;
    for _ in 0..ATTEMPTS {
        let tmp = dir.join(format!(".{stem}.{}.tmp", suffix()?));
        let opened = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(kept_mode.unwrap_or(0o666))
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp);
        match opened {
            Ok(f) => {
                created = Some((tmp, f));
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    let (tmp, mut file) = created.ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!(
                "{ATTEMPTS} random temporary names in {} were all taken",
                dir.display()
            ),
        )
    })?;
    let result = (|| {
        if let Some(mode) = kept_mode {
            // Exactly the old mode, whatever the umask made of it.
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        fill(&mut file)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)?;
        // The rename itself is durable once the directory is synced.
        if let Ok(d) = std::fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `dir/name` holding `text`, and `dir/link`, a symbolic link to it.
    fn linked_file(dir: &Path, name: &str, text: &str, link: &str) -> (PathBuf, PathBuf) {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        let link = dir.join(link);
        std::os::unix::fs::symlink(&file, &link).unwrap();
        (file, link)
    }

    #[test]
    fn a_link_planted_at_the_temporary_name_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let (victim, planted) =
            linked_file(dir.path(), "victim", "precious", ".report.txt.aaaa.tmp");
        let target = dir.path().join("report.txt");
        let mut draws = vec!["bbbb".to_string(), "aaaa".to_string()];
        write_atomically_with(
            &target,
            |f| f.write_all(b"report"),
            || Ok(draws.pop().unwrap()),
        )
        .unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "report");
        assert!(std::fs::symlink_metadata(&planted).unwrap().is_symlink());
        assert!(!dir.path().join(".report.txt.bbbb.tmp").exists());

        // Every name taken: an error, and still nothing written through the link.
        let e = write_atomically_with(&target, |f| f.write_all(b"again"), || Ok("aaaa".into()))
            .unwrap_err();
        assert!(e.to_string().contains("were all taken"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "report");
    }

    #[test]
    fn temporary_names_are_unpredictable_and_the_targets_mode_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("private.json");
        std::fs::write(&target, "old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_atomically(&target, b"new").unwrap();
        let meta = std::fs::metadata(&target).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomically(&target, b"newer").unwrap();
        assert_eq!(
            std::fs::metadata(&target).unwrap().permissions().mode() & 0o777,
            0o640
        );
        // Nothing left beside it.
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1);
        // The suffix is 16 hex digits from getrandom, different each time.
        let (a, b) = (random_suffix().unwrap(), random_suffix().unwrap());
        assert_eq!(a.len(), 16);
        assert_ne!(a, b);
    }

    #[test]
    fn the_store_and_its_companions_are_refused_by_inode_and_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let (store, link) = linked_file(dir.path(), "results.sqlite", "db", "innocent.txt");
        std::fs::write(dir.path().join("results.sqlite-wal"), "wal").unwrap();
        let hard = dir.path().join("hard.txt");
        std::fs::hard_link(&store, &hard).unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let dotted = sub.join("../results.sqlite");
        for refused in [
            store.clone(),
            link,
            hard,
            dotted,
            dir.path().join("results.sqlite-wal"),
            dir.path().join("results.sqlite-shm"),
        ] {
            let e = refuse_store(&refused, &store).unwrap_err().to_string();
            assert!(
                e.contains("refusing to write over the results store"),
                "{e}"
            );
        }
        refuse_store(&dir.path().join("report.html"), &store).unwrap();
        refuse_store(&dir.path().join("results.sqlite.bak"), &store).unwrap();
    }

    /// SQLite names the companions after the file the store's links lead
    /// to; so does the guard, on both sides.
    #[test]
    fn a_store_named_through_a_link_is_guarded_by_its_real_companions() {
        let dir = tempfile::tempdir().unwrap();
        let (_, link) = linked_file(dir.path(), "real.sqlite", "db", "link.sqlite");
        let to_wal = dir.path().join("out.json");
        std::os::unix::fs::symlink(dir.path().join("real.sqlite-wal"), &to_wal).unwrap();
        for refused in [dir.path().join("real.sqlite-journal"), to_wal] {
            let e = refuse_store(&refused, &link).unwrap_err().to_string();
            assert!(e.contains("real.sqlite-"), "{e}");
        }
        refuse_store(&dir.path().join("link.sqlite-wal"), &link).unwrap();
    }
}
