//! `edf-us`: EDF-US[m/(2m−1)] (Srinivasan & Baruah, "Deadline-based scheduling of
//! periodic task systems on multiprocessors", Information Processing Letters 84(2), 2002).
//!
//! Global EDF in which every task whose utilisation C/T exceeds m/(2m−1) (m CPUs) is
//! favoured: its jobs come before every other job. The others are ordered by absolute
//! deadline. The paper proves every implicit-deadline set with U ≤ m²/(2m−1) schedulable.
//! The test is exact (C·(2m−1) > m·T in integers).
//!
//! Ties among favoured jobs are "broken arbitrarily" in the paper; here by the earlier
//! deadline, then FIFO, as for every other pair of equal keys.
//!
//! **SimSo differs** (0.8.5, `EDF_US.py`): it implements EDF-US[1/2], favouring tasks
//! with C/T > 1/2 whatever m, and orders favoured jobs FIFO among themselves (priority
//! 0 for all). Sets with no utilisation in (1/2, m/(2m−1)] and at most one ready
//! favoured job at a time schedule the same.

use crate::policy::job_prio::{favoured_first, require_global, JobPrio, JobPriority};
use crate::state::{Ctx, TaskId};
use crate::SimError;
use schedlab_model::{TaskClass, Workload};

/// EDF-US[m/(2m−1)]'s job priority.
#[derive(Debug, Clone, Default)]
pub struct EdfUs {
    /// Per task (workload order): favoured, C/T > m/(2m−1).
    pub heavy: Vec<bool>,
}

impl EdfUs {
    /// The rule for `w`'s tasks on `w.platform.cpus` CPUs.
    pub fn for_workload(w: &Workload) -> EdfUs {
        let m = w.platform.cpus as u128;
        let heavy = w
            .tasks
            .iter()
            .map(|t| match t.period {
                Some(p) if t.class == TaskClass::Deadline => {
                    t.runtime as u128 * (2 * m - 1) > m * p as u128
                }
                _ => false,
            })
            .collect();
        EdfUs { heavy }
    }
}

impl JobPriority for EdfUs {
    const NAME: &'static str = "edf-us";

    fn key(&self, ctx: &Ctx, t: TaskId) -> u64 {
        let heavy = self.heavy.get(t).copied().unwrap_or(false);
        favoured_first(heavy, ctx.sched_deadline(t))
    }
}

/// The registry's constructor: global placement only.
pub fn build(w: &Workload) -> Result<JobPrio<EdfUs>, SimError> {
    require_global(w, EdfUs::NAME)?;
    Ok(JobPrio::new(EdfUs::for_workload(w)))
}

/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::EdfUs,
    build: |w| Ok(Box::new(crate::policy::edf_us::build(w)?)),
}];
