//! The versioned JSON exchange format for runs (docs/results-format.md).
//! A document names its format and version so that a foreign or future file
//! is refused with a clear message rather than half-read.
//!
//! Versions: 1, runs of micro-benchmark measurements; 2 adds the load curves
//! of workloads (`Run::curves`, `RunOptions::workload`). A version-1
//! document is a version-2 document without curves, so it reads as one.

use serde::{Deserialize, Serialize};

use crate::model::Run;

pub const FORMAT_NAME: &str = "touchstone-results";
pub const FORMAT_VERSION: u32 = 2;
/// The oldest version still read (every version so far).
pub const OLDEST_VERSION: u32 = 1;

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

/// Parse a document, checking its format name and version before its shape.
pub fn parse(text: &str) -> Result<Document, JsonError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(JsonError::Syntax)?;
    match value.get("format").and_then(|f| f.as_str()) {
        Some(FORMAT_NAME) => {}
        _ => return Err(JsonError::Foreign),
    }
    let version = value
        .get("version")
        .and_then(|v| v.as_u64())
        .map_or(0, |v| v.min(u32::MAX as u64) as u32);
    if version > FORMAT_VERSION {
        return Err(JsonError::TooNew(version));
    }
    if version < OLDEST_VERSION {
        return Err(JsonError::TooOld(version));
    }
    serde_json::from_value(value).map_err(JsonError::Shape)
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
