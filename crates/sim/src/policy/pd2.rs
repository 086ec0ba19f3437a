//! `pd2`: the PD² Pfair scheduler (Anderson & Srinivasan, "Mixed Pfair/ERfair scheduling
//! of asynchronous periodic tasks", JCSS 68(1), 2004; Srinivasan & Anderson, "Optimal
//! rate-based scheduling on multiprocessors", STOC 2002).
//!
//! Time is cut into quanta of `platform.quantum` ([`super::pfair`]). At each quantum
//! boundary the m eligible subtasks of highest priority run for one quantum. A subtask
//! T_i is eligible once its pseudo-release ⌊(i−1)L/e⌋ has come (`er-pd2` drops that
//! condition: [`super::er_pd2`]). Priority: the earlier pseudo-deadline ⌈iL/e⌉; on a tie
//! the subtask with b-bit 1 (its window overlaps the next one's); if both have b-bit 1,
//! the later group deadline (heavy tasks, weight ≥ 1/2: the earliest t ≥ d(T_i) with
//! t = d(T_k) and b(T_k) = 0, or t + 1 = d(T_k) and |w(T_k)| = 3; light tasks: 0). PD²
//! leaves the other ties open: here, as in SimSo, the later group deadline goes first
//! among b-bits 0 too, then the lower task index. PD² is optimal: with implicit deadlines and
//! U ≤ m no deadline is missed.
//!
//! Differences from SimSo 0.8.5's `PD2`, which follows the same rules: SimSo's quantum is
//! fixed at 0.1 ms (here `platform.quantum`); both round WCETs up to whole quanta, but
//! SimSo keeps a deadline that is not a whole number of quanta where here a job's window
//! ends at the last quantum boundary before it ([`super::pfair`]); its group deadline stops at the last window of size
//! 2 (here the paper's d(T_k) − 1 for a following window of size 3) and adds the job's
//! activation date in ms to a value in cycles; its remaining ties follow its ready list
//! (activation order), here the task index.

use super::pfair::{window, ActiveJob, Quantum, SlotRule};
use crate::state::TaskId;
use crate::SimError;
use schedlab_model::Workload;
use std::cmp::Reverse;

/// PD²'s priority rule, with or without early release.
pub struct Pd2Rule {
    early_release: bool,
    scratch: Vec<(Pd2Key, TaskId)>,
}

/// PD²'s priority of a subtask: smaller is higher.
type Pd2Key = (u64, bool, Reverse<u64>);

impl Pd2Rule {
    /// PD² (`early_release == false`) or ER-PD² (`true`).
    pub fn new(early_release: bool) -> Pd2Rule {
        Pd2Rule {
            early_release,
            scratch: Vec::new(),
        }
    }
}

/// The group deadline of subtask `i` of a task with `e` quanta every `l` (relative to
/// its job's first quantum): 0 for a light task (e/l < 1/2).
pub fn group_deadline(e: u64, l: u64, i: u64) -> u64 {
    if 2 * e < l {
        return 0;
    }
    let d_i = window(e, l, i).deadline;
    let mut k = i;
    loop {
        let w = window(e, l, k);
        if k > i && w.deadline - w.release == 3 && w.deadline > d_i {
            return w.deadline - 1;
        }
        if !w.b {
            return w.deadline;
        }
        k += 1;
    }
}

/// PD²'s key for a job's next subtask. The group deadline also orders subtasks whose
/// b-bits are both 0 (PD² leaves that tie open; SimSo breaks it the same way), a light
/// task's (0) last.
pub fn pd2_key(j: &ActiveJob) -> Pd2Key {
    let w = j.window();
    let gd = match group_deadline(j.q.e, j.q.window, j.subtask()) {
        0 => 0,
        d => j.anchor + d,
    };
    (w.deadline, !w.b, Reverse(gd))
}

impl SlotRule for Pd2Rule {
    fn name(&self) -> &'static str {
        if self.early_release {
            "er-pd2"
        } else {
            "pd2"
        }
    }

    fn choose(&mut self, slot: u64, jobs: &[ActiveJob], m: usize, out: &mut Vec<TaskId>) {
        self.scratch.clear();
        self.scratch.extend(
            jobs.iter()
                .filter(|j| self.early_release || j.window().release <= slot)
                .map(|j| (pd2_key(j), j.task)),
        );
        self.scratch.sort_unstable();
        out.extend(self.scratch.iter().take(m).map(|e| e.1));
    }
}

/// The `pd2` class for workload `w`.
pub fn pd2(w: &Workload) -> Result<Quantum<Pd2Rule>, SimError> {
    Quantum::for_workload(w, Pd2Rule::new(false))
}


/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Pd2,
    build: |w| Ok(Box::new(pd2(w)?)),
}];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_deadlines_of_weight_8_11_are_4_8_11() {
        // Windows [0,2) [1,3) [2,5) [4,6) [5,7) [6,9) [8,10) [9,11): the size-3 windows
        // end at 5 and 9 (t = 4 and 8), the last one's b-bit is 0 (t = 11). T_3's own
        // size-3 window does not count: t = 4 is before d(T_3) = 5.
        let gd: Vec<u64> = (1..=8).map(|i| group_deadline(8, 11, i)).collect();
        assert_eq!(gd, [4, 4, 8, 8, 8, 11, 11, 11]);
        assert_eq!(group_deadline(3, 7, 1), 0); // light
                                                // Weight 1: every window has size 1 and b-bit 0.
        assert_eq!(group_deadline(4, 4, 2), 2);
    }
}
