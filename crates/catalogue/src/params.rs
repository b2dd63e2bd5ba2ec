//! Benchmark parameters: declared with bounds in each family file, parsed
//! and checked once before anything runs, with canonical spellings so that
//! measurement names are stable ("16k", not "16384" or "16K").

use std::collections::BTreeMap;

/// What values a parameter takes.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// One of these names.
    Choice(&'static [&'static str]),
    /// A byte size with optional k/m/g suffix (powers of 1024).
    Size { min: u64, max: u64 },
    /// A whole number.
    Int { min: u64, max: u64 },
    /// A duration with a ns/us/ms/s suffix.
    Duration { min_ns: u64, max_ns: u64 },
    /// HOST:PORT of another machine (`[v6]:PORT` too), or `local`; a case
    /// at `local` leaves the parameter out of its name, so that names of
    /// local cases stay what they were before the parameter existed.
    Address,
}

/// The `Kind::Address` value meaning "on this machine".
pub const LOCAL: &str = "local";

/// A declared parameter.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub name: &'static str,
    pub help: &'static str,
    pub kind: Kind,
    /// Values measured by default…
    pub default: &'static [&'static str],
    /// …and in quick mode (empty: same as default).
    pub quick: &'static [&'static str],
    /// Written bare in names and specs ("lat_syscall/null"), not "key:value".
    pub positional: bool,
}

/// An enum whose variants are the values of a choice parameter, each value
/// spelt once: `NAMES` lists them for `Param::choice`, `of` reads the value
/// a point gives.
///
/// ```ignore
/// choice_enum! { enum Op { Null = "null", Read = "read" } }
/// Param::choice("op", Op::NAMES) // in the family's params
/// let op = Op::of(p, "op")?; // in its build
/// ```
macro_rules! choice_enum {
    ($(#[$attr:meta])* enum $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$attr])*
        enum $name {
            $($variant),+
        }

        impl $name {
            const NAMES: &'static [&'static str] = &[$($text),+];

            /// The value of the choice parameter `param` at `p`.
            fn of(p: &$crate::params::Point, param: &str) -> Result<$name, String> {
                match p.text(param) {
                    $($text => Ok($name::$variant),)+
                    other => Err(format!("unknown {param} {other}")),
                }
            }
        }
    };
}
pub(crate) use choice_enum;

/// A parsed value: its canonical text and, for numeric kinds, its number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value {
    pub text: String,
    pub num: u64,
}

impl Value {
    pub fn new(text: impl Into<String>, num: u64) -> Value {
        Value {
            text: text.into(),
            num,
        }
    }
}

/// One point of a family's parameter space: a value for every parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point(pub Vec<(&'static str, Value)>);

impl Point {
    fn get(&self, name: &str) -> &Value {
        &self
            .0
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("parameter '{name}' is not declared"))
            .1
    }
    /// A numeric parameter (size in bytes, count, or duration in ns).
    pub fn num(&self, name: &str) -> u64 {
        self.get(name).num
    }
    /// A choice parameter's name (or any parameter's canonical text).
    pub fn text(&self, name: &str) -> &str {
        &self.get(name).text
    }
}

/// The `key:value` parameters written in a measurement name, as stored
/// with it ("lat_fs/op:create/size:0k" gives op and size; positional values
/// such as "lat_syscall/null" name no key and are left out).
pub fn named_in(name: &str) -> BTreeMap<String, String> {
    name.split('/')
        .skip(1)
        .filter_map(|seg| seg.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A close name from `candidates`, for "did you mean" hints.
pub fn suggest<'a>(typo: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (strsim::damerau_levenshtein(typo, c), c))
        .filter(|(d, c)| *d <= 2.max(typo.len() / 3) && *d < c.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

const SIZE_UNITS: [(&str, u64); 4] = [("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10), ("", 1)];
const TIME_UNITS: [(&str, u64); 4] = [
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("ns", 1),
];

/// Declaring a parameter: a constructor for its kind, then what differs
/// from the usual (measured values, quick values, positional), then its help:
///
/// ```ignore
/// pub const BUFFER: Param = Param::size("buffer", 64, 1 << 20)
///     .measured(&["512", "4k"])
///     .quick(&["4k"])
///     .help("bytes per read");
/// ```
impl Param {
    const fn of(name: &'static str, kind: Kind) -> Param {
        Param {
            name,
            help: "",
            kind,
            default: &[],
            quick: &[],
            positional: false,
        }
    }
    /// One of `options`, each measured by default.
    pub const fn choice(name: &'static str, options: &'static [&'static str]) -> Param {
        Param {
            default: options,
            ..Param::of(name, Kind::Choice(options))
        }
    }
    /// A byte size from `min` to `max`.
    pub const fn size(name: &'static str, min: u64, max: u64) -> Param {
        Param::of(name, Kind::Size { min, max })
    }
    /// A whole number from `min` to `max`.
    pub const fn int(name: &'static str, min: u64, max: u64) -> Param {
        Param::of(name, Kind::Int { min, max })
    }
    /// A duration from `min_ns` to `max_ns`.
    pub const fn duration(name: &'static str, min_ns: u64, max_ns: u64) -> Param {
        Param::of(name, Kind::Duration { min_ns, max_ns })
    }
    /// Another machine's HOST:PORT, or `local`.
    pub const fn address(name: &'static str) -> Param {
        Param::of(name, Kind::Address)
    }
    /// The values measured by default.
    pub const fn measured(self, default: &'static [&'static str]) -> Param {
        Param { default, ..self }
    }
    /// The values measured in quick mode, where they differ.
    pub const fn quick(self, quick: &'static [&'static str]) -> Param {
        Param { quick, ..self }
    }
    /// Written bare in names and specs.
    pub const fn positional(self) -> Param {
        Param {
            positional: true,
            ..self
        }
    }
    pub const fn help(self, help: &'static str) -> Param {
        Param { help, ..self }
    }
}

impl Param {
    /// Parse one value of this parameter, checking its bounds.
    pub fn parse(&self, raw: &str) -> Result<Value, String> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(format!("{}: empty value", self.name));
        }
        match self.kind {
            Kind::Choice(options) => {
                if options.contains(&raw) {
                    Ok(Value::new(raw, 0))
                } else {
                    let hint = suggest(raw, options.iter().copied())
                        .map(|s| format!(" (did you mean '{s}'?)"))
                        .unwrap_or_default();
                    Err(format!(
                        "{}: unknown value '{raw}'{hint}; one of: {}",
                        self.name,
                        options.join(", ")
                    ))
                }
            }
            Kind::Size { min, max } => {
                let n = parse_scaled(raw, &SIZE_UNITS, true).map_err(|e| {
                    format!("{}: {e} (a size such as 512, 16k, 64m, 1g)", self.name)
                })?;
                bounds(self.name, n, min, max, |v| size_text(v))?;
                Ok(Value::new(size_text(n), n))
            }
            Kind::Int { min, max } => {
                let n = parse_scaled(raw, &[("", 1)], false)
                    .map_err(|e| format!("{}: {e} (a whole number)", self.name))?;
                bounds(self.name, n, min, max, |v| v.to_string())?;
                Ok(Value::new(n.to_string(), n))
            }
            Kind::Address => {
                if raw == LOCAL {
                    return Ok(Value::new(LOCAL, 0));
                }
                let port = raw
                    .rsplit_once(':')
                    .filter(|(host, _)| !host.is_empty())
                    .and_then(|(_, port)| port.parse::<u16>().ok())
                    .filter(|&p| p > 0)
                    .ok_or_else(|| {
                        format!(
                            "{}: '{raw}' is not HOST:PORT (e.g. 10.0.0.7:7717, where `touchstone serve` listens) or {LOCAL}",
                            self.name
                        )
                    })?;
                Ok(Value::new(raw, port as u64))
            }
            Kind::Duration { min_ns, max_ns } => {
                let n = parse_scaled(raw, &TIME_UNITS, false).map_err(|e| {
                    format!(
                        "{}: {e} (a duration such as 500ns, 10us, 20ms, 1s)",
                        self.name
                    )
                })?;
                bounds(self.name, n, min_ns, max_ns, |v| duration_text(v))?;
                Ok(Value::new(duration_text(n), n))
            }
        }
    }

    /// The values measured when the user names none.
    pub fn defaults(&self, quick: bool) -> &'static [&'static str] {
        if quick && !self.quick.is_empty() {
            self.quick
        } else {
            self.default
        }
    }

    /// "1..=96", "16k..=1g", "null|read|write" for help and errors.
    pub fn range_text(&self) -> String {
        match self.kind {
            Kind::Choice(o) => o.join("|"),
            Kind::Size { min, max } => format!("{}..={}", size_text(min), size_text(max)),
            Kind::Int { min, max } => format!("{min}..={max}"),
            Kind::Address => format!("HOST:PORT|{LOCAL}"),
            Kind::Duration { min_ns, max_ns } => {
                format!("{}..={}", duration_text(min_ns), duration_text(max_ns))
            }
        }
    }
}

fn bounds(
    name: &str,
    n: u64,
    min: u64,
    max: u64,
    show: impl Fn(u64) -> String,
) -> Result<(), String> {
    if n < min || n > max {
        Err(format!(
            "{name}: {} is out of range {}..={}",
            show(n),
            show(min),
            show(max)
        ))
    } else {
        Ok(())
    }
}

/// A non-negative number with an optional unit suffix. Without a suffix the
/// last unit (bytes, or ns only when `bare_ok` is false for durations) applies.
fn parse_scaled(raw: &str, units: &[(&str, u64)], bare_ok: bool) -> Result<u64, String> {
    let lower = raw.to_ascii_lowercase();
    if lower.starts_with('-') {
        return Err(format!("'{raw}' is negative"));
    }
    let digits_end = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (num, suffix) = lower.split_at(digits_end);
    let suffix = suffix
        .strip_suffix('b')
        .filter(|_| bare_ok)
        .unwrap_or(suffix);
    let num: u64 = num
        .parse()
        .map_err(|_| format!("'{raw}' is not a number"))?;
    let mult = units
        .iter()
        .find(|(u, _)| *u == suffix)
        .map(|(_, m)| *m)
        .or_else(|| (suffix.is_empty() && units.len() > 1).then_some(units[units.len() - 1].1))
        .ok_or_else(|| format!("'{raw}' has an unknown unit '{suffix}'"))?;
    num.checked_mul(mult)
        .ok_or_else(|| format!("'{raw}' is too large"))
}

/// Canonical size text: the largest binary unit that divides it exactly.
pub fn size_text(n: u64) -> String {
    for (u, m) in SIZE_UNITS {
        if m > 1 && n >= m && n % m == 0 {
            return format!("{}{u}", n / m);
        }
    }
    n.to_string()
}

/// Canonical duration text: the largest unit that divides it exactly.
pub fn duration_text(ns: u64) -> String {
    for (u, m) in TIME_UNITS {
        if ns >= m && ns % m == 0 {
            return format!("{}{u}", ns / m);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZE: Param = Param {
        name: "size",
        help: "",
        kind: Kind::Size {
            min: 0,
            max: 1 << 30,
        },
        default: &["0"],
        quick: &[],
        positional: false,
    };

    #[test]
    fn sizes_parse_and_print_canonically() {
        assert_eq!(SIZE.parse("16K").unwrap(), Value::new("16k", 16384));
        assert_eq!(SIZE.parse("16384").unwrap().text, "16k");
        assert_eq!(SIZE.parse("64mb").unwrap().num, 64 << 20);
        assert_eq!(SIZE.parse("1536").unwrap().text, "1536");
    }

    #[test]
    fn bad_sizes_say_what_is_wrong() {
        assert!(SIZE.parse("-4k").unwrap_err().contains("negative"));
        assert!(SIZE.parse("2g").unwrap_err().contains("out of range"));
        assert!(SIZE.parse("4q").unwrap_err().contains("unknown unit"));
        assert!(SIZE.parse("lots").unwrap_err().contains("not a number"));
    }

    #[test]
    fn durations() {
        let p = Param {
            kind: Kind::Duration {
                min_ns: 1000,
                max_ns: 1_000_000_000,
            },
            ..SIZE
        };
        assert_eq!(p.parse("20ms").unwrap(), Value::new("20ms", 20_000_000));
        assert_eq!(p.parse("1500us").unwrap().text, "1500us");
        assert!(p.parse("10ns").is_err());
    }

    #[test]
    fn choices_suggest_near_names() {
        let p = Param {
            kind: Kind::Choice(&["null", "read", "write"]),
            ..SIZE
        };
        let e = p.parse("raed").unwrap_err();
        assert!(e.contains("did you mean 'read'"), "{e}");
    }
}
