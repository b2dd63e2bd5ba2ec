//! Sheets on a terminal: one comfy-table per sheet, wide sheets split into
//! several tables that each repeat the row-identifying columns.

use comfy_table::{
    presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Color, ContentArrangement, Table,
};

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
                .set_header(cols.iter().map(|&c| Cell::new(&s.header[c])));
            for row in &s.rows {
                t.add_row(cols.iter().map(|&c| {
                    let mut cell = Cell::new(&row[c]);
                    if let (true, Some(colour)) = (coloured, verdict_colour(&row[c])) {
                        cell = cell.fg(colour);
                    }
                    if s.numeric[c] {
                        cell.set_alignment(CellAlignment::Right)
                    } else {
                        cell
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_faster_and_slower_are_coloured() {
        assert_eq!(verdict_colour("faster"), Some(Color::Green));
        assert_eq!(verdict_colour("slower"), Some(Color::Red));
        for plain in ["~", "", "no base", "missing", "differs", "1.02"] {
            assert_eq!(verdict_colour(plain), None, "{plain}");
        }
    }
}
