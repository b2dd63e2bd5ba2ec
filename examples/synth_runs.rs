//! Writes N synthetic runs of about a hundred measurements each into a
//! results database, for timing reports: `cargo run --release --example
//! synth_runs -- DB N`. Never point it at a database you care about.

#[path = "../tests/support/synth.rs"]
mod synth;

use touchstone_results::store::{Open, Store};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: synth_runs DB N");
        std::process::exit(2);
    }
    let n: usize = args[2].parse().expect("N is a number");
    let runs: Vec<_> = (0..n)
        .map(|i| {
            let speed = 0.5 + (i % 10) as f64 * 0.15;
            synth::realistic(
                &format!(
                    "{:016x}",
                    (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ),
                &format!("node{i:02}"),
                speed,
                i as u64 + 1,
            )
        })
        .collect();
    let per_run = runs[0].measurements.len();
    let mut store =
        Store::open(std::path::Path::new(&args[1]), Open::CreateIfMissing).expect("store");
    store.import_runs(&runs).expect("import");
    println!("{n} runs of {per_run} measurements written to {}", args[1]);
}
