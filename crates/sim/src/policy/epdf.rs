//! `epdf`: earliest pseudo-deadline first (Anderson & Srinivasan, "Pfair scheduling:
//! beyond periodic task systems", RTCSA 2000; Srinivasan & Anderson, "Efficient
//! scheduling of soft real-time applications on multiprocessors", ECRTS 2003).
//!
//! At each quantum boundary ([`super::pfair`]) the m eligible subtasks (pseudo-release
//! ⌊(i−1)L/e⌋ come) with the earliest pseudo-deadlines ⌈iL/e⌉ run; ties go to the lower
//! task index. EPDF is PD² without its tie-breaks: optimal on two CPUs, not beyond
//! (deadlines can be missed with U ≤ m on three or more).
//!
//! SimSo 0.8.5's `EPDF` uses a fixed 1 ms quantum and does not round: pseudo-jobs are
//! released by timers and end when the job has run `seq` quanta, so a job that is not a
//! whole number of quanta ends mid-quantum and its CPU is given away at once; here WCETs
//! are rounded up to whole quanta ([`super::pfair`]) and decisions happen at boundaries
//! only. Its ties follow its ready list.

use super::pfair::{ActiveJob, Quantum, SlotRule};
use crate::state::TaskId;
use crate::SimError;
use schedlab_model::Workload;

/// EPDF's priority rule.
#[derive(Default)]
pub struct EpdfRule {
    scratch: Vec<(u64, TaskId)>,
}

impl SlotRule for EpdfRule {
    fn name(&self) -> &'static str {
        "epdf"
    }

    fn choose(&mut self, slot: u64, jobs: &[ActiveJob], m: usize, out: &mut Vec<TaskId>) {
        self.scratch.clear();
        self.scratch.extend(
            jobs.iter()
                .map(|j| (j.window(), j.task))
                .filter(|(w, _)| w.release <= slot)
                .map(|(w, t)| (w.deadline, t)),
        );
        self.scratch.sort_unstable();
        out.extend(self.scratch.iter().take(m).map(|e| e.1));
    }
}

/// The `epdf` class for workload `w`.
pub fn epdf(w: &Workload) -> Result<Quantum<EpdfRule>, SimError> {
    Quantum::for_workload(w, EpdfRule::default())
}

/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Epdf,
    build: |w| Ok(Box::new(epdf(w)?)),
}];
