//! Every warning touchstone can attach to a run or a figure, in one list:
//! its stable code (stored and exported), what the condition means, and
//! what to do about it. A warning is built from its code and the message
//! that gives this occurrence's numbers (`Warning::new`), so a remedy is
//! written once and a code cannot be misspelt. Stored warnings keep their
//! code as text: a run from a newer touchstone, whose codes this list does
//! not know, still loads and shows.

use crate::model::Warning;

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
    Preempted = "preempted",
        "other work took the CPU during timed intervals",
        "re-run on a quiet machine; the median resists a few such intervals, not a majority";
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
    TlbDisagrees = "tlb-disagrees",
        "the measured TLB entries differ from what cpuid reports",
        "a hypervisor can report other TLB sizes than the hardware has, and replacement or a cache step can move a TLB step; see the curve";
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

#[cfg(test)]
mod tests {
    use super::*;

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
