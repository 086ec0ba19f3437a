//! Schedulability studies: random task-set generators ([`generate`], [`utilisation`]) and
//! schedulability tests ([`tests`]) over the sporadic tasks of a workload ([`taskset`]).
//!
//! Generators draw from a seeded ChaCha8 generator, so a seed names a task set; the
//! tests use integer nanoseconds wherever the answer depends on it (response times,
//! processor demand, interference), so they are exact where they claim to be.

pub mod generate;
pub mod partition;
pub mod report;
pub mod taskset;
pub mod tests;
pub mod utilisation;

// The exact comparisons the tests rely on, and the global multiprocessor tests.
pub mod exact;
pub mod global;

pub use generate::{generate, Deadlines, GenSpec, GenTask, Method, Periods, TaskSet, METHODS};
pub use report::{report, Report};
pub use taskset::{from_workload, from_workload_unnamed, RtTask};
pub use tests::{analyze, analyze_outcomes, Outcome, Verdict, TESTS};
