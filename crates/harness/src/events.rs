//! Measuring code never prints: it reports progress through an observer with
//! no-op defaults. The CLI's progress bar and the tests' recorders implement it.

/// Where a measurement is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Children started; setting up and sizing the loop.
    Starting,
    /// All processes running; warm-up before timing.
    Warming,
    /// Timed intervals under way: done so far of total (over all processes).
    Measuring { done: u32, total: u32 },
}

pub trait Observer {
    fn phase(&mut self, _case: &str, _phase: Phase) {}
}

/// An observer that ignores everything.
pub struct NoObserver;
impl Observer for NoObserver {}
