//! Reports: they read only the report model (`model::Model`: the runs'
//! figures, each load curve's analysis, comparisons and indices, analysed
//! once per command), never the benchmarks or the store. Each output
//! format is one renderer behind one trait (`Render`), listed once in
//! `FORMATS`: terminal tables (`text`), Markdown, CSV, JSON and a
//! self-contained HTML page. The tables are built as sheets (`sheet`,
//! `layout`, and `curves` for load curves) that the formats draw alike.

pub mod colour;
pub mod cost;
pub mod csv;
pub mod curve_flags;
pub mod curves;
pub mod families;
pub mod fleet;
pub mod health;
pub mod history;
pub mod html;
pub mod hyperfine;
pub mod json;
pub mod layout;
pub mod markdown;
pub mod model;
pub mod run_export;
pub mod run_summary;
pub mod sanitize;
pub mod sheet;
pub mod spread;
pub mod tables;
pub mod terminal;
pub mod text;

pub use model::Model;

/// How `report` and `compare` lay their tables out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The older wide layout: runs as rows, one column per measurement.
    pub wide: bool,
    /// The width the tables must fit (a terminal's; `layout::DEFAULT_WIDTH`
    /// when not writing to one).
    pub width: usize,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            wide: false,
            width: layout::DEFAULT_WIDTH,
        }
    }
}

/// What a renderer's text is, for the writer: plain text is stripped of
/// control characters, JSON keeps them as escapes, a page is written whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Media {
    Text,
    Json,
    Html,
}

/// One output format: the model of `report`, `compare` or `show` as text.
pub trait Render: Sync {
    /// `report` (and `fleet report`): the summary of the model's runs.
    fn summary(&self, m: &Model) -> String;
    /// `compare`: the model's runs against the first, and the index.
    fn comparison(&self, m: &Model) -> String;
    /// `show`: the model's one run in full.
    fn run(&self, m: &Model) -> String;
    fn media(&self) -> Media {
        Media::Text
    }
    /// Whether it draws runs in detail (charts of every run, raw samples):
    /// then a model of more than `model::DETAIL_RUNS` runs carries the
    /// first of them whole (`Model::with_detail`).
    fn draws(&self) -> bool {
        false
    }
}

/// Every format, by the name `--format` takes: a new format is one file
/// and one line here.
const FORMATS: &[(&str, &dyn Render)] = &[
    ("table", &text::Text),
    ("csv", &csv::Csv),
    ("json", &json::Json),
    ("markdown", &markdown::Markdown),
    ("html", &html::Html),
];

/// An output format (an entry of `FORMATS`).
#[derive(Clone, Copy)]
pub struct Format(usize);

impl Format {
    /// The format called `name`.
    pub fn named(name: &str) -> Option<Format> {
        FORMATS.iter().position(|f| f.0 == name).map(Format)
    }

    /// Every format's name, in order.
    pub fn names() -> impl Iterator<Item = &'static str> {
        FORMATS.iter().map(|f| f.0)
    }

    pub fn name(self) -> &'static str {
        FORMATS[self.0].0
    }

    pub fn renderer(self) -> &'static dyn Render {
        FORMATS[self.0].1
    }
}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq for Format {
    fn eq(&self, other: &Format) -> bool {
        self.0 == other.0
    }
}

#[cfg(test)]
pub(crate) mod testdata;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{run, tcp_rr};
    use crate::text::CURVE_COMPARE_NOTE;
    use touchstone_analysis::table::Matrix;

    fn format(name: &str) -> &'static dyn Render {
        Format::named(name).unwrap().renderer()
    }

    /// The summary of `runs` in `order`, in the format called `name`.
    fn summary(runs: &[touchstone_results::Run], order: &[usize], name: &str) -> String {
        summary_with(runs, order, name, Layout::default())
    }

    fn summary_with(
        runs: &[touchstone_results::Run],
        order: &[usize],
        name: &str,
        l: Layout,
    ) -> String {
        let m = Matrix::build(runs).unwrap();
        format(name).summary(&Model::summary(m, order.to_vec(), l))
    }

    /// The base's tcp_rr, and another run 20 % faster at 2 CPUs that did
    /// not measure 1 CPU.
    fn two_runs() -> Vec<touchstone_results::Run> {
        let mut faster = tcp_rr();
        faster.points.retain(|p| p.cpus == 2);
        for p in &mut faster.points {
            p.throughput *= 1.2;
            p.throughput_half_width *= 1.2;
            for t in &mut p.trials {
                t.throughput *= 1.2;
            }
        }
        vec![
            run("aaaa0001", "alpha", vec![tcp_rr()]),
            run("bbbb0002", "beta", vec![faster]),
        ]
    }

    fn compared(name: &str) -> String {
        let runs = two_runs();
        let m = Matrix::build(&runs).unwrap();
        format(name).comparison(&Model::comparison(m, Layout::default()))
    }

    #[test]
    fn compare_shows_curves_point_by_point_with_peaks_and_knees() {
        let text = compared("table");
        for sheet in ["throughput point by point", "peaks and knees"] {
            let title = format!("Load curve tcp_rr size:4: {sheet}");
            assert!(text.contains(&title), "{title}: {text}");
        }
        // Load 2 at 2 CPUs: 50.00 → 60.00, tight intervals: faster.
        let row = text
            .lines()
            .find(|l| l.contains(" 50.00 "))
            .expect("the load-2 row");
        assert!(row.contains(" 60.00 ") && row.contains("faster"), "{row}");
        assert!(row.contains("1.200 ["), "{row}");
        // Load 4 did not converge (±10 %): 1.2× is not claimed.
        let row = text.lines().find(|l| l.contains(" 88.00 !")).unwrap();
        assert!(row.contains(" ~ "), "{row}");
        assert!(
            row.contains("105.6 !"),
            "both flagged as unconverged: {row}"
        );
        // 1 CPU: the other run lacks it.
        assert!(text
            .lines()
            .any(|l| l.contains(" 25.00 ") && l.contains("missing")));
        // Peaks side by side: both at load 8, knee at 4 in both.
        let peak = text.lines().find(|l| l.contains("105.0 at 8")).unwrap();
        assert!(
            peak.contains("126.0 at 8") && peak.contains("┆ 4 "),
            "{peak}"
        );
        assert!(peak.contains("faster"), "{peak}");
        assert!(text.contains(CURVE_COMPARE_NOTE));

        let csv = compared("csv");
        let line = csv
            .lines()
            .find(|l| {
                l.starts_with("curve,tcp_rr/size:4/cpus:2/load:2,2,ops/s,aaaa0001,50000,bbbb0002,")
            })
            .unwrap_or_else(|| panic!("{csv}"));
        assert!(line.ends_with(",faster"), "{line}");
        assert!(csv.contains("curve,tcp_rr/size:4/cpus:2/load:2/p99,2,ns,"));
        assert!(csv.contains("curve,tcp_rr/size:4/cpus:2/peak,,ops/s,"));
        assert!(csv.lines().any(
            |l| l.starts_with("curve,tcp_rr/size:4/cpus:1/load:1,") && l.ends_with(",missing")
        ));

        let json: serde_json::Value = serde_json::from_str(&compared("json")).unwrap();
        let curves = &json["curves"][0]["curves"][0];
        assert_eq!(curves["workload"], "tcp_rr");
        let p = curves["points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["cpus"] == 2 && p["load"] == 2)
            .unwrap();
        assert_eq!(p["verdict"], "faster");
        let md = compared("markdown");
        assert!(
            md.contains("## Load curve tcp_rr size:4: peaks and knees"),
            "{md}"
        );
    }

    #[test]
    fn the_summary_exports_carry_one_row_per_point() {
        let runs = two_runs();
        // Runs across: one line per point (8 loads over both CPU counts,
        // the union of both runs) and figure; the run lacking it is empty.
        let csv = summary(&runs, &[0, 1], "csv");
        assert!(csv.starts_with(
            "group,family,measurement,parallel,case,sweep,sweep_value,unit,aaaa0001,bbbb0002\n"
        ));
        assert_eq!(csv.lines().count(), 1 + 8 * 7, "{csv}");
        assert!(
            csv.contains(
                "curve,tcp_rr,tcp_rr/size:4/cpus:2/load:8/throughput,8,cpus:2 throughput,load,8,ops/s,105000,126000"
            ),
            "{csv}"
        );
        assert!(csv.contains("cpus:1/load:1/throughput,1,cpus:1 throughput,load,1,ops/s,25000,\n"));
        // The wide CSV: a run per line, points after.
        let wide = Layout {
            wide: true,
            ..Layout::default()
        };
        let csv = summary_with(&runs, &[0, 1], "csv", wide);
        let mut lines = csv.lines();
        let head = lines.next().unwrap();
        assert!(
            head.starts_with(
                "run,host,label,started,workload,params,operation,cpus,load,throughput (ops/s),"
            ),
            "{head}"
        );
        // Two run lines, then 8 + 5 points.
        assert_eq!(csv.lines().count(), 1 + 2 + 8 + 5);
        let point = csv
            .lines()
            .find(|l| {
                l.starts_with("aaaa0001,alpha,,")
                    && l.contains(",tcp_rr,size:4,transaction,2,8,105000,")
            })
            .unwrap_or_else(|| panic!("{csv}"));
        assert_eq!(point.split(',').count(), head.split(',').count());
        let json: serde_json::Value =
            serde_json::from_str(&summary(&runs, &[0, 1], "json")).unwrap();
        let c = &json["curves"][0];
        assert_eq!(c["points"].as_array().unwrap().len(), 8);
        assert_eq!(c["points"][0]["latency_ns"]["p99"], 120_063);
        let two = &c["analysis"]["by_cpus"][1];
        assert_eq!(two["cpus"], 2);
        assert_eq!(two["knee"]["load"], 4.0);
        assert!(c["analysis"]["by_cpus"][0]["knee"]["not_detected"].is_string());
        assert_eq!(
            c["analysis"]["scaling"]["usl"]["not_fitted"]
                .as_str()
                .unwrap(),
            "the USL needs at least 3 distinct loads to fit 3 coefficients; got 2"
        );
        let md = summary(&runs, &[0, 1], "markdown");
        assert!(md.contains("### tcp_rr size:4 · 2 CPUs (0,1)"), "{md}");
        assert!(md.contains("| 8 | 105.0 ± 1.6 |"), "{md}");
        let table = summary(&runs, &[0, 1], "table");
        assert!(
            table.contains("Load curves of run alpha aaaa0001"),
            "{table}"
        );
        assert!(
            !table.contains("Medians, one unit per column"),
            "no measurements, no summary table"
        );
    }
}
