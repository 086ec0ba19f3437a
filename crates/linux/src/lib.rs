//! schedlab's real-kernel runner: a workload as real threads on the host kernel, under
//! SCHED_DEADLINE / SCHED_FIFO / SCHED_RR / SCHED_OTHER or under a user-space dispatcher
//! for policies the kernel does not have (LLF, ILLF), measured with the simulator's
//! definitions and reported as the simulator's result object.
//!
//! - [`privileges`]: CAP_SYS_NICE check, naming what is missing;
//! - [`policy`]: sched_setattr / affinity, SCHED_DEADLINE admission capacity;
//! - [`thread`]: locked memory, pre-faulted stacks, signal routing;
//! - [`job`]: jobs that burn thread CPU time;
//! - [`behaviour`]: fair tasks' run/sleep phases and `work:`, as the simulator runs them;
//! - [`fields`]: what a real run does with each field of the workload format;
//! - [`runner`]: releases, records, watchdog, RLIMIT_RTTIME, SIGINT/SIGTERM;
//! - [`releases`]: each task's jobs (release, execution time, deadline), drawn as the
//!   simulator draws them;
//! - [`decide`] and [`dispatcher`]: the user-space EDF/LLF/ILLF dispatcher;
//! - [`host`]: the host kernel's fair class and tunables (read, or documented defaults);
//! - [`measure`]: switches, preemptions, migrations, misses and the result object;
//! - [`latency`]: `schedlab latency`, a cyclictest-like probe with optional load and CPU
//!   shield;
//! - [`cgroup`]: an optional CPU group that shields a run's fair tasks from other sessions;
//! - [`machine_lock`]: one real run at a time (a system-wide lock), and the recovery of a
//!   killed run's shield before anything else;
//! - [`pm_qos`]: PM QoS CPU latency requests (`/dev/cpu_dma_latency`), idle states held off;
//! - [`calibrate`]: context-switch, migration and wake-up costs of this machine;
//! - [`scx`]: `--backend scx`, schedlab's sched_ext BPF schedulers (scx/) via their loader;
//! - [`tracefs`]: a private tracefs instance recording a run's CPUs (`run --trace-out`),
//!   removed on every exit path and after a SIGKILL by the next run;
//! - [`traced`]: the run's schedule rebuilt from that trace and counted with the
//!   simulator's definitions ([`traced::TracedRun`]: per-job records, metrics, other work);
//! - [`prediction`]: the simulator's prediction against a traced run, metric by metric.

pub mod behaviour;
pub mod calibrate;
pub mod cgroup;
pub mod decide;
pub mod dispatcher;
pub mod fields;
pub mod host;
pub mod job;
pub mod latency;
pub mod machine_lock;
pub mod measure;
pub mod pm_qos;
pub mod policy;
pub mod prediction;
pub mod privileges;
pub mod releases;
pub mod runner;
pub mod scx;
pub mod thread;
pub mod traced;
pub mod tracefs;

pub use measure::{DispatcherStats, RunResult};
pub use runner::{run, Backend, RunConfig, RunError, DEFAULT_MARGIN};
