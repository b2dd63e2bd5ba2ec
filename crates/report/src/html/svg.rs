//! Hand-written inline SVG charts: line charts (linear or log-2 size axis),
//! overlaid histograms, and general plots with error bars, dashed lines,
//! marked points and a legend (load curves). Plain strings, no
//! dependencies, so the HTML report stays one self-contained file that any
//! browser draws. Here: the frame, axes, ticks and colours every chart
//! shares; each kind of chart in its own file under svg/.

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

/// The y axis over figures up to `hi`: a log axis fitted to [lo, hi], or
/// a linear one from 0 with about `want` round ticks; (y0, y1, ticks).
fn y_axis(log: bool, lo: f64, hi: f64, want: usize) -> (f64, f64, Vec<f64>) {
    if log {
        return log_axis(lo, hi);
    }
    let t = nice_ticks(0.0, if hi > 0.0 { hi } else { 1.0 }, want);
    let y1 = t.last().copied().unwrap_or(1.0).max(hi);
    (0.0, y1, t)
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

/// The range of the x values, (1, 2) when there are none.
fn x_range(xs: impl Iterator<Item = f64>) -> (f64, f64) {
    let (x0, x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if x0.is_finite() {
        (x0, x1)
    } else {
        (1.0, 2.0)
    }
}

/// The x axis's ticks: on a linear axis the counts `measured` (or round
/// numbers), on a log one powers of two.
fn x_ticks(xaxis: XAxis, measured: &[f64], (x0, x1): (f64, f64)) -> Vec<(f64, String)> {
    match xaxis {
        XAxis::Linear => count_ticks(measured, x0, x1),
        XAxis::LogBytes | XAxis::Log2 => log2_ticks(x0, x1, xaxis),
    }
}

/// A chart of the standard size (`W` × `H`) over [x0, x1], its y axis
/// fitted to figures from `lo` to `hi` with about `want` ticks (`y_axis`);
/// the frame and the y ticks labelled.
fn frame(
    xaxis: XAxis,
    (x0, x1): (f64, f64),
    ylog: bool,
    (lo, hi): (f64, f64),
    want: usize,
) -> (Frame, Vec<(f64, String)>) {
    let (y0, y1, yticks) = y_axis(ylog, lo, hi, want);
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
    (f, yticks.iter().map(|&v| (v, tick_text(v))).collect())
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
        escape(&y_axis_label(yl, f.ylog))
    );
}

/// The y axis's label says whether the axis drawn is logarithmic: the
/// charts ask for a log axis but get one only where the figures allow it,
/// so only the drawn axis can say which it is.
fn y_axis_label(label: &str, log: bool) -> String {
    match (log, label.strip_suffix(')')) {
        (false, _) => label.to_string(),
        (true, Some(open)) => format!("{open}, log scale)"),
        (true, None) => format!("{label} (log scale)"),
    }
}

mod histogram;
mod line_chart;
mod plot;
pub use histogram::histogram;
pub use line_chart::line_chart;
pub use plot::{plot, Dash, Layer, Mark, Plot};

#[cfg(test)]
mod tests;
