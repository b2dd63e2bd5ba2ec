//! E-divisive change points of series read from standard input, one series
//! a line (numbers separated by spaces), written one line each: the
//! positions, space-separated (an empty line when there are none). For
//! comparing `touchstone_analysis::change_points` with another
//! implementation on the same series (docs/validation.md):
//!
//!   cargo run --release -p touchstone-analysis --example change_points \
//!       [-- PERMUTATIONS MAX_PVALUE SEED] < series.txt

use std::io::{BufRead, Write};

use touchstone_analysis::change_points::{e_divisive, Options};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut options = Options::default();
    if let Some(p) = args.first() {
        options.permutations = p.parse().expect("PERMUTATIONS: a whole number");
    }
    if let Some(p) = args.get(1) {
        options.max_pvalue = p.parse().expect("MAX_PVALUE: a number");
    }
    if let Some(s) = args.get(2) {
        options.seed = s.parse().expect("SEED: a whole number");
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("standard input");
        let series: Vec<f64> = line
            .split_whitespace()
            .map(|v| v.parse().expect("a number"))
            .collect();
        let at: Vec<String> = e_divisive(&series, &options)
            .iter()
            .map(|c| c.index.to_string())
            .collect();
        writeln!(out, "{}", at.join(" ")).expect("standard output");
    }
}
