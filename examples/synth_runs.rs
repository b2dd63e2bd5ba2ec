//! Writes N synthetic runs into a results database, for timing reports:
//! `cargo run --release --example synth_runs -- DB N` (runs of about a
//! hundred measurements each), or `-- --farm DB N` (a farm's history: runs
//! of 302 measurements as the harness stores them, intervals and warnings
//! included, on N/2 hosts; 1000 of them make the 0.8 GB store of
//! docs/validation.md, "The store at scale"). Never point it at a
//! database you care about.

#[path = "../tests/support/synth.rs"]
mod synth;

use touchstone_results::store::{Open, Store};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let farm = args.first().is_some_and(|a| a == "--farm");
    if farm {
        args.remove(0);
    }
    if args.len() != 2 {
        eprintln!("usage: synth_runs [--farm] DB N");
        std::process::exit(2);
    }
    let n: usize = args[1].parse().expect("N is a number");
    let mut store =
        Store::open(std::path::Path::new(&args[0]), Open::CreateIfMissing).expect("store");
    let run = |i: usize| {
        if farm {
            return synth::farm_run(i, (n / 2).max(1));
        }
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
    };
    // Fifty runs to a transaction: a farm's thousand never all in memory.
    let mut per_run = 0;
    for start in (0..n).step_by(50) {
        let runs: Vec<_> = (start..(start + 50).min(n)).map(run).collect();
        per_run = runs[0].measurements.len();
        store.import_runs(&runs).expect("import");
    }
    println!("{n} runs of {per_run} measurements written to {}", args[0]);
}
