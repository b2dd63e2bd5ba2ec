//! Line charts: one polyline with point markers per series (sizes on a
//! linear or log-2 axis, process counts).

use std::fmt::Write;
use touchstone_results::units::format_sig;

use super::{axes, escape, frame, open_svg, x_range, x_text, x_ticks, Series, XAxis, H, W};

/// A line chart, one polyline with point markers per series. `y_div` turns
/// stored figures into the y label's unit. With `log_y`, figures that span
/// more than a factor of ten get a log axis.
pub fn line_chart(
    title: &str,
    xaxis: XAxis,
    x_label: &str,
    y_label: &str,
    y_div: f64,
    log_y: bool,
    series: &[Series],
) -> String {
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    let (x0, x1) = x_range(xs.iter().copied());
    let ys = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1 / y_div));
    let ymax = ys.clone().fold(0.0f64, f64::max);
    let ymin = ys.filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
    // A log axis only where the figures span more than a factor of ten.
    let ylog = log_y && ymin.is_finite() && ymax > 10.0 * ymin;
    let (f, yt) = frame(xaxis, (x0, x1), ylog, (ymin, ymax), 5);
    let xticks = x_ticks(xaxis, &xs, (x0, x1));
    let mut out = String::new();
    open_svg(&mut out, title, "line", (W, H));
    axes(&mut out, &f, &xticks, &yt, x_label, y_label);
    for s in series {
        if s.points.is_empty() {
            continue;
        }
        let _ = write!(
            out,
            r#"<g class="series" stroke="{c}" fill="{c}"><title>{}</title><polyline fill="none" points=""#,
            escape(&s.name),
            c = s.color
        );
        for (x, y) in &s.points {
            let _ = write!(out, "{:.1},{:.1} ", f.fx(*x), f.fy(y / y_div));
        }
        out.push_str(r#""/>"#);
        for (x, y) in &s.points {
            let xl = x_text(xaxis, *x);
            let _ = write!(
                out,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.5"><title>{}: {xl} → {} {}</title></circle>"#,
                f.fx(*x),
                f.fy(y / y_div),
                escape(&s.name),
                format_sig(y / y_div),
                escape(y_label)
            );
        }
        out.push_str("</g>");
    }
    out.push_str("</svg>");
    out
}
