//! `schedlab generate`: one random periodic task set, written as a workload file.

use crate::commands::emit;
use crate::failure::Failure;
use clap::Args;
use schedlab_analysis::{generate, Deadlines, GenSpec, Method, Periods};
use schedlab_model::{parse_duration, Ns};
use std::path::PathBuf;

/// Examples shown by `schedlab generate --help`.
pub const EXAMPLES: &str = "\
Examples:
  schedlab generate --tasks 16 --cpus 4 --utilization 3.2 -o set.yaml
  schedlab generate --tasks 8 --utilization 0.9 --cpus 1 --method randfixedsum --seed 7
  schedlab generate --tasks 16 --utilization 3 --periods 10ms,20ms,40ms,80ms   # harmonic
  schedlab generate --tasks 16 --utilization 3 --periods divisors:3600ms:10ms..1000ms
  schedlab generate --tasks 16 --utilization 3 --deadlines constrained --json
  schedlab generate --tasks 16 --utilization 3.5 | schedlab simulate /dev/stdin --policy llf

Methods: uunifast (no per-task bound), uunifast-discard (redraw until no task is above
--max-task-utilization), randfixedsum (up to 4096 tasks) and tilted (any number; `cfs`
is an alias), both exactly uniform on the bounded simplex. Runtimes are whole
nanoseconds, never above the target utilisation or a task's bound (docs/analysis.md).";

/// `schedlab generate`
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Number of tasks.
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub tasks: usize,

    /// Total utilisation (sum of runtime/period), e.g. 3.2 on 4 CPUs.
    #[arg(
        long,
        visible_alias = "utilisation",
        value_name = "U",
        allow_negative_numbers = true
    )]
    pub utilization: f64,

    /// CPUs of the platform written in the file.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub cpus: usize,

    /// Sampler: uunifast, uunifast-discard, randfixedsum or tilted (alias cfs).
    #[arg(long, value_name = "M", default_value = "uunifast-discard", value_parser = Method::parse)]
    pub method: Method,

    /// Largest utilisation of one task (at most 1).
    #[arg(
        long,
        value_name = "U",
        default_value_t = 1.0,
        allow_negative_numbers = true
    )]
    pub max_task_utilization: f64,

    /// Periods: a range MIN..MAX drawn log-uniformly (e.g. 10ms..1s), a list
    /// P1,P2,... drawn uniformly (e.g. a harmonic set 10ms,20ms,40ms), or
    /// divisors:H[:MIN..MAX], the divisors of H in the range (the hyperperiod divides H).
    #[arg(
        long,
        value_name = "MIN..MAX|P,P,...|divisors:H:MIN..MAX",
        default_value = "10ms..1000ms"
    )]
    pub periods: String,

    /// Periods of a range or of divisors:H are multiples of this (0 for none).
    #[arg(long, value_name = "TIME", default_value = "1ms", value_parser = parse_duration)]
    pub granularity: Ns,

    /// implicit (deadline = period) or constrained (deadline uniform in
    /// [C + r(T − C), T], r = --deadline-ratio).
    #[arg(long, value_name = "implicit|constrained", default_value = "implicit")]
    pub deadlines: String,

    /// r of --deadlines constrained.
    #[arg(long, value_name = "R", default_value_t = 0.0)]
    pub deadline_ratio: f64,

    /// Seed: the same seed gives the same set.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,

    /// Simulated time written in the file.
    #[arg(long, value_name = "TIME", default_value = "1s", value_parser = parse_duration)]
    pub duration: Ns,

    /// Deadline-class policy written in the file's `scheduler:` (e.g. edf, llf).
    #[arg(long, value_name = "P")]
    pub policy: Option<String>,

    /// Placement written in the file's `scheduler:` (global, partitioned, linux).
    #[arg(long, value_name = "PLACEMENT")]
    pub placement: Option<String>,

    /// Workload name.
    #[arg(long, value_name = "NAME", default_value = "generated")]
    pub name: String,

    /// Write JSON instead of YAML.
    #[arg(long)]
    pub json: bool,

    /// Write to OUT instead of stdout (atomically).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
}

/// Parse `--periods` (the syntax of [`Periods::parse`]).
pub fn parse_periods(text: &str, granularity: Ns) -> Result<Periods, String> {
    Periods::parse(text, granularity).map_err(|e| format!("--periods: {e}"))
}

/// Parse `--deadlines`.
pub fn parse_deadlines(text: &str, ratio: f64) -> Result<Deadlines, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "implicit" => Ok(Deadlines::Implicit),
        "constrained" => Ok(Deadlines::Constrained { min_ratio: ratio }),
        other => Err(format!(
            "--deadlines: unknown kind `{other}` (implicit or constrained)"
        )),
    }
}

/// The generator's spec from the command line.
pub fn spec(args: &GenerateArgs) -> Result<GenSpec, String> {
    if let Some(p) = &args.policy {
        let class = schedlab_model::Policy::parse(p)?.class();
        if !matches!(
            class,
            schedlab_model::PolicyClass::Deadline | schedlab_model::PolicyClass::Rt
        ) {
            return Err(format!(
                "--policy {p}: a fair policy cannot be the deadline-class policy of a periodic task set (use edf, llf, illf, edzl, rm or dm)"
            ));
        }
    }
    if let Some(p) = &args.placement {
        schedlab_model::Placement::parse(p)?;
    }
    Ok(GenSpec {
        name: args.name.clone(),
        tasks: args.tasks,
        cpus: args.cpus,
        utilization: args.utilization,
        max_task_utilization: args.max_task_utilization,
        method: args.method,
        periods: parse_periods(&args.periods, args.granularity)?,
        deadlines: parse_deadlines(&args.deadlines, args.deadline_ratio)?,
        seed: args.seed,
        duration: args.duration,
        policy: args.policy.clone(),
        placement: args.placement.clone(),
    })
}

/// Generate, read the file back as `simulate` would, and write it only if it passes.
pub fn run(args: &GenerateArgs) -> Result<(), Failure> {
    let spec = spec(args).map_err(Failure::input)?;
    let set = generate(&spec).map_err(Failure::input)?;
    let text = set.checked_text(args.json).map_err(Failure::input)?;
    emit(&text, args.output.as_deref())
}
