//! The examples that end every command's --help and its manual page's
//! EXAMPLES section, one constant per command (`args` hangs each on its
//! command; a test checks that every command has one).

/// `touchstone --help`.
pub const MAIN: &str = "\
Examples:
  touchstone run --quick                 the quick suite (under a minute)
  touchstone run --dry-run               what the default suite would run, and how long
  touchstone run lat_mem_rd bw_mem -r 21 two families, 21 repetitions each
  touchstone app -- make -j8             time a command like hyperfine
  touchstone runs --since 7d --host node-7
  touchstone compare last~1 last         the newest run against the one before
  touchstone completions bash > ~/.local/share/bash-completion/completions/touchstone

Results go to an SQLite store (--db, $TOUCHSTONE_DB, default ~/.local/share/touchstone/results.sqlite).";

pub const RUN: &str = "\
Examples:
  touchstone run                         the default suite (about 4 minutes)
  touchstone run --quick                 a smaller, shorter suite (under a minute)
  touchstone run --dry-run --quick       list the cases and a time estimate; run nothing
  touchstone run lat_syscall/null,read   two cases of one family
  touchstone run lat_ctx/procs:2,8 -P 1,2 -r 21
  touchstone run proc -l 'node-7 after BIOS update'
  touchstone run tcp_rr/load:1,2,4 --cpus 1,2 --window 2s";

pub const APP: &str = "\
Examples:
  touchstone app -- make -j8             one program and its words after --, run directly
  touchstone app 'gzip -k -f big.tar' 'zstd -k -f big.tar'
                                         several commands compared in one run, as hyperfine
  touchstone app -r 21 --timeout 10m -- ./reco --events 1000
  touchstone app --prepare 'sync' -n cold-read -- cat big.file
                                         an untimed command before every run
  touchstone app -s 'make' -c 'make clean' -- ./bench
                                         once before and once after all the runs
  touchstone app 'sleep 0.1' --export-json t.json --export-markdown t.md
  touchstone app --show-output -- ./simulate   let the program's output through";

pub const REPORT: &str = "\
Examples:
  touchstone report                      every stored run, side by side
  touchstone report last~2 last~1 last --sort lat_syscall/null
  touchstone report --format markdown -o results.md
  touchstone report --html report.html   a self-contained page with charts";

pub const COMPARE: &str = "\
Examples:
  touchstone compare last~1 last         the newest run against the one before
  touchstone compare baseline node-7 node-8 --format csv -o ratios.csv";

pub const FLEET_RUN: &str = "\
Examples:
  touchstone fleet run --hosts node-1,node-2,node-3 --quick
  touchstone fleet run --hosts @farm.txt --concurrent 8 lat_syscall bw_mem -r 5
  touchstone fleet run --hosts @farm.txt --pairs node-1:node-2 --net lat_tcp,bw_tcp --quick

Everything after the options (benchmarks and `touchstone run` options) is
passed to `touchstone run … --json --no-store` on each host.";

pub const SERVE: &str = "\
Examples:
  touchstone serve --listen 10.0.0.7:7717     on node-7
  touchstone run lat_tcp/remote:10.0.0.7:7717 --no-store   on another host";

pub const SLURM: &str = "\
Examples:
  touchstone fleet slurm --partition batch --quick
                                 every node of `batch`, one srun task each
  touchstone fleet slurm -p batch --nodes 16 --via sbatch --out /shared/ts lat_mem_rd bw_mem
  touchstone fleet slurm -p batch --via sbatch --out /shared/ts --print-script
                                 the job script, not submitted

The touchstone binary must be at the same path on the nodes (a shared file
system, or --binary PATH); with sbatch, --out must be a directory the nodes
and this host share.";

pub const LIST: &str = "\
Examples:
  touchstone list                        every family: group, cases, parameters, defaults
  touchstone list | grep -A3 '^lat_ctx'  one family's entry
  touchstone list --json                 the same as JSON, for scripts";

pub const RUNS: &str = "\
Examples:
  touchstone runs                        every stored run, newest last
  touchstone runs --since 7d --host node-7
  touchstone runs --label BIOS --json    runs whose label contains BIOS, as JSON
  touchstone runs relabel last 'node-7 BIOS 2.1'
  touchstone runs delete last~1          asks first on a terminal";

pub const RUNS_DELETE: &str = "\
Examples:
  touchstone runs delete last            the newest run, after asking
  touchstone runs delete 3fa2 last~1 --yes
                                         a run by id prefix and the one before the newest";

pub const RUNS_RELABEL: &str = "\
Examples:
  touchstone runs relabel last 'node-7 BIOS 2.1'
  touchstone runs relabel 3fa2 ''        remove the label";

pub const SHOW: &str = "\
Examples:
  touchstone show last                   the newest run: host, clock, figures with CIs, warnings
  touchstone show last~1 --format csv    one row per measurement in stored units
  touchstone show node-7 --warnings      every warning of the run labelled node-7
  touchstone show 3fa2 --json > run.json";

pub const EXPORT: &str = "\
Examples:
  touchstone export -o farm.json         every stored run
  touchstone export last node-7 > two.json
  ssh node-7 touchstone export | touchstone import -";

pub const IMPORT: &str = "\
Examples:
  touchstone import other-machine.json   checked first, all or nothing
  touchstone import a.json b.json
  ssh node-7 touchstone export | touchstone import -";

pub const INVENTORY: &str = "\
Examples:
  touchstone inventory set node-7 --price 12500 --currency EUR --date 2026-03-01 --watts-busy 420
  touchstone inventory set --watts-nameplate 750     this host
  touchstone inventory import farm.csv               a whole farm, all or nothing
  touchstone inventory list";

pub const INVENTORY_SET: &str = "\
Examples:
  touchstone inventory set node-7 --price 12500 --currency EUR --date 2026-03-01
  touchstone inventory set node-7 --watts-idle 110 --watts-busy 420
  touchstone inventory set --watts-nameplate 750     this host";

pub const INVENTORY_IMPORT: &str = "\
Examples:
  touchstone inventory import farm.csv     host,price,currency,date,watts_idle,watts_busy,watts_nameplate
  touchstone inventory import farm.toml    [[host]] tables of key = value";

pub const INVENTORY_LIST: &str = "\
Examples:
  touchstone inventory list
  touchstone inventory list --json";

pub const PREDICT: &str = "\
Examples:
  touchstone app --name reco -- ./reco in.root   on each machine first
  touchstone predict reco                which benchmarks track app/reco, and the model
  touchstone predict reco --max-predictors 3 --json";

pub const FLEET: &str = "\
Examples:
  touchstone fleet run --hosts node-1,node-2,node-3 --quick
  touchstone fleet slurm --partition batch --quick
  touchstone fleet report --html fleet.html";

pub const FLEET_REPORT: &str = "\
Examples:
  touchstone fleet report                each host's newest run, grouped by hardware
  touchstone fleet report --wide         one row per host
  touchstone fleet report --html fleet.html";

pub const COMPLETIONS: &str = "\
Examples:
  touchstone completions bash > ~/.local/share/bash-completion/completions/touchstone
  touchstone completions zsh > ~/.zfunc/_touchstone
  touchstone completions fish > ~/.config/fish/completions/touchstone.fish";

pub const MAN: &str = "\
Examples:
  touchstone man | man -l -              the main page
  touchstone man --dir ~/.local/share/man/man1
                                         a page per command (touchstone-run.1, …)";

pub const CHECK: &str = "\
Examples:
  touchstone check                       run the check suite, store it, judge it
  touchstone check --run last            judge the newest stored run instead
  touchstone check --format nhc          one line for an NHC check function (nothing when healthy)

A finding needs a shift whose interval excludes 0 on the slow side and that
lies more than 3.5 spreads from the baseline (docs/reports.md). A Slurm
HealthCheckProgram that drains a degraded node: contrib/slurm/touchstone-health.";

pub const HISTORY: &str = "\
Examples:
  touchstone history                     every figure of this host, with its change points
  touchstone history lat_mem_rd bw_mem   only these benchmarks
  touchstone history --host node-7 --format csv > node-7.csv
  touchstone history --html history.html   a chart per benchmark, change points marked

A change point is where E-divisive means splits the series and a permutation
test finds the split significant (p <= 0.01); 'what changed' is the difference
between the fingerprints of the runs either side (docs/reports.md).";
