//! The filters of `touchstone runs` (`--label`, `--host`, `--since`,
//! `--until`): parsed once, before the store is read, then applied to the
//! listed rows. A time is a date (UTC), a UTC date and time, or an age
//! counted back from now.

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, Utc};
use touchstone_results::RunRow;

use crate::error::CliError;

/// Which stored runs to list: every condition given must hold.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RunFilter {
    /// Text the label must contain (runs without a label never match).
    pub label: Option<String>,
    /// Text the host name must contain.
    pub host: Option<String>,
    /// Runs started at or after this instant.
    pub since: Option<DateTime<Utc>>,
    /// Runs started strictly before this instant.
    pub until: Option<DateTime<Utc>>,
}

/// Which end of a day a bare date names: `--since 2026-11-01` starts at its
/// midnight, `--until 2026-11-01` includes the whole day.
#[derive(Clone, Copy)]
enum End {
    Start,
    Finish,
}

impl RunFilter {
    pub fn parse(
        label: Option<String>,
        host: Option<String>,
        since: Option<&str>,
        until: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<RunFilter, CliError> {
        let when = |flag: &str, text: Option<&str>, end: End| {
            text.map(|t| {
                parse_when(t, now, end).map_err(|e| CliError::Usage(format!("{flag} {t}: {e}")))
            })
            .transpose()
        };
        let filter = RunFilter {
            label,
            host,
            since: when("--since", since, End::Start)?,
            until: when("--until", until, End::Finish)?,
        };
        if let (Some(s), Some(u)) = (filter.since, filter.until) {
            if s >= u {
                return Err(CliError::Usage(format!(
                    "--since {} is not before --until {}: no run could match",
                    s.format("%Y-%m-%d %H:%M:%S UTC"),
                    u.format("%Y-%m-%d %H:%M:%S UTC")
                )));
            }
        }
        Ok(filter)
    }

    pub fn matches(&self, row: &RunRow) -> bool {
        self.label
            .as_deref()
            .is_none_or(|l| row.label.as_deref().is_some_and(|x| x.contains(l)))
            && self
                .host
                .as_deref()
                .is_none_or(|h| row.hostname.contains(h))
            && self.since.is_none_or(|s| row.started_at >= s)
            && self.until.is_none_or(|u| row.started_at < u)
    }
}

/// `2026-11-01`, `2026-11-01T14:00`, `2026-11-01 14:00:30`, an RFC 3339
/// time with its offset, or an age: a number and one of s, m, h, d, w.
fn parse_when(text: &str, now: DateTime<Utc>, end: End) -> Result<DateTime<Utc>, String> {
    let t = text.trim();
    if let Ok(d) = DateTime::parse_from_rfc3339(t) {
        return Ok(d.with_timezone(&Utc));
    }
    for f in [
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(d) = NaiveDateTime::parse_from_str(t, f) {
            return Ok(d.and_utc());
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        let day = match end {
            End::Start => d,
            End::Finish => d.succ_opt().ok_or("a date past the calendar's end")?,
        };
        return Ok(day.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc());
    }
    let unit = t.chars().last().ok_or("empty")?;
    let seconds = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        'w' => 7 * 86_400,
        _ => return Err(WHEN_HELP.into()),
    };
    let count: i64 = t[..t.len() - 1].trim().parse().map_err(|_| WHEN_HELP)?;
    if count < 0 {
        return Err(WHEN_HELP.into());
    }
    count
        .checked_mul(seconds)
        .and_then(Duration::try_seconds)
        .and_then(|age| now.checked_sub_signed(age))
        .ok_or_else(|| "an age too large".to_string())
}

const WHEN_HELP: &str =
    "give a date (2026-11-01), a UTC time (2026-11-01T14:00) or an age (90m, 12h, 7d, 2w)";

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 23, 12, 0, 0).unwrap()
    }

    fn row(label: Option<&str>, host: &str, day: u32, hour: u32) -> RunRow {
        RunRow {
            id: format!("{day}{hour}"),
            label: label.map(String::from),
            hostname: host.into(),
            started_at: Utc.with_ymd_and_hms(2026, 11, day, hour, 0, 0).unwrap(),
            status: "complete".into(),
            measurements: 1,
            curves: 0,
            measured: vec!["lat_syscall".into()],
            machine_id: None,
        }
    }

    fn filter(
        label: Option<&str>,
        host: Option<&str>,
        since: Option<&str>,
        until: Option<&str>,
    ) -> RunFilter {
        RunFilter::parse(
            label.map(String::from),
            host.map(String::from),
            since,
            until,
            now(),
        )
        .unwrap()
    }

    #[test]
    fn times_parse_as_dates_times_and_ages() {
        let n = now();
        let at = |y, mo, d, h, mi| Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap();
        for (text, end, want) in [
            ("2026-11-01", End::Start, at(2026, 11, 1, 0, 0)),
            // An end date includes its whole day.
            ("2026-11-01", End::Finish, at(2026, 11, 2, 0, 0)),
            ("2026-11-01T14:30", End::Start, at(2026, 11, 1, 14, 30)),
            (
                "2026-11-01T14:30:00+02:00",
                End::Start,
                at(2026, 11, 1, 12, 30),
            ),
            ("7d", End::Start, at(2026, 11, 16, 12, 0)),
            ("90m", End::Start, at(2026, 11, 23, 10, 30)),
            ("2w", End::Start, at(2026, 11, 9, 12, 0)),
        ] {
            assert_eq!(parse_when(text, n, end).unwrap(), want, "{text}");
        }
        for bad in ["", "yesterday", "7y", "-3d", "2026-13-01", "d"] {
            assert!(parse_when(bad, n, End::Start).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_condition_must_hold() {
        let rows = [
            row(Some("node-7 after BIOS"), "node-7", 1, 9),
            row(Some("baseline"), "node-8", 10, 9),
            row(None, "node-7", 20, 9),
        ];
        let ids = |f: &RunFilter| {
            rows.iter()
                .filter(|r| f.matches(r))
                .map(|r| r.id.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&filter(None, None, None, None)).len(), 3);
        assert_eq!(ids(&filter(Some("BIOS"), None, None, None)), ["19"]);
        assert_eq!(
            ids(&filter(None, Some("node-7"), None, None)),
            ["19", "209"]
        );
        assert_eq!(
            ids(&filter(None, None, Some("2026-11-10"), None)),
            ["109", "209"]
        );
        assert_eq!(
            ids(&filter(None, None, None, Some("2026-11-10"))),
            ["19", "109"]
        );
        assert_eq!(
            ids(&filter(None, Some("node-7"), Some("7d"), None)),
            ["209"]
        );
        assert!(ids(&filter(Some("nothing"), None, None, None)).is_empty());
    }

    #[test]
    fn an_empty_window_is_refused() {
        let e = RunFilter::parse(None, None, Some("2026-11-10"), Some("2026-11-01"), now());
        assert!(e.is_err());
    }
}
