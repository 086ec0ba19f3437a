//! The running tasks that may be big (remaining time above their stored laxity), for
//! the question a push asks of every CPU under per-CPU queues: does a waiting task Q
//! preempt any running task? Away from zero laxity only Algorithm 2 lets Q in, and only
//! in place of a big K. A running task's remaining time only falls (outside the real
//! runner, whose measured times may rise: [`crate::class::SchedClass::remaining_measured`]),
//! so a task small when its key was stored, or when it started running, stays small
//! until its key is stored again: only the tasks big at one of those moments are kept,
//! and each is tested again when asked.

use crate::state::TaskId;

/// A set of tasks with O(1) insert and removal.
#[derive(Debug, Default)]
pub(super) struct MaybeBig {
    list: Vec<TaskId>,
    /// Per task: its index in `list` (`usize::MAX`: not there).
    pos: Vec<usize>,
}

impl MaybeBig {
    pub(super) fn new(nr_tasks: usize) -> MaybeBig {
        MaybeBig {
            list: Vec::new(),
            pos: vec![usize::MAX; nr_tasks],
        }
    }

    /// Add `t` (nothing if it is there).
    pub(super) fn insert(&mut self, t: TaskId) {
        if self.pos[t] == usize::MAX {
            self.pos[t] = self.list.len();
            self.list.push(t);
        }
    }

    /// Take `t` out (nothing if it is not there).
    pub(super) fn remove(&mut self, t: TaskId) {
        let at = std::mem::replace(&mut self.pos[t], usize::MAX);
        if at != usize::MAX {
            self.list.swap_remove(at);
            if let Some(&moved) = self.list.get(at) {
                self.pos[moved] = at;
            }
        }
    }

    /// Add `t` if `big`, else take it out.
    pub(super) fn set(&mut self, t: TaskId, big: bool) {
        if big {
            self.insert(t);
        } else {
            self.remove(t);
        }
    }

    /// The tasks, in no order.
    pub(super) fn tasks(&self) -> &[TaskId] {
        &self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_and_removals_keep_the_set() {
        let mut s = MaybeBig::new(6);
        for t in [4, 1, 3, 1] {
            s.insert(t);
        }
        s.remove(4);
        s.remove(5);
        let mut v = s.tasks().to_vec();
        v.sort_unstable();
        assert_eq!(v, vec![1, 3]);
        s.remove(1);
        s.insert(0);
        let mut v = s.tasks().to_vec();
        v.sort_unstable();
        assert_eq!(v, vec![0, 3]);
    }
}
