//! Raw command-line arguments (clap). They become a checked plan in the
//! commands before anything runs.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use touchstone_report::Format;

use crate::examples;
use crate::family_options::FamilyOptions;

#[derive(Parser, Debug)]
#[command(
    name = "touchstone",
    version,
    about = "Measure what a machine and its OS really do, and compare machines side by side",
    after_help = examples::MAIN
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
    #[command(after_help = examples::LIST)]
    List {
        #[arg(long)]
        json: bool,
    },
    /// Run the default suite, or the named benchmarks and groups, and store the results.
    #[command(after_help = examples::RUN)]
    Run(RunArgs),
    /// List stored runs (all, or those matching every filter given), each
    /// with what it measured (measurements, load curves, the families and
    /// workloads by name); `runs delete` and `runs relabel` change them.
    #[command(after_help = examples::RUNS)]
    Runs(RunsArgs),
    /// Show one stored run (an id or unique prefix, a label, `last` or `last~N`).
    #[command(after_help = examples::SHOW)]
    Show {
        run: String,
        /// The same as --format json.
        #[arg(long)]
        json: bool,
        /// table (default), csv (one row per measurement, stored units),
        /// markdown, json (the versioned document), or html (the page).
        #[arg(long, value_parser = format_parser())]
        format: Option<Format>,
        /// List every warning of the run and its measurements, one per line
        /// (the tables mark only those that can move a figure).
        #[arg(long, conflicts_with_all = ["json", "format"])]
        warnings: bool,
    },
    /// Export runs (default: all) as a versioned JSON document.
    #[command(after_help = examples::EXPORT)]
    Export {
        runs: Vec<String>,
        /// Write here instead of standard output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Import runs from JSON documents written by `export` (all or nothing per call;
    /// every run checked first, see docs/results-format.md). `-` reads standard input.
    #[command(after_help = examples::IMPORT)]
    Import {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Each host's price and power (by identity or host name): set on the
    /// command line, imported from a farm's file, listed. Reports divide
    /// the index by them; export and import carry them with the runs.
    #[command(after_help = examples::INVENTORY)]
    Inventory {
        #[command(subcommand)]
        action: InventoryAction,
    },
    /// Time any command with the harness's rigour (warm-up, repetitions, median and CI,
    /// CPU time, peak memory) and store it as `app/NAME` next to the micro-benchmarks.
    #[command(after_help = examples::APP)]
    App(AppArgs),
    /// Which benchmarks predict an application's time across machines, and a model
    /// that predicts it where only micro-benchmarks were run.
    #[command(after_help = examples::PREDICT)]
    Predict(PredictArgs),
    /// Summary of runs side by side (default: all stored runs), grouped like lmbench's tables.
    #[command(after_help = examples::REPORT)]
    Report(ReportArgs),
    /// Each run's figures as ratios to a base run, with significance marks and an index.
    #[command(after_help = examples::COMPARE)]
    Compare(CompareArgs),
    /// Judge this host's health: a few seconds of telling micro-benchmarks
    /// (or a stored run) against its own history and hosts of the same
    /// hardware. Exit 0 healthy, 1 degraded, 2 bad input.
    #[command(after_help = examples::CHECK)]
    Check(CheckArgs),
    /// A host's stored figures in time order, where they changed, by how
    /// much, and what changed on the machine then.
    #[command(after_help = examples::HISTORY)]
    History(HistoryArgs),
    /// Many hosts: run touchstone on each over OpenSSH or Slurm, import what
    /// they measure, and find the host that stands apart.
    #[command(after_help = examples::FLEET)]
    Fleet(FleetArgs),
    /// Serve the network benchmarks of another host (`lat_tcp/remote:ADDR:PORT`, …)
    /// on one address until the client that started it is gone.
    #[command(after_help = examples::SERVE)]
    Serve(ServeArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = examples::COMPLETIONS)]
    Completions { shell: clap_complete::Shell },
    /// Print the manual page (roff) generated from this command line, or
    /// write one page per subcommand into a directory.
    #[command(after_help = examples::MAN)]
    Man {
        /// Write touchstone.1, touchstone-run.1, … here instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RunsArgs {
    #[arg(long)]
    pub json: bool,
    /// Only runs whose label contains this text.
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// Only runs on hosts whose name contains this text.
    #[arg(long, value_name = "TEXT")]
    pub host: Option<String>,
    /// Only runs started at or after: a date (2026-11-01), a UTC time
    /// (2026-11-01T14:00), or an age (90m, 12h, 7d, 2w).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only runs started before: a date (the whole day included), a UTC
    /// time, or an age (as --since).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    #[command(subcommand)]
    pub action: Option<RunsAction>,
}

#[derive(Subcommand, Debug)]
pub enum RunsAction {
    /// Delete stored runs with their measurements and curves (also a run
    /// whose stored documents no longer read). Asks first on a terminal.
    #[command(after_help = examples::RUNS_DELETE)]
    Delete {
        /// Runs: ids or unique prefixes, labels, `last`, `last~N`.
        #[arg(required = true)]
        runs: Vec<String>,
        /// Do not ask for confirmation.
        #[arg(short, long)]
        yes: bool,
    },
    /// Give a stored run a new label ("" removes it). Asks first on a terminal.
    #[command(after_help = examples::RUNS_RELABEL)]
    Relabel {
        /// The run: an id or unique prefix, a label, `last` or `last~N`.
        run: String,
        label: String,
        /// Do not ask for confirmation.
        #[arg(short, long)]
        yes: bool,
    },
}

/// `app`'s options carry hyperfine's names where hyperfine has the same
/// thing (`-p/--prepare`, `-s/--setup`, `-c/--cleanup`, `--conclude`,
/// `-n/--command-name`, `-r/--runs`, `--export-json`, `--export-markdown`,
/// commands as arguments); touchstone's own spellings stay as aliases
/// where they mean the same (`--name`, `--repetitions`, `--command`).
#[derive(Args, Debug)]
pub struct AppArgs {
    /// Commands to time, each one string split into words as a shell would
    /// (quotes respected; no globbing, variables or pipes) and run directly,
    /// as hyperfine -N: `touchstone app 'gzip -k big' 'zstd -k big'`. For a
    /// pipeline, time `sh -c '…'`.
    #[arg(value_name = "COMMAND")]
    pub commands: Vec<String>,
    /// A command to time, given as an option (repeatable): the same as
    /// giving it as an argument; not both ways at once.
    #[arg(long = "command", value_name = "CMD", conflicts_with = "commands")]
    pub command_options: Vec<String>,
    /// The measurement is stored as `app/NAME` (default: the program's file
    /// name). With several commands, give one per command, in order.
    #[arg(short, long, visible_alias = "command-name", value_name = "NAME")]
    pub name: Vec<String>,
    /// Timed runs of each command (the median is reported).
    #[arg(short = 'r', long, visible_alias = "runs", value_name = "R")]
    pub repetitions: Option<u32>,
    /// Untimed runs before the timed ones (at least 1).
    #[arg(short = 'w', long, value_name = "K", default_value = "1")]
    pub warmup: u32,
    /// A shell command run, untimed, before every run of the command,
    /// warm-ups included (e.g. to restore its input files). Once for all
    /// commands, or once per command, in order (as hyperfine's --prepare).
    #[arg(short = 'p', long, value_name = "CMD")]
    pub prepare: Vec<String>,
    /// A shell command run, untimed, after every run (hyperfine's
    /// --conclude). Once for all commands, or once per command.
    #[arg(long, value_name = "CMD")]
    pub conclude: Vec<String>,
    /// A shell command run once before each command's runs (warm-ups
    /// included), as hyperfine's --setup (e.g. to build what is timed).
    /// Once for all commands, or once per command.
    #[arg(short = 's', long, value_name = "CMD")]
    pub setup: Vec<String>,
    /// A shell command run once after each command's timed runs, as
    /// hyperfine's --cleanup (e.g. to remove what they made); not run when
    /// a run fails. Once for all commands, or once per command.
    #[arg(short = 'c', long, value_name = "CMD")]
    pub cleanup: Vec<String>,
    /// Write the results as hyperfine's JSON export (times in seconds:
    /// mean, stddev, median, user, system, min, max, every timed run).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Write the results as hyperfine's Markdown table (mean ± standard
    /// deviation, min, max, relative to the fastest mean).
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Accepted for hyperfine's sake (its --shell=none): commands always
    /// run directly, without a shell.
    #[arg(short = 'N')]
    pub no_shell: bool,
    /// Let the command's standard output and error through (default: both
    /// discarded, as hyperfine does; a failing command's status is still reported).
    #[arg(long)]
    pub show_output: bool,
    /// Kill a run of the command (with everything it started) that takes
    /// longer than this, and fail the measurement (e.g. 30s, 10m, 2h).
    /// Applies to the --prepare, --conclude, --setup and --cleanup commands
    /// too. Default: no limit.
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// A label for the run ("node-7 after BIOS update").
    #[arg(short, long)]
    pub label: Option<String>,
    /// Print the run as JSON on standard output.
    #[arg(long)]
    pub json: bool,
    /// Measure without storing.
    #[arg(long)]
    pub no_store: bool,
    /// One program and its arguments as separate words, after `--` (run
    /// directly, nothing split): `touchstone app -- ./reco --events 1000`.
    #[arg(last = true, value_name = "PROGRAM ARGS")]
    pub argv: Vec<String>,
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

/// `--format NAME`: one of the report formats (`touchstone_report::Format`).
#[derive(Subcommand, Debug)]
pub enum InventoryAction {
    /// Set a host's price (with its currency and date) and power; figures
    /// not given keep what was stored.
    #[command(after_help = examples::INVENTORY_SET)]
    Set(InventorySetArgs),
    /// Set the inventory of a whole farm from a CSV file (a header line:
    /// host,price,currency,date,watts_idle,watts_busy,watts_nameplate) or a
    /// TOML file of [[host]] tables: all or nothing, a bad row named by its line.
    #[command(after_help = examples::INVENTORY_IMPORT)]
    Import { file: PathBuf },
    /// List every host's inventory.
    #[command(after_help = examples::INVENTORY_LIST)]
    List {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Debug)]
pub struct InventorySetArgs {
    /// The host: its identity (name#machine-id, as `runs` and reports show
    /// it) or its name. Default: this host's identity.
    pub host: Option<String>,
    /// What the host cost (needs --currency and --date).
    #[arg(long, value_name = "AMOUNT")]
    pub price: Option<f64>,
    /// The price's currency, an ISO 4217 code (EUR, USD, CHF…).
    #[arg(long, value_name = "CODE")]
    pub currency: Option<String>,
    /// When the price was paid or quoted (YYYY-MM-DD).
    #[arg(long, value_name = "DATE")]
    pub date: Option<String>,
    /// Measured watts at idle.
    #[arg(long, value_name = "W")]
    pub watts_idle: Option<f64>,
    /// Measured watts under load (what per-watt figures divide by).
    #[arg(long, value_name = "W")]
    pub watts_busy: Option<f64>,
    /// The power supply's rating (per-watt figures use it when no busy watts are known).
    #[arg(long, value_name = "W")]
    pub watts_nameplate: Option<f64>,
}

fn format_parser() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Format::names())
        .map(|name| Format::named(&name).expect("a format's own name"))
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Runs: ids or unique prefixes, labels, `last`, `last~N`. None: every stored run.
    pub runs: Vec<String>,
    /// Order rows by a column: a measurement name (best first), `host`, `label`, `run` or `started`;
    /// or by `index`, `per-price` or `per-watt` (the index per 1,000 of the currency or per watt,
    /// from the hosts' inventory), best first.
    #[arg(long, value_name = "COLUMN")]
    pub sort: Option<String>,
    /// The format of the report (default: table; with --html, no text
    /// report unless a format or -o is given).
    #[arg(long, value_parser = format_parser())]
    pub format: Option<Format>,
    /// The wide layout: one row per run, one column per measurement (the
    /// default: one table per benchmark family, sweeps down the rows, runs across).
    #[arg(long)]
    pub wide: bool,
    /// Write a self-contained HTML report with charts here (only that,
    /// unless --format or -o asks for the text report too).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the report here instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// How `check` prints its verdict.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckFormat {
    /// One line per finding, then what was judged.
    Table,
    Json,
    /// The line an LBNL NHC check function passes to `die`; nothing when healthy.
    Nhc,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Benchmarks to run instead of the check suite (as `run` takes them).
    pub benchmarks: Vec<String>,
    /// Judge this stored run (an id or unique prefix, a label, `last`) instead of running.
    #[arg(long, value_name = "RUN", conflicts_with_all = ["benchmarks", "repetitions", "no_store", "label"])]
    pub run: Option<String>,
    /// Timed repetitions per measurement.
    #[arg(short = 'r', long, value_name = "R")]
    pub repetitions: Option<u32>,
    /// Do not store the check's run (stored by default, labelled `check`, so
    /// that later checks and `history` have it).
    #[arg(long)]
    pub no_store: bool,
    /// The stored run's label.
    #[arg(short, long, default_value = "check")]
    pub label: String,
    #[arg(long, value_enum, default_value = "table")]
    pub format: CheckFormat,
}

/// How `history` prints.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistoryFormat {
    /// A line per benchmark with a sparkline, then its change points.
    Table,
    Json,
    /// One line per figure with its interval.
    Csv,
}

#[derive(Args, Debug)]
pub struct HistoryArgs {
    /// Benchmarks to show: names, or their leading segments (`lat_mem_rd`);
    /// default: every figure stored (each curve by its peak).
    pub benchmarks: Vec<String>,
    /// The host, by name as `touchstone runs` shows it (default: this one).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: HistoryFormat,
    /// Write a self-contained HTML page here instead: a chart per
    /// benchmark with its change points marked.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The base run (its figures are 1.0 and its index 100).
    pub base: String,
    /// The runs to compare with it.
    #[arg(required = true)]
    pub others: Vec<String>,
    #[arg(long, value_parser = format_parser(), default_value = "table")]
    pub format: Format,
    /// The wide layout: one table per report group (the default: one table
    /// per benchmark family, sweeps down the rows, runs across).
    #[arg(long)]
    pub wide: bool,
    /// Write the comparison here instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Order the runs by `index`, `per-price` or `per-watt` (from the hosts' inventory), best first.
    #[arg(long, value_name = "KEY")]
    pub sort: Option<String>,
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
    /// Timed repetitions per process in each round (default 3).
    #[arg(short = 'r', long, value_name = "R")]
    pub repetitions: Option<u32>,
    /// Rounds per micro-benchmark case (default 5, quick 3): each round in
    /// fresh processes, the cases interleaved in a shuffled order; the
    /// headline is the median of the rounds and its interval covers
    /// another run's.
    #[arg(long, value_name = "K")]
    pub rounds: Option<u32>,
    /// The seed of the shuffled case order (recorded with the run; give a
    /// recorded one to repeat an order).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Quick mode: fewer rounds, shorter intervals and smaller parameter sweeps.
    #[arg(short, long)]
    pub quick: bool,
    /// Print every measurement's table at the end on a terminal too, instead
    /// of the run's summary (each family's headline; the tables stay in the
    /// store, `touchstone show RUN`). Off a terminal (a file, a pipe) the
    /// tables are always printed.
    #[arg(long)]
    pub tables: bool,
    /// Target length of a single-process timing interval (e.g. 5ms).
    #[arg(long, value_name = "DURATION")]
    pub interval: Option<String>,
    /// Workloads: CPU counts to confine the whole workload to, each measured
    /// (1,2,4); counts beyond the machine's usable CPUs are noted and all of
    /// them measured instead. Default: all usable CPUs.
    #[arg(long, value_delimiter = ',', value_name = "K,…")]
    pub cpus: Vec<u32>,
    /// Repeat until the confidence interval is this narrow — CONFIDENCE,WIDTH
    /// in percent (netperf's -I): 95,5 = 95 % confidence, total width 5 %.
    /// Workloads: trials until the mean throughput's interval converges
    /// (default 95,5). Micro-benchmarks (only when given): more rounds
    /// until the headline's interval does, at most 10 (quick 4).
    #[arg(long, value_name = "CONF,WIDTH")]
    pub converge: Option<String>,
    /// Workloads: the measurement window of each trial (default 3s; quick 500ms).
    #[arg(long, value_name = "DURATION")]
    pub window: Option<String>,
    /// Workloads: the warm-up before each trial's window (default 1s; quick 200ms).
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<String>,
    /// Workloads: the most one sweep should take. Every point runs its
    /// minimum of trials; beyond that a point stops when it has used its
    /// share of the time left and is flagged "cut by the budget". Default
    /// 22s per point (about 90 s for the default sweep on 2 CPUs); `none`:
    /// only the convergence rule decides.
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,
    /// A label for the run ("node-7 after BIOS update").
    #[arg(short, long)]
    pub label: Option<String>,
    /// Print the run as JSON on standard output (progress stays on stderr).
    #[arg(long)]
    pub json: bool,
    /// Measure without storing.
    #[arg(long)]
    pub no_store: bool,
    /// List the cases that would run and an estimate of the time they take,
    /// from the plan; run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The options of some families (`--dir`, `--postgres`, …), from the
    /// catalogue's table.
    #[command(flatten)]
    pub family: FamilyOptions,
}

#[derive(Args, Debug)]
pub struct FleetArgs {
    #[command(subcommand)]
    pub action: FleetCommand,
}

/// The ways of reaching many hosts.
#[derive(Subcommand, Debug)]
pub enum FleetCommand {
    /// Run a suite on every host over OpenSSH (BatchMode, your ssh config and
    /// keys), bring the results back and import them.
    #[command(after_help = examples::FLEET_RUN)]
    Run(FleetRunArgs),
    /// Run the suite on the nodes of a Slurm partition (one exclusive task
    /// per node, through srun or an sbatch array) and import the results.
    Slurm(SlurmArgs),
    /// The fleet's runs side by side, hosts grouped by hardware, and the
    /// hosts whose figures stand apart from their group flagged.
    #[command(after_help = examples::FLEET_REPORT)]
    Report(FleetReportArgs),
}

#[derive(Args, Debug)]
pub struct FleetRunArgs {
    /// The hosts: ssh destinations separated by commas, or @FILE (one a line, # comments).
    #[arg(long, value_name = "H,H…|@FILE")]
    pub hosts: String,
    /// Hosts worked on at once (network pairs always run one at a time).
    #[arg(long, value_name = "N", default_value = "1")]
    pub concurrent: usize,
    /// The most one host (or one pair) may take, including connecting and copying.
    #[arg(long, value_name = "DURATION", default_value = "1800s")]
    pub timeout: String,
    /// ssh's ConnectTimeout, also the keep-alive interval that notices a dead link.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub connect_timeout: String,
    /// An ssh_config file for ssh and scp (-F); default: ssh's own.
    #[arg(long, value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,
    /// An ssh option (-o), e.g. -o Port=2222; repeatable.
    #[arg(short = 'o', long = "ssh-option", value_name = "OPT")]
    pub ssh_options: Vec<String>,
    /// The binary to copy to each host (default: this one).
    #[arg(long, value_name = "PATH", conflicts_with = "remote_binary")]
    pub binary: Option<PathBuf>,
    /// Use this touchstone already on every host instead of copying one.
    #[arg(long, value_name = "PATH")]
    pub remote_binary: Option<String>,
    /// Network pairs SERVER:CLIENT (hosts as in --hosts): `serve` on the
    /// first, the --net benchmarks on the second, one pair at a time.
    #[arg(long, value_name = "A:B,…", conflicts_with = "all_pairs")]
    pub pairs: Option<String>,
    /// Every pair of hosts once (the earlier host serving).
    #[arg(long)]
    pub all_pairs: bool,
    /// The network benchmarks run on each pair (each gets `/remote:ADDR:PORT`;
    /// `tcp_rr/load:1,4` adds a request/response sweep). Each figure comes
    /// with both ends' CPU (the server's from serve); `fleet report` shows
    /// the pairs as matrices of client and server hosts.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "FAMILY,…",
        default_value = "lat_tcp,lat_udp,bw_tcp,lat_connect"
    )]
    pub net: Vec<String>,
    /// The port `serve` listens on for the pairs.
    #[arg(long, value_name = "PORT", default_value = "7717")]
    pub serve_port: u16,
    /// Benchmarks and `touchstone run` options for every host. With pairs
    /// and no benchmarks, only the network benchmarks run.
    #[arg(
        value_name = "SPEC|RUN-OPTION",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub run: Vec<String>,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The one address and port to listen on (TCP and UDP), e.g. 10.0.0.7:7717.
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: String,
    /// Stop after this long with no client; a connection silent this long
    /// is closed.
    #[arg(long, value_name = "DURATION", default_value = "300s")]
    pub idle_timeout: String,
    /// The most connections served at once; more are refused with a
    /// message (the default takes tcp_rr's largest load).
    #[arg(long, value_name = "N", default_value_t = touchstone_catalogue::support::remote::DEFAULT_MAX_CONNECTIONS)]
    pub max_connections: usize,
}

/// How `fleet slurm` starts the nodes' runs.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViaArg {
    Srun,
    Sbatch,
}

#[derive(Args, Debug)]
#[command(after_help = examples::SLURM)]
pub struct SlurmArgs {
    /// The Slurm partition to run on.
    #[arg(short, long)]
    pub partition: String,
    /// How many nodes (one exclusive task each). Default: every node of the
    /// partition that can take a job now (not down, drained or failed).
    #[arg(short = 'N', long)]
    pub nodes: Option<u32>,
    /// srun: one job step, the results on srun's output; sbatch: an array
    /// job whose tasks write their results into --out.
    #[arg(long, value_enum, default_value = "srun")]
    pub via: ViaArg,
    /// sbatch: the directory (shared with the nodes) each task writes its
    /// results document and log into; srun: where each node's document is
    /// also kept. Created if missing.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The touchstone binary as the nodes see it. Default: this one's path.
    #[arg(long, value_name = "PATH")]
    pub binary: Option<PathBuf>,
    /// Slurm's time limit for each node's run, and the longest touchstone
    /// waits for the job (e.g. 30m, 2h).
    #[arg(long, value_name = "DURATION", default_value = "1h")]
    pub timeout: String,
    /// Print the job script (sbatch) or command (srun) that would be submitted; submit nothing.
    #[arg(long)]
    pub print_script: bool,
    /// Quick mode on every node (as `run --quick`).
    #[arg(short, long)]
    pub quick: bool,
    /// Timed repetitions per measurement (as `run -r`).
    #[arg(short = 'r', long, value_name = "R")]
    pub repetitions: Option<u32>,
    /// A label for every node's run.
    #[arg(short, long)]
    pub label: Option<String>,
    /// Benchmarks, workloads or groups, as `touchstone run` takes them. None: the default suite.
    pub benchmarks: Vec<String>,
}

#[derive(Args, Debug)]
pub struct FleetReportArgs {
    /// Runs to consider (ids, labels, `last`…). None: every stored run.
    /// Each host is represented by its newest run among them.
    pub runs: Vec<String>,
    /// Also write the HTML report, with the fleet's verdict, here.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// The wide layout for the side-by-side tables (one row per host).
    #[arg(long)]
    pub wide: bool,
    /// Order the hosts by `index`, `per-price` or `per-watt` (from the hosts' inventory), best first.
    #[arg(long, value_name = "KEY")]
    pub sort: Option<String>,
}

/// clap's error for an option it does not know, without its tip to pass
/// the option "as a value" after `--`: after `--`, `app` runs a program
/// and `run` reads benchmark names, so the tip would mislead. An option
/// `app` lacks gets a tip naming the hyperfine options it has.
pub fn explain(mut e: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return e;
    }
    let mut tips = match e.get(ContextKind::Suggested) {
        Some(ContextValue::StyledStrs(tips)) => tips.clone(),
        _ => Vec::new(),
    };
    tips.retain(|t| !t.to_string().contains("as a value, use"));
    let in_app = matches!(e.get(ContextKind::Usage),
        Some(ContextValue::StyledStr(u)) if u.to_string().contains("touchstone app "));
    if in_app {
        tips.push(
            "app takes these of hyperfine's options: -w/--warmup, -r/--runs, -p/--prepare, \
             --conclude, -s/--setup, -c/--cleanup, -n/--command-name, -N, --show-output, \
             --export-json, --export-markdown (touchstone app --help)"
                .into(),
        );
    }
    if tips.is_empty() {
        e.remove(ContextKind::Suggested);
    } else {
        e.insert(ContextKind::Suggested, ContextValue::StyledStrs(tips));
    }
    e
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    /// The command line is well formed with every family option in it: an
    /// option a family declares under the name of one of run's own flags
    /// (or another's) fails here.
    #[test]
    fn the_command_line_is_well_formed_with_the_family_options() {
        Cli::command().debug_assert();
        let argv = ["touchstone", "run", "io", "--dir", "/tmp", "-q"];
        let Command::Run(r) = Cli::try_parse_from(argv).unwrap().command else {
            panic!("not run")
        };
        assert_eq!(r.benchmarks, ["io"]);
        assert!(r.family.context(r.quick).quick);
    }

    /// Every command's path (`touchstone fleet run`) and its long help.
    fn every_help(cmd: &mut clap::Command, path: &str, out: &mut Vec<(String, String)>) {
        let path = format!("{path} {}", cmd.get_name()).trim().to_string();
        out.push((path.clone(), cmd.render_long_help().to_string()));
        for sub in cmd.get_subcommands_mut().filter(|c| !c.is_hide_set()) {
            every_help(sub, &path, out);
        }
    }

    #[test]
    fn every_commands_long_help_ends_with_examples_of_itself() {
        let mut cli = Cli::command().disable_help_subcommand(true);
        cli.build();
        let mut helps = Vec::new();
        every_help(&mut cli, "", &mut helps);
        assert!(helps.len() >= 20, "{}", helps.len());
        for (path, help) in &helps {
            let examples = help
                .split_once("\nExamples:\n")
                .unwrap_or_else(|| panic!("`{path} --help` has no Examples section"))
                .1;
            // Each shows the command it documents (the main page, any).
            assert!(
                examples.contains(&format!("  {path}")),
                "`{path} --help`: no example of `{path}`:\n{examples}"
            );
        }
    }
}
