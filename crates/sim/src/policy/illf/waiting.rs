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
//!
//! The dirty entries are a sorted array, least last, fed by an unsorted buffer. A global
//! decision puts back hundreds of running tasks at a tick (rule 3 at zero laxity), then
//! picks the least entries one by one: the buffer takes each put-back in O(1), is sorted
//! once and merged at the next read ([`WaitQueue::settle`]), and a pick of the least
//! dirty entry is a pop. A B-tree insert and removal per preemption were a quarter of
//! scale-1k's global run.

use crate::laxtree::Entry;
use std::collections::btree_set;
use std::collections::BTreeSet;
use std::iter::{Peekable, Rev};

/// The waiting entries of one run queue.
#[derive(Debug, Default, Clone)]
pub(super) struct WaitQueue {
    /// Entries refreshed at `base`: `(z, seq, task)`, key `z − base`.
    clean: BTreeSet<Entry>,
    /// Entries stored at any other instant, `(key, seq, task)`, sorted greatest first
    /// (the least, the one most often taken, is popped from the end).
    dirty: Vec<Entry>,
    /// Dirty entries not yet sorted into `dirty`, in no order.
    pending: Vec<Entry>,
    /// Reused by [`WaitQueue::sort_pending`]: packed keys and tasks.
    packed: Vec<(u64, usize)>,
    /// Reused by [`WaitQueue::settle_pending`]: the entries out of their run.
    rest: Vec<Entry>,
    /// The instant of the last refresh.
    base: i64,
}

/// How a task's entry is held: its stored key, or its zero-laxity instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Held {
    /// `(key, seq, task)` in the dirty entries.
    Dirty(Entry),
    /// `(z, seq, task)` in the clean set.
    Clean(Entry),
}

/// `(key, seq)` as one number in the same order (the task follows from `seq`).
fn order_key(e: &Entry) -> u128 {
    (((e.0 as u64) ^ (1 << 63)) as u128) << 64 | e.1 as u128
}

/// `e`'s place in entries sorted greatest first.
fn search_desc(v: &[Entry], e: &Entry) -> Result<usize, usize> {
    v.binary_search_by(|x| e.cmp(x))
}

/// `(key, seq)` of `a` below `b`'s (the task follows from `seq`).
#[inline]
fn lt(a: &Entry, b: &Entry) -> bool {
    (a.0, a.1) < (b.0, b.1)
}

/// Keep at the front of `v` an ascending run of its entries taken in their order, and
/// move the others to `rest` (cleared first, in their order); the run's length. An
/// entry below the run's last goes to `rest`, unless it is above the one before the
/// last, or the last is the first (then the last was the one out of place, above its
/// neighbours, and goes). `v` keeps its length (the caller truncates or clears it).
fn split_run(v: &mut [Entry], rest: &mut Vec<Entry>) -> usize {
    rest.clear();
    let mut n = 0;
    for i in 0..v.len() {
        let x = v[i];
        if n == 0 || lt(&v[n - 1], &x) {
            v[n] = x;
            n += 1;
        } else if n == 1 || lt(&v[n - 2], &x) {
            rest.push(v[n - 1]);
            v[n - 1] = x;
        } else {
            rest.push(x);
        }
    }
    debug_assert!(v[..n].windows(2).all(|w| lt(&w[0], &w[1])));
    n
}

/// Sort `v` greatest first by `(key, seq)` (seq is unique). When the keys and the
/// sequence numbers each span few enough values that `(key − least key)` above
/// `(seq − least seq)` fits in one `u64` (a decision's put-backs: laxities within
/// seconds of each other), the sort compares those words, in the same order, with the
/// task beside them: at a rule-3 tick of scale-1k about 355 entries, where the 128-bit
/// `order_key` worked out at each comparison cost about 130 instructions an entry.
/// Otherwise it sorts by `order_key`.
fn sort_desc(v: &mut [Entry], packed: &mut Vec<(u64, usize)>) {
    if v.len() < 2 {
        return;
    }
    let (mut kmin, mut kmax, mut smin, mut smax) = (i64::MAX, i64::MIN, u64::MAX, 0u64);
    for &(key, seq, _) in v.iter() {
        kmin = kmin.min(key);
        kmax = kmax.max(key);
        smin = smin.min(seq);
        smax = smax.max(seq);
    }
    let key_bits = 64 - (kmax.wrapping_sub(kmin) as u64).leading_zeros();
    let seq_bits = 64 - (smax - smin).leading_zeros();
    if key_bits + seq_bits > 64 || seq_bits == 64 {
        v.sort_unstable_by_key(|e| std::cmp::Reverse(order_key(e)));
        return;
    }
    packed.clear();
    packed.extend(
        v.iter()
            .map(|&(key, seq, t)| ((key.wrapping_sub(kmin) as u64) << seq_bits | (seq - smin), t)),
    );
    packed.sort_unstable_by_key(|p| std::cmp::Reverse(p.0));
    let seq_mask = (1u64 << seq_bits) - 1;
    for (e, &(p, t)) in v.iter_mut().zip(packed.iter()) {
        let key = if key_bits == 0 {
            kmin
        } else {
            kmin.wrapping_add((p >> seq_bits) as i64)
        };
        *e = (key, (p & seq_mask) + smin, t);
    }
    debug_assert!(v.windows(2).all(|w| order_key(&w[0]) > order_key(&w[1])));
}

/// Lengthen `v` by `k` places that a merge from the back overwrites. The filler is an
/// entry of `v` (or of no zero bytes): a zero filler was a `memset`, which callgrind
/// counts a byte at a time (about 8,500 instructions a rule-3 tick's settle on
/// scale-1k, where a store loop takes a few hundred).
fn grow_for_merge(v: &mut Vec<Entry>, k: usize) {
    let fill = v.last().copied().unwrap_or((1, 1, 1));
    v.resize(v.len() + k, fill);
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
        self.clean.len() + self.dirty.len() + self.pending.len()
    }

    /// Add an entry with an explicit key.
    pub(super) fn insert(&mut self, e: Entry) -> Held {
        self.settle();
        let at = search_desc(&self.dirty, &e).unwrap_err();
        self.dirty.insert(at, e);
        Held::Dirty(e)
    }

    /// [`WaitQueue::insert`], sorted in at the next [`WaitQueue::settle`]: for the
    /// put-backs of a decision, which come in a row before its first read.
    pub(super) fn insert_later(&mut self, e: Entry) -> Held {
        self.pending.push(e);
        Held::Dirty(e)
    }

    /// Sort the entries added by [`WaitQueue::insert_later`] into the dirty ones. Reads
    /// are cheapest after it (they sort a copy otherwise); every other change calls it.
    /// Inlined: per-CPU queues call it at every tick, mostly with nothing to sort.
    #[inline]
    pub(super) fn settle(&mut self) {
        if !self.pending.is_empty() {
            self.settle_pending();
        }
    }

    /// [`WaitQueue::settle`] with entries to sort in.
    ///
    /// A decision's put-backs come in CPU order, which is nearly their key order: the
    /// last rule-3 tick gave the lowest free CPUs to its picks in key order, and a
    /// running task's key does not move; the tasks placed one by one since (at
    /// completions) are out of place. So the entries are split into an ascending run in
    /// their order and the others ([`split_run`]: about four in five are in the run at
    /// a rule-3 tick of scale-1k), the others sorted, and the three merged into the
    /// dirty entries in one pass: a comparison sort of every entry cost about 140
    /// instructions an entry. When the run is not the larger part, all are sorted.
    fn settle_pending(&mut self) {
        let run = split_run(&mut self.pending, &mut self.rest);
        self.pending.truncate(run);
        if self.rest.len() > run {
            self.pending.extend_from_slice(&self.rest);
            self.rest.clear();
            return self.settle_sorted();
        }
        // Packed words when they fit (about 35 instructions a comparison of the
        // two-field keys), greatest first, then turned least first for the merge.
        sort_desc(&mut self.rest, &mut self.packed);
        self.rest.reverse();
        let (run_e, rest) = (&self.pending[..], &self.rest[..]);
        let dirty = &mut self.dirty;
        let n = dirty.len();
        let k = run + rest.len();
        grow_for_merge(dirty, k);
        // From the least end: the least of the three next goes to the last free place
        // (the dirty entries before `i` stay where they are).
        let (mut i, mut a, mut b) = (n, 0, 0);
        for out in (0..n + k).rev() {
            let from_run = b == rest.len() || (a < run && lt(&run_e[a], &rest[b]));
            let x = if from_run { run_e[a] } else { rest[b] };
            if i > 0 && lt(&dirty[i - 1], &x) {
                dirty[out] = dirty[i - 1];
                i -= 1;
            } else {
                dirty[out] = x;
                if from_run {
                    a += 1;
                } else {
                    b += 1;
                }
                if a == run && b == rest.len() {
                    break;
                }
            }
        }
        self.pending.clear();
        self.rest.clear();
        debug_assert!(self.dirty.windows(2).all(|w| w[0] > w[1]));
    }

    /// [`WaitQueue::settle_pending`] for entries in no order: sorted, then merged.
    fn settle_sorted(&mut self) {
        let k = self.pending.len();
        self.sort_pending();
        if self.dirty.is_empty() {
            std::mem::swap(&mut self.dirty, &mut self.pending);
        } else {
            // Merge from the back: both sorted greatest first.
            let n = self.dirty.len();
            grow_for_merge(&mut self.dirty, k);
            let (mut i, mut j, mut out) = (n, k, n + k);
            while j > 0 {
                // The least remaining of either goes to the last free place.
                if i > 0 && self.dirty[i - 1] < self.pending[j - 1] {
                    self.dirty[out - 1] = self.dirty[i - 1];
                    i -= 1;
                } else {
                    self.dirty[out - 1] = self.pending[j - 1];
                    j -= 1;
                }
                out -= 1;
            }
            self.pending.clear();
        }
        debug_assert!(self.dirty.windows(2).all(|w| w[0] > w[1]));
    }

    /// Sort `pending` greatest first by `(key, seq)` ([`sort_desc`]).
    fn sort_pending(&mut self) {
        sort_desc(&mut self.pending, &mut self.packed);
    }

    /// Remove an entry; whether it was there.
    pub(super) fn remove(&mut self, h: Held) -> bool {
        match h {
            Held::Dirty(e) => {
                self.settle();
                if self.dirty.last() == Some(&e) {
                    self.dirty.pop();
                    return true;
                }
                match search_desc(&self.dirty, &e) {
                    Ok(at) => {
                        self.dirty.remove(at);
                        true
                    }
                    Err(_) => false,
                }
            }
            Held::Clean(e) => self.clean.remove(&e),
        }
    }

    /// Whether the entry is here.
    pub(super) fn contains(&self, h: Held) -> bool {
        match h {
            Held::Dirty(e) => search_desc(&self.dirty, &e).is_ok() || self.pending.contains(&e),
            Held::Clean(e) => self.clean.contains(&e),
        }
    }

    /// The least entry.
    #[inline]
    pub(super) fn first(&self) -> Option<Entry> {
        if !self.pending.is_empty() {
            return self.iter().next();
        }
        let c = self.clean.first().map(|&(z, s, t)| (z - self.base, s, t));
        match (c, self.dirty.last().copied()) {
            (Some(c), Some(d)) => Some(c.min(d)),
            (c, d) => c.or(d),
        }
    }

    /// The two least entries: `iter().next()` twice without building the merged walk
    /// (a global decision's pick reads them for every CPU it fills).
    #[inline]
    pub(super) fn first_two(&self) -> (Option<Entry>, Option<Entry>) {
        if !self.pending.is_empty() {
            let mut it = self.iter();
            return (it.next(), it.next());
        }
        let base = self.base;
        let clean = |e: &Entry| (e.0 - base, e.1, e.2);
        let n = self.dirty.len();
        let d1 = self.dirty.last().copied();
        let c1 = self.clean.first().map(clean);
        let pair = match (c1, d1) {
            (Some(c1), Some(d1)) if d1 < c1 => {
                let d2 = n.checked_sub(2).map(|i| self.dirty[i]);
                (Some(d1), Some(d2.map_or(c1, |d2| d2.min(c1))))
            }
            (Some(c1), _) => {
                let c2 = self.clean.iter().nth(1).map(clean);
                let second = match (c2, d1) {
                    (Some(c2), Some(d1)) => Some(c2.min(d1)),
                    (c2, d1) => c2.or(d1),
                };
                (Some(c1), second)
            }
            (None, d1) => (d1, n.checked_sub(2).map(|i| self.dirty[i])),
        };
        debug_assert_eq!(pair, {
            let mut it = self.iter();
            (it.next(), it.next())
        });
        pair
    }

    /// Every entry, greatest first (the least last), when every entry is dirty and
    /// settled: the two least are the last two, as `first_two` gives them. None
    /// otherwise (ask `first_two`). A global decision's picks, after a rule-3 tick put
    /// back most running tasks, mostly find the queue so; they read the two in place
    /// (an answer of two optional entries was copied about four times a pick).
    #[inline]
    pub(super) fn dirty_only(&self) -> Option<&[Entry]> {
        if !self.clean.is_empty() || !self.pending.is_empty() {
            return None;
        }
        let n = self.dirty.len();
        debug_assert_eq!(
            (
                n.checked_sub(1).map(|i| self.dirty[i]),
                n.checked_sub(2).map(|i| self.dirty[i])
            ),
            self.first_two()
        );
        Some(&self.dirty)
    }

    /// Take out the least entry (`second` false) or the second least, after
    /// [`WaitQueue::dirty_only`] answered: `remove` without its search.
    #[inline]
    pub(super) fn take_dirty_first(&mut self, second: bool) -> Entry {
        debug_assert!(self.clean.is_empty() && self.pending.is_empty());
        let n = self.dirty.len();
        if second {
            let e = self.dirty[n - 2];
            self.dirty[n - 2] = self.dirty[n - 1];
            self.dirty.pop();
            e
        } else {
            self.dirty.pop().expect("ILLF: a pick from no entry")
        }
    }

    /// Every entry in `(key, seq, task)` order.
    pub(super) fn iter(&self) -> Merged<'_> {
        // Entries not settled yet: a sorted copy (the class settles before its reads).
        let mut extra = Vec::new();
        if !self.pending.is_empty() {
            extra.clone_from(&self.pending);
            extra.sort_unstable();
        }
        Merged {
            clean: self.clean.iter().peekable(),
            dirty: self.dirty.iter().rev().peekable(),
            extra: extra.into_iter().peekable(),
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
        self.settle();
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
        for &(_, seq, t) in dirty.iter().rev() {
            let (l, has_job) = laxity(t);
            let h = match l.checked_add(now) {
                Some(z) if has_job => {
                    self.clean.insert((z, seq, t));
                    Held::Clean((z, seq, t))
                }
                _ => {
                    self.pending.push((l, seq, t));
                    Held::Dirty((l, seq, t))
                }
            };
            moved.push((t, h));
        }
        // Its allocation is kept for the next dirty entries.
        self.dirty = dirty;
        self.dirty.clear();
        self.settle();
    }
}

/// The clean and dirty entries merged in key order.
pub(super) struct Merged<'a> {
    clean: Peekable<btree_set::Iter<'a, Entry>>,
    dirty: Peekable<Rev<std::slice::Iter<'a, Entry>>>,
    /// A sorted copy of the entries not settled yet (empty, without allocation, after
    /// [`WaitQueue::settle`]).
    extra: Peekable<std::vec::IntoIter<Entry>>,
    base: i64,
}

impl Iterator for Merged<'_> {
    type Item = Entry;

    fn next(&mut self) -> Option<Entry> {
        let base = self.base;
        let c = self.clean.peek().map(|&&(z, s, t)| (z - base, s, t));
        let d = self.dirty.peek().copied().copied();
        if let Some(&x) = self.extra.peek() {
            // Rare (entries not settled): the least of three.
            if c.is_none_or(|c| x < c) && d.is_none_or(|d| x < d) {
                self.extra.next();
                return Some(x);
            }
        }
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
        // Clean and dirty entries mixed: the least two.
        assert_eq!(q.first_two(), (Some((20, 1, 1)), Some((35, 3, 3))));
        assert_eq!(q.entry(held[0].unwrap()), (80, 0, 0));
        // At t = 50 every key is z − 50; only task 2 moves.
        q.refresh(50, |t| (z[t] - 50, true), &mut moved);
        assert_eq!(moved, vec![(2, Held::Clean((70, 2, 2)))]);
        let keys: Vec<Entry> = q.iter().collect();
        assert_eq!(keys, vec![(-10, 1, 1), (5, 3, 3), (20, 2, 2), (50, 0, 0)]);
        assert_eq!(q.first_two(), (Some((-10, 1, 1)), Some((5, 3, 3))));
        assert_eq!(q.first(), Some((-10, 1, 1)));
        assert_eq!(q.len(), 4);
        // A dirty entry least, then the least clean one, then another dirty one.
        q.insert((-20, 4, 4));
        assert_eq!(q.first_two(), (Some((-20, 4, 4)), Some((-10, 1, 1))));
        q.insert((-15, 5, 5));
        assert_eq!(q.first_two(), (Some((-20, 4, 4)), Some((-15, 5, 5))));
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

    /// Put-backs sorted as packed words (keys and sequence numbers close together)
    /// and as 128-bit keys (keys too far apart to pack) come out in the same order.
    #[test]
    fn put_backs_sort_packed_or_not_in_key_order() {
        for spread in [1i64, 1 << 20, 1 << 40, i64::MAX / 2] {
            let mut q = WaitQueue::default();
            let mut all = BTreeSet::new();
            let mut x = 99u64;
            for i in 0..300u64 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                // Some equal keys (the sequence number decides), some negative.
                let key = ((x >> 33) as i64 % 7 - 3) * spread.min(i64::MAX / 4);
                let seq = 1_000_000 + i * 3 + (x & 1);
                let e = (key, seq, i as usize);
                q.insert_later(e);
                all.insert(e);
            }
            q.settle();
            assert!(q.iter().eq(all.iter().copied()), "spread {spread}");
        }
        // Sequence numbers far apart: not packed, the same order.
        let mut q = WaitQueue::default();
        for (i, seq) in [(0usize, u64::MAX - 1), (1, 0), (2, 1 << 63)] {
            q.insert_later((5, seq, i));
        }
        q.settle();
        let order: Vec<usize> = q.iter().map(|e| e.2).collect();
        assert_eq!(order, vec![1, 2, 0]);
    }

    /// Put-backs nearly in key order (a run with words out of place above and below
    /// it, at its ends too), in reverse order, and in no order: the same sorted set.
    #[test]
    fn put_backs_in_a_run_with_outliers_sort_in_key_order() {
        let mut x = 7u64;
        for case in 0..4 {
            let mut keys: Vec<i64> = (0..200).map(|i| i * 10).collect();
            for k in keys.iter_mut() {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                match case {
                    0 if x.is_multiple_of(9) => *k = (x >> 40) as i64 % 2500 - 200,
                    1 => *k = -*k,
                    2 => *k = (x >> 40) as i64 % 50,
                    _ => {}
                }
            }
            keys[0] = 5000;
            let mut q = WaitQueue::default();
            let mut all = BTreeSet::new();
            for (i, &key) in keys.iter().enumerate() {
                let e = (key, 100 + (i as u64 * 7919) % 1000, i);
                q.insert_later(e);
                all.insert(e);
            }
            q.insert((1, 5, 999));
            all.insert((1, 5, 999));
            q.settle();
            assert!(q.iter().eq(all.iter().copied()), "case {case}");
        }
        let e = |k: i64| (k, 0, k as usize);
        let mut v: Vec<Entry> = [5, 1, 2, 9, 3, 4, 0, 8].map(e).to_vec();
        let mut rest = Vec::new();
        let n = split_run(&mut v, &mut rest);
        assert_eq!(&v[..n], &[1, 2, 3, 4, 8].map(e));
        assert_eq!(rest, [5, 9, 0].map(e).to_vec());
        // Equal keys: the sequence number orders them.
        let mut v = vec![(3, 2, 0), (3, 1, 1), (3, 3, 2)];
        assert_eq!(split_run(&mut v, &mut rest), 2);
        assert_eq!(&v[..2], &[(3, 1, 1), (3, 3, 2)]);
        assert_eq!(rest, vec![(3, 2, 0)]);
    }

    /// The picks' fast path: only with every entry dirty and settled, the least two,
    /// either taken out.
    #[test]
    fn picks_from_dirty_entries_take_the_least_two() {
        let mut q = WaitQueue::default();
        for (i, key) in [30i64, 10, 20, 40].into_iter().enumerate() {
            q.insert_later((key, i as u64, i));
        }
        assert_eq!(q.dirty_only(), None); // not settled
        q.settle();
        let e = |i: usize| ([30i64, 10, 20, 40][i], i as u64, i);
        assert_eq!(q.dirty_only(), Some(&[e(3), e(0), e(2), e(1)][..]));
        assert_eq!(q.take_dirty_first(true), e(2));
        assert_eq!(q.take_dirty_first(false), e(1));
        assert_eq!(q.dirty_only(), Some(&[e(3), e(0)][..]));
        assert_eq!(q.take_dirty_first(true), e(3));
        assert_eq!(q.dirty_only(), Some(&[e(0)][..]));
        assert_eq!(q.take_dirty_first(false), e(0));
        assert_eq!(q.dirty_only(), Some(&[][..]));
        // A clean entry: ask `first_two`.
        q.insert((5, 9, 9));
        let mut moved = Vec::new();
        q.refresh(0, |_| (5, true), &mut moved);
        assert_eq!(q.dirty_only(), None);
    }

    /// Put-backs sorted in later, removals and reads in any order: every read gives
    /// what one sorted set of the same entries gives.
    #[test]
    fn entries_sorted_in_later_read_as_one_sorted_set() {
        let mut q = WaitQueue::default();
        let mut all = BTreeSet::new();
        let mut held = Vec::new();
        let mut x = 12345u64; // a fixed pseudo-random sequence
        for seq in 0..400u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let key = (x >> 40) as i64 % 50 - 25;
            let e = (key, seq, seq as usize);
            held.push(if x.is_multiple_of(3) { q.insert(e) } else { q.insert_later(e) });
            all.insert(e);
            // Unsettled reads sort a copy: the same answers.
            assert_eq!(q.first(), all.first().copied());
            let mut least = all.iter().copied();
            assert_eq!(q.first_two(), (least.next(), least.next()));
            if x.is_multiple_of(5) {
                q.settle();
            }
            if x.is_multiple_of(7) {
                // Take the least (a pick) or one in the middle.
                let e = if x.is_multiple_of(2) {
                    *all.first().unwrap()
                } else {
                    *all.iter().nth(all.len() / 2).unwrap()
                };
                assert!(q.contains(held[e.1 as usize]));
                assert!(q.remove(held[e.1 as usize]));
                assert!(!q.remove(held[e.1 as usize]));
                all.remove(&e);
            }
            assert_eq!(q.len(), all.len());
            assert!(q.iter().eq(all.iter().copied()));
            let mut least = all.iter().copied();
            assert_eq!(q.first_two(), (least.next(), least.next()));
        }
    }
}
