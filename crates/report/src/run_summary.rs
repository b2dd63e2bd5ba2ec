//! The few lines that close `touchstone run`, in the spirit of lmbench's
//! summary: each family's headline figure, packed by report group into
//! lines that fit the terminal (an item never breaks), the warnings
//! counted by kind, and where the full tables are. A default run is about
//! 1,000 measurements; this fits one screen.

use std::collections::BTreeMap;

use touchstone_results::groups::{title, GROUPS};
use touchstone_results::warnings::moves_headline;
use touchstone_results::{Measurement, Run};

use crate::terminal::figure_cells;

/// The measurements that stand for a family: the levels its sweep found
/// (`lat_mem_rd`'s L1 … memory, `tlb`'s levels: figures derived from the
/// sweep, with a `level` parameter) where it has any, else its first
/// measurement (the first case of its list).
fn headlines<'a>(family: &[&'a Measurement]) -> Vec<&'a Measurement> {
    let levels: Vec<&Measurement> = family
        .iter()
        .copied()
        .filter(|m| m.intervals.is_empty() && m.params.contains_key("level"))
        .collect();
    match levels.is_empty() {
        true => family.iter().copied().take(1).collect(),
        false => levels,
    }
}

/// One item: the name and its figure, `*` where a warning can move it.
fn item(m: &Measurement) -> String {
    let [figure, ..] = figure_cells(m);
    let mark = match m.warnings.iter().any(|w| moves_headline(w, m)) {
        true => "*",
        false => "",
    };
    format!("{} {figure}{mark}", m.name)
}

/// `items` after `lead`, two spaces apart, wrapped into lines of at most
/// `width` columns between items; continuation lines are indented. An
/// item wider than a line gets a line of its own (never split).
fn pack(lead: &str, items: &[String], width: usize) -> String {
    const INDENT: &str = "    ";
    let mut out = String::new();
    let mut line = lead.to_string();
    let mut empty = true;
    for it in items {
        let len = |s: &str| s.chars().count();
        if !empty && len(&line) + 2 + len(it) > width {
            out.push_str(line.trim_end());
            out.push('\n');
            line = format!("{INDENT}{it}");
        } else {
            if !empty {
                line.push_str("  ");
            }
            line.push_str(it);
        }
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

/// Each line of `text` wrapped between words to at most `width` columns,
/// its continuation lines indented two spaces past its own indent (the
/// run's header and notes on a terminal: the terminal would break its
/// words). Table lines are left as they are.
pub fn fit_lines(text: &str, width: usize) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        // A table's lines are laid out already (and would not survive).
        let table = line.starts_with(['│', '┌', '└', '╞', '├']);
        if words.is_empty() || table || line.chars().count() <= width {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let lead = " ".repeat(indent);
        let mut current = format!("{lead}{}", words[0]);
        for w in &words[1..] {
            if current.chars().count() + 1 + w.chars().count() > width {
                out.push_str(&current);
                out.push('\n');
                current = format!("{lead}  {w}");
            } else {
                current.push(' ');
                current.push_str(w);
            }
        }
        out.push_str(&current);
        out.push('\n');
    }
    out
}

/// The summary of `run` for a terminal `width` columns wide. `tables_shown`:
/// whether the full tables were printed above (else it says how to see them).
pub fn run_summary(run: &Run, width: usize, tables_shown: bool) -> String {
    let ms = &run.measurements;
    let mut out = String::new();
    let families: Vec<&str> = {
        let mut seen = Vec::new();
        for m in ms {
            if !seen.contains(&m.benchmark.as_str()) {
                seen.push(m.benchmark.as_str());
            }
        }
        seen
    };
    if !ms.is_empty() {
        out.push_str(&format!(
            "Summary: {} measurement(s) of {} famil{}, the headline of each \
             (* = a warning can move the figure)\n",
            ms.len(),
            families.len(),
            if families.len() == 1 { "y" } else { "ies" }
        ));
    }
    let mut order: Vec<&str> = GROUPS.iter().map(|g| g.name).collect();
    for m in ms {
        if !order.contains(&m.group.as_str()) {
            order.push(&m.group);
        }
    }
    for g in order {
        let items: Vec<String> = families
            .iter()
            .filter_map(|f| {
                let family: Vec<&Measurement> = ms
                    .iter()
                    .filter(|m| m.benchmark == *f && m.group == g)
                    .collect();
                (!family.is_empty()).then(|| headlines(&family))
            })
            .flatten()
            .map(item)
            .collect();
        if !items.is_empty() {
            out.push_str(&pack(&format!("{}:  ", title(g)), &items, width));
        }
    }
    if !run.curves.is_empty() {
        let names: Vec<String> = run.curves.iter().map(|c| c.workload.clone()).collect();
        out.push_str(&pack(
            "Load curves (tables above):  ",
            &names
                .iter()
                .enumerate()
                .filter(|(i, n)| !names[..*i].contains(n))
                .map(|(_, n)| n.clone())
                .collect::<Vec<_>>(),
            width,
        ));
    }
    // Each kind of warning with how many measurements carry it, most first.
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for m in ms {
        let mut codes: Vec<&str> = m.warnings.iter().map(|w| w.code.as_str()).collect();
        codes.dedup();
        for c in codes {
            *kinds.entry(c).or_default() += 1;
        }
    }
    if !kinds.is_empty() {
        let warned = ms.iter().filter(|m| !m.warnings.is_empty()).count();
        let mut kinds: Vec<(&str, usize)> = kinds.into_iter().collect();
        kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
        let items: Vec<String> = kinds.iter().map(|(c, n)| format!("{c} {n}")).collect();
        out.push_str(&pack(
            &format!("Warnings on {warned} of {} measurement(s):  ", ms.len()),
            &items,
            width,
        ));
    }
    if !ms.is_empty() {
        let id = &run.id;
        if !tables_shown {
            out.push_str(&format!(
                "Full tables: touchstone show {id} (or run with --tables)\n"
            ));
        }
        out.push_str(&format!("Every warning: touchstone show {id} --warnings\n"));
    }
    // The title and the closing lines wrap between words too.
    fit_lines(&out, width)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lines_wrap_between_words() {
        let line = format!("  warning: {}", "word ".repeat(30));
        let text = fit_lines(&format!("short\n{line}\n"), 40);
        assert!(text.starts_with("short\n  warning: word"), "{text}");
        for l in text.lines() {
            assert!(l.chars().count() <= 40, "{l}");
            assert!(
                l.trim_end().ends_with("word") || l == "short" || l.ends_with(':'),
                "{l}"
            );
        }
        assert_eq!(text.matches("word").count(), 30);
        assert!(
            text.lines().skip(2).all(|l| l.starts_with("    word")),
            "{text}"
        );
    }

    #[test]
    fn items_wrap_between_items_never_inside_one() {
        let items: Vec<String> = (0..12)
            .map(|i| format!("lat_usleep/clock_nanosleep/time:{i}us 66.76 µs"))
            .collect();
        let text = pack("Processor & processes:  ", &items, 80);
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "{line}");
        }
        // Every item is whole on some line.
        for it in &items {
            assert!(
                text.lines().any(|l| l.contains(it.as_str())),
                "{it}\n{text}"
            );
        }
        assert_eq!(text.lines().count(), 12, "{text}");
        // An item wider than the line stands alone, whole.
        let long = "x".repeat(100);
        let text = pack("a:  ", &["b".into(), long.clone(), "c".into()], 80);
        assert_eq!(text, format!("a:  b\n    {long}\n    c\n"));
    }
}
