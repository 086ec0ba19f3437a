//! `schedlab trace import FILE -o workload.yaml`: a kernel scheduler trace (trace-cmd
//! report text or raw ftrace text) becomes a workload file that can be simulated under
//! other policies. (Export is `simulate --trace-out`.)

use crate::commands::emit;
use crate::failure::Failure;
use clap::{Args, Subcommand, ValueEnum};
use schedlab_model::{parse_duration, Ns};
use schedlab_trace::import::{kernel, Imported};
use std::path::{Path, PathBuf};

/// Examples shown by `schedlab trace --help`.
pub const EXAMPLES: &str = "\\
Examples:
  trace-cmd record --no-filter -d -e sched:sched_switch -e sched:sched_wakeup -o t.dat sleep 3
  trace-cmd report -i t.dat > t.txt
  schedlab trace import t.txt -o machine.yaml
  schedlab trace import /sys/kernel/tracing/instances/NAME/trace --periodic-only -o rt.yaml
  schedlab simulate machine.yaml --policy illf

Formats and what is recovered: docs/traces.md.";

/// `schedlab trace`
#[derive(Debug, Args)]
pub struct TraceArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: TraceCommand,
}

/// `schedlab trace` subcommands.
#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Turn a kernel scheduler trace into a workload file.
    Import(ImportArgs),
}

/// Input formats of `trace import`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImportFormat {
    /// Decide from the content.
    Auto,
    /// `trace-cmd report` text or the raw ftrace `trace` file.
    Ftrace,
}

/// `schedlab trace import`
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The trace: `trace-cmd report` output, or a tracefs `trace` file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Input format.
    #[arg(long, value_enum, default_value_t = ImportFormat::Auto)]
    pub format: ImportFormat,

    /// Workload name (default: the file name).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Skip events other than the scheduler's instead of failing on them.
    #[arg(long)]
    pub ignore_unknown: bool,

    /// Keep only the tasks with a regular period (the real-time part of the trace).
    #[arg(long)]
    pub periodic_only: bool,

    /// Leave out tasks that used less CPU time than this (e.g. 1ms).
    #[arg(long, value_name = "TIME", value_parser = parse_duration, default_value = "0")]
    pub min_cpu: Ns,

    /// Write the workload to OUT (atomically) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
}

/// Run `schedlab trace ...`.
pub fn run(args: &TraceArgs) -> Result<(), Failure> {
    match &args.command {
        TraceCommand::Import(a) => import(a),
    }
}

fn file_name(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "imported".into())
}

fn import(args: &ImportArgs) -> Result<(), Failure> {
    let shown = args.file.display().to_string();
    let bytes = std::fs::read(&args.file)
        .map_err(|e| Failure::input(format!("{shown}: cannot read trace: {e}")))?;
    let text = String::from_utf8_lossy(&bytes);
    let name = args.name.clone().unwrap_or_else(|| file_name(&args.file));
    let imported: Imported = match args.format {
        ImportFormat::Auto | ImportFormat::Ftrace => kernel::import(
            &text,
            &shown,
            &kernel::Options {
                name: Some(name),
                ignore_unknown: args.ignore_unknown,
                periodic_only: args.periodic_only,
                min_cpu: args.min_cpu,
            },
        ),
    }
    .map_err(|e| Failure::input(format!("{shown}: {e}")))?;
    emit(&imported.yaml, args.output.as_deref())?;
    let mut err = String::new();
    for n in &imported.notes {
        err.push_str(&format!("note: {n}\n"));
    }
    err.push_str(&format!(
        "imported {} task{} from {shown}{}\n",
        imported.tasks,
        if imported.tasks == 1 { "" } else { "s" },
        args.output
            .as_ref()
            .map(|o| format!(" into {}", o.display()))
            .unwrap_or_default()
    ));
    eprint!("{err}");
    Ok(())
}
