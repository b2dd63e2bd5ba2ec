//! Text for a terminal, stripped of what a terminal would obey: every
//! string of a stored or imported run (labels, host names, names, warnings,
//! reasons) came from a file someone else may have written, and an escape
//! sequence in it could retitle or recolour the terminal, move the cursor
//! or hide what follows. One function, applied where text is laid out for
//! a terminal (`terminal`, `tables`) and where the command prints.
//!
//! Removed: C0 controls but newline and tab, DEL, C1 controls, whole ESC
//! sequences (CSI up to its final byte; OSC, DCS, SOS, PM and APC strings up
//! to their terminator or the end of the line, so that an unterminated one
//! cannot swallow the lines after it), and the Unicode bidirectional
//! controls, which reorder what is shown. Everything else is kept as is.

use std::borrow::Cow;

const ESC: char = '\u{1b}';
const BEL: char = '\u{7}';
/// C1 forms of CSI, OSC, DCS, SOS, PM, APC and ST.
const C1_CSI: char = '\u{9b}';
const C1_STRINGS: [char; 5] = ['\u{9d}', '\u{90}', '\u{98}', '\u{9e}', '\u{9f}'];
const C1_ST: char = '\u{9c}';

fn removed(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with control characters and escape sequences removed (newlines
/// and tabs kept); borrowed unchanged when there are none.
pub fn terminal_text(text: &str) -> Cow<'_, str> {
    if !text.chars().any(removed) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if !removed(c) {
            out.push(c);
            continue;
        }
        let kind = match c {
            ESC => match chars.peek() {
                Some('[') => {
                    chars.next();
                    Some(Sequence::Csi)
                }
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    chars.next();
                    Some(Sequence::String)
                }
                // A two-character sequence (ESC c resets the terminal):
                // its second character goes too.
                Some(&n) if ('\u{20}'..='\u{7e}').contains(&n) => {
                    chars.next();
                    None
                }
                _ => None,
            },
            C1_CSI => Some(Sequence::Csi),
            c if C1_STRINGS.contains(&c) => Some(Sequence::String),
            _ => None,
        };
        match kind {
            Some(Sequence::Csi) => {
                // Parameter and intermediate bytes, then one final byte.
                while let Some(&n) = chars.peek() {
                    if ('\u{20}'..='\u{3f}').contains(&n) {
                        chars.next();
                    } else {
                        if ('\u{40}'..='\u{7e}').contains(&n) {
                            chars.next();
                        }
                        break;
                    }
                }
            }
            Some(Sequence::String) => {
                while let Some(&n) = chars.peek() {
                    if n == '\n' {
                        break;
                    }
                    chars.next();
                    if n == BEL || n == C1_ST {
                        break;
                    }
                    if n == ESC {
                        if chars.peek() == Some(&'\\') {
                            chars.next();
                        }
                        break;
                    }
                }
            }
            None => {}
        }
    }
    Cow::Owned(out)
}

/// JSON text made safe for a terminal without losing anything: the
/// characters `terminal_text` removes are written as `\uXXXX` escapes
/// (serde_json escapes C0 controls, not DEL, C1 or bidirectional controls).
/// They can only stand inside JSON strings, so the result is the same JSON.
pub fn json_text(json: &str) -> Cow<'_, str> {
    if !json.chars().any(removed) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if removed(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Most characters a terminal table cell shows; the rest is cut with an
/// ellipsis (the JSON forms keep everything). comfy-table wraps a long word
/// in time that grows with the square of its length: a 4 MB label took
/// `runs` 3.9 s and `report` 13.4 s.
pub const MAX_CELL_CHARS: usize = 256;

/// A table cell of `text`, sanitized before the table measures it, so that
/// columns line up with what the terminal shows, and cut to
/// `MAX_CELL_CHARS`.
pub(crate) fn cell(text: impl std::fmt::Display) -> comfy_table::Cell {
    let text = text.to_string();
    let clean = terminal_text(&text);
    match clean.char_indices().nth(MAX_CELL_CHARS) {
        Some((cut, _)) => {
            let rest = clean[cut..].chars().count();
            comfy_table::Cell::new(format!("{}… (+{rest} characters)", &clean[..cut]))
        }
        None => comfy_table::Cell::new(clean),
    }
}

enum Sequence {
    Csi,
    String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_controls_are_removed_whole() {
        let cases = [
            ("plain label, ünïcode ok", "plain label, ünïcode ok"),
            ("a\x1b]0;pwned\x07b", "ab"),
            ("a\x1b]2;title\x1b\\b", "ab"),
            ("\x1b[31mred\x1b[0m", "red"),
            ("\x1b[38;5;196mx\x1b[2J\x1b[H", "x"),
            ("bell\x07 del\x7f cr\r bs\x08", "bell del cr bs"),
            ("c1\u{9b}31mcsi \u{9d}0;t\u{9c}osc", "c1csi osc"),
            ("reset\x1bc!", "reset!"),
            ("rtl\u{202e}evil", "rtlevil"),
            ("keeps\ttabs\nand newlines", "keeps\ttabs\nand newlines"),
            ("dangling\x1b", "dangling"),
        ];
        for (input, want) in cases {
            assert_eq!(terminal_text(input), want, "{input:?}");
        }
    }

    #[test]
    fn an_unterminated_string_ends_at_the_line() {
        assert_eq!(
            terminal_text("label \x1b]0;never ends\nnext line"),
            "label \nnext line"
        );
    }

    #[test]
    fn json_keeps_every_character_as_an_escape() {
        let value = serde_json::json!({"label": "a\u{1b}[31mb\u{9b}2J\u{7f}\u{202e}c"});
        let text = serde_json::to_string(&value).unwrap();
        let safe = json_text(&text);
        assert!(!safe.chars().any(removed), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn long_cells_are_cut_with_what_was_cut() {
        let c = cell("x".repeat(MAX_CELL_CHARS + 10));
        assert_eq!(
            c.content(),
            format!("{}… (+10 characters)", "x".repeat(MAX_CELL_CHARS))
        );
        assert_eq!(cell("short").content(), "short");
    }

    #[test]
    fn clean_text_is_borrowed() {
        assert!(matches!(terminal_text("run 1 — ok"), Cow::Borrowed(_)));
    }
}
