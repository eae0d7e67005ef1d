//! The clap types of every command line (`run`'s sit with their settling,
//! in [`super::run`]). [`super`] turns them into the plain settings of a
//! command once; nothing outside `cli` sees them.
//! Options that only one benchmark family reads are declared by that
//! family ([`crate::bench::Family::options`]) and added to `run` at
//! start-up, so they are not listed here. What each option's value may be
//! is parsed in [`super::values`].

use super::values::{parse_dir, parse_key_value, parse_percent, DirArg};
use crate::config::Suite;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

pub use super::run::{AlternateArg, CmdArgs, RunArgs, Switch};

/// `--db`, declared once for every command that reads or writes the
/// history.
#[derive(Debug, Args)]
pub struct DbArg {
    /// History database: an SQLite file, or a PostgreSQL URL
    /// (postgres://user@host/database) that many hosts share.
    /// [default: $XDG_DATA_HOME/envbench/history.sqlite3]
    #[arg(
        long,
        value_name = "PATH|URL",
        env = "ENVBENCH_DB",
        hide_env_values = true
    )]
    pub db: Option<PathBuf>,
}

/// `--all-metrics`, declared once for every command that prints cases.
#[derive(Debug, Args)]
pub struct AllMetricsArg {
    /// Print every metric of every case, secondary ones too, not only each
    /// case's headline metric; `compare` adds each family's views
    /// (GFLOPS by threads, latency percentiles, ...) as tables. Markdown
    /// and the files always hold all, and --html draws the views as charts.
    #[arg(long)]
    pub all_metrics: bool,
}

/// Measure how this environment performs, then compare it with another on
/// the same hardware.
///
/// envbench fingerprints the environment (kernel, virtualisation layers,
/// cgroup limits, CPU, memory, clock, filesystems) and runs a standard
/// battery of benchmarks with repetitions and confidence intervals. Run it
/// in each environment (native Linux, WSL 2, a VM, a container ...) and
/// compare the result files.
#[derive(Debug, Parser)]
#[command(
    name = "envbench",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Fingerprint the environment, run the battery and write a result file.
    ///
    /// Every case is repeated (after warm-up) from the minimum number of
    /// repetitions until the 95 % confidence interval of the median is
    /// narrow enough, the maximum is reached, or the case's time budget is
    /// spent. The result file is rewritten after every case; Ctrl-C stops
    /// the current case and leaves a file marked "interrupted". A second
    /// Ctrl-C exits at once, after killing the processes envbench started
    /// and removing its scratch directories.
    ///
    /// With --in, one run measures several environments this machine can
    /// reach through a command prefix, interleaved round by round, and
    /// writes a result file for each (see --in):
    /// envbench run --in host --in gvisor='runsc --network=none do -force-overlay=false --'
    Run(RunArgs),
    /// Print the environment fingerprint.
    Info(InfoArgs),
    /// List every benchmark: what it measures, its cases per suite, its
    /// metrics and units, and the study it reproduces.
    List(ListArgs),
    /// Print a stored run: environment, cases, anomalies.
    Show(ShowArgs),
    /// List the runs recorded in the local history.
    History(HistoryArgs),
    /// Compare environments: the likely cause first (the mechanism the
    /// fingerprints and the pattern of differences fit, such as "system
    /// calls intercepted" or "a FUSE or network file system", with the signs
    /// that hold; --verbose lists them), one conclusion per family (slower
    /// in 8 of 8 cases, 3.5x to 400x, and which cases carry it; or no
    /// difference beyond ±N %), a line per app case found faster or slower
    /// beside what its file operations predict, then per case the speed-up
    /// with a 95 % interval from a hierarchical bootstrap over runs, rounds
    /// and repetitions and one of four outcomes (faster, slower, tie inside
    /// the band, unclear); warnings and advice in a line each.
    ///
    /// Runs with the same label form one environment; the first label is
    /// the baseline. Several runs per environment measure how much runs
    /// differ; a side with one run gets an assumed between-run spread, and
    /// the output says so.
    Compare(CompareArgs),
    /// Turn other tools' outputs (STREAM, sysbench, IOzone, fio, dd, hpcc)
    /// into a result file that compare and show read like envbench's own.
    ///
    /// Outputs of the same case become repetitions of one case: each FILE
    /// is one round of one run (ten STREAM outputs = ten samples), so
    /// compare assumes the between-run spread of a single run; import the
    /// outputs of each boot or session separately, under one --label, to
    /// make several runs. Where the tool's method is envbench's own
    /// (STREAM = mem.stream, sysbench cpu = cpu.primes) the ids and
    /// metrics match and compare sets them side by side; other tools get
    /// ids of their own. Values that cannot be true (negative times, rates
    /// beyond any memory system) are kept as anomalies with an explanation
    /// and left out of the statistics.
    ///
    /// Example: envbench import --from stream --label wsl2 --env
    /// virtualization=wsl2 stream-*.txt -o wsl2.json
    Import(ImportArgs),
    /// Is envbench faithful on this machine? Runs each case that has a
    /// reference tool installed here (perf bench, sysbench, fio, dd, hpcc's
    /// HPL, sockperf, iperf3, wrk on nginx, C loops and C STREAM built with
    /// the environment's cc; the io family's on --dir; the net family's
    /// servers started on loopback ports and stopped after; your own
    /// commands, with --cmd, against hyperfine) and those tools in
    /// turns, round by round, and judges the ratio envbench/reference by
    /// its 95 % interval against the case's band: within, outside, or
    /// unclear with the rounds that would settle it. Rounds are added to the unclear rows until every
    /// row settles or the budget is spent. One line per row on stdout,
    /// then the counts; progress on stderr.
    ///
    /// Example: envbench fidelity --sections os --json fidelity.json
    ///
    /// Example: envbench fidelity --sections io --dir /mnt/data
    ///
    /// Example: envbench fidelity --sections net --budget 900
    ///
    /// Example: envbench fidelity --cmd status='git status' --dir ~/src/repo
    Fidelity(FidelityArgs),
    /// Scores what `compare --json` wrote for a controlled pair against
    /// what is known to be there: the headline verdicts (--expect), the
    /// mechanism named first (--first), or both for a pair of
    /// bench/pairs.sh (--pair; --pairs lists them); --splits scores six
    /// A/A runs over their 3 + 3 splits. For bench/'s scripts.
    #[command(name = "__score", hide = true)]
    Score(ScoreArgs),
    /// Where each case's spread comes from, read from A/A result files:
    /// separate runs of one environment split into runs, rounds and
    /// repetitions, or (--paired) interleaved runs' rounds and what the
    /// guest read around them. For bench/'s study of a host's noise.
    #[command(name = "__spread", hide = true)]
    Spread(SpreadArgs),
    /// Judges rounds of two figures (envbench's, a reference's) against a
    /// band as `envbench fidelity` judges a row: ratio, 95 % interval,
    /// verdict, rounds, tab-separated. For benches/commands/.
    #[command(name = "__band", hide = true)]
    Band(BandArgs),
    /// Runs COMMAND beside one busy loop pinned to a CPU and switched on
    /// and off at random (a seeded sequence of states, each MIN to MAX
    /// ms): a reproducible noisy host to test on. Exits with COMMAND's
    /// status.
    #[command(name = "__noisy", hide = true)]
    Noisy(NoisyArgs),
    /// Work with the history as a store: `push` adds result files written
    /// elsewhere (other hosts, a fleet's controller, imports, runs made
    /// with --no-history or while a shared store was down).
    #[command(subcommand)]
    Store(StoreCmd),
}

/// `envbench store` subcommands.
#[derive(Debug, Subcommand)]
pub enum StoreCmd {
    /// Add result files to the history, by run id: a run already there
    /// with the same content is left alone, a newer state of it (a run
    /// that was running or interrupted) replaces it, so pushing twice
    /// changes nothing.
    ///
    /// Example: envbench store push --db postgres://envbench@db.lab/envbench results/*.json
    Push(PushArgs),
}

/// `envbench store push` options.
#[derive(Debug, Args)]
pub struct PushArgs {
    /// Result files (written by `envbench run` or `envbench import`).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// The history database ([`DbArg`]).
    #[command(flatten)]
    pub db: DbArg,
}

/// `envbench import` options.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The tool that wrote the files, or auto to recognise each file's
    /// tool (and say which on stderr).
    #[arg(long, value_name = "TOOL", value_parser = super::importer_names())]
    pub from: String,
    /// Outputs to import; each is one round.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Result file to write.
    #[arg(short, long, value_name = "OUT.json")]
    pub output: PathBuf,
    /// Overwrite the result file if it exists.
    #[arg(long)]
    pub force: bool,
    /// Name of the environment the outputs come from, e.g. native, wsl2.
    /// [default: the virtualization given with --env, else OUT's file name
    /// without .json]
    #[arg(long)]
    pub label: Option<String>,
    /// A fact about the environment the outputs do not reveal, e.g.
    /// virtualization=wsl2, cpu_model='AMD Ryzen 7 5700X', logical_cpus=16,
    /// memory=32G, kernel=5.15.153.1, fs_type=ext4 (repeatable; a wrong key
    /// lists the known ones). What is not stated stays unknown.
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_key_value)]
    pub env: Vec<(String, String)>,
    /// A case parameter the outputs do not print, added to every case's
    /// key, e.g. max_prime=20000 for sysbench cpu outputs without their
    /// header, op=write_fdatasync for dd (repeatable). One that an output
    /// prints differently is refused.
    #[arg(long = "param", value_name = "KEY=VALUE", value_parser = parse_key_value)]
    pub params: Vec<(String, String)>,
    /// Seed of the summaries' bootstrap (stored in the result).
    #[arg(long, allow_negative_numbers = true)]
    pub seed: Option<u64>,
}

/// When to colour the terminal output.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ColorArg {
    /// When stdout is a terminal and NO_COLOR is not set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// `envbench compare` options.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Result files, history ids or labels (every run of that label in the
    /// history); runs with the same label form one environment, the first
    /// label seen is the baseline. The files of interleaved runs (run
    /// --in) are compared round by round, each round beside the one
    /// measured next to it, so the drift they shared cancels.
    #[arg(value_name = "FILE|ID|LABEL")]
    pub files: Vec<PathBuf>,
    /// The history database ([`DbArg`]).
    #[command(flatten)]
    pub db: DbArg,
    /// Take only runs whose fingerprint FIELD (host, cpu, kernel or virt)
    /// contains VALUE, ignoring case (`--where cpu=EPYC --where kernel=6.8`);
    /// runs named by label are picked in the database's query.
    #[arg(long = "where", value_name = "FIELD=VALUE")]
    pub filters: Vec<String>,
    /// Each host's runs of a label form an environment of their own
    /// (`native@lab-a`, `native@lab-b`), for a label spread over a fleet;
    /// without it a label is one environment whatever its hosts.
    #[arg(long)]
    pub per_host: bool,
    /// Label of the baseline environment.
    #[arg(long, value_name = "LABEL")]
    pub baseline: Option<String>,
    /// Baseline runs, whatever their labels (with --other).
    #[arg(long, num_args = 1.., value_name = "FILE")]
    pub base: Vec<PathBuf>,
    /// Runs of the environment to compare with --base.
    #[arg(long, num_args = 1.., value_name = "FILE")]
    pub other: Vec<PathBuf>,
    /// Half-width of the band, in percent: a speed-up whose interval lies
    /// wholly inside ±this is a tie, wholly beyond it faster or slower.
    /// [default: 2]
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent, allow_negative_numbers = true)]
    pub threshold: Option<f64>,
    /// Print Markdown (for papers and issues) instead of aligned text.
    #[arg(long)]
    pub markdown: bool,
    /// Every metric ([`AllMetricsArg`]).
    #[command(flatten)]
    pub all_metrics: AllMetricsArg,
    /// Print everything after the conclusions, the cases, the warnings and
    /// the advice: each warning in full, the method, the family summary,
    /// the environments and fingerprints side by side, and where the
    /// spread of each unclear case comes from.
    #[arg(short, long)]
    pub verbose: bool,
    /// Also write one CSV row per case x metric x environment to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Also write a self-contained HTML report with charts to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also write the comparison as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write each chart as a standalone SVG and each table as CSV
    /// into DIR (new, or empty), named by family and view: speedup.svg,
    /// cpu-cases.csv, mem.stream-bandwidth_by_threads.svg ... for a paper.
    #[arg(long, value_name = "DIR")]
    pub figures: Option<PathBuf>,
    /// Overwrite existing --csv, --html or --json files (never an input).
    #[arg(long)]
    pub force: bool,
    /// Seed of the bootstrap.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Compare the directories of the runs given with each other: each
    /// `--dir` NAME becomes an environment (the first named is the
    /// baseline, or --baseline NAME), with the cases that ran in it, so
    /// one run with `--dir ext4=~/w --dir share=/mnt/c/w` compares the two
    /// filesystems as seed 004 did. Cases without a directory are left out.
    /// (`--dirs`, its earlier name, still works.)
    #[arg(long = "by-dir", alias = "dirs")]
    pub by_dir: bool,
    /// Colour verdicts.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorArg,
}

/// Battery sizes on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SuiteArg {
    /// About a minute on 2 cores: small sizes, 12 rounds, 3-40 repetitions, at most 2 s per case
    /// (42 s shared among the cases).
    Quick,
    /// About ten minutes: 16 rounds, 5-60 repetitions, at most 10 s per case (480 s shared among
    /// the cases).
    Standard,
    /// The seeds' protocol: their sizes, 5 rounds, 10-50 repetitions, 60 s per case.
    Full,
}

impl From<SuiteArg> for Suite {
    fn from(s: SuiteArg) -> Suite {
        match s {
            SuiteArg::Quick => Suite::Quick,
            SuiteArg::Standard => Suite::Standard,
            SuiteArg::Full => Suite::Full,
        }
    }
}

/// `envbench info` options.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Directory whose filesystem to describe, as `run --dir` takes it
    /// ([NAME=]PATH); repeatable. [default: the current directory]
    #[arg(long = "dir", value_name = "[NAME=]PATH", value_parser = parse_dir)]
    pub dirs: Vec<DirArg>,
    /// Print JSON (the `fingerprint` object of a result file).
    #[arg(long)]
    pub json: bool,
    /// List what would make measurements steadier on this machine
    /// (governor, turbo, SMT, background load, swap, transparent huge
    /// pages) and how to set each. Changes nothing.
    #[arg(long, conflicts_with = "json")]
    pub tuning: bool,
}

/// `envbench fidelity` options.
#[derive(Debug, Args)]
pub struct FidelityArgs {
    /// Families whose references run, comma-separated (os,cpu,mem,io,net;
    /// cmd, with --cmd). [default: every family with a reference tool, or
    /// with --cmd its commands alone]
    #[arg(long, value_name = "FAMILY,...", value_delimiter = ',')]
    pub sections: Vec<String>,
    /// Only these benches, comma-separated (os.syscall,mem.stream;
    /// cmd.run, with --cmd).
    #[arg(long, value_name = "BENCH,...", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Rounds of the first pass: each round runs envbench once (twice
    /// while a row runs envbench on the first CPU) and every row's
    /// reference once, in turns. A row gets at most 60 rounds.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub rounds: u32,
    /// Seconds after which no further pass starts (a pass adds rounds to
    /// the rows still unclear; a round already started finishes). The
    /// first pass runs its --rounds whatever the budget; where it would end
    /// past it, its first round says so, and the --rounds that would fit
    /// where two or more would.
    #[arg(long, value_name = "SECONDS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub budget: u64,
    /// The directory the io family's cases and their tools (sysbench,
    /// fio, dd) write in, each in a fresh directory removed after: the
    /// disk or share whose figures are to be trusted. It needs about
    /// 800 MiB free. --cmd's commands and hyperfine run in it itself.
    /// [default: the temporary directory for the io family, the current
    /// directory for --cmd]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Your own commands, each a row held to `hyperfine -N` on the same
    /// command in the same directory (--dir), warmed up as envbench's side
    /// is and ten runs, in turns, against ±10 % ([`CmdArgs`]). Alone, --cmd
    /// runs only its rows; with --sections or --only, theirs too.
    #[command(flatten)]
    pub cmd: CmdArgs,
    /// Write the rows as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the rows as a Markdown table to FILE.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Overwrite --json and --markdown files that exist.
    #[arg(long)]
    pub force: bool,
}

/// `envbench __score` options.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("scoring").required(true)
    .args(["expect", "first", "pair", "pairs"])))]
pub struct ScoreArgs {
    /// Score the headline verdicts against the pair's known effect: aa
    /// (the same environment), 1cpu (one CPU of two), strace (every
    /// system call traced), compute (a layer running the same code: cpu
    /// and mem the same).
    #[arg(long, value_name = "EFFECT", value_parser = crate::cmd::score::Known::parse)]
    pub expect: Option<crate::cmd::score::Known>,
    /// Score the diagnosis: the mechanism it should name first
    /// (`seccomp_filter`, ...; `none`: nothing).
    #[arg(long, value_name = "MECHANISM")]
    pub first: Option<String>,
    /// Score one of bench/pairs.sh's pairs: its verdicts against its known
    /// effect, where one is known, then the mechanism named first.
    #[arg(long, value_name = "PAIR", value_parser = crate::cmd::score::Pair::parse)]
    pub pair: Option<&'static crate::cmd::score::Pair>,
    /// List the pairs: name, known effect (- none), mechanism to name first.
    #[arg(long, conflicts_with = "files")]
    pub pairs: bool,
    /// With --expect: the files are six or more runs of one environment;
    /// the first six are split every way into 3 + 3 (ten splits), each
    /// compared and scored; prints one line of the median precision.
    #[arg(long, conflicts_with_all = ["first", "pair", "pairs"])]
    pub splits: bool,
    /// The comparison's name in the lines printed.
    #[arg(long, value_name = "TEXT", default_value = "")]
    pub name: String,
    /// The file `envbench compare --json` wrote (with --splits, the runs'
    /// result files).
    #[arg(value_name = "FILE", required_unless_present = "pairs")]
    pub files: Vec<PathBuf>,
}

/// `envbench __spread` options.
#[derive(Debug, Args)]
pub struct SpreadArgs {
    /// The files are the two of each interleaved run, in turn: A1 B1 A2 B2 ...
    #[arg(long)]
    pub paired: bool,
    /// Separate runs: a line per case as well as per family.
    #[arg(short, long, conflicts_with = "paired")]
    pub verbose: bool,
    /// Result files of one environment against itself.
    #[arg(value_name = "RUN.json", required = true)]
    pub files: Vec<PathBuf>,
}

/// `envbench __band` options.
#[derive(Debug, Args)]
pub struct BandArgs {
    /// The band the ratio envbench/reference must lie within.
    #[arg(long, value_name = "LOW..HIGH", value_parser = crate::cmd::band::parse_band)]
    pub band: crate::stats::band::Band,
    /// Each round's two figures, envbench's first.
    #[arg(value_name = "ENVBENCH,REFERENCE", required = true, value_parser = crate::cmd::band::parse_round)]
    pub rounds: Vec<(f64, f64)>,
}

/// `envbench __noisy` options.
#[derive(Debug, Args)]
pub struct NoisyArgs {
    /// The CPU the loop is pinned to.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub cpu: usize,
    /// The seed of the states' sequence: the same seed, the same host.
    #[arg(long, default_value_t = 1, value_name = "S")]
    pub seed: u64,
    /// The chance that a state is "on".
    #[arg(long, default_value_t = 0.5, value_name = "F", value_parser = crate::cmd::noisy::parse_share)]
    pub on_share: f64,
    /// How long a state lasts, in milliseconds (20-200: a host that changes
    /// faster than a case round).
    #[arg(long, default_value = "500-3000", value_name = "MIN-MAX", value_parser = crate::cmd::noisy::parse_ms)]
    pub ms: (u64, u64),
    /// The command and its arguments, after --.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `envbench list` options.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `envbench show` options.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A result file written by `envbench run`, or a history id.
    #[arg(value_name = "FILE|ID")]
    pub run: String,
    /// Every metric ([`AllMetricsArg`]).
    #[command(flatten)]
    pub all_metrics: AllMetricsArg,
    /// The history database ([`DbArg`]).
    #[command(flatten)]
    pub db: DbArg,
}

/// `envbench history` options.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The history database ([`DbArg`]).
    #[command(flatten)]
    pub db: DbArg,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
        super::super::command().debug_assert();
    }

    #[test]
    fn each_suite_s_help_says_what_the_suite_is() {
        use crate::config::{RepPolicy, Suite};
        for arg in SuiteArg::value_variants() {
            let help = arg
                .to_possible_value()
                .unwrap()
                .get_help()
                .unwrap()
                .to_string();
            let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
            let suite = Suite::from(*arg);
            let p = RepPolicy::for_suite(suite);
            for said in [
                format!("{} rounds", p.rounds),
                format!("{}-{} repetitions", p.reps_min, p.reps_max),
                format!("{} s per case", p.budget_secs),
            ] {
                assert!(help.contains(&said), "{arg:?}: {help:?} lacks {said:?}");
            }
            if let Some(shared) = suite.target_secs() {
                let said = format!("{shared} s shared");
                assert!(help.contains(&said), "{arg:?}: {help:?} lacks {said:?}");
            }
        }
    }
}
