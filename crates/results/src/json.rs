//! The versioned JSON exchange format for runs (docs/results-format.md).
//! A document names its format and version so that a foreign or future file
//! is refused with a clear message rather than half-read.
//!
//! Versions: 1, runs of micro-benchmark measurements; 2 adds the load curves
//! of workloads (`Run::curves`, `RunOptions::workload`). A version-1
//! document is a version-2 document without curves, so it reads as one.

use std::cell::Cell;
use std::io::Read;

use serde::de::{Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::model::Run;
use crate::validate::{self, Invalid};

pub const FORMAT_NAME: &str = "touchstone-results";
pub const FORMAT_VERSION: u32 = 2;
/// The oldest version still read (every version so far).
pub const OLDEST_VERSION: u32 = 1;
/// The largest document `read` takes, bytes: far above any export of a
/// farm's runs, and a bound on the memory an import may take.
pub const MAX_DOCUMENT_BYTES: u64 = 256 << 20;

#[derive(Debug, Serialize, Deserialize)]
pub struct Document {
    pub format: String,
    pub version: u32,
    pub exported_at: chrono::DateTime<chrono::Utc>,
    pub runs: Vec<Run>,
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
    }
}

pub fn to_string(runs: Vec<Run>) -> String {
    serde_json::to_string_pretty(&to_document(runs)).expect("the model always serialises")
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
    let over = Cell::new(false);
    let bounded = Bounded {
        inner: reader,
        left: limit,
        over: &over,
    };
    let heard = Heard::default();
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(bounded));
    let parsed = de
        .deserialize_any(DocumentVisitor { heard: &heard })
        .and_then(|doc| de.end().map(|()| doc));
    let mut doc = match parsed {
        Ok(doc) => doc,
        Err(_) if over.get() => return Err(JsonError::TooLarge),
        Err(e) if e.is_io() => {
            return Err(JsonError::Read(std::io::Error::other(e.to_string())));
        }
        Err(e) if e.is_syntax() || e.is_eof() => return Err(JsonError::Syntax(e)),
        Err(e) => return Err(heard.verdict().unwrap_or(JsonError::Shape(e))),
    };
    for (i, run) in doc.runs.iter_mut().enumerate() {
        validate::run(i, run).map_err(JsonError::Invalid)?;
    }
    Ok(doc)
}

/// A reader that fails once more than `left` bytes have been asked of it.
struct Bounded<'a, R> {
    inner: R,
    left: u64,
    over: &'a Cell<bool>,
}

impl<R: Read> Read for Bounded<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            // One byte more tells a document of exactly the limit from a longer one.
            let mut probe = [0u8; 1];
            if self.inner.read(&mut probe)? == 0 {
                return Ok(0);
            }
            self.over.set(true);
            return Err(std::io::Error::other("document too large"));
        }
        let want = buf.len().min(self.left.min(usize::MAX as u64) as usize);
        let got = self.inner.read(&mut buf[..want])?;
        self.left -= got as u64;
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

struct DocumentVisitor<'h> {
    heard: &'h Heard,
}

impl<'de> Visitor<'de> for DocumentVisitor<'_> {
    type Value = Document;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "a {FORMAT_NAME} document (a JSON object)")
    }

    /// Not an object: read to its end first, so that a broken file is
    /// reported as broken rather than as foreign.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Document, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Err(serde::de::Error::custom(
            "not a touchstone results document",
        ))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Document, A::Error> {
        use serde::de::Error;
        let (mut format, mut version, mut exported_at, mut runs) = (None, None, None, None);
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
                    runs = Some(map.next_value::<Vec<Run>>()?);
                    self.heard.in_runs.set(false);
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
        Ok(Document {
            format,
            version,
            exported_at: exported_at.ok_or_else(|| A::Error::missing_field("exported_at"))?,
            runs: runs.ok_or_else(|| A::Error::missing_field("runs"))?,
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
