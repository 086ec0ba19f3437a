//! schedlab's workload model: time in integer nanoseconds, tasks, platform and the
//! workload file format (YAML or JSON) with its validation.
//!
//! The raw file is read into [`spec`] types (serde, unknown fields rejected), then
//! [`Workload::from_spec`] expands `count:`, applies defaults and checks every value,
//! so code downstream only ever sees a valid [`Workload`].
//!
//! Shared by the simulator and the real runner: the policy registry ([`registry`]), the
//! task → kernel class/priority mapping ([`classes`]) and the per-task stream of job
//! execution times and release gaps ([`release`]).

pub mod classes;
pub mod error;
pub mod fair;
pub mod fields;
pub mod guard;
pub mod horizon;
pub mod job_costs;
pub mod kernel;
pub mod limits;
pub mod options;
pub mod periodic;
pub mod registry;
pub mod release;
pub mod spec;
pub mod time;
pub mod weights;
pub mod workload;

pub use classes::{sched_attrs, KernelClass, SchedAttr};
pub use error::ModelError;
pub use options::{OptionDecl, OptionKind, OptionValue, PolicyOptions};
pub use periodic::PeriodicTask;
pub use registry::{PolicyInfo, RealBackends, SchedPolicy, POLICIES};
pub use release::{JobDraw, ReleaseStream};
pub use time::{format_ns, parse_duration, parse_sim_duration, Ns, SimDuration};
pub use weights::WeightTable;
pub use workload::{
    BfsParams, CfsParams, EdzlOptions, EevdfParams, ExecModel, IllfOptions, LlfOptions, OnMiss,
    Overrides, PartitionHeuristic, Phase, Placement, Platform, Policy, PolicyClass, Release,
    Scheduler, Task, TaskClass, Workload,
};
