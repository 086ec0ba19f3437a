//! schedlab's discrete-event simulator.
//!
//! [`simulate`] runs a validated [`Workload`] and returns a [`SimResult`].
//! The engine ([`engine`]) owns time, events, CPUs, accounting and tracing; policies
//! implement [`class::SchedClass`], a trait shaped like the kernel's `struct sched_class`,
//! one file each under [`policy`], each built through the policy registry ([`registry`]).

pub mod class;
pub mod derived;
pub mod engine;
pub mod estimate;
pub mod event_queue;
pub mod heap;
pub mod laxtree;
pub mod partition;
pub mod policy;
pub mod queue;
pub mod registry;
pub mod result;
pub mod state;

pub use engine::external::{External, ExternalJob};
pub use estimate::{estimate_events, EventEstimate};
pub use result::{CpuResult, PartitionReport, Segment, SimResult, TaskResult, WorkStats};
use schedlab_model::{KernelClass, Placement, Policy, PolicyClass, Workload};
use state::ClassId;

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
    /// The invariant checker ([`simulate_checked`]) found the engine in an impossible
    /// state: a bug in schedlab, reported with the instant and what was wrong.
    #[error("invariant violated {0}")]
    Invariant(String),
}

/// Policies for periodic tasks that the simulator implements: the model registry's
/// periodic policies, in its order (each has a constructor in [`registry`]).
pub const PERIODIC_POLICIES: [Policy; schedlab_model::registry::PERIODIC_COUNT] =
    schedlab_model::registry::PERIODIC;

/// Simulate `w` and return its results.
pub fn simulate(w: &Workload, opts: &SimOptions) -> Result<SimResult, SimError> {
    Ok(engine_for(w, opts)?.run())
}

/// [`simulate`] with the engine's invariant checker on after every instant (no task on
/// two CPUs, class priority order, work conservation, queue consistency, accounting
/// bounds...; see `engine/check.rs`). Slower; the schedule is the same when no
/// invariant is violated.
pub fn simulate_checked(w: &Workload, opts: &SimOptions) -> Result<SimResult, SimError> {
    engine_for(w, opts)?.run_checked()
}

/// The class of `p` for `w`, from the policy registry.
fn build_class(w: &Workload, p: Policy) -> Result<Box<dyn class::SchedClass>, SimError> {
    match registry::sim_policy(p) {
        Some(e) => (e.build)(w),
        None => Err(SimError::Unsupported(format!(
            "policy `{}` is not simulated yet",
            p.name()
        ))),
    }
}

/// The engine [`simulate`] runs for `w`, ready to start (to run it in steps with
/// [`engine::Engine::run_until`]).
pub fn engine_for(w: &Workload, opts: &SimOptions) -> Result<engine::Engine, SimError> {
    engine_of(w, opts, true)
}

/// [`engine_for`] taking the workload: its names are moved into the engine instead of
/// copied (a sweep cell's 16 tasks' names were allocated and freed once more each).
/// An error is the same as [`engine_for`]'s (the names are moved after the engine is
/// built).
pub fn engine_for_owned(w: Workload, opts: &SimOptions) -> Result<engine::Engine, SimError> {
    let mut engine = engine_of(&w, opts, false)?;
    engine.take_names(w);
    Ok(engine)
}

/// [`engine_for`], the names copied or not ([`engine::Engine::build`]).
fn engine_of(w: &Workload, opts: &SimOptions, names: bool) -> Result<engine::Engine, SimError> {
    let policy = w.scheduler.policy;
    // The policy's class fills its slot; the others get their defaults (an empty
    // deadline class, the rt class for explicit fifo/rr tasks).
    let (dl_class, rt_class): (Box<dyn class::SchedClass>, _) = match policy.class() {
        PolicyClass::Deadline => (build_class(w, policy)?, registry::rt_class(w)?),
        PolicyClass::Rt => (
            Box::new(policy::edf::Edf::default()),
            build_class(w, policy)?,
        ),
        PolicyClass::Fair | PolicyClass::Whole => {
            return Err(SimError::Unsupported(format!(
                "policy `{}` is not simulated yet (available: {})",
                policy.name(),
                PERIODIC_POLICIES.map(|p| p.name()).join(", ")
            )))
        }
    };

    let attrs = schedlab_model::sched_attrs(w);
    let task_class: Vec<ClassId> = attrs
        .iter()
        .map(|a| match a.class() {
            KernelClass::Deadline => ClassId::Dl,
            KernelClass::Rt => ClassId::Rt,
            KernelClass::Fair => ClassId::Fair,
        })
        .collect();
    let rt_prio: Vec<u8> = attrs.iter().map(|a| a.rt_priority()).collect();
    // Partitioning binds the real-time tasks; fair tasks keep their load balancing.
    let mut partition = vec![None; w.tasks.len()];
    let mut partition_report = None;
    if w.scheduler.placement == Placement::Partitioned {
        let rt: Vec<usize> = (0..w.tasks.len())
            .filter(|&i| task_class[i] != ClassId::Fair)
            .collect();
        let (cpus, report) = partition::place(
            &w.tasks,
            &rt,
            w.platform.cpus,
            policy,
            w.scheduler.partition,
        )
        .map_err(SimError::Partition)?;
        for (k, &i) in rt.iter().enumerate() {
            partition[i] = Some(cpus[k]);
        }
        partition_report = Some(report);
    }
    let has_fair = task_class.contains(&ClassId::Fair);
    let fair_class: Box<dyn class::SchedClass> = match w.scheduler.fair {
        p if !p.is_periodic() && registry::sim_policy(p).is_some() => build_class(w, p)?,
        _ if !has_fair => Box::new(policy::cfs::Cfs::new(w.scheduler.cfs)),
        other => {
            return Err(SimError::Unsupported(format!(
                "fair policy `{}` is not simulated yet (available: {})",
                other.name(),
                registry::SIM_POLICIES
                    .iter()
                    .filter(|e| !e.policy.is_periodic())
                    .map(|e| e.policy.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
    };
    let mut engine = engine::Engine::build(
        w,
        vec![dl_class, rt_class, fair_class],
        &task_class,
        &rt_prio,
        partition,
        opts.trace,
        names,
    )?;
    engine.partition_report = partition_report;
    Ok(engine)
}
