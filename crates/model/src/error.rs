//! Errors for reading and validating workloads: each names the file, the place and the problem.

use std::path::PathBuf;

/// Everything that can be wrong with a workload file, as a message for a person.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The file could not be read.
    #[error("{path}: cannot read workload: {source}")]
    Io {
        /// File named by the user.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The text is not valid YAML/JSON or does not match the format.
    #[error("{path}{location}: {message}")]
    Syntax {
        /// File named by the user (or `<input>`).
        path: PathBuf,
        /// `:line:column` when the parser knows it, else empty.
        location: String,
        /// Field path and problem.
        message: String,
    },
    /// The document parsed but a value is not acceptable.
    #[error("{path}: {message}")]
    Invalid {
        /// File named by the user (or `<input>`).
        path: PathBuf,
        /// Which task/field and what is wrong.
        message: String,
    },
}
