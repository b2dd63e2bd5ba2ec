//! Colour where readers of a terminal expect it — faster and slower in a
//! comparison, warnings — and nowhere else: off when the output is not a
//! terminal or `NO_COLOR` is set (no-color.org), forced on by
//! `CLICOLOR_FORCE` (the same conventions clap follows, read with the
//! anstyle crates it uses).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

use anstyle::{AnsiColor, Style};

/// Warnings: yellow, as compilers and linters print them.
pub const WARNING: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));
/// A figure better than the base's.
pub const FASTER: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));
/// A figure worse than the base's.
pub const SLOWER: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));

/// Which stream the text goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// The decision, from the environment's answers: `NO_COLOR` wins, then
/// `CLICOLOR_FORCE`, then a terminal that is not `TERM=dumb`.
pub fn decide(no_color: bool, force: bool, terminal: bool, term_supports_colour: bool) -> bool {
    if no_color {
        false
    } else if force {
        true
    } else {
        terminal && term_supports_colour
    }
}

/// Set when standard output goes to a file (`-o FILE`) although the
/// process's stdout is a terminal.
static OFF: AtomicBool = AtomicBool::new(false);

/// No colour from now on in this process (output written to a file).
pub fn disable() {
    OFF.store(true, Ordering::Relaxed);
}

/// Whether text written to `stream` now should be coloured.
pub fn enabled(stream: Stream) -> bool {
    if OFF.load(Ordering::Relaxed) {
        return false;
    }
    let terminal = match stream {
        Stream::Stdout => std::io::stdout().is_terminal(),
        Stream::Stderr => std::io::stderr().is_terminal(),
    };
    decide(
        anstyle_query::no_color(),
        anstyle_query::clicolor_force(),
        terminal,
        anstyle_query::term_supports_color(),
    )
}

/// `text` in `style` when `on`, else unchanged.
pub fn paint(text: &str, style: Style, on: bool) -> String {
    if on {
        format!("{}{text}{}", style.render(), style.render_reset())
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_wins_then_force_then_a_terminal() {
        assert!(!decide(true, true, true, true), "NO_COLOR beats everything");
        assert!(
            decide(false, true, false, false),
            "CLICOLOR_FORCE into a pipe"
        );
        assert!(decide(false, false, true, true));
        assert!(!decide(false, false, false, true), "not a terminal");
        assert!(!decide(false, false, true, false), "TERM=dumb");
    }

    #[test]
    fn paint_adds_escapes_only_when_on() {
        assert_eq!(paint("slower", SLOWER, false), "slower");
        let on = paint("slower", SLOWER, true);
        assert!(on.starts_with("\u{1b}[") && on.contains("slower") && on.ends_with("\u{1b}[0m"));
    }
}
