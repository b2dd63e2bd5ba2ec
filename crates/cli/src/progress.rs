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
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(total as u64);
            b.set_style(
                ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
                    .expect("static template")
                    .progress_chars("=> "),
            );
            b
        });
        if bar.is_none() && total > 0 {
            eprintln!("measuring {total} case(s); the figures follow when all are done");
        }
        Progress {
            bar,
            total,
            index: 0,
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
            b.set_position(self.index as u64 - 1);
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
            None => eprintln!("{text}"),
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
