//! `schedlab sweep GRID.yaml`: runs the Python package's sweep (`python3 -m schedlab
//! sweep`), which batches the cells through the same Rust core, runs them serially or on
//! Dask, streams them to Parquet and resumes. One implementation of sweeps, in Python,
//! because Dask, Parquet and the plots live there.

use crate::failure::Failure;
use clap::Args;
use std::path::PathBuf;
use std::process::Command;

/// Examples shown by `schedlab sweep --help`.
pub const EXAMPLES: &str = "\
Examples:
  schedlab sweep grid.yaml --client serial
  schedlab sweep grid.yaml --out out/sweep --plot out/sweep/fig     # resumable
  schedlab sweep grid.yaml --client tcp://10.0.0.5:8786              # a Dask cluster

A grid (docs/analysis.md):
  cpus: 4
  tasks: 16
  utilizations: {from: 2.0, to: 4.0, step: 0.25}
  policies: [edf, llf, illf, edzl, edf@partitioned]
  samples: 100
  duration: 1s

Needs the Python package: pip install . (which also installs this command); Dask: pip install '.[dask]'.";

/// `schedlab sweep`
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The grid (YAML).
    #[arg(value_name = "GRID")]
    pub grid: PathBuf,

    /// Directory for the Parquet results; a sweep started again on it resumes.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// serial, local (a Dask cluster on this machine, the default) or a scheduler address.
    #[arg(long, value_name = "serial|local|ADDRESS")]
    pub client: Option<String>,

    /// Write the figures (PNG and SVG) with this file prefix.
    #[arg(long, value_name = "PREFIX")]
    pub plot: Option<PathBuf>,

    /// Also write every row as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

/// Run `python3 -m schedlab sweep` with the same arguments.
pub fn run(args: &SweepArgs) -> Result<(), Failure> {
    let python = std::env::var_os("SCHEDLAB_PYTHON").unwrap_or_else(|| "python3".into());
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "schedlab", "sweep"]).arg(&args.grid);
    if let Some(o) = &args.out {
        cmd.arg("--out").arg(o);
    }
    if let Some(c) = &args.client {
        cmd.arg("--client").arg(c);
    }
    if let Some(p) = &args.plot {
        cmd.arg("--plot").arg(p);
    }
    if let Some(c) = &args.csv {
        cmd.arg("--csv").arg(c);
    }
    let status = cmd.status().map_err(|e| {
        Failure::input(format!(
            "cannot run {}: {e}; the sweep needs Python 3 with the schedlab package (pip install .)",
            python.to_string_lossy()
        ))
    })?;
    match status.code() {
        Some(0) => Ok(()),
        // The Python side printed its message (`error: ...`, or Python's own for a missing
        // package: `No module named schedlab`, fixed by `pip install .`).
        // 2: the grid's own error, already printed.
        Some(2) => Err(Failure::input("the sweep did not run (see above)")),
        Some(c) => Err(Failure {
            code: c.clamp(1, 255) as u8,
            message: format!(
                "the sweep failed ({} -m schedlab sweep exited {c}); without the Python package, install it from the repository root: pip install .",
                python.to_string_lossy()
            ),
        }),
        None => Err(Failure::output("the sweep was interrupted by a signal")),
    }
}
