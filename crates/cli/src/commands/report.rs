//! `schedlab report FILE --policies a,b,... -o report.html`: one self-contained HTML page
//! with the metrics side by side, plots, and per policy a Gantt chart of a window and
//! the per-task table (see `schedlab_trace::report`).

use crate::cli::OverrideArgs;
use crate::commands::compare::default_policies_for;
use crate::commands::emit;
use crate::failure::Failure;
use crate::progress::Progress;
use clap::Args;
use schedlab_model::{Ns, Policy, Workload};
use schedlab_sim::{simulate, SimOptions};
use schedlab_trace::gantt::{parse_window, Window};
use schedlab_trace::report::{render, PolicyRun, Report};
use schedlab_trace::Schedule;
use std::path::PathBuf;

/// Examples shown by `schedlab report --help`.
pub const EXAMPLES: &str = "\
Examples:
  schedlab report examples/table1.yaml --policies edf,llf,illf -o report.html
  schedlab report examples/dhall.yaml --placement global --window 0ms..100ms -o dhall.html

The page needs no network: open it in any browser. Layout and measures: docs/traces.md.";

/// `schedlab report`
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Workload file (YAML, or JSON with a .json extension).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Comma-separated policies, one column and one section each.
    /// Default: every policy for periodic tasks, as `compare`.
    #[arg(long, value_name = "P,P,...", value_delimiter = ',', value_parser = crate::cli::PolicyArg::summaries())]
    pub policies: Vec<Policy>,

    /// Time window of the Gantt charts, e.g. 0ms..300ms. Default: from 0 over two
    /// periods of the slowest task (at most the whole run).
    #[arg(long, value_name = "FROM..TO", value_parser = parse_window)]
    pub window: Option<Window>,

    #[command(flatten)]
    pub overrides: OverrideArgs,

    /// Write the page to OUT (atomically) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
}

/// Default Gantt window: two periods of the slowest periodic task (100ms without any).
pub fn default_window(w: &Workload) -> Window {
    let longest = w.tasks.iter().filter_map(|t| t.period).max();
    Window {
        from: 0,
        to: Some(longest.map_or(100_000_000, |p: Ns| p.saturating_mul(2))),
    }
}

/// Simulate under every policy (with the trace) and write the page.
pub fn run(args: &ReportArgs) -> Result<(), Failure> {
    let base =
        Workload::load(&args.file, &args.overrides.to_overrides(None)).map_err(Failure::input)?;
    let mut policies: Vec<Policy> = Vec::new();
    for p in if args.policies.is_empty() {
        default_policies_for(&base)
    } else {
        args.policies.clone()
    } {
        if !policies.contains(&p) {
            policies.push(p);
        }
    }
    let window = args
        .window
        .unwrap_or_else(|| default_window(&base))
        .clip(base.duration)
        .map_err(|e| Failure::input(format!("--window: {e}")))?;

    let progress = Progress::new();
    let mut sims = Vec::with_capacity(policies.len());
    for (i, &p) in policies.iter().enumerate() {
        progress.item(
            i + 1,
            policies.len(),
            &format!("simulating {} under {}...", base.name, p.name()),
        );
        let w = Workload::load(&args.file, &args.overrides.to_overrides(Some(p)))
            .map_err(Failure::input)?;
        let r = simulate(&w, &SimOptions { trace: true }).map_err(|e| {
            Failure::input(format!("{} under {}: {e}", args.file.display(), p.name()))
        })?;
        let s = Schedule::from_sim(&w, &r)
            .ok_or_else(|| Failure::output("internal error: the simulation recorded no trace"))?;
        sims.push((w, r, s));
    }
    progress.done();
    let page = render(&Report {
        source: args.file.display().to_string(),
        runs: sims
            .iter()
            .map(|(w, r, s)| PolicyRun {
                workload: w,
                result: r,
                schedule: s,
            })
            .collect(),
        window,
        prediction: Vec::new(),
    });
    emit(&page, args.output.as_deref())?;
    if let Some(out) = &args.output {
        if !crate::progress::quiet() {
            eprintln!(
                "wrote {} ({} policies; open it in a browser)",
                out.display(),
                policies.len()
            );
        }
    }
    Ok(())
}
