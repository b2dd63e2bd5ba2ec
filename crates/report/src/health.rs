//! `touchstone check`'s verdict (`touchstone_analysis::health::assess`) as
//! text — one line per finding naming the benchmark, the shift with its
//! interval and the baseline — as JSON, and as the one line an LBNL NHC
//! check function passes to `die` (and Slurm takes as a drain reason).

use std::fmt::Write;

use serde::Serialize;
use touchstone_analysis::health::assess::{Assessment, Judged};
use touchstone_analysis::health::{Against, MIN_OWN_RUNS, THRESHOLD};
use touchstone_results::units::format_value;

/// Signed per cent, as a shift reads: "+31 %", "−4.2 %".
pub fn percent(x: f64) -> String {
    let p = 100.0 * x;
    let text = if p.abs() >= 9.95 {
        format!("{:+.0}", p)
    } else {
        format!("{:+.1}", p)
    };
    format!("{} %", text.replace('-', "−"))
}

fn baseline(j: &Judged) -> String {
    let g = &j.judgement;
    let of = match g.against {
        Against::History => format!("of this host's last {} runs", g.n),
        Against::Class => format!("of {} hosts of its hardware", g.n),
    };
    format!(
        "median {} {of}, spread {:.1} %",
        format_value(j.unit, g.baseline),
        100.0 * g.spread
    )
}

/// "lat_mem_rd/… +31 % [+27 %, +35 %] vs class (median 92.1 ns of 5 hosts
/// of its hardware, spread 1.0 %)".
pub fn finding_line(j: &Judged) -> String {
    let g = &j.judgement;
    format!(
        "{} {} [{}, {}] vs {}: {} now against {}",
        j.name,
        percent(g.shift()),
        percent(g.ratio.low - 1.0),
        percent(g.ratio.high - 1.0),
        g.against.name(),
        format_value(j.unit, g.value),
        baseline(j)
    )
}

/// The verdict for a terminal: the findings, then what was judged and what
/// could not be; `failed`: measurements of the check's run that failed
/// ("name: why").
pub fn text(a: &Assessment, failed: &[String]) -> String {
    let mut out = String::new();
    let findings = a.findings();
    let degraded = !findings.is_empty() || !failed.is_empty();
    let _ = writeln!(
        out,
        "touchstone check: run {} on {} ({}): {}",
        a.run,
        a.host,
        a.hardware,
        if degraded { "DEGRADED" } else { "healthy" }
    );
    for j in &findings {
        let _ = writeln!(out, "  {}", finding_line(j));
    }
    for f in failed {
        let _ = writeln!(out, "  could not be measured: {f}");
    }
    for j in a.dismissed() {
        let again = j
            .recheck
            .as_ref()
            .map_or(String::new(), |g| format!(", {} again", percent(g.shift())));
        let _ = writeln!(
            out,
            "not confirmed when measured again{again}: {}",
            finding_line(j)
        );
    }
    for against in [Against::History, Against::Class] {
        let judged = a
            .judged
            .iter()
            .filter(|j| j.judgement.against == against)
            .count();
        let not: Vec<_> = a
            .not_judged
            .iter()
            .filter(|n| n.against == against)
            .collect();
        let whom = match against {
            Against::History => format!("its own history ({} earlier run(s))", a.own_runs),
            Against::Class => format!("its hardware class ({} other host(s))", a.class_hosts),
        };
        let _ = write!(out, "judged against {whom}: {judged} figure(s)");
        match not.first() {
            Some(n) => {
                let _ = writeln!(
                    out,
                    "; {} not judged (e.g. {}: {})",
                    not.len(),
                    n.name,
                    n.why
                );
            }
            None => out.push('\n'),
        }
    }
    let _ = writeln!(
        out,
        "A finding needs both: the shift's interval excludes 0 on the slow side, and the \
         figure lies more than {THRESHOLD} spreads from the baseline (the spread: the largest of \
         the reference's 1.4826·MAD, this host's run-to-run spread at its upper 95 % bound for \
         the runs behind it, and 1 %; own history: at least {MIN_OWN_RUNS} runs since its last \
         change point). See docs/reports.md."
    );
    out
}

/// The line an NHC check function hands to `die` when the host is
/// degraded — "touchstone: lat_mem_rd/… +31 % vs class", the strongest
/// finding, with how many more — and nothing when it is healthy.
pub fn nhc(a: &Assessment, failed: &[String]) -> String {
    let findings = a.findings();
    let more = (findings.len() + failed.len()).saturating_sub(1);
    let first = match (findings.first(), failed.first()) {
        (Some(j), _) => format!(
            "{} {} vs {}",
            j.name,
            percent(j.judgement.shift()),
            j.judgement.against.name()
        ),
        (None, Some(f)) => format!("{} could not be measured", f.split(':').next().unwrap_or(f)),
        (None, None) => return String::new(),
    };
    match more {
        0 => format!("touchstone: {first}\n"),
        n => format!("touchstone: {first} (and {n} more)\n"),
    }
}

#[derive(Serialize)]
struct Verdict<'a> {
    verdict: &'static str,
    #[serde(flatten)]
    assessment: &'a Assessment,
    findings: Vec<&'a Judged>,
    /// Findings of the first measurement its re-measurement did not confirm.
    dismissed: Vec<&'a Judged>,
    failed: &'a [String],
}

/// The verdict as JSON: `verdict` (healthy or degraded), the findings, every
/// judgement and what was not judged.
pub fn json(a: &Assessment, failed: &[String]) -> String {
    let findings = a.findings();
    let v = Verdict {
        verdict: if findings.is_empty() && failed.is_empty() {
            "healthy"
        } else {
            "degraded"
        },
        assessment: a,
        findings,
        dismissed: a.dismissed(),
        failed,
    };
    format!(
        "{}\n",
        serde_json::to_string_pretty(&v).expect("serialisable")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use touchstone_analysis::compare::Ratio;
    use touchstone_analysis::health::Judgement;
    use touchstone_analysis::outliers::Hardware;
    use touchstone_results::Unit;

    fn assessment(degraded: bool) -> Assessment {
        let judgement = Judgement {
            against: Against::Class,
            value: 120.6,
            baseline: 92.0,
            n: 5,
            spread: 0.01,
            own_spread: Some(0.004),
            ratio: Ratio {
                ratio: 120.6 / 92.0,
                low: 1.27,
                high: 1.35,
                level: 0.95,
            },
            score: 31.1,
            significant: true,
            beyond_spread: degraded,
        };
        Assessment {
            run: "0123abcd".into(),
            host: "node-7".into(),
            hardware: Hardware {
                cpu_model: "Xeon".into(),
                cpus: 8,
                memory_gib: 32,
            },
            own_runs: 12,
            class_hosts: 5,
            judged: vec![Judged {
                name: "lat_mem_rd/stride:rand/size:64m".into(),
                unit: Unit::Ns,
                judgement,
                recheck: None,
            }],
            not_judged: vec![],
        }
    }

    #[test]
    fn a_finding_is_one_line_with_its_shift_interval_and_baseline() {
        let t = text(&assessment(true), &[]);
        assert!(t.contains("DEGRADED"), "{t}");
        assert!(
            t.contains(
                "lat_mem_rd/stride:rand/size:64m +31 % [+27 %, +35 %] vs class: 120.6 ns now \
                 against median 92.00 ns of 5 hosts of its hardware, spread 1.0 %"
            ),
            "{t}"
        );
        assert_eq!(
            nhc(&assessment(true), &[]),
            "touchstone: lat_mem_rd/stride:rand/size:64m +31 % vs class\n"
        );
        let v: serde_json::Value = serde_json::from_str(&json(&assessment(true), &[])).unwrap();
        assert_eq!(v["verdict"], "degraded");
        assert_eq!(v["findings"][0]["judgement"]["against"], "class");
    }

    #[test]
    fn a_finding_the_re_measurement_did_not_confirm_is_healthy_and_said() {
        let mut a = assessment(true);
        let mut again = a.judged[0].judgement.clone();
        again.value = 92.5;
        again.ratio.ratio = 92.5 / 92.0;
        again.significant = false;
        again.beyond_spread = false;
        a.judged[0].recheck = Some(again);
        let t = text(&a, &[]);
        assert!(t.contains("healthy"), "{t}");
        assert!(
            t.contains("not confirmed when measured again, +0.5 % again: lat_mem_rd"),
            "{t}"
        );
        assert_eq!(nhc(&a, &[]), "");
        let v: serde_json::Value = serde_json::from_str(&json(&a, &[])).unwrap();
        assert_eq!(v["verdict"], "healthy");
        assert_eq!(v["dismissed"][0]["recheck"]["value"], 92.5);
    }

    #[test]
    fn healthy_is_silent_for_nhc_and_a_failure_is_a_finding() {
        let a = assessment(false);
        assert!(text(&a, &[]).contains("healthy"));
        assert_eq!(nhc(&a, &[]), "");
        assert_eq!(
            nhc(&a, &["dhrystone: out of memory".into()]),
            "touchstone: dhrystone could not be measured\n"
        );
        assert_eq!(percent(-0.042), "−4.2 %");
    }
}
