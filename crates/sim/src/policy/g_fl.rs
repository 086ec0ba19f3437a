//! `g-fl`: global fair lateness (Erickson & Anderson, "Fair lateness scheduling: reducing
//! maximum lateness in G-EDF-like scheduling", ECRTS 2012).
//!
//! A G-EDF-like scheduler: each job gets the fixed priority point
//! y = r + D − ((m − 1)/m)·C (release r, relative deadline D, WCET C, m CPUs) and jobs
//! run in priority-point order. It has the smallest maximum lateness bound of the
//! G-EDF-like schedulers the paper analyses. The key is m·y, so it stays an exact
//! integer; equal keys queue FIFO and never preempt. C is the task's `runtime` (its
//! WCET), not the job's actual execution time.
//!
//! SimSo 0.8.5 (`G_FL.py`) computes the same point in floating-point milliseconds.

use crate::policy::job_prio::{require_global, JobPrio, JobPriority};
use crate::state::{Ctx, TaskId};
use crate::SimError;
use schedlab_model::{Ns, Workload};

/// G-FL's job priority.
#[derive(Debug, Clone, Default)]
pub struct GFl {
    /// CPUs (m).
    pub m: u64,
    /// Per task (workload order): (m − 1)·C.
    pub shift: Vec<u64>,
}

impl GFl {
    /// The rule for `w`'s tasks on `w.platform.cpus` CPUs.
    pub fn for_workload(w: &Workload) -> GFl {
        let m = w.platform.cpus as u64;
        let shift = w
            .tasks
            .iter()
            .map(|t| t.runtime.saturating_mul(m.saturating_sub(1)))
            .collect();
        GFl { m, shift }
    }

    /// m·y for a job with absolute deadline `deadline` of task `t`.
    pub fn scaled_point(&self, t: TaskId, deadline: Ns) -> u64 {
        let shift = self.shift.get(t).copied().unwrap_or(0);
        deadline.saturating_mul(self.m).saturating_sub(shift)
    }
}

impl JobPriority for GFl {
    const NAME: &'static str = "g-fl";

    fn key(&self, ctx: &Ctx, t: TaskId) -> u64 {
        match ctx.task(t).job {
            Some(j) => self.scaled_point(t, j.deadline),
            None => u64::MAX,
        }
    }
}

/// The registry's constructor: global placement only.
pub fn build(w: &Workload) -> Result<JobPrio<GFl>, SimError> {
    require_global(w, GFl::NAME)?;
    Ok(JobPrio::new(GFl::for_workload(w)))
}

/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::GFl,
    build: |w| Ok(Box::new(crate::policy::g_fl::build(w)?)),
}];
