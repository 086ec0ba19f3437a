//! An indexed 4-ary min-heap per run queue, ordered by `(key, seq, task)`: the same
//! order as [`crate::queue::Keyed`]'s B-trees, for classes that only need the first task
//! (EDF, rt). Insertion and removal are O(log n) with no allocation once the queues have
//! grown, against a B-tree's node searches and rebalancing; the price is that the entries
//! are not in order, so a class that walks its queue in order keeps [`Keyed`].
//!
//! [`Keyed`]: crate::queue::Keyed

use crate::state::{CpuId, Ctx, TaskId};
use std::cell::Cell;

/// One queued task: its key, its tie-break sequence, and the task (the last tie-break).
pub type Entry = (u64, u64, TaskId);

/// Run queues as indexed heaps, with [`crate::queue::Keyed`]'s interface: `push`,
/// `push_seq`, `remove`, `peek`, `pop` and the per-task `pos`.
///
/// Each entry has four children (`4i + 1 ..= 4i + 4`), not two: with 100,000 tasks
/// waiting a binary heap is 17 levels deep and every level moved writes the moved task's
/// `slot`, a cache miss in an array of 100,000; four children halve the levels (and those
/// writes) for two more comparisons per level, among entries that sit side by side.
#[derive(Debug, Default, Clone)]
pub struct KeyHeap {
    heaps: Vec<Vec<Entry>>,
    /// Per task: `(key, seq)` while queued.
    pub pos: Vec<Option<(u64, u64)>>,
    /// Per task: its index in its run queue's heap while queued.
    slot: Vec<u32>,
    seq: u64,
    /// Heap levels moved and entries looked at (the work guard's count: it grows with
    /// log n, never with n, unless affinities hide the first task).
    steps: Cell<u64>,
}

impl KeyHeap {
    /// Size for `nr_rqs` queues and `nr_tasks` tasks.
    pub fn new(nr_rqs: usize, nr_tasks: usize) -> KeyHeap {
        KeyHeap {
            heaps: vec![Vec::new(); nr_rqs],
            pos: vec![None; nr_tasks],
            slot: vec![0; nr_tasks],
            seq: 1 << 62,
            steps: Cell::new(0),
        }
    }

    /// Next tail sequence number (FIFO among equal keys).
    pub fn tail_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Insert `t` into `rq` with `key` at the tail of its key.
    pub fn push(&mut self, rq: usize, t: TaskId, key: u64) {
        let seq = self.tail_seq();
        self.push_seq(rq, t, key, seq);
    }

    /// Insert with an explicit sequence number.
    pub fn push_seq(&mut self, rq: usize, t: TaskId, key: u64, seq: u64) {
        debug_assert!(self.pos[t].is_none(), "task {t} queued twice");
        self.pos[t] = Some((key, seq));
        let h = &mut self.heaps[rq];
        h.push((key, seq, t));
        let i = h.len() - 1;
        self.sift_up(rq, i);
    }

    /// Remove `t` from `rq` if queued.
    pub fn remove(&mut self, rq: usize, t: TaskId) {
        if self.pos[t].take().is_some() {
            let i = self.slot[t] as usize;
            debug_assert_eq!(
                self.heaps[rq].get(i).map(|e| e.2),
                Some(t),
                "task {t} not on rq {rq}"
            );
            self.take_at(rq, i);
        }
    }

    /// First task of `rq` (in `(key, seq, task)` order) allowed on `cpu`.
    #[inline]
    pub fn peek(&self, ctx: &Ctx, rq: usize, cpu: CpuId) -> Option<TaskId> {
        self.first_where(rq, |t| ctx.allowed(t, cpu))
            .map(|i| self.heaps[rq][i].2)
    }

    /// Take the first task of `rq` allowed on `cpu` out of the queue.
    #[inline]
    pub fn pop(&mut self, ctx: &Ctx, rq: usize, cpu: CpuId) -> Option<TaskId> {
        let i = self.first_where(rq, |t| ctx.allowed(t, cpu))?;
        let t = self.heaps[rq][i].2;
        self.pos[t] = None;
        self.take_at(rq, i);
        Some(t)
    }

    /// `push(rq, t, key)` then `pop(ctx, rq, cpu)`: when the first task is allowed on
    /// `cpu` and comes before `t`, `t` takes its place at the root and goes down (one
    /// pass instead of a pass up and a pass down). Entries are distinct, so every later
    /// peek and pop finds what they would after the push and the pop.
    pub fn push_pop(
        &mut self,
        ctx: &Ctx,
        rq: usize,
        cpu: CpuId,
        t: TaskId,
        key: u64,
    ) -> Option<TaskId> {
        self.push_pop_where(rq, t, key, |x| ctx.allowed(x, cpu))
    }

    /// `push_pop` with `allowed` as the affinity test.
    fn push_pop_where(
        &mut self,
        rq: usize,
        t: TaskId,
        key: u64,
        allowed: impl Fn(TaskId) -> bool,
    ) -> Option<TaskId> {
        debug_assert!(self.pos[t].is_none(), "task {t} queued twice");
        let seq = self.tail_seq();
        let e = (key, seq, t);
        match self.heaps[rq].first() {
            Some(&top) if top < e && allowed(top.2) => {
                self.pos[top.2] = None;
                self.pos[t] = Some((key, seq));
                self.heaps[rq][0] = e;
                self.slot[t] = 0;
                self.sift_down(rq, 0);
                Some(top.2)
            }
            _ => {
                self.push_seq(rq, t, key, seq);
                let i = self.first_where(rq, allowed)?;
                let f = self.heaps[rq][i].2;
                self.pos[f] = None;
                self.take_at(rq, i);
                Some(f)
            }
        }
    }

    /// Number of tasks queued on `rq`.
    pub fn len(&self, rq: usize) -> usize {
        self.heaps[rq].len()
    }

    /// Whether `rq` is empty.
    pub fn is_empty(&self, rq: usize) -> bool {
        self.heaps[rq].is_empty()
    }

    /// The entries of `rq` in heap order (not sorted; the first one is the smallest).
    pub fn entries(&self, rq: usize) -> &[Entry] {
        &self.heaps[rq]
    }

    /// Whether a task with exactly `key` waits on `rq`. Subtrees whose root key is above
    /// `key` hold no such task and are skipped.
    pub fn has_key(&self, rq: usize, key: u64) -> bool {
        let h = &self.heaps[rq];
        let mut stack = Vec::new();
        if !h.is_empty() {
            stack.push(0);
        }
        while let Some(i) = stack.pop() {
            self.step(1);
            match h[i].0.cmp(&key) {
                std::cmp::Ordering::Equal => return true,
                std::cmp::Ordering::Greater => {}
                std::cmp::Ordering::Less => stack.extend(children(i, h.len())),
            }
        }
        false
    }

    /// Heap levels moved and entries looked at so far.
    pub fn steps(&self) -> u64 {
        self.steps.get()
    }

    fn step(&self, n: u64) {
        self.steps.set(self.steps.get() + n);
    }

    /// Index of the smallest entry of `rq` whose task is `allowed` (on a CPU). The root
    /// when it is (always, on a per-CPU queue); otherwise a search that skips every
    /// subtree whose root is not smaller than the best allowed entry found so far.
    #[inline]
    fn first_where(&self, rq: usize, allowed: impl Fn(TaskId) -> bool) -> Option<usize> {
        let h = &self.heaps[rq];
        let top = h.first()?;
        // Debug builds check the heap order against every entry of a queue of up to
        // 256 (the root is the smallest, each entry's place is its task's `slot`), and
        // the root's children in a longer one, so that their tests stay linear.
        debug_assert!(
            h.iter()
                .enumerate()
                .take(if h.len() <= 256 { h.len() } else { ARITY + 1 })
                .all(|(i, e)| *top <= *e && self.slot[e.2] as usize == i),
            "KeyHeap: rq {rq} out of order"
        );
        self.step(1);
        if allowed(top.2) {
            return Some(0);
        }
        self.first_below(rq, allowed)
    }

    /// [`KeyHeap::first_where`] when the root's task is not allowed (out of line: a
    /// queue of tasks allowed everywhere never comes here).
    #[inline(never)]
    fn first_below(&self, rq: usize, allowed: impl Fn(TaskId) -> bool) -> Option<usize> {
        let h = &self.heaps[rq];
        let mut best: Option<usize> = None;
        let mut stack: Vec<usize> = children(0, h.len()).collect();
        while let Some(i) = stack.pop() {
            self.step(1);
            if best.is_some_and(|b| h[b] < h[i]) {
                continue;
            }
            if allowed(h[i].2) {
                best = Some(i);
            } else {
                stack.extend(children(i, h.len()));
            }
        }
        best
    }

    /// Remove the entry at index `i` of `rq`'s heap (its `pos` already cleared).
    #[inline]
    fn take_at(&mut self, rq: usize, i: usize) {
        if i == 0 {
            return self.take_first(rq);
        }
        let h = &mut self.heaps[rq];
        let last = h.len() - 1;
        h.swap(i, last);
        h.pop();
        if i < last {
            let moved = h[i].2;
            self.slot[moved] = i as u32;
            let i = self.sift_up(rq, i);
            self.sift_down(rq, i);
        }
    }

    /// Remove the first entry of `rq`'s heap (its `pos` already cleared): the hole goes
    /// down along the smaller children to a leaf, then the last entry goes up from there
    /// to its place. Entries are distinct (a task is queued once), so it ends where
    /// `sift_down` from the root would put it — with one comparison per level on the way
    /// down instead of two — and the steps counted are the levels it moved down.
    fn take_first(&mut self, rq: usize) {
        let h = &mut self.heaps[rq];
        let Some(last) = h.pop() else { return };
        let len = h.len();
        if len == 0 {
            return;
        }
        let mut i = 0;
        let mut depth = 0u64;
        loop {
            let l = ARITY * i + 1;
            if l >= len {
                break;
            }
            let c = smallest_child(h, l, len);
            h[i] = h[c];
            self.slot[h[i].2] = i as u32;
            i = c;
            depth += 1;
        }
        while i > 0 {
            let p = (i - 1) / ARITY;
            if h[p] < last {
                break;
            }
            h[i] = h[p];
            self.slot[h[i].2] = i as u32;
            i = p;
            depth -= 1;
        }
        h[i] = last;
        self.slot[last.2] = i as u32;
        self.step(1 + depth);
    }

    /// Move the entry at `i` up to its place; returns where it ended.
    fn sift_up(&mut self, rq: usize, mut i: usize) -> usize {
        let h = &mut self.heaps[rq];
        let e = h[i];
        let mut n = 0;
        while i > 0 {
            let p = (i - 1) / ARITY;
            if h[p] <= e {
                break;
            }
            h[i] = h[p];
            self.slot[h[i].2] = i as u32;
            i = p;
            n += 1;
        }
        h[i] = e;
        self.slot[e.2] = i as u32;
        self.step(n + 1);
        i
    }

    /// Move the entry at `i` down to its place.
    fn sift_down(&mut self, rq: usize, mut i: usize) {
        let h = &mut self.heaps[rq];
        let e = h[i];
        let len = h.len();
        let mut n = 0;
        loop {
            let l = ARITY * i + 1;
            if l >= len {
                break;
            }
            let c = smallest_child(h, l, len);
            if e <= h[c] {
                break;
            }
            h[i] = h[c];
            self.slot[h[i].2] = i as u32;
            i = c;
            n += 1;
        }
        h[i] = e;
        self.slot[e.2] = i as u32;
        self.step(n);
    }
}

/// Children per entry of [`KeyHeap`].
const ARITY: usize = 4;

/// The children of [`KeyHeap`] entry `i` in a heap of `len` entries.
fn children(i: usize, len: usize) -> std::ops::Range<usize> {
    ARITY * i + 1..(ARITY * i + ARITY + 1).min(len)
}

/// Index of the smallest of the children `l .. min(l + ARITY, len)` of a [`KeyHeap`]
/// entry (`l < len`); the first of equals, though entries are distinct.
#[inline(always)]
fn smallest_child(h: &[Entry], l: usize, len: usize) -> usize {
    if l + ARITY <= len {
        // Four children (all but the last group): a tournament of three comparisons
        // with one bounds check.
        let g: &[Entry; ARITY] = h[l..l + ARITY].try_into().expect("four children");
        let a = usize::from(g[1] < g[0]);
        let b = 2 + usize::from(g[3] < g[2]);
        return l + if g[b] < g[a] { b } else { a };
    }
    let mut c = l;
    for j in l + 1..len {
        if h[j] < h[c] {
            c = j;
        }
    }
    c
}

/// An indexed binary min-heap with at most one entry per slot (a CPU): its key can be set,
/// changed or removed in O(log n), and the smallest key is at the root. The engine's
/// per-CPU structures (the armed CPU timers, global placement's running keys) were
/// B-trees for the cancel-anywhere; with one entry per CPU an index does that without
/// node searches, rebalancing or moving keys within nodes. Keys are `u128`s, distinct
/// across slots (the users put a sequence number or the slot in the low bits), so one
/// comparison orders two entries.
#[derive(Debug, Clone)]
pub struct SlotHeap {
    heap: Vec<(u128, u32)>,
    /// Per slot: its index in `heap`, `ABSENT` when it has no entry.
    at: Vec<u32>,
}

const ABSENT: u32 = u32::MAX;

impl SlotHeap {
    /// An empty heap for slots `0..nr_slots`.
    pub fn new(nr_slots: usize) -> SlotHeap {
        SlotHeap {
            heap: Vec::with_capacity(nr_slots),
            at: vec![ABSENT; nr_slots],
        }
    }

    /// Number of slots with an entry.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no slot has an entry.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// The key of `slot`, if it has an entry.
    pub fn get(&self, slot: usize) -> Option<u128> {
        let i = self.at[slot];
        (i != ABSENT).then(|| self.heap[i as usize].0)
    }

    /// The smallest key and its slot.
    /// The slot of the smallest key, without the debug builds' check against every
    /// entry that [`SlotHeap::first`] makes (for a cache hint, which reads no result).
    pub fn first_slot_hint(&self) -> Option<usize> {
        self.heap.first().map(|&(_, s)| s as usize)
    }

    pub fn first(&self) -> Option<(u128, usize)> {
        let &(k, s) = self.heap.first()?;
        // Debug builds check the root against every entry.
        debug_assert_eq!(
            self.heap.iter().map(|e| e.0).min(),
            Some(k),
            "SlotHeap: the root is not the smallest key"
        );
        Some((k, s as usize))
    }

    /// The two smallest keys and their slots, smallest first (the second is one of the
    /// root's children).
    pub fn first_two(&self) -> [Option<(u128, usize)>; 2] {
        let e = |i: usize| self.heap.get(i).map(|&(k, s)| (k, s as usize));
        let second = match (e(1), e(2)) {
            (Some(a), Some(b)) => Some(if a.0 < b.0 { a } else { b }),
            (a, b) => a.or(b),
        };
        [self.first(), second]
    }

    /// Give `slot` the key `key` (inserted, or moved from its old key).
    pub fn set(&mut self, slot: usize, key: u128) {
        let i = self.at[slot];
        if i == ABSENT {
            self.heap.push((key, slot as u32));
            self.sift_up(self.heap.len() - 1);
        } else {
            let i = i as usize;
            let old = std::mem::replace(&mut self.heap[i].0, key);
            if key < old {
                self.sift_up(i);
            } else {
                self.sift_down(i);
            }
        }
    }

    /// Remove `slot`'s entry; returns its key if it had one.
    pub fn remove(&mut self, slot: usize) -> Option<u128> {
        let i = self.at[slot];
        if i == ABSENT {
            return None;
        }
        let i = i as usize;
        self.at[slot] = ABSENT;
        let last = self.heap.pop().expect("an entry is present");
        if i == self.heap.len() {
            return Some(last.0);
        }
        let key = std::mem::replace(&mut self.heap[i], last).0;
        if last.0 < key {
            self.sift_up(i);
        } else {
            self.sift_down(i);
        }
        Some(key)
    }

    /// Take the smallest entry out.
    pub fn pop(&mut self) -> Option<(u128, usize)> {
        let (k, s) = self.first()?;
        self.remove(s);
        Some((k, s))
    }

    fn sift_up(&mut self, mut i: usize) {
        let e = self.heap[i];
        while i > 0 {
            let p = (i - 1) / 2;
            let up = self.heap[p];
            if up.0 <= e.0 {
                break;
            }
            self.heap[i] = up;
            self.at[up.1 as usize] = i as u32;
            i = p;
        }
        self.heap[i] = e;
        self.at[e.1 as usize] = i as u32;
    }

    fn sift_down(&mut self, mut i: usize) {
        let e = self.heap[i];
        let len = self.heap.len();
        loop {
            let l = 2 * i + 1;
            if l >= len {
                break;
            }
            let mut c = l;
            if l + 1 < len && self.heap[l + 1].0 < self.heap[l].0 {
                c = l + 1;
            }
            let down = self.heap[c];
            if e.0 <= down.0 {
                break;
            }
            self.heap[i] = down;
            self.at[down.1 as usize] = i as u32;
            i = c;
        }
        self.heap[i] = e;
        self.at[e.1 as usize] = i as u32;
    }
}

/// A `u64` per index (`u64::MAX`: none) and the query "the first index at or after
/// `from` whose value is below `bound`" in O(log n): a tree of minima over the indices,
/// climbed from `from` to the first subtree on its right holding such a value, then
/// descended to its leftmost one. `linux` placement's index of each CPU's first waiting
/// key uses it to find the next CPU that can push, in CPU order, without going through
/// every CPU whose key qualifies.
#[derive(Debug, Clone)]
pub struct MinTree {
    /// Node `i` (1 the root, `2i` and `2i + 1` its children, `leaves + x` index `x`):
    /// the smallest value below it.
    min: Vec<u64>,
    /// Number of leaves (a power of two, at least 1).
    leaves: usize,
}

impl MinTree {
    /// Indices `0..n`, every value `u64::MAX`.
    pub fn new(n: usize) -> MinTree {
        let leaves = n.next_power_of_two().max(1);
        MinTree {
            min: vec![u64::MAX; 2 * leaves],
            leaves,
        }
    }

    /// The value at `x`.
    pub fn get(&self, x: usize) -> u64 {
        self.min[self.leaves + x]
    }

    /// Set the value at `x`.
    pub fn set(&mut self, x: usize, v: u64) {
        let mut i = self.leaves + x;
        self.min[i] = v;
        while i > 1 {
            let l = i & !1;
            let m = self.min[l].min(self.min[l + 1]);
            i >>= 1;
            if self.min[i] == m {
                break; // nothing above changes
            }
            self.min[i] = m;
        }
    }

    /// The first index at or after `from` whose value is below `bound`, and the nodes
    /// looked at (for the work count).
    pub fn first_below(&self, from: usize, bound: u64) -> (Option<usize>, usize) {
        if from >= self.leaves {
            return (None, 0);
        }
        let mut i = self.leaves + from;
        let mut n = 1;
        if self.min[i] >= bound {
            // Up to the first subtree to the right of `from`'s path that holds one.
            loop {
                if i == 1 {
                    return (None, n);
                }
                if i & 1 == 1 {
                    i >>= 1;
                    continue;
                }
                i += 1;
                n += 1;
                if self.min[i] < bound {
                    break;
                }
            }
            // Down to its leftmost one.
            while i < self.leaves {
                i *= 2;
                n += 1;
                if self.min[i] >= bound {
                    i += 1;
                }
            }
        }
        (Some(i - self.leaves), n)
    }
}

/// A binary min-heap of values under `u128` keys, for the engine's event queue: the
/// instant and the same-instant order packed into one key, so one comparison orders two
/// events (a derived `Ord` on the event compares field by field), and `pop` moves the
/// hole to the bottom along the smaller children before placing the last entry (one
/// comparison per level on the way down instead of two).
#[derive(Debug, Clone)]
pub struct PackedHeap<T> {
    heap: Vec<(u128, T)>,
}

impl<T: Copy> Default for PackedHeap<T> {
    fn default() -> Self {
        PackedHeap { heap: Vec::new() }
    }
}

impl<T: Copy> PackedHeap<T> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether the heap is empty.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Remove every entry.
    pub fn clear(&mut self) {
        self.heap.clear();
    }

    /// The entry with the smallest key.
    pub fn peek(&self) -> Option<&(u128, T)> {
        self.heap.first()
    }

    /// Insert `value` under `key`.
    pub fn push(&mut self, key: u128, value: T) {
        self.heap.push((key, value));
        self.sift_up(self.heap.len() - 1);
    }

    /// Take the entry with the smallest key out.
    pub fn pop(&mut self) -> Option<(u128, T)> {
        let last = self.heap.pop()?;
        let Some(&top) = self.heap.first() else {
            return Some(last);
        };
        // The hole left at the root goes down along the smaller children to a leaf...
        let len = self.heap.len();
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= len {
                break;
            }
            let c = if l + 1 < len && self.heap[l + 1].0 < self.heap[l].0 {
                l + 1
            } else {
                l
            };
            self.heap[i] = self.heap[c];
            i = c;
        }
        // ... where the last entry goes, then up to its place.
        self.heap[i] = last;
        self.sift_up(i);
        debug_assert!(
            (1..3).all(|c| self.heap.get(c).is_none_or(|e| self.heap[0].0 <= e.0)),
            "PackedHeap: the root is above a child"
        );
        debug_assert!(top.0 <= self.heap[0].0, "PackedHeap: popped out of order");
        Some(top)
    }

    fn sift_up(&mut self, mut i: usize) {
        let e = self.heap[i];
        while i > 0 {
            let p = (i - 1) / 2;
            if self.heap[p].0 <= e.0 {
                break;
            }
            self.heap[i] = self.heap[p];
            i = p;
        }
        self.heap[i] = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::Keyed;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Random pushes, removals and pops with few distinct keys (many ties): the heap
    /// always yields the first entry the B-tree queue holds, in the same order.
    #[test]
    fn heap_yields_the_same_order_as_the_btree_queue() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (rqs, tasks) = (3, 64);
        let mut h = KeyHeap::new(rqs, tasks);
        let mut k = Keyed::new(rqs, tasks);
        let mut on = vec![None; tasks];
        for _ in 0..20_000 {
            let t = rng.random_range(0..tasks);
            match on[t] {
                None => {
                    let (rq, key) = (rng.random_range(0..rqs), rng.random_range(0..8u64));
                    if rng.random_bool(0.2) {
                        let seq = rng.random_range(0..4u64);
                        h.push_seq(rq, t, key, seq);
                        k.push_seq(rq, t, key, seq);
                    } else {
                        h.push(rq, t, key);
                        k.push(rq, t, key);
                    }
                    on[t] = Some(rq);
                }
                Some(rq) if rng.random_bool(0.5) => {
                    h.remove(rq, t);
                    k.remove(rq, t);
                    on[t] = None;
                }
                Some(rq) => {
                    let first = k.rqs[rq].iter().next().map(|e| e.2);
                    assert_eq!(h.entries(rq).first().map(|e| e.2), first);
                    // Affinity: the first entry whose task passes a filter.
                    let m = rng.random_range(2..5);
                    let want = k.rqs[rq].iter().map(|e| e.2).find(|t| t % m == 0);
                    let got = h
                        .first_where(rq, |t| t % m == 0)
                        .map(|i| h.entries(rq)[i].2);
                    assert_eq!(got, want);
                    if let Some(f) = first {
                        h.remove(rq, f);
                        k.remove(rq, f);
                        on[f] = None;
                    }
                }
            }
            for rq in 0..rqs {
                assert_eq!(h.len(rq), k.rqs[rq].len());
                let key = rng.random_range(0..8u64);
                assert_eq!(h.has_key(rq, key), k.rqs[rq].iter().any(|e| e.0 == key));
            }
            assert_eq!(h.pos, k.pos);
        }
    }
    /// Random pushes, removals and fused push-pops (some under an affinity filter): each
    /// push-pop takes what a push then a pop of the B-tree queue takes, and the two
    /// queues stay equal.
    #[test]
    fn push_pop_is_a_push_then_a_pop() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let tasks = 48;
        let mut h = KeyHeap::new(1, tasks);
        let mut k = Keyed::new(1, tasks);
        let (mut fused, mut filtered) = (0, 0);
        for _ in 0..20_000 {
            let t = rng.random_range(0..tasks);
            let key = rng.random_range(0..8u64);
            if k.pos[t].is_some() {
                h.remove(0, t);
                k.remove(0, t);
            } else if rng.random_bool(0.5) {
                h.push(0, t, key);
                k.push(0, t, key);
            } else {
                let m = if rng.random_bool(0.3) { 2 } else { 1 };
                k.push(0, t, key);
                let want = k.rqs[0].iter().map(|e| e.2).find(|x| x % m == 0);
                if let Some(w) = want {
                    k.remove(0, w);
                }
                fused += usize::from(want.is_some_and(|w| w != t));
                filtered += usize::from(m == 2);
                assert_eq!(h.push_pop_where(0, t, key, |x| x % m == 0), want);
            }
            assert_eq!(h.pos, k.pos);
            assert_eq!(
                h.entries(0).first().map(|e| e.2),
                k.rqs[0].iter().next().map(|e| e.2)
            );
        }
        assert!(
            fused > 1000 && filtered > 1000,
            "{fused} fused, {filtered} filtered"
        );
    }

    /// Random sets, moves, removals and pops: the slot heap's first entry is always the
    /// B-tree's, with the same keys per slot (on 1, 2, 37 and 64 slots: one leaf, and
    /// trees with and without padding).
    #[test]
    fn slot_heap_agrees_with_a_btree() {
        for slots in [1, 2, 37, 64] {
            slot_heap_agrees_with_a_btree_on(slots);
        }
    }

    fn slot_heap_agrees_with_a_btree_on(slots: usize) {
        use std::collections::BTreeSet;
        let mut rng = ChaCha8Rng::seed_from_u64(11 + slots as u64);
        let mut h = SlotHeap::new(slots);
        let mut b: BTreeSet<(u128, usize)> = BTreeSet::new();
        let mut key: Vec<Option<u128>> = vec![None; slots];
        for n in 0..20_000u64 {
            let s = rng.random_range(0..slots);
            match rng.random_range(0..4) {
                0 | 1 => {
                    // Few distinct instants, a sequence number below: distinct keys.
                    let k = (rng.random_range(0..6u128) << 64) | n as u128;
                    if let Some(old) = key[s].replace(k) {
                        b.remove(&(old, s));
                    }
                    b.insert((k, s));
                    h.set(s, k);
                }
                2 => {
                    assert_eq!(h.remove(s), key[s].take());
                    b.retain(|&(_, t)| t != s);
                }
                _ => {
                    let want = b.pop_first();
                    assert_eq!(h.pop(), want);
                    if let Some((_, t)) = want {
                        key[t] = None;
                    }
                }
            }
            assert_eq!(h.len(), b.len());
            assert_eq!(h.first(), b.first().copied());
            let mut two = b.iter().copied();
            assert_eq!(h.first_two(), [two.next(), two.next()]);
            assert_eq!(h.get(s), key[s]);
        }
    }
    /// Random values and queries: `first_below` finds what a scan finds.
    #[test]
    fn min_tree_finds_the_first_index_below_a_bound() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for n in [1, 2, 5, 64, 100] {
            let mut t = MinTree::new(n);
            let mut v = vec![u64::MAX; n];
            for _ in 0..5_000 {
                let x = rng.random_range(0..n);
                let val = if rng.random_bool(0.3) {
                    u64::MAX
                } else {
                    rng.random_range(0..20)
                };
                t.set(x, val);
                v[x] = val;
                assert_eq!(t.get(x), val);
                let (from, bound) = (rng.random_range(0..n + 2), rng.random_range(0..22));
                let want = (from.min(n)..n).find(|&i| v[i] < bound);
                assert_eq!(t.first_below(from, bound).0, want, "n {n} from {from}");
            }
        }
    }

    /// Random pushes and pops with many equal high halves: the packed heap pops what the
    /// standard library's heap pops, in the same order.
    #[test]
    fn packed_heap_pops_in_key_order() {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut h = PackedHeap::default();
        let mut b = BinaryHeap::new();
        for n in 0..30_000u64 {
            if rng.random_bool(0.55) {
                let k = (rng.random_range(0..50u128) << 64)
                    | rng.random_range(0..4u128) << 32
                    | n as u128;
                h.push(k, n);
                b.push(Reverse((k, n)));
            } else {
                assert_eq!(h.pop(), b.pop().map(|Reverse(e)| e));
            }
            assert_eq!(h.len(), b.len());
            assert_eq!(h.peek().copied(), b.peek().map(|Reverse(e)| *e));
        }
        while let Some(Reverse(e)) = b.pop() {
            assert_eq!(h.pop(), Some(e));
        }
        assert!(h.is_empty());
    }
}
