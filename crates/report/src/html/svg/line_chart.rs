//! Line charts: one polyline with point markers per series (sizes on a
//! linear or log-2 axis, process counts).

use std::fmt::Write;
use touchstone_results::units::format_sig;

use super::{
    axes, count_ticks, escape, log2_ticks, open_svg, tick_text, x_text, y_axis, Frame, Series,
    XAxis, H, W,
};

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
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1 / y_div));
    let (mut x0, mut x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let ymax = ys.fold(0.0f64, f64::max);
    if !x0.is_finite() {
        (x0, x1) = (1.0, 2.0);
    }
    let ymin = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1 / y_div))
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    // A log axis only where the figures span more than a factor of ten.
    let ylog = log_y && ymin.is_finite() && ymax > 10.0 * ymin;
    let (y0, y1, yticks) = y_axis(ylog, ymin, ymax, 5);
    let f = Frame {
        w: W,
        h: H,
        x0,
        x1,
        y0,
        y1,
        xaxis,
        ylog,
    };
    let xticks: Vec<(f64, String)> = match xaxis {
        XAxis::Linear => {
            let xs: Vec<f64> = series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.0))
                .collect();
            count_ticks(&xs, x0, x1)
        }
        XAxis::LogBytes | XAxis::Log2 => log2_ticks(x0, x1, xaxis),
    };
    let yt: Vec<(f64, String)> = yticks.iter().map(|&v| (v, tick_text(v))).collect();
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
