//! schedlab's discrete-event simulator.
//!
//! [`simulate`] runs a validated [`Workload`] and returns a [`SimResult`].
//! The engine (module `engine`) owns time, events, CPUs, accounting and tracing; policies
//! implement [`class::SchedClass`], a trait shaped like the kernel's `struct sched_class`.

pub mod result;

pub use result::{CpuResult, Segment, SimResult, TaskResult};
use schedlab_model::Workload;

/// Options that do not change the schedule.
#[derive(Debug, Clone, Default)]
pub struct SimOptions {
    /// Record every run segment in [`SimResult::trace`].
    pub trace: bool,
}

/// Why a workload cannot be simulated.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SimError {
    /// The workload asks for something the simulator does not model (yet).
    #[error("{0}")]
    Unsupported(String),
    /// Partitioned placement could not fit the tasks on the CPUs.
    #[error("{0}")]
    Partition(String),
}

/// Simulate `w` and return its results.
pub fn simulate(w: &Workload, opts: &SimOptions) -> Result<SimResult, SimError> {
    let _ = (w, opts);
    Err(SimError::Unsupported("engine not written yet".into()))
}
