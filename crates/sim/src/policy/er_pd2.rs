//! `er-pd2`: PD² with early release (ERfair; Anderson & Srinivasan, "Early-release fair
//! scheduling", ECRTS 2000, and "Mixed Pfair/ERfair scheduling of asynchronous periodic
//! tasks", JCSS 2004).
//!
//! PD²'s priorities ([`super::pd2`]), but a subtask is eligible as soon as its
//! predecessor has had its quantum (within a job: the job's first subtask at the job's
//! first quantum boundary), not at its pseudo-release: no quantum idles while a job has
//! work, and every subtask still meets its pseudo-deadline, so ER-PD² is optimal as PD² is.
//! SimSo 0.8.5's `ER_PD2` is its `PD2` without the release test; the differences listed
//! in [`super::pd2`] apply.

use super::pd2::Pd2Rule;
use super::pfair::Quantum;
use crate::SimError;
use schedlab_model::Workload;

/// The `er-pd2` class for workload `w`.
pub fn er_pd2(w: &Workload) -> Result<Quantum<Pd2Rule>, SimError> {
    Quantum::for_workload(w, Pd2Rule::new(true))
}

/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::ErPd2,
    build: |w| Ok(Box::new(er_pd2(w)?)),
}];
