//! schedlab's workload model: time in integer nanoseconds, tasks, platform and the
//! workload file format (YAML or JSON) with its validation.
//!
//! The raw file is read into [`spec`] types (serde, unknown fields rejected), then
//! [`Workload::from_spec`] expands `count:`, applies defaults and checks every value,
//! so code downstream only ever sees a valid [`Workload`].

pub mod error;
pub mod kernel;
pub mod spec;
pub mod time;
pub mod weights;
pub mod workload;

pub use error::ModelError;
pub use time::{format_ns, parse_duration, Ns};
pub use weights::WeightTable;
pub use workload::{
    BfsParams, CfsParams, EdzlOptions, EevdfParams, ExecModel, IllfOptions, LlfOptions, OnMiss,
    Overrides, Phase, Placement, Platform, Policy, PolicyClass, Release, Scheduler, Task,
    TaskClass, Workload,
};
