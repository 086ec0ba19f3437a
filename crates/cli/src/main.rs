//! The `schedlab` command. Each subcommand lives in `commands/`; clap definitions in
//! `cli.rs`; tables and JSON in `output.rs`.

mod atomic;
mod cli;
mod commands;
mod exports;
mod failure;
mod output;
mod plot;
mod progress;

use clap::Parser;
use cli::{Cli, Command};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Usage errors exit 2 (clap's default); --help and --version exit 0.
    let cli = Cli::parse();
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
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            let _ = writeln!(std::io::stderr(), "error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}
