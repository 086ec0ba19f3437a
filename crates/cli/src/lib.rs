//! The `schedlab` command as a library: `run_from` is the whole command line, called by
//! the binary (`main.rs`) and by the Python package's `schedlab` console script (through
//! `schedlab._native.cli_main`), so that `pip install .` gives the same CLI, from the same
//! build as the module. Each subcommand lives in `commands/`; clap definitions in
//! `cli.rs`; tables and JSON in `output.rs`.

mod atomic;
mod cli;
mod commands;
mod exports;
mod failure;
mod output;
mod plot;
mod progress;
mod table;

/// The provenance keys every `--json` result ends with, for the Python module's results.
pub use commands::reproduce::report_json;
pub use output::Provenance;

use clap::Parser;
use cli::{Cli, Command};
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The arguments `run_from` was given (without the program name): what the outputs are
/// checked against (an output that is also an input is refused). Not `std::env::args`,
/// which inside Python is the interpreter's command line.
static ARGS: OnceLock<Vec<OsString>> = OnceLock::new();

/// The program to start for a child `schedlab` process (`bench` measures each case in
/// one); set by the Python entry point, whose `current_exe` is the interpreter.
static SELF_EXE: OnceLock<PathBuf> = OnceLock::new();

/// The command's arguments, without the program name.
pub(crate) fn args() -> &'static [OsString] {
    ARGS.get().map_or(&[], Vec::as_slice)
}

/// The program that runs `schedlab` again: the one given to [`set_self_exe`], else this
/// process's executable.
pub(crate) fn self_exe() -> std::io::Result<PathBuf> {
    match SELF_EXE.get() {
        Some(p) => Ok(p.clone()),
        None => std::env::current_exe(),
    }
}

/// Name the program that starts `schedlab` (the Python console script), for the commands
/// that run themselves in a child process. Only the first call counts.
pub fn set_self_exe(path: PathBuf) {
    let _ = SELF_EXE.set(path);
}

/// Run the `schedlab` command line `args` (the program name first, as `std::env::args_os`
/// gives it) and return its exit status: 0, 1 (a failure), 2 (a usage error) or the
/// status of docs/errors.md. Call it once per process: outputs are committed by it.
pub fn run_from(args: impl IntoIterator<Item = OsString>) -> i32 {
    let args: Vec<OsString> = args.into_iter().collect();
    let _ = ARGS.set(args.iter().skip(1).cloned().collect());
    // Usage errors exit 2 (clap's default); --help and --version exit 0.
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    let code = run(&cli);
    // Inside Python nothing flushes Rust's stdout at exit.
    let _ = std::io::stdout().flush();
    code
}

fn run(cli: &Cli) -> i32 {
    progress::set_quiet(cli.quiet);
    let outcome = match &cli.command {
        Command::Simulate(args) => commands::simulate::run(args),
        Command::Compare(args) => commands::compare::run(args),
        Command::Reproduce(args) => commands::reproduce::run(args),
        Command::Run(args) => commands::run::run(args),
        Command::Calibrate(args) => commands::calibrate::run(args),
        Command::Report(args) => commands::report::run(args),
        Command::Trace(args) => commands::trace::run(args),
        Command::Latency(args) => commands::latency::run(args),
        Command::Bench(args) => commands::bench::run(args),
        Command::Generate(args) => commands::generate::run(args),
        Command::Analyze(args) => commands::analyze::run(args),
        Command::Sweep(args) => commands::sweep::run(args),
        Command::Doctor(args) => commands::doctor::run(args),
        Command::Completions(args) => commands::completions::run_completions(args),
        Command::Manpage(args) => commands::completions::run_manpage(args),
    };
    // Files are written only by a command that succeeded (or an interrupted real run,
    // whose partial results are deliberate): see atomic.rs.
    let outcome = match outcome {
        Ok(()) => atomic::commit().map_err(failure::Failure::output),
        Err(f) if f.keeps_outputs() => atomic::commit()
            .map_err(failure::Failure::output)
            .and(Err(f)),
        Err(f) => {
            atomic::discard();
            Err(f)
        }
    };
    match outcome {
        Ok(()) => 0,
        Err(f) => {
            let _ = writeln!(std::io::stderr(), "error: {}", f.message);
            i32::from(f.code)
        }
    }
}
