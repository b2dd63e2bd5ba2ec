//! Progress on stderr: a bar on a terminal, whose message shows the case
//! under way and then its figure until the next one starts; without a
//! terminal (logs, CI, pipes) one line saying what is being measured, and
//! one per load point of a workload (seconds each), without figures. The
//! figures themselves are printed once, in the tables at the end. Lines
//! that stay are for errors and notes. Implements the harness's observer,
//! so measuring code never prints.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};
use touchstone_harness::events::{Observer, Phase};

pub struct Progress {
    bar: Option<ProgressBar>,
    total: usize,
    index: usize,
    /// Each planned case's expected cost (ms; 1 each when not known): the
    /// bar advances by cost, so its ETA weighs a minute-long workload sweep
    /// and a 50 ms micro-benchmark for what they are.
    costs: Vec<u64>,
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| bar(total));
        if bar.is_none() && total > 0 {
            crate::output::eprint_line(&format!(
                "measuring {total} case(s); the figures follow when all are done"
            ));
        }
        Progress {
            bar,
            total,
            index: 0,
            costs: vec![1; total],
        }
    }

    /// The expected cost of each planned case, in order (`run --dry-run`'s
    /// estimates); ignored unless there is one per case.
    pub fn set_costs_ns(&mut self, costs_ns: &[u64]) {
        if costs_ns.len() != self.total {
            return;
        }
        self.costs = costs_ns.iter().map(|n| (n / 1_000_000).max(1)).collect();
        if let Some(b) = &self.bar {
            b.set_length(self.costs.iter().sum());
        }
    }

    /// Whether progress goes to a terminal (a bar) or to a log (lines).
    pub fn is_terminal(&self) -> bool {
        self.bar.is_some()
    }

    /// A case's result, shown on the bar until the next case starts (the
    /// tables print it for good).
    pub fn case_done(&self, text: &str) {
        if let Some(b) = &self.bar {
            b.set_message(text.to_string());
        }
    }

    pub fn start_case(&mut self, name: &str) {
        self.index += 1;
        if let Some(b) = &self.bar {
            let done = self.costs.iter().take(self.index - 1).sum();
            b.set_position(done);
            b.set_prefix(format!("{}/{}", self.index, self.total));
            b.set_message(name.to_string());
        }
    }

    /// What is under way now, on the bar (nothing without a terminal).
    pub fn status(&self, text: &str) {
        if let Some(b) = &self.bar {
            b.set_message(text.to_string());
        }
    }

    /// A line that stays (a finished case, an error, a warning).
    pub fn line(&self, text: &str) {
        match &self.bar {
            Some(b) => b.println(text),
            None => crate::output::eprint_line(text),
        }
    }

    pub fn case_line(&self, text: &str) {
        self.line(&format!("[{}/{}] {text}", self.index, self.total));
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// The bar: elapsed time, the case under way, and the time left
/// (indicatif's estimate from the pace so far, in expected cost).
fn bar(total: usize) -> ProgressBar {
    let b = ProgressBar::new(total as u64);
    b.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {prefix} ETA {eta_precise} {msg}",
        )
        .expect("static template")
        .progress_chars("=> "),
    );
    b
}

impl Observer for Progress {
    fn phase(&mut self, case: &str, phase: Phase) {
        let Some(b) = &self.bar else { return };
        let what = match phase {
            Phase::Starting => "starting".to_string(),
            Phase::Warming => "warming up".to_string(),
            Phase::Measuring { done, total } => format!("{done}/{total} intervals"),
        };
        b.set_message(format!("{case}: {what}"));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use indicatif::{ProgressDrawTarget, TermLike};

    use super::*;

    /// A terminal that keeps what is drawn on it.
    #[derive(Debug, Clone, Default)]
    struct Screen(Arc<Mutex<String>>);

    impl TermLike for Screen {
        fn width(&self) -> u16 {
            120
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(&format!("{s}\n"))
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.0.lock().unwrap().push_str(s);
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_bar_shows_the_time_left() {
        let screen = Screen::default();
        let b = bar(4);
        b.set_draw_target(ProgressDrawTarget::term_like(Box::new(screen.clone())));
        let mut p = Progress {
            bar: Some(b.clone()),
            total: 4,
            index: 0,
            costs: vec![1; 4],
        };
        p.start_case("lat_syscall/null");
        p.start_case("lat_syscall/read");
        b.tick();
        let drawn = screen.0.lock().unwrap().clone();
        assert!(drawn.contains("2/4 ETA "), "{drawn}");
        assert!(drawn.contains("lat_syscall/read"), "{drawn}");
    }

    #[test]
    fn the_bar_advances_by_expected_cost() {
        let b = ProgressBar::hidden();
        let mut p = Progress {
            bar: Some(b.clone()),
            total: 3,
            index: 0,
            costs: vec![1; 3],
        };
        // A 60 s sweep, then two 50 ms cases.
        p.set_costs_ns(&[60_000_000_000, 50_000_000, 50_000_000]);
        assert_eq!(b.length(), Some(60_100));
        p.start_case("tcp_rr");
        assert_eq!(b.position(), 0);
        p.start_case("lat_syscall/null");
        assert_eq!(b.position(), 60_000);
        // A list that does not match the plan is ignored.
        p.set_costs_ns(&[1]);
        assert_eq!(b.length(), Some(60_100));
    }
}
