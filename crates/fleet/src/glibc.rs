//! Whether a touchstone binary can run on a host's C library. A binary
//! linked dynamically against glibc needs a glibc at least as new as the
//! newest `GLIBC_2.N` symbol version it references; a statically linked one
//! (`-C target-feature=+crt-static`, see the README) needs none. The fleet
//! asks a host `ldd --version` over ssh and refuses a host whose glibc is
//! older, with a message that says what to do, rather than copying a binary
//! that would fail there with the loader's "version `GLIBC_2.N' not found".

use std::fmt;

/// A glibc version, e.g. 2.36.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct GlibcVersion {
    pub major: u32,
    pub minor: u32,
}

impl fmt::Display for GlibcVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl GlibcVersion {
    /// "2.36" (a third part, as in "2.17.1", is ignored).
    pub fn parse(text: &str) -> Option<GlibcVersion> {
        let mut parts = text.trim().split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        Some(GlibcVersion { major, minor })
    }
}

/// The glibc version in `ldd --version`'s output: its first line ends with
/// it ("ldd (Debian GLIBC 2.36-9+deb12u14) 2.36", "ldd (GNU libc) 2.17").
/// None for another C library (musl's ldd names itself "musl libc").
pub fn host_glibc(ldd_version_output: &str) -> Option<GlibcVersion> {
    let first = ldd_version_output.lines().next()?;
    let lower = first.to_ascii_lowercase();
    if !(lower.contains("glibc") || lower.contains("gnu libc")) {
        return None;
    }
    GlibcVersion::parse(first.split_whitespace().last()?)
}

/// The glibc an ELF binary needs: the newest `GLIBC_2.N` version among its
/// strings, or None when it is statically linked (no program interpreter)
/// or references no glibc version.
pub fn needed_glibc(elf: &[u8]) -> Option<GlibcVersion> {
    if !has_interpreter(elf) {
        return None;
    }
    let tag = b"GLIBC_";
    let mut newest: Option<GlibcVersion> = None;
    let mut i = 0;
    while i + tag.len() < elf.len() {
        if &elf[i..i + tag.len()] == tag {
            let start = i + tag.len();
            let end = elf[start..]
                .iter()
                .position(|b| !(b.is_ascii_digit() || *b == b'.'))
                .map_or(elf.len(), |p| start + p);
            if let Some(v) = std::str::from_utf8(&elf[start..end])
                .ok()
                .and_then(GlibcVersion::parse)
            {
                newest = newest.max(Some(v));
            }
            i = end;
        } else {
            i += 1;
        }
    }
    newest
}

/// Whether a 64- or 32-bit little- or big-endian ELF file names a program
/// interpreter (PT_INTERP): dynamically linked executables do.
fn has_interpreter(elf: &[u8]) -> bool {
    if elf.len() < 0x40 || &elf[..4] != b"\x7fELF" {
        return false;
    }
    let wide = elf[4] == 2;
    let little = elf[5] == 1;
    let read = |at: usize, n: usize| -> Option<u64> {
        let b = elf.get(at..at + n)?;
        let mut v = 0u64;
        for k in 0..n {
            let byte = if little { b[n - 1 - k] } else { b[k] } as u64;
            v = (v << 8) | byte;
        }
        Some(v)
    };
    let (phoff, phentsize, phnum) = if wide {
        (read(0x20, 8), read(0x36, 2), read(0x38, 2))
    } else {
        (read(0x1c, 4), read(0x2a, 2), read(0x2c, 2))
    };
    let (Some(phoff), Some(size), Some(num)) = (phoff, phentsize, phnum) else {
        return false;
    };
    const PT_INTERP: u64 = 3;
    (0..num).any(|k| read((phoff + k * size) as usize, 4) == Some(PT_INTERP))
}

/// The refusal rule: a binary needing glibc `needed` (None: static, or no
/// glibc symbols) runs on a host whose `ldd --version` says
/// `host_ldd_version`, or the reason it cannot, to print for that host.
pub fn check_host(needed: Option<GlibcVersion>, host_ldd_version: &str) -> Result<(), String> {
    let Some(needed) = needed else {
        return Ok(());
    };
    match host_glibc(host_ldd_version) {
        Some(host) if host >= needed => Ok(()),
        Some(host) => Err(format!(
            "its glibc {host} is older than the {needed} this touchstone binary needs: \
             give a statically linked binary (README, \"Running across a farm\") or one built for that host"
        )),
        None => Err(format!(
            "it has no glibc (`ldd --version` does not name one) and this touchstone binary \
             is linked against glibc {needed}: give a statically linked binary (README, \"Running across a farm\")"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: u32, minor: u32) -> GlibcVersion {
        GlibcVersion { major, minor }
    }

    #[test]
    fn ldd_version_lines_of_distributions_parse() {
        let debian = "ldd (Debian GLIBC 2.36-9+deb12u14) 2.36\nCopyright (C) 2022 Free Software Foundation, Inc.\n";
        assert_eq!(host_glibc(debian), Some(v(2, 36)));
        assert_eq!(host_glibc("ldd (GNU libc) 2.17\n"), Some(v(2, 17)));
        assert_eq!(
            host_glibc("ldd (Ubuntu GLIBC 2.35-0ubuntu3.8) 2.35\n"),
            Some(v(2, 35))
        );
        assert_eq!(host_glibc("musl libc (x86_64)\nVersion 1.2.4\n"), None);
        assert_eq!(host_glibc(""), None);
    }

    #[test]
    fn the_rule_refuses_an_older_glibc_only() {
        let host = "ldd (GNU libc) 2.28\n";
        assert!(check_host(Some(v(2, 28)), host).is_ok());
        assert!(check_host(Some(v(2, 17)), host).is_ok());
        let e = check_host(Some(v(2, 34)), host).unwrap_err();
        assert!(e.contains("glibc 2.28 is older than the 2.34"), "{e}");
        // Minor versions compare as numbers, not text.
        assert!(check_host(Some(v(2, 9)), host).is_ok());
        assert!(
            check_host(None, host).is_ok(),
            "a static binary runs anywhere"
        );
        assert!(check_host(Some(v(2, 17)), "musl libc (x86_64)\n").is_err());
    }

    #[test]
    fn this_test_binary_needs_a_glibc_no_newer_than_this_host() {
        // The test binary itself is dynamically linked against this host's glibc.
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let needed = needed_glibc(&exe);
        if cfg!(all(target_env = "gnu", not(target_feature = "crt-static"))) {
            assert!(
                needed.is_some(),
                "a dynamically linked test binary names its glibc"
            );
        }
        if let Some(needed) = needed {
            let out = std::process::Command::new("ldd").arg("--version").output();
            if let Ok(out) = out {
                let text = String::from_utf8_lossy(&out.stdout);
                assert!(
                    check_host(Some(needed), &text).is_ok(),
                    "{needed} vs {text}"
                );
            }
            assert!(needed >= v(2, 2), "{needed}");
        }
    }

    #[test]
    fn a_binary_without_interpreter_needs_nothing() {
        let mut elf = vec![0u8; 0x80];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        elf.extend_from_slice(b"GLIBC_2.99\0");
        assert_eq!(needed_glibc(&elf), None);
        assert_eq!(needed_glibc(b"not an elf GLIBC_2.3"), None);
    }
}
