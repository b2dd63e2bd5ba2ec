//! The versioned JSON exchange format for runs (docs/results-format.md).
//! A document names its format and version so that a foreign or future file
//! is refused with a clear message rather than half-read.

use serde::{Deserialize, Serialize};

use crate::model::Run;

pub const FORMAT_NAME: &str = "touchstone-results";
pub const FORMAT_VERSION: u32 = 1;

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
    let version = value.get("version").and_then(|v| v.as_u64()).unwrap_or(0) as u32;
    if version > FORMAT_VERSION {
        return Err(JsonError::TooNew(version));
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
    }
}
