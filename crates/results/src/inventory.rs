//! What a host cost and what it draws: the inventory a user attaches to a
//! host (by its identity, `Host::identity`, or its bare name), from the
//! command line or from a file for a whole farm. Reports divide the index
//! by these (`touchstone_analysis::cost`); nothing here is measured.
//!
//! A farm's file is CSV (a header line naming the columns) or a TOML file
//! of `[[host]]` tables of `key = value` lines (strings quoted, numbers
//! bare) — the subset a farm's list needs, read here so that each bad row
//! is named by its line. The keys and columns are those of `HostCost`:
//! host, price, currency, date, watts_idle, watts_busy, watts_nameplate.

use serde::{Deserialize, Serialize};

/// One host's price and power. Every figure is optional, but a price comes
/// with its currency and date (`check`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct HostCost {
    /// A host's identity ("node-7#3d12…") or its name ("node-7"), which
    /// then stands for every machine of that name.
    pub host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<f64>,
    /// An ISO 4217 code as given, upper case ("EUR").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// When the price was paid or quoted (YYYY-MM-DD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watts_idle: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watts_busy: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watts_nameplate: Option<f64>,
}

/// Which power figure a per-watt figure divides by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PowerKind {
    /// Measured busy watts.
    Busy,
    /// The power supply's rating: an upper bound, not a measurement.
    Nameplate,
}

impl PowerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PowerKind::Busy => "busy",
            PowerKind::Nameplate => "nameplate",
        }
    }
}

impl HostCost {
    /// Whether this entry is for a host of `identity` named `hostname`: its
    /// identity exactly, or its bare name.
    pub fn is_for(&self, identity: &str, hostname: &str) -> bool {
        self.host == identity || self.host == hostname
    }

    /// The price and its currency, where both are known.
    pub fn priced(&self) -> Option<(f64, &str)> {
        Some((self.price?, self.currency.as_deref()?))
    }

    /// The watts a per-watt figure divides by: busy watts, else nameplate.
    pub fn power(&self) -> Option<(f64, PowerKind)> {
        self.watts_busy
            .map(|w| (w, PowerKind::Busy))
            .or(self.watts_nameplate.map(|w| (w, PowerKind::Nameplate)))
    }

    /// Fill the figures `other` gives into this entry (`inventory set` on
    /// a host already in the inventory).
    pub fn merge(&mut self, other: &HostCost) {
        let take = |mine: &mut Option<f64>, theirs: Option<f64>| {
            if theirs.is_some() {
                *mine = theirs;
            }
        };
        take(&mut self.price, other.price);
        take(&mut self.watts_idle, other.watts_idle);
        take(&mut self.watts_busy, other.watts_busy);
        take(&mut self.watts_nameplate, other.watts_nameplate);
        if other.currency.is_some() {
            self.currency = other.currency.clone();
        }
        if other.date.is_some() {
            self.date = other.date.clone();
        }
    }

    /// Why this entry cannot be stored, if it cannot: no host, a figure
    /// not positive and finite, a price without its currency and date, a
    /// currency not of letters, a date not YYYY-MM-DD, idle above busy.
    pub fn check(&self) -> Result<(), String> {
        if self.host.trim().is_empty() {
            return Err("no host named".into());
        }
        for (name, v) in [
            ("price", self.price),
            ("watts_idle", self.watts_idle),
            ("watts_busy", self.watts_busy),
            ("watts_nameplate", self.watts_nameplate),
        ] {
            if let Some(v) = v {
                if !(v.is_finite() && v > 0.0) {
                    return Err(format!("{name} {v} is not a positive number"));
                }
            }
        }
        if let Some(c) = &self.currency {
            if c.is_empty() || c.len() > 8 || !c.chars().all(|ch| ch.is_ascii_uppercase()) {
                return Err(format!(
                    "currency '{c}' is not a currency code (letters, e.g. EUR)"
                ));
            }
        }
        if let Some(d) = &self.date {
            if chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").is_err() {
                return Err(format!("date '{d}' is not a date (YYYY-MM-DD)"));
            }
        }
        if self.price.is_some() && (self.currency.is_none() || self.date.is_none()) {
            return Err("a price needs its currency and its date".into());
        }
        if let (Some(idle), Some(busy)) = (self.watts_idle, self.watts_busy) {
            if idle > busy {
                return Err(format!("idle watts {idle} above busy watts {busy}"));
            }
        }
        Ok(())
    }

    /// Set field `key` from `value` as a file or the command line gives
    /// it (currency upper-cased).
    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let number = |v: &str| -> Result<Option<f64>, String> {
            if v.is_empty() {
                return Ok(None);
            }
            v.parse::<f64>()
                .map(Some)
                .map_err(|_| format!("{key} '{v}' is not a number"))
        };
        let text = |v: &str| (!v.is_empty()).then(|| v.to_string());
        match key {
            "host" => self.host = value.to_string(),
            "price" => self.price = number(value)?,
            "currency" => self.currency = text(value).map(|c| c.to_ascii_uppercase()),
            "date" => self.date = text(value),
            "watts_idle" => self.watts_idle = number(value)?,
            "watts_busy" => self.watts_busy = number(value)?,
            "watts_nameplate" => self.watts_nameplate = number(value)?,
            _ => {
                return Err(format!(
                    "unknown field '{key}' (host, price, currency, date, watts_idle, \
                     watts_busy, watts_nameplate)"
                ))
            }
        }
        Ok(())
    }
}

/// The entry for a host of `identity` named `hostname`: the one for its
/// identity, else the one for its name.
pub fn find<'a>(all: &'a [HostCost], identity: &str, hostname: &str) -> Option<&'a HostCost> {
    all.iter()
        .find(|c| c.host == identity)
        .or_else(|| all.iter().find(|c| c.host == hostname))
}

/// One line for a host's entry: "12500 EUR (2026-03-01), 420 W busy, 110 W idle".
pub fn describe(c: &HostCost) -> String {
    let mut parts = Vec::new();
    if let Some((price, currency)) = c.priced() {
        let date = c.date.as_deref().unwrap_or("?");
        parts.push(format!("{price} {currency} ({date})"));
    }
    for (w, what) in [
        (c.watts_busy, "busy"),
        (c.watts_idle, "idle"),
        (c.watts_nameplate, "nameplate"),
    ] {
        if let Some(w) = w {
            parts.push(format!("{w} W {what}"));
        }
    }
    if parts.is_empty() {
        "nothing known".into()
    } else {
        parts.join(", ")
    }
}

/// Read a farm's inventory file (`file` names it in messages): CSV when
/// its first line names columns with commas, else the TOML subset. Every
/// entry is checked; the first bad one is named by its line, and nothing
/// is returned then.
pub fn parse_file(file: &str, text: &str) -> Result<Vec<HostCost>, String> {
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .unwrap_or("");
    let entries = if first.contains(',') && !first.trim_start().starts_with('[') {
        parse_csv(text)
    } else {
        parse_toml(text)
    }
    .map_err(|(line, why)| format!("{file}, line {line}: {why}"))?;
    let mut seen = std::collections::HashMap::new();
    for (line, e) in &entries {
        e.check()
            .map_err(|why| format!("{file}, line {line}: host '{}': {why}", e.host))?;
        if let Some(before) = seen.insert(e.host.clone(), *line) {
            return Err(format!(
                "{file}, line {line}: host '{}' is listed twice (also line {before})",
                e.host
            ));
        }
    }
    if entries.is_empty() {
        return Err(format!("{file}: no hosts in it"));
    }
    Ok(entries.into_iter().map(|(_, e)| e).collect())
}

type Numbered = Vec<(usize, HostCost)>;

fn parse_csv(text: &str) -> Result<Numbered, (usize, String)> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let Some((_, header)) = lines.next() else {
        return Ok(Vec::new());
    };
    let columns: Vec<String> = header.split(',').map(|c| c.trim().to_string()).collect();
    if !columns.iter().any(|c| c == "host") {
        return Err((1, "the header names no 'host' column".into()));
    }
    let mut probe = HostCost::default();
    for c in &columns {
        probe.set(c, "").map_err(|why| (1, why))?;
    }
    let mut out = Vec::new();
    for (n, line) in lines {
        let cells: Vec<&str> = line
            .split(',')
            .map(|c| c.trim().trim_matches('"'))
            .collect();
        if cells.len() != columns.len() {
            return Err((
                n,
                format!("{} cells, the header has {}", cells.len(), columns.len()),
            ));
        }
        let mut e = HostCost::default();
        for (c, v) in columns.iter().zip(cells) {
            e.set(c, v).map_err(|why| (n, why))?;
        }
        out.push((n, e));
    }
    Ok(out)
}

fn parse_toml(text: &str) -> Result<Numbered, (usize, String)> {
    let mut out: Numbered = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line == "[[host]]" {
            out.push((n, HostCost::default()));
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err((n, format!("'{line}' is neither [[host]] nor key = value")));
        };
        let Some((_, entry)) = out.last_mut() else {
            return Err((n, "a value before the first [[host]]".into()));
        };
        let value = value.trim();
        let value = match value.strip_prefix('"') {
            Some(rest) => rest
                .strip_suffix('"')
                .ok_or_else(|| (n, format!("unterminated string {value}")))?,
            None => value,
        };
        entry.set(key.trim(), value).map_err(|why| (n, why))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_farm_file_reads_as_csv_or_toml_and_names_its_bad_line() {
        let csv = "host,price,currency,date,watts_busy\n\
                   a,12500,eur,2026-03-01,420\n\
                   b,9000,EUR,2026-03-01,\n";
        let got = parse_file("farm.csv", csv).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].currency.as_deref(), Some("EUR"));
        assert_eq!(got[0].power(), Some((420.0, PowerKind::Busy)));
        assert_eq!(got[1].power(), None);
        let toml = "# farm\n[[host]]\nhost = \"a\"\nwatts_nameplate = 750\n\n[[host]]\nhost = \"b\"\nprice = 3000\ncurrency = \"USD\"\ndate = \"2026-01-02\"\n";
        let got = parse_file("farm.toml", toml).unwrap();
        assert_eq!(got[0].power(), Some((750.0, PowerKind::Nameplate)));
        assert_eq!(got[1].priced(), Some((3000.0, "USD")));

        let bad = "host,price,currency,date\na,1,EUR,2026-03-01\nb,-5,EUR,2026-03-01\n";
        let e = parse_file("farm.csv", bad).unwrap_err();
        assert!(e.contains("line 3") && e.contains("price -5"), "{e}");
        let undated = "[[host]]\nhost = \"a\"\nprice = 10\ncurrency = \"EUR\"\n";
        let e = parse_file("f.toml", undated).unwrap_err();
        assert!(
            e.contains("line 1") && e.contains("currency and its date"),
            "{e}"
        );
        let twice = "host,price\na,\na,\n";
        assert!(parse_file("f.csv", twice).unwrap_err().contains("twice"));
        let typo = "[[host]]\nhost = \"a\"\nwats_busy = 3\n";
        let e = parse_file("f.toml", typo).unwrap_err();
        assert!(e.contains("line 3") && e.contains("wats_busy"), "{e}");
    }

    #[test]
    fn an_identity_entry_wins_over_a_name_entry() {
        let all = vec![
            HostCost {
                host: "n".into(),
                watts_busy: Some(1.0),
                ..HostCost::default()
            },
            HostCost {
                host: "n#abc".into(),
                watts_busy: Some(2.0),
                ..HostCost::default()
            },
        ];
        assert_eq!(find(&all, "n#abc", "n").unwrap().watts_busy, Some(2.0));
        assert_eq!(find(&all, "n#def", "n").unwrap().watts_busy, Some(1.0));
        assert!(find(&all, "m", "m").is_none());
    }
}
