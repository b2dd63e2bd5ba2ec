//! The readers on recorded /proc and /sys snippets (a Xeon server with
//! intel_pstate, an AMD desktop with acpi-cpufreq, and a bare VM that
//! exposes almost nothing), and the diff between two runs.

use super::*;

/// A copy of the named files under a temporary root.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = root.path().join(path.trim_start_matches('/'));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    root
}

const XEON_CPUINFO: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz\nmicrocode\t: 0x5003604\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\nmicrocode\t: 0x5003604\n";

#[test]
fn a_server_with_intel_pstate_reads_whole() {
    let root = tree(&[
        ("/proc/cpuinfo", XEON_CPUINFO),
        ("/proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)\n"),
        ("/proc/cmdline", "BOOT_IMAGE=/vmlinuz-6.1.0-18-amd64 root=UUID=1 ro quiet mitigations=auto\n"),
        ("/sys/class/dmi/id/bios_vendor", "Dell Inc.\n"),
        ("/sys/class/dmi/id/bios_version", "2.14.2\n"),
        ("/sys/class/dmi/id/bios_date", "03/08/2022\n"),
        ("/sys/devices/system/cpu/vulnerabilities/meltdown", "Not affected\n"),
        (
            "/sys/devices/system/cpu/vulnerabilities/spectre_v2",
            "Mitigation: Enhanced / Automatic IBRS; IBPB: conditional; RSB filling; PBRSB-eIBRS: SW sequence\n",
        ),
        ("/sys/devices/system/cpu/smt/control", "on\n"),
        ("/sys/devices/system/cpu/smt/active", "1\n"),
        ("/sys/devices/system/cpu/intel_pstate/no_turbo", "0\n"),
        (
            "/sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference",
            "balance_performance\n",
        ),
        ("/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n"),
        (
            "/sys/kernel/mm/transparent_hugepage/defrag",
            "always defer defer+madvise [madvise] never\n",
        ),
        ("/sys/devices/system/node/online", "0-1\n"),
    ]);
    let f = Fingerprint::read_from(root.path());
    assert_eq!(
        f.kernel_build,
        "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)"
    );
    assert!(f.kernel_cmdline.ends_with("quiet mitigations=auto"));
    assert_eq!(f.microcode, "0x5003604");
    assert_eq!(f.firmware_vendor, "Dell Inc.");
    assert_eq!(f.firmware_version, "2.14.2");
    assert_eq!(f.firmware_date, "03/08/2022");
    assert_eq!(f.mitigations.len(), 2);
    assert_eq!(f.mitigations["meltdown"], "Not affected");
    assert!(f.mitigations["spectre_v2"].starts_with("Mitigation: Enhanced"));
    assert_eq!(f.smt, "on");
    assert_eq!(f.boost, "on");
    assert_eq!(f.energy_performance_preference, "balance_performance");
    assert_eq!(f.thp_enabled, "madvise");
    assert_eq!(f.thp_defrag, "madvise");
    assert_eq!(f.numa_nodes, "2 (0-1)");
    // Not files: stated by collect() and the binary.
    assert_eq!(f.libc, UNKNOWN);
    assert_eq!(f.touchstone, UNKNOWN);
    // No SMBIOS table copied: DIMMs unknown.
    assert_eq!(f.dimm_speeds, UNKNOWN);
}

#[test]
fn a_desktop_with_acpi_cpufreq_and_smt_forced_off() {
    let root = tree(&[
        (
            "/proc/cpuinfo",
            "processor\t: 0\nmicrocode\t: 0xa201016\n\nprocessor\t: 1\nmicrocode\t: 0xa201025\n",
        ),
        ("/sys/devices/system/cpu/smt/control", "forceoff\n"),
        ("/sys/devices/system/cpu/smt/active", "0\n"),
        ("/sys/devices/system/cpu/cpufreq/boost", "0\n"),
        (
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "[always] madvise never\n",
        ),
        ("/sys/devices/system/node/online", "0\n"),
    ]);
    let f = Fingerprint::read_from(root.path());
    // CPUs on two revisions: both shown.
    assert_eq!(f.microcode, "0xa201016, 0xa201025");
    assert_eq!(f.smt, "off (forceoff)");
    assert_eq!(f.boost, "off");
    assert_eq!(f.thp_enabled, "always");
    assert_eq!(f.numa_nodes, "1");
}

#[test]
fn what_a_bare_vm_hides_is_unknown_never_guessed() {
    // No microcode line, no DMI, no cpufreq, no vulnerabilities directory.
    let root = tree(&[
        (
            "/proc/cpuinfo",
            "processor\t: 0\nmodel name\t: QEMU Virtual CPU\n",
        ),
        ("/sys/devices/system/cpu/smt/control", "notsupported\n"),
    ]);
    let f = Fingerprint::read_from(root.path());
    for v in [
        &f.microcode,
        &f.firmware_vendor,
        &f.firmware_date,
        &f.boost,
        &f.energy_performance_preference,
        &f.thp_enabled,
        &f.numa_nodes,
        &f.kernel_cmdline,
    ] {
        assert_eq!(v, UNKNOWN);
    }
    assert!(f.mitigations.is_empty());
    // Without `active`, the control's word is all there is.
    assert_eq!(f.smt, "notsupported");
    // microcode from sysfs when cpuinfo has none (arm64 has neither).
    let root = tree(&[(
        "/sys/devices/system/cpu/cpu0/microcode/version",
        "0x2b000603\n",
    )]);
    assert_eq!(Fingerprint::read_from(root.path()).microcode, "0x2b000603");
}

/// One SMBIOS structure: type, formatted area (after the 4-byte header),
/// strings.
fn structure(kind: u8, body: &[u8], strings: &[&str]) -> Vec<u8> {
    let mut s = vec![kind, (4 + body.len()) as u8, 0x10, 0x00];
    s.extend_from_slice(body);
    if strings.is_empty() {
        s.extend_from_slice(&[0, 0]);
    } else {
        for t in strings {
            s.extend_from_slice(t.as_bytes());
            s.push(0);
        }
        s.push(0);
    }
    s
}

/// A type-17 Memory Device of `size_mb` (0: an empty slot) at `speed`
/// MT/s, configured at `configured` (SMBIOS 2.7 layout, 0x22 bytes).
fn memory_device(size_mb: u16, speed: u16, configured: u16) -> Vec<u8> {
    let mut body = vec![0u8; 0x22 - 4];
    let mut put = |offset: usize, v: u16| {
        body[offset - 4..offset - 2].copy_from_slice(&v.to_le_bytes());
    };
    put(0x0C, size_mb);
    put(0x15, speed);
    put(0x20, configured);
    structure(17, &body, &["DIMM_A1", "Samsung"])
}

#[test]
fn dimm_speeds_from_the_smbios_table() {
    let mut table = structure(0, &[1, 2, 0, 0xF0], &["Dell Inc.", "2.14.2"]);
    table.extend(memory_device(16384, 3200, 2933));
    table.extend(memory_device(16384, 3200, 2933));
    table.extend(memory_device(0, 0, 0)); // an empty slot
    table.extend(memory_device(8192, 2666, 0)); // configured speed unknown
    table.extend(structure(127, &[], &[]));
    assert_eq!(
        dimm_speeds(&table).as_deref(),
        Some("1 × 2666 MT/s, 2 × 3200 MT/s (configured 2933)")
    );
    // A table with only empty slots, and a truncated one, say nothing.
    let empty = [memory_device(0, 0, 0), structure(127, &[], &[])].concat();
    assert_eq!(dimm_speeds(&empty), None);
    assert_eq!(dimm_speeds(&table[..10]), None);
    // Read from the file where root can read it.
    let root = tempfile::tempdir().unwrap();
    let p = root.path().join("sys/firmware/dmi/tables");
    fs::create_dir_all(&p).unwrap();
    fs::write(p.join("DMI"), &table).unwrap();
    assert!(Fingerprint::read_from(root.path())
        .dimm_speeds
        .starts_with("1 × 2666"));
}

#[test]
fn readers_of_single_files() {
    assert_eq!(
        chosen_mode("always defer [never]").as_deref(),
        Some("never")
    );
    assert_eq!(chosen_mode("always madvise never"), None);
    assert_eq!(boost(None, None), None);
    assert_eq!(boost(Some("1"), Some("1")).as_deref(), Some("on"));
    assert_eq!(smt(Some("off"), Some("0")).as_deref(), Some("off"));
    assert_eq!(numa(""), None);
}

fn run_on(host: Host) -> Run {
    let mut r: Run = serde_json::from_value(serde_json::json!({
        "id": "r1", "host": host,
        "tool": {"name": "touchstone", "version": "0.1.0", "profile": "release"},
        "clock": {"source": "t", "resolution_ns": 1.0, "read_cost_ns": 1.0, "min_interval_ns": 1},
        "options": {"selection": [], "repetitions": 3, "parallel": [1], "quick": true,
                    "target_interval_ns": 1, "parallel_interval_ns": 1, "warmup_ns": 1},
        "started_at": "2026-01-01T00:00:00Z", "status": "complete"
    }))
    .unwrap();
    r.host.cpu.usable = 4;
    r
}

#[test]
fn diff_names_what_changed_and_keeps_quiet_about_the_unknown() {
    let mut a = Host {
        kernel: "6.8.0-41-generic".into(),
        memory_bytes: 16 << 30,
        ..Host::default()
    };
    a.fingerprint = Some(Fingerprint {
        microcode: "0x2b000603".into(),
        thp_enabled: "madvise".into(),
        boost: UNKNOWN.into(),
        ..Fingerprint::default()
    });
    let mut b = a.clone();
    b.kernel = "6.8.0-45-generic".into();
    let fb = b.fingerprint.as_mut().unwrap();
    fb.microcode = "0x2b000620".into();
    fb.thp_enabled = "always".into();
    fb.boost = "on".into(); // unknown before: not a change we can claim
    let (ra, mut rb) = (run_on(a.clone()), run_on(b));
    rb.host.cpu.usable = 1;
    let text: Vec<String> = diff(&ra, &rb).iter().map(|c| c.to_string()).collect();
    assert_eq!(
        text,
        [
            "kernel 6.8.0-41-generic → 6.8.0-45-generic",
            "CPUs usable 4 → 1",
            "microcode 0x2b000603 → 0x2b000620",
            "THP madvise → always",
        ]
    );
    // A run recorded before the fingerprint existed: only the host's facts.
    let mut old = a;
    old.fingerprint = None;
    let old = run_on(old);
    assert!(diff(&old, &ra).is_empty());
}

#[test]
fn a_host_without_a_fingerprint_reads_as_before_and_a_partial_one_fills_in() {
    // A document of an older touchstone: no fingerprint at all.
    let h: Host = serde_json::from_value(serde_json::json!({
        "hostname": "n", "os": "Linux", "kernel": "6.1", "arch": "x86_64",
        "cpu": {"model": "m", "sockets": 1, "cores": 1, "threads": 1, "usable": 1},
        "memory_bytes": 1
    }))
    .unwrap();
    assert_eq!(h.fingerprint, None);
    let v = serde_json::to_value(&h).unwrap();
    assert!(v.get("fingerprint").is_none(), "{v}");
    // A fingerprint from a touchstone that knew fewer items.
    let f: Fingerprint = serde_json::from_value(serde_json::json!({"microcode": "0x1"})).unwrap();
    assert_eq!(f.microcode, "0x1");
    assert_eq!(f.thp_enabled, UNKNOWN);
}

#[test]
fn collects_this_machine() {
    let f = Fingerprint::collect();
    // Every Linux has a kernel build and a command line to read.
    assert_ne!(f.kernel_build, UNKNOWN);
    assert_ne!(f.kernel_cmdline, UNKNOWN);
    #[cfg(target_env = "gnu")]
    assert!(f.libc.starts_with("glibc 2."), "{}", f.libc);
}
