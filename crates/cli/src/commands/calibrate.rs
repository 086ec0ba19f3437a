//! `schedlab calibrate [-o platform.yaml]`: measure this machine's context-switch,
//! migration, wake-up and idle-exit costs and the runner's per-job costs, and write a
//! `platform:` block for workloads and for `schedlab compare --platform`.

use crate::commands::emit;
use crate::failure::Failure;
use crate::progress::Progress;
use clap::Args;
use std::path::PathBuf;

const CALIBRATE_EXAMPLES: &str = "\
Examples:
  sudo schedlab calibrate -o platform.yaml
  schedlab compare examples/table1-2cpu.yaml --policies edf,llf,illf --platform platform.yaml
  sudo schedlab calibrate --json | jq .context_switch_ns

Takes about 3 s (after any other schedlab real run: it would be measured too); the timer wake-ups are measured without and then with a PM QoS request
of 0 (root), and the difference is written as the platform's idle exit cost. With CAP_SYS_NICE the measuring threads run at SCHED_FIFO. The runner's own job loop is timed too and
written as `job_costs` (CPU per job beyond its work, wake-up delay after a release: docs/fidelity.md).";

/// `schedlab calibrate`
#[derive(Debug, Args)]
#[command(after_help = CALIBRATE_EXAMPLES)]
pub struct CalibrateArgs {
    /// Print the measurements as one JSON object instead of the YAML platform block.
    #[arg(long)]
    pub json: bool,

    /// Write to OUT instead of stdout (atomically: OUT.tmp, then rename).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
}

/// Measure and print.
pub fn run(args: &CalibrateArgs) -> Result<(), Failure> {
    let progress = Progress::new();
    progress.step("calibrating: context switches, migrations, wake-ups with and without PM QoS, per-job costs (about 3 s)...");
    let c = schedlab_linux::calibrate::calibrate();
    progress.done();
    let text = if args.json {
        let mut s = serde_json::to_string(&c)
            .map_err(|e| Failure::output(format!("cannot encode JSON: {e}")))?;
        s.push('\n');
        s
    } else {
        c.platform_yaml()
    };
    emit(&text, args.output.as_deref())
}
