//! The flags a load curve's text carries where a figure must not pass as
//! a plain one: a point where one of touchstone's own threads was the
//! limit (touchstone-bound: `Point::self_check`), the peak, knee, USL fit
//! and S(k) that rest on such points, and an S(k) more than linear
//! (superlinear), with what can cause it.

use touchstone_analysis::curve::{Scaling, SUPERLINEAR_CAUSES};
use touchstone_analysis::curve_analysis::{CpuCountAnalysis, CurveAnalysis};
use touchstone_results::curve::{Curve, Point};
use touchstone_results::units::Scale;

use crate::curves::{mean_pm, scaling_text};

/// A touchstone-bound point's throughput, and every figure resting on
/// such points, carries this mark.
pub const BOUND_MARK: &str = " ‡";
/// A superlinear S(k) (efficiency above 1.1) carries this mark.
pub const SUPERLINEAR_MARK: &str = " ↑";

/// The throughput cell: mean ± half-width, marked when touchstone-bound.
pub fn throughput_cell(scale: &Scale, p: &Point) -> String {
    let mut text = mean_pm(scale, p.throughput, p.throughput_half_width);
    if p.is_touchstone_bound() {
        text.push_str(BOUND_MARK);
    }
    text
}

/// S(k) with its interval and its marks: superlinear, resting on a
/// touchstone-bound point.
pub fn scaling_cell(s: &Scaling, bound: bool) -> String {
    let mut text = scaling_text(s);
    if s.superlinear {
        text.push_str(SUPERLINEAR_MARK);
    }
    if bound {
        text.push_str(BOUND_MARK);
    }
    text
}

/// The loads of points `indices` of `curve`, as "8, 64".
fn loads_of(curve: &Curve, indices: &[usize]) -> String {
    let mut loads: Vec<u32> = indices.iter().map(|&i| curve.points[i].load).collect();
    loads.sort_unstable();
    loads.dedup();
    loads
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// What of one CPU count's line (peak, knee, USL over load) rests on
/// touchstone-bound points, to end that line; "" when nothing does.
pub fn bound_text(curve: &Curve, k: &CpuCountAnalysis) -> String {
    if k.bound.is_empty() {
        return String::new();
    }
    let mut on = Vec::new();
    let peak = k.peak_rests_on_bound();
    if !peak.is_empty() {
        on.push(format!("the peak (load {})", loads_of(curve, &peak)));
    }
    if k.knee_rests_on_bound(curve) {
        on.push("the knee".to_string());
    }
    if k.usl.is_ok() {
        on.push(format!("the USL fit (load {})", loads_of(curve, &k.bound)));
    }
    if on.is_empty() {
        return String::new();
    }
    format!(
        "; {} rest{} on touchstone-bound points{BOUND_MARK}: touchstone's limit, not the machine's",
        on.join(", "),
        if on.len() == 1 { "s" } else { "" }
    )
}

/// The scalability of the peaks at one CPU count with its flags:
/// "S(4) 5.9 [5.7–6.1], efficiency 1.475 ↑ superlinear".
pub fn peak_scaling_text(x: &Scaling, bound: bool) -> String {
    let mut e = format!(
        "S({}) {}, efficiency {}",
        x.cpus,
        scaling_text(x),
        touchstone_results::units::format_sig(x.efficiency)
    );
    if x.superlinear {
        e.push_str(&format!("{SUPERLINEAR_MARK} superlinear"));
    }
    if bound {
        e.push_str(&format!("{BOUND_MARK} on touchstone-bound peaks"));
    }
    e
}

/// What the USL over CPUs rests on, to end its line; "" when no peak is
/// touchstone-bound.
pub fn usl_over_cpus_bound(a: &CurveAnalysis) -> String {
    match &a.scaling {
        Some(s) if !s.bound_peaks.is_empty() && s.usl.is_ok() => {
            let ks: Vec<String> = s.bound_peaks.iter().map(u32::to_string).collect();
            format!(
                "; rests on touchstone-bound peaks{BOUND_MARK} (at {} CPU(s))",
                ks.join(", ")
            )
        }
        _ => String::new(),
    }
}

/// The curve's notes on its flags: what ↑ and ‡ mean, with the causes of
/// a superlinear S(k) and each touchstone-bound point's own account.
pub fn flag_notes(curve: &Curve, a: &CurveAnalysis) -> Vec<String> {
    let mut notes = Vec::new();
    let superlinear = a.scaling.as_ref().is_some_and(|s| {
        s.at_peak.iter().flatten().any(|x| x.superlinear)
            || s.at_load
                .iter()
                .flat_map(|l| l.scaling.iter().flatten())
                .any(|x| x.superlinear)
    });
    if superlinear {
        notes.push(format!(
            "{} = superlinear: efficiency S(k)/k above 1.1 — {SUPERLINEAR_CAUSES}",
            SUPERLINEAR_MARK.trim()
        ));
    }
    let bound: Vec<&Point> = curve
        .points
        .iter()
        .filter(|p| p.is_touchstone_bound())
        .collect();
    if !bound.is_empty() {
        notes.push(format!(
            "{} = touchstone-bound: one of touchstone's own threads ran flat out while the point's CPUs had room, so the figure is touchstone's limit, not the machine's (docs/writing-a-workload.md, \"touchstone's check on itself\")",
            BOUND_MARK.trim()
        ));
        for p in bound {
            if let Some(flag) = p.touchstone_bound() {
                notes.push(format!("load {} on {} CPU(s): {flag}", p.load, p.cpus));
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curves::curve_text;
    use crate::testdata::point;
    use touchstone_analysis::curve_analysis::analyse;
    use touchstone_results::self_check::SelfCheck;

    /// One CPU and four: at 4 CPUs the load-4 point is six times the
    /// 1-CPU one (superlinear) and touchstone-bound.
    fn flagged() -> Curve {
        let mut points = Vec::new();
        for (k, xs) in [
            (1, [10_000.0, 20_000.0, 25_000.0]),
            (4, [12_000.0, 60_000.0, 150_000.0]),
        ] {
            for (load, x) in [1, 2, 4].into_iter().zip(xs) {
                points.push(point(load, k, x, 0.002, 40_000));
            }
        }
        let bound = SelfCheck {
            busiest: "server thread 0".into(),
            busiest_ran: 0.99,
            busiest_wanted: 1.0,
            own_ran_cpus: 1.3,
            own_wanted_cpus: 1.4,
            threads: 9,
            cpus_busy: 0.35,
            bound: false,
        }
        .assessed(4);
        points[5].self_check = Some(bound);
        Curve {
            workload: "tcp_rr".into(),
            params: [("server".to_string(), "one".to_string())].into(),
            operation: "transaction".into(),
            points,
            bytes_per_op: None,
            unmeasured_cpus: vec![],
        }
    }

    #[test]
    fn bound_points_and_what_rests_on_them_are_marked() {
        let c = flagged();
        let t = curve_text(&c, &analyse(&c));
        let four = &t.blocks[1];
        let row = four.sheet.rows.iter().find(|r| r[0] == "4").unwrap();
        assert!(row[1].ends_with(BOUND_MARK), "{row:?}");
        let sk = row.last().unwrap();
        assert!(
            sk.contains(SUPERLINEAR_MARK) && sk.ends_with(BOUND_MARK),
            "{sk}"
        );
        assert!(
            four.line.contains("the peak (load 4)")
                && four.line.contains("rest on touchstone-bound points ‡"),
            "{}",
            four.line
        );
        // The 1-CPU line rests on nothing flagged.
        assert!(
            !t.blocks[0].line.contains("touchstone-bound"),
            "{}",
            t.blocks[0].line
        );
        let notes = t.notes.join("\n");
        assert!(
            notes.contains("S(4) 6.000 [")
                && notes.contains("↑ superlinear ‡ on touchstone-bound peaks"),
            "{notes}"
        );
        assert!(
            notes.contains("‡ = touchstone-bound: one of touchstone's own threads"),
            "{notes}"
        );
        assert!(
            notes.contains(
                "load 4 on 4 CPU(s): touchstone-bound: server thread 0 at 99 % of a CPU, CPUs 35 % busy"
            ),
            "{notes}"
        );
        assert!(
            notes.contains("↑ = superlinear: efficiency S(k)/k above 1.1 — more than linear is not the workload scaling: the working set may fit the caches"),
            "{notes}"
        );
    }

    #[test]
    fn a_curve_without_flags_says_nothing_of_them() {
        let c = crate::testdata::tcp_rr();
        let t = curve_text(&c, &analyse(&c));
        let all = format!("{t:?}");
        assert!(!all.contains('‡') && !all.contains('↑'), "{all}");
    }
}
