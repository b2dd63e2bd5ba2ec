//! Raw command-line arguments (clap). They become a checked plan in the
//! commands before anything runs.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "touchstone",
    version,
    about = "Measure what a machine and its OS really do, and compare machines side by side",
    after_help = "Results go to an SQLite store (--db, $TOUCHSTONE_DB, default ~/.local/share/touchstone/results.sqlite)."
)]
pub struct Cli {
    /// The results database.
    #[arg(long, global = true, env = "TOUCHSTONE_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List the benchmarks with their groups, parameters and descriptions.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Run the default suite, or the named benchmarks and groups, and store the results.
    Run(RunArgs),
    /// List stored runs.
    Runs {
        #[arg(long)]
        json: bool,
    },
    /// Show one stored run (an id or unique prefix, a label, `last` or `last~N`).
    Show {
        run: String,
        #[arg(long)]
        json: bool,
    },
    /// Export runs (default: all) as a versioned JSON document.
    Export {
        runs: Vec<String>,
        /// Write here instead of standard output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Import runs from JSON documents written by `export` (all or nothing per call;
    /// every run checked first, see docs/results-format.md). `-` reads standard input.
    Import {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Time any command with the harness's rigour (warm-up, repetitions, median and CI,
    /// CPU time, peak memory) and store it as `app/NAME` next to the micro-benchmarks.
    App(AppArgs),
    /// Which benchmarks predict an application's time across machines, and a model
    /// that predicts it where only micro-benchmarks were run.
    Predict(PredictArgs),
    /// Summary of runs side by side (default: all stored runs), grouped like lmbench's tables.
    Report(ReportArgs),
    /// Each run's figures as ratios to a base run, with significance marks and an index.
    Compare(CompareArgs),
}

#[derive(Args, Debug)]
pub struct AppArgs {
    /// The measurement is stored as `app/NAME` (default: the program's file name).
    #[arg(short, long)]
    pub name: Option<String>,
    /// Timed runs (the median is reported).
    #[arg(short = 'r', long, value_name = "R")]
    pub repetitions: Option<u32>,
    /// Untimed runs before the timed ones (at least 1).
    #[arg(short = 'w', long, value_name = "K", default_value = "1")]
    pub warmup: u32,
    /// A shell command run, untimed, before every run (e.g. to restore input files).
    #[arg(long, value_name = "CMD")]
    pub setup: Option<String>,
    /// A shell command run, untimed, after every run (e.g. to remove output files).
    #[arg(long, value_name = "CMD")]
    pub cleanup: Option<String>,
    /// Let the command's standard output through (default: discarded, as hyperfine does).
    #[arg(long)]
    pub show_output: bool,
    /// A label for the run ("node-7 after BIOS update").
    #[arg(short, long)]
    pub label: Option<String>,
    /// Print the run as JSON on standard output.
    #[arg(long)]
    pub json: bool,
    /// Measure without storing.
    #[arg(long)]
    pub no_store: bool,
    /// The command and its arguments, after `--` (run directly, not through a shell).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct PredictArgs {
    /// The application: NAME as given to `touchstone app --name` (or `app/NAME`).
    pub app: String,
    /// Runs to use (ids, labels, `last`…; default: every stored run). Runs on the
    /// same host are merged into one machine, the newest figure winning.
    pub runs: Vec<String>,
    /// At most this many predictors in the model.
    #[arg(long, default_value = "2", value_name = "K")]
    pub max_predictors: usize,
    /// Print the analysis as JSON.
    #[arg(long)]
    pub json: bool,
}

/// How `report` and `compare` print.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    Table,
    Csv,
    Json,
    Markdown,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Runs: ids or unique prefixes, labels, `last`, `last~N`. None: every stored run.
    pub runs: Vec<String>,
    /// Order rows by a column: a measurement name (best first), `host`, `label`, `run` or `started`.
    #[arg(long, value_name = "COLUMN")]
    pub sort: Option<String>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: ReportFormat,
    /// Also write a self-contained HTML report with charts here.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the report here instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The base run (its figures are 1.0 and its index 100).
    pub base: String,
    /// The runs to compare with it.
    #[arg(required = true)]
    pub others: Vec<String>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: ReportFormat,
    /// Write the comparison here instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Benchmarks (`lat_syscall`, `lat_syscall/null,read`, `lat_ctx/procs:2,8`),
    /// workloads (`tcp_rr`, `tcp_rr/load:1,2,4`), groups (`proc`), `default`
    /// or `all`. None: the default suite.
    pub benchmarks: Vec<String>,
    /// Processes running each benchmark at once; a list measures each level (1,2,4).
    #[arg(short = 'P', long, value_delimiter = ',', default_value = "1")]
    pub parallel: Vec<u32>,
    /// Timed repetitions per measurement (the median is reported).
    #[arg(short = 'r', long, value_name = "R")]
    pub repetitions: Option<u32>,
    /// Quick mode: fewer, shorter intervals and smaller parameter sweeps.
    #[arg(short, long)]
    pub quick: bool,
    /// Target length of a single-process timing interval (e.g. 5ms).
    #[arg(long, value_name = "DURATION")]
    pub interval: Option<String>,
    /// Workloads: CPU counts to confine the whole workload to, each measured
    /// (1,2,4); counts beyond the machine's usable CPUs are noted and all of
    /// them measured instead. Default: all usable CPUs.
    #[arg(long, value_delimiter = ',', value_name = "K,…")]
    pub cpus: Vec<u32>,
    /// Workloads: repeat trials until the mean throughput's confidence
    /// interval is this narrow — CONFIDENCE,WIDTH in percent (netperf's -I):
    /// 95,5 = 95 % confidence, total width 5 % of the mean. Default 95,5.
    #[arg(long, value_name = "CONF,WIDTH")]
    pub converge: Option<String>,
    /// Workloads: the measurement window of each trial (default 3s; quick 500ms).
    #[arg(long, value_name = "DURATION")]
    pub window: Option<String>,
    /// Workloads: the warm-up before each trial's window (default 1s; quick 200ms).
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<String>,
    /// A label for the run ("node-7 after BIOS update").
    #[arg(short, long)]
    pub label: Option<String>,
    /// Print the run as JSON on standard output (progress stays on stderr).
    #[arg(long)]
    pub json: bool,
    /// Measure without storing.
    #[arg(long)]
    pub no_store: bool,
}
