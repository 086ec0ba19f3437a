//! schedlab's traces: what a person looks at and what other tools load.
//!
//! - [`schedule::Schedule`]: a simulated schedule as the kernel would trace it (tasks
//!   with pids and priorities, every context switch, every wake-up, every job), built
//!   from a traced simulation result;
//! - exports: [`perfetto`] (protobuf `.pftrace` for ui.perfetto.dev), [`ftrace`]
//!   (`trace-cmd report` text) and [`jobs`] (CSV of every job);
//! - [`gantt`]: a terminal Gantt chart of a time window;
//! - [`report`]: a self-contained HTML report comparing policies;
//! - [`import`]: kernel traces (trace-cmd report / raw ftrace text) and rt-app
//!   configurations turned into workload files.

pub mod ftrace;
pub mod gantt;
pub mod import;
pub mod jobs;
pub mod perfetto;
pub mod report;
pub mod schedule;

pub use schedule::Schedule;
