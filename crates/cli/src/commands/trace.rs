//! `schedlab trace import FILE -o workload.yaml`: a kernel scheduler trace (trace-cmd
//! report text or raw ftrace text) or an rt-app JSON configuration becomes a workload
//! file that can be simulated under other policies. (Export is `simulate --trace-out`.)

use crate::commands::emit;
use crate::failure::Failure;
use clap::{Args, Subcommand, ValueEnum};
use schedlab_model::{parse_duration, Ns};
use schedlab_trace::import::{kernel, rtapp, Imported};
use std::path::{Path, PathBuf};

/// Examples shown by `schedlab trace --help`.
pub const EXAMPLES: &str = "\
Examples:
  trace-cmd record --no-filter -d -e sched:sched_switch -e sched:sched_wakeup -o t.dat sleep 3
  trace-cmd report -i t.dat > t.txt
  schedlab trace import t.txt -o machine.yaml
  schedlab trace import /sys/kernel/tracing/instances/NAME/trace --periodic-only -o rt.yaml
  schedlab simulate machine.yaml --policy illf
  schedlab trace import /usr/share/doc/rt-app/examples/tutorial/example2.json -o rtapp.yaml

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
    /// Turn a kernel scheduler trace or an rt-app configuration into a workload file.
    Import(ImportArgs),
}

/// Input formats of `trace import`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImportFormat {
    /// Decide from the content.
    Auto,
    /// `trace-cmd report` text or the raw ftrace `trace` file.
    Ftrace,
    /// An rt-app JSON configuration.
    RtApp,
}

/// `schedlab trace import`
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The trace (`trace-cmd report` output, or a tracefs `trace` file) or an rt-app
    /// JSON configuration.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Input format (auto: rt-app for a .json name or text starting with `{`, else ftrace).
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

    /// rt-app: drop events and keys with no workload equivalent (mutexes, barriers,
    /// suspend/resume, ...; listed in the notes) instead of failing on them.
    #[arg(long)]
    pub ignore_unsupported: bool,

    /// rt-app: number of CPUs of the workload (default: the highest CPU in an affinity
    /// + 1, at least 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub cpus: Option<u16>,

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
    let rt_app = match args.format {
        ImportFormat::RtApp => true,
        ImportFormat::Ftrace => false,
        ImportFormat::Auto => {
            args.file
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("json"))
                || text.trim_start().starts_with('{')
        }
    };
    let imported: Imported = if rt_app {
        rtapp::import(
            &text,
            &shown,
            &rtapp::Options {
                name: Some(name),
                ignore_unsupported: args.ignore_unsupported,
                cpus: args.cpus.map(usize::from),
            },
        )
    } else {
        kernel::import(
            &text,
            &shown,
            &kernel::Options {
                name: Some(name),
                ignore_unknown: args.ignore_unknown,
                periodic_only: args.periodic_only,
                min_cpu: args.min_cpu,
            },
        )
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
