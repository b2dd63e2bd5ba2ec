//! The file system a path lies on (named in the output), what O_DIRECT
//! needs there, the room left, and a probe that a test file can be made.

use std::ffi::CString;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::test_file::create_unlinked;
pub use crate::support::block_device::{mounts, Mount};
use crate::support::sys;

/// The mount a path lies on (the longest mount point above it; the last
/// such mount wins, as the newest hides those under it).
pub fn mount_of(path: &Path) -> Option<Mount> {
    let p = path.canonicalize().ok()?;
    let mut best: Option<Mount> = None;
    for m in mounts() {
        if p.starts_with(&m.mount_point)
            && best
                .as_ref()
                .is_none_or(|b| m.mount_point.as_os_str().len() >= b.mount_point.as_os_str().len())
        {
            best = Some(m);
        }
    }
    best
}

/// "ext4 on /dev/vda", "tmpfs (memory)": what the output names.
pub fn describe_place(path: &Path) -> String {
    match mount_of(path) {
        Some(m) if m.source.starts_with("/dev/") => format!("{} on {}", m.fs_type, m.source),
        Some(m) if m.fs_type == "tmpfs" || m.fs_type == "ramfs" => {
            format!("{} (memory, no disk)", m.fs_type)
        }
        Some(m) => format!("{} ({})", m.fs_type, m.source),
        None => "an unknown file system".into(),
    }
}

/// The alignment O_DIRECT transfers need in `dir`: what the kernel
/// reports for a file there (statx STATX_DIOALIGN, Linux 6.1 and later:
/// the device's logical block, 512 on most disks), else the file system's
/// block size from statvfs (stricter than needed, never too loose).
pub fn direct_alignment(dir: &Path) -> usize {
    if let Ok(fd) = create_unlinked(dir, "align", 0) {
        let reported = dio_alignment(fd);
        sys::close(fd);
        if let Some(a) = reported {
            return a;
        }
    }
    let Ok(c) = CString::new(dir.as_os_str().as_bytes()) else {
        return 4096;
    };
    // SAFETY: a zeroed statvfs is valid output space.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and our struct.
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return 4096;
    }
    (s.f_bsize as usize).clamp(512, 4096)
}

/// The O_DIRECT offset alignment the kernel reports for an open file.
fn dio_alignment(fd: RawFd) -> Option<usize> {
    // SAFETY: a zeroed statx is valid output space.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: our descriptor, an empty path with AT_EMPTY_PATH, our struct.
    let r = unsafe {
        libc::statx(
            fd,
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut st,
        )
    };
    (r == 0 && st.stx_mask & libc::STATX_DIOALIGN != 0 && st.stx_dio_offset_align > 0)
        .then_some(st.stx_dio_offset_align as usize)
}

/// Bytes free to an unprivileged writer on the file system of `dir`.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    let c = CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: as in `direct_alignment`.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::statvfs(c.as_ptr(), &mut s) } == 0).then(|| s.f_bavail * s.f_frsize)
}

/// Check before anything runs that a test file can be made in `dir` with
/// `flags`: an unwritable directory or a file system refusing O_DIRECT is a
/// clear error now, not mid-run. The probe is created and unlinked at once.
pub fn probe_dir(dir: &Path, flags: libc::c_int) -> Result<(), String> {
    let fd = create_unlinked(dir, "probe", flags).map_err(|e| e.0)?;
    sys::close(fd);
    Ok(())
}

/// Whether `path` lies on an ext4 file system mounted without a journal.
/// There ext4 will not hand out an inode deleted less than a minute ago
/// (six while its inode table block is still dirty: without a journal a
/// crash could otherwise leave two files naming one inode), so each create
/// scans past every recently deleted inode of its group, reading its inode
/// table block: the cost of a create depends on what was deleted there in
/// the minute before, by this run or the one before it.
pub fn ext4_without_journal(path: &Path) -> bool {
    let Some(m) = mount_of(path) else {
        return false;
    };
    let (major, minor) = m.major_minor;
    let device = std::fs::read_link(format!("/sys/dev/block/{major}:{minor}"))
        .ok()
        .and_then(|l| l.file_name().map(|n| n.to_string_lossy().into_owned()));
    let journals: Vec<String> = std::fs::read_dir("/proc/fs/jbd2")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    unjournalled_ext4(&m.fs_type, device.as_deref(), &journals)
}

/// The rule of `ext4_without_journal`: jbd2 lists each journal it runs in
/// /proc/fs/jbd2 as `<device>-<journal inode>` (`vda-8`); an ext4 whose
/// device has none runs without one. An unknown device is not claimed.
fn unjournalled_ext4(fs_type: &str, device: Option<&str>, journals: &[String]) -> bool {
    let Some(device) = device else {
        return false;
    };
    fs_type == "ext4"
        && !journals.iter().any(|j| {
            j.strip_prefix(device)
                .is_some_and(|rest| rest.starts_with('-'))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::io::scratch_parent;

    #[test]
    fn an_ext4_is_unjournalled_when_jbd2_lists_no_journal_of_its_device() {
        let j = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(unjournalled_ext4("ext4", Some("vda"), &j(&[])));
        assert!(!unjournalled_ext4("ext4", Some("vda"), &j(&["vda-8"])));
        // Another device's journal (vda1's, or a name vda is a prefix of).
        assert!(unjournalled_ext4(
            "ext4",
            Some("vda"),
            &j(&["vdb-8", "vda1-8"])
        ));
        assert!(!unjournalled_ext4("xfs", Some("vda"), &j(&[])));
        assert!(!unjournalled_ext4("ext4", None, &j(&[])));
    }

    #[test]
    fn the_mount_of_a_path_and_its_alignment_are_found() {
        assert!(mount_of(Path::new("/")).is_some());
        let a = direct_alignment(&scratch_parent());
        assert!(a.is_power_of_two() && (1..=4096).contains(&a), "{a}");
    }
}
