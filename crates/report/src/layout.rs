//! The default layout of `report` and `compare` on a terminal and in
//! Markdown: one sheet per benchmark family (`families`), the swept
//! parameter down the rows, runs side by side in the columns, each sheet
//! as wide as a terminal. When the runs do not fit, they wrap into
//! further column groups, each repeating the row-identifying columns.
//! (`--wide` keeps the older sheets of `sheet`: runs as rows.)

use touchstone_analysis::compare::{Comparison, Verdict};
use touchstone_analysis::table::{run_title, short_id, Matrix};
use touchstone_results::groups::title;
use touchstone_results::units::Scale;
use touchstone_results::Unit;

use crate::families::{families, Family};
use crate::sheet::{ratio_text, Sheet, WARNING_MARK};

/// Width assumed when the output is not a terminal.
pub const DEFAULT_WIDTH: usize = 120;

/// How a run is named in a column heading: its label (else host) on the
/// first line, its short id on the second, so two runs of one host stay
/// apart and the column stays narrow. When that first line would be the
/// same for several of `runs` (a label shared by a whole farm), it is the
/// host and label instead.
pub fn run_column(m: &Matrix, runs: &[usize], r: usize) -> String {
    let at = runs.iter().position(|&k| k == r);
    match at {
        Some(i) => run_columns(m, runs).swap_remove(i),
        None => run_columns(m, &[r]).swap_remove(0),
    }
}

/// `run_column` of each of `runs`, in their order (once for all: a farm's
/// thousand runs are not compared with each other a thousand times).
pub fn run_columns(m: &Matrix, runs: &[usize]) -> Vec<String> {
    let short = |k: usize| {
        let run = m.runs[k];
        run.label.as_deref().unwrap_or(&run.host.hostname)
    };
    let mut count: std::collections::HashMap<&str, usize> = Default::default();
    for &k in runs {
        *count.entry(short(k)).or_default() += 1;
    }
    runs.iter()
        .map(|&r| {
            let name = short(r);
            let first = if count[name] > 1 && m.runs[r].label.is_some() {
                run_title(m.runs[r])
            } else {
                name.to_string()
            };
            format!("{first}\n{}", short_id(&m.runs[r].id))
        })
        .collect()
}

/// The lines that name the runs in full, above the tables: each with the
/// core clock it measured (`mhz`) where it has one, and how far that lies
/// from the first run's. A figure bound to the clock moves with it,
/// whatever else changed: a guest's host boosts less while its other
/// tenants are busy (4,486 against 4,235 MHz in two quick runs of the
/// development guest five minutes apart, and every CPU-bound figure of the
/// second 3-9 % slower).
pub fn run_legend(m: &Matrix, order: &[usize]) -> String {
    let mhz = m
        .columns
        .iter()
        .position(|c| c.name == "mhz" && c.parallel == 1);
    let clock = |r: usize| mhz.and_then(|c| m.cell(r, c)?.valid_value());
    let first = order.first().and_then(|&r| clock(r));
    let mut out = String::from("Runs:\n");
    for (i, &r) in order.iter().enumerate() {
        let run = m.runs[r];
        let measured = match (clock(r), first) {
            (Some(c), Some(f)) if i > 0 => {
                format!(", clock {c:.0} MHz ({:+.1} %)", (c / f - 1.0) * 100.0)
            }
            (Some(c), _) => format!(", clock {c:.0} MHz"),
            _ => String::new(),
        };
        out.push_str(&format!(
            "  {}  {}, started {}{measured}\n",
            short_id(&run.id),
            run_title(run),
            run.started_at.format("%Y-%m-%d %H:%M UTC")
        ));
    }
    out
}

/// The display width of a cell: its longest line.
fn text_width(s: &str) -> usize {
    s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// A column's width in a comfy-table with padding and one border.
fn column_width(header: &str, cells: impl Iterator<Item = usize>) -> usize {
    cells.fold(text_width(header), usize::max) + 3
}

/// Split `blocks` (each a run's columns, with its width) into groups that,
/// next to the key columns, fit in `max`; every group holds at least one.
fn pack(key_width: usize, blocks: &[usize], max: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut used) = (0, key_width + 1);
    for (i, &w) in blocks.iter().enumerate() {
        if i > start && used + w > max {
            out.push(start..i);
            start = i;
            used = key_width + 1;
        }
        used += w;
    }
    if start < blocks.len() || out.is_empty() {
        out.push(start..blocks.len());
    }
    out
}

/// The columns every sheet of a family starts with: the case (when the
/// family has more than one), the swept value (when it sweeps), the unit.
/// Repeated cases and units are blanked, so each case reads as a block.
struct Keys {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// The display scale of each row (one per case and unit).
    scales: Vec<Scale>,
}

fn keys(m: &Matrix, f: &Family, runs: &[usize]) -> Keys {
    let with_case = f.rows.iter().any(|r| !r.case.is_empty());
    let mut header = Vec::new();
    if with_case {
        header.push("case".to_string());
    }
    if let Some(s) = &f.sweep {
        header.push(s.clone());
    }
    header.push("unit".to_string());
    // One scale per case and unit, from every figure of the case.
    let mut by_case: std::collections::HashMap<(&str, Unit), Vec<f64>> = Default::default();
    for o in &f.rows {
        let unit = m.columns[o.column].unit;
        by_case.entry((o.case.as_str(), unit)).or_default().extend(
            runs.iter()
                .filter_map(|&k| m.cell(k, o.column))
                .map(|x| x.value()),
        );
    }
    let mut scale_of: std::collections::HashMap<(&str, Unit), Scale> = Default::default();
    let scales: Vec<Scale> = f
        .rows
        .iter()
        .map(|r| {
            let key = (r.case.as_str(), m.columns[r.column].unit);
            *scale_of
                .entry(key)
                .or_insert_with(|| Scale::for_column(key.1, &by_case[&key]))
        })
        .collect();
    let mut rows = Vec::new();
    for (i, r) in f.rows.iter().enumerate() {
        let first = i == 0 || f.rows[i - 1].case != r.case;
        let mut row = Vec::new();
        if with_case {
            row.push(if first { r.case.clone() } else { String::new() });
        }
        if f.sweep.is_some() {
            row.push(r.value.clone());
        }
        let same_unit = !first && scales[i - 1].label == scales[i].label;
        row.push(if same_unit {
            String::new()
        } else {
            scales[i].label.to_string()
        });
        rows.push(row);
    }
    Keys {
        header,
        rows,
        scales,
    }
}

/// One column of a family's sheet after the keys.
struct Column {
    header: String,
    /// Right-aligned figures (false for verdicts).
    numeric: bool,
    cells: Vec<String>,
}

fn column(header: String, numeric: bool, cells: Vec<String>) -> Column {
    Column {
        header,
        numeric,
        cells,
    }
}

fn figure(m: &Matrix, run: usize, col: usize, s: &Scale) -> String {
    match m.cell(run, col) {
        None => "-".to_string(),
        // Marked only by a warning that can move the figure.
        Some(x) if x.marked => format!("{}{WARNING_MARK}", s.format(x.value())),
        Some(x) => s.format(x.value()),
    }
}

/// Assemble the sheets of one family: the key columns, then the runs'
/// column blocks (`blocks[k]` = headers and per-row cells of run k),
/// wrapped to `width`.
fn family_sheets(
    f: &Family,
    keys: Keys,
    fixed: Vec<Column>,
    blocks: Vec<Vec<Column>>,
    width: usize,
) -> Vec<Sheet> {
    let key_width: usize = keys
        .header
        .iter()
        .enumerate()
        .map(|(c, h)| column_width(h, keys.rows.iter().map(|r| text_width(&r[c]))))
        .chain(
            fixed
                .iter()
                .map(|c| column_width(&c.header, c.cells.iter().map(|x| text_width(x)))),
        )
        .sum();
    let block_widths: Vec<usize> = blocks
        .iter()
        .map(|b| {
            b.iter()
                .map(|c| column_width(&c.header, c.cells.iter().map(|x| text_width(x))))
                .sum()
        })
        .collect();
    let groups = pack(key_width, &block_widths, width);
    let n_keys = keys.header.len() + fixed.len();
    let base_title = if f.name.is_empty() {
        title(&f.group).to_string()
    } else {
        format!("{} · {}", title(&f.group), f.name)
    };
    groups
        .iter()
        .map(|g| {
            let mut header = keys.header.clone();
            let mut numeric: Vec<bool> = keys.header.iter().map(|_| false).collect();
            for c in fixed.iter().chain(blocks[g.clone()].iter().flatten()) {
                header.push(c.header.clone());
                numeric.push(c.numeric);
            }
            let rows = (0..f.rows.len())
                .map(|i| {
                    let mut row = keys.rows[i].clone();
                    row.extend(
                        fixed
                            .iter()
                            .chain(blocks[g.clone()].iter().flatten())
                            .map(|c| c.cells[i].clone()),
                    );
                    row
                })
                .collect();
            let part = if groups.len() > 1 {
                format!(
                    " (runs {}–{} of {})",
                    g.start + 1 + usize::from(!fixed.is_empty()),
                    g.end + usize::from(!fixed.is_empty()),
                    blocks.len() + usize::from(!fixed.is_empty())
                )
            } else {
                String::new()
            };
            Sheet {
                title: format!("{base_title}{part}"),
                group: f.group.clone(),
                header,
                numeric,
                key_columns: n_keys,
                rows,
            }
        })
        .collect()
}

/// The summary: per family, one row per measurement (swept value down the
/// rows), one column per run in `order`, medians in one scale per case.
pub fn summary(m: &Matrix, order: &[usize], width: usize) -> Vec<Sheet> {
    summaries(m, order, width).flatten().collect()
}

/// `summary`, one family's sheets at a time: a farm's thousand runs are
/// drawn a family at a time, never all their cells at once.
pub fn summaries<'m>(
    m: &'m Matrix,
    order: &'m [usize],
    width: usize,
) -> impl Iterator<Item = Vec<Sheet>> + 'm {
    let heads = run_columns(m, order);
    families(m).into_iter().map(move |f| {
        let k = keys(m, &f, order);
        let blocks = order
            .iter()
            .zip(&heads)
            .map(|(&r, head)| {
                let cells = f
                    .rows
                    .iter()
                    .zip(&k.scales)
                    .map(|(row, s)| figure(m, r, row.column, s))
                    .collect();
                vec![column(head.clone(), true, cells)]
            })
            .collect();
        family_sheets(&f, k, vec![], blocks, width)
    })
}

fn verdict_text(cell: &touchstone_analysis::compare::Cell) -> String {
    match cell.verdict {
        Verdict::Unranked if cell.ratio.is_some_and(|x| x.differs()) => "differs".into(),
        v => v.mark().to_string(),
    }
}

/// The comparison: per family, one row per measurement, the base run's
/// figure, then for each other run its figure, the ratio to the base with
/// its interval, and the verdict.
pub fn comparison(m: &Matrix, c: &Comparison, width: usize) -> Vec<Sheet> {
    let mut runs = vec![c.base];
    runs.extend(&c.others);
    let by_column: std::collections::BTreeMap<usize, &touchstone_analysis::compare::Row> =
        c.rows.iter().map(|r| (r.column, r)).collect();
    let heads = run_columns(m, &runs);
    families(m)
        .iter()
        .flat_map(|f| {
            let k = keys(m, f, &runs);
            let base_cells: Vec<String> = f
                .rows
                .iter()
                .zip(&k.scales)
                .map(|(row, s)| match m.cell(c.base, row.column) {
                    None => "missing".to_string(),
                    Some(_) => figure(m, c.base, row.column, s),
                })
                .collect();
            let fixed = vec![column(format!("base: {}", heads[0]), true, base_cells)];
            let blocks = c
                .others
                .iter()
                .enumerate()
                .map(|(i, &o)| {
                    let (mut values, mut ratios, mut verdicts) = (vec![], vec![], vec![]);
                    for (row, s) in f.rows.iter().zip(&k.scales) {
                        let cell = &by_column[&row.column].cells[i];
                        values.push(figure(m, o, row.column, s));
                        ratios.push(cell.ratio.as_ref().map_or("-".into(), ratio_text));
                        verdicts.push(verdict_text(cell));
                    }
                    vec![
                        column(heads[1 + i].clone(), true, values),
                        column("ratio [CI]".to_string(), true, ratios),
                        column(String::new(), false, verdicts),
                    ]
                })
                .collect();
            family_sheets(f, k, fixed, blocks, width)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{measurement, run_with};
    use touchstone_analysis::compare::compare;
    use touchstone_results::Unit;

    #[test]
    fn a_label_shared_by_several_runs_names_their_hosts_too() {
        let mut runs = memory_runs(3);
        runs[0].label = Some("farm".into());
        runs[1].label = Some("farm".into());
        let m = Matrix::build(&runs).unwrap();
        let heads: Vec<String> = (0..3).map(|r| run_column(&m, &[0, 1, 2], r)).collect();
        assert_eq!(
            heads,
            [
                "host0 (farm)\n0000aaaa",
                "host1 (farm)\n0001aaaa",
                "node-2\n0002aaaa"
            ]
        );
        // Shown on its own, the label alone is enough.
        assert_eq!(run_column(&m, &[0], 0), "farm\n0000aaaa");
    }

    #[test]
    fn packing_keeps_at_least_one_block_per_group() {
        assert_eq!(pack(20, &[30, 30, 30], 100), [0..2, 2..3]);
        let one = pack(20, &[200], 100);
        assert_eq!((one.len(), one[0].clone()), (1, 0..1));
        assert_eq!(pack(20, &[], 100).len(), 1);
    }

    /// A lat_mem_rd sweep of eight sizes at two strides on `runs` machines.
    fn memory_runs(runs: usize) -> Vec<touchstone_results::Run> {
        let sizes = ["4k", "16k", "64k", "256k", "1m", "4m", "16m", "64m"];
        (0..runs)
            .map(|k| {
                let mut ms = vec![];
                for stride in ["64", "rand_page"] {
                    for (i, s) in sizes.iter().enumerate() {
                        ms.push(measurement(
                            &format!("lat_mem_rd/stride:{stride}/size:{s}"),
                            "mem_lat",
                            Unit::Ns,
                            1,
                            (1.0 + i as f64 * i as f64) * (1.0 + k as f64 * 0.1),
                        ));
                    }
                }
                ms.push(measurement(
                    "lat_syscall/null",
                    "proc",
                    Unit::Ns,
                    1,
                    90.0 + k as f64,
                ));
                let mut r = run_with(&format!("{k:04}aaaa"), &format!("host{k}"), ms);
                r.label = Some(format!("node-{k}"));
                r
            })
            .collect()
    }

    #[test]
    fn one_sweep_is_one_table_with_sizes_down_the_rows() {
        let runs = memory_runs(2);
        let m = Matrix::build(&runs).unwrap();
        let sheets = summary(&m, &[0, 1], DEFAULT_WIDTH);
        let titles: Vec<&str> = sheets.iter().map(|s| s.title.as_str()).collect();
        assert_eq!(
            titles,
            ["Processor & processes", "Memory latency · lat_mem_rd"]
        );
        let mem = &sheets[1];
        assert_eq!(
            mem.header,
            [
                "case",
                "size",
                "unit",
                "node-0\n0000aaaa",
                "node-1\n0001aaaa"
            ]
        );
        assert_eq!(mem.rows.len(), 16);
        assert_eq!(mem.rows[0], ["stride:64", "4k", "ns", "1.000", "1.100"]);
        assert_eq!(mem.rows[1], ["", "16k", "", "2.000", "2.200"]);
        assert_eq!(mem.rows[8][0], "stride:rand_page");
        // lat_syscall has one case and no sweep.
        assert_eq!(sheets[0].header[..2], ["case", "unit"]);
        assert_eq!(
            sheets[0].rows,
            [["lat_syscall/null", "ns", "90.00", "91.00"]]
        );
    }

    #[test]
    fn many_runs_wrap_into_column_groups_that_fit() {
        let runs = memory_runs(14);
        let m = Matrix::build(&runs).unwrap();
        let order: Vec<usize> = (0..14).collect();
        let sheets = summary(&m, &order, 100);
        let mem: Vec<&Sheet> = sheets
            .iter()
            .filter(|s| s.title.contains("lat_mem_rd"))
            .collect();
        assert!(mem.len() >= 2, "{:?}", mem.len());
        assert!(mem[0]
            .title
            .ends_with(&format!("(runs 1–{} of 14)", mem[0].header.len() - 3)));
        // Every group repeats the keys and the groups cover the runs once.
        let total: usize = mem.iter().map(|s| s.header.len() - 3).sum();
        assert_eq!(total, 14);
        for s in &mem {
            assert_eq!(s.header[..3], ["case", "size", "unit"]);
            let text = crate::tables::render_fitted(&[(*s).clone()]);
            let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
            assert!(widest <= 100, "{widest}:\n{text}");
        }
    }

    /// Two runs whose clocks differ: the legend gives each its measured
    /// clock and the second's distance from the first.
    #[test]
    fn the_legend_names_each_runs_clock_and_how_far_it_moved() {
        let with_clock = |id: &str, mhz: f64| {
            run_with(
                id,
                "vm",
                vec![
                    measurement("mhz", "cpu", Unit::Mhz, 1, mhz),
                    measurement("lat_syscall/null", "proc", Unit::Ns, 1, 110.0),
                ],
            )
        };
        let runs = [with_clock("a", 4486.0), with_clock("b", 4235.0)];
        let m = Matrix::build(&runs).unwrap();
        let legend = run_legend(&m, &[0, 1]);
        let lines: Vec<&str> = legend.lines().collect();
        assert!(lines[1].ends_with(", clock 4486 MHz"), "{legend}");
        assert!(lines[2].ends_with(", clock 4235 MHz (-5.6 %)"), "{legend}");
        // Runs without the figure: no clock, as before.
        let plain = [run_with(
            "c",
            "vm",
            vec![measurement("lat_syscall/null", "proc", Unit::Ns, 1, 110.0)],
        )];
        let m = Matrix::build(&plain).unwrap();
        assert!(!run_legend(&m, &[0]).contains("clock"));
    }

    #[test]
    fn summary_and_comparison_snapshots() {
        let runs = memory_runs(2);
        let m = Matrix::build(&runs).unwrap();
        let text =
            run_legend(&m, &[0, 1]) + &crate::tables::render_fitted(&summary(&m, &[0, 1], 100));
        crate::testdata::snapshot("family_summary_terminal.txt", &text);
        let c = compare(&m, 0, &[1]);
        let text = crate::tables::render_fitted(&comparison(&m, &c, 100));
        crate::testdata::snapshot("family_comparison_terminal.txt", &text);
    }

    #[test]
    fn comparison_rows_carry_the_base_ratio_and_verdict() {
        let runs = memory_runs(2);
        let m = Matrix::build(&runs).unwrap();
        let c = compare(&m, 0, &[1]);
        let sheets = comparison(&m, &c, DEFAULT_WIDTH);
        let mem = sheets
            .iter()
            .find(|s| s.title.contains("lat_mem_rd"))
            .unwrap();
        assert_eq!(
            mem.header,
            [
                "case",
                "size",
                "unit",
                "base: node-0\n0000aaaa",
                "node-1\n0001aaaa",
                "ratio [CI]",
                ""
            ]
        );
        let row = &mem.rows[2];
        assert_eq!(row[..5], ["", "64k", "", "5.000", "5.500"]);
        assert!(row[5].starts_with("1.100 ["), "{row:?}");
        assert_eq!(row[6], "slower");
    }
}
