//! Every warning touchstone can attach to a run or a figure, in one list:
//! its stable code (stored and exported), what the condition means, and
//! what to do about it. A warning is built from its code and the message
//! that gives this occurrence's numbers (`Warning::new`), so a remedy is
//! written once and a code cannot be misspelt. Stored warnings keep their
//! code as text: a run from a newer touchstone, whose codes this list does
//! not know, still loads and shows.
//!
//! Every warning is stored and exported; on the terminal they are grouped
//! by kind (`group`), one line each with a count and the remedy once, and a
//! warning is marked on its figure only when it can move the headline
//! (`moves_headline`).

use crate::model::{Measurement, Warning};
use crate::stats::Statistic;

/// The list: `Variant = "code", "meaning", "remedy";`.
macro_rules! warning_codes {
    ($( $variant:ident = $code:literal, $meaning:literal, $remedy:literal; )*) => {
        /// A condition that can spoil figures (see the module's list).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum WarningCode {
            $( $variant, )*
        }

        impl WarningCode {
            /// Every code, in the list's order.
            pub const ALL: &'static [WarningCode] = &[$( WarningCode::$variant, )*];

            /// The stable identifier stored with the warning.
            pub fn code(self) -> &'static str {
                match self { $( WarningCode::$variant => $code, )* }
            }

            /// What the condition is, in a few words.
            pub fn meaning(self) -> &'static str {
                match self { $( WarningCode::$variant => $meaning, )* }
            }

            /// What the reader can do about it.
            pub fn remedy(self) -> &'static str {
                match self { $( WarningCode::$variant => $remedy, )* }
            }
        }
    };
}

warning_codes! {
    // Run level: the host at the start of a run.
    Load = "load",
        "other work competed with the benchmarks at the start",
        "re-run on a quiet machine (see `top`), or stop the other work";
    Governor = "governor",
        "the CPU frequency governor scales the clock with load",
        "set the 'performance' governor (`cpupower frequency-set -g performance`) before measuring";
    Virtualised = "virtualised",
        "timers, scheduling and memory are virtualised",
        "compare only with runs on the same kind of virtual machine, or measure on bare metal";
    CpuQuota = "cpu-quota",
        "a cgroup quota allows fewer CPUs than the OS shows",
        "run outside the container or raise its CPU limit; keep --parallel at or below the quota";
    DebugBuild = "debug-build",
        "an unoptimised touchstone measures itself, not the machine",
        "build with `cargo build --release` and run target/release/touchstone";
    // Measurement level: the harness's checks of every figure.
    CiWide = "ci-wide",
        "the confidence interval of the median is wider than 5 % of it",
        "re-run on a quiet machine or raise --repetitions";
    FewRepetitions = "few-repetitions",
        "too few repetitions for a 95 % interval of the median",
        "the interval printed covers less (its level is shown beside it); use -r 6 or more for 95 %";
    NotConverged = "not-converged",
        "the median's interval did not narrow to the --converge width within its rounds",
        "accept a wider interval (--converge 95,10), or re-run on a quiet machine";
    Preempted = "preempted",
        "other work took the CPU during timed intervals",
        "the median resists a few such intervals, not a majority; re-run on a quiet machine";
    Oversubscribed = "oversubscribed",
        "more processes than CPUs: they time-share",
        "read the figure as throughput under time-sharing, or use --parallel up to the CPU count";
    OverheadSwamps = "overhead-swamps",
        "the subtracted overhead cannot be told apart from the measured figure",
        "the figure is not meaningful; use a larger working set or more processes";
    // Derived figures: what a family's sweep found against what the OS says.
    CacheSizeDisagrees = "cache-size-disagrees",
        "a cache level was found at another size than the OS reports",
        "a shared or exclusive cache, a virtual machine's topology or other load can move the step; see the curve";
    CacheLevelUnreported = "cache-level-unreported",
        "a latency step was found where the OS reports no cache level",
        "the step may be the TLB's reach rather than a cache";
    CacheLevelsDiffer = "cache-levels-differ",
        "the latency curve shows another number of cache levels than the OS reports",
        "levels with close latencies merge; measure a finer curve";
    CurveShort = "curve-short",
        "the latency curve stops before main memory is reached",
        "add larger sizes (size:...) for a memory latency";
    LineDiffers = "line-differs",
        "the measured cache line size differs from the OS's",
        "an adjacent-line prefetcher fetches lines in pairs; see the curve";
    MhzDiffers = "mhz-differs",
        "the measured clock differs from the OS's figure by more than 10 %",
        "turbo, power saving or a virtual machine's nominal clock; the measured figure is what code runs at";
    LevelNotDetected = "level-not-detected",
        "a step of the latency curve is not reported as a level",
        "it was not confirmed by resampling or a second chain, lies past the last cache, or the sweep is too sparse there; re-run on a quiet machine or measure a finer curve";
    PageCache = "page-cache",
        "a buffered read was served from the page cache: the figure measures memory, not the storage",
        "use mode:direct, a file larger than memory (size:), or --drop-caches (root)";
    DepthShort = "depth-short",
        "fewer blocks were in flight on average than the depth asked for",
        "a pass of few blocks spends much of its time filling and draining the queue: use a larger size: or a smaller depth: (depth_achieved is the mean)";
    TlbDisagrees = "tlb-disagrees",
        "the measured TLB entries differ from what cpuid reports",
        "a hypervisor can report other TLB sizes than the hardware has, and replacement or a cache step can move a TLB step; see the curve";
    // A family's own check of what it measures.
    NoJournal = "no-journal",
        "files were created on an ext4 without a journal, where a create skips every inode deleted in the last minute",
        "the figure depends on what was deleted there just before (an earlier run too): leave a minute between runs, or point TMPDIR at a journalled file system";
}

impl WarningCode {
    /// The code a stored warning names, if this touchstone knows it.
    pub fn parse(code: &str) -> Option<WarningCode> {
        WarningCode::ALL.iter().copied().find(|c| c.code() == code)
    }
}

impl Warning {
    /// A warning of a known kind: `message` says what happened this time
    /// (with its figures); the code and the remedy come from the list.
    pub fn new(code: WarningCode, message: impl Into<String>) -> Warning {
        Warning {
            code: code.code().to_string(),
            message: message.into(),
            remedy: code.remedy().to_string(),
        }
    }

    /// The kind of a warning, `None` for a code this touchstone does not
    /// know (a run imported from a newer version).
    pub fn kind(&self) -> Option<WarningCode> {
        WarningCode::parse(&self.code)
    }
}

/// Whether warning `w` of measurement `m` can move its headline figure,
/// and so is marked beside it (the rest are counted in the grouped lines):
/// - `preempted`: a preempted interval reads long. The median moves only
///   when more than a quarter of the intervals were preempted (then the
///   interval's order statistics are themselves preempted ones); a min or
///   max headline takes the best interval, so only when every one was.
/// - `ci-wide`: the median's interval is wider than the 5 % band within
///   which figures are read as equal, so the median itself is uncertain by
///   more than that; a min or max headline is not the median.
/// - `few-repetitions`, `oversubscribed`, `mhz-differs`: they say how to
///   read a figure, and cannot move it (the level is printed beside the
///   interval; time-sharing is what was asked for; the OS's clock is not
///   the measured one).
/// - everything else (overheads, cache levels, a code this touchstone does
///   not know): yes.
pub fn moves_headline(w: &Warning, m: &Measurement) -> bool {
    let preempted = m.intervals.iter().filter(|i| i.preemptions > 0).count();
    code_moves_headline(&w.code, m.statistic, m.intervals.len(), preempted)
}

/// `moves_headline` for a warning's `code` on a measurement with this
/// headline statistic, `intervals` timing intervals kept and `preempted`
/// of them preempted (what a `Brief` keeps of it).
pub fn code_moves_headline(
    code: &str,
    statistic: Statistic,
    intervals: usize,
    preempted: usize,
) -> bool {
    match WarningCode::parse(code) {
        Some(WarningCode::Preempted) => {
            if intervals == 0 {
                // Intervals not kept (an imported summary): cannot tell.
                return true;
            }
            match statistic {
                Statistic::Median => preempted * 4 > intervals,
                Statistic::Min | Statistic::Max => preempted == intervals,
            }
        }
        Some(WarningCode::CiWide) => statistic == Statistic::Median,
        Some(
            WarningCode::FewRepetitions | WarningCode::Oversubscribed | WarningCode::MhzDiffers,
        ) => false,
        _ => true,
    }
}

/// The warnings of one kind over a set of measurements, for one line.
#[derive(Debug, Clone, PartialEq)]
pub struct WarningGroup {
    pub code: String,
    /// Measurements carrying it.
    pub count: usize,
    /// Of those, where it can move the headline (marked on the figure).
    pub marked: usize,
    /// What happened, over all of them: a phrase that follows the count
    /// ("lost 1–3 of 7 intervals to other work"), or for kinds without a
    /// finer summary the kind's meaning, set off by a colon.
    pub what: String,
    /// Whether `what` reads on from the count (else it follows a colon).
    pub follows_count: bool,
    /// The remedy, once (the first occurrence's stored one).
    pub remedy: String,
}

impl std::fmt::Display for WarningGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let noun = if self.count == 1 {
            "measurement"
        } else {
            "measurements"
        };
        let sep = if self.follows_count { " " } else { ": " };
        write!(f, "{}: {} {noun}{sep}{}", self.code, self.count, self.what)?;
        if self.marked > 0 && self.marked < self.count {
            write!(f, " ({} marked, where it can move the figure)", self.marked)?;
        }
        write!(f, " — {}", self.remedy)
    }
}

/// "a" or "a–b" for a range of counts.
fn span(lo: usize, hi: usize) -> String {
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}–{hi}")
    }
}

/// The measurements' warnings grouped by kind, in the order each kind
/// first appears.
pub fn group(ms: &[Measurement]) -> Vec<WarningGroup> {
    let mut codes: Vec<&str> = Vec::new();
    for w in ms.iter().flat_map(|m| &m.warnings) {
        if !codes.contains(&w.code.as_str()) {
            codes.push(&w.code);
        }
    }
    codes
        .into_iter()
        .map(|code| {
            let hits: Vec<(&Measurement, &Warning)> = ms
                .iter()
                .flat_map(|m| m.warnings.iter().map(move |w| (m, w)))
                .filter(|(_, w)| w.code == code)
                .collect();
            let (first_m, first_w) = hits[0];
            let follows_count = matches!(
                first_w.kind(),
                Some(WarningCode::Preempted | WarningCode::CiWide)
            );
            let what = match first_w.kind() {
                Some(WarningCode::Preempted) => {
                    let counts: Vec<(usize, usize)> = hits
                        .iter()
                        .map(|(m, _)| {
                            let lost = m.intervals.iter().filter(|i| i.preemptions > 0).count();
                            (lost, m.intervals.len())
                        })
                        .filter(|&(_, total)| total > 0)
                        .collect();
                    match (
                        counts.iter().map(|c| c.0).min(),
                        counts.iter().map(|c| c.0).max(),
                        counts.iter().map(|c| c.1).min(),
                        counts.iter().map(|c| c.1).max(),
                    ) {
                        (Some(a), Some(b), Some(c), Some(d)) => format!(
                            "lost {} of {} intervals to other work",
                            span(a, b),
                            span(c, d)
                        ),
                        _ => "lost intervals to other work".to_string(),
                    }
                }
                Some(WarningCode::CiWide) => {
                    let widest = hits
                        .iter()
                        .map(|(m, _)| {
                            (m.summary.ci_high - m.summary.ci_low) / m.summary.median.abs()
                        })
                        .filter(|x| x.is_finite())
                        .fold(0.0f64, f64::max);
                    format!(
                        "{} a median's interval wider than 5 % of it (up to {:.0} %)",
                        if hits.len() == 1 { "has" } else { "have" },
                        widest * 100.0
                    )
                }
                Some(kind) => kind.meaning().to_string(),
                // A code from a newer touchstone: its own words.
                None if hits.len() == 1 => first_w.message.clone(),
                None => format!("(e.g. {}: {})", first_m.name, first_w.message),
            };
            WarningGroup {
                code: code.to_string(),
                count: hits.len(),
                marked: hits.iter().filter(|(m, w)| moves_headline(w, m)).count(),
                what,
                follows_count,
                remedy: first_w.remedy.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::model::Interval;
    use crate::units::Unit;

    /// A measurement of `n` intervals, the first `preempted` of them preempted,
    /// carrying the warnings the harness would give it.
    fn measured(name: &str, stat: Statistic, n: usize, preempted: usize) -> Measurement {
        let samples: Vec<f64> = (0..n).map(|i| 100.0 + i as f64).collect();
        Measurement {
            statistic: stat,
            intervals: Interval::synthetic(n, preempted),
            warnings: crate::checks::check_preempted(preempted, n)
                .into_iter()
                .collect(),
            ..Measurement::synthetic(name, "proc", Unit::Ns, samples)
        }
    }

    /// Recorded from the issue's quick suite: "preempted" on nearly every
    /// memory-latency point, one of seven intervals each — it cannot move a
    /// median, so it is counted, not marked.
    #[test]
    fn one_preempted_interval_of_seven_is_not_marked_two_of_seven_is() {
        let one = measured("lat_mem_rd/size:1m", Statistic::Median, 7, 1);
        assert!(!moves_headline(&one.warnings[0], &one));
        let two = measured("lat_mem_rd/size:2m", Statistic::Median, 7, 2);
        assert!(moves_headline(&two.warnings[0], &two));
        // A min headline takes the best interval: only all preempted moves it.
        let min = measured("lat_ops/int64_add", Statistic::Min, 7, 6);
        assert!(!moves_headline(&min.warnings[0], &min));
        let all = measured("lat_ops/int64_mul", Statistic::Min, 7, 7);
        assert!(moves_headline(&all.warnings[0], &all));
    }

    /// "1 measurement has", "2 measurements have": the count and its verb agree.
    #[test]
    fn a_wide_interval_line_agrees_with_its_count() {
        let wide = |name: &str| {
            let mut m = measured(name, Statistic::Median, 7, 0);
            m.warnings.push(Warning::new(WarningCode::CiWide, "wide"));
            m
        };
        let one = group(&[wide("a")])[0].to_string();
        assert!(
            one.starts_with("ci-wide: 1 measurement has a median's interval"),
            "{one}"
        );
        let two = group(&[wide("a"), wide("b")])[0].to_string();
        assert!(
            two.starts_with("ci-wide: 2 measurements have a median's interval"),
            "{two}"
        );
    }

    #[test]
    fn warnings_of_one_kind_make_one_line_with_a_count_and_the_remedy_once() {
        let mut ms: Vec<Measurement> = (0..36)
            .map(|i| measured(&format!("lat_mem_rd/size:{i}k"), Statistic::Median, 7, 1))
            .collect();
        ms.push(measured("lat_syscall/null", Statistic::Median, 7, 3));
        ms.push(measured("quiet", Statistic::Median, 7, 0));
        let groups = group(&ms);
        assert_eq!(groups.len(), 1, "{groups:?}");
        let g = &groups[0];
        assert_eq!((g.count, g.marked), (37, 1));
        let line = g.to_string();
        assert_eq!(
            line,
            format!(
                "preempted: 37 measurements lost 1–3 of 7 intervals to other work \
                 (1 marked, where it can move the figure) — {}",
                WarningCode::Preempted.remedy()
            )
        );
        assert_eq!(line.matches(WarningCode::Preempted.remedy()).count(), 1);
    }

    #[test]
    fn codes_are_unique_stable_text_with_a_meaning_and_a_remedy() {
        for (i, a) in WarningCode::ALL.iter().enumerate() {
            let c = a.code();
            assert!(
                !c.is_empty() && c.chars().all(|ch| ch.is_ascii_lowercase() || ch == '-'),
                "{c}"
            );
            assert!(!a.meaning().is_empty() && !a.remedy().is_empty(), "{c}");
            assert!(
                WarningCode::ALL[i + 1..].iter().all(|b| b.code() != c),
                "{c} twice"
            );
            assert_eq!(WarningCode::parse(c), Some(*a));
        }
    }

    #[test]
    fn a_warning_carries_its_codes_remedy_and_its_own_message() {
        let w = Warning::new(
            WarningCode::CiWide,
            "95 % confidence interval is 9.0 % of the median",
        );
        assert_eq!(w.code, "ci-wide");
        assert_eq!(w.remedy, WarningCode::CiWide.remedy());
        assert_eq!(w.kind(), Some(WarningCode::CiWide));
    }

    #[test]
    fn stored_warnings_with_unknown_codes_still_load() {
        let w: Warning =
            serde_json::from_str(r#"{"code": "from-the-future", "message": "m", "remedy": "r"}"#)
                .unwrap();
        assert_eq!(w.kind(), None);
        assert_eq!(w.to_string(), "m: r");
        let old: Warning =
            serde_json::from_str(r#"{"code": "load", "message": "m", "remedy": "older words"}"#)
                .unwrap();
        // The stored remedy is shown as stored, not replaced by today's.
        assert_eq!(
            (old.kind(), old.remedy.as_str()),
            (Some(WarningCode::Load), "older words")
        );
    }

    #[test]
    fn the_results_format_lists_every_code() {
        let doc = include_str!("../../../docs/results-format.md");
        for c in WarningCode::ALL {
            assert!(
                doc.contains(&format!("`{}`", c.code())),
                "{} not documented",
                c.code()
            );
        }
    }
}
