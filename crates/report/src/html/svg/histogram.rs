//! Overlaid histograms of raw samples on shared bins, sized as the page
//! shows them.

use std::fmt::Write;

use super::{axes, escape, nice_ticks, open_svg, tick_text, Frame, XAxis};

/// A histogram's size: the page shows histograms several to a row, about
/// 300–400 px wide, so a viewBox of that size keeps its 11 px labels near
/// 11 px on screen (a 640-wide one shrank them to about 5 px).
pub const HIST_W: f64 = 360.0;
pub const HIST_H: f64 = 220.0;

/// Overlaid histograms of raw samples on shared bins, one outline per
/// series. `div` turns stored figures into the x label's unit.
pub fn histogram(
    title: &str,
    x_label: &str,
    div: f64,
    series: &[(String, &'static str, &[f64])],
) -> String {
    let all = series.iter().flat_map(|s| s.2.iter().map(|v| v / div));
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let (lo, hi) = if !lo.is_finite() {
        (0.0, 1.0)
    } else if hi > lo {
        (lo, hi)
    } else {
        (lo - 0.5 * lo.abs().max(1e-9), hi + 0.5 * hi.abs().max(1e-9))
    };
    let bins = 16usize;
    let width = (hi - lo) / bins as f64;
    let counts: Vec<Vec<usize>> = series
        .iter()
        .map(|s| {
            let mut c = vec![0usize; bins];
            for v in s.2 {
                let i = (((v / div) - lo) / width).floor() as isize;
                c[i.clamp(0, bins as isize - 1) as usize] += 1;
            }
            c
        })
        .collect();
    let cmax = counts.iter().flatten().copied().max().unwrap_or(1).max(1) as f64;
    let yticks = nice_ticks(0.0, cmax, 4);
    let y1 = yticks.last().copied().unwrap_or(cmax).max(cmax);
    let f = Frame {
        w: HIST_W,
        h: HIST_H,
        x0: lo,
        x1: hi,
        y0: 0.0,
        y1,
        xaxis: XAxis::Linear,
        ylog: false,
    };
    let xt: Vec<(f64, String)> = nice_ticks(lo, hi, 5)
        .into_iter()
        .map(|v| (v, tick_text(v)))
        .collect();
    let yt: Vec<(f64, String)> = yticks
        .into_iter()
        .filter(|v| v.fract() == 0.0)
        .map(|v| (v, format!("{v}")))
        .collect();
    let mut out = String::new();
    open_svg(&mut out, title, "hist", (HIST_W, HIST_H));
    axes(&mut out, &f, &xt, &yt, x_label, "samples");
    for ((name, color, samples), c) in series.iter().zip(&counts) {
        if samples.is_empty() {
            continue;
        }
        let mut d = format!("M{:.1},{:.1}", f.fx(lo), f.fy(0.0));
        for (i, n) in c.iter().enumerate() {
            let (a, b) = (lo + i as f64 * width, lo + (i + 1) as f64 * width);
            let y = f.fy(*n as f64);
            let _ = write!(d, "L{:.1},{y:.1}L{:.1},{y:.1}", f.fx(a), f.fx(b));
        }
        let _ = write!(d, "L{:.1},{:.1}Z", f.fx(hi), f.fy(0.0));
        let _ = write!(
            out,
            r#"<path class="bars" d="{d}" stroke="{color}" fill="{color}"><title>{}: {} samples</title></path>"#,
            escape(name),
            samples.len()
        );
    }
    out.push_str("</svg>");
    out
}
