//! Units in one type, formatted in one place. Bandwidth uses MB = 10^6 bytes
//! (as STREAM does); time is stored in nanoseconds and scaled for display.

use serde::{Deserialize, Serialize};

/// The unit of a measurement's figure as stored. Time is always stored in
/// nanoseconds; display picks a readable scale per column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Time per operation (latency), nanoseconds.
    Ns,
    /// Bandwidth, 10^6 bytes per second.
    MBps,
    /// Operations per second.
    OpsPerSec,
    /// Clock frequency, MHz.
    Mhz,
    /// Millions of floating-point operations per second.
    Mflops,
    /// Millions of Whetstone instructions per second.
    Mwips,
    /// Dhrystone MIPS (Dhrystones/s / 1757).
    Dmips,
    /// A size in bytes (line size, cache size, TLB reach).
    Bytes,
    /// A plain count (TLB entries, parallelism).
    Count,
}

impl Unit {
    pub const ALL: [Unit; 9] = [
        Unit::Ns,
        Unit::MBps,
        Unit::OpsPerSec,
        Unit::Mhz,
        Unit::Mflops,
        Unit::Mwips,
        Unit::Dmips,
        Unit::Bytes,
        Unit::Count,
    ];

    /// Stable text used in the JSON format and the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Ns => "ns",
            Unit::MBps => "MB/s",
            Unit::OpsPerSec => "ops/s",
            Unit::Mhz => "MHz",
            Unit::Mflops => "MFLOPS",
            Unit::Mwips => "MWIPS",
            Unit::Dmips => "DMIPS",
            Unit::Bytes => "bytes",
            Unit::Count => "count",
        }
    }

    /// Whether a larger figure means a faster machine. `None` for units that
    /// describe rather than rank (a cache size is neither better nor worse).
    pub fn higher_is_better(self) -> Option<bool> {
        match self {
            Unit::Ns => Some(false),
            Unit::MBps | Unit::OpsPerSec | Unit::Mhz | Unit::Mflops | Unit::Mwips | Unit::Dmips => {
                Some(true)
            }
            Unit::Bytes | Unit::Count => None,
        }
    }
}

impl std::fmt::Display for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A display scale: the label and the divisor that turns a stored figure
/// into that label's number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub label: &'static str,
    pub divisor: f64,
}

impl Scale {
    /// The one scale that suits a column of figures of `unit`, chosen from the
    /// column's typical (median) magnitude so that every row reads alike.
    pub fn for_column(unit: Unit, values: &[f64]) -> Scale {
        let mut finite: Vec<f64> = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        finite.sort_by(f64::total_cmp);
        let typical = finite.get(finite.len() / 2).copied().unwrap_or(0.0);
        Scale::for_value(unit, typical)
    }

    /// The scale of one figure: the first of its unit's steps whose
    /// threshold it reaches, else the unit's smallest (its own for a unit
    /// without steps).
    pub fn for_value(unit: Unit, v: f64) -> Scale {
        const KIB: f64 = 1024.0;
        const MIB: f64 = KIB * KIB;
        const GIB: f64 = MIB * KIB;
        // (threshold, label, divisor), largest first.
        let steps: &[(f64, &'static str, f64)] = match unit {
            Unit::Ns => &[
                (1e9, "s", 1e9),
                (1e6, "ms", 1e6),
                (1e4, "µs", 1e3),
                (0.0, "ns", 1.0),
            ],
            Unit::MBps => &[(1e5, "GB/s", 1e3), (0.0, "MB/s", 1.0)],
            Unit::OpsPerSec => &[(1e7, "M/s", 1e6), (1e4, "k/s", 1e3), (0.0, "/s", 1.0)],
            Unit::Bytes => &[
                (GIB, "GiB", GIB),
                (MIB, "MiB", MIB),
                (KIB, "KiB", KIB),
                (0.0, "B", 1.0),
            ],
            other => &[(0.0, other.as_str(), 1.0)],
        };
        let smallest = &steps[steps.len() - 1];
        let &(_, label, divisor) = steps.iter().find(|s| v >= s.0).unwrap_or(smallest);
        Scale { label, divisor }
    }

    /// A number in this scale with about four significant digits.
    pub fn format(&self, v: f64) -> String {
        format_sig(v / self.divisor)
    }

    /// A number with its label, e.g. "43.1 ns".
    pub fn format_with_label(&self, v: f64) -> String {
        format!("{} {}", self.format(v), self.label)
    }
}

/// Four significant digits without scientific notation for everyday sizes.
pub fn format_sig(x: f64) -> String {
    if !x.is_finite() {
        return "-".into();
    }
    let a = x.abs();
    if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 10.0 {
        format!("{x:.2}")
    } else if a >= 1.0 {
        format!("{x:.3}")
    } else if a == 0.0 {
        "0".into()
    } else if a >= 0.001 {
        format!("{x:.4}")
    } else {
        format!("{x:.3e}")
    }
}

/// A figure with its unit, scaled for reading on its own ("1.23 µs").
pub fn format_value(unit: Unit, v: f64) -> String {
    Scale::for_value(unit, v).format_with_label(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_scale_per_column() {
        let sc = Scale::for_column(Unit::Ns, &[800.0, 20_000.0, 30_000.0]);
        assert_eq!(sc.label, "µs");
        assert_eq!(sc.format(800.0), "0.8000");
    }

    #[test]
    fn bandwidth_uses_decimal_megabytes() {
        assert_eq!(format_value(Unit::MBps, 12_345.0), "12345 MB/s");
        assert_eq!(format_value(Unit::MBps, 123_456.0), "123.5 GB/s");
    }

    #[test]
    fn direction_per_unit() {
        assert_eq!(Unit::Ns.higher_is_better(), Some(false));
        assert_eq!(Unit::MBps.higher_is_better(), Some(true));
        assert_eq!(Unit::Bytes.higher_is_better(), None);
    }
}
