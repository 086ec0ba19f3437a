//! The `schedlab` command: the whole of it is the library's `run_from` (lib.rs), which
//! the Python package's console script calls too.

use std::process::ExitCode;

fn main() -> ExitCode {
    let code = schedlab_cli::run_from(std::env::args_os());
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
