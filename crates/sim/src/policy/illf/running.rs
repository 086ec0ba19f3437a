//! ILLF's running tasks with a stored laxity, per run queue, in no order but one split:
//! those whose stored laxity may be out of date ("stale") before those it is known to
//! equal ("fresh").
//!
//! Rule 1 refreshes every stored laxity, the running tasks' included. A running job
//! progresses at rate 1 when the platform charges no overhead
//! ([`crate::class::Topology::no_overhead`]), so its laxity `deadline − now − remaining`
//! stays as it was while it runs: once evaluated while it runs, a refresh would store
//! the same value again. Only the stale ones (picked since, with the key they had while
//! waiting) need evaluating; every one is still counted as an evaluation.

use crate::state::{RqId, TaskId};

/// The running tasks of every run queue.
#[derive(Debug, Default)]
pub(super) struct Running {
    /// Per run queue: the stale tasks, then the fresh ones.
    lists: Vec<Vec<TaskId>>,
    /// Per run queue: how many of `lists` are stale (they come first).
    stale: Vec<usize>,
    /// Per task: its index in its queue's list (`usize::MAX`: not there).
    pos: Vec<usize>,
}

impl Running {
    pub(super) fn new(nr_rqs: usize, nr_tasks: usize) -> Running {
        Running {
            lists: vec![Vec::new(); nr_rqs],
            stale: vec![0; nr_rqs],
            pos: vec![usize::MAX; nr_tasks],
        }
    }

    /// Number of run queues.
    pub(super) fn nr_rqs(&self) -> usize {
        self.lists.len()
    }

    /// Whether `t` is here (on any queue).
    pub(super) fn contains(&self, t: TaskId) -> bool {
        self.pos[t] != usize::MAX
    }

    /// Every task of `rq`.
    pub(super) fn all(&self, rq: RqId) -> &[TaskId] {
        &self.lists[rq]
    }

    /// The stale tasks of `rq`.
    pub(super) fn stale(&self, rq: RqId) -> &[TaskId] {
        &self.lists[rq][..self.stale[rq]]
    }

    /// Whether `t` (here) is fresh.
    pub(super) fn is_fresh(&self, rq: RqId, t: TaskId) -> bool {
        self.pos[t] >= self.stale[rq]
    }

    fn swap(&mut self, rq: RqId, a: usize, b: usize) {
        let list = &mut self.lists[rq];
        list.swap(a, b);
        self.pos[list[a]] = a;
        self.pos[list[b]] = b;
    }

    /// Add `t` to `rq`, stale.
    pub(super) fn add(&mut self, rq: RqId, t: TaskId) {
        debug_assert!(!self.contains(t));
        let at = self.lists[rq].len();
        self.lists[rq].push(t);
        self.pos[t] = at;
        let first_fresh = self.stale[rq];
        self.swap(rq, at, first_fresh);
        self.stale[rq] += 1;
    }

    /// Take `t` out of `rq`.
    pub(super) fn remove(&mut self, rq: RqId, t: TaskId) {
        let mut at = self.pos[t];
        debug_assert_eq!(self.lists[rq][at], t);
        if at < self.stale[rq] {
            // Its place goes to the last stale task, that one's to the last task.
            let last_stale = self.stale[rq] - 1;
            self.swap(rq, at, last_stale);
            self.stale[rq] = last_stale;
            at = last_stale;
        }
        let last = self.lists[rq].len() - 1;
        self.swap(rq, at, last);
        self.lists[rq].pop();
        self.pos[t] = usize::MAX;
    }

    /// `t` (here) has just had its laxity evaluated: fresh.
    pub(super) fn mark_fresh(&mut self, rq: RqId, t: TaskId) {
        let at = self.pos[t];
        if at < self.stale[rq] {
            let last_stale = self.stale[rq] - 1;
            self.swap(rq, at, last_stale);
            self.stale[rq] = last_stale;
        }
    }

    /// Every task of `rq` has just had its laxity evaluated.
    pub(super) fn all_fresh(&mut self, rq: RqId) {
        self.stale[rq] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(mut v: Vec<TaskId>) -> Vec<TaskId> {
        v.sort_unstable();
        v
    }

    #[test]
    fn stale_tasks_come_first_through_adds_and_removes() {
        let mut r = Running::new(2, 8);
        for t in [0, 1, 2, 3] {
            r.add(0, t);
        }
        r.add(1, 5);
        r.mark_fresh(0, 1);
        r.mark_fresh(0, 3);
        assert_eq!(sorted(r.stale(0).to_vec()), vec![0, 2]);
        assert!(r.is_fresh(0, 1) && !r.is_fresh(0, 2));
        // Removing a stale and a fresh task keeps the split.
        r.remove(0, 0);
        r.remove(0, 3);
        assert_eq!(r.stale(0), &[2]);
        assert_eq!(sorted(r.all(0).to_vec()), vec![1, 2]);
        r.add(0, 4);
        assert_eq!(sorted(r.stale(0).to_vec()), vec![2, 4]);
        r.all_fresh(0);
        assert!(r.stale(0).is_empty());
        assert_eq!(sorted(r.all(0).to_vec()), vec![1, 2, 4]);
        assert!(!r.contains(0) && r.contains(4) && r.contains(5));
        assert_eq!(r.stale(1), &[5]);
        for t in [1, 2, 4] {
            r.remove(0, t);
        }
        assert!(r.all(0).is_empty());
    }
}
