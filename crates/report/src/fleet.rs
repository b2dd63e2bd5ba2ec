//! The fleet's verdict (`touchstone_analysis::outliers`) as text and as a
//! section of the HTML page: the hosts grouped by hardware, the rule and
//! its threshold stated, each flagged host with the benchmarks on which it
//! stands apart, and the groups too small to judge said to be so; and
//! the network between hosts as matrices (`touchstone_analysis::pairs`),
//! rows the client hosts, columns the server hosts.

use std::fmt::Write;

use touchstone_analysis::outliers::{Group, RULE};
use touchstone_analysis::pairs::{Cell, PairMatrix};
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

/// What the pair matrices say about themselves.
pub const PAIRS_NOTE: &str = "rows: the client host (where the benchmark ran), columns: the \
server host (`touchstone serve`); each cell the newest run's median, with the CPU each end used \
(client / server, % of one CPU, the server's as serve itself reported it); figures between \
namespaces or containers of one machine are functional only, never a network's performance";

/// A cell as text: the figure, then the CPU of both ends where known.
fn cell_text(unit: touchstone_results::Unit, c: &Cell) -> String {
    let pct = |v: Option<f64>| v.map_or("?".to_string(), |v| format!("{v:.0}"));
    let cpu = match c.cpu_pct {
        (None, None) => String::new(),
        (a, b) => format!(" · CPU {}/{} %", pct(a), pct(b)),
    };
    format!("{}{cpu}", format_value(unit, c.value))
}

/// The matrices as terminal text (plain; the CLI sanitises and prints it).
pub fn pairs_text(ms: &[PairMatrix]) -> String {
    let mut out = String::new();
    if ms.is_empty() {
        return out;
    }
    let _ = writeln!(out, "Network between hosts: {PAIRS_NOTE}.\n");
    for m in ms {
        let _ = writeln!(out, "{}", m.case);
        let mut rows: Vec<Vec<String>> = vec![std::iter::once("client \\ server".to_string())
            .chain(m.servers.iter().cloned())
            .collect()];
        for (r, client) in m.clients.iter().enumerate() {
            let mut row = vec![client.clone()];
            for c in 0..m.servers.len() {
                row.push(
                    m.cells
                        .get(&(r, c))
                        .map_or("—".to_string(), |cell| cell_text(m.unit, cell)),
                );
            }
            rows.push(row);
        }
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        for row in &rows {
            let line: Vec<String> = row
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (t, &w))| {
                    let pad = " ".repeat(w - t.chars().count());
                    if i == 0 {
                        format!("{t}{pad}")
                    } else {
                        format!("{pad}{t}")
                    }
                })
                .collect();
            let _ = writeln!(out, "  {}", line.join("   ").trim_end());
        }
        out.push('\n');
    }
    out
}

/// The matrices as an HTML section (`id="pairs"`); nothing without pairs.
pub fn pairs_section(out: &mut String, ms: &[PairMatrix]) {
    if ms.is_empty() {
        return;
    }
    let _ = write!(
        out,
        r#"<section id="pairs"><h2>Network between hosts</h2><p class="note">{}.</p>"#,
        escape(PAIRS_NOTE)
    );
    for m in ms {
        let _ = write!(
            out,
            r#"<h3>{}</h3><div class="scroll"><table class="pairs"><thead><tr><th>client \ server</th>"#,
            escape(&m.case)
        );
        for s in &m.servers {
            let _ = write!(out, "<th>{}</th>", escape(s));
        }
        out.push_str("</tr></thead><tbody>");
        for (r, client) in m.clients.iter().enumerate() {
            let _ = write!(out, "<tr><th>{}</th>", escape(client));
            for c in 0..m.servers.len() {
                match m.cells.get(&(r, c)) {
                    Some(cell) => {
                        let _ = write!(
                            out,
                            r#"<td class="num">{}</td>"#,
                            escape(&cell_text(m.unit, cell))
                        );
                    }
                    None => out.push_str(r#"<td class="num muted">—</td>"#),
                }
            }
            out.push_str("</tr>");
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
        for said in [
            "|x − median| / (1.4826·MAD) > 3.5",
            "FLAGGED n4: slow on 1 of 1 benchmark(s) judged",
            "n4: lat_syscall/null 130",
            "(29 % slower, score 19.9)",
            TOO_FEW,
        ] {
            assert!(t.contains(said), "{said}: {t}");
        }
        assert!(!t.contains("FLAGGED e"), "{t}");
        let mut html = String::new();
        section(&mut html, &groups);
        assert!(html.contains(r#"<section id="fleet">"#));
        assert!(html.contains(r#"<td class="slower">n4</td>"#), "{html}");
        assert!(html.contains(TOO_FEW));
    }

    /// A synthetic store's pair runs: the matrix puts each figure at its
    /// client's row and server's column, on the terminal and in HTML.
    #[test]
    fn pair_matrices_show_each_figure_at_its_client_and_server() {
        let a = "10.0.0.1:7717";
        let mut lat = measurement(
            &format!("lat_tcp/size:1/remote:{a}"),
            "comm",
            Unit::Ns,
            1,
            30_000.0,
        );
        lat.extra.insert("cpu_pct_client".into(), 15.0);
        lat.extra.insert("cpu_pct_server".into(), 14.0);
        let bw = measurement(
            &format!("bw_tcp/size:64k/remote:{a}"),
            "comm_bw",
            Unit::MBps,
            1,
            950.0,
        );
        let mut n2 = run_with("r2", "node-2", vec![lat, bw]);
        n2.host
            .extra
            .insert(touchstone_analysis::pairs::peer_key(a), "node-1".into());
        let n3 = run_with(
            "r3",
            "node-3",
            vec![measurement(
                &format!("lat_tcp/size:1/remote:{a}"),
                "comm",
                Unit::Ns,
                1,
                45_000.0,
            )],
        );
        let ms = touchstone_analysis::pairs::build(&[n2, n3]);
        let t = pairs_text(&ms);
        assert!(t.contains("Network between hosts"), "{t}");
        let lines: Vec<&str> = t.lines().collect();
        let at = lines.iter().position(|l| *l == "lat_tcp/size:1").unwrap();
        assert!(
            lines[at + 1].contains("client \\ server") && lines[at + 1].ends_with("node-1"),
            "{t}"
        );
        assert!(
            lines[at + 2].starts_with("  node-2")
                && lines[at + 2].contains("30.00 µs · CPU 15/14 %"),
            "{t}"
        );
        assert!(
            lines[at + 3].starts_with("  node-3") && lines[at + 3].contains("45.00 µs"),
            "{t}"
        );
        let bw_at = lines.iter().position(|l| *l == "bw_tcp/size:64k").unwrap();
        assert!(
            lines[bw_at + 2].contains("950") && !lines[bw_at + 2].contains("CPU"),
            "{t}"
        );
        let mut html = String::new();
        pairs_section(&mut html, &ms);
        assert!(html.contains(r#"<section id="pairs">"#), "{html}");
        assert!(
            html.contains("<tr><th>node-3</th><td class=\"num\">45.00 µs</td></tr>"),
            "{html}"
        );
        assert!(pairs_text(&[]).is_empty());
    }
}
