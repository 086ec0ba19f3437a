//! The seed paper's per-CPU laxity tree: a red-black tree keyed by laxity with two
//! cached pointers, `rb_leftmost` (least laxity) and `rb_left2most` (the next one).
//!
//! Algorithm 1 (insert) and Algorithm 3 (erase) maintain the cache as the paper prints
//! them, with one correction: Algorithm 1 updates `rb_left2most` only when the new node's
//! parent is `rb_leftmost`, which misses a new key that lands in `rb_leftmost`'s right
//! subtree (insert 10, 20, then 15: the printed rule leaves `left2most` at 20). Here the
//! new key is compared with the cached `left2most` instead, so the cache always holds the
//! in-order first and second entries. Equal keys go right (FIFO), as in Algorithm 1.

use std::collections::BTreeSet;
use std::ops::Bound::{Excluded, Unbounded};

/// One tree entry: (laxity, insertion sequence, task).
pub type Entry = (i64, u64, usize);

/// Laxity-ordered tree with cached leftmost / left-2-most entries.
#[derive(Debug, Default, Clone)]
pub struct LaxityTree {
    set: BTreeSet<Entry>,
    leftmost: Option<Entry>,
    left2most: Option<Entry>,
}

impl LaxityTree {
    /// Algorithm 1, corrected: insert and update the cached pointers.
    pub fn insert(&mut self, e: Entry) {
        match self.leftmost {
            Some(l) if e >= l => {
                if self.left2most.is_none_or(|l2| e < l2) {
                    self.left2most = Some(e);
                }
            }
            _ => {
                self.left2most = self.leftmost;
                self.leftmost = Some(e);
            }
        }
        self.set.insert(e);
        self.check();
    }

    /// Algorithm 3: erase and move the cached pointers on.
    pub fn erase(&mut self, e: Entry) {
        if !self.set.remove(&e) {
            return;
        }
        if self.leftmost == Some(e) {
            self.leftmost = self.left2most;
            self.left2most = self.leftmost.and_then(|l| self.successor(l));
        } else if self.left2most == Some(e) {
            self.left2most = self.leftmost.and_then(|l| self.successor(l));
        }
        self.check();
    }

    fn successor(&self, e: Entry) -> Option<Entry> {
        self.set.range((Excluded(e), Unbounded)).next().copied()
    }

    fn check(&self) {
        debug_assert_eq!(self.leftmost, self.set.iter().next().copied());
        debug_assert_eq!(self.left2most, self.set.iter().nth(1).copied());
    }

    /// `rb_leftmost`.
    pub fn leftmost(&self) -> Option<Entry> {
        self.leftmost
    }

    /// `rb_left2most`.
    pub fn left2most(&self) -> Option<Entry> {
        self.left2most
    }

    /// All entries in laxity order.
    pub fn iter(&self) -> impl Iterator<Item = &Entry> {
        self.set.iter()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Algorithm 1 exactly as printed, on a plain binary search tree, for comparison.
    fn printed_algorithm1(keys: &[i64]) -> (Option<i64>, Option<i64>) {
        // nodes: (key, left, right)
        let mut nodes: Vec<(i64, Option<usize>, Option<usize>)> = Vec::new();
        let (mut lm, mut l2m): (Option<usize>, Option<usize>) = (None, None);
        for &k in keys {
            let id = nodes.len();
            nodes.push((k, None, None));
            if id == 0 {
                lm = Some(0);
                continue;
            }
            let (mut leftmost, mut link, mut parent) = (true, Some(0usize), 0usize);
            let mut go_left = false;
            while let Some(p) = link {
                parent = p;
                if k < nodes[p].0 {
                    link = nodes[p].1;
                    go_left = true;
                } else {
                    link = nodes[p].2;
                    go_left = false;
                    leftmost = false;
                }
            }
            if go_left {
                nodes[parent].1 = Some(id);
            } else {
                nodes[parent].2 = Some(id);
            }
            if leftmost {
                l2m = lm;
                lm = Some(id);
            } else if Some(parent) == lm {
                l2m = Some(id);
            }
        }
        (lm.map(|i| nodes[i].0), l2m.map(|i| nodes[i].0))
    }

    #[test]
    fn printed_algorithm1_leaves_left2most_stale_and_ours_does_not() {
        assert_eq!(printed_algorithm1(&[10, 20, 15]), (Some(10), Some(20)));
        let mut t = LaxityTree::default();
        for (i, k) in [10, 20, 15].into_iter().enumerate() {
            t.insert((k, i as u64, i));
        }
        assert_eq!(t.leftmost().map(|e| e.0), Some(10));
        assert_eq!(t.left2most().map(|e| e.0), Some(15));
    }

    #[test]
    fn equal_keys_go_right_and_erase_moves_the_pointers_on() {
        let mut t = LaxityTree::default();
        t.insert((5, 1, 1));
        t.insert((5, 2, 2));
        t.insert((3, 3, 3));
        assert_eq!(t.leftmost(), Some((3, 3, 3)));
        assert_eq!(t.left2most(), Some((5, 1, 1)));
        t.erase((3, 3, 3));
        assert_eq!(t.leftmost(), Some((5, 1, 1)));
        assert_eq!(t.left2most(), Some((5, 2, 2)));
        t.erase((5, 2, 2));
        assert_eq!(t.left2most(), None);
        t.erase((5, 1, 1));
        assert!(t.is_empty() && t.leftmost().is_none());
    }

    #[test]
    fn cache_matches_the_tree_under_random_operations() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut t = LaxityTree::default();
        let mut live: Vec<Entry> = Vec::new();
        for seq in 0..5000u64 {
            if live.is_empty() || rng.random_bool(0.6) {
                let e = (rng.random_range(-20..20), seq, seq as usize);
                t.insert(e);
                live.push(e);
            } else {
                let e = live.swap_remove(rng.random_range(0..live.len()));
                t.erase(e);
            }
            let mut sorted = live.clone();
            sorted.sort();
            assert_eq!(t.leftmost(), sorted.first().copied());
            assert_eq!(t.left2most(), sorted.get(1).copied());
        }
    }
}
