//! Progress on stderr: a bar on a terminal, plain lines otherwise (logs, CI,
//! pipes). Implements the harness's observer, so measuring code never prints.

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
        Progress {
            bar,
            total,
            index: 0,
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
