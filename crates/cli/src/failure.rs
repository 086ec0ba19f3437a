//! How a command fails: a message for the user and the exit status.

use std::fmt::Display;

/// Exit status for bad input: command line, workload file, or a workload the simulator
/// rejects (clap uses the same code for usage errors).
pub const EXIT_INPUT: u8 = 2;
/// Exit status when the results cannot be written.
pub const EXIT_OUTPUT: u8 = 1;
/// Exit status when `--check` finds the simulator in an impossible state (a bug).
pub const EXIT_BUG: u8 = 3;

/// The line added to the failures of real commands caused by the machine.
pub const DOCTOR_HINT: &str =
    "hint: `schedlab doctor` checks what this machine offers for real runs and how to fix it";

/// A failed command: printed as `error: <message>` on stderr, then exit with `code`.
#[derive(Debug)]
pub struct Failure {
    /// Exit status.
    pub code: u8,
    /// One line (or a few) for a person, without the `error: ` prefix.
    pub message: String,
}

impl Failure {
    /// Bad input (exit 2).
    pub fn input(message: impl Display) -> Failure {
        Failure {
            code: EXIT_INPUT,
            message: message.to_string(),
        }
    }

    /// A real command (run, latency, calibrate, compare --real) failed for a reason of
    /// this machine (a capability, the SCHED_DEADLINE bandwidth, tracefs, sched_ext...):
    /// the message points to `schedlab doctor`, which checks all of them at once.
    pub fn host(code: u8, message: impl Display) -> Failure {
        Failure {
            code,
            message: format!("{message}\n{DOCTOR_HINT}"),
        }
    }

    /// schedlab itself is wrong (exit 3): the message asks for a report.
    pub fn bug(message: impl Display) -> Failure {
        Failure {
            code: EXIT_BUG,
            message: format!(
                "{message}\n(this is a bug in schedlab: please report it with the workload file)"
            ),
        }
    }

    /// Whether the command's files are written although it failed: an interrupted real
    /// run (exit 130/143) prints and writes its partial results on purpose.
    pub fn keeps_outputs(&self) -> bool {
        matches!(self.code, 130 | 143)
    }

    /// Output could not be written (exit 1).
    pub fn output(message: impl Display) -> Failure {
        Failure {
            code: EXIT_OUTPUT,
            message: message.to_string(),
        }
    }
}

impl From<schedlab_experiments::Error> for Failure {
    /// An experiment's failure, with the exit status of its kind (a real run stopped by
    /// Ctrl-C: 130, so that its partial results are kept).
    fn from(e: schedlab_experiments::Error) -> Failure {
        use schedlab_experiments::ErrorKind;
        match e.kind {
            ErrorKind::Input => Failure::input(e.message),
            ErrorKind::Output => Failure::output(e.message),
            ErrorKind::Bug => Failure::bug(e.message),
            ErrorKind::Interrupted => Failure {
                code: 130,
                message: e.message,
            },
        }
    }
}
