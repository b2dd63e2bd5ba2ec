//! Hand-written inline SVG charts: line charts (linear or log-2 size axis)
//! and overlaid histograms. Plain strings, no dependencies, so the HTML
//! report stays one self-contained file that any browser draws.

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
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

struct Frame {
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
            XAxis::LogBytes => (self.x0.log2(), self.x1.log2(), x.log2()),
        };
        let t = if b > a { (v - a) / (b - a) } else { 0.5 };
        LEFT + t * (W - LEFT - RIGHT)
    }
    fn fy(&self, y: f64) -> f64 {
        let (a, b, v) = if self.ylog {
            (self.y0.log10(), self.y1.log10(), y.max(self.y0).log10())
        } else {
            (self.y0, self.y1, y)
        };
        let t = if b > a { (v - a) / (b - a) } else { 0.5 };
        H - BOTTOM - t * (H - TOP - BOTTOM)
    }
}

fn open_svg(out: &mut String, title: &str, kind: &str) {
    let _ = write!(
        out,
        r#"<svg class="chart {kind}" viewBox="0 0 {W} {H}" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{t}"><title>{t}</title>"#,
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
    let (l, r, t, b) = (LEFT, W - RIGHT, TOP, H - BOTTOM);
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
        H - 6.0,
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
        let (a, b) = (ymin.log10().floor() as i32, ymax.log10().ceil() as i32);
        let ticks: Vec<f64> = (a..=b)
            .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
            .filter(|v| *v <= 10f64.powi(b))
            .collect();
        (10f64.powi(a), 10f64.powi(b), ticks)
    } else {
        let t = nice_ticks(0.0, if ymax > 0.0 { ymax } else { 1.0 }, 5);
        let y1 = t.last().copied().unwrap_or(1.0).max(ymax);
        (0.0, y1, t)
    };
    let f = Frame {
        x0,
        x1,
        y0,
        y1,
        xaxis,
        ylog,
    };
    let xticks: Vec<(f64, String)> = match xaxis {
        XAxis::Linear => {
            let t = nice_ticks(x0, x1, 6);
            let t: Vec<f64> = t.into_iter().filter(|v| v.fract() == 0.0).collect();
            t.into_iter().map(|v| (v, format!("{v}"))).collect()
        }
        XAxis::LogBytes => {
            let (a, b) = (x0.log2().floor() as i32, x1.log2().ceil() as i32);
            let step = ((b - a) / 10 + 1).max(1);
            (a..=b)
                .filter(|e| (e - a) % step == 0)
                .map(|e| 2f64.powi(e))
                .filter(|v| *v >= x0 * 0.999 && *v <= x1 * 1.001)
                .map(|v| (v, size_label(v)))
                .collect()
        }
    };
    let yt: Vec<(f64, String)> = yticks.iter().map(|&v| (v, tick_text(v))).collect();
    let mut out = String::new();
    open_svg(&mut out, title, "line");
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
            let xl = match xaxis {
                XAxis::Linear => format!("{x}"),
                XAxis::LogBytes => size_label(*x),
            };
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
    open_svg(&mut out, title, "hist");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_labels() {
        assert_eq!(nice_ticks(0.0, 10.0, 5), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(size_label(4096.0), "4K");
        assert_eq!(size_label(1536.0 * 1024.0), "1.500M");
        assert_eq!(tick_text(20000.0), "20000");
        assert_eq!(tick_text(2.5), "2.5");
        assert_eq!(tick_text(0.0), "0");
        assert_eq!(escape("a<b&\"c\""), "a&lt;b&amp;&quot;c&quot;");
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
