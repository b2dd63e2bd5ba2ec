//! `touchstone app`'s results in hyperfine's export shapes (those of
//! hyperfine 1.15), so what reads hyperfine's files reads these:
//! `--export-json`, `{"results": [{"command", "mean", "stddev", "median",
//! "user", "system", "min", "max", "times", "exit_codes"}]}` in seconds, and
//! `--export-markdown`, its table of mean ± standard deviation, min, max
//! and the mean relative to the fastest. Like hyperfine's, these are
//! computed from the timed runs alone; touchstone's own headline (the
//! median with its confidence interval) is in its table and `--json`.

use serde::Serialize;
use touchstone_results::Measurement;

/// One command's timed runs, in seconds, as hyperfine summarises them.
struct Timing {
    command: String,
    times: Vec<f64>,
    mean: f64,
    /// The sample standard deviation; none for a single run, as hyperfine.
    stddev: Option<f64>,
    user: f64,
    system: f64,
}

impl Timing {
    fn of(command: &str, m: &Measurement) -> Timing {
        // Each sample is one run of the program, in ns.
        let times: Vec<f64> = m.samples.iter().map(|ns| ns / 1e9).collect();
        let n = times.len() as f64;
        let mean = times.iter().sum::<f64>() / n;
        let stddev = (times.len() > 1)
            .then(|| (times.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt());
        let extra = |k: &str| m.extra.get(k).copied().filter(|x| x.is_finite());
        Timing {
            command: command.to_string(),
            times,
            mean,
            stddev,
            user: extra("user_cpu_s").unwrap_or(0.0),
            system: extra("system_cpu_s").unwrap_or(0.0),
        }
    }

    fn min(&self) -> f64 {
        self.times.iter().copied().fold(f64::INFINITY, f64::min)
    }

    fn max(&self) -> f64 {
        self.times.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }

    fn median(&self) -> f64 {
        let mut t = self.times.clone();
        t.sort_by(f64::total_cmp);
        let n = t.len();
        if n % 2 == 1 {
            t[n / 2]
        } else {
            (t[n / 2 - 1] + t[n / 2]) / 2.0
        }
    }
}

fn timings(commands: &[(String, &Measurement)]) -> Vec<Timing> {
    commands
        .iter()
        .filter(|(_, m)| !m.samples.is_empty())
        .map(|(c, m)| Timing::of(c, m))
        .collect()
}

/// hyperfine's JSON export: `commands` pairs what hyperfine would call
/// the command (its name when one was given, else the command line) with
/// its measurement. Every timed run exited 0, or there would be no figure.
pub fn json(commands: &[(String, &Measurement)]) -> String {
    /// hyperfine's fields, in its order.
    #[derive(Serialize)]
    struct Entry<'a> {
        command: &'a str,
        mean: f64,
        stddev: Option<f64>,
        median: f64,
        user: f64,
        system: f64,
        min: f64,
        max: f64,
        times: &'a [f64],
        exit_codes: Vec<i32>,
    }
    #[derive(Serialize)]
    struct Export<'a> {
        results: Vec<Entry<'a>>,
    }
    let ts = timings(commands);
    let results = ts
        .iter()
        .map(|t| Entry {
            command: &t.command,
            mean: t.mean,
            stddev: t.stddev,
            median: t.median(),
            user: t.user,
            system: t.system,
            min: t.min(),
            max: t.max(),
            times: &t.times,
            exit_codes: vec![0; t.times.len()],
        })
        .collect();
    let mut text =
        serde_json::to_string_pretty(&Export { results }).expect("numbers and strings serialise");
    text.push('\n');
    text
}

/// hyperfine's Markdown export: one row per command in the order given;
/// milliseconds when the first command's mean is under a second, else
/// seconds; the relative column is each mean over the fastest mean, with
/// the error propagated from both standard deviations.
pub fn markdown(commands: &[(String, &Measurement)]) -> String {
    let ts = timings(commands);
    let Some(first) = ts.first() else {
        return String::new();
    };
    let (unit, scale, digits) = if first.mean < 1.0 {
        ("ms", 1e3, 1)
    } else {
        ("s", 1.0, 3)
    };
    let form = |x: f64| format!("{:.*}", digits, x * scale);
    let fastest = ts
        .iter()
        .min_by(|a, b| a.mean.total_cmp(&b.mean))
        .expect("one at least");
    let mut out = format!(
        "| Command | Mean [{unit}] | Min [{unit}] | Max [{unit}] | Relative |\n|:---|---:|---:|---:|---:|\n"
    );
    for t in &ts {
        let stddev = t
            .stddev
            .map(|s| format!(" ± {}", form(s)))
            .unwrap_or_default();
        let ratio = t.mean / fastest.mean;
        let relative_error = if std::ptr::eq(t, fastest) {
            None
        } else {
            t.stddev
                .zip(fastest.stddev)
                .map(|(s, fs)| ratio * ((s / t.mean).powi(2) + (fs / fastest.mean).powi(2)).sqrt())
        };
        out += &format!(
            "| `{}` | {}{stddev} | {} | {} | {ratio:.2}{} |\n",
            t.command.replace('|', "\\|"),
            form(t.mean),
            form(t.min()),
            form(t.max()),
            relative_error
                .map(|e| format!(" ± {e:.2}"))
                .unwrap_or_default(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// An app measurement whose timed runs took `ns` each.
    fn measurement(name: &str, ns: &[f64]) -> Measurement {
        let mut m = crate::testdata::measurement(name, "app", touchstone_results::Unit::Ns, 1, 1.0);
        m.samples = ns.to_vec();
        m
    }

    /// Three runs per command, as hyperfine 1.15 exported them for
    /// `hyperfine -N -r 3 -n s -n t 'sleep 0.01' true` (times in ns here).
    fn pair() -> Vec<Measurement> {
        let mut s = measurement("app/s", &[11_340_348.0, 12_164_835.0, 11_448_360.0]);
        s.extra.insert("user_cpu_s".into(), 0.0011756666666666667);
        s.extra.insert("system_cpu_s".into(), 0.0);
        let t = measurement("app/t", &[3_916_791.0, 840_682.0, 615_744.0]);
        vec![s, t]
    }

    fn named(ms: &[Measurement]) -> Vec<(String, &Measurement)> {
        vec![("s".to_string(), &ms[0]), ("t".to_string(), &ms[1])]
    }

    #[test]
    fn the_markdown_table_is_hyperfines_to_the_character() {
        let ms = pair();
        // hyperfine 1.15's own file for the same times.
        assert_eq!(
            markdown(&named(&ms)),
            "| Command | Mean [ms] | Min [ms] | Max [ms] | Relative |\n\
             |:---|---:|---:|---:|---:|\n\
             | `s` | 11.7 ± 0.4 | 11.3 | 12.2 | 6.51 ± 6.70 |\n\
             | `t` | 1.8 ± 1.8 | 0.6 | 3.9 | 1.00 |\n"
        );
    }

    #[test]
    fn the_json_has_hyperfines_fields_in_seconds() {
        let ms = pair();
        let v: Value = serde_json::from_str(&json(&named(&ms))).unwrap();
        let s = &v["results"][0];
        assert_eq!(s["command"], "s");
        let close = |a: &Value, b: f64| (a.as_f64().unwrap() - b).abs() < 1e-12;
        assert!(close(&s["mean"], 0.011651181), "{s}");
        assert!(close(&s["stddev"], 0.0004481037511815763), "{s}");
        assert!(close(&s["median"], 0.01144836), "{s}");
        assert!(close(&s["min"], 0.011340348), "{s}");
        assert!(close(&s["max"], 0.012164835), "{s}");
        assert!(close(&s["user"], 0.0011756666666666667), "{s}");
        assert_eq!(s["times"].as_array().unwrap().len(), 3);
        assert_eq!(s["exit_codes"], json!([0, 0, 0]));
        // hyperfine's fields, in its order and no others.
        let text = json(&named(&ms));
        let fields = [
            "command",
            "mean",
            "stddev",
            "median",
            "user",
            "system",
            "min",
            "max",
            "times",
            "exit_codes",
        ];
        let at: Vec<usize> = fields
            .iter()
            .map(|f| text.find(&format!("\"{f}\":")).unwrap())
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{text}");
        assert_eq!(s.as_object().unwrap().len(), fields.len(), "{s}");
    }

    #[test]
    fn one_run_has_no_deviation_and_seconds_from_a_second_up() {
        let one = measurement("app/slow", &[1_101_471_454.0]);
        let cmds = vec![("sleep 1.1".to_string(), &one)];
        let v: Value = serde_json::from_str(&json(&cmds)).unwrap();
        assert!(v["results"][0]["stddev"].is_null());
        assert_eq!(
            markdown(&cmds),
            "| Command | Mean [s] | Min [s] | Max [s] | Relative |\n\
             |:---|---:|---:|---:|---:|\n\
             | `sleep 1.1` | 1.101 | 1.101 | 1.101 | 1.00 |\n"
        );
        let piped = measurement("app/sh", &[5_700_000.0]);
        assert!(markdown(&[("echo a|b".to_string(), &piped)]).contains("| `echo a\\|b` |"));
    }
}
