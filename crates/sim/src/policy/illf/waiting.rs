//! ILLF's waiting tasks of one run queue in stored-laxity order, with rule 1's refresh
//! costing the entries stored since the last refresh, not every waiting task.
//!
//! A waiting task's laxity falls at rate 1: `deadline − now − remaining`, with
//! `deadline − remaining` (its zero-laxity instant `z`) fixed while it waits (nothing
//! accounts a task that is not running, and a new job is queued anew). So right after
//! rule 1 refreshed every stored laxity at instant `base`, each entry's key is
//! `z − base`, and the entries are in `(z, seq)` order whatever `base` is. Those entries
//! are kept by `z` ("clean"): the next refresh only moves `base` and files the entries
//! stored since ("dirty": put back, refreshed by rule 2, queued) among them. The order
//! and every key are those of a set refreshed entry by entry.

use crate::laxtree::Entry;
use std::collections::btree_set;
use std::collections::BTreeSet;
use std::iter::Peekable;

/// The waiting entries of one run queue.
#[derive(Debug, Default, Clone)]
pub(super) struct WaitQueue {
    /// Entries refreshed at `base`: `(z, seq, task)`, key `z − base`.
    clean: BTreeSet<Entry>,
    /// Entries stored at any other instant: `(key, seq, task)`.
    dirty: BTreeSet<Entry>,
    /// The instant of the last refresh.
    base: i64,
}

/// How a task's entry is held: its stored key, or its zero-laxity instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Held {
    /// `(key, seq, task)` in the dirty set.
    Dirty(Entry),
    /// `(z, seq, task)` in the clean set.
    Clean(Entry),
}

impl WaitQueue {
    /// The entry as the rules see it: `(stored key, seq, task)`.
    pub(super) fn entry(&self, h: Held) -> Entry {
        match h {
            Held::Dirty(e) => e,
            Held::Clean((z, seq, t)) => (z - self.base, seq, t),
        }
    }

    /// Number of waiting entries.
    pub(super) fn len(&self) -> usize {
        self.clean.len() + self.dirty.len()
    }

    /// Add an entry with an explicit key.
    pub(super) fn insert(&mut self, e: Entry) -> Held {
        self.dirty.insert(e);
        Held::Dirty(e)
    }

    /// Remove an entry; whether it was there.
    pub(super) fn remove(&mut self, h: Held) -> bool {
        match h {
            Held::Dirty(e) => self.dirty.remove(&e),
            Held::Clean(e) => self.clean.remove(&e),
        }
    }

    /// Whether the entry is here.
    pub(super) fn contains(&self, h: Held) -> bool {
        match h {
            Held::Dirty(e) => self.dirty.contains(&e),
            Held::Clean(e) => self.clean.contains(&e),
        }
    }

    /// The least entry.
    pub(super) fn first(&self) -> Option<Entry> {
        self.iter().next()
    }

    /// Every entry in `(key, seq, task)` order.
    pub(super) fn iter(&self) -> Merged<'_> {
        Merged {
            clean: self.clean.iter().peekable(),
            dirty: self.dirty.iter().peekable(),
            base: self.base,
        }
    }

    /// Rule 1 at `now`: every entry's key becomes its task's laxity now. `laxity(t)`
    /// gives it for the entries stored since the last refresh, and `None` for a task
    /// without a zero-laxity instant (no job: its key stays explicit). `moved` gets each
    /// task whose holding changed, with the new one. The clean entries keep theirs
    /// (debug builds compare them with `laxity`).
    pub(super) fn refresh(
        &mut self,
        now: i64,
        mut laxity: impl FnMut(usize) -> (i64, bool),
        moved: &mut Vec<(usize, Held)>,
    ) {
        self.base = now;
        if cfg!(debug_assertions) {
            for &(z, _, t) in &self.clean {
                let (l, has_job) = laxity(t);
                debug_assert!(has_job, "ILLF: task {t} lost its job while waiting");
                debug_assert_eq!(
                    z - now,
                    l,
                    "ILLF: waiting task {t}'s laxity moved other than with time"
                );
            }
        }
        let dirty = std::mem::take(&mut self.dirty);
        for (_, seq, t) in dirty {
            let (l, has_job) = laxity(t);
            let h = match l.checked_add(now) {
                Some(z) if has_job => {
                    self.clean.insert((z, seq, t));
                    Held::Clean((z, seq, t))
                }
                _ => {
                    self.dirty.insert((l, seq, t));
                    Held::Dirty((l, seq, t))
                }
            };
            moved.push((t, h));
        }
    }
}

/// The clean and dirty entries merged in key order.
pub(super) struct Merged<'a> {
    clean: Peekable<btree_set::Iter<'a, Entry>>,
    dirty: Peekable<btree_set::Iter<'a, Entry>>,
    base: i64,
}

impl Iterator for Merged<'_> {
    type Item = Entry;

    fn next(&mut self) -> Option<Entry> {
        let base = self.base;
        let c = self.clean.peek().map(|&&(z, s, t)| (z - base, s, t));
        let d = self.dirty.peek().copied().copied();
        match (c, d) {
            (Some(c), Some(d)) if d < c => {
                self.dirty.next();
                Some(d)
            }
            (Some(c), _) => {
                self.clean.next();
                Some(c)
            }
            (None, Some(d)) => {
                self.dirty.next();
                Some(d)
            }
            (None, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries refreshed at different instants, then stored one by one: the merged
    /// order and keys are those of one sorted set of `(key, seq, task)`.
    #[test]
    fn refresh_and_merge_give_the_sorted_keys() {
        // Zero-laxity instants z of tasks 0..4 (laxity at t = z − t).
        let z = [100i64, 40, 70, 55];
        let mut q = WaitQueue::default();
        let mut held = [None; 4];
        for (t, &zt) in z.iter().enumerate() {
            held[t] = Some(q.insert((zt - 10, t as u64, t)));
        }
        let mut moved = Vec::new();
        q.refresh(20, |t| (z[t] - 20, true), &mut moved);
        assert_eq!(moved.len(), 4);
        for (t, h) in moved.drain(..) {
            held[t] = Some(h);
        }
        let keys: Vec<Entry> = q.iter().collect();
        assert_eq!(keys, vec![(20, 1, 1), (35, 3, 3), (50, 2, 2), (80, 0, 0)]);
        // Task 2 stored explicitly at t = 30 (key 40), between 3 (35 - 0) and 0.
        assert!(q.remove(held[2].unwrap()));
        held[2] = Some(q.insert((40, 2, 2)));
        let keys: Vec<Entry> = q.iter().collect();
        assert_eq!(keys, vec![(20, 1, 1), (35, 3, 3), (40, 2, 2), (80, 0, 0)]);
        assert_eq!(q.entry(held[0].unwrap()), (80, 0, 0));
        // At t = 50 every key is z − 50; only task 2 moves.
        q.refresh(50, |t| (z[t] - 50, true), &mut moved);
        assert_eq!(moved, vec![(2, Held::Clean((70, 2, 2)))]);
        let keys: Vec<Entry> = q.iter().collect();
        assert_eq!(keys, vec![(-10, 1, 1), (5, 3, 3), (20, 2, 2), (50, 0, 0)]);
        assert_eq!(q.first(), Some((-10, 1, 1)));
        assert_eq!(q.len(), 4);
    }

    #[test]
    fn a_task_without_a_job_keeps_an_explicit_key() {
        let mut q = WaitQueue::default();
        q.insert((5, 0, 0));
        let mut moved = Vec::new();
        q.refresh(7, |_| (i64::MAX, false), &mut moved);
        assert_eq!(moved, vec![(0, Held::Dirty((i64::MAX, 0, 0)))]);
        assert_eq!(q.first(), Some((i64::MAX, 0, 0)));
    }
}
