//! Rule 4's candidates of one run queue (the waiting tasks activated at the instant), in
//! the tree's order, as a sorted vector instead of a `BTreeSet`.
//!
//! A release instant of scale-1k activates about 22 tasks, each inserted and, when a
//! batch picks it, removed; the set is cleared at the next release instant. The B-tree
//! allocated and freed its nodes for them (about 290 instructions an activation). The
//! vector keeps the entries greatest first, so that the least, which a pick takes, is
//! at its end. An entry that does not go at the end of a long vector is pushed there
//! and the vector sorted at its next read: scale-10k's synchronous release activates
//! 10,000 tasks at once, which 10,000 shifting inserts would make quadratic.

use crate::laxtree::Entry;
use std::cell::{Cell, Ref, RefCell};

/// Up to this length an entry out of place is inserted where it goes.
const SHIFT_INSERT_MAX: usize = 64;

/// The candidates, greatest first.
#[derive(Debug, Default, Clone)]
pub(super) struct Candidates {
    /// Greatest first once sorted (reads sort it through a shared reference).
    entries: RefCell<Vec<Entry>>,
    /// Entries were pushed out of order since the last sort.
    unsorted: Cell<bool>,
}

impl Candidates {
    /// Whether there is none.
    pub(super) fn is_empty(&self) -> bool {
        self.entries.borrow().is_empty()
    }

    /// Add `e`; nothing if it is here (a set: a task activated again at the instant, as
    /// when pushed back to the queue, is inserted again).
    pub(super) fn insert(&mut self, e: Entry) {
        let unsorted = self.unsorted.get();
        let v = self.entries.get_mut();
        if unsorted || v.last().is_none_or(|l| *l > e) {
            v.push(e); // a second copy, if any, goes at the next sort
        } else if v.len() <= SHIFT_INSERT_MAX {
            let at = v.partition_point(|x| *x > e);
            if v.get(at) != Some(&e) {
                v.insert(at, e);
            }
        } else if v.last() != Some(&e) {
            v.push(e);
            self.unsorted.set(true);
        }
    }

    /// Take `e` out; whether it was here.
    pub(super) fn remove(&mut self, e: &Entry) -> bool {
        self.sort();
        let v = self.entries.get_mut();
        if v.last() == Some(e) {
            v.pop();
            return true;
        }
        match v.binary_search_by(|x| e.cmp(x)) {
            Ok(at) => {
                v.remove(at);
                true
            }
            Err(_) => false,
        }
    }

    /// Whether `e` is here (debug checks).
    pub(super) fn contains(&self, e: &Entry) -> bool {
        self.entries.borrow().contains(e)
    }

    /// Take every entry out.
    pub(super) fn clear(&mut self) {
        self.entries.get_mut().clear();
        self.unsorted.set(false);
    }

    /// The entries in no particular order, taken out (give the allocation back with
    /// [`Candidates::set`]).
    pub(super) fn take(&mut self) -> Vec<Entry> {
        self.unsorted.set(false);
        std::mem::take(self.entries.get_mut())
    }

    /// Replace the entries with `v` (any order).
    pub(super) fn set(&mut self, v: Vec<Entry>) {
        *self.entries.get_mut() = v;
        self.unsorted.set(true);
    }

    /// The entries, greatest first (iterate `.iter().rev()` for the tree's order).
    pub(super) fn sorted(&self) -> Ref<'_, [Entry]> {
        self.sort();
        Ref::map(self.entries.borrow(), |v| &v[..])
    }

    fn sort(&self) {
        if self.unsorted.get() {
            let mut v = self.entries.borrow_mut();
            v.sort_unstable_by(|a, b| b.cmp(a));
            v.dedup();
            self.unsorted.set(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Inserts (in order, out of order, past the shifting length) and removals read as
    /// the B-tree set they stand for.
    #[test]
    fn reads_as_the_tree_set() {
        let mut c = Candidates::default();
        let mut set = BTreeSet::new();
        let mut x: u64 = 7;
        for i in 0..300u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let e = ((x >> 40) as i64 % 50 - 10, i, i as usize);
            c.insert(e);
            set.insert(e);
            if i % 5 == 1 {
                c.insert(e); // again: a set
            }
            if i % 7 == 3 {
                let least = *set.first().unwrap();
                assert!(c.remove(&least) && set.remove(&least));
            }
            if i % 11 == 5 {
                let some = *set.iter().nth(set.len() / 2).unwrap();
                assert!(c.remove(&some) && set.remove(&some));
                assert!(!c.remove(&some));
            }
            if i % 3 == 0 {
                let got: Vec<Entry> = c.sorted().iter().rev().copied().collect();
                assert_eq!(got, set.iter().copied().collect::<Vec<_>>());
            }
        }
        let v = c.take();
        c.set(v.into_iter().map(|(k, s, t)| (k / 2, s, t)).collect());
        let want: BTreeSet<Entry> = set.iter().map(|&(k, s, t)| (k / 2, s, t)).collect();
        let got: Vec<Entry> = c.sorted().iter().rev().copied().collect();
        assert_eq!(got, want.into_iter().collect::<Vec<_>>());
        c.clear();
        assert!(c.is_empty());
    }
}
