//! The checks of an imported load curve: its points' figures finite and
//! within bounds, their CPU split and service demand consistent, and the
//! latency figures recomputed from each point's histogram — decoded within
//! bounds first, since an HdrHistogram header can ask for gigabytes.

use super::*;

pub(super) fn curve(at: &str, c: &Curve) -> Checked {
    name(&format!("{at}.workload"), &c.workload)?;
    params(&format!("{at}.params"), &c.params)?;
    name(&format!("{at}.operation"), &c.operation)?;
    each(
        &format!("{at}.unmeasured_cpus"),
        &c.unmeasured_cpus,
        MAX_ENTRIES,
        |at, &k| within(at, k as u64, 1, MAX_PARALLEL as u64),
    )?;
    each(&format!("{at}.points"), &c.points, MAX_ITEMS, point)
}

fn cpu_split(at: &str, s: &CpuSplit) -> Checked {
    let parts = named_fields!(s: user, system, irq, softirq, steal, idle);
    for (f, v) in parts {
        fraction(&format!("{at}.{f}"), v)?;
    }
    let sum: f64 = parts.iter().map(|p| p.1).sum();
    if sum > 1.0 + SUMMARY_TOLERANCE {
        return Err(bad(at, format!("fractions summing to {sum}, above 1")));
    }
    Ok(())
}

fn service_demand(at: &str, d: &ServiceDemand) -> Checked {
    non_negative(&format!("{at}.client_ns_per_op"), d.client_ns_per_op)?;
    if let Some(s) = d.server_ns_per_op {
        non_negative(&format!("{at}.server_ns_per_op"), s)?;
    }
    Ok(())
}

/// `a` agrees with `b` to rounding, relative to their size.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= SUMMARY_TOLERANCE * a.abs().max(b.abs())
}

fn point(at: &str, p: &Point) -> Checked {
    within(&format!("{at}.load"), p.load as u64, 1, MAX_PARALLEL as u64)?;
    within(&format!("{at}.cpus"), p.cpus as u64, 1, MAX_PARALLEL as u64)?;
    if !p.cpu_ids.is_empty() && p.cpu_ids.len() != p.cpus as usize {
        return Err(bad(
            format!("{at}.cpu_ids"),
            format!("{} CPUs named for {} CPUs", p.cpu_ids.len(), p.cpus),
        ));
    }
    if p.trials.is_empty() {
        return Err(bad(format!("{at}.trials"), "no trials"));
    }
    each(&format!("{at}.trials"), &p.trials, MAX_ITEMS, trial)?;
    let kept: Vec<f64> = p.kept_trials().map(|t| t.throughput).collect();
    if kept.is_empty() {
        return Err(bad(format!("{at}.trials"), "every trial dropped"));
    }
    let mean = kept.iter().sum::<f64>() / kept.len() as f64;
    non_negative(&format!("{at}.throughput"), p.throughput)?;
    if !close(p.throughput, mean) {
        return Err(bad(
            format!("{at}.throughput"),
            format!(
                "{} disagrees with its kept trials, whose mean is {mean}",
                p.throughput
            ),
        ));
    }
    non_negative(
        &format!("{at}.throughput_half_width"),
        p.throughput_half_width,
    )?;
    p.convergence
        .rule
        .validate()
        .map_err(|m| bad(format!("{at}.convergence.rule"), m))?;
    if let Some(w) = p.convergence.width {
        non_negative(&format!("{at}.convergence.width"), w)?;
    }
    latency(&format!("{at}.latency"), &p.latency)?;
    each(
        &format!("{at}.by_type"),
        &p.by_type,
        MAX_ENTRIES,
        |at, t| {
            name(&format!("{at}.name"), &t.name)?;
            latency(&format!("{at}.latency"), &t.latency)?;
            match t.cpu_ns_per_op {
                Some(ns) => non_negative(&format!("{at}.cpu_ns_per_op"), ns),
                None => Ok(()),
            }
        },
    )?;
    cpu_split(&format!("{at}.cpu"), &p.cpu)?;
    service_demand(&format!("{at}.service_demand"), &p.service_demand)?;
    extras(at, &p.extra)
}

fn trial(at: &str, t: &Trial) -> Checked {
    non_negative(&format!("{at}.throughput"), t.throughput)?;
    if t.window_ns == 0 {
        return Err(bad(format!("{at}.window_ns"), "a window of 0 ns"));
    }
    let rate = t.ops as f64 * 1e9 / t.window_ns as f64;
    if !close(t.throughput, rate) {
        return Err(bad(
            format!("{at}.throughput"),
            format!(
                "{} disagrees with {} operations in {} ns ({rate})",
                t.throughput, t.ops, t.window_ns
            ),
        ));
    }
    cpu_split(&format!("{at}.cpu"), &t.cpu)?;
    service_demand(&format!("{at}.service_demand"), &t.service_demand)?;
    extras(at, &t.extra)
}

/// A trial's or point's named figures: energy cannot be negative.
fn extras(at: &str, extra: &std::collections::BTreeMap<String, f64>) -> Checked {
    count(&format!("{at}.extra"), extra.len(), MAX_ENTRIES)?;
    for (k, &v) in extra {
        name(&format!("{at}.extra (a key)"), k)?;
        let at = format!("{at}.extra.{k}");
        finite(&at, v)?;
        if k.starts_with("energy_") {
            non_negative(&at, v)?;
        }
    }
    Ok(())
}

/// Latency figures must be those of their histogram.
fn latency(at: &str, l: &Latency) -> Checked {
    let h = decode_histogram(&l.histogram).map_err(|m| bad(format!("{at}.histogram"), m))?;
    let want = Latency::of(&h);
    let exact = [
        ("count", l.count, want.count),
        ("min_ns", l.min_ns, want.min_ns),
        ("p50_ns", l.p50_ns, want.p50_ns),
        ("p90_ns", l.p90_ns, want.p90_ns),
        ("p99_ns", l.p99_ns, want.p99_ns),
        ("p999_ns", l.p999_ns, want.p999_ns),
        ("max_ns", l.max_ns, want.max_ns),
    ];
    for (f, got, want) in exact {
        if got != want {
            return Err(bad(
                format!("{at}.{f}"),
                format!("{got} disagrees with its histogram, which gives {want}"),
            ));
        }
    }
    if !(l.mean_ns.is_finite() && close(l.mean_ns, want.mean_ns)) {
        return Err(bad(
            format!("{at}.mean_ns"),
            format!(
                "{} disagrees with its histogram, which gives {}",
                l.mean_ns, want.mean_ns
            ),
        ));
    }
    Ok(())
}

/// The HdrHistogram V2 cookies (compressed, and the plain encoding inside).
pub(super) const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;
pub(super) const V2_COOKIE: u32 = 0x1c84_9313;

/// Decode a latency histogram within bounds: the base64 text, the inflated
/// encoding and the histogram's own bounds (those every point uses) are
/// checked before anything is allocated from what the header claims.
pub fn decode_histogram(e: &EncodedHistogram) -> Result<Histogram<u64>, String> {
    if e.0.len() > MAX_HISTOGRAM_BYTES {
        return Err(format!(
            "{} bytes of encoded histogram (at most {MAX_HISTOGRAM_BYTES})",
            e.0.len()
        ));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(e.0.as_bytes())
        .map_err(|e| format!("not base64: {e}"))?;
    let word = |b: &[u8], at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
    };
    if word(&bytes, 0) != Some(V2_COMPRESSED_COOKIE) {
        return Err("not an HdrHistogram V2 deflate encoding".into());
    }
    let compressed_len = word(&bytes, 4).ok_or("truncated")? as usize;
    let compressed = bytes
        .get(8..8 + compressed_len)
        .ok_or("shorter than its header says")?;
    let mut plain = Vec::new();
    flate2::read::ZlibDecoder::new(compressed)
        .take(MAX_HISTOGRAM_DECODED_BYTES + 1)
        .read_to_end(&mut plain)
        .map_err(|e| format!("does not inflate: {e}"))?;
    if plain.len() as u64 > MAX_HISTOGRAM_DECODED_BYTES {
        return Err(format!(
            "inflates beyond {MAX_HISTOGRAM_DECODED_BYTES} bytes"
        ));
    }
    // V2 header: cookie, payload length, normalising offset, significant
    // digits (u32 each), lowest and highest trackable values (u64 each),
    // integer-to-double ratio (f64); then the payload.
    const HEADER: usize = 40;
    if word(&plain, 0) != Some(V2_COOKIE) || plain.len() < HEADER {
        return Err("not an HdrHistogram V2 encoding".into());
    }
    let payload = word(&plain, 4).ok_or("truncated")? as usize;
    if payload != plain.len() - HEADER {
        return Err(format!(
            "a payload of {payload} bytes announced, {} present",
            plain.len() - HEADER
        ));
    }
    let u64_at = |at: usize| u64::from_be_bytes(plain[at..at + 8].try_into().unwrap());
    let (sigfig, low, high) = (word(&plain, 12).unwrap(), u64_at(16), u64_at(24));
    if (sigfig, low, high)
        != (
            HISTOGRAM_SIGFIG as u32,
            HISTOGRAM_LOWEST_NS,
            HISTOGRAM_HIGHEST_NS,
        )
    {
        return Err(format!(
            "bounds {low}..{high} ns at {sigfig} digits, not the {HISTOGRAM_LOWEST_NS}..{HISTOGRAM_HIGHEST_NS} ns at {HISTOGRAM_SIGFIG} digits every latency histogram uses"
        ));
    }
    Deserializer::new()
        .deserialize(&mut plain.as_slice())
        .map_err(|e| format!("not an HdrHistogram V2 encoding: {e:?}"))
}
