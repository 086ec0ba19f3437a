//! Progress on stderr, shown only when stderr is a terminal (quiet when piped or in CI).

use std::io::{IsTerminal, Write};

/// A one-line status that rewrites itself.
pub struct Progress {
    on: bool,
}

impl Progress {
    /// Enabled when stderr is a terminal.
    pub fn new() -> Progress {
        Progress {
            on: std::io::stderr().is_terminal(),
        }
    }

    /// Replace the status line with `msg`.
    pub fn step(&self, msg: &str) {
        if self.on {
            let mut e = std::io::stderr().lock();
            let _ = write!(e, "\r\x1b[2K{msg}");
            let _ = e.flush();
        }
    }

    /// Clear the status line.
    pub fn done(&self) {
        if self.on {
            let mut e = std::io::stderr().lock();
            let _ = write!(e, "\r\x1b[2K");
            let _ = e.flush();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done();
    }
}
