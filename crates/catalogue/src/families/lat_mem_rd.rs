//! lat_mem_rd: dependent-load latency over working sets from 512 B to past
//! the last-level cache (lmbench's lat_mem_rd), one measurement per
//! (chain, size) so the whole curve is kept. Chains: a fixed stride of
//! 16..512 B in address order (what lmbench measures, prefetchers and all),
//! `rand_page` (pages in order, cache lines in random order inside each page:
//! defeats the stride prefetchers, one TLB miss per 64 loads) and `rand`
//! (lines in random order across the working set: defeats prefetchers and,
//! past its reach, the TLB). `derive` finds the cache levels in the curve
//! and sets them next to the sizes the OS reports.

use touchstone_results::{groups, Measurement, Unit, Warning, WarningCode};

use crate::family::{derived, Built, Family, Mode};
use crate::params::{Kind, Param, Point};
use crate::support::cache_levels::{bytes_text, detect_levels, llc_bytes, os_caches};
use crate::support::memory::{Order, Pages};
use crate::support::pointer_chase::Chase;
use crate::support::sys::page_size;

/// Element size of the random chains: one cache line on current machines.
const ELEM: usize = 64;

/// The chain order a `stride` parameter names.
pub fn order(chain: &str) -> Result<Order, String> {
    Ok(match chain {
        "rand_page" => Order::RandInPage {
            elem: ELEM,
            page: page_size(),
        },
        "rand" => Order::Rand { elem: ELEM },
        s => Order::Stride(s.parse().map_err(|_| format!("unknown chain '{s}'"))?),
    })
}

/// Each case chases one chain (`support::pointer_chase`): `n` × 100
/// dependent loads per interval, the fastest interval its figure.
fn build(p: &Point, _: Mode) -> Result<Built, String> {
    let size = p.num("size") as usize;
    let order = order(p.text("stride"))?;
    if let Order::Stride(s) = order {
        if s > size {
            return Err(format!("stride {s} is larger than the working set {size}"));
        }
    }
    Chase::case(
        &format!("lat_mem_rd/size:{}", p.text("size")),
        size,
        order,
        Pages::Default,
        0x5eed,
    )
}

/// The curve to find levels in: within-page random (no prefetching, TLB
/// amortised) when measured, else the fully random one, else the smallest
/// stride of at least a line.
fn reference_chain(ms: &[Measurement]) -> Option<String> {
    let have = |c: &str| {
        ms.iter()
            .any(|m| m.params.get("stride").map(String::as_str) == Some(c))
    };
    for c in ["rand_page", "rand", "64", "128", "256", "512", "32", "16"] {
        if have(c) {
            return Some(c.to_string());
        }
    }
    None
}

/// One curve: (size, headline latency) for single-process measurements.
pub fn curve(ms: &[Measurement], chain: &str) -> Vec<(u64, f64)> {
    ms.iter()
        .filter(|m| m.parallel == 1)
        .filter(|m| m.params.get("stride").map(String::as_str) == Some(chain))
        .filter_map(|m| {
            let size = crate::params::Param {
                name: "size",
                help: "",
                kind: Kind::Size {
                    min: 0,
                    max: u64::MAX,
                },
                default: &[],
                quick: &[],
                positional: false,
            }
            .parse(m.params.get("size")?)
            .ok()?
            .num;
            Some((size, m.value()))
        })
        .collect()
}

/// Whether a detected size agrees with the OS's: within the grid's
/// resolution and the effects of replacement, sharing and exclusive caches.
pub fn sizes_agree(detected: u64, os: u64) -> bool {
    let r = detected as f64 / os as f64;
    (0.7..=1.5).contains(&r)
}

/// Cache levels found in the reference curve, next to the OS's caches.
pub fn derive(ms: &[Measurement]) -> Vec<Measurement> {
    let Some(chain) = reference_chain(ms) else {
        return Vec::new();
    };
    let c = curve(ms, &chain);
    if c.len() < 4 {
        return Vec::new();
    }
    derive_from(&c, &chain, &os_caches(), llc_bytes())
}

pub fn derive_from(
    c: &[(u64, f64)],
    chain: &str,
    os: &[touchstone_results::host::Cache],
    llc: Option<u64>,
) -> Vec<Measurement> {
    let levels = detect_levels(c, 0.25);
    let mut out = Vec::new();
    let max_size = c.iter().map(|p| p.0).max().unwrap_or(0);
    let cache_levels = levels.len().saturating_sub(1);
    for (i, l) in levels.iter().enumerate() {
        let mut warnings = Vec::new();
        let mut extra: Vec<(&str, f64)> = Vec::new();
        let name = match l.size {
            Some(size) => {
                let lv = i as u32 + 1;
                extra.push(("size_bytes", size as f64));
                if let Some(o) = os.iter().find(|c| c.level == lv) {
                    extra.push(("os_size_bytes", o.size_bytes as f64));
                    if !sizes_agree(size, o.size_bytes) {
                        warnings.push(Warning::new(
                            WarningCode::CacheSizeDisagrees,
                            format!(
                                "L{lv} detected at {} in the {chain} curve; the OS reports {}",
                                bytes_text(size),
                                bytes_text(o.size_bytes)
                            ),
                        ));
                    }
                } else {
                    warnings.push(Warning::new(
                        WarningCode::CacheLevelUnreported,
                        format!(
                            "a level ending at {} was found but the OS reports no L{lv}",
                            bytes_text(size)
                        ),
                    ));
                }
                format!("lat_mem_rd/level:L{lv}")
            }
            None => {
                if cache_levels != os.len() {
                    let message = format!(
                        "{cache_levels} cache levels found in the {chain} curve; the OS reports {}",
                        os.len()
                    );
                    warnings.push(Warning::new(WarningCode::CacheLevelsDiffer, message));
                }
                if let Some(llc) = llc {
                    if max_size < 4 * llc {
                        warnings.push(Warning::new(
                            WarningCode::CurveShort,
                            format!(
                                "the curve stops at {}, under 4× the last-level cache ({})",
                                bytes_text(max_size),
                                bytes_text(llc)
                            ),
                        ));
                    }
                }
                "lat_mem_rd/level:mem".to_string()
            }
        };
        out.push(derived(
            &name,
            "lat_mem_rd",
            groups::GROUPS
                .iter()
                .find(|g| g.name == "mem_lat")
                .map_or("mem_lat", |g| g.name),
            Unit::Ns,
            l.latency_ns,
            &l.points,
            &extra,
            warnings,
        ));
    }
    for m in &mut out {
        m.params.insert("stride".into(), chain.to_string());
    }
    out
}

const SIZES: &[&str] = &[
    "512", "640", "768", "896", "1k", "1280", "1536", "1792", "2k", "2560", "3k", "3584", "4k",
    "5k", "6k", "7k", "8k", "10k", "12k", "14k", "16k", "20k", "24k", "28k", "32k", "40k", "48k",
    "56k", "64k", "80k", "96k", "112k", "128k", "160k", "192k", "224k", "256k", "320k", "384k",
    "448k", "512k", "640k", "768k", "896k", "1m", "1280k", "1536k", "1792k", "2m", "2560k", "3m",
    "3584k", "4m", "5m", "6m", "7m", "8m", "10m", "12m", "14m", "16m", "20m", "24m", "28m", "32m",
    "40m", "48m", "56m", "64m", "80m", "96m", "112m", "128m", "160m", "192m", "224m", "256m",
];

const QUICK_SIZES: &[&str] = &[
    "512", "768", "1k", "1536", "2k", "3k", "4k", "6k", "8k", "12k", "16k", "24k", "32k", "48k",
    "64k", "96k", "128k", "192k", "256k", "384k", "512k", "768k", "1m", "1536k", "2m", "3m", "4m",
    "6m", "8m", "12m", "16m", "24m", "32m", "48m", "64m", "96m", "128m",
];

pub const FAMILY: Family = Family {
    params: &[
        Param {
            name: "stride",
            help: "chain: a stride in bytes (address order), rand_page (random lines within each page) or rand (random lines)",
            kind: Kind::Choice(&["16", "32", "64", "128", "256", "512", "rand_page", "rand"]),
            default: &["16", "32", "64", "128", "256", "512", "rand_page", "rand"],
            quick: &["64", "rand_page"],
            positional: false,
        },
        Param {
            name: "size",
            help: "working set",
            kind: Kind::Size {
                min: 512,
                max: 64 << 30,
            },
            default: SIZES,
            quick: QUICK_SIZES,
            positional: false,
        },
    ],
    derive: Some(derive),
    ..Family::new(
        "lat_mem_rd",
        "mem_lat",
        "memory read latency by working-set size: strided and random pointer chains; cache levels derived",
        build,
    )
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{measure_spec, tiny_plan};
    use touchstone_results::host::Cache;

    fn cache(level: u32, size: u64) -> Cache {
        Cache {
            level,
            kind: "data".into(),
            size_bytes: size,
            line_bytes: Some(64),
            ways: None,
            shared_by: None,
        }
    }

    #[test]
    fn derive_names_levels_and_flags_disagreement() {
        let mut c = Vec::new();
        for &s in &[
            16u64 << 10,
            32 << 10,
            48 << 10,
            64 << 10,
            256 << 10,
            1 << 20,
            2 << 20,
            8 << 20,
            32 << 20,
            128 << 20,
        ] {
            let lat = if s <= 48 << 10 {
                1.0
            } else if s <= 1 << 20 {
                4.0
            } else {
                80.0
            };
            c.push((s, lat));
        }
        let os = [cache(1, 48 << 10), cache(2, 1 << 20), cache(3, 32 << 20)];
        let d = derive_from(&c, "rand_page", &os, Some(32 << 20));
        let names: Vec<_> = d.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "lat_mem_rd/level:L1",
                "lat_mem_rd/level:L2",
                "lat_mem_rd/level:mem"
            ]
        );
        assert_eq!(d[0].extra["size_bytes"], (48 << 10) as f64);
        assert!(d[0].warnings.is_empty() && d[1].warnings.is_empty());
        // The OS has three levels; two were found: said so.
        assert!(d[2]
            .warnings
            .iter()
            .any(|w| w.code == "cache-levels-differ"));
        // An L2 reported at 4 MiB disagrees with the 1 MiB step.
        let os = [cache(1, 48 << 10), cache(2, 4 << 20)];
        let d = derive_from(&c, "rand_page", &os, Some(4 << 20));
        assert!(d[1]
            .warnings
            .iter()
            .any(|w| w.code == "cache-size-disagrees"));
        // And the curve stops under 4x the LLC.
        let d = derive_from(&c, "rand_page", &os, Some(64 << 20));
        assert!(d
            .last()
            .unwrap()
            .warnings
            .iter()
            .any(|w| w.code == "curve-short"));
    }

    #[test]
    fn stride_larger_than_set_is_refused() {
        let sel = crate::select(
            &["lat_mem_rd/stride:512/size:512".into()],
            Mode::default(),
            1,
        )
        .unwrap();
        assert!(sel.cases[0]
            .family
            .make(&sel.cases[0].point, Mode::default())
            .is_ok());
        let p = Point(vec![
            (
                "stride",
                crate::params::Value {
                    text: "512".into(),
                    num: 0,
                },
            ),
            (
                "size",
                crate::params::Value {
                    text: "256".into(),
                    num: 256,
                },
            ),
        ]);
        assert!(build(&p, Mode::default()).is_err());
    }

    #[test]
    fn too_large_a_working_set_is_refused_in_build() {
        let sel = crate::select(
            &["lat_mem_rd/stride:64/size:64g".into()],
            Mode::default(),
            1,
        )
        .unwrap();
        let avail = touchstone_results::host::available_memory_bytes().unwrap_or(u64::MAX);
        if avail < 64 << 30 {
            let e = sel.cases[0]
                .family
                .make(&sel.cases[0].point, Mode::default())
                .err()
                .expect("refused");
            assert!(e.contains("MemAvailable"), "{e}");
        }
    }

    /// A small real curve: latency past L1 is higher than inside it, and
    /// the detection finds a level whose size is consistent with the curve.
    #[test]
    fn real_curve_rises_past_l1() {
        let Some(l1) = os_caches()
            .iter()
            .find(|c| c.level == 1)
            .map(|c| c.size_bytes)
        else {
            return;
        };
        let sizes = [l1 / 4, l1 / 2, l1 * 4, l1 * 8, l1 * 16];
        let spec = format!(
            "lat_mem_rd/stride:rand_page/size:{}",
            sizes
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
        let plan = touchstone_harness::Plan {
            repetitions: 21,
            ..tiny_plan(1)
        };
        // Up to three attempts: a shared VM can stall a whole case.
        let mut seen = Vec::new();
        for _ in 0..3 {
            let ms = measure_spec(&spec, &plan, Mode::default()).unwrap();
            let c = curve(&ms, "rand_page");
            assert_eq!(c.len(), sizes.len());
            let inside = c[0].1.max(c[1].1);
            let outside = c[3].1.min(c[4].1);
            let levels = detect_levels(&c, 0.25);
            let ok = outside > inside * 1.25
                && levels.len() >= 2
                && levels[0].size.is_some_and(|s| s >= l1 / 2 && s < l1 * 4);
            if ok {
                return;
            }
            seen.push(c);
        }
        panic!("curve does not rise past the OS's L1 ({l1} B) where detected: {seen:?}");
    }
}
