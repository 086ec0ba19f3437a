//! `_native.cli_main(argv)`: the whole `schedlab` command line, from the same Rust build
//! as the module, for the package's `schedlab` console script (python/schedlab/_cli.py).

use pyo3::prelude::*;
use std::ffi::OsString;
use std::path::PathBuf;

/// Run the `schedlab` command with `argv` (the program name first) and return its exit
/// status. The GIL is released while it runs. `argv[0]`, when it is an executable file
/// (the console script), is what `schedlab bench` starts for its child processes.
#[pyfunction]
pub fn cli_main(py: Python<'_>, argv: Vec<OsString>) -> i32 {
    if let Some(first) = argv.first() {
        let path = PathBuf::from(first);
        if is_executable(&path) {
            schedlab_cli::set_self_exe(path);
        }
    }
    py.allow_threads(move || schedlab_cli::run_from(argv))
}

fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
