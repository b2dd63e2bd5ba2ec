use super::curve::{V2_COMPRESSED_COOKIE, V2_COOKIE};
use super::*;
use crate::json::{self, JsonError};
use serde_json::{json, Value};

/// Real exports: micro-benchmarks (timed, derived, a baseline) and a
/// tcp_rr load curve; a measurement of two processes.
const CORPUS: &str = include_str!("../../../../tests/data/import-corpus/micro-and-tcp_rr.json");
const PARALLEL: &str = include_str!("../../../../tests/data/import-corpus/parallel-2.json");

fn doc() -> Value {
    serde_json::from_str(CORPUS).unwrap()
}

/// The refusal of `v` after `edit`, as text (panics if it is accepted).
fn refused(edit: impl FnOnce(&mut Value)) -> String {
    let mut v = doc();
    edit(&mut v);
    match json::parse(&v.to_string()) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

fn m0(v: &mut Value) -> &mut Value {
    &mut v["runs"][0]["measurements"][0]
}

#[test]
fn real_exports_pass_unchanged() {
    for text in [
        CORPUS,
        PARALLEL,
        include_str!("../../testdata/format-v1.json"),
    ] {
        let raw: json::Document = serde_json::from_str(text).unwrap();
        let checked = json::parse(text).unwrap();
        for (a, b) in checked.runs.iter().zip(&raw.runs) {
            for (x, y) in a.measurements.iter().zip(&b.measurements) {
                assert_eq!(x.summary, y.summary, "{}: exactly recomputed", x.name);
                assert_eq!(x.baseline, y.baseline, "{}", x.name);
            }
            assert!(a == b, "run {} changed", a.id);
        }
    }
}

/// The corpus's first measurement (7 samples of a median) as if
/// measured in rounds of 3, 2 and 2, with the summary that gives.
fn in_rounds(v: &mut Value) {
    let m = m0(v);
    let samples: Vec<f64> = serde_json::from_value(m["samples"].clone()).unwrap();
    let rounds = vec![0u32, 0, 0, 1, 1, 2, 2];
    let summary = Summary::of_rounds(&samples, &rounds, Statistic::Median).unwrap();
    m["rounds"] = json!(rounds);
    m["summary"] = serde_json::to_value(summary).unwrap();
}

/// A measurement of several rounds: accepted as written, its headline
/// the median of the rounds' figures; the rounds must match the
/// samples and the summary must agree with them.
#[test]
fn rounds_are_checked_against_the_samples_and_the_summary() {
    let mut v = doc();
    in_rounds(&mut v);
    let d = json::parse(&v.to_string()).unwrap();
    let m = &d.runs[0].measurements[0];
    let r = m.summary.rounds.as_ref().expect("rounds kept");
    assert_eq!(r.figures.len(), 3);
    assert_eq!(m.value(), r.headline);
    let e = refused(|v| {
        in_rounds(v);
        m0(v)["rounds"] = json!([0, 0, 1]);
    });
    assert!(
        e.contains("measurements[0].rounds: 3 rounds for 7 samples"),
        "{e}"
    );
    let e = refused(|v| {
        in_rounds(v);
        let h = m0(v)["summary"]["rounds"]["headline"].as_f64().unwrap();
        m0(v)["summary"]["rounds"]["headline"] = json!(h * 1.5);
    });
    assert!(e.contains("summary.rounds.headline"), "{e}");
    let e = refused(|v| {
        in_rounds(v);
        m0(v)["summary"].as_object_mut().unwrap().remove("rounds");
    });
    assert!(e.contains("summary.rounds: missing"), "{e}");
    // Rounds claimed of samples that came from one.
    let e = refused(|v| {
        let mut w = doc();
        in_rounds(&mut w);
        m0(v)["summary"]["rounds"] = m0(&mut w)["summary"]["rounds"].clone();
    });
    assert!(e.contains("summary.rounds: present"), "{e}");
}

#[test]
fn ids_that_are_empty_paths_or_huge_are_refused() {
    for (id, needle) in [
        ("", "an empty run id"),
        ("../../etc/passwd", "a path separator"),
        ("..", "'.' or '..'"),
        ("a\u{1b}[2Jb", "control character U+001B"),
        ("has space", "U+0020"),
    ] {
        let e = refused(|v| v["runs"][0]["id"] = json!(id));
        assert!(
            e.contains("runs[0].id") && e.contains(needle),
            "{id:?}: {e}"
        );
        assert!(
            !e.contains("passwd") && !e.contains('\u{1b}'),
            "not echoed: {e}"
        );
    }
    let e = refused(|v| v["runs"][0]["id"] = json!("a".repeat(100_000)));
    assert!(e.contains("a run id of 100000 bytes (at most 128)"), "{e}");
}

#[test]
fn counts_out_of_bounds_are_refused() {
    for p in [0u64, u32::MAX as u64] {
        let e = refused(|v| m0(v)["parallel"] = json!(p));
        assert!(
            e.contains("measurements[0].parallel") && e.contains("outside 1..=65536"),
            "{e}"
        );
    }
    let e = refused(|v| v["runs"][0]["options"]["parallel"] = json!([0]));
    assert!(e.contains("options.parallel[0]"), "{e}");
    let e = refused(|v| v["runs"][0]["options"]["repetitions"] = json!(0));
    assert!(e.contains("options.repetitions"), "{e}");
    let e = refused(|v| m0(v)["summary"]["n"] = json!(12345));
    assert!(e.contains("summary.n: 12345 samples counted"), "{e}");
}

#[test]
fn negative_empty_and_non_number_samples_are_refused() {
    let e = refused(|v| m0(v)["samples"][3] = json!(-1.0));
    assert!(
        e.contains("measurements[0].samples[3]: -1 is negative"),
        "{e}"
    );
    let e = refused(|v| m0(v)["samples"] = json!([]));
    assert!(e.contains("measurements[0].samples: no samples"), "{e}");
    // JSON has no NaN or infinity; a number too large for a double is
    // refused by the parser, with its place.
    let e = refused(|v| {
        *v = serde_json::from_str(
            &v.to_string()
                .replacen("\"samples\": [", "\"samples\": [1e999, ", 1)
                .replacen("\"samples\":[", "\"samples\":[1e999,", 1),
        )
        .unwrap_or(json!(null))
    });
    assert!(!e.is_empty());
    let text = doc()
        .to_string()
        .replacen("\"samples\":[", "\"samples\":[1e999,", 1);
    let e = json::parse(&text).unwrap_err().to_string();
    assert!(e.contains("number out of range at line 1 column"), "{e}");
}

#[test]
fn a_summary_contradicting_its_samples_is_refused_and_rounding_is_not() {
    // The finding: a median far outside the interval made compare print
    // an interval of −0.039–1.000.
    let e = refused(|v| m0(v)["summary"]["ci_low"] = json!(-0.039));
    assert!(
        e.contains("measurements[0].summary.ci_low: -0.039 disagrees with its samples"),
        "{e}"
    );
    let e = refused(|v| {
        let m = m0(v);
        let med = m["summary"]["median"].as_f64().unwrap();
        m["summary"]["median"] = json!(med * 1.01);
    });
    assert!(e.contains("summary.median"), "{e}");
    // Rounded to 9 significant digits by another writer: accepted, and
    // the summary stored is the one recomputed from the samples.
    let mut v = doc();
    let exact = v["runs"][0]["measurements"][0]["summary"]["mean"]
        .as_f64()
        .unwrap();
    let rounded: f64 = format!("{exact:.8e}").parse().unwrap();
    v["runs"][0]["measurements"][0]["summary"]["mean"] = json!(rounded);
    let d = json::parse(&v.to_string()).unwrap();
    assert_eq!(d.runs[0].measurements[0].summary.mean, exact);
}

#[test]
fn a_derived_figure_keeps_its_headline_within_its_samples() {
    // line/detected is derived (no intervals): its median is its own.
    let mut v = doc();
    let i = v["runs"][0]["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .position(|m| m["name"] == "line/detected")
        .unwrap();
    v["runs"][0]["measurements"][i]["summary"]["median"] = json!(1e12);
    let e = json::parse(&v.to_string()).unwrap_err().to_string();
    assert!(
        e.contains("summary.median: 1000000000000 lies outside its samples"),
        "{e}"
    );
}

#[test]
fn intervals_must_end_after_they_start_within_the_processes() {
    let e = refused(|v| {
        let iv = &mut m0(v)["intervals"][0];
        let start = iv["start_ns"].as_u64().unwrap();
        iv["end_ns"] = json!(start - 1);
    });
    assert!(
        e.contains("intervals[0]: ends at") && e.contains("not after its start"),
        "{e}"
    );
    let e = refused(|v| m0(v)["intervals"][0]["process"] = json!(7));
    assert!(
        e.contains("intervals[0].process: process 7 of a measurement of 1"),
        "{e}"
    );
}

#[test]
fn labels_host_names_and_names_of_unreasonable_length_are_refused() {
    let e = refused(|v| v["runs"][0]["label"] = json!("x".repeat(4 << 20)));
    assert!(
        e.contains("runs[0].label: 4194304 bytes of text (at most 1024)"),
        "{e}"
    );
    let e = refused(|v| v["runs"][0]["host"]["hostname"] = json!("h".repeat(256)));
    assert!(e.contains("host.hostname: 256 bytes"), "{e}");
    let e = refused(|v| m0(v)["name"] = json!("n".repeat(513)));
    assert!(e.contains("measurements[0].name: 513 bytes"), "{e}");
    let e = refused(|v| m0(v)["name"] = json!(""));
    assert!(e.contains("measurements[0].name: an empty name"), "{e}");
    let e = refused(|v| v["runs"][0]["reason"] = json!("r".repeat(MAX_TEXT_BYTES + 1)));
    assert!(e.contains("runs[0].reason"), "{e}");
    let e = refused(|v| v["runs"][0]["notes"] = json!(["n".repeat(MAX_TEXT_BYTES + 1)]));
    assert!(e.contains("runs[0].notes[0]"), "{e}");
    let e = refused(|v| v["runs"][0]["notes"] = json!(vec!["n"; MAX_ENTRIES + 1]));
    assert!(e.contains("runs[0].notes"), "{e}");
    // At the limit: accepted.
    let mut v = doc();
    v["runs"][0]["label"] = json!("é".repeat(MAX_LABEL_BYTES / 2));
    json::parse(&v.to_string()).unwrap();
}

#[test]
fn a_fingerprint_is_checked_like_the_host_and_may_be_absent() {
    // The corpus predates the fingerprint: it reads (real_exports_pass_unchanged).
    let e =
        refused(|v| v["runs"][0]["host"]["fingerprint"] = json!({"microcode": "0".repeat(513)}));
    assert!(e.contains("host.fingerprint.microcode: 513 bytes"), "{e}");
    let e = refused(|v| {
        v["runs"][0]["host"]["fingerprint"] = json!({"mitigations": {"": "Not affected"}})
    });
    assert!(
        e.contains("host.fingerprint.mitigations (a key): an empty name"),
        "{e}"
    );
    let mut v = doc();
    v["runs"][0]["host"]["fingerprint"] =
        json!({"thp_enabled": "always", "mitigations": {"meltdown": "Not affected"}});
    let run = &json::parse(&v.to_string()).unwrap().runs[0];
    let f = run.host.fingerprint.as_ref().unwrap();
    assert_eq!(
        (f.thp_enabled.as_str(), f.smt.as_str()),
        ("always", "unknown")
    );
}

#[test]
fn cpu_figures_among_the_extras_cannot_be_negative() {
    let e = refused(|v| m0(v)["extra"] = json!({"cpu_pct_server": -1.0}));
    assert!(
        e.contains("measurements[0].extra.cpu_pct_server: -1 is negative"),
        "{e}"
    );
    // Other derived figures may be (a difference, a slope).
    let mut v = doc();
    m0(&mut v)["extra"] = json!({"cpu_us_per_op_server": 2.5, "slope": -1.0});
    json::parse(&v.to_string()).unwrap();
}

fn point0(v: &mut Value) -> &mut Value {
    &mut v["runs"][0]["curves"][0]["points"][0]
}

#[test]
fn load_curves_are_checked_against_their_trials_and_histograms() {
    let e = refused(|v| point0(v)["latency"]["p99_ns"] = json!(1));
    assert!(
        e.contains("points[0].latency.p99_ns: 1 disagrees with its histogram"),
        "{e}"
    );
    let e = refused(|v| point0(v)["throughput"] = json!(1e9));
    assert!(
        e.contains("points[0].throughput") && e.contains("kept trials"),
        "{e}"
    );
    let e = refused(|v| point0(v)["trials"][0]["throughput"] = json!(-5.0));
    assert!(e.contains("trials[0].throughput: -5 is negative"), "{e}");
    let e = refused(|v| point0(v)["trials"] = json!([]));
    assert!(e.contains("points[0].trials: no trials"), "{e}");
    let e = refused(|v| point0(v)["load"] = json!(0));
    assert!(e.contains("points[0].load"), "{e}");
    let e = refused(|v| point0(v)["cpu"]["user"] = json!(3.0));
    assert!(e.contains("points[0].cpu.user"), "{e}");
    let e = refused(|v| point0(v)["latency"]["histogram"] = json!("AAAA"));
    assert!(e.contains("latency.histogram: not an HdrHistogram"), "{e}");
    let e = refused(|v| point0(v)["extra"] = json!({"energy_package_j": -1.0}));
    assert!(
        e.contains("points[0].extra.energy_package_j: -1 is negative"),
        "{e}"
    );
    let e = refused(|v| point0(v)["trials"][0]["extra"] = json!({"energy_dram_w": -2.0}));
    assert!(e.contains("trials[0].extra.energy_dram_w"), "{e}");
    let mut v = doc();
    point0(&mut v)["extra"] = json!({"energy_package_j": 4.5, "energy_package_w": 1.5});
    json::parse(&v.to_string()).unwrap();
}

/// An encoding whose header claims a 4 GB payload and huge bounds:
/// hdrhistogram's own deserialiser would allocate what it claims.
#[test]
fn a_histogram_claiming_gigabytes_is_refused_without_allocating_them() {
    use std::io::Write;
    let mut plain = Vec::new();
    plain.extend(V2_COOKIE.to_be_bytes());
    plain.extend(u32::MAX.to_be_bytes()); // payload length
    plain.extend(0u32.to_be_bytes());
    plain.extend(5u32.to_be_bytes());
    plain.extend(1u64.to_be_bytes());
    plain.extend(u64::MAX.to_be_bytes());
    plain.extend(1f64.to_be_bytes());
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&plain).unwrap();
    let compressed = z.finish().unwrap();
    let mut bytes = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
    bytes.extend((compressed.len() as u32).to_be_bytes());
    bytes.extend(compressed);
    let enc = EncodedHistogram(base64::engine::general_purpose::STANDARD.encode(bytes));
    let e = decode_histogram(&enc).unwrap_err();
    assert!(e.contains("announced"), "{e}");
    // A zlib bomb: a megabyte of zeros per kilobyte.
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&V2_COOKIE.to_be_bytes()).unwrap();
    z.write_all(&vec![0u8; 64 << 20]).unwrap();
    let compressed = z.finish().unwrap();
    let mut bytes = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
    bytes.extend((compressed.len() as u32).to_be_bytes());
    bytes.extend(compressed);
    let enc = EncodedHistogram(base64::engine::general_purpose::STANDARD.encode(bytes));
    assert!(decode_histogram(&enc)
        .unwrap_err()
        .contains("inflates beyond"));
}

#[test]
fn type_errors_name_the_line_and_column() {
    let text = CORPUS.replacen("\"parallel\": 1", "\"parallel\": \"one\"", 1);
    assert_ne!(text, CORPUS);
    let e = json::parse(&text).unwrap_err();
    assert!(matches!(e, JsonError::Shape(_)), "{e}");
    let line = text[..text.find("\"one\"").unwrap()].lines().count();
    assert!(
        e.to_string().contains(&format!("at line {line} column")),
        "{e} (line {line})"
    );
}
