//! schedlab's discrete-event simulator.
//!
//! [`simulate`] runs a validated [`Workload`] and returns a [`SimResult`].
//! The engine ([`engine`]) owns time, events, CPUs, accounting and tracing; policies
//! implement [`class::SchedClass`], a trait shaped like the kernel's `struct sched_class`,
//! one file each under [`policy`].

pub mod class;
pub mod engine;
pub mod laxtree;
pub mod partition;
pub mod policy;
pub mod queue;
pub mod result;
pub mod state;

pub use result::{CpuResult, Segment, SimResult, TaskResult};
use schedlab_model::time::S;
use schedlab_model::{Placement, Policy, PolicyClass, TaskClass, Workload};
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
}

/// Policies for periodic tasks that the simulator implements.
pub const PERIODIC_POLICIES: [Policy; 8] = [
    Policy::Edf,
    Policy::Llf,
    Policy::Illf,
    Policy::Edzl,
    Policy::Rm,
    Policy::Dm,
    Policy::Fifo,
    Policy::Rr,
];

/// Simulate `w` and return its results.
pub fn simulate(w: &Workload, opts: &SimOptions) -> Result<SimResult, SimError> {
    Ok(engine_for(w, opts)?.run())
}

/// The engine [`simulate`] runs for `w`, ready to start (to run it in steps with
/// [`engine::Engine::run_until`]).
pub fn engine_for(w: &Workload, opts: &SimOptions) -> Result<engine::Engine, SimError> {
    let policy = w.scheduler.policy;
    let dl_class: Box<dyn class::SchedClass> = match policy {
        Policy::Edf | Policy::Rm | Policy::Dm | Policy::Fifo | Policy::Rr => {
            Box::new(policy::edf::Edf::default())
        }
        Policy::Llf if !w.scheduler.llf.exact => {
            Box::new(policy::llf::Llf::new(w.scheduler.llf.lrs_tie))
        }
        Policy::Llf if w.scheduler.placement == Placement::Global => {
            return Err(SimError::Unsupported(
                "llf mode exact needs per-CPU run queues: use placement linux or partitioned (global placement works with mode tick)".into(),
            ))
        }
        Policy::Llf => Box::new(policy::llf::Llf::exact(policy::llf::TieRule::Edf)),
        Policy::Illf => Box::new(policy::illf::Illf::new(w.scheduler.illf)),
        Policy::Edzl => Box::new(policy::edzl::Edzl::new(w.scheduler.edzl.exact)),
        other => {
            return Err(SimError::Unsupported(format!(
                "policy `{}` is not simulated yet (available: {})",
                other.name(),
                PERIODIC_POLICIES.map(|p| p.name()).join(", ")
            )))
        }
    };
    let hz = w.platform.hz as u64;
    let slice_ticks = if hz == 0 {
        0
    } else {
        (w.scheduler.rr_timeslice * hz / S).max(1)
    };
    let rt_class: Box<dyn class::SchedClass> = Box::new(policy::rt::Rt::new(slice_ticks));

    let auto_prio = policy::rt::assign_priorities(policy, &w.tasks);
    let mut task_class = Vec::with_capacity(w.tasks.len());
    let mut rt_prio = Vec::with_capacity(w.tasks.len());
    for (i, t) in w.tasks.iter().enumerate() {
        let (class, prio) = match t.class {
            TaskClass::Deadline if policy.class() == PolicyClass::Deadline => (ClassId::Dl, 0),
            TaskClass::Deadline => (ClassId::Rt, auto_prio[i]),
            TaskClass::Fifo | TaskClass::Rr => (ClassId::Rt, t.priority.unwrap_or(50)),
            TaskClass::Normal | TaskClass::Batch | TaskClass::Idle | TaskClass::Iso => {
                (ClassId::Fair, 0)
            }
        };
        task_class.push(class);
        rt_prio.push(prio);
    }
    // Partitioning binds the real-time tasks; fair tasks keep their load balancing.
    let mut partition = vec![None; w.tasks.len()];
    if w.scheduler.placement == Placement::Partitioned {
        let rt: Vec<usize> = (0..w.tasks.len())
            .filter(|&i| task_class[i] != ClassId::Fair)
            .collect();
        let cpus = partition::first_fit_decreasing(&w.tasks, &rt, w.platform.cpus)
            .map_err(SimError::Partition)?;
        for (k, &i) in rt.iter().enumerate() {
            partition[i] = Some(cpus[k]);
        }
    }
    let has_fair = task_class.contains(&ClassId::Fair);
    let fair_class: Box<dyn class::SchedClass> = match w.scheduler.fair {
        Policy::Cfs => Box::new(policy::cfs::Cfs::new(w.scheduler.cfs)),
        Policy::Bfs => Box::new(policy::bfs::Bfs::new(
            w.scheduler.bfs,
            w.platform.cpus,
            w.platform.hz,
        )),
        Policy::Eevdf => Box::new(
            policy::eevdf::Eevdf::new(w.scheduler.eevdf).with_tick(S.checked_div(hz).unwrap_or(0)),
        ),
        _ if !has_fair => Box::new(policy::cfs::Cfs::new(w.scheduler.cfs)),
        other => {
            return Err(SimError::Unsupported(format!(
                "fair policy `{}` is not simulated yet (available: cfs, eevdf, bfs)",
                other.name()
            )))
        }
    };
    engine::Engine::new(
        w,
        vec![dl_class, rt_class, fair_class],
        &task_class,
        &rt_prio,
        partition,
        opts.trace,
    )
}
