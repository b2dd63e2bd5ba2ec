//! Terminal tables: a run's measurements grouped like lmbench's summary,
//! each figure with its unit and its own confidence interval (the median's,
//! at the level reached; none for a min or max), the warnings that can move
//! a figure beside it and all of them grouped by kind below, a run's load
//! curves, and the list of stored runs.

use comfy_table::{
    presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ColumnConstraint, ContentArrangement, Table,
    Width,
};
use touchstone_analysis::curve_analysis::Analysed;
use touchstone_results::groups::{title, GROUPS};
use touchstone_results::units::Scale;
use touchstone_results::warnings::{group, moves_headline};
use touchstone_results::{Measurement, Run, RunRow, Statistic, Unit};

use crate::colour::{self, Stream};
use crate::sanitize::cell;

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.iter().map(|h| cell(h)));
    crate::tables::fit_terminal(&mut t);
    t
}

/// The figure, its confidence interval and that interval's half width
/// relative to the figure, all in one readable scale. The interval is the
/// headline's own: over rounds when measured in rounds; else a median's,
/// with its achieved level beside it when that is below 95 % (few
/// repetitions), and none ("—") for one sample or a min or max headline.
pub fn figure_cells(m: &Measurement) -> [String; 3] {
    // No figure at all (a level not detected, a subtraction that left
    // nothing): never a number; the reason is among its warnings.
    if m.invalid.is_some() {
        return ["no figure".into(), "—".into(), String::new()];
    }
    let s = &m.summary;
    let scale = Scale::for_value(m.unit, m.value());
    let stat = match m.statistic {
        Statistic::Median => "",
        Statistic::Min => " (min)",
        Statistic::Max => " (max)",
    };
    let figure = format!("{}{stat}", scale.format_with_label(m.value()));
    let Some(i) = s.headline_interval(m.statistic) else {
        return [figure, "—".into(), String::new()];
    };
    let level = if i.below_nominal() {
        format!(" ({:.0} %)", i.level * 100.0)
    } else {
        String::new()
    };
    let rel = (i.high - i.low) / 2.0 / m.value().abs() * 100.0;
    [
        figure,
        format!("{} … {}{level}", scale.format(i.low), scale.format(i.high)),
        if rel.is_finite() {
            format!("±{rel:.1} %")
        } else {
            "-".into()
        },
    ]
}

/// The columns a group of block I/O figures adds (`io_cells`).
pub const IO_HEADER: [&str; 3] = ["IOPS", "p50 lat", "p99 lat"];

/// IOPS and the blocks' median and 99th-percentile latency of an I/O
/// figure, readably scaled; empty cells for any other figure.
pub fn io_cells(m: &Measurement) -> [String; 3] {
    let Some(f) = m.io_figures() else {
        return Default::default();
    };
    let ops = |x: Option<f64>| {
        x.map_or(String::new(), |v| {
            Scale::for_value(Unit::OpsPerSec, v).format_with_label(v)
        })
    };
    let us = |x: Option<f64>| {
        x.map_or(String::new(), |v| {
            Scale::for_value(Unit::Ns, v * 1e3).format_with_label(v * 1e3)
        })
    };
    [ops(f.iops), us(f.p50_us), us(f.p99_us)]
}

/// The widest the benchmark column is kept whole; a longer name is broken
/// into lines after a `/`.
const NAME_WIDTH: usize = 40;

/// `name` in lines of at most `width` characters, broken only after a `/`
/// (a part longer than `width` stays whole on its own line).
fn wrap_name(name: &str, width: usize) -> String {
    let mut lines: Vec<String> = vec![String::new()];
    for part in name.split_inclusive('/') {
        let last = lines.last_mut().expect("one line at least");
        if !last.is_empty() && last.chars().count() + part.chars().count() > width {
            lines.push(part.to_string());
        } else {
            last.push_str(part);
        }
    }
    lines.join("\n")
}

/// How to read the interval column, printed once under the tables.
pub const INTERVAL_NOTE: &str = "CI: 95 % interval over the rounds, where another run's figure should fall \
(with the group's run-level term for what moves a whole run, where the run stored one: docs/results-format.md); \
of one round, the median's distribution-free interval (its level shown where fewer repetitions reach less); \
— : none, for a min or max headline of one round or one sample.";

/// One table per report group, in the groups' order; unknown groups last;
/// then the measurements' warnings grouped by kind, one line each.
pub fn measurements(ms: &[Measurement]) -> String {
    let mut out = String::new();
    let mut order: Vec<&str> = GROUPS.iter().map(|g| g.name).collect();
    for m in ms {
        if !order.contains(&m.group.as_str()) {
            order.push(&m.group);
        }
    }
    for g in order {
        let rows: Vec<&Measurement> = ms.iter().filter(|m| m.group == g).collect();
        if rows.is_empty() {
            continue;
        }
        // A group of block I/O figures gets fio's columns too: IOPS and the
        // blocks' latency percentiles.
        let io = rows.iter().any(|m| m.io_figures().is_some());
        let mut header = vec!["benchmark", "procs", "figure", "CI", "±", "n"];
        if io {
            header.extend(IO_HEADER);
        }
        header.push("notes");
        let mut t = table(&header);
        let name_width = rows
            .iter()
            .map(|m| m.name.chars().count())
            .max()
            .unwrap_or(0)
            .min(NAME_WIDTH);
        for m in rows {
            let [fig, ci, rel] = figure_cells(m);
            let notes: Vec<&str> = m
                .warnings
                .iter()
                .filter(|w| moves_headline(w, m))
                .map(|w| w.code.as_str())
                .collect();
            let mut row = vec![
                cell(wrap_name(&m.name, name_width)),
                cell(m.parallel).set_alignment(CellAlignment::Right),
                cell(fig).set_alignment(CellAlignment::Right),
                cell(ci).set_alignment(CellAlignment::Right),
                cell(rel).set_alignment(CellAlignment::Right),
                cell(m.summary.n).set_alignment(CellAlignment::Right),
            ];
            if io {
                row.extend(
                    io_cells(m)
                        .into_iter()
                        .map(|c| cell(c).set_alignment(CellAlignment::Right)),
                );
            }
            row.push(cell(notes.join(", ")));
            t.add_row(row);
        }
        // The names keep their width; the other columns give way (a
        // name broken mid-token, `size:51` / `2`, reads as another case).
        if let Some(c) = t.column_mut(0) {
            c.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(
                name_width as u16 + 2,
            )));
        }
        out.push_str(&format!("{}\n{t}\n", title(g)));
    }
    if !ms.is_empty() {
        out.push_str(INTERVAL_NOTE);
        out.push('\n');
    }
    out.push_str(&warning_lines(ms, colour::enabled(Stream::Stdout)));
    out
}

/// The measurements' warnings, one line per kind with a count and the
/// remedy once (`warnings::group`), and where to find every one.
pub fn warning_lines(ms: &[Measurement], coloured: bool) -> String {
    let groups = group(ms);
    if groups.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "{} (the notes column marks those that can move a figure; all: touchstone show RUN --warnings)\n",
        colour::paint("warnings", colour::WARNING, coloured)
    );
    for g in groups {
        out.push_str(&format!("  {g}\n"));
    }
    out
}

/// Every warning of a run, one per line: the run's, then each
/// measurement's with its name (`show --warnings`).
pub fn all_warnings(run: &Run) -> String {
    let mut out = String::new();
    for w in &run.warnings {
        out.push_str(&format!("run: {}: {} — {}\n", w.code, w.message, w.remedy));
    }
    for m in &run.measurements {
        for w in &m.warnings {
            let mark = if moves_headline(w, m) {
                " [marked]"
            } else {
                ""
            };
            out.push_str(&format!(
                "{}: {}{mark}: {} — {}\n",
                m.name, w.code, w.message, w.remedy
            ));
        }
    }
    if out.is_empty() {
        out.push_str("no warnings\n");
    }
    out
}

/// Load curves (each with its analysis): for each curve and CPU count, one
/// table of its points and one line with the peak, knee, crossover and
/// USL fit; then the curve's scalability across CPU counts and its notes
/// (see `crate::curves`). With `fit_terminal` false the tables' layout
/// does not depend on the terminal's width (tests).
pub fn render_curves(curves: &[Analysed], fit_terminal: bool) -> String {
    let mut out = String::new();
    for a in curves {
        let text = crate::curves::curve_text(a.curve, &a.analysis);
        out.push_str(&format!("{}\n", text.title));
        for block in &text.blocks {
            let s = &block.sheet;
            let t = sheet_table(s, fit_terminal);
            out.push_str(&format!("{}\n{t}\n{}\n", s.title, block.line));
        }
        for note in &text.notes {
            out.push_str(&format!("  {note}\n"));
        }
        out.push('\n');
    }
    // A curve and its baseline (fscache's read and memcpy) side by side.
    for group in crate::curves::mode_groups(curves.iter().map(|a| a.curve)) {
        let s = crate::curves::mode_sheet(&group);
        out.push_str(&format!(
            "{}\n{}\n\n",
            s.title,
            sheet_table(&s, fit_terminal)
        ));
    }
    out
}

/// A sheet as a table, numbers right-aligned.
fn sheet_table(s: &crate::sheet::Sheet, fit_terminal: bool) -> comfy_table::Table {
    let header: Vec<&str> = s.header.iter().map(String::as_str).collect();
    let mut t = table(&header);
    if !fit_terminal {
        t.force_no_tty();
    }
    crate::tables::add_rows(&mut t, s);
    t
}

/// What a reader needs to know about the machine and the conditions.
pub fn run_header(run: &Run) -> String {
    let h = &run.host;
    let mut lines = vec![
        format!(
            "run {}{}",
            run.id,
            run.label
                .as_ref()
                .map(|l| format!(" ({l})"))
                .unwrap_or_default()
        ),
        format!(
            "  {} — {}{}",
            run.started_at.format("%Y-%m-%d %H:%M:%S UTC"),
            run.status.as_str(),
            run.ended_at
                .map(|e| format!(
                    ", took {:.1} s",
                    (e - run.started_at).num_milliseconds() as f64 / 1e3
                ))
                .unwrap_or_default()
        ),
        format!(
            "  host {}: {} ({} socket(s), {} cores, {} threads), {:.1} GiB",
            h.hostname,
            h.cpu.model,
            h.cpu.sockets,
            h.cpu.cores,
            h.cpu.threads,
            h.memory_bytes as f64 / (1u64 << 30) as f64
        ),
        format!(
            "  {} {}, {}{}",
            h.os,
            h.kernel,
            h.distribution.as_deref().unwrap_or("unknown distribution"),
            h.virtualization
                .as_ref()
                .map(|v| format!(", virtual: {v}"))
                .unwrap_or_default()
        ),
        format!(
            "  clock {}: declared resolution {:.0} ns, observed step {:.0} ns, read cost {:.1} ns; {} {} ({})",
            run.clock.source,
            run.clock.declared_resolution_ns,
            run.clock.resolution_ns,
            run.clock.read_cost_ns,
            run.tool.name,
            run.tool.version,
            run.tool.profile
        ),
    ];
    if let Some(reason) = &run.reason {
        lines.insert(2, format!("  reason: {reason}"));
    }
    if !h.caches.is_empty() {
        let caches: Vec<String> = h
            .caches
            .iter()
            .map(|c| {
                format!(
                    "L{} {} {}",
                    c.level,
                    c.kind,
                    Scale::for_value(touchstone_results::Unit::Bytes, c.size_bytes as f64)
                        .format_with_label(c.size_bytes as f64)
                )
            })
            .collect();
        lines.push(format!("  caches: {}", caches.join(", ")));
    }
    for note in &run.notes {
        lines.push(format!("  {note}"));
    }
    let coloured = colour::enabled(Stream::Stdout);
    for w in &run.warnings {
        lines.push(format!(
            "  {} {}: {} — {}",
            colour::paint("warning:", colour::WARNING, coloured),
            w.code,
            w.message,
            w.remedy
        ));
    }
    lines.join("\n") + "\n"
}

/// `touchstone runs`.
pub fn runs(rows: &[RunRow]) -> String {
    let mut t = table(&["id", "label", "host", "started (UTC)", "status", "measured"]);
    for r in rows {
        t.add_row(vec![
            cell(&r.id),
            cell(r.label.as_deref().unwrap_or("")),
            cell(&r.hostname),
            cell(r.started_at.format("%Y-%m-%d %H:%M:%S")),
            cell(&r.status),
            cell(what_measured(r)),
        ]);
    }
    format!("{t}\n")
}

/// What a run measured, in brief: how many measurements and load curves,
/// and the first families and workloads by name ("1 curve: tcp_rr").
fn what_measured(r: &RunRow) -> String {
    let mut counts = Vec::new();
    if r.measurements > 0 || r.curves == 0 {
        counts.push(format!(
            "{} measurement{}",
            r.measurements,
            plural(r.measurements)
        ));
    }
    if r.curves > 0 {
        counts.push(format!("{} curve{}", r.curves, plural(r.curves)));
    }
    const NAMED: usize = 3;
    let mut names = r
        .measured
        .iter()
        .take(NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if r.measured.len() > NAMED {
        names += &format!(" +{} more", r.measured.len() - NAMED);
    }
    if names.is_empty() {
        counts.join(", ")
    } else {
        format!("{}: {names}", counts.join(", "))
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The width a listing should fit: the terminal's, or 100 columns when
/// standard output is not a terminal (a pipe, a file, a pager).
pub fn listing_width() -> u16 {
    crate::tables::terminal_columns().unwrap_or(100)
}

/// A table of text cells fitted to `width` columns, each column at least
/// as wide as its longest word so that a word is never split (a line wraps
/// only at spaces); wider than `width` only when those words alone are.
pub fn fitted_table(header: &[&str], rows: &[Vec<String>], width: u16) -> String {
    let mut t = table(header);
    t.force_no_tty().set_width(width);
    let longest_word = |text: &str| {
        text.split_whitespace()
            .map(|w| w.chars().count())
            .max()
            .unwrap_or(0)
    };
    let constraints: Vec<ColumnConstraint> = (0..header.len())
        .map(|c| {
            let word = rows
                .iter()
                .map(|r| r.get(c).map_or(0, |x| longest_word(x)))
                .chain(std::iter::once(longest_word(header[c])))
                .max()
                .unwrap_or(0);
            // comfy-table counts a column's padding (one space each side).
            ColumnConstraint::LowerBoundary(Width::Fixed(word as u16 + 2))
        })
        .collect();
    t.set_constraints(constraints);
    for r in rows {
        t.add_row(r.iter().map(Cell::new).collect::<Vec<_>>());
    }
    format!("{t}\n")
}

/// Any table of text cells in the common style, a row per item of `rows`.
pub fn text_table(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut t = table(header);
    for r in rows {
        t.add_row(r.iter().map(cell).collect::<Vec<_>>());
    }
    format!("{t}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `runs` says what each run measured: a tcp_rr run is one curve of
    /// tcp_rr, not "measurements 0"; many families are named in brief.
    #[test]
    fn runs_say_what_each_run_measured() {
        use chrono::TimeZone;
        let row = |id: &str, measurements: u64, curves: u64, measured: &[&str]| RunRow {
            id: id.into(),
            label: None,
            hostname: "alpha".into(),
            started_at: chrono::Utc
                .with_ymd_and_hms(2026, 11, 26, 12, 0, 0)
                .unwrap(),
            status: "complete".into(),
            measurements,
            curves,
            measured: measured.iter().map(|s| s.to_string()).collect(),
            machine_id: None,
        };
        let rows = [
            row("aaaa0001", 0, 1, &["tcp_rr"]),
            row(
                "aaaa0002",
                12,
                0,
                &["bw_mem", "lat_mem_rd", "lat_syscall", "stream"],
            ),
            row("aaaa0003", 1, 1, &["lat_syscall", "tcp_rr"]),
        ];
        let shown: Vec<String> = rows.iter().map(what_measured).collect();
        assert_eq!(shown[0], "1 curve: tcp_rr");
        assert_eq!(
            shown[1],
            "12 measurements: bw_mem, lat_mem_rd, lat_syscall +1 more"
        );
        assert_eq!(shown[2], "1 measurement, 1 curve: lat_syscall, tcp_rr");
        let table = runs(&rows);
        assert!(
            table.contains("measured") && table.contains("1 curve: tcp_rr"),
            "{table}"
        );
    }

    /// Curves as the terminal shows them, in a layout that does not depend
    /// on the terminal's width.
    fn shown(curves: &[touchstone_results::curve::Curve]) -> String {
        let analysed: Vec<Analysed> = curves.iter().map(Analysed::new).collect();
        render_curves(&analysed, false)
    }
    use crate::testdata::{snapshot, tcp_rr};
    use touchstone_results::{checks, Interval, Summary, Unit};

    /// A latency measurement of `samples`, `preempted` of its intervals
    /// preempted, with the warnings the harness gives it.
    fn measured(name: &str, stat: Statistic, samples: &[f64], preempted: usize) -> Measurement {
        let summary = Summary::of(samples).unwrap();
        let mut warnings: Vec<_> = checks::check_ci(&summary).into_iter().collect();
        warnings.extend(checks::check_few_repetitions(&summary));
        warnings.extend(checks::check_preempted(preempted, samples.len()));
        Measurement {
            statistic: stat,
            intervals: Interval::synthetic(samples.len(), preempted),
            warnings,
            ..Measurement::synthetic(name, "mem", Unit::Ns, samples.to_vec())
        }
    }

    /// The issue's `-r 3`: the interval printed covered 75 %, under a
    /// heading that said 95 %.
    #[test]
    fn three_repetitions_print_the_level_reached() {
        let m = measured(
            "lat_syscall/null",
            Statistic::Median,
            &[100.0, 101.0, 102.0],
            0,
        );
        let [fig, ci, rel] = figure_cells(&m);
        assert_eq!(fig, "101.0 ns");
        assert_eq!(ci, "100.0 … 102.0 (75 %)");
        assert_eq!(rel, "±1.0 %");
        let seven = [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0];
        let [_, ci, _] = figure_cells(&measured("x", Statistic::Median, &seven, 0));
        assert!(!ci.contains('('), "at 98 % no level is needed: {ci}");
    }

    /// A cache level not detected was printed "0 ns".
    #[test]
    fn an_invalid_measurement_prints_no_number() {
        let mut m = measured(
            "lat_mem_rd/level:L3/stride:rand",
            Statistic::Median,
            &[0.0],
            0,
        );
        m.invalid = Some("not detected: no step".into());
        assert_eq!(
            figure_cells(&m),
            ["no figure".to_string(), "—".into(), String::new()]
        );
    }

    #[test]
    fn one_repetition_prints_no_interval() {
        let m = measured("lat_syscall/null", Statistic::Median, &[100.0], 0);
        assert_eq!(figure_cells(&m)[1..], ["—".to_string(), String::new()]);
    }

    #[test]
    fn long_names_break_only_after_a_slash() {
        assert_eq!(
            wrap_name("lat_mem_rd/stride:16/size:512", 40),
            "lat_mem_rd/stride:16/size:512"
        );
        assert_eq!(
            wrap_name("lat_usleep/clock_nanosleep/time:100us", 20),
            "lat_usleep/\nclock_nanosleep/\ntime:100us"
        );
        assert_eq!(
            wrap_name("a_very_long_single_token", 5),
            "a_very_long_single_token"
        );
    }

    #[test]
    fn a_min_headline_does_not_borrow_the_medians_interval() {
        let samples = [1.0, 1.1, 1.3, 1.6, 2.0, 2.5, 3.0];
        let m = measured("lat_ops/int64_add", Statistic::Min, &samples, 0);
        let [fig, ci, rel] = figure_cells(&m);
        assert_eq!(fig, "1.000 ns (min)");
        assert_eq!((ci.as_str(), rel.as_str()), ("—", ""));
        let text = measurements(&[m]);
        assert!(
            !text.contains("ci-wide,") && !text.contains("┆ ci-wide"),
            "{text}"
        );
    }

    /// The summary's '!' follows the same rule as the notes column: one
    /// preempted interval of seven does not mark a median, a wide interval does.
    #[test]
    fn the_summary_marks_only_figures_a_warning_can_move() {
        let tight = [100.0, 100.1, 100.2, 100.3, 100.4, 100.5, 100.6];
        let wide = [60.0, 80.0, 90.0, 100.0, 110.0, 120.0, 140.0];
        let mut run = crate::testdata::run("r1", "h", vec![]);
        run.measurements = vec![
            measured("lat_mem_rd/size:1m", Statistic::Median, &tight, 1),
            measured("lat_mem_rd/size:2m", Statistic::Median, &wide, 0),
        ];
        let runs = [run];
        let m = touchstone_analysis::table::Matrix::build(&runs).unwrap();
        let sheets = crate::sheet::summary(&m, &[0]);
        let row = &sheets[0].rows[0];
        let marked: Vec<bool> = row[2..].iter().map(|c| c.ends_with(" !")).collect();
        assert_eq!(marked, [false, true], "{row:?}");
    }

    /// The warning flood: "preempted" on every memory-latency
    /// point, one of seven intervals, each a sentence with its remedy.
    #[test]
    fn a_flood_of_one_kind_is_one_line_and_marks_no_figure() {
        let tight = [100.0, 100.1, 100.2, 100.3, 100.4, 100.5, 100.6];
        let ms: Vec<Measurement> = (0..37)
            .map(|i| {
                measured(
                    &format!("lat_mem_rd/size:{i}k"),
                    Statistic::Median,
                    &tight,
                    1,
                )
            })
            .collect();
        let text = measurements(&ms);
        let warning_lines: Vec<&str> = text.lines().filter(|l| l.contains("preempted")).collect();
        assert_eq!(warning_lines.len(), 1, "{text}");
        assert!(
            warning_lines[0]
                .starts_with("  preempted: 37 measurements lost 1 of 7 intervals to other work — "),
            "{}",
            warning_lines[0]
        );
        assert!(
            !text.contains("\u{1b}["),
            "no colour into a string for a pipe"
        );
    }

    #[test]
    fn curve_tables_snapshot() {
        snapshot("curves_terminal.txt", &shown(&[tcp_rr()]));
    }

    #[test]
    fn a_curve_with_bytes_per_operation_reads_in_megabytes_per_second() {
        let mut c = tcp_rr();
        c.workload = "fscache".into();
        c.operation = "read".into();
        // 4096-byte reads: 25 000 reads/s at 1 CPU, load 1 = 102.4 MB/s.
        c.bytes_per_op = Some(4096);
        let text = shown(&[c]);
        assert!(
            text.contains("MB/s (4096-byte reads) against load"),
            "{text}"
        );
        assert!(text.contains("throughput (MB/s)"), "{text}");
        assert!(text.contains("102.4 ± "), "{text}");
        // The peak (105 000 reads/s at 2 CPUs) in the same unit.
        assert!(text.contains("peak 430.1 ± "), "{text}");
        assert!(!text.contains("ops/s"), "{text}");
    }

    #[test]
    fn a_curve_that_counts_bytes_shows_the_bit_rate_per_connection() {
        let mut c = tcp_rr();
        assert!(!shown(&[c.clone()]).contains("Mbit/s per conn"));
        c.workload = "web".into();
        for p in &mut c.points {
            // 1.25 MB/s over the point's connections.
            p.bytes_per_s = Some(1.25e6 * f64::from(p.load));
        }
        let text = shown(&[c]);
        assert!(text.contains("Mbit/s per conn"), "{text}");
        // 1.25 MB/s = 10 Mbit/s on every connection at every load.
        let rows = text.lines().filter(|l| l.contains(" 10.00 ┆")).count();
        assert_eq!(rows, 8, "{text}");
    }

    #[test]
    fn a_curve_and_its_baseline_are_shown_side_by_side() {
        use crate::testdata::fscache;
        let mut other = tcp_rr();
        other.params.insert("mode".into(), "read".into());
        // Read and its memcpy baseline (twice as fast) at the same buffer;
        // tcp_rr with a `mode` of its own is no partner of theirs.
        let text = shown(&[fscache("read", 1.0), other, fscache("memcpy", 2.0)]);
        let at = text
            .find("fscache buffer:4k — read and memcpy side by side")
            .unwrap_or_else(|| panic!("{text}"));
        let table = &text[at..];
        assert!(table.contains("read ÷ memcpy"), "{table}");
        // Every one of the 8 points: read is half of memcpy.
        assert_eq!(table.matches(" 0.5000 ").count(), 8, "{table}");
        assert_eq!(text.matches("side by side").count(), 1, "{text}");
    }

    #[test]
    fn curve_tables_say_what_is_absent_and_why() {
        let mut c = tcp_rr();
        c.points.retain(|p| p.cpus == 2 && p.load <= 2);
        c.unmeasured_cpus.clear();
        let text = shown(&[c]);
        assert!(
            text.contains("knee: not detected — 2 point(s) up to the peak, Kneedle needs 3"),
            "{text}"
        );
        assert!(
            text.contains("USL over load: not fitted — the USL needs at least 3 distinct loads"),
            "{text}"
        );
        assert!(text.contains("crossover: none"));
        assert!(
            !text.contains("S(k)"),
            "one CPU count: no scalability column"
        );
        assert!(
            !text.contains("did not converge"),
            "no flag without a flagged point"
        );
    }
}
