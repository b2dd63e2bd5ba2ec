//! Option values that several commands take, checked the same way
//! wherever they are given: a run's label and a duration within bounds.

use touchstone_catalogue::params::Param;

use crate::error::CliError;

/// A label a run may carry: one that import would take back
/// (`validate::MAX_LABEL_BYTES`), so that every run stored can travel.
pub fn check_label(label: Option<&str>) -> Result<(), CliError> {
    use touchstone_results::validate::MAX_LABEL_BYTES;
    match label {
        Some(l) if l.len() > MAX_LABEL_BYTES => Err(CliError::Usage(format!(
            "--label of {} bytes: at most {MAX_LABEL_BYTES}",
            l.len()
        ))),
        _ => Ok(()),
    }
}

/// A duration option within bounds, e.g. `--window 500ms`.
pub fn duration(flag: &'static str, text: &str, min_ns: u64, max_ns: u64) -> Result<u64, CliError> {
    let p = Param::duration(flag, min_ns, max_ns);
    Ok(p.parse(text).map_err(CliError::Usage)?.num)
}
