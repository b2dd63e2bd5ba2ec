//! The charts' tests: ticks, labels, axes, well-formed SVG at the size
//! shown.

use super::histogram::{HIST_H, HIST_W};
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
