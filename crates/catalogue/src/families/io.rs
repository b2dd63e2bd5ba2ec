//! io: file-system and disk I/O by block size, access pattern and sync
//! mode (seed 004 section 5, lmbench's lmdd): read or write a file of a
//! fixed size in blocks of `bs`, sequentially, in one fixed shuffled order
//! (`rand`, every block once), or at blocks drawn from a Gaussian about the
//! file's centre or a Zipf law, from one seeded sequence identical on every
//! machine. Figures: MB/s (headline), IOPS, and each operation's latency
//! (min, median, mean, p99, max, and a coarse histogram) as extras; in
//! `buffered+fsync` the final fsync(2) of each pass is timed apart
//! (`fsync_ms`) and not in the headline.
//!
//! Why a micro-benchmark and not a workload: 004's lesson from AIM is that
//! an adaptive timer choosing how much to write made disc results
//! unrepeatable. Here one iteration is one whole pass of the fixed volume
//! (`size`) through the fixed sequence; the harness may run several passes
//! in an interval to keep clock error below 0.1 % (never fewer than one,
//! never a partial pass), and `buffered+fsync` runs exactly one pass per
//! interval so that each interval ends with its one fsync. The harness's
//! timing contract is unchanged: per-operation latency is read with two
//! vDSO clock reads around each operation (tens of ns, inside the timed
//! interval, a cost fio pays too) into a preallocated HDR histogram, and
//! the harness still times the interval as a whole. Parallel readers and
//! writers are `--parallel N`: N processes, each on its own file, all
//! running during every timed interval, their MB/s summed.
//!
//! Where: the scratch directory by default, `--dir`, or a whole block
//! device (`--device` with `--destroy-data-on`, offsets 0..size). Files are
//! unlinked as soon as they are created, so nothing outlives the process.
//! `depth:N` (N > 1) submits through io_uring and keeps N blocks in
//! flight as fio does with its defaults (submitted and not yet reaped: one
//! submission per free slot, one completion reaped when all are taken);
//! the time-weighted mean is measured (`depth_achieved`), and a point
//! below 90 % of N carries `depth-short`.

use std::os::fd::RawFd;
use std::path::PathBuf;

use hdrhistogram::Histogram;
use touchstone_harness::{BenchError, Context, Fallible, Shape};
use touchstone_results::model::IOPS;
use touchstone_results::{Measurement, Warning, WarningCode};

use crate::family::{Built, Family, RunContext};
use crate::params::{Param, Point};
use crate::support::io::{self, latency_extras, offsets, Pattern, Ring, SyncMode};
use crate::support::memory::{Buf, Pages};
use crate::support::sys::{self, errno};
use touchstone_harness::clock::now_ns;

/// Where one process's file lives.
#[derive(Debug, Clone)]
enum Place {
    /// The harness's scratch directory of this measurement.
    Scratch,
    Dir(PathBuf),
    Device(PathBuf),
}

pub struct Io {
    write: bool,
    mode: SyncMode,
    bs: usize,
    size: u64,
    depth: usize,
    /// One pass's offsets, made in the parent: the fixed sequence.
    offs: Vec<u64>,
    place: Place,
    drop_caches: bool,
    /// The directory written in (for messages); set in setup.
    dir: PathBuf,
    fd: RawFd,
    buf: Option<Buf>,
    ring: Option<Ring>,
    hist: Histogram<u64>,
    /// Every fsync of `buffered+fsync`, ns.
    fsyncs: Histogram<u64>,
    /// Page-cache residency of the file after the last interval (extras).
    resident: Option<f64>,
}

impl Io {
    /// One pass at depth 1: pread(2)/pwrite(2) of `bs` at each offset,
    /// each between two clock reads recorded in the histogram.
    #[inline]
    fn pass_sync(&mut self, p: *mut u8) -> Fallible {
        for &off in &self.offs {
            let t0 = now_ns();
            // SAFETY: our buffer of at least bs bytes.
            let r = unsafe {
                if self.write {
                    libc::pwrite(
                        self.fd,
                        p as *const libc::c_void,
                        self.bs,
                        off as libc::off_t,
                    )
                } else {
                    libc::pread(self.fd, p as *mut libc::c_void, self.bs, off as libc::off_t)
                }
            };
            let t1 = now_ns();
            if r != self.bs as isize {
                return Err(if r < 0 && self.write {
                    io::write_error(&self.dir, "writing a block")
                } else if r < 0 {
                    errno("pread")
                } else {
                    BenchError(format!("short transfer: {r} of {} bytes", self.bs))
                });
            }
            // Within the histogram's bounds; an out-of-range value is dropped.
            let _ = self.hist.record((t1 - t0).max(1));
        }
        Ok(())
    }
}

impl touchstone_harness::Benchmark for Io {
    fn setup(&mut self, ctx: &Context) -> Fallible {
        let flags = self.mode.open_flags();
        self.buf = Some(Buf::new(self.bs * self.depth, Pages::Default)?);
        match &self.place {
            Place::Device(dev) => {
                self.dir = dev.clone();
                let c = sys::cstring(dev)?;
                // SAFETY: a NUL-terminated path. The device was checked
                // unused and claimed (O_EXCL) by the run before it began
                // (`block_device::claim`); this open, not exclusive, is
                // what the claim allows.
                let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC | flags) };
                self.fd = sys::check(fd, "open the device")?;
            }
            Place::Scratch | Place::Dir(_) => {
                self.dir = match &self.place {
                    Place::Dir(d) => d.clone(),
                    _ => ctx.scratch.clone(),
                };
                self.fd = io::test_file(&self.dir, "io", self.size, flags, self.bs as u64)?;
            }
        }
        if self.depth > 1 {
            self.ring = Some(Ring::new(self.depth)?);
        }
        Ok(())
    }

    fn prepare(&mut self, _n: u64) -> Fallible {
        io::prepare_interval(self.drop_caches)
    }

    /// Timed: `n` passes over the fixed sequence of `size / bs` offsets,
    /// each block read or written with pread/pwrite (depth 1) or through
    /// io_uring with `depth` blocks in flight; around each block two clock
    /// reads and a histogram record (no allocation). The fsync of
    /// `buffered+fsync` is not here: it follows in `conclude`.
    fn run(&mut self, n: u64) -> Fallible {
        let p = self.buf.as_ref().expect("setup made the buffer").ptr();
        for _ in 0..n {
            match self.ring.as_mut() {
                Some(ring) => {
                    ring.pass(self.fd, self.write, p, self.bs, &self.offs, &mut self.hist)?
                }
                None => self.pass_sync(p)?,
            }
        }
        Ok(())
    }

    /// Untimed by the harness: `buffered+fsync`'s final fsync, timed here
    /// and kept apart.
    fn conclude(&mut self, _n: u64) -> Fallible {
        if self.mode == SyncMode::BufferedFsync && self.write {
            let t0 = now_ns();
            // SAFETY: our descriptor.
            sys::check(unsafe { libc::fsync(self.fd) }, "fsync")?;
            let _ = self.fsyncs.record((now_ns() - t0).max(1));
        }
        Ok(())
    }

    fn cleanup(&mut self) {
        sys::close_and_clear(&mut self.fd);
        self.ring = None;
        self.buf = None;
    }

    /// The latency figures of every block moved (warm-up passes included:
    /// the harness does not tell a benchmark which intervals it keeps),
    /// through the ring the mean number of blocks in flight
    /// (`depth_achieved`, time-weighted over the same passes), fsync
    /// apart, and how much of the file the page cache holds after
    /// the last interval (mincore; once, as it costs a pass over the
    /// file's page table).
    fn extras(&mut self) -> Vec<(String, f64)> {
        if !matches!(self.place, Place::Device(_)) && self.mode != SyncMode::Direct {
            self.resident = io::resident_fraction(self.fd, self.size);
        }
        let mut x = latency_extras(&self.hist);
        if let Some(d) = self.ring.as_ref().and_then(Ring::depth_achieved) {
            x.push(("depth_achieved".into(), d));
        }
        if !self.fsyncs.is_empty() {
            x.push((
                "fsync_ms".into(),
                self.fsyncs.value_at_quantile(0.5) as f64 / 1e6,
            ));
        }
        if let Some(r) = self.resident {
            x.push(("cached_fraction".into(), r));
        }
        x.truncate(16);
        x
    }
}

fn pattern_of(p: &Point) -> Result<Pattern, String> {
    Ok(match p.text("pattern") {
        "seq" => Pattern::Seq,
        "rand" => Pattern::Rand,
        "zipf" => Pattern::Zipf,
        _ => {
            let sigma = p.num("sigma");
            if sigma == 0 {
                return Err(
                    "sigma:0: a Gaussian needs a deviation above 0 (004 used 160k over 4m)".into(),
                );
            }
            Pattern::Gauss {
                centre: p.num("size") * p.num("centre") / 100,
                sigma,
            }
        }
    })
}

/// Device size in bytes (BLKGETSIZE64).
fn device_bytes(dev: &std::path::Path) -> Result<u64, String> {
    let c = sys::cstring(dev).map_err(|e| e.0)?;
    // SAFETY: a NUL-terminated path; read-only open to ask its size.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(format!(
            "--device {}: {}",
            dev.display(),
            std::io::Error::last_os_error()
        ));
    }
    let mut bytes: u64 = 0;
    // BLKGETSIZE64 = _IOR(0x12, 114, size_t)
    // SAFETY: the ioctl writes one u64.
    let r = unsafe { libc::ioctl(fd, 0x8008_1272, &mut bytes) };
    sys::close(fd);
    if r < 0 {
        return Err(format!(
            "--device {}: its size: {}",
            dev.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(bytes)
}

fn build(p: &Point, ctx: &RunContext) -> Result<Built, String> {
    let (bs, size) = io::block_and_size(p)?;
    let depth = p.num("depth") as usize;
    let mode = SyncMode::parse(p.text("mode"));
    let write = p.text("op") == "write";
    let pattern = pattern_of(p)?;
    if depth > 1 {
        if let Some(why) = io::io_uring_refused() {
            return Err(why);
        }
    }
    let target = io::target(ctx)?;
    let place = match (&target.device, &target.dir) {
        (Some(d), _) => Place::Device(d.clone()),
        (None, Some(d)) => Place::Dir(d.clone()),
        (None, None) => Place::Scratch,
    };
    let probe_dir = match &place {
        Place::Dir(d) => Some(d.clone()),
        Place::Scratch => Some(io::scratch_parent()),
        Place::Device(_) => None,
    };
    if mode == SyncMode::Direct {
        let align = match &probe_dir {
            Some(d) => io::direct_alignment(d),
            None => 512,
        } as u64;
        if !bs.is_multiple_of(align) {
            return Err(format!(
                "mode:direct needs blocks that are multiples of the logical block ({align} bytes here); bs:{} is not",
                p.text("bs")
            ));
        }
    }
    match (&place, &probe_dir) {
        (_, Some(d)) => {
            // Unwritable, or refusing O_DIRECT: say so now.
            io::probe_dir(d, mode.open_flags() & libc::O_DIRECT)?;
            if let Some(free) = io::free_bytes(d) {
                if free < size {
                    return Err(format!(
                        "size:{} does not fit in {} ({}): {} MB free",
                        p.text("size"),
                        d.display(),
                        io::describe_place(d),
                        free / 1_000_000
                    ));
                }
            }
        }
        (Place::Device(dev), None) => {
            let have = device_bytes(dev)?;
            if have < size {
                return Err(format!(
                    "size:{} is larger than {} ({have} bytes)",
                    p.text("size"),
                    dev.display()
                ));
            }
        }
        _ => {}
    }
    let shape = Shape::bandwidth(size as f64);
    let shape = if mode == SyncMode::BufferedFsync && write {
        // One pass per interval: each interval ends with its one fsync.
        shape.with_fixed_iterations(1)
    } else {
        shape
    };
    // A file is written (and fsynced) in each process's setup; a device is not.
    let on_device = matches!(place, Place::Device(_));
    Ok(Built::new(
        Io {
            write,
            mode,
            bs: bs as usize,
            size,
            depth,
            offs: offsets(pattern, size, bs),
            place,
            drop_caches: target.drop_caches,
            dir: PathBuf::new(),
            fd: -1,
            buf: None,
            ring: None,
            hist: touchstone_results::curve::latency_histogram(),
            fsyncs: touchstone_results::curve::latency_histogram(),
            resident: None,
        },
        shape,
    )
    .with_iteration_ns(pass_ns(mode, write, size / bs, depth as u64))
    .with_setup_bytes(if on_device { 0 } else { size })
    .with_synced_file(!on_device))
}

/// About how long one pass takes, for the estimate (`Cost`): its blocks
/// at what one took on the development VM's virtual disk (load 3–5):
/// buffered 1.4–2 µs (4 MiB in 512 B blocks, read and written); direct
/// 60 µs (4 KiB random reads, 245 ms for 4 passes of 1,024); O_SYNC and
/// O_DSYNC writes 1.2–3.8 ms (5 rounds of 512 8 KiB writes: 12.6 s and
/// 40.8 s in two runs 20 minutes apart; the virtual disk's sync latency
/// moves with its host), 2 ms taken. Direct I/O at depth N overlaps N
/// blocks.
fn pass_ns(mode: SyncMode, write: bool, blocks: u64, depth: u64) -> u64 {
    let per_block = match mode {
        SyncMode::Direct => 60_000 / depth.max(1),
        SyncMode::Osync | SyncMode::Dsync if write => 2_000_000,
        _ => 1_500,
    };
    blocks.saturating_mul(per_block)
}

/// Most of the file in the page cache after a buffered read: the figure
/// measures memory, not the storage.
pub const CACHED_LIMIT: f64 = 0.5;

/// What `io` adds to each measurement: IOPS from the headline MB/s (so
/// the two always agree), the page-cache warning and the depth warning.
fn annotate(m: &mut Measurement, ctx: &RunContext) {
    if let Some(bs) = m.params.get("bs").and_then(|b| parse_size(b)) {
        m.extra.insert(IOPS.into(), m.value() * 1e6 / bs as f64);
    }
    m.warnings
        .extend(page_cache_warning(m, ctx.flag(&io::DROP_CACHES)));
    m.warnings.extend(depth_warning(m));
}

/// Below this share of `depth:N` in flight on average, a point says so.
pub const DEPTH_SHORT: f64 = 0.9;

/// The depth warning of one `io` measurement through io_uring: fewer than
/// 90 % of the `depth:N` blocks in flight on average (`depth_achieved`).
pub fn depth_warning(m: &Measurement) -> Option<Warning> {
    let depth: f64 = m.params.get("depth")?.parse().ok()?;
    let achieved = *m.extra.get("depth_achieved")?;
    (achieved < DEPTH_SHORT * depth).then(|| {
        Warning::new(
            WarningCode::DepthShort,
            format!(
                "{achieved:.1} blocks in flight on average, not the {depth} of depth:{depth}: the figures describe a shallower queue"
            ),
        )
    })
}

fn parse_size(text: &str) -> Option<u64> {
    PARAMS
        .iter()
        .find(|p| p.name == "bs")?
        .parse(text)
        .ok()
        .map(|v| v.num)
}

/// The page-cache warning of one `io` measurement: a buffered read of a
/// file mostly in the page cache (mincore(2) after the last interval),
/// unless the run dropped the caches before each interval.
pub fn page_cache_warning(m: &Measurement, drop_caches: bool) -> Option<Warning> {
    let read = m.params.get("op").map(String::as_str) == Some("read");
    let direct = m.params.get("mode").map(String::as_str) == Some("direct");
    let cached = *m.extra.get("cached_fraction")?;
    (read && !direct && cached >= CACHED_LIMIT && !drop_caches).then(|| {
        Warning::new(
            WarningCode::PageCache,
            format!(
                "{:.0} % of the file was in the page cache: this buffered read measures memory, not the disk",
                cached * 100.0
            ),
        )
    })
}

const PARAMS: &[Param] = &[
    Param::choice("op", &["read", "write"]).positional().help("read or write"),
    Param::choice("pattern", &["seq", "rand", "gauss", "zipf"])
        .measured(&["seq", "rand"])
        .help("seq; rand (every block once, one fixed shuffled order); gauss (about centre, deviation sigma); zipf (s = 1.2 over block ranks)"),
    io::block_param(
        "block size of each read or write",
        4 << 20,
        &["512", "8k", "32k", "1m"],
        &["8k", "1m"],
    ),
    Param::choice("mode", io::SYNC_MODES)
        .measured(&["buffered"])
        .help("buffered; buffered+fsync (one final fsync per pass, timed apart as fsync_ms); osync (O_SYNC); dsync (O_DSYNC); direct (O_DIRECT, aligned buffers)"),
    Param::int("depth", 1, 64)
        .measured(&["1"])
        .help("blocks in flight: 1 is pread/pwrite; more submits through io_uring"),
    io::size_param(
        "the file (the fixed volume of one pass); larger than memory to measure the disk with buffered reads",
        &["4m"],
        &[],
    ),
    Param::size("sigma", 0, 1 << 40)
        .measured(&["160k"])
        .help("gauss: the deviation of the offsets (004: 160k over 4m)"),
    Param::int("centre", 0, 100)
        .measured(&["50"])
        .help("gauss: the centre, in percent of the file"),
];

pub const FAMILY: Family = Family {
    params: PARAMS,
    default_suite: false,
    annotate: Some(annotate),
    options: io::TARGET_OPTIONS,
    run_note: Some(io::target_note),
    ..Family::new(
        "io",
        "file_io",
        "read or write a file by block size, pattern and sync mode (MB/s, IOPS, per-operation latency)",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{measure_spec, refusal, tiny_plan};

    fn measure(spec: &str) -> Measurement {
        measure_spec(spec, &tiny_plan(1), &RunContext::new(true))
            .unwrap_or_else(|e| panic!("{spec}: {e}"))
            .remove(0)
    }

    /// A cached buffered read warns that it measures memory; a direct read
    /// of the same file does not.
    #[test]
    fn page_cache_warning_fires_on_cached_reads_only() {
        let m = measure("io/read/pattern:seq/bs:64k/size:1m");
        assert!(m.extra["cached_fraction"] >= CACHED_LIMIT, "{:?}", m.extra);
        assert!(page_cache_warning(&m, false).is_some());
        assert!(page_cache_warning(&m, true).is_none());
        let dir = io::scratch_parent();
        if io::probe_dir(&dir, libc::O_DIRECT).is_ok() {
            let m = measure("io/read/pattern:seq/bs:64k/size:1m/mode:direct");
            assert!(page_cache_warning(&m, false).is_none(), "{:?}", m.extra);
        } else {
            crate::testing::skip::part_not_supported_here(
                "the direct half",
                &format!("{} refuses O_DIRECT", dir.display()),
            );
        }
    }

    #[test]
    fn latency_figures_are_ordered_and_fsync_is_apart() {
        let m = measure("io/write/pattern:rand/bs:8k/size:256k/mode:buffered+fsync");
        let x = &m.extra;
        assert!(x["lat_min_us"] <= x["lat_median_us"]);
        assert!(x["lat_median_us"] <= x["lat_p99_us"]);
        assert!(x["lat_p99_us"] <= x["lat_max_us"]);
        assert!(x["fsync_ms"] > 0.0, "{x:?}");
        let mut m = m.clone();
        annotate(&mut m, &RunContext::default());
        let iops = m.extra["iops"];
        assert!((iops * 8192.0 / 1e6 - m.value()).abs() < 1e-6 * m.value());
    }

    #[test]
    fn depth_goes_through_io_uring_where_allowed() {
        if let Some(why) = io::io_uring_refused() {
            let e = refusal("io/read/depth:4");
            assert!(e.contains("io_uring"), "{e} / {why}");
            return;
        }
        let m = measure("io/read/pattern:rand/bs:4k/size:256k/depth:4");
        assert!(m.summary.median > 0.0);
        assert!(m.extra["lat_median_us"] > 0.0);
        assert!(m.extra.contains_key("depth_achieved"), "{:?}", m.extra);
        let m = measure("io/read/pattern:rand/bs:4k/size:4m");
        assert!(
            !m.extra.contains_key("depth_achieved"),
            "depth 1 has no ring"
        );
    }

    /// `depth:8` keeps 8 blocks in flight on the storage itself (direct
    /// reads where the scratch file system allows O_DIRECT, else cached
    /// ones): the mean it reports is within 10 % of 8, and the point
    /// carries no `depth-short`; a mean below 90 % of the depth does.
    #[test]
    fn depth_achieved_is_the_depth_asked_for() {
        if let Some(why) = io::io_uring_refused() {
            crate::testing::skip::not_supported_here(&why);
            return;
        }
        let direct = io::probe_dir(&io::scratch_parent(), libc::O_DIRECT).is_ok();
        let spec = if direct {
            "io/read/pattern:rand/bs:4k/size:4m/depth:8/mode:direct"
        } else {
            crate::testing::skip::part_not_supported_here(
                "direct reads",
                "the scratch file system refuses O_DIRECT: cached reads instead",
            );
            "io/read/pattern:rand/bs:4k/size:4m/depth:8"
        };
        let mut m = measure(spec);
        annotate(&mut m, &RunContext::default());
        let got = m.extra["depth_achieved"];
        assert!((7.2..=8.0).contains(&got), "{got:.2} in flight at depth:8");
        assert!(depth_warning(&m).is_none());
        m.extra.insert("depth_achieved".into(), 7.1);
        let w = depth_warning(&m).expect("7.1 of 8 is short");
        assert_eq!(w.code, "depth-short");
        assert!(
            w.message.contains("7.1") && w.remedy.contains("size:"),
            "{w:?}"
        );
        // A pass of 16 blocks at depth 16 is all filling and draining:
        // about half the depth in flight, and the point says so.
        let mut m = measure("io/read/pattern:rand/bs:4k/size:64k/depth:16");
        annotate(&mut m, &RunContext::default());
        let got = m.extra["depth_achieved"];
        assert!(got < DEPTH_SHORT * 16.0, "{got:.2} in flight at depth:16");
        assert!(
            m.warnings.iter().any(|w| w.code == "depth-short"),
            "{:?}",
            m.warnings
        );
    }

    /// Bad input is refused when the case is built, before anything runs.
    #[test]
    fn bad_input_is_refused() {
        assert!(refusal("io/read/bs:0").contains("bs"));
        assert!(refusal("io/read/pattern:gauss/sigma:0").contains("sigma"));
        assert!(refusal("io/read/bs:64k/size:8k").contains("smaller than one block"));
        let e = refusal("io/read/bs:1000/mode:direct");
        assert!(e.contains("multiples") || e.contains("unsupported"), "{e}");
    }

    /// The test file is gone once the measurement ends.
    #[test]
    fn nothing_is_left_in_the_directory() {
        // Removed with whatever is in it when the test ends, passed or not.
        let dir = tempfile::tempdir().unwrap();
        measure_spec(
            "io/write/pattern:seq/bs:64k/size:256k",
            &tiny_plan(1),
            &RunContext::new(true).with(&io::DIR, dir.path()),
        )
        .unwrap();
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
