//! What the file and disk I/O families (`io`, `io_copy`, `io_load`) share:
//! the run options that say where they write (`--dir`, or a whole block
//! device named twice with `--device` and `--destroy-data-on`;
//! `--drop-caches`), declared here and checked into a `Target` from the
//! run's context; which file system and device that is, the test file
//! (created and unlinked at once, so nothing outlives the process even on
//! SIGKILL), the fixed seeded offset sequences (one sequence on every
//! machine, seed 004), the sync modes and their open flags, the page-cache
//! probe behind the "measures memory" warning, dropping the page cache,
//! per-operation latency, and the io_uring submission path for queue
//! depths beyond one.

use std::ffi::CString;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hdrhistogram::Histogram;
use touchstone_harness::clock::now_ns;
use touchstone_harness::{BenchError, Fallible};

use super::block_device::{self, Claim};
pub use super::block_device::{mounts, Mount};
use super::memory::Rng;
use super::sys::{self, errno};
use super::zipf::{unit, Zipf};
use crate::family::{Held, OptionValue, RunCheck, RunContext, RunOption};
use crate::params::{Kind, Param};

/// The seed of every random offset sequence: the same blocks in the same
/// order on every machine, so that results compare (seed 004).
pub const SEED: u64 = 0x0004_d15c_0f15_5eed;
/// The Zipf exponent of the `zipf` pattern (fio's `random_distribution=zipf:1.2`).
pub const ZIPF_S: f64 = 1.2;

// ---------------------------------------------------------------- target

/// Where the I/O families write, as the run's options chose (`--dir`,
/// `--device` with `--destroy-data-on`, `--drop-caches`), checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Target {
    /// `--dir`: the directory the test files go in (default: scratch).
    pub dir: Option<PathBuf>,
    /// `--device`, accepted only when `--destroy-data-on` names the same one.
    pub device: Option<PathBuf>,
    /// `--drop-caches`: drop the page cache before every interval (root).
    pub drop_caches: bool,
}

/// `--dir PATH`.
pub const DIR: RunOption = RunOption {
    name: "dir",
    value: OptionValue::Path("PATH"),
    help: "the directory the test files go in (default: the scratch directory); nothing is written elsewhere",
    defaults: &[],
    check: Some(&TARGET_CHECK),
};

/// `--device DEV`.
pub const DEVICE: RunOption = RunOption {
    name: "device",
    value: OptionValue::Path("DEV"),
    help: "a whole block device to measure instead of files (io; io_copy and io_load refuse it); its data is destroyed, so --destroy-data-on must name the same device",
    defaults: &[],
    check: Some(&TARGET_CHECK),
};

/// `--destroy-data-on DEV`.
pub const DESTROY_DATA_ON: RunOption = RunOption {
    name: "destroy-data-on",
    value: OptionValue::Path("DEV"),
    help: "the device whose data may be destroyed: must equal --device",
    defaults: &[],
    check: Some(&TARGET_CHECK),
};

/// `--drop-caches`.
pub const DROP_CACHES: RunOption = RunOption {
    name: "drop-caches",
    value: OptionValue::Flag,
    help: "write back and drop the page cache before every timed interval (needs root), so buffered reads reach the storage",
    defaults: &[],
    check: Some(&TARGET_CHECK),
};

/// The run options of the families that write test files: where they write.
pub const TARGET_OPTIONS: &[RunOption] = &[DIR, DEVICE, DESTROY_DATA_ON, DROP_CACHES];

/// The check of the four target options, once for a run.
pub const TARGET_CHECK: RunCheck = RunCheck {
    name: "the I/O target",
    check: check_target,
};

/// The run's target for the I/O families, as its options give it:
/// writing to a device needs both flags naming the same block device (for
/// a build, claimed by the run's check), `--dir` a directory,
/// `--drop-caches` root. Read again by each build, so that what changed
/// since the run's check is seen.
pub fn target(ctx: &RunContext) -> Result<Target, String> {
    let target = options_target(ctx)?;
    if let Some(dev) = &target.device {
        // Never written without the claim the run took before anything
        // was built, which it holds until it ends.
        if !ctx.held::<Claim>().any(|c| c.device() == dev) {
            return Err(format!(
                "--device {}: not claimed for this run (its options were not checked: RunContext::check)",
                dev.display()
            ));
        }
    }
    Ok(target)
}

/// The check of the target options (`TARGET_CHECK`): the target as given,
/// and a device claimed for the whole run (`block_device::claim`: no
/// mount, swap or holder on it or any partition of it, and opened with
/// O_EXCL), which the run's context holds. A dry run is checked alike.
fn check_target(ctx: &RunContext) -> Result<Option<Held>, String> {
    let target = options_target(ctx)?;
    Ok(match target.device {
        Some(dev) => Some(Arc::new(block_device::claim(&dev)?)),
        None => None,
    })
}

/// The target the options give, checked but not claimed.
fn options_target(ctx: &RunContext) -> Result<Target, String> {
    let dir = ctx.path(&DIR).map(Path::to_path_buf);
    let drop_caches = ctx.flag(&DROP_CACHES);
    let device = match (ctx.path(&DEVICE), ctx.path(&DESTROY_DATA_ON)) {
        (None, None) => None,
        (Some(d), None) => {
            return Err(format!(
                "--device {}: writing to a device destroys its data; say so with --destroy-data-on {} as well",
                d.display(),
                d.display()
            ))
        }
        (None, Some(d)) => {
            return Err(format!(
                "--destroy-data-on {} without --device: name the device to measure with --device {}",
                d.display(),
                d.display()
            ))
        }
        (Some(d), Some(x)) => {
            let cd = d.canonicalize().map_err(|e| format!("--device {}: {e}", d.display()))?;
            let cx = x
                .canonicalize()
                .map_err(|e| format!("--destroy-data-on {}: {e}", x.display()))?;
            if cd != cx {
                return Err(format!(
                    "--device {} and --destroy-data-on {} name different devices ({} and {}); nothing was written",
                    d.display(),
                    x.display(),
                    cd.display(),
                    cx.display()
                ));
            }
            Some(cd)
        }
    };
    if device.is_some() && dir.is_some() {
        return Err("--dir and --device: choose one place to write".into());
    }
    if let Some(d) = &dir {
        if !d.is_dir() {
            return Err(format!("--dir {}: not a directory", d.display()));
        }
    }
    // SAFETY: geteuid has no preconditions.
    if drop_caches && unsafe { libc::geteuid() } != 0 {
        return Err("--drop-caches writes /proc/sys/vm/drop_caches, which needs root; run as root, or use mode:direct or a file larger than memory instead".into());
    }
    Ok(Target {
        dir,
        device,
        drop_caches,
    })
}

/// The I/O families' line about the run (`Family::run_note`): where they write.
pub fn target_note(ctx: &RunContext) -> String {
    target(ctx).map_or_else(|e| e, |t| describe_target(&t))
}

/// A point's block size and file size (`bs`, `size`), refused when the
/// file is smaller than one block.
pub fn block_and_size(p: &crate::params::Point) -> Result<(u64, u64), String> {
    let (bs, size) = (p.num("bs"), p.num("size"));
    if size < bs {
        return Err(format!(
            "size:{} is smaller than one block of bs:{}",
            p.text("size"),
            p.text("bs")
        ));
    }
    Ok((bs, size))
}

/// The run's target for a family that works on files (`io_copy`,
/// `io_load`): a device named with `--device` is refused, naming `io`.
pub fn file_target(ctx: &RunContext, family: &str, works_on: &str) -> Result<Target, String> {
    let target = target(ctx)?;
    match &target.device {
        Some(dev) => Err(format!(
            "{family} {works_on}: measure {} with io, or give --dir",
            dev.display()
        )),
        None => Ok(target),
    }
}

/// The directory whose file system a default run writes to: where the
/// harness makes its scratch directories.
pub fn scratch_parent() -> PathBuf {
    std::env::temp_dir()
}

// ------------------------------------------------- file system and device

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

/// One line for the user: where the I/O families of this run write.
pub fn describe_target(t: &Target) -> String {
    match (&t.device, &t.dir) {
        (Some(d), _) => format!(
            "I/O: raw block device {} (its data is overwritten)",
            d.display()
        ),
        (None, Some(d)) => format!("I/O: files in {} ({})", d.display(), describe_place(d)),
        (None, None) => {
            let s = scratch_parent();
            format!(
                "I/O: files in the scratch directory under {} ({}); --dir chooses another",
                s.display(),
                describe_place(&s)
            )
        }
    }
}

// ------------------------------------------------------------ sync modes

/// How writes reach the storage (and whether the page cache is used).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    Buffered,
    /// Buffered writes, then one fsync(2) per pass, timed apart.
    BufferedFsync,
    Osync,
    Dsync,
    Direct,
}

pub const SYNC_MODES: &[&str] = &["buffered", "buffered+fsync", "osync", "dsync", "direct"];

impl SyncMode {
    pub fn parse(s: &str) -> SyncMode {
        match s {
            "buffered+fsync" => SyncMode::BufferedFsync,
            "osync" => SyncMode::Osync,
            "dsync" => SyncMode::Dsync,
            "direct" => SyncMode::Direct,
            _ => SyncMode::Buffered,
        }
    }
    /// Flags added to open(2).
    pub fn open_flags(self) -> libc::c_int {
        match self {
            SyncMode::Buffered | SyncMode::BufferedFsync => 0,
            SyncMode::Osync => libc::O_SYNC,
            SyncMode::Dsync => libc::O_DSYNC,
            SyncMode::Direct => libc::O_DIRECT,
        }
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

/// Create a test file in `dir` and unlink it at once: it lives as long as
/// its descriptor, so nothing is left behind whatever ends the process.
pub fn create_unlinked(dir: &Path, what: &str, flags: libc::c_int) -> Fallible<RawFd> {
    let name = dir.join(format!(
        ".touchstone-{what}-{}-{:x}",
        std::process::id(),
        Rng::new(sys_nanos()).next()
    ));
    let c = sys::cstring(&name)?;
    // SAFETY: a NUL-terminated path.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC | flags,
            0o600,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        let why = match e.raw_os_error() {
            Some(libc::EINVAL) if flags & libc::O_DIRECT != 0 => format!(
                "mode:direct is unsupported here: the file system of {} ({}) refuses O_DIRECT ({e})",
                dir.display(),
                describe_place(dir)
            ),
            Some(libc::EROFS) | Some(libc::EACCES) | Some(libc::EPERM) => format!(
                "cannot write in {} ({}): {e}; choose a writable directory with --dir",
                dir.display(),
                describe_place(dir)
            ),
            Some(libc::ENOSPC) => format!(
                "the file system of {} ({}) is full: {e}",
                dir.display(),
                describe_place(dir)
            ),
            _ => format!("cannot create a test file in {}: {e}", dir.display()),
        };
        return Err(BenchError(why));
    }
    // SAFETY: the path we just created.
    unsafe { libc::unlink(c.as_ptr()) };
    Ok(fd)
}

fn sys_nanos() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: our timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 ^ (ts.tv_nsec as u64) << 20
}

/// Write `size` bytes of `buf`'s pattern to `fd` from offset 0 (the test
/// file's content), in chunks of `buf.len()`; a full file system is a
/// clear error naming it.
pub fn fill(fd: RawFd, size: u64, buf: &[u8], dir: &Path) -> Fallible {
    let mut off = 0u64;
    while off < size {
        let want = (size - off).min(buf.len() as u64) as usize;
        // SAFETY: writing from our buffer.
        let r = unsafe {
            libc::pwrite(
                fd,
                buf.as_ptr() as *const libc::c_void,
                want,
                off as libc::off_t,
            )
        };
        if r < 0 {
            return Err(write_error(dir, "writing the test file"));
        }
        off += r as u64;
    }
    Ok(())
}

/// A test file of `size` bytes in `dir`, unlinked at once, laid out as fio
/// lays out its files: written in blocks of the measurement's `block`,
/// written back, and its pages then dropped from the page cache
/// (POSIX_FADV_DONTNEED), so that the timed passes meet only the pages
/// their own pattern brings in. Why the block matters: the page cache keeps
/// a file in folios as large as the writes that made them (large folios,
/// ext4 since Linux 6.16); a file laid out in 1 MB writes and then
/// overwritten in 32 KB blocks costs about twice as much per write as one
/// whose folios the 32 KB writes made (docs/validation.md, I/O). Then
/// reopened through /proc with the mode's `flags` (O_DIRECT, O_SYNC…).
pub fn test_file(
    dir: &Path,
    what: &str,
    size: u64,
    flags: libc::c_int,
    block: u64,
) -> Fallible<RawFd> {
    let fd = create_unlinked(dir, what, 0)?;
    // Blocks under a page make page-sized folios all the same.
    let chunk = block.clamp(sys::page_size() as u64, 4 << 20) as usize;
    let laid = fill(fd, size, &vec![0x5au8; chunk], dir).and_then(|_| {
        // SAFETY: our descriptor.
        sys::check(unsafe { libc::fsync(fd) }, "fsync")?;
        // SAFETY: our descriptor; advice on clean pages of our own file.
        match unsafe { libc::posix_fadvise(fd, 0, size as libc::off_t, libc::POSIX_FADV_DONTNEED) }
        {
            0 => Ok(()),
            e => Err(BenchError(format!(
                "posix_fadvise(DONTNEED): {}",
                std::io::Error::from_raw_os_error(e)
            ))),
        }
    });
    if let Err(e) = laid {
        sys::close(fd);
        return Err(e);
    }
    reopen(fd, flags)
}

/// Reopen an unlinked file through /proc with the mode's extra open flags
/// (closing the first descriptor); with no flags, the same descriptor.
pub fn reopen(fd: RawFd, flags: libc::c_int) -> Fallible<RawFd> {
    if flags == 0 {
        return Ok(fd);
    }
    let path = sys::cstring(format!("/proc/self/fd/{fd}"));
    // SAFETY: a NUL-terminated path.
    let again =
        path.map(|p| unsafe { libc::open(p.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC | flags) });
    sys::close(fd);
    sys::check(again?, "reopen the test file with the mode's flags")
}

/// The error of a failed write, naming a full file system as such.
pub fn write_error(dir: &Path, doing: &str) -> BenchError {
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::ENOSPC) || e.raw_os_error() == Some(libc::EDQUOT) {
        BenchError(format!(
            "the file system of {} ({}) is full ({e}) {doing}; what was written is removed. Free space, use a smaller size:, or choose another --dir",
            dir.display(),
            describe_place(dir)
        ))
    } else {
        errno(doing)
    }
}

/// The fraction of the first `size` bytes of `fd` in the page cache
/// (mincore(2) of a mapping; no page is touched).
pub fn resident_fraction(fd: RawFd, size: u64) -> Option<f64> {
    if size == 0 {
        return None;
    }
    let len = size as usize;
    let p = super::scratch_file::map(fd, len).ok()?;
    let mut vec = vec![0u8; len.div_ceil(sys::page_size())];
    // SAFETY: our mapping and a vector of one byte per page.
    let r = unsafe { libc::mincore(p as *mut libc::c_void, len, vec.as_mut_ptr()) };
    super::scratch_file::unmap(p, len);
    (r == 0).then(|| vec.iter().filter(|&&b| b & 1 != 0).count() as f64 / vec.len() as f64)
}

/// The `prepare` of the I/O micro-benchmarks: with `--drop-caches`, drop
/// the page cache before every interval.
pub fn prepare_interval(drop: bool) -> Fallible {
    if drop {
        drop_caches()?;
    }
    Ok(())
}

/// Write back and drop the clean page cache, dentries and inodes (root).
pub fn drop_caches() -> Fallible {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(|e| {
        BenchError(format!(
            "--drop-caches: writing /proc/sys/vm/drop_caches: {e}"
        ))
    })
}

/// The `bs` parameter of the I/O families: from 512 B up to `max`.
pub const fn block_param(
    help: &'static str,
    max: u64,
    default: &'static [&'static str],
    quick: &'static [&'static str],
) -> Param {
    Param {
        name: "bs",
        help,
        kind: Kind::Size { min: 512, max },
        default,
        quick,
        positional: false,
    }
}

/// The `size` parameter of the I/O families: the bytes of one file (one
/// pass), from 512 B to 1 TB.
pub const fn size_param(
    help: &'static str,
    default: &'static [&'static str],
    quick: &'static [&'static str],
) -> Param {
    Param {
        name: "size",
        help,
        kind: Kind::Size {
            min: 512,
            max: 1 << 40,
        },
        default,
        quick,
        positional: false,
    }
}

// --------------------------------------------------------- offset sequences

/// The order in which blocks of a file are visited.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pattern {
    /// Block 0, 1, 2, … to the end.
    Seq,
    /// Every block once, in one fixed shuffled order.
    Rand,
    /// Blocks drawn (with repeats) from a normal distribution of byte
    /// offsets about `centre` with deviation `sigma`, folded into the file.
    Gauss { centre: u64, sigma: u64 },
    /// Blocks drawn (with repeats) by a Zipf law over block ranks (rank 0
    /// is block 0), exponent `ZIPF_S`.
    Zipf,
}

/// The fixed sequence of block offsets of one pass over a file of `size`
/// bytes in blocks of `bs`: `size / bs` offsets, the same on every machine.
pub fn offsets(pattern: Pattern, size: u64, bs: u64) -> Vec<u64> {
    let blocks = (size / bs).max(1) as usize;
    let mut rng = Rng::new(SEED);
    match pattern {
        Pattern::Seq => (0..blocks as u64).map(|b| b * bs).collect(),
        Pattern::Rand => {
            let mut v: Vec<u64> = (0..blocks as u64).map(|b| b * bs).collect();
            rng.shuffle(&mut v);
            v
        }
        Pattern::Gauss { centre, sigma } => (0..blocks)
            .map(|_| {
                // Box–Muller: one normal deviate from two uniform ones.
                let u1 = unit(&mut rng).max(f64::MIN_POSITIVE);
                let u2 = unit(&mut rng);
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let at = centre as f64 + sigma as f64 * z;
                let block = (at / bs as f64).floor();
                block.clamp(0.0, (blocks - 1) as f64) as u64 * bs
            })
            .collect(),
        Pattern::Zipf => {
            let z = Zipf::new(blocks, ZIPF_S).expect("at least one block, s > 0");
            (0..blocks)
                .map(|_| z.sample(&mut rng) as u64 * bs)
                .collect()
        }
    }
}

// ------------------------------------------------------ per-op latency

/// Upper bounds (µs) of the coarse latency histogram kept as extras; the
/// last bucket holds the rest.
pub const HIST_BOUNDS_US: [u64; 7] = [1, 4, 16, 64, 256, 1000, 4000];

/// The per-operation latency figures of a histogram, as extras: min,
/// median, mean, p99, max (µs) and the percentage of operations in each
/// coarse bucket.
pub fn latency_extras(h: &Histogram<u64>) -> Vec<(String, f64)> {
    if h.is_empty() {
        return Vec::new();
    }
    let us = |ns: u64| ns as f64 / 1e3;
    let mut v = vec![
        ("lat_min_us".to_string(), us(h.min())),
        ("lat_median_us".to_string(), us(h.value_at_quantile(0.5))),
        ("lat_mean_us".to_string(), h.mean() / 1e3),
        ("lat_p99_us".to_string(), us(h.value_at_quantile(0.99))),
        ("lat_max_us".to_string(), us(h.max())),
    ];
    let total = h.len() as f64;
    let mut below = 0u64;
    for b in HIST_BOUNDS_US {
        let upto = h.count_between(0, b * 1000 - 1);
        v.push((
            format!("hist_lt_{}", us_label(b)),
            100.0 * (upto - below) as f64 / total,
        ));
        below = upto;
    }
    let last = *HIST_BOUNDS_US.last().expect("bounds");
    v.push((
        format!("hist_ge_{}", us_label(last)),
        100.0 * (h.len() - below) as f64 / total,
    ));
    v
}

fn us_label(us: u64) -> String {
    if us >= 1000 {
        format!("{}ms", us / 1000)
    } else {
        format!("{us}us")
    }
}

// ------------------------------------------------------------- io_uring

/// Whether this kernel lets this process make an io_uring; the reason when not.
pub fn io_uring_refused() -> Option<String> {
    match io_uring::IoUring::new(2) {
        Ok(_) => None,
        Err(e) => {
            let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
                .map(|s| format!(" (kernel.io_uring_disabled = {})", s.trim()))
                .unwrap_or_default();
            Some(format!(
                "depth beyond 1 needs io_uring, which this kernel or its seccomp filter refuses: {e}{disabled}; use depth:1"
            ))
        }
    }
}

/// Blocks read or written through io_uring with up to `depth` in flight;
/// each block's latency is submission to completion.
pub struct Ring {
    ring: io_uring::IoUring,
    depth: usize,
    /// Submission time of the block in each slot.
    started: Vec<u64>,
}

impl Ring {
    pub fn new(depth: usize) -> Fallible<Ring> {
        let ring = io_uring::IoUring::new(depth.next_power_of_two() as u32)
            .map_err(|e| BenchError(format!("io_uring_setup: {e}")))?;
        Ok(Ring {
            ring,
            depth,
            started: vec![0; depth],
        })
    }

    /// One pass: every offset of `offs`, `bs` bytes each, slot k using
    /// `buf + k * bs`; up to `depth` in flight. As fio's defaults do
    /// (iodepth_batch_submit=1, iodepth_batch_complete_min=1): reap what
    /// has completed, submit one block as soon as a slot is free (one
    /// io_uring_enter each), and wait for a completion only when every
    /// slot is taken. Submitting the whole free batch and then waiting
    /// for one, as this loop did first, gave 13 % fewer IOPS on a virtio
    /// disk at depth 8 and a median 20 µs longer (docs/validation.md,
    /// I/O). Every completion must have moved the whole block.
    pub fn pass(
        &mut self,
        fd: RawFd,
        write: bool,
        buf: *mut u8,
        bs: usize,
        offs: &[u64],
        hist: &mut Histogram<u64>,
    ) -> Fallible {
        let mut next = 0usize;
        let mut in_flight = 0usize;
        let mut free: u64 = if self.depth >= 64 {
            u64::MAX
        } else {
            (1u64 << self.depth) - 1
        };
        while next < offs.len() || in_flight > 0 {
            let mut cq = self.ring.completion();
            if !cq.is_empty() {
                let done = now_ns();
                for c in cq.by_ref() {
                    let slot = c.user_data() as usize;
                    in_flight -= 1;
                    free |= 1u64 << slot;
                    if c.result() != bs as i32 {
                        return Err(BenchError(if c.result() < 0 {
                            format!(
                                "io_uring {}: {}",
                                if write { "write" } else { "read" },
                                std::io::Error::from_raw_os_error(-c.result())
                            )
                        } else {
                            format!("io_uring: short transfer of {} of {bs} bytes", c.result())
                        }));
                    }
                    let _ = hist.record(done.saturating_sub(self.started[slot]).max(1));
                }
            }
            // The completion queue gives its head back when dropped.
            drop(cq);
            let submitted = if next < offs.len() && in_flight < self.depth {
                let slot = free.trailing_zeros() as usize;
                // slot < depth, and the caller's buffer holds depth blocks.
                let p = buf.wrapping_add(slot * bs);
                let fdt = io_uring::types::Fd(fd);
                let e = if write {
                    io_uring::opcode::Write::new(fdt, p, bs as u32)
                        .offset(offs[next])
                        .build()
                } else {
                    io_uring::opcode::Read::new(fdt, p, bs as u32)
                        .offset(offs[next])
                        .build()
                };
                self.started[slot] = now_ns();
                // SAFETY: the buffer outlives the operation (we wait for
                // every completion before returning). The ring holds
                // depth entries or more and at most depth are in flight,
                // so there is room.
                unsafe { self.ring.submission().push(&e.user_data(slot as u64)) }
                    .map_err(|_| BenchError("io_uring: submission queue full".into()))?;
                free &= !(1u64 << slot);
                next += 1;
                in_flight += 1;
                self.ring.submit()
            } else if in_flight > 0 {
                self.ring.submit_and_wait(1)
            } else {
                Ok(0)
            };
            submitted.map_err(|e| BenchError(format!("io_uring_enter: {e}")))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_are_fixed_and_cover_what_they_should() {
        let (size, bs) = (4 << 20, 8 << 10);
        let seq = offsets(Pattern::Seq, size, bs);
        assert_eq!(seq.len(), 512);
        assert!(seq.windows(2).all(|w| w[1] == w[0] + bs));
        let mut rand = offsets(Pattern::Rand, size, bs);
        assert_eq!(rand, offsets(Pattern::Rand, size, bs), "seeded");
        assert_ne!(rand, seq);
        rand.sort();
        assert_eq!(rand, seq, "every block once");
        let g = offsets(
            Pattern::Gauss {
                centre: 2 << 20,
                sigma: 160 << 10,
            },
            size,
            bs,
        );
        let mean = g.iter().sum::<u64>() as f64 / g.len() as f64;
        assert!((mean - (2 << 20) as f64).abs() < 40e3, "mean {mean}");
        let within = g
            .iter()
            .filter(|&&o| o.abs_diff(2 << 20) <= 330 << 10)
            .count();
        assert!(within as f64 / g.len() as f64 > 0.9, "±2σ holds ~95 %");
        let z = offsets(Pattern::Zipf, size, bs);
        let zeros = z.iter().filter(|&&o| o == 0).count();
        assert!(zeros > z.len() / 10, "rank 0 is the most popular: {zeros}");
        assert!(z.iter().all(|&o| o % bs == 0 && o < size));
    }

    /// The test file is laid out and written back, then its pages leave the
    /// page cache, so a timed pass meets only the folios its own blocks make
    /// (tmpfs keeps its pages: it has nowhere else to keep them).
    #[test]
    fn test_files_leave_the_page_cache_after_layout() {
        let dir = tempfile::tempdir_in(scratch_parent()).unwrap();
        let size = 1 << 20;
        let fd = test_file(dir.path(), "layout", size, 0, 32 << 10).unwrap();
        let cached = resident_fraction(fd, size).unwrap();
        let mut got = vec![0u8; size as usize];
        // SAFETY: reading into our buffer from our descriptor.
        let r = unsafe { libc::pread(fd, got.as_mut_ptr() as *mut libc::c_void, got.len(), 0) };
        sys::close(fd);
        assert_eq!(r, size as isize);
        assert!(got.iter().all(|&b| b == 0x5a), "laid out in full");
        match mount_of(dir.path()).map(|m| m.fs_type) {
            Some(fs) if fs == "tmpfs" || fs == "ramfs" => eprintln!("{fs}: pages stay"),
            _ => assert!(cached < 0.1, "{:.0} % still cached", cached * 100.0),
        }
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "unlinked"
        );
    }

    /// Through the ring, every block goes to its own offset, each once,
    /// with no more than `depth` in flight, and each completion is
    /// recorded once; blocks not in the sequence are not touched.
    #[test]
    fn the_ring_writes_each_block_at_its_offset() {
        if let Some(why) = io_uring_refused() {
            crate::testing::skip::not_supported_here(&why);
            return;
        }
        let bs = 4096usize;
        let dir = tempfile::tempdir_in(scratch_parent()).unwrap();
        let fd = create_unlinked(dir.path(), "ring", 0).unwrap();
        // SAFETY: our descriptor.
        assert_eq!(unsafe { libc::ftruncate(fd, 64 * bs as libc::off_t) }, 0);
        let mut offs: Vec<u64> = (0..64).step_by(2).map(|b| b * bs as u64).collect();
        Rng::new(SEED).shuffle(&mut offs);
        let depth = 4;
        let mut buf =
            super::super::memory::Buf::new(bs * depth, super::super::memory::Pages::Default)
                .unwrap();
        buf.words().fill(0xabab_abab_abab_abab);
        let mut hist = touchstone_results::curve::latency_histogram();
        let mut ring = Ring::new(depth).unwrap();
        ring.pass(fd, true, buf.ptr(), bs, &offs, &mut hist)
            .unwrap();
        ring.pass(fd, true, buf.ptr(), bs, &offs, &mut hist)
            .unwrap();
        assert_eq!(hist.len(), 2 * offs.len() as u64, "each completion once");
        let mut file = vec![0u8; 64 * bs];
        // SAFETY: reading into our buffer from our descriptor.
        let r = unsafe { libc::pread(fd, file.as_mut_ptr() as *mut libc::c_void, file.len(), 0) };
        sys::close(fd);
        assert_eq!(r, file.len() as isize);
        for (b, block) in file.chunks(bs).enumerate() {
            let want = if b % 2 == 0 { 0xab } else { 0 };
            assert!(block.iter().all(|&x| x == want), "block {b}");
        }
    }

    #[test]
    fn the_mount_of_a_path_and_its_alignment_are_found() {
        assert!(mount_of(Path::new("/")).is_some());
        let a = direct_alignment(&scratch_parent());
        assert!(a.is_power_of_two() && (1..=4096).contains(&a), "{a}");
    }

    #[test]
    fn device_flags_must_both_name_one_unmounted_device() {
        let ctx = |device: Option<&str>, destroy: Option<&str>| {
            let mut c = RunContext::new(false);
            if let Some(d) = device {
                c = c.with(&DEVICE, d);
            }
            if let Some(d) = destroy {
                c = c.with(&DESTROY_DATA_ON, d);
            }
            c
        };
        let e = target(&ctx(Some("/dev/null"), None)).unwrap_err();
        assert!(e.contains("--destroy-data-on"), "{e}");
        let e = target(&ctx(None, Some("/dev/null"))).unwrap_err();
        assert!(e.contains("without --device"), "{e}");
        let e = target(&ctx(Some("/dev/null"), Some("/dev/zero"))).unwrap_err();
        assert!(e.contains("different devices"), "{e}");
        // Checked as the run's options are (`RunContext::check`), which
        // claims the device: /dev/null is no block device.
        let e = check_target(&ctx(Some("/dev/null"), Some("/dev/null"))).unwrap_err();
        assert!(e.contains("not a block device"), "{e}");
        let e = check_target(&ctx(Some("/dev/null"), None)).unwrap_err();
        assert!(e.contains("--destroy-data-on"), "{e}");
        // A build never gets a device the run has not claimed.
        let e = target(&ctx(Some("/dev/null"), Some("/dev/null"))).unwrap_err();
        assert!(e.contains("not claimed"), "{e}");
        assert_eq!(target(&ctx(None, None)), Ok(Target::default()));
        assert!(check_target(&ctx(None, None)).unwrap().is_none());
    }

    #[test]
    fn latency_extras_bucket_every_operation() {
        let mut h = touchstone_results::curve::latency_histogram();
        for ns in [500, 2_000, 3_000, 100_000, 10_000_000] {
            h.record(ns).unwrap();
        }
        let x = latency_extras(&h);
        let total: f64 = x
            .iter()
            .filter(|(k, _)| k.starts_with("hist_"))
            .map(|(_, v)| v)
            .sum();
        assert!((total - 100.0).abs() < 1e-9);
        assert!(x.len() <= touchstone_harness::bench::MAX_EXTRAS - 3);
    }
}
