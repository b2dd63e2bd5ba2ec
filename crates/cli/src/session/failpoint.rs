//! Fault injection for tests: `TOUCHSTONE_FAILPOINT=NAME[@N[-M]][,…]` makes
//! the named step fail (from its N-th call on, or from the N-th to the M-th):
//! `store_add` (an attempt to store a measurement), `store_curve` (storing a
//! curve of N points) and `build_case` (building a case mid-run). The
//! integration tests use it to prove that those exits finish the stored run
//! and that a refused result is kept and stored later; nothing else sets it.

/// Whether the test-only failpoint `name` fires at its `call`-th use (1-based).
pub fn failpoint(name: &str, call: usize) -> bool {
    let Some(spec) = std::env::var_os("TOUCHSTONE_FAILPOINT") else {
        return false;
    };
    spec.to_string_lossy()
        .split(',')
        .any(|f| match f.split_once('@') {
            Some((n, range)) if n == name => {
                let (from, to) = range.split_once('-').unwrap_or((range, ""));
                let from = from.parse::<usize>().unwrap_or(usize::MAX);
                let to = to.parse::<usize>().unwrap_or(usize::MAX);
                (from..=to).contains(&call)
            }
            Some(_) => false,
            None => f == name,
        })
}
