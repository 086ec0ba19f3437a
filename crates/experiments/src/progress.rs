//! What an experiment says while it runs: a status line, and a countdown for a real run
//! of known length. The command line shows them on a terminal; other callers may not.

use std::any::Any;
use std::time::Duration;

/// Where an experiment reports progress.
pub trait Progress {
    /// The current step (replaces the previous one).
    fn step(&self, msg: &str);

    /// A real run of `total` starts now: show the time left until the returned guard is
    /// dropped.
    fn countdown(&self, label: &str, total: Duration) -> Box<dyn Any> {
        let _ = (label, total);
        Box::new(())
    }

    /// Put `prefix` before the status lines from now on (`[2/7] ` under `all`).
    fn set_prefix(&self, prefix: &str) {
        let _ = prefix;
    }
}

/// Progress nobody sees (tests, Python).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn step(&self, _msg: &str) {}
}
