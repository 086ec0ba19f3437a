//! One module per subcommand, plus what they share: writing the output.

pub mod bench;
pub mod calibrate;
pub mod compare;
pub mod compare_real;
pub mod completions;
pub mod doctor;
pub mod latency;
pub mod report;
pub mod reproduce;
pub mod run;
pub mod simulate;
pub mod trace;

use crate::atomic::write_atomic;
use crate::failure::Failure;
use std::io::Write;
use std::path::Path;

/// Write the finished output to `out` (atomically) or to stdout.
/// A closed stdout (`| head`) is not an error: the reader has what it wanted.
pub fn emit(text: &str, out: Option<&Path>) -> Result<(), Failure> {
    match out {
        Some(path) => write_atomic(path, text.as_bytes())
            .map_err(|e| Failure::output(format!("cannot write {}: {e}", path.display()))),
        None => {
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                Err(e) => Err(Failure::output(format!("cannot write to stdout: {e}"))),
            }
        }
    }
}
