//! Progress on stderr: a bar on a terminal, whose message shows the case
//! under way and then its figure until the next one starts; without a
//! terminal (logs, CI, pipes) one line saying what is being measured, one
//! per load point of a workload (seconds each), and one per finished case
//! at a calm rate (`LOG_EVERY`), each with the time left, without figures.
//! The figures themselves are printed once, in the tables at the end.
//! Lines that stay are for errors and notes. Implements the harness's
//! observer, so measuring code never prints.
//!
//! The time left is touchstone's own: the estimated cost still ahead
//! (`run --dry-run`'s, per case), scaled by how the run's pace so far
//! compares with its estimate once a twentieth of it is done, that ratio
//! kept within ¼…4 — a slow first case cannot make it jump by days.

use std::cell::Cell;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use touchstone_harness::events::{Observer, Phase};

/// Without a terminal, a finished case is logged when this long has passed
/// since the last line (points and errors are always logged).
const LOG_EVERY: Duration = Duration::from_secs(10);

pub struct Progress {
    bar: Option<ProgressBar>,
    total: usize,
    index: usize,
    /// Each planned case's expected cost (ms; 1 each when not known): the
    /// bar advances by cost, so its ETA weighs a minute-long workload sweep
    /// and a 50 ms micro-benchmark for what they are.
    costs: Vec<u64>,
    /// The cost done so far (ms of estimate), within the case under way too.
    done: Cell<u64>,
    started: Instant,
    /// When a line last went to the log (no terminal).
    last_line: Cell<Instant>,
    /// The case under way, for the log's lines.
    case: String,
    /// When the step under way began.
    step_started: Instant,
    /// Each step's real time beside its estimate, one line on stderr as it
    /// ends (`TOUCHSTONE_STEP_TIMES=1`): what `run --dry-run`'s estimates
    /// are checked against, case by case (docs/validation.md).
    step_times: bool,
    /// The clock and the log (stderr) without a terminal; tests pass their
    /// own, so the log's pace is checked without sleeping.
    now: Box<dyn Fn() -> Instant + Send>,
    log: Box<dyn Fn(&str) + Send>,
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| bar(total));
        if bar.is_none() && total > 0 {
            crate::output::eprint_line(&format!(
                "measuring {total} case(s); the figures follow when all are done"
            ));
        }
        Progress::with_bar(bar, total)
    }

    fn with_bar(bar: Option<ProgressBar>, total: usize) -> Progress {
        Progress::with_clock(
            bar,
            total,
            Box::new(Instant::now),
            Box::new(crate::output::eprint_line),
        )
    }

    fn with_clock(
        bar: Option<ProgressBar>,
        total: usize,
        now: Box<dyn Fn() -> Instant + Send>,
        log: Box<dyn Fn(&str) + Send>,
    ) -> Progress {
        let start = now();
        Progress {
            bar,
            total,
            index: 0,
            costs: vec![1; total],
            done: Cell::new(0),
            started: start,
            last_line: Cell::new(start),
            case: String::new(),
            step_started: Instant::now(),
            step_times: std::env::var_os("TOUCHSTONE_STEP_TIMES").is_some_and(|v| v == "1"),
            now,
            log,
        }
    }

    /// The time left: the estimate still ahead, scaled by the pace so far
    /// (see the module's note).
    fn time_left(&self) -> Duration {
        let total: u64 = self.costs.iter().sum();
        let done = self.done.get().min(total);
        let elapsed = self.elapsed().as_secs_f64() * 1000.0;
        let pace = if done > 0 && done * 20 >= total {
            (elapsed / done as f64).clamp(0.25, 4.0)
        } else {
            1.0
        };
        Duration::from_millis(((total - done) as f64 * pace) as u64)
    }

    /// Where the run stands: `k/N, about 1:23 left`.
    fn standing(&self) -> String {
        format!(
            "{}/{}, about {} left",
            self.index,
            self.total,
            clock(self.time_left())
        )
    }

    /// The bar moved to `done` (ms of estimate).
    fn advance_to(&self, done: u64) {
        self.done.set(done);
        if let Some(b) = &self.bar {
            b.set_position(done);
            b.set_prefix(self.standing());
        }
    }

    /// A share (0…1) of the case under way is done: a workload sweep's
    /// points and trials advance the bar within the sweep.
    pub fn case_fraction(&self, fraction: f64) {
        let before: u64 = self.costs.iter().take(self.index.saturating_sub(1)).sum();
        let this = self
            .costs
            .get(self.index.saturating_sub(1))
            .copied()
            .unwrap_or(0);
        let within = (this as f64 * fraction.clamp(0.0, 1.0)) as u64;
        self.advance_to(before + within);
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

    fn elapsed(&self) -> Duration {
        (self.now)().saturating_duration_since(self.started)
    }

    /// Whether progress goes to a terminal (a bar) or to a log (lines).
    pub fn is_terminal(&self) -> bool {
        self.bar.is_some()
    }

    /// A case's result, shown on the bar until the next case starts (the
    /// tables print it for good).
    /// Without a terminal, a line for the finished case when `LOG_EVERY`
    /// has passed since the last line.
    pub fn case_done(&self, text: &str) {
        self.case_fraction(1.0);
        match &self.bar {
            Some(b) => b.set_message(text.to_string()),
            None if (self.now)() - self.last_line.get() >= LOG_EVERY => self.line(&format!(
                "[{}] {} done; {} elapsed",
                self.standing(),
                self.case,
                clock(self.elapsed())
            )),
            None => {}
        }
    }

    pub fn start_case(&mut self, name: &str) {
        self.step_ended();
        self.index += 1;
        self.case = name.to_string();
        let done = self.costs.iter().take(self.index - 1).sum();
        self.advance_to(done);
        if let Some(b) = &self.bar {
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
            None => {
                self.last_line.set((self.now)());
                (self.log)(text)
            }
        }
    }

    pub fn case_line(&self, text: &str) {
        self.line(&format!("[{}] {text}", self.standing()));
    }

    /// The step under way ended: its line when step times are asked for.
    fn step_ended(&mut self) {
        if self.step_times && self.index > 0 {
            let estimate = self.costs.get(self.index - 1).copied().unwrap_or(0);
            self.line(&format!(
                "step-time {} real_ms {} estimated_ms {estimate}",
                self.case,
                self.step_started.elapsed().as_millis()
            ));
        }
        self.step_started = Instant::now();
    }

    pub fn finish(&mut self) {
        self.step_ended();
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// A duration as `1:02:03` or `2:03`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match s >= 3600 {
        true => format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60),
        false => format!("{}:{:02}", s / 60, s % 60),
    }
}

/// The bar: elapsed time, the case under way, and the time left
/// (`Progress::time_left`, in the prefix).
fn bar(total: usize) -> ProgressBar {
    let b = ProgressBar::new(total as u64);
    b.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {prefix} {msg}")
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
        let mut p = Progress::with_bar(Some(b.clone()), 4);
        p.start_case("lat_syscall/null");
        p.start_case("lat_syscall/read");
        b.tick();
        let drawn = screen.0.lock().unwrap().clone();
        assert!(drawn.contains("2/4, about "), "{drawn}");
        assert!(drawn.contains("lat_syscall/read"), "{drawn}");
    }

    #[test]
    fn the_bar_advances_by_expected_cost() {
        let b = ProgressBar::hidden();
        let mut p = Progress::with_bar(Some(b.clone()), 3);
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

    #[test]
    fn a_sweep_advances_the_bar_within_itself() {
        let b = ProgressBar::hidden();
        let mut p = Progress::with_bar(Some(b.clone()), 3);
        p.set_costs_ns(&[60_000_000_000, 50_000_000, 50_000_000]);
        p.start_case("tcp_rr");
        p.case_fraction(0.25);
        assert_eq!(b.position(), 15_000);
        p.case_fraction(0.5);
        assert_eq!(b.position(), 30_000);
        p.start_case("lat_syscall/null");
        assert_eq!(b.position(), 60_000);
    }

    #[test]
    fn the_time_left_never_jumps_by_days() {
        let mut p = Progress::with_bar(Some(ProgressBar::hidden()), 2);
        // Two cases estimated 50 s each.
        p.set_costs_ns(&[50_000_000_000, 50_000_000_000]);
        p.start_case("a");
        // Ten minutes into a sliver of the first: the estimate stands.
        p.started = Instant::now() - Duration::from_secs(600);
        p.case_fraction(0.01);
        assert_eq!(p.time_left().as_secs(), 99);
        // Half done after 1,000 s (20 times the estimate): at most 4 times.
        p.started = Instant::now() - Duration::from_secs(1000);
        p.case_fraction(1.0);
        assert_eq!(p.time_left().as_secs(), 200);
        // Faster than estimated: the pace shortens it, to a quarter at most.
        p.started = Instant::now() - Duration::from_secs(5);
        assert_eq!(p.time_left().as_secs(), 12);
    }

    #[test]
    fn each_step_ends_with_its_real_time_beside_its_estimate_when_asked() {
        let screen = Screen::default();
        let b = ProgressBar::with_draw_target(
            Some(2),
            ProgressDrawTarget::term_like(Box::new(screen.clone())),
        );
        let mut p = Progress::with_bar(Some(b), 2);
        p.set_costs_ns(&[30_000_000, 2_000_000_000]);
        p.step_times = true;
        p.start_case("lat_syscall/null");
        p.start_case("stream/copy ×2");
        p.finish();
        let drawn = screen.0.lock().unwrap().clone();
        assert!(
            drawn.contains("step-time lat_syscall/null real_ms 0 estimated_ms 30"),
            "{drawn}"
        );
        assert!(
            drawn.contains("step-time stream/copy ×2 real_ms 0 estimated_ms 2000"),
            "{drawn}"
        );
    }

    /// Without a terminal, a long run of short cases logs a line about every
    /// `LOG_EVERY`: never more often (a log that scrolls is as useless as
    /// one that is silent), and never a longer silence while cases finish.
    #[test]
    fn the_log_speaks_about_every_ten_seconds() {
        let t0 = Instant::now();
        let clock = Arc::new(Mutex::new(t0));
        let lines: Arc<Mutex<Vec<(Duration, String)>>> = Arc::default();
        let now = {
            let clock = clock.clone();
            move || *clock.lock().unwrap()
        };
        let log = {
            let (clock, lines) = (clock.clone(), lines.clone());
            move |text: &str| {
                let at = *clock.lock().unwrap() - t0;
                lines.lock().unwrap().push((at, text.to_string()));
            }
        };
        let cases = 300;
        let mut p = Progress::with_clock(None, cases, Box::new(now), Box::new(log));
        for i in 0..cases {
            p.start_case(&format!("lat_syscall/case:{i}"));
            // Cases of 0.7 s, 1.3 s and 0.4 s in turn: 240 s in all.
            *clock.lock().unwrap() += Duration::from_millis([700, 1300, 400][i % 3]);
            p.case_done("figure");
        }
        let lines = lines.lock().unwrap();
        let times: Vec<Duration> = lines.iter().map(|l| l.0).collect();
        assert!(times.len() >= 20 && times.len() <= 24, "{times:?}");
        let mut last = Duration::ZERO;
        for (at, text) in lines.iter() {
            let gap = *at - last;
            assert!(
                gap >= LOG_EVERY && gap < LOG_EVERY + Duration::from_secs(2),
                "{times:?}"
            );
            assert!(
                text.contains(" done; ") && text.contains(" elapsed"),
                "{text}"
            );
            assert!(
                !text.contains("figure"),
                "the log carries no figures: {text}"
            );
            last = *at;
        }
    }
}
