//! Command-line surface (clap derive). Values are parsed with the model's own parsers so
//! that a bad `--duration` or `--policy` gets the same message as in a workload file.

use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use schedlab_model::registry::{PolicyInfo, POLICIES};
use schedlab_model::{parse_sim_duration, OnMiss, Overrides, Placement, Policy, SimDuration};
use std::ffi::OsStr;
use std::path::PathBuf;

const MAIN_EXAMPLES: &str = "\
Examples:
  schedlab simulate examples/dhall.yaml --policy edf --placement global
  schedlab simulate examples/dhall.yaml --json | jq .deadline_misses
  schedlab compare                                  # built-in Table 1 workload, 4 CPUs
  schedlab compare examples/dhall.yaml --policies edf,rm,dm
  schedlab reproduce illf                           # the seed paper's experiments
  schedlab report examples/table1.yaml --policies edf,llf,illf -o out/report.html
  schedlab doctor                                   # ready for real runs? what is missing
  sudo schedlab run examples/table1-2cpu.yaml --policy edf --duration 3s

Exit status: 0 on success, 2 on a bad command line, workload or simulation error,
1 when the output cannot be written.";

const SIMULATE_EXAMPLES: &str = "\
Examples:
  schedlab simulate examples/dhall.yaml --policy edf --placement global
  schedlab simulate examples/table1.yaml --policy rm --cpus 8 --duration 10s
  schedlab simulate examples/table1.yaml --json | jq '.tasks[] | {name, misses}'
  schedlab simulate examples/table1.yaml --json -o out/table1-edf.json";

const COMPARE_EXAMPLES: &str = "\
Examples:
  schedlab compare                                   # built-in Table 1 workload
  schedlab compare examples/dhall.yaml --policies edf,rm,dm --placement global
  schedlab compare --json | jq '.results[] | {policy, deadline_misses}'";

const REPRODUCE_EXAMPLES: &str = "\
Examples:
  schedlab reproduce illf                  # tables on the terminal, plots in out/reproduce/
  schedlab reproduce cfs-weights           # seed 004: the four nice-to-weight tables
  schedlab reproduce all --json | jq '.cases[] | {case, paper, simulated}'
  schedlab reproduce illf --out-dir /tmp/plots

Experiments: illf (seed 000), cfs-weights (seed 004), bfs (seed 001), latency (seed 002),
shield (seed 003), fidelity and interactive (against this kernel), all.

Every difference from the papers is explained in docs/reproduction.md.";

/// A laboratory for Linux CPU scheduling.
///
/// One workload file (CPUs, periodic real-time tasks, RT and fair tasks) is simulated on a
/// deterministic multi-core model of the Linux scheduler and of research policies (EDF,
/// LLF, ILLF, RM, CFS, EEVDF, BFS...), run for real on this machine's kernel (SCHED_DEADLINE,
/// FIFO/RR, nice, a user-space dispatcher, sched_ext), and measured the same way on both
/// sides: deadline misses, context switches, preemptions, migrations, response and wake-up
/// latencies, CPU shares. It also reproduces the seed papers' experiments, writes HTML
/// reports and Perfetto traces, imports kernel traces and rt-app files, and checks what
/// this machine offers for real runs (`schedlab doctor`). See docs/usage.md for every
/// command, flag and column.
#[derive(Debug, Parser)]
#[command(name = "schedlab", version, after_help = MAIN_EXAMPLES)]
pub struct Cli {
    /// No progress display on stderr (it is also off when stderr is not a terminal).
    #[arg(short = 'q', long, global = true)]
    pub quiet: bool,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Simulate one workload under one policy and print its results.
    #[command(after_help = SIMULATE_EXAMPLES)]
    Simulate(SimulateArgs),
    /// Simulate one workload under several policies and print them side by side.
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(CompareArgs),
    /// Re-run a seed paper's experiments and print its numbers next to the simulator's.
    #[command(after_help = REPRODUCE_EXAMPLES)]
    Reproduce(ReproduceArgs),
    /// Run one workload for real: threads on this machine's kernel, measured (needs root).
    Run(crate::commands::run::RunArgs),
    /// Measure this machine's context-switch, migration and wake-up costs.
    Calibrate(crate::commands::calibrate::CalibrateArgs),
    /// Write one self-contained HTML page comparing policies: metrics, plots, Gantt charts.
    #[command(after_help = crate::commands::report::EXAMPLES)]
    Report(crate::commands::report::ReportArgs),
    /// Import a kernel scheduler trace (trace-cmd report / ftrace text) as a workload.
    #[command(after_help = crate::commands::trace::EXAMPLES)]
    Trace(crate::commands::trace::TraceArgs),
    /// Measure wake-up latency like cyclictest (threads per CPU at SCHED_FIFO), with
    /// optional load and CPU shield; or show a workload's simulated latency probes.
    Latency(crate::commands::latency::LatencyArgs),
    /// Measure the simulator's speed and memory on built-in random task sets (events/s,
    /// peak RSS), optionally beside SimSo's times (docs/performance.md).
    #[command(after_help = crate::commands::bench::EXAMPLES)]
    Bench(crate::commands::bench::BenchArgs),
    /// Write a random periodic task set (UUniFast, RandFixedSum, ...) as a workload file.
    #[command(after_help = crate::commands::generate::EXAMPLES)]
    Generate(crate::commands::generate::GenerateArgs),
    /// Run the schedulability tests on a workload's periodic tasks: verdict and why.
    #[command(after_help = crate::commands::analyze::EXAMPLES)]
    Analyze(crate::commands::analyze::AnalyzeArgs),
    /// Run a schedulability sweep from a YAML grid (the Python package's sweep: serial or
    /// on Dask, resumable Parquet results, plots).
    #[command(after_help = crate::commands::sweep::EXAMPLES)]
    Sweep(crate::commands::sweep::SweepArgs),
    /// Check what this machine offers for real runs (capabilities, SCHED_DEADLINE
    /// bandwidth, RT throttling, tracefs, perf, IRQs, sched_ext, frequency, VM) and how
    /// to get the rest.
    #[command(after_help = crate::commands::doctor::EXAMPLES)]
    Doctor(crate::commands::doctor::DoctorArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell).
    #[command(after_help = crate::commands::completions::COMPLETIONS_EXAMPLES)]
    Completions(crate::commands::completions::CompletionsArgs),
    /// Print the man page schedlab(1), generated from this command-line definition (roff).
    #[command(after_help = crate::commands::completions::MANPAGE_EXAMPLES)]
    Manpage(crate::commands::completions::ManpageArgs),
}

/// `schedlab reproduce`
#[derive(Debug, Args)]
pub struct ReproduceArgs {
    /// Experiment: `illf` (seed 000), `cfs-weights` (seed 004), `bfs` (seed 001),
    /// `latency` (seed 002), `shield` (seed 003), `interactive` (simulated fair classes
    /// vs this kernel), `fidelity` (the calibrated simulator's prediction error against
    /// this kernel), or `all`.
    #[arg(value_name = "EXPERIMENT")]
    pub experiment: String,

    /// Directory for the plots (SVG), among them one chart per headline of a seed's review
    /// (EXPERIMENT-sensitivity-N.svg: blue bars where the seed's conclusion holds, red
    /// where it does not); created if missing.
    #[arg(long, value_name = "DIR", default_value = "out/reproduce")]
    pub out_dir: PathBuf,

    /// Skip the measurements on this machine (as root: cfs-weights' nice mix, latency's
    /// steps, shield's probes, interactive's mixes); their `real` values are then null,
    /// except fidelity's, which are the last recorded ones.
    #[arg(long)]
    pub no_real: bool,

    /// cfs-weights and bfs: the sched_ext guest lane's results file for their "sched_ext
    /// guest" column (default: the last lane run's target/scx/guest/fair-shares.json).
    #[arg(long, value_name = "FILE")]
    pub guest_results: Option<PathBuf>,

    /// cfs-weights and bfs: run the sched_ext guest lane (scx/guest/run.sh: qemu, a
    /// cached sched_ext kernel or minutes to build one) before reading its results.
    #[arg(long)]
    pub guest: bool,

    /// fidelity: also write the real figures measured (and the calibration the simulator
    /// used) to FILE, in the format of the record `--no-real` uses
    /// (crates/experiments/src/fidelity-real.json).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// `schedlab simulate`
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Workload file (YAML, or JSON with a .json extension).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Policy for the periodic tasks; a fair-class policy sets the fair tasks' policy
    /// instead. Default: the file's `scheduler:`, else edf.
    #[arg(long, value_name = "P", value_parser = PolicyArg::summaries())]
    pub policy: Option<Policy>,

    /// A platform file from `schedlab calibrate`: simulate with its hz, context_switch,
    /// migration and tick costs instead of the workload's (as `compare --platform`).
    #[arg(long, value_name = "FILE")]
    pub platform: Option<PathBuf>,

    #[command(flatten)]
    pub overrides: OverrideArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub exports: crate::exports::ExportArgs,

    /// Check the engine's invariants after every simulated instant (no task on two
    /// CPUs, no CPU idle or running a lower class while a task waits for it, queues
    /// consistent, no job running longer than it demands...). Slower; the results are
    /// the same. A violation is a bug in schedlab: it stops the run with exit status 3.
    #[arg(long)]
    pub check: bool,

    /// Refuse a run estimated at more than N events (periodic jobs, run/sleep phases,
    /// probes, interrupts, ticks), which would take minutes to hours; the error gives the
    /// estimate. 0: no limit.
    #[arg(long, value_name = "N", default_value_t = 1e9)]
    pub max_events: f64,
}

/// `schedlab compare`
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Workload file; without it the built-in Table 1 workload (4 CPUs, 4 big + 8 small
    /// periodic tasks, 3 s) is used.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// Comma-separated policies to compare, one column each.
    /// Default: the registry's default columns (the classic periodic policies); every
    /// other policy is opt-in here.
    #[arg(long, value_name = "P,P,...", value_delimiter = ',', value_parser = PolicyArg::summaries())]
    pub policies: Vec<Policy>,

    #[command(flatten)]
    pub real: crate::commands::compare_real::RealArgs,

    #[command(flatten)]
    pub overrides: OverrideArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// Values that override the workload file (applied before validation).
#[derive(Debug, Args, Clone, Default)]
pub struct OverrideArgs {
    /// Placement of real-time work: global, partitioned or linux.
    #[arg(long, value_name = "global|partitioned|linux", value_parser = Placement::parse)]
    pub placement: Option<Placement>,

    /// Number of CPUs.
    #[arg(long, value_name = "N")]
    pub cpus: Option<u64>,

    /// Length of the run: simulated time (and real time with `compare --real`), with a
    /// unit: ns, us, ms or s (e.g. 10s, 250ms); or `hyperperiod` (the task set's
    /// feasibility interval, at most 100s) or `hyperperiod<=TIME` (another cap).
    #[arg(long, value_name = "TIME", value_parser = parse_sim_duration)]
    pub duration: Option<SimDuration>,

    /// Seed for every random choice (sporadic releases, execution times).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// What happens to a job still running at its deadline: continue (as Linux) or abort.
    #[arg(long, value_name = "continue|abort", value_parser = OnMiss::parse)]
    pub on_miss: Option<OnMiss>,
}

impl OverrideArgs {
    /// The model's overrides, with `policy` set as given.
    pub fn to_overrides(&self, policy: Option<Policy>) -> Overrides {
        Overrides {
            policy,
            placement: self.placement,
            cpus: self.cpus,
            duration: self.duration,
            seed: self.seed,
            on_miss: self.on_miss,
        }
    }
}

/// The value of `--policy`/`--policies`: parsed by [`Policy::parse`] (its message for an
/// unknown name), listed in `--help` with one line per registry entry.
#[derive(Clone, Copy)]
pub struct PolicyArg {
    describe: fn(&PolicyInfo) -> String,
}

impl PolicyArg {
    /// Each policy listed with its registry summary.
    pub fn summaries() -> PolicyArg {
        PolicyArg {
            describe: |e| e.summary.to_string(),
        }
    }

    /// Each policy listed with `describe(entry)`.
    pub fn described_by(describe: fn(&PolicyInfo) -> String) -> PolicyArg {
        PolicyArg { describe }
    }
}

impl TypedValueParser for PolicyArg {
    type Value = Policy;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Policy, clap::Error> {
        let parse: fn(&str) -> Result<Policy, String> = Policy::parse;
        parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(POLICIES.iter().map(|e| {
            PossibleValue::new(e.name).help((self.describe)(e))
        })))
    }
}

/// Output format and destination.
#[derive(Debug, Args, Clone, Default)]
pub struct OutputArgs {
    /// Print the results as one JSON object (one line) instead of tables.
    #[arg(long)]
    pub json: bool,

    /// Write the output to OUT instead of stdout (atomically: OUT.tmp, then rename).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn parses_policy_lists_with_model_names() {
        let cli = Cli::try_parse_from(["schedlab", "compare", "--policies", "edf,RM, dm"]).unwrap();
        let Command::Compare(c) = cli.command else {
            panic!("not compare")
        };
        assert_eq!(c.policies, vec![Policy::Edf, Policy::Rm, Policy::Dm]);
        assert!(c.file.is_none());
    }

    #[test]
    fn model_messages_reach_the_user() {
        let e = Cli::try_parse_from(["schedlab", "simulate", "w.yaml", "--duration", "10parsecs"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown unit"), "{e}");
        let e = Cli::try_parse_from(["schedlab", "simulate", "w.yaml", "--policy", "sjf"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown policy `sjf`"), "{e}");
    }
}
