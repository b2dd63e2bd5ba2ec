//! The versioned JSON exchange format for runs (docs/results-format.md).
//! A document names its format and version so that a foreign or future file
//! is refused with a clear message rather than half-read.
//!
//! Versions: 1, runs of micro-benchmark measurements; 2 adds the load curves
//! of workloads (`Run::curves`, `RunOptions::workload`); 3 measures in rounds:
//! each sample's round, the headline as the median of the rounds' figures
//! and its interval over rounds (`Summary::rounds`), and parallel samples
//! from windows all processes shared. A version-1 document is a version-2
//! document without curves, and either is a version-3 document of one
//! round, so each reads as one.
//!
//! A document may also carry the inventory of its runs' hosts
//! (`inventory`: price and power, `crate::inventory`), after its runs;
//! one without it reads as one with none, and a touchstone before it
//! ignores it (an unknown field).
//!
//! A document of any number of runs is written and read one run at a time
//! (`DocumentWriter`, `read_each`): what must fit in memory, and what the
//! size limit bounds, is one run.

use std::cell::{Cell, RefCell};
use std::io::{Read, Write};

use serde::de::{DeserializeSeed, Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::inventory::HostCost;
use crate::model::Run;
use crate::validate::{self, Invalid};

pub const FORMAT_NAME: &str = "touchstone-results";
pub const FORMAT_VERSION: u32 = 3;
/// The oldest version still read (every version so far).
pub const OLDEST_VERSION: u32 = 1;
/// The largest document `read` takes whole, bytes (the results a fleet's
/// host sends home).
pub const MAX_DOCUMENT_BYTES: u64 = 256 << 20;
/// The most `read_each` reads for one run (and for what comes before,
/// between or after runs), bytes: far above any run, and a bound on the
/// memory an import of any number of runs takes.
pub const MAX_RUN_BYTES: u64 = 256 << 20;

#[derive(Debug, Serialize, Deserialize)]
pub struct Document {
    pub format: String,
    pub version: u32,
    pub exported_at: chrono::DateTime<chrono::Utc>,
    pub runs: Vec<Run>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inventory: Vec<HostCost>,
}

#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    #[error("not JSON: {0}")]
    Syntax(serde_json::Error),
    #[error("not a touchstone results document (no \"format\": \"{FORMAT_NAME}\" field)")]
    Foreign,
    #[error("results format version {0} is newer than this touchstone understands (up to {FORMAT_VERSION}); upgrade touchstone")]
    TooNew(u32),
    #[error("results format version {0} is older than any this touchstone reads (from {OLDEST_VERSION})")]
    TooOld(u32),
    #[error("malformed touchstone document: {0}")]
    Shape(serde_json::Error),
    #[error("larger than {} MiB in one run (or between two), the most import takes at once; a document may hold any number of runs", MAX_RUN_BYTES >> 20)]
    RunTooLarge,
    #[error("larger than {} MiB, the most one document may hold; export fewer runs per file", MAX_DOCUMENT_BYTES >> 20)]
    TooLarge,
    #[error("cannot read: {0}")]
    Read(std::io::Error),
    #[error("refused, nothing imported: {0}")]
    Invalid(Invalid),
}

pub fn to_document(runs: Vec<Run>) -> Document {
    Document {
        format: FORMAT_NAME.into(),
        version: FORMAT_VERSION,
        exported_at: chrono::Utc::now(),
        runs,
        inventory: Vec::new(),
    }
}

pub fn to_string(runs: Vec<Run>) -> String {
    to_string_with(runs, Vec::new())
}

/// The document of `runs` carrying their hosts' `inventory` (none: no
/// field), as `export` writes it.
pub fn to_string_with(runs: Vec<Run>, inventory: Vec<HostCost>) -> String {
    let doc = Document {
        inventory,
        ..to_document(runs)
    };
    serde_json::to_string_pretty(&doc).expect("the model always serialises")
}

/// One run as it stands in a document's list of runs (indented, no comma):
/// what `DocumentWriter::write_run` takes.
pub fn run_text(run: &Run) -> String {
    let text = serde_json::to_string_pretty(run).expect("the model always serialises");
    // Pretty JSON holds no raw newline inside a string: each one ends a line.
    format!("    {}", text.replace('\n', "\n    "))
}

/// A document written one run at a time, laid out exactly as `to_string`
/// lays the whole out: `begin`, then each run's text (`run_text`, which a
/// writer may look at first: its size, its characters), then `finish`.
pub struct DocumentWriter<W: Write> {
    out: W,
    runs: usize,
}

impl<W: Write> DocumentWriter<W> {
    /// The document's head, up to its list of runs.
    pub fn begin(mut out: W) -> std::io::Result<DocumentWriter<W>> {
        let exported_at = serde_json::to_string(&chrono::Utc::now()).expect("a time serialises");
        write!(
            out,
            "{{\n  \"format\": \"{FORMAT_NAME}\",\n  \"version\": {FORMAT_VERSION},\n  \"exported_at\": {exported_at},\n  \"runs\": ["
        )?;
        Ok(DocumentWriter { out, runs: 0 })
    }

    /// Append one run's `run_text`.
    pub fn write_run(&mut self, text: &str) -> std::io::Result<()> {
        self.out
            .write_all(if self.runs == 0 { b"\n" } else { b",\n" })?;
        self.out.write_all(text.as_bytes())?;
        self.runs += 1;
        Ok(())
    }

    /// Close the list and the document (no newline after it, as `to_string`).
    pub fn finish(self) -> std::io::Result<W> {
        self.finish_with(&[])
    }

    /// Close the list, add the hosts' `inventory` (none: no field), and
    /// close the document, laid out as `to_string_pretty` lays it out.
    pub fn finish_with(mut self, inventory: &[HostCost]) -> std::io::Result<W> {
        self.out
            .write_all(if self.runs == 0 { b"]" } else { b"\n  ]" })?;
        if !inventory.is_empty() {
            let text = serde_json::to_string_pretty(inventory).expect("an entry serialises");
            write!(
                self.out,
                ",\n  \"inventory\": {}",
                text.replace('\n', "\n  ")
            )?;
        }
        self.out.write_all(b"\n}")?;
        Ok(self.out)
    }
}

/// Parse and check a document held in memory (see `read`).
pub fn parse(text: &str) -> Result<Document, JsonError> {
    read(text.as_bytes())
}

/// Read a document from `reader` as it streams in (never more than
/// `MAX_DOCUMENT_BYTES`), checking its format name and version as they
/// come, then every run (`validate`: the summaries are replaced by those
/// recomputed from the samples). Errors of syntax and of shape name the line
/// and column; a run that fails its checks names the field.
pub fn read(reader: impl Read) -> Result<Document, JsonError> {
    read_limited(reader, MAX_DOCUMENT_BYTES)
}

fn read_limited(reader: impl Read, limit: u64) -> Result<Document, JsonError> {
    let mut runs = Vec::new();
    let head = stream(reader, Budget::Document(limit), |run| {
        runs.push(run);
        Ok::<(), std::convert::Infallible>(())
    })
    .map_err(|e| match e {
        Streamed::Json(e) => e,
        Streamed::Refused(never) => match never {},
    })?;
    Ok(Document {
        format: head.format,
        version: head.version,
        exported_at: head.exported_at,
        runs,
        inventory: head.inventory,
    })
}

/// Why reading a document run by run stopped: the document, or what was
/// done with a run.
#[derive(Debug)]
pub enum Streamed<E> {
    Json(JsonError),
    Refused(E),
}

/// What a document says of itself besides its runs.
#[derive(Debug)]
pub struct Head {
    pub format: String,
    pub version: u32,
    pub exported_at: chrono::DateTime<chrono::Utc>,
    /// The hosts' inventory the document carries, each entry checked.
    pub inventory: Vec<HostCost>,
}

/// Read a document of any size from `reader` one run at a time: its format
/// and version checked as they come, each run checked (`validate`) and
/// handed to `each` as soon as it is read, so that only one run is held.
/// At most `MAX_RUN_BYTES` are read for one run (and before, between or
/// after runs). The runs handed on before an error are not taken back:
/// `each` stores them where a refusal can undo them (one transaction).
pub fn read_each<E>(
    reader: impl Read,
    each: impl FnMut(Run) -> Result<(), E>,
) -> Result<Head, Streamed<E>> {
    stream(reader, Budget::PerRun(MAX_RUN_BYTES), each)
}

/// How many bytes a document may take.
#[derive(Clone, Copy)]
enum Budget {
    /// In all (a document read whole).
    Document(u64),
    /// For each run and what lies between runs.
    PerRun(u64),
}

fn stream<E>(
    reader: impl Read,
    budget: Budget,
    each: impl FnMut(Run) -> Result<(), E>,
) -> Result<Head, Streamed<E>> {
    let (limit, per_run) = match budget {
        Budget::Document(n) => (n, false),
        Budget::PerRun(n) => (n, true),
    };
    let over = Cell::new(false);
    let left = Cell::new(limit);
    let bounded = Bounded {
        inner: reader,
        left: &left,
        over: &over,
    };
    let heard = Heard::default();
    let refused = RefCell::new(None);
    let runs = RunsSeed {
        each: RefCell::new(each),
        refused: &refused,
        left: per_run.then_some((&left, limit)),
    };
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(bounded));
    let parsed = de
        .deserialize_any(DocumentVisitor {
            heard: &heard,
            runs: &runs,
        })
        .and_then(|head| de.end().map(|()| head));
    if let Some(e) = refused.into_inner() {
        return Err(e);
    }
    let too_large = || match per_run {
        true => JsonError::RunTooLarge,
        false => JsonError::TooLarge,
    };
    parsed.map_err(|e| {
        Streamed::Json(match e {
            _ if over.get() => too_large(),
            e if e.is_io() => JsonError::Read(std::io::Error::other(e.to_string())),
            e if e.is_syntax() || e.is_eof() => JsonError::Syntax(e),
            e => heard.verdict().unwrap_or(JsonError::Shape(e)),
        })
    })
}

/// The document's list of runs, read one run at a time (see `read_each`).
struct RunsSeed<'h, F, E> {
    each: RefCell<F>,
    /// Why a run was refused (by its checks or by `each`).
    refused: &'h RefCell<Option<Streamed<E>>>,
    /// The byte budget, renewed after each run.
    left: Option<(&'h Cell<u64>, u64)>,
}

impl<'de, F, E> DeserializeSeed<'de> for &RunsSeed<'_, F, E>
where
    F: FnMut(Run) -> Result<(), E>,
{
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F, E> Visitor<'de> for &RunsSeed<'_, F, E>
where
    F: FnMut(Run) -> Result<(), E>,
{
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "a sequence of runs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while let Some(mut run) = seq.next_element::<Run>()? {
            let handed = validate::run(index, &mut run)
                .map_err(|e| Streamed::Json(JsonError::Invalid(e)))
                .and_then(|()| (self.each.borrow_mut())(run).map_err(Streamed::Refused));
            if let Err(e) = handed {
                *self.refused.borrow_mut() = Some(e);
                return Err(serde::de::Error::custom("a run was refused"));
            }
            if let Some((left, limit)) = self.left {
                left.set(limit);
            }
            index += 1;
        }
        Ok(())
    }
}

/// A reader that fails once more than `left` bytes have been asked of it
/// (a budget the reader of runs renews after each run).
struct Bounded<'a, R> {
    inner: R,
    left: &'a Cell<u64>,
    over: &'a Cell<bool>,
}

impl<R: Read> Read for Bounded<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left.get() == 0 {
            // One byte more tells a document of exactly the limit from a longer one.
            let mut probe = [0u8; 1];
            if self.inner.read(&mut probe)? == 0 {
                return Ok(0);
            }
            self.over.set(true);
            return Err(std::io::Error::other("document too large"));
        }
        let want = buf
            .len()
            .min(self.left.get().min(usize::MAX as u64) as usize);
        let got = self.inner.read(&mut buf[..want])?;
        self.left.set(self.left.get() - got as u64);
        Ok(got)
    }
}

/// What the document said of itself so far, to tell a foreign or future
/// document from a malformed one when reading stops early.
#[derive(Default)]
struct Heard {
    /// The format name: Some(true) ours, Some(false) another.
    ours: Cell<Option<bool>>,
    version: Cell<Option<u32>>,
    /// Reading the runs (an error there is one of shape).
    in_runs: Cell<bool>,
}

impl Heard {
    fn verdict(&self) -> Option<JsonError> {
        match (self.ours.get(), self.version.get()) {
            (Some(false), _) => Some(JsonError::Foreign),
            (_, Some(v)) if v > FORMAT_VERSION => Some(JsonError::TooNew(v)),
            (_, Some(v)) if v < OLDEST_VERSION => Some(JsonError::TooOld(v)),
            (None, _) if !self.in_runs.get() => Some(JsonError::Foreign),
            _ => None,
        }
    }
}

struct DocumentVisitor<'h, F, E> {
    heard: &'h Heard,
    runs: &'h RunsSeed<'h, F, E>,
}

impl<'de, F, E> Visitor<'de> for DocumentVisitor<'_, F, E>
where
    F: FnMut(Run) -> Result<(), E>,
{
    type Value = Head;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "a {FORMAT_NAME} document (a JSON object)")
    }

    /// Not an object: read to its end first, so that a broken file is
    /// reported as broken rather than as foreign.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Head, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Err(serde::de::Error::custom(
            "not a touchstone results document",
        ))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
        use serde::de::Error;
        let (mut format, mut version, mut exported_at, mut runs) = (None, None, None, None);
        let mut inventory: Vec<HostCost> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "format" => {
                    let f: serde_json::Value = map.next_value()?;
                    let ours = f.as_str() == Some(FORMAT_NAME);
                    self.heard.ours.set(Some(ours));
                    if !ours {
                        return Err(A::Error::custom("not a touchstone results document"));
                    }
                    format = Some(FORMAT_NAME.to_string());
                }
                "version" => {
                    // Not a whole number counts as version 0: too old.
                    let v: serde_json::Value = map.next_value()?;
                    let v = v.as_u64().map_or(0, |v| v.min(u32::MAX as u64) as u32);
                    self.heard.version.set(Some(v));
                    if !(OLDEST_VERSION..=FORMAT_VERSION).contains(&v) {
                        return Err(A::Error::custom("unsupported version"));
                    }
                    version = Some(v);
                }
                "exported_at" => exported_at = Some(map.next_value()?),
                "runs" => {
                    if runs.is_some() {
                        return Err(A::Error::duplicate_field("runs"));
                    }
                    self.heard.in_runs.set(true);
                    map.next_value_seed(self.runs)?;
                    runs = Some(());
                    self.heard.in_runs.set(false);
                }
                "inventory" => {
                    inventory = map.next_value()?;
                    for e in &inventory {
                        if let Err(why) = e.check() {
                            return Err(A::Error::custom(format!(
                                "inventory of host '{}': {why}",
                                e.host
                            )));
                        }
                    }
                }
                // Fields of a later minor revision are ignored, as serde does.
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let Some(format) = format else {
            self.heard.ours.set(Some(false));
            return Err(A::Error::custom("no format"));
        };
        let Some(version) = version else {
            self.heard.version.set(Some(0));
            return Err(A::Error::custom("no version"));
        };
        runs.ok_or_else(|| A::Error::missing_field("runs"))?;
        Ok(Head {
            format,
            version,
            exported_at: exported_at.ok_or_else(|| A::Error::missing_field("exported_at"))?,
            inventory,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_and_future_documents_are_refused() {
        assert!(matches!(parse("{\"a\": 1}"), Err(JsonError::Foreign)));
        assert!(matches!(parse("[1,2"), Err(JsonError::Syntax(_))));
        let future = format!("{{\"format\":\"{FORMAT_NAME}\",\"version\":99,\"runs\":[]}}");
        assert!(matches!(parse(&future), Err(JsonError::TooNew(99))));
        let broken = format!("{{\"format\":\"{FORMAT_NAME}\",\"version\":1,\"runs\":[{{}}]}}");
        assert!(matches!(parse(&broken), Err(JsonError::Shape(_))));
        let unversioned = format!("{{\"format\":\"{FORMAT_NAME}\",\"runs\":[]}}");
        assert!(matches!(parse(&unversioned), Err(JsonError::TooOld(0))));
    }

    fn sample_runs(n: usize) -> Vec<Run> {
        let doc = parse(include_str!("../testdata/format-v1.json")).unwrap();
        (0..n)
            .map(|i| {
                let mut r = doc.runs[0].clone();
                r.id = format!("{i:016x}");
                r
            })
            .collect()
    }

    /// The document without its export time (the one line that differs).
    fn timeless(text: &str) -> String {
        text.lines()
            .filter(|l| !l.trim_start().starts_with("\"exported_at\""))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Written run by run, a document is byte for byte the document
    /// written whole.
    #[test]
    fn a_document_written_run_by_run_is_the_document_written_whole() {
        for n in [0, 1, 3] {
            let runs = sample_runs(n);
            let mut w = DocumentWriter::begin(Vec::new()).unwrap();
            for r in &runs {
                w.write_run(&run_text(r)).unwrap();
            }
            let text = String::from_utf8(w.finish().unwrap()).unwrap();
            assert_eq!(
                timeless(&text),
                timeless(&to_string(runs.clone())),
                "{n} runs"
            );
            assert_eq!(parse(&text).unwrap().runs, runs);
        }
    }

    /// Read run by run, the byte limit bounds one run, not the document:
    /// three runs of about a third of a document each read under a limit
    /// the whole document exceeds, and a run over the limit is refused.
    #[test]
    fn the_size_limit_bounds_one_run_not_the_document() {
        let text = to_string(sample_runs(3));
        let one = run_text(&sample_runs(1)[0]).len() as u64;
        let limit = one + one / 2;
        assert!((text.len() as u64) > 2 * limit);
        let mut ids = Vec::new();
        let head = stream(text.as_bytes(), Budget::PerRun(limit), |r: Run| {
            ids.push(r.id);
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(head.version, FORMAT_VERSION);
        assert_eq!(ids.len(), 3);
        assert!(matches!(
            read_limited(text.as_bytes(), limit),
            Err(JsonError::TooLarge)
        ));
        let small = stream(text.as_bytes(), Budget::PerRun(one / 2), |_| {
            Ok::<(), ()>(())
        });
        assert!(matches!(small, Err(Streamed::Json(JsonError::RunTooLarge))));
        // What `each` refuses stops the reading and is handed back.
        let refused = read_each(text.as_bytes(), |r| match r.id.ends_with('1') {
            true => Err(r.id),
            false => Ok(()),
        });
        assert!(matches!(refused, Err(Streamed::Refused(id)) if id == format!("{:016x}", 1)));
    }

    /// A document `touchstone run --json` wrote before curves existed still
    /// reads, as runs without curves, and writes back as the current version.
    #[test]
    fn version_1_documents_still_import() {
        let text = include_str!("../testdata/format-v1.json");
        let doc = parse(text).unwrap();
        assert_eq!(doc.version, 1);
        assert_eq!(doc.runs.len(), 1);
        let run = &doc.runs[0];
        assert_eq!(run.label.as_deref(), Some("format v1 sample"));
        assert_eq!(run.measurements.len(), 1);
        assert!(run.curves.is_empty() && run.options.workload.is_none());
        let again = parse(&to_string(doc.runs.clone())).unwrap();
        assert_eq!(again.version, FORMAT_VERSION);
        assert_eq!(again.runs, doc.runs);
    }
}
