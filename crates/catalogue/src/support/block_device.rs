//! What uses a block device, and the guard in front of `io --device`.
//!
//! A device is written only when nothing uses it: not the device itself,
//! and not any of its partitions (a whole disk whose partition is mounted
//! is in use). Each is looked up where Linux says who uses it — the mount
//! table (/proc/self/mountinfo), swap (/proc/swaps), and the holders sysfs
//! lists for stacked devices (device-mapper, LVM, md RAID, bcache:
//! /sys/class/block/X/holders) — so the refusal names the user ("/dev/loop3p1
//! is mounted on /mnt/x"). What this process cannot see (a mount in another
//! mount namespace, a program holding the device exclusively) is caught by
//! the kernel itself: the device is then opened with O_EXCL, which fails
//! with EBUSY while anything has claimed it or a partition of it. That
//! descriptor is kept for the rest of the run (`Claim`), so nothing can
//! mount or claim the device while it is measured; the measuring processes
//! open it again without O_EXCL, which an exclusive claim allows.

use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::sys;

// ------------------------------------------------------------- mount table

/// One line of /proc/self/mountinfo.
#[derive(Debug, Clone)]
pub struct Mount {
    pub major_minor: (u32, u32),
    pub mount_point: PathBuf,
    pub fs_type: String,
    pub source: String,
}

/// The mounts this process sees.
pub fn mounts() -> Vec<Mount> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines().filter_map(parse_mountinfo_line).collect()
}

/// `36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw`
fn parse_mountinfo_line(line: &str) -> Option<Mount> {
    let (left, right) = line.split_once(" - ")?;
    let f: Vec<&str> = left.split(' ').collect();
    let (ma, mi) = f.get(2)?.split_once(':')?;
    let r: Vec<&str> = right.split(' ').collect();
    Some(Mount {
        major_minor: (ma.parse().ok()?, mi.parse().ok()?),
        mount_point: PathBuf::from(unescape_octal(f.get(4)?)),
        fs_type: r.first()?.to_string(),
        source: unescape_octal(r.get(1).unwrap_or(&"none")),
    })
}

/// mountinfo and /proc/swaps write space, tab, newline and backslash as \ooo.
fn unescape_octal(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 4], 8) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The swap areas in use (/proc/swaps: a header, then one per line).
fn swaps() -> Vec<PathBuf> {
    let text = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(|f| PathBuf::from(unescape_octal(f)))
        .collect()
}

// ------------------------------------------------------- device and parts

/// A block device or one of its partitions, as sysfs describes it.
#[derive(Debug, Clone, PartialEq)]
struct Node {
    /// Its device file (/dev/loop3p1).
    dev: PathBuf,
    major_minor: (u32, u32),
    /// The devices stacked on it, described ("dm-0 (device-mapper vg-data)").
    holders: Vec<String>,
}

/// The device `major_minor` and each of its partitions, read from the
/// sysfs mounted at `sys`; only the device (named `dev`) where sysfs does
/// not describe it.
fn nodes(sys: &Path, dev: &Path, major_minor: (u32, u32)) -> Vec<Node> {
    let (ma, mi) = major_minor;
    let Ok(dir) = std::fs::canonicalize(sys.join(format!("dev/block/{ma}:{mi}"))) else {
        return vec![Node {
            dev: dev.to_path_buf(),
            major_minor,
            holders: Vec::new(),
        }];
    };
    let mut found = vec![node(&dir).unwrap_or(Node {
        dev: dev.to_path_buf(),
        major_minor,
        holders: Vec::new(),
    })];
    let mut parts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    parts.sort();
    found.extend(
        parts
            .iter()
            .filter(|p| p.join("partition").exists())
            .filter_map(|p| node(p)),
    );
    found
}

/// One device's sysfs directory read: its name in /dev (uevent's
/// DEVNAME), number and holders.
fn node(dir: &Path) -> Option<Node> {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
    let uevent = read("uevent").unwrap_or_default();
    let name = uevent
        .lines()
        .find_map(|l| l.strip_prefix("DEVNAME="))
        .map(str::to_string)
        .or_else(|| Some(dir.file_name()?.to_string_lossy().into_owned()))?;
    let number = read("dev")?;
    let (ma, mi) = number.trim().split_once(':')?;
    let mut holders: Vec<String> = std::fs::read_dir(dir.join("holders"))
        .map(|r| {
            r.flatten()
                .map(|e| describe_holder(&e.path(), &e.file_name().to_string_lossy()))
                .collect()
        })
        .unwrap_or_default();
    holders.sort();
    Some(Node {
        dev: Path::new("/dev").join(name),
        major_minor: (ma.parse().ok()?, mi.parse().ok()?),
        holders,
    })
}

/// "dm-0 (device-mapper vg-data)", "md127 (md RAID)", or the bare name.
fn describe_holder(dir: &Path, name: &str) -> String {
    if let Ok(dm) = std::fs::read_to_string(dir.join("dm/name")) {
        format!("{name} (device-mapper {})", dm.trim())
    } else if dir.join("md").exists() {
        format!("{name} (md RAID)")
    } else {
        name.to_string()
    }
}

/// Whether `path` names the block device `major_minor` (a device file or
/// a link to one, such as /dev/mapper/x or /dev/disk/by-uuid/…).
fn is_device(path: &Path, major_minor: (u32, u32)) -> bool {
    std::fs::metadata(path).is_ok_and(|m| {
        m.file_type().is_block_device()
            && (libc::major(m.rdev()), libc::minor(m.rdev())) == major_minor
    })
}

/// Everything that uses the device or a partition of it, one sentence
/// each: mounts, swap, holders.
fn users(nodes: &[Node], mounts: &[Mount], swaps: &[PathBuf]) -> Vec<String> {
    let mut found = Vec::new();
    for n in nodes {
        let named = |p: &Path| p == n.dev || is_device(p, n.major_minor);
        for m in mounts {
            if m.major_minor == n.major_minor || named(Path::new(&m.source)) {
                let said = format!(
                    "{} is mounted on {} ({})",
                    n.dev.display(),
                    m.mount_point.display(),
                    m.fs_type
                );
                if !found.contains(&said) {
                    found.push(said);
                }
            }
        }
        if swaps.iter().any(|s| named(s)) {
            found.push(format!("{} is in use as swap", n.dev.display()));
        }
        for h in &n.holders {
            found.push(format!("{} is held by {h}", n.dev.display()));
        }
    }
    found
}

// ------------------------------------------------------------------ guard

/// A block device checked unused and claimed exclusively (O_EXCL): while
/// this lives, nothing can mount it, a partition of it, or claim it.
#[derive(Debug)]
pub struct Claim {
    /// The device claimed, as `claim` was given it.
    device: PathBuf,
    _fd: OwnedFd,
}

impl Claim {
    pub fn device(&self) -> &Path {
        &self.device
    }
}

/// Refuse `dev` (a resolved path) unless it is a block device nothing
/// uses — itself or any partition — naming what uses it; then claim it.
pub fn claim(dev: &Path) -> Result<Claim, String> {
    let say = |what: String| format!("--device {}: {what}", dev.display());
    let md = std::fs::metadata(dev).map_err(|e| say(e.to_string()))?;
    if !md.file_type().is_block_device() {
        return Err(say("not a block device".into()));
    }
    let major_minor = (libc::major(md.rdev()), libc::minor(md.rdev()));
    let nodes = nodes(Path::new("/sys"), dev, major_minor);
    let users = users(&nodes, &mounts(), &swaps());
    if !users.is_empty() {
        return Err(say(format!(
            "in use: {}; refusing to write to a device in use (nothing was written)",
            users.join("; ")
        )));
    }
    let c = sys::cstring(dev).map_err(|e| say(e.0))?;
    // SAFETY: a NUL-terminated path; O_EXCL on a block device claims it
    // (open(2)), it creates nothing.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_EXCL | libc::O_CLOEXEC) };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(say(match e.raw_os_error() {
            Some(libc::EBUSY) => format!(
                "in use: the kernel refuses to let it be claimed ({e}): something this process \
                 cannot see holds it or a partition of it — a mount in another mount namespace, \
                 a device-mapper, RAID or bcache volume, or a program that opened it exclusively \
                 (mkfs, another touchstone); nothing was written"
            ),
            _ => e.to_string(),
        }));
    }
    // SAFETY: a descriptor just opened, owned from here on.
    Ok(Claim {
        device: dev.to_path_buf(),
        _fd: unsafe { OwnedFd::from_raw_fd(fd) },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_parse() {
        let m = parse_mountinfo_line(
            "36 35 98:0 / /mnt/my\\040disk rw,noatime master:1 - ext4 /dev/vda1 rw",
        )
        .unwrap();
        assert_eq!(m.major_minor, (98, 0));
        assert_eq!(m.mount_point, PathBuf::from("/mnt/my disk"));
        assert_eq!(m.fs_type, "ext4");
        assert_eq!(m.source, "/dev/vda1");
    }

    /// A sysfs tree as Linux lays one out for /dev/loop3 with two
    /// partitions, the second held by a device-mapper volume.
    fn fake_sysfs(root: &Path) {
        let disk = root.join("devices/virtual/block/loop3");
        let write = |p: PathBuf, text: &str| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write(disk.join("dev"), "7:3\n");
        write(disk.join("uevent"), "MAJOR=7\nMINOR=3\nDEVNAME=loop3\n");
        std::fs::create_dir_all(disk.join("holders")).unwrap();
        for (n, minor) in [(1, 259), (2, 260)] {
            let part = disk.join(format!("loop3p{n}"));
            write(part.join("partition"), &format!("{n}\n"));
            write(part.join("dev"), &format!("259:{minor}\n"));
            write(
                part.join("uevent"),
                &format!("DEVTYPE=partition\nDEVNAME=loop3p{n}\n"),
            );
            std::fs::create_dir_all(part.join("holders")).unwrap();
        }
        write(disk.join("loop3p2/holders/dm-0/dm/name"), "vg-data\n");
        std::fs::create_dir_all(root.join("dev/block")).unwrap();
        std::os::unix::fs::symlink(
            "../../devices/virtual/block/loop3",
            root.join("dev/block/7:3"),
        )
        .unwrap();
    }

    fn mount(major_minor: (u32, u32), point: &str, source: &str) -> Mount {
        Mount {
            major_minor,
            mount_point: point.into(),
            fs_type: "ext4".into(),
            source: source.into(),
        }
    }

    #[test]
    fn a_disk_is_in_use_when_any_partition_is_mounted_swap_or_held() {
        let sys = tempfile::tempdir().unwrap();
        fake_sysfs(sys.path());
        let found = nodes(sys.path(), Path::new("/dev/loop3"), (7, 3));
        let devs: Vec<_> = found.iter().map(|n| n.dev.clone()).collect();
        assert_eq!(
            devs,
            ["/dev/loop3", "/dev/loop3p1", "/dev/loop3p2"].map(PathBuf::from)
        );
        assert_eq!(found[1].major_minor, (259, 259));
        assert_eq!(found[2].holders, ["dm-0 (device-mapper vg-data)"]);

        let root = mount((254, 0), "/", "/dev/vda");
        let said = users(&found, std::slice::from_ref(&root), &[]);
        assert_eq!(
            said,
            ["/dev/loop3p2 is held by dm-0 (device-mapper vg-data)"]
        );

        // A mount of the first partition, by number and by name (btrfs
        // reports an anonymous number); a bind mount of it said once.
        let by_number = mount((259, 259), "/mnt/x", "/dev/loop3p1");
        let by_name = mount((0, 55), "/mnt/y", "/dev/loop3p1");
        let said = users(
            &found[..2],
            &[root.clone(), by_number.clone(), by_number, by_name],
            &[PathBuf::from("/dev/loop3")],
        );
        assert_eq!(
            said,
            [
                "/dev/loop3 is in use as swap",
                "/dev/loop3p1 is mounted on /mnt/x (ext4)",
                "/dev/loop3p1 is mounted on /mnt/y (ext4)",
            ]
        );

        // Where sysfs does not describe the device, the device itself is
        // still checked.
        let alone = nodes(sys.path(), Path::new("/dev/sdz"), (8, 240));
        assert_eq!(alone.len(), 1, "{alone:?}");
        assert_eq!(alone[0].dev, PathBuf::from("/dev/sdz"));
        let said = users(&alone, &[mount((8, 240), "/m", "x")], &[]);
        assert_eq!(said, ["/dev/sdz is mounted on /m (ext4)"]);
    }

    #[test]
    fn what_is_not_a_block_device_is_refused() {
        let e = claim(Path::new("/dev/null")).unwrap_err();
        assert!(e.contains("not a block device"), "{e}");
    }
}
