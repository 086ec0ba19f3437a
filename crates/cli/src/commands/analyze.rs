//! `schedlab analyze FILE`: every schedulability test on a workload's periodic tasks, with
//! its verdict and why.

use crate::commands::emit;
use crate::failure::Failure;
use clap::Args;
use schedlab_analysis::{report, Report};
use schedlab_model::{Overrides, Workload};
use std::fmt::Write as _;
use std::path::PathBuf;

/// Examples shown by `schedlab analyze --help`.
pub const EXAMPLES: &str = "\
Examples:
  schedlab analyze examples/dhall.yaml
  schedlab analyze set.yaml --cpus 1 --json | jq '.tests[] | {test, outcome}'
  schedlab generate --tasks 8 --utilization 0.9 --cpus 1 | schedlab analyze /dev/stdin

Outcomes: schedulable (proven), unschedulable (proven: exact tests and U > CPUs),
not proven (a sufficient test failed, or a test stopped at its work budget: 'step
limit', or was not run for too many tasks: the set may still be schedulable), n/a.";

/// `schedlab analyze`
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// Workload file (YAML, or JSON with a .json extension).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Analyse for this many CPUs instead of the file's.
    #[arg(long, value_name = "N")]
    pub cpus: Option<u64>,

    #[command(flatten)]
    pub output: crate::cli::OutputArgs,
}

fn render(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "workload   {}    cpus {}    tasks {}    utilisation {:.4}    density {:.4}\n",
        r.workload, r.cpus, r.tasks, r.utilization, r.density
    );
    let tw = r
        .tests
        .iter()
        .map(|v| v.test.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let ow = r
        .tests
        .iter()
        .map(|v| v.outcome.words().len())
        .max()
        .unwrap_or(7)
        .max(7);
    let _ = writeln!(
        out,
        "{:<tw$}  {:<10}  {:<ow$}  why",
        "test", "kind", "verdict"
    );
    for v in &r.tests {
        let _ = writeln!(
            out,
            "{:<tw$}  {:<10}  {:<ow$}  {}: {}",
            v.test,
            if v.exact { "exact" } else { "sufficient" },
            v.outcome.words(),
            v.title,
            v.why
        );
    }
    out
}

/// Load, analyse, print.
pub fn run(args: &AnalyzeArgs) -> Result<(), Failure> {
    let ov = Overrides {
        cpus: args.cpus,
        ..Overrides::default()
    };
    let w = Workload::load(&args.file, &ov).map_err(Failure::input)?;
    let r = report(&w).map_err(|e| Failure::input(format!("{}: {e}", args.file.display())))?;
    let text = if args.output.json {
        crate::output::Provenance::of(w.seed, &ov)
            .stamp(&r)
            .and_then(|v| crate::output::json_line(&v))
            .map_err(|e| Failure::output(format!("cannot encode JSON: {e}")))?
    } else {
        render(&r)
    };
    emit(&text, args.output.output.as_deref())
}
