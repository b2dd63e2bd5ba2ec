//! Hand-written inline SVG charts: line charts (linear or log-2 size axis),
//! overlaid histograms, and general plots with error bars, dashed lines,
//! marked points and a legend (load curves). Plain strings, no
//! dependencies, so the HTML report stays one self-contained file that any
//! browser draws.

use std::fmt::Write;

use touchstone_results::units::format_sig;

const W: f64 = 640.0;
const H: f64 = 320.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 44.0;

/// Colours for runs, in order; they repeat after twelve runs.
pub const PALETTE: [&str; 12] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#bcbd22", "#7f7f7f", "#393b79", "#637939",
];

pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Text made safe for XML/HTML content and attributes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// One line of a chart: a run's points, x ascending.
pub struct Series {
    pub name: String,
    pub color: &'static str,
    pub points: Vec<(f64, f64)>,
}

#[derive(Clone, Copy, PartialEq)]
pub enum XAxis {
    /// Plain numbers (process counts).
    Linear,
    /// Sizes in bytes on a log-2 axis labelled 4K, 1M, …
    LogBytes,
    /// Plain numbers on a log-2 axis (a doubling load ladder).
    Log2,
}

/// A size in bytes as an axis label: "512", "4K", "1.5M", "2G".
pub fn size_label(v: f64) -> String {
    let (d, s) = if v >= 1024.0 * 1024.0 * 1024.0 {
        (1024.0 * 1024.0 * 1024.0, "G")
    } else if v >= 1024.0 * 1024.0 {
        (1024.0 * 1024.0, "M")
    } else if v >= 1024.0 {
        (1024.0, "K")
    } else {
        (1.0, "")
    };
    let x = v / d;
    if (x - x.round()).abs() < 1e-9 {
        format!("{}{s}", x.round())
    } else {
        format!("{}{s}", format_sig(x))
    }
}

/// A tick label: four significant digits, trailing zeros dropped.
pub fn tick_text(v: f64) -> String {
    let t = format_sig(v);
    if t.contains('.') && !t.contains('e') {
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        t
    }
}

/// Round-number ticks covering [lo, hi] (1, 2 or 5 × 10^k apart).
pub fn nice_ticks(lo: f64, hi: f64, want: usize) -> Vec<f64> {
    if !(hi > lo) || !lo.is_finite() || !hi.is_finite() {
        return vec![lo];
    }
    let raw = (hi - lo) / want.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    // Each tick is an integer count of steps, computed as a decimal
    // (integer × 10^e, or integer / 10^−e) so that ticks stay exact round
    // numbers instead of accumulating the steps' binary rounding.
    let exp = mag.log10().round() as i32;
    let unit = (step / mag).round(); // 1, 2, 5 or 10
    let decimal = |k: f64| {
        if exp >= 0 {
            k * unit * 10f64.powi(exp)
        } else {
            k * unit / 10f64.powi(-exp)
        }
    };
    let first = (lo / step - 1e-9).ceil();
    let last = (hi / step + 1e-9).floor();
    let mut out = Vec::new();
    let mut k = first;
    while k <= last {
        out.push(if k == 0.0 { 0.0 } else { decimal(k) });
        k += 1.0;
    }
    out
}

/// A log axis fitted to figures in [lo, hi] (both > 0): from the largest
/// 1-2-5 value at or below `lo` to the smallest at or above `hi`, so the
/// data fill the plot (0.9–11 ns gets 0.5–20, not 0.1–100). Ticks at
/// every 1-2-5 value in between, or only the decades and the two ends
/// when that would be more than ten.
pub fn log_axis(lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
    let steps = |e: i32| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e));
    let (a, b) = (lo.log10().floor() as i32 - 1, hi.log10().ceil() as i32 + 1);
    let all: Vec<f64> = (a..=b).flat_map(steps).collect();
    // Compare with a little slack so a figure of exactly 10 sits on 10.
    let y0 = all
        .iter()
        .copied()
        .filter(|v| *v <= lo * (1.0 + 1e-9))
        .fold(f64::NAN, f64::max);
    let mut y1 = all
        .iter()
        .copied()
        .find(|v| *v >= hi * (1.0 - 1e-9))
        .unwrap_or(hi);
    let y0 = if y0.is_finite() { y0 } else { lo };
    if y1 <= y0 {
        y1 = all.iter().copied().find(|v| *v > y0).unwrap_or(y0 * 2.0);
    }
    let inside: Vec<f64> = all
        .into_iter()
        .filter(|v| *v >= y0 * (1.0 - 1e-9) && *v <= y1 * (1.0 + 1e-9))
        .collect();
    let ticks = if inside.len() <= 10 {
        inside
    } else {
        let decade = |v: f64| (v.log10() - v.log10().round()).abs() < 1e-9;
        let n = inside.len();
        inside
            .into_iter()
            .enumerate()
            .filter(|(i, v)| *i == 0 || *i == n - 1 || decade(*v))
            .map(|(_, v)| v)
            .collect()
    };
    (y0, y1, ticks)
}

/// Ticks of a linear x axis over whole numbers (process counts, loads):
/// every x the data hold when there are at most twelve, so each measured
/// count is labelled; otherwise whole round numbers.
fn count_ticks(xs: &[f64], x0: f64, x1: f64) -> Vec<(f64, String)> {
    let mut distinct: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    let ticks = if !distinct.is_empty() && distinct.len() <= 12 {
        distinct
    } else {
        nice_ticks(x0, x1, 6)
            .into_iter()
            .filter(|v| v.fract() == 0.0)
            .collect()
    };
    ticks.into_iter().map(|v| (v, tick_text(v))).collect()
}

/// Powers of two within [x0, x1] as ticks, at most about ten of them,
/// labelled as sizes or plain numbers.
fn log2_ticks(x0: f64, x1: f64, xaxis: XAxis) -> Vec<(f64, String)> {
    let (a, b) = (x0.log2().floor() as i32, x1.log2().ceil() as i32);
    let step = ((b - a) / 10 + 1).max(1);
    (a..=b)
        .filter(|e| (e - a) % step == 0)
        .map(|e| 2f64.powi(e))
        .filter(|v| *v >= x0 * 0.999 && *v <= x1 * 1.001)
        .map(|v| (v, x_text(xaxis, v)))
        .collect()
}

/// An x value as its axis writes it.
fn x_text(xaxis: XAxis, x: f64) -> String {
    match xaxis {
        XAxis::LogBytes => size_label(x),
        XAxis::Linear | XAxis::Log2 => tick_text(x),
    }
}

struct Frame {
    /// The chart's size in viewBox units.
    w: f64,
    h: f64,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    xaxis: XAxis,
    ylog: bool,
}

impl Frame {
    fn fx(&self, x: f64) -> f64 {
        let (a, b, v) = match self.xaxis {
            XAxis::Linear => (self.x0, self.x1, x),
            XAxis::LogBytes | XAxis::Log2 => (self.x0.log2(), self.x1.log2(), x.log2()),
        };
        let t = if b > a { (v - a) / (b - a) } else { 0.5 };
        LEFT + t * (self.w - LEFT - RIGHT)
    }
    fn fy(&self, y: f64) -> f64 {
        let (a, b, v) = if self.ylog {
            (self.y0.log10(), self.y1.log10(), y.max(self.y0).log10())
        } else {
            (self.y0, self.y1, y)
        };
        let t = if b > a { (v - a) / (b - a) } else { 0.5 };
        self.h - BOTTOM - t * (self.h - TOP - BOTTOM)
    }
}

fn open_svg(out: &mut String, title: &str, kind: &str, (w, h): (f64, f64)) {
    let _ = write!(
        out,
        r#"<svg class="chart {kind}" viewBox="0 0 {w} {h}" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{t}"><title>{t}</title>"#,
        t = escape(title)
    );
}

fn axes(
    out: &mut String,
    f: &Frame,
    xticks: &[(f64, String)],
    yticks: &[(f64, String)],
    xl: &str,
    yl: &str,
) {
    let (l, r, t, b) = (LEFT, f.w - RIGHT, TOP, f.h - BOTTOM);
    for (y, label) in yticks {
        let py = f.fy(*y);
        let _ = write!(
            out,
            r#"<line class="grid" x1="{l}" x2="{r}" y1="{py:.1}" y2="{py:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            l - 4.0,
            py + 4.0,
            escape(label)
        );
    }
    for (x, label) in xticks {
        let px = f.fx(*x);
        let _ = write!(
            out,
            r#"<line class="grid" x1="{px:.1}" x2="{px:.1}" y1="{t}" y2="{b}"/><text class="tick" x="{px:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            b + 14.0,
            escape(label)
        );
    }
    let _ = write!(
        out,
        r#"<path class="axis" d="M{l},{t}V{b}H{r}"/><text class="label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text class="label" transform="translate(14,{:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (l + r) / 2.0,
        f.h - 6.0,
        escape(xl),
        (t + b) / 2.0,
        escape(yl)
    );
}

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
    let (y0, y1, yticks) = if ylog {
        log_axis(ymin, ymax)
    } else {
        let t = nice_ticks(0.0, if ymax > 0.0 { ymax } else { 1.0 }, 5);
        let y1 = t.last().copied().unwrap_or(1.0).max(ymax);
        (0.0, y1, t)
    };
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
    let (mut x0, mut x1) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    if !x0.is_finite() {
        (x0, x1) = (1.0, 2.0);
    }
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
    let (y0, y1, yticks) = if ylog {
        log_axis(ymin_pos, ymax)
    } else {
        let t = nice_ticks(0.0, if ymax > 0.0 { ymax } else { 1.0 }, 6);
        let y1 = t.last().copied().unwrap_or(1.0).max(ymax);
        (0.0, y1, t)
    };
    let f = Frame {
        w: W,
        h: H,
        x0,
        x1,
        y0,
        y1,
        xaxis: p.xaxis,
        ylog,
    };
    let xticks: Vec<(f64, String)> = match p.xaxis {
        XAxis::Linear => {
            // The measured loads (layers with markers), not a fitted line's samples.
            let measured: Vec<f64> = p
                .layers
                .iter()
                .filter(|l| l.markers)
                .flat_map(|l| l.points.iter().map(|q| q.0))
                .collect();
            count_ticks(&measured, x0, x1)
        }
        XAxis::LogBytes | XAxis::Log2 => log2_ticks(x0, x1, p.xaxis),
    };
    let yt: Vec<(f64, String)> = yticks.iter().map(|&v| (v, tick_text(v))).collect();

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_labels() {
        assert_eq!(nice_ticks(0.0, 10.0, 5), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        // Exact decimals, not accumulated binary steps: 2 is 2.
        assert_eq!(nice_ticks(1.0, 2.0, 6), [1.0, 1.2, 1.4, 1.6, 1.8, 2.0]);
        assert_eq!(nice_ticks(0.0, 0.3, 3), [0.0, 0.1, 0.2, 0.3]);
        assert_eq!(size_label(4096.0), "4K");
        assert_eq!(size_label(1536.0 * 1024.0), "1.500M");
        assert_eq!(tick_text(20000.0), "20000");
        assert_eq!(tick_text(2.5), "2.5");
        assert_eq!(tick_text(0.0), "0");
        assert_eq!(escape("a<b&\"c\""), "a&lt;b&amp;&quot;c&quot;");
    }

    /// The tick labels of a chart, in document order.
    fn tick_labels(svg: &str) -> Vec<String> {
        svg.split(r#"<text class="tick""#)
            .skip(1)
            .map(|t| t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()].to_string())
            .collect()
    }

    #[test]
    fn a_log_axis_fits_the_data() {
        assert_eq!(
            log_axis(0.9, 11.0),
            (0.5, 20.0, vec![0.5, 1.0, 2.0, 5.0, 10.0, 20.0])
        );
        assert_eq!(log_axis(1.0, 10.0).0, 1.0);
        assert_eq!(log_axis(1.0, 10.0).1, 10.0);
        // Four decades: the decades and the ends only.
        let (a, b, t) = log_axis(1.5, 30_000.0);
        assert_eq!((a, b), (1.0, 50_000.0));
        assert_eq!(t, [1.0, 10.0, 100.0, 1000.0, 10_000.0, 50_000.0]);
        let s = Series {
            name: "r".into(),
            color: color(0),
            points: vec![(1024.0, 0.9), (1048576.0, 11.0)],
        };
        let svg = line_chart("t", XAxis::LogBytes, "size", "ns", 1.0, true, &[s]);
        let labels = tick_labels(&svg);
        assert!(
            labels.contains(&"0.5".to_string()) && labels.contains(&"20".to_string()),
            "{labels:?}"
        );
        assert!(
            !labels.contains(&"0.1".to_string()) && !labels.contains(&"100".to_string()),
            "{labels:?}"
        );
    }

    #[test]
    fn every_process_count_is_labelled() {
        for xs in [
            vec![1.0, 2.0],
            vec![1.0, 2.0, 4.0, 8.0, 16.0],
            vec![1.0, 3.0],
        ] {
            let s = Series {
                name: "r".into(),
                color: color(0),
                points: xs.iter().map(|&x| (x, 1000.0 / x)).collect(),
            };
            let svg = line_chart("t", XAxis::Linear, "processes", "x", 1.0, false, &[s]);
            let labels = tick_labels(&svg);
            for x in &xs {
                assert!(
                    labels.contains(&tick_text(*x)),
                    "{x} not labelled: {labels:?}"
                );
            }
        }
    }

    #[test]
    fn histograms_are_drawn_at_the_size_they_are_shown() {
        let h = histogram(
            "h",
            "ns",
            1.0,
            &[("r".into(), color(1), &[1.0, 2.0, 2.0, 3.0][..])],
        );
        assert!(
            h.contains(&format!(r#"viewBox="0 0 {HIST_W} {HIST_H}""#)),
            "{h}"
        );
        // Labels stay inside the drawing.
        assert!(tick_labels(&h).len() >= 4);
    }

    #[test]
    fn charts_are_well_formed_svg() {
        let s = Series {
            name: "host <a>".into(),
            color: color(0),
            points: vec![(1024.0, 1.0), (1048576.0, 90.0)],
        };
        let svg = line_chart("t", XAxis::LogBytes, "size", "ns", 1.0, true, &[s]);
        assert!(
            svg.contains(">10<") && svg.contains(">100<"),
            "log ticks: {svg}"
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("host &lt;a&gt;") && svg.contains(">1K<") && svg.contains(">1M<"));
        let h = histogram(
            "h",
            "ns",
            1.0,
            &[("r".into(), color(1), &[1.0, 2.0, 2.0, 3.0][..])],
        );
        assert!(h.contains("<path class=\"bars\""));
    }
}
