//! A fuzz test of `import` with a fixed seed (issue 18): documents of a
//! fixed corpus of real exports (tests/data/import-corpus and the format-1
//! sample) are mutated — bytes flipped, documents cut short, fields dropped
//! or duplicated, numbers made extreme, strings made huge or hostile, values
//! of the wrong type, list entries repeated — and each mutant must either
//! import valid data or be refused with the store unchanged, never panic.
//!
//! It reads and stores in-process (`json::read`, then `Store::import_runs`
//! into a copy of a store holding one run), which is the import command's
//! path without the process start; a sample of the imported mutants is
//! also shown, reported and compared by the binary, which must not crash.
//! The counts are printed (`cargo test import_fuzz -- --nocapture`).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use touchstone_results::json::{self, JsonError};
use touchstone_results::random::SplitMix64;
use touchstone_results::store::{Open, Store};
use touchstone_results::{validate, Summary};

use crate::common::text;

const SEED: u64 = 0x1818_1818_f022_2026;
const MUTANTS: usize = 2000;
/// Every this many imported mutants, the binary reads the store too.
const SHOWN_EVERY: usize = 25;

const CORPUS: [&str; 3] = [
    include_str!("../data/import-corpus/micro-and-tcp_rr.json"),
    include_str!("../data/import-corpus/parallel-2.json"),
    include_str!("../../crates/results/testdata/format-v1.json"),
];

/// SplitMix64, with a modulo pick: small, fixed, good enough to pick
/// mutations (the seeds' cases as they always were).
struct Rng(SplitMix64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// JSON pointers of every node of `v`.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                pointers(
                    x,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pointers(x, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

fn extreme_number(rng: &mut Rng) -> Value {
    let raw: &&str = rng.pick(&[
        "0",
        "-1",
        "-0.0",
        "1e308",
        "-1e308",
        "4294967295",
        "4294967296",
        "18446744073709551615",
        "-9223372036854775808",
        "5e-324",
        "1.5",
        "9007199254740993",
        "1e-9",
        "-0.039",
    ]);
    serde_json::from_str(raw).unwrap()
}

fn hostile_string(rng: &mut Rng) -> Value {
    match rng.below(7) {
        0 => "".into(),
        1 => "../../etc/passwd".into(),
        2 => "A".repeat(1 << rng.below(22)).into(),
        3 => "\u{1b}]0;title\u{7}\u{1b}[31m\u{9b}2J\r\u{7f}"
            .repeat(1 + rng.below(1000))
            .into(),
        4 => "é\u{202e}".repeat(600).into(),
        5 => "0123456789abcdef".into(),
        _ => "\u{0}".into(),
    }
}

fn other_type(rng: &mut Rng) -> Value {
    let raw: &&str = rng.pick(&["null", "[]", "{}", "true", "\"x\"", "0", "[[[[]]]]"]);
    serde_json::from_str(raw).unwrap()
}

/// Serialise with the first key of the object at `dup` written twice.
fn with_duplicate_key(v: &Value, at: &str, here: &str, out: &mut String) {
    match v {
        Value::Object(m) => {
            out.push('{');
            let mut first = true;
            for (i, (k, x)) in m.iter().enumerate() {
                let times = if here == at && i == 0 { 2 } else { 1 };
                for _ in 0..times {
                    if !first {
                        out.push(',');
                    }
                    first = false;
                    out.push_str(&serde_json::to_string(k).unwrap());
                    out.push(':');
                    let p = format!("{here}/{}", k.replace('~', "~0").replace('/', "~1"));
                    with_duplicate_key(x, at, &p, out);
                }
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                with_duplicate_key(x, at, &format!("{here}/{i}"), out);
            }
            out.push(']');
        }
        x => out.push_str(&x.to_string()),
    }
}

/// One of the pointers `ps` into `v` whose node is `wanted`, at random;
/// none when no node is.
fn pick_where(
    v: &Value,
    ps: &[String],
    rng: &mut Rng,
    wanted: impl Fn(&Value) -> bool,
) -> Option<String> {
    let fit: Vec<&String> = ps
        .iter()
        .filter(|p| v.pointer(p).is_some_and(&wanted))
        .collect();
    (!fit.is_empty()).then(|| rng.pick(&fit).to_string())
}

/// One mutant of `doc`: one to three mutations.
fn mutate(doc: &Value, rng: &mut Rng) -> Vec<u8> {
    let mut v = doc.clone();
    let rounds = 1 + rng.below(3);
    for round in 0..rounds {
        let mut ps = Vec::new();
        pointers(&v, String::new(), &mut ps);
        let p = rng.pick(&ps).clone();
        let last = round + 1 == rounds;
        match rng.below(9) {
            0 if last => {
                let mut bytes = v.to_string().into_bytes();
                for _ in 0..1 + rng.below(4) {
                    let i = rng.below(bytes.len());
                    bytes[i] ^= 1 << rng.below(8);
                }
                return bytes;
            }
            1 if last => {
                let bytes = v.to_string().into_bytes();
                let cut = rng.below(bytes.len());
                return bytes[..cut].to_vec();
            }
            2 if last => {
                let mut out = String::new();
                let at = pick_where(&v, &ps, rng, Value::is_object).expect("the root is an object");
                with_duplicate_key(&v, &at, "", &mut out);
                return out.into_bytes();
            }
            3 => {
                // Drop a field of the object holding this node.
                if let Some((parent, key)) = p.rsplit_once('/') {
                    if let Some(Value::Object(m)) = v.pointer_mut(parent) {
                        m.remove(key);
                    }
                }
            }
            4 => {
                if let Some(at) = pick_where(&v, &ps, rng, Value::is_number) {
                    *v.pointer_mut(&at).unwrap() = extreme_number(rng);
                }
            }
            5 => {
                if let Some(at) = pick_where(&v, &ps, rng, Value::is_string) {
                    *v.pointer_mut(&at).unwrap() = hostile_string(rng);
                }
            }
            6 => {
                let at = p.clone();
                let new = other_type(rng);
                if let Some(x) = v.pointer_mut(&at) {
                    *x = new;
                }
            }
            7 => {
                // Repeat an entry of a list (a run, a sample, a point…).
                let full = |x: &Value| x.as_array().is_some_and(|a| !a.is_empty());
                if let Some(at) = pick_where(&v, &ps, rng, full) {
                    let a = v.pointer_mut(&at).unwrap().as_array_mut().unwrap();
                    let i = rng.below(a.len());
                    let copy = a[i].clone();
                    a.insert(i, copy);
                }
            }
            _ => {
                // A number nudged: a summary off its samples, an interval reversed.
                if let Some(at) = pick_where(&v, &ps, rng, Value::is_number) {
                    let x = v.pointer_mut(&at).unwrap();
                    let f = x.as_f64().unwrap_or(0.0);
                    *x = serde_json::json!(f * 1.001 - 1.0);
                }
            }
        }
    }
    v.to_string().into_bytes()
}

/// Everything a store holds, to tell whether it changed.
fn dump(db: &Path) -> String {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut out = String::new();
    for sql in [
        "SELECT id || seq || coalesce(label, '') || hostname || started_at || status || header FROM runs ORDER BY seq",
        "SELECT run_id || seq || name || doc FROM measurements ORDER BY run_id, seq",
        "SELECT run_id || seq || workload || doc FROM curves ORDER BY run_id, seq",
    ] {
        let mut st = c.prepare(sql).unwrap();
        let rows = st.query_map([], |r| r.get::<_, String>(0)).unwrap();
        for r in rows {
            out.push_str(&r.unwrap());
            out.push('\n');
        }
    }
    out
}

/// What an imported run must be, checked here independently of
/// `validate` (and by it again: validation is idempotent).
fn assert_valid(run: &touchstone_results::Run) {
    let mut again = run.clone();
    validate::run(0, &mut again).unwrap_or_else(|e| panic!("stored but invalid: {e}"));
    assert_eq!(&again, run, "validation is idempotent");
    assert!(!run.id.is_empty() && run.id.len() <= 128 && run.id != "..");
    assert!(run
        .id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)));
    assert!(run.label.as_ref().is_none_or(|l| l.len() <= 1024));
    assert!(run.host.hostname.len() <= 255);
    for m in &run.measurements {
        let s = Summary::of(&m.samples).expect("finite samples");
        assert!(m.samples.iter().all(|x| *x >= 0.0), "{}", m.name);
        assert!((1..=65_536).contains(&m.parallel));
        assert!(!m.name.is_empty() && m.name.len() <= 512);
        if m.intervals.is_empty() {
            assert!(m.summary.median >= s.min && m.summary.median <= s.max);
        } else {
            assert_eq!(m.summary, s, "{}", m.name);
        }
        for iv in &m.intervals {
            assert!(iv.end_ns > iv.start_ns && iv.process < m.parallel);
        }
    }
    for c in &run.curves {
        for p in &c.points {
            assert!(p.load >= 1 && p.cpus >= 1 && !p.trials.is_empty());
            let h = validate::decode_histogram(&p.latency.histogram).unwrap();
            assert_eq!(p.latency.count, h.len());
        }
    }
}

#[test]
fn mutated_imports_either_import_valid_data_or_change_nothing() {
    let docs: Vec<Value> = CORPUS
        .iter()
        .map(|t| serde_json::from_str(t).unwrap())
        .collect();
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    // The store every mutant is imported into: one run already there.
    let seed_db = dir.path().join("seed.sqlite");
    {
        let mut store = Store::open(&seed_db, Open::CreateIfMissing).unwrap();
        let mut seed = json::parse(CORPUS[1]).unwrap().runs;
        seed[0].id = "5eed5eed5eed5eed".into();
        store.import_runs(&seed).unwrap();
    }
    let _ = rusqlite::Connection::open(&seed_db)
        .unwrap()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
    let seed_dump = dump(&seed_db);

    let mut rng = Rng(SplitMix64::new(SEED));
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut imported_runs = 0;
    let mut shown = 0;
    let started = std::time::Instant::now();
    for n in 0..MUTANTS {
        let doc = &docs[rng.below(docs.len())];
        let bytes = mutate(doc, &mut rng);
        let read = json::read(bytes.as_slice());
        let doc = match read {
            Err(e) => {
                let kind = match e {
                    JsonError::Syntax(_) => "refused: not JSON",
                    JsonError::Foreign => "refused: foreign",
                    JsonError::TooNew(_) | JsonError::TooOld(_) => "refused: version",
                    JsonError::Shape(_) => "refused: shape",
                    JsonError::Invalid(_) => "refused: checks",
                    JsonError::TooLarge | JsonError::RunTooLarge | JsonError::Read(_) => {
                        "refused: size"
                    }
                };
                *counts.entry(kind).or_default() += 1;
                continue;
            }
            Ok(doc) => doc,
        };
        for run in &doc.runs {
            assert_valid(run);
        }
        let db = dir.path().join(format!("m{n}.sqlite"));
        std::fs::copy(&seed_db, &db).unwrap();
        let mut store = Store::open(&db, Open::MustExist).unwrap();
        match store.import_runs(&doc.runs) {
            Err(_) => {
                drop(store);
                assert_eq!(
                    dump(&db),
                    seed_dump,
                    "mutant {n}: a failed import changed the store"
                );
                *counts.entry("refused: by the store").or_default() += 1;
            }
            Ok(skipped) => {
                *counts.entry("imported").or_default() += 1;
                for run in doc.runs.iter().filter(|r| !skipped.contains(&r.id)) {
                    let back = store.load_run(&run.id).unwrap();
                    assert_eq!(&back, run, "mutant {n}: stored as read");
                    imported_runs += 1;
                }
                drop(store);
                if counts["imported"] % SHOWN_EVERY == 1 {
                    shown += 1;
                    let d = db.to_str().unwrap();
                    let first = doc.runs.first().map(|r| r.id.clone()).unwrap_or_default();
                    for args in [
                        vec!["--db", d, "runs"],
                        vec!["--db", d, "show", "last"],
                        vec!["--db", d, "report"],
                        vec!["--db", d, "compare", "5eed5eed5eed5eed", &first],
                    ] {
                        let o = std::process::Command::new(env!("CARGO_BIN_EXE_touchstone"))
                            .args(&args)
                            .output()
                            .unwrap();
                        assert!(
                            matches!(o.status.code(), Some(0..=2)),
                            "mutant {n}: {args:?} crashed: {}",
                            text(&o)
                        );
                    }
                }
            }
        }
        let _ = std::fs::remove_file(&db);
        for suffix in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
        }
    }
    let imported = counts.get("imported").copied().unwrap_or(0);
    let refused: usize = MUTANTS - imported;
    eprintln!(
        "import fuzz, seed {SEED:#x}: {MUTANTS} mutants, {imported} imported ({imported_runs} runs), {refused} refused; {counts:?}; {shown} read back by the binary; {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // The mix must exercise both outcomes and every kind of refusal.
    assert!(imported > MUTANTS / 20, "{counts:?}");
    for kind in ["refused: not JSON", "refused: shape", "refused: checks"] {
        assert!(
            counts.get(kind).copied().unwrap_or(0) > 10,
            "{kind}: {counts:?}"
        );
    }
}
