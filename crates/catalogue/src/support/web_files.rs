//! The file set of a SPECweb99-like web workload: `dirs` directories, each
//! holding nine files of each of four size classes — class 0: 0.1–0.9 KB,
//! class 1: 1–9 KB, class 2: 10–90 KB, class 3: 100–900 KB (file f of class
//! c is (f + 1) · 1024 · 10^c / 10 bytes), about 5.1 MB a directory — and
//! the request mix over it: a class by SPECweb99's shares 35/50/14/1 %, a
//! directory and a file within the class by Zipf popularity. Files are
//! written into a scratch directory (so they sit in the page cache) and
//! served from read-only mappings.

use std::fs;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use touchstone_harness::{BenchError, Fallible};

use super::memory::Rng;
use super::zipf::{unit, Zipf};

/// Size classes.
pub const CLASSES: usize = 4;
/// Files per class per directory.
pub const FILES_PER_CLASS: usize = 9;
/// Files per directory.
pub const FILES_PER_DIR: usize = CLASSES * FILES_PER_CLASS;
/// SPECweb99's class mix, percent of static requests.
pub const CLASS_MIX: [f64; CLASSES] = [0.35, 0.50, 0.14, 0.01];
/// Popularity rank → file within a class: the middle sizes are the most
/// requested and the extremes the least (SPECweb99's file mix peaks at
/// the fifth file of a class), so the mean size is not the smallest.
pub const FILE_BY_RANK: [usize; FILES_PER_CLASS] = [4, 3, 5, 2, 6, 1, 7, 0, 8];
/// The most directories (about 51 GB); memory usually refuses fewer.
pub const MAX_DIRS: usize = 10_000;

/// Bytes of file `file` (0..9) of class `class` (0..4).
pub const fn file_size(class: usize, file: usize) -> usize {
    (file + 1) * 1024 * 10usize.pow(class as u32) / 10
}

/// Bytes of one directory's 36 files.
pub fn bytes_per_dir() -> usize {
    (0..CLASSES)
        .flat_map(|c| (0..FILES_PER_CLASS).map(move |f| file_size(c, f)))
        .sum()
}

/// Bytes of a set of `dirs` directories.
pub fn set_bytes(dirs: usize) -> u64 {
    dirs as u64 * bytes_per_dir() as u64
}

/// The index of a file in a set: directory-major.
#[inline]
pub const fn file_index(dir: usize, class: usize, file: usize) -> usize {
    dir * FILES_PER_DIR + class * FILES_PER_CLASS + file
}

/// The name of a directory and of a file, relative to the set's root (also
/// the URL path under `/`).
pub fn dir_name(dir: usize) -> String {
    format!("dir{dir:05}")
}
pub fn file_name(class: usize, file: usize) -> String {
    format!("class{class}_{file}")
}

/// The content of a file: printable bytes that depend on where they sit,
/// so a test can tell one file (or a misplaced range) from another.
pub fn content_byte(index: usize, offset: usize) -> u8 {
    b'a' + ((index * 7 + offset) % 26) as u8
}

/// Refuse a set that does not fit comfortably in the memory available: it
/// must stay in the page cache beside everything else the trial runs.
pub fn check_fits(dirs: usize, available: u64) -> Result<(), String> {
    let need = set_bytes(dirs);
    if dirs == 0 || dirs > MAX_DIRS {
        return Err(format!(
            "dirs:{dirs}: a file set has 1 to {MAX_DIRS} directories"
        ));
    }
    if need > available / 2 {
        return Err(format!(
            "dirs:{dirs} makes a file set of {:.0} MB, more than half of the {:.0} MB of \
             memory available (it must stay cached); use fewer directories",
            need as f64 / 1e6,
            available as f64 / 1e6
        ));
    }
    Ok(())
}

/// MemAvailable from /proc/meminfo, bytes.
pub fn memory_available() -> Result<u64, String> {
    let text = fs::read_to_string("/proc/meminfo")
        .map_err(|e| format!("cannot read /proc/meminfo: {e}"))?;
    text.lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .ok_or_else(|| "no MemAvailable in /proc/meminfo".to_string())
}

/// Write a set of `dirs` directories under `root` (which exists).
pub fn generate(root: &Path, dirs: usize) -> Fallible<()> {
    let io = |p: &Path, e: std::io::Error| BenchError(format!("{}: {e}", p.display()));
    let mut buf = Vec::with_capacity(file_size(CLASSES - 1, FILES_PER_CLASS - 1));
    for d in 0..dirs {
        let dir = root.join(dir_name(d));
        fs::create_dir(&dir).map_err(|e| io(&dir, e))?;
        for c in 0..CLASSES {
            for f in 0..FILES_PER_CLASS {
                let index = file_index(d, c, f);
                buf.clear();
                buf.extend((0..file_size(c, f)).map(|o| content_byte(index, o)));
                let path = dir.join(file_name(c, f));
                fs::write(&path, &buf).map_err(|e| io(&path, e))?;
            }
        }
    }
    Ok(())
}

/// The files of a set, mapped read-only (shared with the page cache);
/// unmapped on drop.
pub struct MappedSet {
    maps: Vec<(*mut u8, usize)>,
    pub dirs: usize,
}

// SAFETY: read-only mappings, never written, unmapped only on drop.
unsafe impl Send for MappedSet {}
unsafe impl Sync for MappedSet {}

impl MappedSet {
    /// Map every file of the `dirs`-directory set under `root`.
    pub fn open(root: &Path, dirs: usize) -> Fallible<MappedSet> {
        let mut set = MappedSet {
            maps: Vec::with_capacity(dirs * FILES_PER_DIR),
            dirs,
        };
        for d in 0..dirs {
            for c in 0..CLASSES {
                for f in 0..FILES_PER_CLASS {
                    let path: PathBuf = root.join(dir_name(d)).join(file_name(c, f));
                    let file = fs::File::open(&path)
                        .map_err(|e| BenchError(format!("{}: {e}", path.display())))?;
                    let len = file_size(c, f);
                    // SAFETY: a read-only shared mapping of a file we own;
                    // the descriptor may close once it is mapped.
                    let p = unsafe {
                        libc::mmap(
                            std::ptr::null_mut(),
                            len,
                            libc::PROT_READ,
                            libc::MAP_SHARED | libc::MAP_POPULATE,
                            file.as_raw_fd(),
                            0,
                        )
                    };
                    if p == libc::MAP_FAILED {
                        return Err(super::sys::errno(&format!("mmap {}", path.display())));
                    }
                    set.maps.push((p as *mut u8, len));
                }
            }
        }
        Ok(set)
    }

    /// The bytes of file `index` (`file_index`).
    #[inline]
    pub fn file(&self, index: usize) -> &[u8] {
        let (p, len) = self.maps[index];
        // SAFETY: a live read-only mapping of `len` bytes.
        unsafe { std::slice::from_raw_parts(p, len) }
    }
}

impl Drop for MappedSet {
    fn drop(&mut self) {
        for &(p, len) in &self.maps {
            // SAFETY: unmapping what `open` mapped.
            unsafe { libc::munmap(p as *mut libc::c_void, len) };
        }
    }
}

/// The static-file choice of the mix: a class by `CLASS_MIX`, then a
/// directory by Zipf over the directories and a file by Zipf over the
/// nine of the class (ranked by `FILE_BY_RANK`).
#[derive(Debug, Clone)]
pub struct FileChooser {
    dirs: Zipf,
    files: Zipf,
    class_cdf: [f64; CLASSES],
}

/// A file of the set: (directory, class, file within the class).
pub type FileRef = (usize, usize, usize);

impl FileChooser {
    pub fn new(dirs: usize, exponent: f64) -> Result<FileChooser, String> {
        let mut class_cdf = [0.0; CLASSES];
        let mut acc = 0.0;
        for (c, share) in CLASS_MIX.iter().enumerate() {
            acc += share;
            class_cdf[c] = acc;
        }
        class_cdf[CLASSES - 1] = 1.0;
        Ok(FileChooser {
            dirs: Zipf::new(dirs, exponent)?,
            files: Zipf::new(FILES_PER_CLASS, exponent)?,
            class_cdf,
        })
    }

    #[inline]
    pub fn choose(&self, rng: &mut Rng) -> FileRef {
        let u = unit(rng);
        let class = self
            .class_cdf
            .iter()
            .position(|&c| u < c)
            .unwrap_or(CLASSES - 1);
        let dir = self.dirs.sample(rng);
        let file = FILE_BY_RANK[self.files.sample(rng)];
        (dir, class, file)
    }

    /// The expected size of a chosen file, bytes (the mean static body).
    pub fn mean_bytes(&self) -> f64 {
        let per_class: Vec<f64> = (0..CLASSES)
            .map(|c| {
                (0..FILES_PER_CLASS)
                    .map(|r| self.files.probability(r) * file_size(c, FILE_BY_RANK[r]) as f64)
                    .sum()
            })
            .collect();
        CLASS_MIX.iter().zip(per_class).map(|(m, b)| m * b).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_specweb99s_classes() {
        assert_eq!(file_size(0, 0), 102);
        assert_eq!(file_size(0, 8), 921);
        assert_eq!(file_size(1, 0), 1024);
        assert_eq!(file_size(2, 8), 92_160);
        assert_eq!(file_size(3, 8), 921_600);
        // About 4.9 MiB a directory, as SPECweb99's.
        assert_eq!(bytes_per_dir(), 4604 + 46_080 + 460_800 + 4_608_000);
        assert_eq!(file_index(2, 3, 4), 2 * 36 + 27 + 4);
    }

    #[test]
    fn a_set_is_written_and_mapped_with_its_contents() {
        let dir = tempdir();
        generate(&dir, 2).unwrap();
        let set = MappedSet::open(&dir, 2).unwrap();
        let i = file_index(1, 2, 3);
        let f = set.file(i);
        assert_eq!(f.len(), file_size(2, 3));
        assert!(f.iter().enumerate().all(|(o, &b)| b == content_byte(i, o)));
        let on_disk = fs::read(dir.join("dir00001/class2_3")).unwrap();
        assert_eq!(on_disk, f);
        drop(set);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sets_larger_than_memory_are_refused() {
        assert!(check_fits(10, 1 << 34).is_ok());
        let e = check_fits(100, 400_000_000).unwrap_err();
        assert!(
            e.contains("512 MB") && e.contains("fewer directories"),
            "{e}"
        );
        assert!(check_fits(0, 1 << 40).is_err());
        assert!(check_fits(MAX_DIRS + 1, u64::MAX).is_err());
        assert!(memory_available().unwrap() > 0);
    }

    #[test]
    fn the_chooser_follows_the_class_mix() {
        let ch = FileChooser::new(10, 1.0).unwrap();
        let mut rng = Rng::new(3);
        let mut per_class = [0u32; CLASSES];
        let mut top_file = [0u32; FILES_PER_CLASS];
        let n = 100_000;
        for _ in 0..n {
            let (d, c, f) = ch.choose(&mut rng);
            assert!(d < 10);
            per_class[c] += 1;
            top_file[f] += 1;
        }
        for c in 0..CLASSES {
            let share = per_class[c] as f64 / n as f64;
            assert!((share - CLASS_MIX[c]).abs() < 0.01, "class {c}: {share}");
        }
        let most = (0..FILES_PER_CLASS).max_by_key(|&f| top_file[f]).unwrap();
        assert_eq!(most, FILE_BY_RANK[0]);
        // Mean static size: dominated by class 3's 1 % and class 2's 14 %.
        let mean = ch.mean_bytes();
        assert!(mean > 10_000.0 && mean < 30_000.0, "{mean}");
    }

    fn tempdir() -> PathBuf {
        let p = std::env::temp_dir().join(format!(
            "touchstone-web-files-test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir(&p).unwrap();
        p
    }
}
