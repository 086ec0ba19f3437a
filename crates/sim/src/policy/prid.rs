//! `prid`: PriD, EDF(k) with the best k (Goossens, Funk & Baruah, "Priority-driven
//! scheduling of periodic task systems on multiprocessors", Real-Time Systems 25(2-3),
//! 2003).
//!
//! EDF(k) favours the k − 1 tasks of largest utilisation (their jobs come before every
//! other job) and orders the rest by absolute deadline. With the tasks sorted by
//! decreasing utilisation u₁ ≥ u₂ ≥ … and U(τ⁽ᵏ⁺¹⁾) the utilisation of tasks k+1…n, the
//! paper shows EDF(k) schedules the set on
//! m(k) = (k − 1) + ⌈U(τ⁽ᵏ⁺¹⁾) / (1 − u_k)⌉ CPUs (the k − 1 favoured tasks take one CPU
//! each, and the rest is global-EDF-schedulable on m′ CPUs when
//! U(τ⁽ᵏ⁾) ≤ m′ − (m′ − 1)·u_k); PriD uses the k with the smallest m(k) (the first such
//! k). The sort is exact (C_i·T_j against C_j·T_i; equal utilisations keep workload
//! order); m(k) is computed in `f64` as SimSo does, the sum taken in sorted order. A k
//! with u_k ≥ 1 is never chosen (m(k) is unbounded).
//!
//! The EDF part counts as one CPU at least: for k = n the formula's second term is
//! ⌈0⌉ = 0, which would make m(n) = n − 1 and favour all tasks but the lightest, leaving
//! it only the time the others leave idle (5 tasks, the 4 heaviest of utilisation
//! 0.72-0.83, on 4 CPUs: the lightest, 0.46, misses 16 deadlines in 200 ms where global
//! EDF misses none; tests/simso_priority.rs).
//!
//! Ties among favoured jobs go to the earlier deadline, then FIFO (the paper leaves them
//! open). **SimSo differs** (0.8.5, `PriD.py`): it orders favoured jobs FIFO (priority 0
//! for all), and takes m(k) without the one-CPU floor, so it can choose k = n.

use crate::policy::job_prio::{favoured_first, require_global, JobPrio, JobPriority};
use crate::state::{Ctx, TaskId};
use crate::SimError;
use schedlab_model::{TaskClass, Workload};

/// PriD's job priority.
#[derive(Debug, Clone, Default)]
pub struct PriD {
    /// Per task (workload order): one of the k − 1 favoured tasks.
    pub favoured: Vec<bool>,
    /// The chosen k.
    pub k: usize,
}

impl PriD {
    /// The rule for `w`'s periodic tasks.
    pub fn for_workload(w: &Workload) -> PriD {
        // (index, C, T) of the deadline-class periodic tasks.
        let mut tasks: Vec<(usize, u128, u128)> = w
            .tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.class == TaskClass::Deadline)
            .filter_map(|(i, t)| Some((i, t.runtime as u128, t.period? as u128)))
            .filter(|&(_, _, p)| p > 0)
            .collect();
        // Decreasing utilisation, exactly; stable for equal ones.
        tasks.sort_by(|a, b| (b.1 * a.2).cmp(&(a.1 * b.2)));
        let util = |&(_, c, p): &(usize, u128, u128)| c as f64 / p as f64;
        let mut rest: f64 = tasks.iter().map(util).sum();
        let mut best: Option<(f64, usize)> = None;
        for (km1, task) in tasks.iter().enumerate() {
            let u = util(task);
            rest -= u;
            if u >= 1.0 {
                continue;
            }
            // The EDF part needs one CPU at least (see the file's doc).
            let m = km1 as f64 + (rest.max(0.0) / (1.0 - u)).ceil().max(1.0);
            if best.is_none_or(|(bm, _)| m < bm) {
                best = Some((m, km1 + 1));
            }
        }
        let k = best.map_or(1, |(_, k)| k);
        let mut favoured = vec![false; w.tasks.len()];
        for &(i, _, _) in &tasks[..k - 1] {
            favoured[i] = true;
        }
        PriD { favoured, k }
    }
}

impl JobPriority for PriD {
    const NAME: &'static str = "prid";

    fn key(&self, ctx: &Ctx, t: TaskId) -> u64 {
        let fav = self.favoured.get(t).copied().unwrap_or(false);
        favoured_first(fav, ctx.sched_deadline(t))
    }
}

/// The registry's constructor: global placement only.
pub fn build(w: &Workload) -> Result<JobPrio<PriD>, SimError> {
    require_global(w, PriD::NAME)?;
    Ok(JobPrio::new(PriD::for_workload(w)))
}

/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Prid,
    build: |w| Ok(Box::new(crate::policy::prid::build(w)?)),
}];
