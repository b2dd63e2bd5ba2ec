//! General plots: layers with error bars and dashed lines, marked points
//! (the knee) and a legend (load curves).

use std::fmt::Write;
use touchstone_results::units::format_sig;

use super::{axes, escape, frame, x_range, x_text, x_ticks, XAxis, H, LEFT, RIGHT, TOP, W};

/// How a layer's line is drawn.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Dash {
    Solid,
    Dashed,
    Dotted,
    /// No line: markers (and error bars) only.
    None,
}

impl Dash {
    fn attribute(self) -> &'static str {
        match self {
            Dash::Solid | Dash::None => "",
            Dash::Dashed => r#" stroke-dasharray="6 4""#,
            Dash::Dotted => r#" stroke-dasharray="2 3""#,
        }
    }
}

/// One layer of a plot: a line through its points (x ascending), with
/// optional error bars and point markers.
pub struct Layer {
    /// Shown in the legend (an empty name stays out of it) and on hover.
    pub name: String,
    pub color: &'static str,
    pub points: Vec<(f64, f64)>,
    /// (low, high) of each point, in the points' order; empty for none.
    pub bars: Vec<(f64, f64)>,
    pub dash: Dash,
    pub markers: bool,
}

/// A point picked out with a ring and a label (e.g. the knee).
pub struct Mark {
    pub x: f64,
    pub y: f64,
    pub label: String,
    pub color: &'static str,
}

/// A plot of several layers: `y_div` turns stored figures into the y
/// label's unit; with `log_y` the y axis is logarithmic (when every figure
/// is positive); the y axis starts at 0 otherwise.
pub struct Plot<'a> {
    pub title: &'a str,
    pub xaxis: XAxis,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub y_div: f64,
    pub log_y: bool,
    pub layers: Vec<Layer>,
    pub marks: Vec<Mark>,
}

/// Height of one legend row below the plot, px.
const LEGEND_ROW: f64 = 16.0;

/// Legend entries laid out left to right in rows under the plot: (row,
/// x offset) of each named layer.
fn legend_layout(names: &[&str]) -> Vec<(usize, f64)> {
    let (mut row, mut x) = (0usize, LEFT);
    names
        .iter()
        .map(|n| {
            // 28 px of line sample and gap, about 6.2 px per character.
            let width = 36.0 + 6.2 * n.chars().count() as f64;
            if x + width > W - RIGHT && x > LEFT {
                row += 1;
                x = LEFT;
            }
            let at = (row, x);
            x += width;
            at
        })
        .collect()
}

/// A plot with error bars, dashed lines, marked points and a legend.
pub fn plot(p: &Plot) -> String {
    let all_y = p.layers.iter().flat_map(|l| {
        l.points
            .iter()
            .map(|q| q.1)
            .chain(l.bars.iter().flat_map(|b| [b.0, b.1]))
    });
    let ys: Vec<f64> = all_y
        .map(|y| y / p.y_div)
        .filter(|y| y.is_finite())
        .collect();
    let xs: Vec<f64> = p
        .layers
        .iter()
        .flat_map(|l| l.points.iter().map(|q| q.0))
        .filter(|x| x.is_finite())
        .collect();
    let (mut x0, mut x1) = x_range(xs.iter().copied());
    if x1 <= x0 {
        // One x value: a range around it (halved and doubled on log axes).
        (x0, x1) = match p.xaxis {
            XAxis::Linear => (x0 - 1.0, x1 + 1.0),
            _ => (x0 / 2.0, x1 * 2.0),
        };
    }
    let ymax = ys.iter().copied().fold(0.0f64, f64::max);
    let ymin_pos = ys
        .iter()
        .copied()
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let ylog = p.log_y && ymin_pos.is_finite() && ys.iter().all(|v| *v > 0.0);
    let (f, yt) = frame(p.xaxis, (x0, x1), ylog, (ymin_pos, ymax), 6);
    // The measured loads (layers with markers), not a fitted line's samples.
    let measured: Vec<f64> = p
        .layers
        .iter()
        .filter(|l| l.markers)
        .flat_map(|l| l.points.iter().map(|q| q.0))
        .collect();
    let xticks = x_ticks(p.xaxis, &measured, (x0, x1));

    let named: Vec<&Layer> = p.layers.iter().filter(|l| !l.name.is_empty()).collect();
    let names: Vec<&str> = named.iter().map(|l| l.name.as_str()).collect();
    let layout = legend_layout(&names);
    let rows = layout.iter().map(|l| l.0 + 1).max().unwrap_or(0);
    let height = H + rows as f64 * LEGEND_ROW + if rows > 0 { 6.0 } else { 0.0 };

    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg class="chart plot" viewBox="0 0 {W} {height}" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{t}"><title>{t}</title>"#,
        t = escape(p.title)
    );
    axes(&mut out, &f, &xticks, &yt, p.x_label, p.y_label);
    let inside = |y: f64| y.is_finite() && (!ylog || y > 0.0);
    for l in &p.layers {
        let _ = write!(
            out,
            r#"<g class="layer" stroke="{c}" fill="{c}">"#,
            c = l.color
        );
        if !l.name.is_empty() {
            let _ = write!(out, "<title>{}</title>", escape(&l.name));
        }
        for (i, (x, _)) in l.points.iter().enumerate() {
            let Some(&(lo, hi)) = l.bars.get(i) else {
                continue;
            };
            let (lo, hi) = (lo / p.y_div, hi / p.y_div);
            if !(inside(lo) && inside(hi)) {
                continue;
            }
            let (px, a, b) = (f.fx(*x), f.fy(lo), f.fy(hi));
            let _ = write!(
                out,
                r#"<path class="bar" d="M{px:.1},{a:.1}V{b:.1}M{:.1},{a:.1}H{:.1}M{:.1},{b:.1}H{:.1}"/>"#,
                px - 3.0,
                px + 3.0,
                px - 3.0,
                px + 3.0
            );
        }
        let drawn: Vec<(usize, &(f64, f64))> = l
            .points
            .iter()
            .enumerate()
            .filter(|(_, q)| inside(q.1 / p.y_div) && q.0.is_finite())
            .collect();
        if l.dash != Dash::None && drawn.len() > 1 {
            out.push_str(r#"<polyline fill="none""#);
            out.push_str(l.dash.attribute());
            out.push_str(r#" points=""#);
            for (_, (x, y)) in &drawn {
                let _ = write!(out, "{:.1},{:.1} ", f.fx(*x), f.fy(y / p.y_div));
            }
            out.push_str(r#""/>"#);
        }
        if l.markers {
            for (i, (x, y)) in &drawn {
                let bar = l.bars.get(*i).map_or(String::new(), |b| {
                    format!(
                        " [{}–{}]",
                        format_sig(b.0 / p.y_div),
                        format_sig(b.1 / p.y_div)
                    )
                });
                let _ = write!(
                    out,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3"><title>{}: {} → {}{bar} {}</title></circle>"#,
                    f.fx(*x),
                    f.fy(y / p.y_div),
                    escape(&l.name),
                    x_text(p.xaxis, *x),
                    format_sig(y / p.y_div),
                    escape(p.y_label)
                );
            }
        }
        out.push_str("</g>");
    }
    for m in &p.marks {
        let y = m.y / p.y_div;
        if !inside(y) {
            continue;
        }
        let (px, py) = (f.fx(m.x), f.fy(y));
        // The label sits above the ring, or below it near the top edge.
        let ly = if py - 12.0 < TOP + 8.0 {
            py + 20.0
        } else {
            py - 11.0
        };
        let _ = write!(
            out,
            r#"<g class="mark"><circle cx="{px:.1}" cy="{py:.1}" r="7" fill="none" stroke="{c}" stroke-width="2"/><text x="{px:.1}" y="{ly:.1}" text-anchor="middle" fill="{c}">{}</text></g>"#,
            escape(&m.label),
            c = m.color
        );
    }
    for (l, (row, x)) in named.iter().zip(&layout) {
        let y = H + 2.0 + *row as f64 * LEGEND_ROW;
        let _ = write!(
            out,
            r##"<g class="legend-entry" stroke="{c}" fill="{c}"><line x1="{x:.1}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke-width="2"{}/>{}<text x="{:.1}" y="{:.1}" stroke="none" fill="#333">{}</text></g>"##,
            x + 24.0,
            if l.dash == Dash::None {
                r#" stroke-opacity="0""#
            } else {
                l.dash.attribute()
            },
            if l.markers {
                format!(
                    r#"<circle cx="{:.1}" cy="{y:.1}" r="3" stroke="none"/>"#,
                    x + 12.0
                )
            } else {
                String::new()
            },
            x + 28.0,
            y + 4.0,
            escape(&l.name),
            c = l.color
        );
    }
    out.push_str("</svg>");
    out
}
