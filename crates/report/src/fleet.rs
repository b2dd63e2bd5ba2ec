//! The fleet's verdict (`touchstone_analysis::outliers`) as text and as a
//! section of the HTML page: the hosts grouped by hardware, the rule and
//! its threshold stated, each flagged host with the benchmarks on which it
//! stands apart, and the groups too small to judge said to be so.

use std::fmt::Write;

use touchstone_analysis::outliers::{Group, RULE};
use touchstone_analysis::table::Matrix;
use touchstone_results::units::format_value;

use crate::html::svg::escape;

/// What a group too small to judge says.
pub const TOO_FEW: &str = "too few hosts of this hardware to judge";

fn group_title(i: usize, g: &Group) -> String {
    format!(
        "hardware {}: {} — {} host(s): {}",
        i + 1,
        g.hardware,
        g.hosts.len(),
        g.hosts.join(", ")
    )
}

fn flag_line(f: &touchstone_analysis::outliers::Flag) -> String {
    format!(
        "{}: {} {} against the group's median {} ({:.0} % slower, score {:.1})",
        f.host,
        f.benchmark,
        format_value(f.unit, f.value),
        format_value(f.unit, f.median),
        100.0 * f.slower_by,
        f.score
    )
}

/// The verdict as terminal text (plain; the CLI sanitises and prints it).
pub fn text(m: &Matrix, groups: &[Group]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Fleet: {} host(s) (the newest run of each) in {} hardware group(s).",
        m.runs.len(),
        groups.len()
    );
    let _ = writeln!(out, "Rule: {RULE}.\n");
    for (i, g) in groups.iter().enumerate() {
        let _ = writeln!(out, "{}", group_title(i, g));
        if !g.judged {
            let _ = writeln!(
                out,
                "  {TOO_FEW} ({} host(s); at least {} needed)",
                g.hosts.len(),
                touchstone_analysis::outliers::MIN_HOSTS
            );
        } else if g.flags.is_empty() {
            let _ = writeln!(
                out,
                "  no host stands apart ({} benchmark(s) judged)",
                g.benchmarks_judged
            );
        } else {
            for (host, n) in g.flagged_hosts() {
                let _ = writeln!(
                    out,
                    "  FLAGGED {host}: slow on {n} of {} benchmark(s) judged",
                    g.benchmarks_judged
                );
            }
            for f in &g.flags {
                let _ = writeln!(out, "    {}", flag_line(f));
            }
        }
        out.push('\n');
    }
    out
}

/// The verdict as an HTML section (`id="fleet"`).
pub fn section(out: &mut String, groups: &[Group]) {
    let _ = write!(
        out,
        r#"<section id="fleet"><h2>Fleet</h2><p class="note">Hosts grouped by hardware (CPU model, logical CPUs, memory to the GiB), each by its newest run. Rule: {}.</p>"#,
        escape(RULE)
    );
    for (i, g) in groups.iter().enumerate() {
        let _ = write!(out, "<h3>{}</h3>", escape(&group_title(i, g)));
        if !g.judged {
            let _ = write!(
                out,
                r#"<p class="note">{TOO_FEW} ({} host(s); at least {} needed).</p>"#,
                g.hosts.len(),
                touchstone_analysis::outliers::MIN_HOSTS
            );
            continue;
        }
        if g.flags.is_empty() {
            let _ = write!(
                out,
                r#"<p class="note">No host stands apart ({} benchmark(s) judged).</p>"#,
                g.benchmarks_judged
            );
            continue;
        }
        out.push_str(r#"<div class="scroll"><table class="sortable"><thead><tr><th>host</th><th>benchmark</th><th>figure</th><th>group median</th><th>slower by</th><th>score</th></tr></thead><tbody>"#);
        for f in &g.flags {
            let _ = write!(
                out,
                r#"<tr><td class="slower">{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{:.0} %</td><td class="num">{:.1}</td></tr>"#,
                escape(&f.host),
                escape(&f.benchmark),
                escape(&format_value(f.unit, f.value)),
                escape(&format_value(f.unit, f.median)),
                100.0 * f.slower_by,
                f.score
            );
        }
        out.push_str("</tbody></table></div>");
    }
    out.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{measurement, run_with};
    use touchstone_analysis::outliers::judge;
    use touchstone_results::{Run, Unit};

    fn host(name: &str, model: &str, ns: f64) -> Run {
        let mut r = run_with(
            name,
            name,
            vec![measurement("lat_syscall/null", "proc", Unit::Ns, 1, ns)],
        );
        r.host.cpu.model = model.into();
        r
    }

    #[test]
    fn flags_and_too_few_are_said_with_the_rule() {
        let runs = vec![
            host("n1", "Xeon", 100.0),
            host("n2", "Xeon", 101.0),
            host("n3", "Xeon", 99.0),
            host("n4", "Xeon", 130.0),
            host("e1", "EPYC", 50.0),
            host("e2", "EPYC", 80.0),
        ];
        let m = Matrix::build(&runs).unwrap();
        let groups = judge(&m);
        let t = text(&m, &groups);
        assert!(t.contains("|x − median| / (1.4826·MAD) > 3.5"), "{t}");
        assert!(
            t.contains("FLAGGED n4: slow on 1 of 1 benchmark(s) judged"),
            "{t}"
        );
        assert!(t.contains("n4: lat_syscall/null 130"), "{t}");
        assert!(t.contains("(29 % slower, score 19.9)"), "{t}");
        assert!(t.contains(TOO_FEW), "{t}");
        assert!(!t.contains("FLAGGED e"), "{t}");
        let mut html = String::new();
        section(&mut html, &groups);
        assert!(html.contains(r#"<section id="fleet">"#));
        assert!(html.contains(r#"<td class="slower">n4</td>"#), "{html}");
        assert!(html.contains(TOO_FEW));
    }
}
