//! `g-fl-zl`: G-FL with zero-laxity promotion, as SimSo 0.8.5 has it (`G_FL_ZL.py`, which
//! cites no paper): EDZL's rule (Cho, Lee, Han & Jeong, "Efficient real-time scheduling
//! algorithms for multiprocessor systems", IEICE Trans. Communications, 2002) applied to
//! G-FL's priority points (Erickson & Anderson, ECRTS 2012; policy/g_fl.rs) instead of
//! deadlines.
//!
//! Jobs run in priority-point order (y = r + D − ((m − 1)/m)·C), except that a waiting
//! job whose laxity (deadline − now − remaining) reaches zero is promoted above every
//! unpromoted job, at the exact instant (a waiting job's laxity falls at rate 1, so the
//! instant, deadline − remaining, is known in advance). This is `edzl` in exact mode with
//! another order (policy/edzl.rs): a job queued with laxity ≤ 0 is promoted at once, and
//! promoted jobs are ordered by priority point among themselves; equal keys queue FIFO
//! and never preempt. `laxity_evaluations` counts as for `edzl`.
//!
//! **SimSo differs**: promoted jobs all get priority 0, so they run FIFO among
//! themselves; and its zero-laxity timer only considers instants strictly after the
//! current one, so a job that already has zero laxity when it is queued is not
//! promoted until its priority point makes it win.

use crate::policy::edzl::Edzl;
use crate::policy::g_fl::GFl;
use crate::policy::job_prio::require_global;
use crate::SimError;
use schedlab_model::Workload;

/// Registry name.
pub const NAME: &str = "g-fl-zl";

/// The registry's constructor: global placement only.
pub fn build(w: &Workload) -> Result<Edzl, SimError> {
    require_global(w, NAME)?;
    Ok(Edzl::on_priority_points(GFl::for_workload(w)))
}

/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::GFlZl,
    build: |w| Ok(Box::new(crate::policy::g_fl_zl::build(w)?)),
}];
