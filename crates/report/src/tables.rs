//! Sheets on a terminal: one comfy-table per sheet, wide sheets split into
//! several tables that each repeat the row-identifying columns.

use comfy_table::{
    presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Color, ContentArrangement, Table,
};

use crate::sanitize::cell;

use crate::colour::{self, Stream};
use crate::sheet::Sheet;

/// A comparison's verdict in colour (comfy-table styles a cell only on a
/// terminal): green when faster, red when slower.
pub fn verdict_colour(text: &str) -> Option<Color> {
    match text {
        "faster" => Some(Color::Green),
        "slower" => Some(Color::Red),
        _ => None,
    }
}

/// At most this many value columns per terminal table.
pub const MAX_VALUE_COLUMNS: usize = 6;

pub fn render(sheets: &[Sheet]) -> String {
    let coloured = colour::enabled(Stream::Stdout);
    let mut out = String::new();
    for s in sheets {
        let k = s.key_columns;
        let values = s.header.len() - k;
        let chunks = values.div_ceil(MAX_VALUE_COLUMNS).max(1);
        for chunk in 0..chunks {
            let cols: Vec<usize> = (0..k)
                .chain(
                    k + chunk * MAX_VALUE_COLUMNS
                        ..(k + (chunk + 1) * MAX_VALUE_COLUMNS).min(s.header.len()),
                )
                .collect();
            let mut t = Table::new();
            t.load_preset(UTF8_FULL_CONDENSED)
                .set_content_arrangement(ContentArrangement::Dynamic)
                .set_header(cols.iter().map(|&c| cell(&s.header[c])));
            fit_terminal(&mut t);
            for row in &s.rows {
                t.add_row(cols.iter().map(|&c| {
                    let cell = sheet_cell(&row[c], s.numeric[c]);
                    match (coloured, verdict_colour(&row[c])) {
                        (true, Some(colour)) => cell.fg(colour),
                        _ => cell,
                    }
                }));
            }
            let part = if chunks > 1 {
                format!(" ({}/{chunks})", chunk + 1)
            } else {
                String::new()
            };
            out.push_str(&format!("{}{part}\n{t}\n", s.title));
        }
    }
    out
}

/// Sheets already cut to the terminal's width (`layout`): one table each,
/// laid out exactly as given (no wrapping inside cells), so the widths
/// `layout` planned are the widths printed.
pub fn render_fitted(sheets: &[Sheet]) -> String {
    let mut out = String::new();
    for s in sheets {
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(s.header.iter().map(cell));
        add_rows(&mut t, s);
        out.push_str(&format!("{}\n{t}\n", s.title));
    }
    out
}

/// A sheet's cell, right-aligned when its column holds numbers.
fn sheet_cell(text: &str, numeric: bool) -> Cell {
    let c = cell(text);
    if numeric {
        c.set_alignment(CellAlignment::Right)
    } else {
        c
    }
}

/// Every row of a sheet, numbers right-aligned.
pub fn add_rows(t: &mut Table, s: &Sheet) {
    for row in &s.rows {
        t.add_row(
            row.iter()
                .zip(&s.numeric)
                .map(|(c, &num)| sheet_cell(c, num)),
        );
    }
}

/// The width of the terminal on standard output, if it is one (at least
/// 60 columns, so a tiny window still gets a usable table).
pub fn terminal_width() -> Option<usize> {
    terminal_columns().map(|w| usize::from(w).max(60))
}

/// The columns of the terminal on standard output, if it is one. A
/// terminal that reports 0 columns (a serial console, some CI runners'
/// pseudo-terminals) says nothing about its width: it is taken as 80
/// wide, the width a terminal traditionally has.
pub fn terminal_columns() -> Option<u16> {
    known_columns(Table::new().width())
}

fn known_columns(reported: Option<u16>) -> Option<u16> {
    reported.map(|w| if w == 0 { 80 } else { w })
}

/// A table laid out dynamically fits the terminal's known columns (by
/// itself comfy-table would take a reported 0 as the width and put one
/// character in each column); off a terminal it is left unbounded.
pub fn fit_terminal(t: &mut Table) {
    if let Some(w) = terminal_columns() {
        t.set_width(w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_of_no_columns_is_taken_as_80_wide() {
        assert_eq!(known_columns(Some(0)), Some(80));
        assert_eq!(known_columns(Some(132)), Some(132));
        assert_eq!(known_columns(None), None);
    }

    #[test]
    fn only_faster_and_slower_are_coloured() {
        assert_eq!(verdict_colour("faster"), Some(Color::Green));
        assert_eq!(verdict_colour("slower"), Some(Color::Red));
        for plain in ["~", "", "no base", "missing", "differs", "1.02"] {
            assert_eq!(verdict_colour(plain), None, "{plain}");
        }
    }
}
