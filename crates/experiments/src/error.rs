//! How an experiment fails: what kind of failure, and a message for a person.

use std::fmt;

/// What went wrong, so that a caller can choose its exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad input: an experiment's workload rejected, a results file unusable, an option
    /// that cannot apply.
    Input,
    /// A file could not be written, or a real run could not complete.
    Output,
    /// schedlab itself is wrong (a built-in record does not parse).
    Bug,
    /// A real run was stopped by Ctrl-C (SIGINT).
    Interrupted,
}

/// A failed experiment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// One line (or a few) for a person.
    pub message: String,
}

impl Error {
    fn new(kind: ErrorKind, message: impl fmt::Display) -> Error {
        Error {
            kind,
            message: message.to_string(),
        }
    }

    /// Bad input.
    pub fn input(message: impl fmt::Display) -> Error {
        Error::new(ErrorKind::Input, message)
    }

    /// A file could not be written.
    pub fn output(message: impl fmt::Display) -> Error {
        Error::new(ErrorKind::Output, message)
    }

    /// A bug in schedlab.
    pub fn bug(message: impl fmt::Display) -> Error {
        Error::new(ErrorKind::Bug, message)
    }

    /// A real run stopped by the signal `why` (`SIGINT`: [`ErrorKind::Interrupted`]; any
    /// other: [`ErrorKind::Output`], a run that could not complete).
    pub fn stopped(why: &str, message: impl fmt::Display) -> Error {
        let kind = if why == "SIGINT" {
            ErrorKind::Interrupted
        } else {
            ErrorKind::Output
        };
        Error::new(kind, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
