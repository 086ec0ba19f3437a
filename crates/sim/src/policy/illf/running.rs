//! ILLF's running tasks with a stored laxity, per run queue, in no order, with those
//! whose stored laxity may be out of date ("stale") listed apart from those it is known
//! to equal ("fresh").
//!
//! Rule 1 refreshes every stored laxity, the running tasks' included. A running job
//! progresses at rate 1 when the platform charges no overhead
//! ([`crate::class::Topology::no_overhead`]), so its laxity `deadline − now − remaining`
//! stays as it was while it runs: once evaluated while it runs, a refresh would store
//! the same value again. Only the stale ones (picked since, with the key they had while
//! waiting) need evaluating; every one is still counted as an evaluation.
//!
//! A global decision adds and removes hundreds of running tasks at a tick, and rule 1
//! reads the stale ones a few times a tick: so a task joining is appended to its queue's
//! stale list, and leaving or turning fresh only clears its mark; the list is compacted
//! when it is read ([`Running::stale`]).

use crate::state::{RqId, TaskId};

/// The running tasks of every run queue.
#[derive(Debug, Default)]
pub(super) struct Running {
    /// Per run queue: its tasks, in no order.
    lists: Vec<Vec<TaskId>>,
    /// Per run queue: every task that joined since the queue was last all fresh, some
    /// gone or fresh since (their mark is clear), some twice.
    stale_lists: Vec<Vec<TaskId>>,
    /// Per task: its index in its queue's list (`usize::MAX`: not there).
    pos: Vec<usize>,
    /// Per task: here and stale.
    stale_mark: Vec<bool>,
}

impl Running {
    pub(super) fn new(nr_rqs: usize, nr_tasks: usize) -> Running {
        Running {
            lists: vec![Vec::new(); nr_rqs],
            stale_lists: vec![Vec::new(); nr_rqs],
            pos: vec![usize::MAX; nr_tasks],
            stale_mark: vec![false; nr_tasks],
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

    /// The stale tasks of `rq`, each once (the list compacted).
    pub(super) fn stale(&mut self, rq: RqId) -> &[TaskId] {
        self.compact(rq);
        for &t in &self.stale_lists[rq] {
            self.stale_mark[t] = true;
        }
        &self.stale_lists[rq]
    }

    /// Rule 1's refresh: the stale tasks of `rq`, each once, taken out, every task of
    /// `rq` fresh from now on (give the list back with [`Running::give_back`]).
    pub(super) fn take_stale(&mut self, rq: RqId) -> Vec<TaskId> {
        self.compact(rq);
        std::mem::take(&mut self.stale_lists[rq])
    }

    /// The list [`Running::take_stale`] gave, for its allocation.
    pub(super) fn give_back(&mut self, rq: RqId, mut list: Vec<TaskId>) {
        list.clear();
        if self.stale_lists[rq].is_empty() {
            self.stale_lists[rq] = list;
        }
    }

    /// Keep the first entry of each task of `rq` still marked, clearing the marks (a
    /// second entry is dropped; a task that moved to another queue since is that
    /// queue's).
    fn compact(&mut self, rq: RqId) {
        let Running {
            lists,
            stale_lists,
            pos,
            stale_mark,
        } = self;
        let members = &lists[rq];
        stale_lists[rq].retain(|&t| {
            members.get(pos[t]) == Some(&t) && std::mem::replace(&mut stale_mark[t], false)
        });
    }

    /// Whether `t` (here) is fresh.
    pub(super) fn is_fresh(&self, _rq: RqId, t: TaskId) -> bool {
        !self.stale_mark[t]
    }

    /// Add `t` to `rq`, stale.
    pub(super) fn add(&mut self, rq: RqId, t: TaskId) {
        debug_assert!(!self.contains(t));
        self.pos[t] = self.lists[rq].len();
        self.lists[rq].push(t);
        self.stale_mark[t] = true;
        self.stale_lists[rq].push(t);
        // Bounded between refreshes: entries of tasks gone are dropped now and then.
        if self.stale_lists[rq].len() > 2 * self.lists[rq].len() + 64 {
            self.stale(rq);
        }
    }

    /// Take `t` out of `rq`.
    pub(super) fn remove(&mut self, rq: RqId, t: TaskId) {
        let at = std::mem::replace(&mut self.pos[t], usize::MAX);
        let list = &mut self.lists[rq];
        debug_assert_eq!(list[at], t);
        list.swap_remove(at);
        if let Some(&moved) = list.get(at) {
            self.pos[moved] = at;
        }
        self.stale_mark[t] = false;
    }

    /// `t` (here) has just had its laxity evaluated: fresh.
    pub(super) fn mark_fresh(&mut self, _rq: RqId, t: TaskId) {
        self.stale_mark[t] = false;
    }

    /// Every task of `rq` has just had its laxity evaluated (rule 1 uses
    /// [`Running::take_stale`]).
    #[cfg(test)]
    pub(super) fn all_fresh(&mut self, rq: RqId) {
        let members = &self.lists[rq];
        for &t in &self.stale_lists[rq] {
            // Not a task that moved to another queue since (stale there).
            if members.get(self.pos[t]) == Some(&t) {
                self.stale_mark[t] = false;
            }
        }
        self.stale_lists[rq].clear();
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

    /// A task that leaves and joins again, here or on another queue, is stale once and
    /// only where it is; marking a queue all fresh leaves the other queue's mark.
    #[test]
    fn a_task_that_rejoins_or_moves_is_stale_once_where_it_is() {
        let mut r = Running::new(2, 4);
        r.add(0, 1);
        r.remove(0, 1);
        r.add(0, 1);
        r.add(0, 2);
        assert_eq!(sorted(r.stale(0).to_vec()), vec![1, 2]);
        // Task 2 moves to queue 1: stale there, not on queue 0.
        r.remove(0, 2);
        r.add(1, 2);
        assert_eq!(r.stale(0), &[1]);
        r.all_fresh(0);
        assert!(r.stale(0).is_empty());
        assert_eq!(r.stale(1), &[2]);
        assert!(!r.is_fresh(1, 2) && r.is_fresh(0, 1));
        // Many joins and leaves between refreshes keep the list bounded.
        for _ in 0..1000 {
            r.remove(0, 1);
            r.add(0, 1);
        }
        assert!(r.stale_lists[0].len() <= 2 * r.all(0).len() + 65);
        assert_eq!(r.stale(0), &[1]);
        // Rule 1 takes the stale tasks: all fresh after, the list given back.
        r.add(0, 3);
        let taken = r.take_stale(0);
        assert_eq!(sorted(taken.clone()), vec![1, 3]);
        assert!(r.is_fresh(0, 1) && r.is_fresh(0, 3) && !r.is_fresh(1, 2));
        r.give_back(0, taken);
        assert!(r.stale(0).is_empty());
        assert_eq!(r.stale(1), &[2]);
    }
}
