//! `llref`: Largest Local Remaining Execution time First (Cho, Ravindran & Jensen, "An
//! Optimal Real-Time Scheduling Algorithm for Multiprocessors", RTSS 2006).
//!
//! Time is cut into *TL-planes* at job releases and deadlines: a plane begins at an
//! event and ends at the earliest deadline `tf` of the active jobs. At the start of a
//! plane each active job gets its *local remaining execution* `l`, its fluid share of the
//! plane (`u·(tf − t0)`; computed from the job's absolute fluid target, see
//! [`super::fluid`]). While a job runs its `l` falls at rate 1; a waiting job's *local
//! laxity* `tf − now − l` falls at rate 1. At every event the m jobs with the largest
//! `l` (ties: workload order) run, jobs with `l = 0` never; the events are
//! - a plane boundary (a release, or `tf`);
//! - a *B event*: a running job's `l` reaches 0 (its local budget is used up);
//! - a *C event*: a waiting job's local laxity reaches 0 (it must run to the plane's end);
//! - a job's completion (an execution time below the WCET).
//!
//! A job that keeps running keeps its CPU; a job that starts takes the CPU its job last
//! ran on if that is free, else the lowest free CPU.
//!
//! `laxity_evaluations` counts the local remaining executions compared at each event
//! (one per active job).
//!
//! Differences from SimSo 0.8.5's `LLREF`: SimSo keeps each budget as a float, sorts
//! budgets rounded up to the cycle, and refills the budgets of a plane by adding the new
//! plane's shares to what is left (rounding errors carry over); here the shares come from
//! the absolute fluid target in integer ns, rounded down.

use super::fluid::{self, Plan, TlPlane};
use crate::state::{CpuId, Ctx, TaskId};
use schedlab_model::Ns;

/// LLREF's plan.
#[derive(Default)]
pub struct Llref {
    plane: TlPlane,
    /// Per CPU: the task it runs.
    slots: Vec<Option<TaskId>>,
    next: Option<Ns>,
}

impl Llref {
    /// End of the current TL-plane.
    pub fn plane_end(&self) -> Ns {
        self.plane.end()
    }

    /// `t`'s local remaining execution now.
    pub fn local_remaining(&self, ctx: &Ctx, t: TaskId) -> Ns {
        self.plane.local_remaining(ctx, t)
    }
}

impl Plan for Llref {
    fn name(&self) -> &'static str {
        "llref"
    }

    fn update(&mut self, ctx: &Ctx, wcet: &[Ns], released: bool, _completed: bool) {
        if self.plane.due(ctx, released) {
            self.plane.begin(ctx, wcet);
        }
        // Local remaining execution of every active job, largest first.
        let mut by_l: Vec<(Ns, TaskId)> = (0..ctx.tasks.len())
            .filter(|&t| fluid::active(ctx, t))
            .map(|t| (self.local_remaining(ctx, t), t))
            .collect();
        ctx.count_laxity(by_l.len() as u64);
        by_l.sort_by_key(|&(l, t)| (std::cmp::Reverse(l), t));
        let m = ctx.cpus.len();
        let run: Vec<TaskId> = by_l
            .iter()
            .take(m)
            .filter(|e| e.0 > 0)
            .map(|e| e.1)
            .collect();
        self.slots = fluid::place(ctx, &run);
        // B events of the running jobs, C events of the waiting ones, the plane's end.
        let now = ctx.now;
        let b = by_l.iter().take(m).filter(|e| e.0 > 0).map(|e| now + e.0);
        let c = by_l
            .iter()
            .skip(m)
            .filter(|e| e.0 > 0)
            .map(|e| self.plane.end().saturating_sub(e.0));
        self.next = b.chain(c).chain([self.plane.end()]).filter(|&e| e > now).min();
    }

    fn slot(&self, ctx: &Ctx, cpu: CpuId) -> Option<TaskId> {
        self.slots
            .get(cpu)
            .copied()
            .flatten()
            .filter(|&t| fluid::active(ctx, t))
    }

    fn next_event(&self) -> Option<Ns> {
        self.next
    }
}

/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Llref,
    build: |w| Ok(Box::new(crate::policy::fluid::build(w, Llref::default())?)),
}];
