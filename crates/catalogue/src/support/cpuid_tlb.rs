//! The data TLBs for 4 KiB pages as the CPU describes them through cpuid,
//! to set next to the `tlb` family's measured steps. AMD (and Hygon) report
//! them in extended leaves 0x8000_0005 (L1) and 0x8000_0006 (L2); Intel in
//! the deterministic address translation leaf 0x18, one sub-leaf per TLB.
//! Intel's older leaf 2 descriptor bytes are not decoded (a table of some
//! hundred vendor descriptors): CPUs that only have leaf 2 report nothing
//! here. A hypervisor may also pass other values than the hardware's.
//! Elsewhere the device tree, where the firmware describes the CPU's TLB
//! (`d-tlb-size` or `tlb-size` under /sys/firmware/devicetree/base/cpus),
//! gives the first level. (/proc/cpuinfo's "TLB size" line on AMD is the
//! kernel's sum of cpuid's L2 data and instruction entries: nothing cpuid
//! does not already say.)

/// One data (or unified) TLB level for 4 KiB pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tlb {
    /// 1 for the first-level data TLB, 2 for the second level.
    pub level: u32,
    pub entries: u32,
}

/// How many times the level before it a later TLB level must hold for a
/// report of it to describe hardware: twice. A second level adds reach
/// only by holding several times what the first does, 8-40x in every
/// design we know of (AMD Zen 64 and 1,536, Zen 4 72 and 3,072, Zen 5 96
/// and 4,096 by AMD's description; Intel 64 and 1,536-2,048; Arm
/// Cortex-A72 32 and 1,024, Neoverse N1 48 and 1,280). The Zen 5 guest's
/// cpuid gives its L2 data TLB 128 entries against an L1 of 96: a value
/// no second-level TLB has (a hypervisor's; the leaf's 12-bit field
/// cannot say 4,096 either), against which every measured L2 was flagged.
pub const MIN_LEVEL_RATIO: u32 = 2;

/// Whether the report of `t` is one a TLB can have (see
/// `MIN_LEVEL_RATIO`): the first level always; a later one when it holds
/// at least twice the entries of the level before it in `tlbs`. A report
/// that is not is still a level (cpuid says there is one), but no check
/// of the measured entries.
pub fn credible(tlbs: &[Tlb], t: &Tlb) -> bool {
    tlbs.iter()
        .filter(|b| b.level < t.level)
        .max_by_key(|b| b.level)
        .is_none_or(|below| t.entries >= MIN_LEVEL_RATIO * below.entries)
}

/// cpuid's registers for one leaf: eax, ebx, ecx, edx.
pub type Regs = [u32; 4];

/// AMD's leaves: 0x8000_0005 EBX bits 23:16 are the L1 data TLB's 4 KiB
/// entries; 0x8000_0006 EBX bits 27:16 the L2 data TLB's (with its
/// associativity in 31:28; 0 there means the level is absent).
pub fn decode_amd(l1: Regs, l2: Regs) -> Vec<Tlb> {
    let mut out = Vec::new();
    let l1_entries = (l1[1] >> 16) & 0xff;
    if l1_entries > 0 {
        out.push(Tlb {
            level: 1,
            entries: l1_entries,
        });
    }
    let l2_assoc = l2[1] >> 28;
    let l2_entries = (l2[1] >> 16) & 0xfff;
    if l2_assoc != 0 && l2_entries > 0 {
        out.push(Tlb {
            level: 2,
            entries: l2_entries,
        });
    }
    out
}

/// Intel's leaf 0x18, one sub-leaf each: EDX bits 4:0 the type (1 data,
/// 3 unified, 4 load-only), 7:5 the level; EBX bit 0 set when the TLB holds
/// 4 KiB pages, bits 31:16 its ways; ECX its sets. Entries = ways × sets.
/// When a level has several (load-only and store-only), the load TLB is
/// the one a pointer chase uses.
pub fn decode_intel(subleaves: &[Regs]) -> Vec<Tlb> {
    let mut out: Vec<Tlb> = Vec::new();
    for r in subleaves {
        let kind = r[3] & 0x1f;
        let level = (r[3] >> 5) & 0x7;
        if !matches!(kind, 1 | 3 | 4) || level == 0 || r[1] & 1 == 0 {
            continue;
        }
        let entries = (r[1] >> 16) * r[2];
        if entries == 0 {
            continue;
        }
        match out.iter_mut().find(|t| t.level == level) {
            Some(t) => t.entries = t.entries.max(entries),
            None => out.push(Tlb { level, entries }),
        }
    }
    out.sort_by_key(|t| t.level);
    out
}

/// Where the machine reports its data TLBs, and what it reports there: cpuid
/// on x86-64, else the device tree; `None` when neither says anything.
pub fn reported_tlbs() -> Option<(&'static str, Vec<Tlb>)> {
    let cpuid = data_tlbs();
    if !cpuid.is_empty() {
        return Some(("cpuid", cpuid));
    }
    let dt = devicetree_tlbs(std::path::Path::new("/sys/firmware/devicetree/base/cpus"));
    (!dt.is_empty()).then_some(("devicetree", dt))
}

/// The first CPU node's data TLB in a device tree (`cpus`: the directory of
/// its CPU nodes): `d-tlb-size` (split TLBs) or `tlb-size` (unified), each a
/// big-endian 32-bit cell, as the devicetree specification's CPU node
/// describes them. One level: the specification has no second.
pub fn devicetree_tlbs(cpus: &std::path::Path) -> Vec<Tlb> {
    let Ok(dir) = std::fs::read_dir(cpus) else {
        return Vec::new();
    };
    let mut nodes: Vec<std::path::PathBuf> = dir
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("cpu@"))
        })
        .collect();
    nodes.sort();
    let cell = |p: std::path::PathBuf| -> Option<u32> {
        let b = std::fs::read(p).ok()?;
        Some(u32::from_be_bytes(b.get(..4)?.try_into().ok()?))
    };
    nodes
        .first()
        .and_then(|n| cell(n.join("d-tlb-size")).or_else(|| cell(n.join("tlb-size"))))
        .filter(|&e| e > 0)
        .map(|entries| vec![Tlb { level: 1, entries }])
        .unwrap_or_default()
}

/// This CPU's data TLBs for 4 KiB pages, as cpuid reports them; empty when
/// it reports none we can decode (or on another architecture).
pub fn data_tlbs() -> Vec<Tlb> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid_count;
        // SAFETY: cpuid exists on every x86_64 CPU; leaves above the
        // maximum reported are not queried.
        let regs = |leaf: u32, sub: u32| -> Regs {
            #[allow(unused_unsafe)]
            let r = unsafe { __cpuid_count(leaf, sub) };
            [r.eax, r.ebx, r.ecx, r.edx]
        };
        let v = regs(0, 0);
        let vendor: Vec<u8> = [v[1], v[3], v[2]]
            .iter()
            .flat_map(|r| r.to_le_bytes())
            .collect();
        let max_basic = v[0];
        let max_ext = regs(0x8000_0000, 0)[0];
        if (vendor == b"AuthenticAMD" || vendor == b"HygonGenuine") && max_ext >= 0x8000_0006 {
            return decode_amd(regs(0x8000_0005, 0), regs(0x8000_0006, 0));
        }
        if max_basic >= 0x18 {
            let last = regs(0x18, 0)[0].min(64);
            let subs: Vec<Regs> = (0..=last).map(|s| regs(0x18, s)).collect();
            return decode_intel(&subs);
        }
        Vec::new()
    }
    #[cfg(not(target_arch = "x86_64"))]
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The development guest (AMD EPYC family 26 under KVM), recorded
    /// 2026-11-23: L1 DTLB 96 entries, L2 DTLB reported as 128 (8-way).
    #[test]
    fn amd_leaves_as_recorded() {
        let l1 = [0xff60ff40, 0xff60ff40, 0x300c0140, 0x20080140];
        let l2 = [0x40802040, 0x60804040, 0x04008140, 0x0c009140];
        assert_eq!(
            decode_amd(l1, l2),
            [
                Tlb {
                    level: 1,
                    entries: 96
                },
                Tlb {
                    level: 2,
                    entries: 128
                }
            ]
        );
        // An absent L2 TLB (associativity 0) is not reported.
        assert_eq!(decode_amd(l1, [0; 4]).len(), 1);
    }

    /// The guest's L2 of 128 entries over an L1 of 96 is no TLB's; Zen 4's
    /// 72 and 3,072, Intel's 64 and 1,536, and a first level alone are.
    #[test]
    fn a_second_level_under_twice_the_first_is_not_credible() {
        let levels = |l1: u32, l2: u32| {
            [
                Tlb {
                    level: 1,
                    entries: l1,
                },
                Tlb {
                    level: 2,
                    entries: l2,
                },
            ]
        };
        let guest = levels(96, 128);
        assert!(credible(&guest, &guest[0]));
        assert!(!credible(&guest, &guest[1]));
        assert!(!credible(&levels(96, 96), &levels(96, 96)[1]));
        for (l1, l2) in [(72, 3072), (64, 1536), (96, 192)] {
            let t = levels(l1, l2);
            assert!(credible(&t, &t[1]), "{t:?}");
        }
        let alone = [Tlb {
            level: 2,
            entries: 128,
        }];
        assert!(credible(&alone, &alone[0]));
    }

    /// Leaf 0x18 as an Intel core describes its TLBs (values constructed
    /// from the SDM's layout): an instruction TLB (skipped), a 64-entry
    /// load-only L1 (4-way × 16 sets), a 2048-entry unified L2 (16-way ×
    /// 128 sets) and a TLB for 1 GiB pages only (skipped).
    #[test]
    fn intel_subleaves() {
        let itlb = [3, (8 << 16) | 1, 32, (1 << 5) | 2];
        let load = [0, (4 << 16) | 1, 16, (1 << 5) | 4];
        let stlb = [0, (16 << 16) | 0b1111, 128, (2 << 5) | 3];
        let gig = [0, (4 << 16) | 0b1000, 1, (1 << 5) | 1];
        assert_eq!(
            decode_intel(&[itlb, load, stlb, gig]),
            [
                Tlb {
                    level: 1,
                    entries: 64
                },
                Tlb {
                    level: 2,
                    entries: 2048
                }
            ]
        );
    }

    #[test]
    fn the_device_tree_gives_the_first_cpus_data_tlb() {
        let dir = std::env::temp_dir().join(format!("touchstone-dt-{}", std::process::id()));
        let cpu = |n: &str| dir.join(n);
        std::fs::create_dir_all(cpu("cpu@0")).unwrap();
        std::fs::create_dir_all(cpu("cpu@1")).unwrap();
        std::fs::create_dir_all(cpu("cpu-map")).unwrap();
        // Nothing described: nothing reported.
        assert!(devicetree_tlbs(&dir).is_empty());
        std::fs::write(cpu("cpu@1").join("d-tlb-size"), 32u32.to_be_bytes()).unwrap();
        std::fs::write(cpu("cpu@0").join("tlb-size"), 64u32.to_be_bytes()).unwrap();
        assert_eq!(
            devicetree_tlbs(&dir),
            [Tlb {
                level: 1,
                entries: 64
            }]
        );
        // A split data TLB is preferred to the unified figure.
        std::fs::write(cpu("cpu@0").join("d-tlb-size"), 48u32.to_be_bytes()).unwrap();
        assert_eq!(devicetree_tlbs(&dir)[0].entries, 48);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(devicetree_tlbs(&dir).is_empty());
    }

    #[test]
    fn this_cpu_reports_plausible_sizes() {
        for t in data_tlbs() {
            assert!((1..=2).contains(&t.level) || t.level <= 4, "{t:?}");
            assert!((4..=1 << 16).contains(&t.entries), "{t:?}");
        }
    }
}
