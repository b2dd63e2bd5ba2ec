//! `io --device` never writes over a device in use (issue 25), on loop
//! devices made from image files here (root; skipped, saying why, when not
//! root, and a failure under CI): a disk whose partition is mounted, a
//! mounted or swap device, a device another program holds exclusively —
//! each refused, naming what uses it, with `--dry-run` as well, and the
//! disk, its mounted file system and the store unchanged; and a device in
//! use by a run is claimed for the whole run. Every loop device, mount and
//! swap area is removed by a guard, also when a test fails.

use std::ffi::CString;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{is_root, not_supported_here, text, unavailable, Sandbox};
use crate::imports::{document, import_file, stored};

/// Whether loop devices can be made here: root and the tools; if not,
/// says why (a failure under CI).
fn loop_devices_usable(tools: &[&str]) -> bool {
    if !is_root() {
        unavailable("loop devices need root");
        return false;
    }
    for tool in ["losetup", "mount", "umount"].iter().chain(tools) {
        if let Err(e) = Command::new(tool).arg("--version").output() {
            unavailable(&format!("{tool} cannot be run: {e}"));
            return false;
        }
    }
    true
}

/// A loop device over an image file, with what the test mounted on it and
/// whether it is swap; all undone when dropped, also when a test fails.
struct LoopDevice {
    dev: String,
    mounted: Vec<PathBuf>,
    swap: bool,
}

impl LoopDevice {
    fn attach(image: &Path, scan_partitions: bool) -> LoopDevice {
        let mut c = Command::new("losetup");
        c.args(["-f", "--show"]);
        if scan_partitions {
            c.arg("-P");
        }
        let o = c.arg(image).output().unwrap();
        assert!(o.status.success(), "losetup: {}", text(&o));
        LoopDevice {
            dev: String::from_utf8(o.stdout).unwrap().trim().to_string(),
            mounted: Vec::new(),
            swap: false,
        }
    }

    fn mount(&mut self, node: &str, at: &Path) {
        std::fs::create_dir_all(at).unwrap();
        let o = Command::new("mount").arg(node).arg(at).output().unwrap();
        assert!(o.status.success(), "mount {node}: {}", text(&o));
        self.mounted.push(at.to_path_buf());
    }

    fn unmount_all(&mut self) {
        while let Some(m) = self.mounted.pop() {
            let _ = Command::new("umount").arg(&m).status();
        }
    }

    /// Made swap (its first sector marked first: the kernel lets no one
    /// open a swap device for writing).
    fn swap_on(&mut self) {
        run_ok(Command::new("mkswap").arg(&self.dev));
        write_sentinel(&self.dev);
        run_ok(Command::new("swapon").arg(&self.dev));
        self.swap = true;
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        self.unmount_all();
        if self.swap {
            let _ = Command::new("swapoff").arg(&self.dev).status();
        }
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

fn run_ok(c: &mut Command) {
    let o = c.output().unwrap();
    assert!(o.status.success(), "{c:?}: {}", text(&o));
}

/// A sparse image file of `mib` MiB in the sandbox.
fn image(s: &Sandbox, mib: u64) -> PathBuf {
    let p = s.path("disk.img");
    std::fs::File::create(&p)
        .unwrap()
        .set_len(mib << 20)
        .unwrap();
    p
}

/// An MBR partition table: Linux partitions at (first sector, sectors).
fn write_partition_table(image: &Path, parts: &[(u32, u32)]) {
    let mut mbr = [0u8; 512];
    for (i, (start, count)) in parts.iter().enumerate() {
        let e = 446 + 16 * i;
        mbr[e + 4] = 0x83;
        mbr[e + 8..e + 12].copy_from_slice(&start.to_le_bytes());
        mbr[e + 12..e + 16].copy_from_slice(&count.to_le_bytes());
    }
    mbr[510..].copy_from_slice(&[0x55, 0xaa]);
    let mut f = std::fs::OpenOptions::new().write(true).open(image).unwrap();
    f.write_all(&mbr).unwrap();
}

/// The first 1 KiB of a device: what a refused write would have hit first,
/// and what no file system or swap area writes (ext4 keeps its superblock,
/// which it updates while mounted, from 1 KiB on; a partition table lies in
/// the first sector).
fn head(dev: &str) -> Vec<u8> {
    let mut f = std::fs::File::open(dev).unwrap();
    let mut b = vec![0u8; 1024];
    f.read_exact(&mut b).unwrap();
    b
}

/// Mark the first sector with a pattern no refused write leaves.
fn write_sentinel(dev: &str) {
    let mut f = std::fs::OpenOptions::new().write(true).open(dev).unwrap();
    f.seek(SeekFrom::Start(0)).unwrap();
    f.write_all(&b"touchstone sentinel ".repeat(25)[..500])
        .unwrap();
    f.sync_all().unwrap();
}

/// A store with one imported run.
fn store_with_a_run() -> Sandbox {
    let s = Sandbox::new();
    let o = import_file(&s, "a.json", &document("00000000000000aa", "a"));
    assert!(o.status.success(), "{}", text(&o));
    s
}

/// `io` on `dev` is refused, as a run and as a dry run, with a message
/// holding `says`; the device's first bytes, `kept` (a file on a mounted
/// file system, if any) and the store unchanged.
fn refused(s: &Sandbox, dev: &str, says: &str, kept: Option<&Path>) {
    let before = (head(dev), stored(s), std::fs::read(s.db()).unwrap());
    for dry in [false, true] {
        let mut args = vec![
            "run",
            "io/write/size:64k/bs:8k",
            "--device",
            dev,
            "--destroy-data-on",
            dev,
        ];
        if dry {
            args.push("--dry-run");
        }
        let o = s.run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
        assert!(!text(&o).contains("MB/s"), "{}", text(&o));
    }
    assert!(head(dev) == before.0, "{dev}: its first bytes changed");
    assert_eq!(stored(s), before.1);
    assert_eq!(std::fs::read(s.db()).unwrap(), before.2);
    if let Some(k) = kept {
        assert_eq!(std::fs::read_to_string(k).unwrap(), "kept");
    }
}

#[test]
fn a_disk_whose_partition_is_mounted_is_refused_naming_the_partition() {
    if !loop_devices_usable(&["mkfs.ext4"]) {
        return;
    }
    let s = store_with_a_run();
    let img = image(&s, 64);
    write_partition_table(&img, &[(2048, 40960), (43008, 88064)]);
    let mut disk = LoopDevice::attach(&img, true);
    let p1 = format!("{}p1", disk.dev);
    let appears = |p: &str| {
        let deadline = Instant::now() + Duration::from_secs(3);
        while !Path::new(p).exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        Path::new(p).exists()
    };
    // A kernel built without partition-table parsers (this VM's) makes no
    // partitions at `losetup -P`; partx reads the table in user space and
    // declares them through BLKPG, which such a kernel still takes.
    if !appears(&p1) {
        let _ = Command::new("partx").args(["-a", &disk.dev]).status();
    }
    if !appears(&p1) {
        let config = Command::new("zcat").arg("/proc/config.gz").output();
        let no_mbr = config.is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout).contains("# CONFIG_MSDOS_PARTITION is not set")
        });
        // A kernel built without partition tables cannot show the case;
        // anything else that keeps the partition from appearing is a failure under CI.
        if no_mbr {
            not_supported_here(
                "this kernel reads no MBR partition tables (CONFIG_MSDOS_PARTITION is not set)",
            );
        } else {
            unavailable(&format!("losetup -P found no partition on {}", disk.dev));
        }
        return;
    }
    run_ok(Command::new("mkfs.ext4").args(["-q", &p1]));
    let m = s.path("m");
    disk.mount(&p1, &m);
    std::fs::write(m.join("kept.txt"), "kept").unwrap();
    let m = m.canonicalize().unwrap();
    let says = format!("{p1} is mounted on {}", m.display());
    refused(&s, &disk.dev, &says, Some(&m.join("kept.txt")));
    // The partition table is where it was.
    let table = head(&disk.dev);
    assert_eq!(&table[510..512], &[0x55, 0xaa]);
    // The other partition is not in use: a dry run on it is accepted.
    let p2 = format!("{}p2", disk.dev);
    let o = s.run(&[
        "run",
        "io/write/size:64k/bs:8k",
        "--device",
        &p2,
        "--destroy-data-on",
        &p2,
        "--dry-run",
    ]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn a_mounted_or_swap_device_is_refused_naming_its_use() {
    if !loop_devices_usable(&["mkfs.ext4", "mkswap", "swapon", "swapoff"]) {
        return;
    }
    let s = store_with_a_run();
    let img = image(&s, 64);
    let mut disk = LoopDevice::attach(&img, false);
    run_ok(Command::new("mkfs.ext4").args(["-q", &disk.dev]));
    write_sentinel(&disk.dev);
    let m = s.path("m");
    disk.mount(&disk.dev.clone(), &m);
    std::fs::write(m.join("kept.txt"), "kept").unwrap();
    let m = m.canonicalize().unwrap();
    let says = format!("{} is mounted on {} (ext4)", disk.dev, m.display());
    refused(&s, &disk.dev, &says, Some(&m.join("kept.txt")));

    disk.unmount_all();
    disk.swap_on();
    let says = format!("{} is in use as swap", disk.dev);
    refused(&s, &disk.dev, &says, None);
}

#[test]
fn a_device_another_program_holds_exclusively_is_refused() {
    if !loop_devices_usable(&[]) {
        return;
    }
    let s = store_with_a_run();
    let img = image(&s, 16);
    let disk = LoopDevice::attach(&img, false);
    write_sentinel(&disk.dev);
    // As mkfs, or a mount in another mount namespace, would hold it.
    let held = open_exclusive(&disk.dev).expect("a fresh loop device can be claimed");
    refused(
        &s,
        &disk.dev,
        "the kernel refuses to let it be claimed",
        None,
    );
    // SAFETY: our descriptor.
    unsafe { libc::close(held) };
}

/// open(O_EXCL) of a block device: a claim, or the errno refusing it.
fn open_exclusive(dev: &str) -> Result<i32, i32> {
    let c = CString::new(dev).unwrap();
    // SAFETY: a NUL-terminated path; O_EXCL on a block device creates nothing.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_EXCL | libc::O_CLOEXEC) };
    if fd < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    } else {
        Ok(fd)
    }
}

/// Whether another process than this one has `dev` open.
fn held_by_another(dev: &str) -> bool {
    let me = std::process::id().to_string();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    procs.flatten().any(|p| {
        let name = p.file_name();
        let pid = name.to_string_lossy();
        pid.bytes().all(|b| b.is_ascii_digit())
            && pid != me
            && std::fs::read_dir(p.path().join("fd")).is_ok_and(|fds| {
                fds.flatten().any(|fd| {
                    std::fs::read_link(fd.path())
                        .is_ok_and(|l| l.as_os_str().as_bytes() == dev.as_bytes())
                })
            })
    })
}

#[test]
fn a_measured_device_is_claimed_for_the_whole_run() {
    if !loop_devices_usable(&[]) {
        return;
    }
    let s = Sandbox::new();
    let img = image(&s, 64);
    let disk = LoopDevice::attach(&img, false);
    let mut run = s.spawn([
        "run",
        "io/write/pattern:seq/bs:64k/size:4m",
        "-r",
        "5",
        "--no-store",
        "--device",
        &disk.dev,
        "--destroy-data-on",
        &disk.dev,
    ]);
    // While the run has the device open, nothing else can claim it.
    let (mut seen, mut claimed_meanwhile) = (0, 0);
    while run.try_wait().unwrap().is_none() {
        if held_by_another(&disk.dev) {
            match open_exclusive(&disk.dev) {
                Err(libc::EBUSY) => seen += 1,
                Err(e) => panic!("open {}: errno {e}", disk.dev),
                Ok(fd) => {
                    // SAFETY: our descriptor.
                    unsafe { libc::close(fd) };
                    if held_by_another(&disk.dev) {
                        claimed_meanwhile += 1;
                    }
                }
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let o = run.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        claimed_meanwhile, 0,
        "the device could be claimed {claimed_meanwhile} times while the run measured it \
         ({seen} times it could not)"
    );
    assert!(seen > 0, "the run was never seen holding the device");
}
