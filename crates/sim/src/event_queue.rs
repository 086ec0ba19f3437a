//! The engine's event queue: a radix heap on the instant, for queues of ~100,000 pending
//! releases where a binary heap's ~17 levels a pop each miss the cache.
//!
//! Entries are keyed by a `u128`: the instant in the high 64 bits, the same-instant order
//! (rank and sequence number) in the low 64; keys are distinct. Pops come out in key
//! order, exactly as from a binary heap of the same keys. The instants popped only grow
//! (the engine never schedules an event before the current instant), which is what a
//! radix heap needs:
//!
//! - `last` is an instant no later than any entry in the buckets; the entries at `last`
//!   itself wait in `current`, a binary heap on the whole key (their order within the
//!   instant);
//! - an entry after `last` waits in bucket `b`, the highest bit in which its instant
//!   differs from `last`, appended to a vector: a push touches one vector's end;
//! - when `current` runs out, the lowest non-empty bucket's earliest instant becomes
//!   `last` and that bucket's entries are spread again: those at `last` into `current`,
//!   the others into lower buckets (they agree with the new `last` on bit `b` and above).
//!   An entry moves at most once per bit of its distance, in sequential passes.
//!
//! Looking ahead moves `last` to the next instant, and the engine may then still queue an
//! event before it (a CPU's decision at the current instant): such entries go to `early`,
//! a binary heap, and come first, being before `last` while all others are at or after it.
//!
//! A queue starts small: up to [`SMALL`] entries wait in `run`, one vector sorted by
//! decreasing key (`last` is `u64::MAX`, no bucket touched): a pop takes the last entry,
//! a push moves the entries after its place. For a sweep cell's 16 pending releases the
//! radix heap spent about 170 instructions an event spreading its buckets, and a binary
//! heap of 16 (tried first) about 190 a push and a pop. The first push past [`SMALL`]
//! turns the queue into the radix heap for good.

use crate::heap::PackedHeap;

/// Number of buckets: one per bit of the instant.
const BUCKETS: usize = 64;

/// Entries a small queue holds in its sorted run before it becomes a radix heap. A push
/// moves up to this many entries; `simso-64x8`'s 64 pending releases already do better
/// in the radix heap (a binary heap of up to 128, tried first, cost that row 0.1 % more).
const SMALL: usize = 32;

/// A min-queue of values under distinct `u128` keys whose high halves (instants) are
/// pushed in non-decreasing order relative to what has been popped.
#[derive(Debug, Clone)]
pub struct EventQueue<T> {
    /// Entries before `last`, queued after the queue looked ahead to `last`.
    early: PackedHeap<T>,
    /// Entries at `last`.
    current: PackedHeap<T>,
    /// Entries after `last`, by the highest bit in which their instant differs from it.
    buckets: Vec<Vec<(u128, T)>>,
    /// Bit `b` set when bucket `b` is not empty.
    nonempty: u64,
    /// Every entry of `current` and the buckets is at or after this instant (`u64::MAX`
    /// while the queue is small).
    last: u64,
    /// Number of entries.
    len: usize,
    /// Entries moved out of a bucket when it was spread (the work a radix heap does
    /// beyond a push and a pop), for the engine's work counts.
    moves: u64,
    /// Every entry waits in `run` (at most [`SMALL`] so far; `last` is `u64::MAX`).
    small: bool,
    /// A small queue's entries, by decreasing key (the next one last).
    run: Vec<(u128, T)>,
    /// Debug builds: the same entries in a binary heap, which every pop must agree with.
    #[cfg(debug_assertions)]
    shadow: PackedHeap<T>,
}

impl<T: Copy> Default for EventQueue<T> {
    fn default() -> Self {
        EventQueue {
            early: PackedHeap::default(),
            current: PackedHeap::default(),
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            nonempty: 0,
            last: u64::MAX,
            len: 0,
            moves: 0,
            small: true,
            // Allocated once: a small queue holds at most `SMALL` (growing from empty
            // reallocated it three times for a sweep cell's 16 entries).
            run: Vec::with_capacity(SMALL),
            #[cfg(debug_assertions)]
            shadow: PackedHeap::default(),
        }
    }
}

impl<T: Copy + PartialEq + std::fmt::Debug> EventQueue<T> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the queue is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Remove every entry (the move count stays); the queue is small again.
    pub fn clear(&mut self) {
        self.small = true;
        self.run.clear();
        self.early.clear();
        self.current.clear();
        for b in &mut self.buckets {
            b.clear();
        }
        self.nonempty = 0;
        self.last = u64::MAX;
        self.len = 0;
        #[cfg(debug_assertions)]
        self.shadow.clear();
    }

    /// Entries moved between buckets so far.
    pub fn moves(&self) -> u64 {
        self.moves
    }

    /// Insert `value` under `key`.
    pub fn push(&mut self, key: u128, value: T) {
        // A small queue's `last` is `u64::MAX`: its pushes take the first two branches,
        // which a radix heap takes for its rarer early and same-instant entries.
        let at = (key >> 64) as u64;
        if at < self.last {
            if self.small {
                return self.push_small(key, value);
            }
            self.early.push(key, value);
        } else if at == self.last {
            if self.small {
                return self.push_small(key, value);
            }
            self.current.push(key, value);
        } else {
            self.put(key, value);
        }
        self.len += 1;
        #[cfg(debug_assertions)]
        self.shadow.push(key, value);
    }

    /// [`EventQueue::push`] into a small queue: into its place in `run`, or into the
    /// radix heap that the queue becomes past [`SMALL`] entries.
    #[inline]
    fn push_small(&mut self, key: u128, value: T) {
        if self.len == SMALL {
            self.become_radix();
            return self.push(key, value);
        }
        // Looked for from the next entry on: the tasks that push most often have the
        // shortest periods, so their next release is among the next events (few entries
        // compared and moved).
        let i = self
            .run
            .iter()
            .rposition(|e| e.0 > key)
            .map_or(0, |j| j + 1);
        self.run.insert(i, (key, value));
        self.len += 1;
        #[cfg(debug_assertions)]
        self.shadow.push(key, value);
    }

    /// A small queue becomes a radix heap: `last` is its earliest instant, whose entries
    /// stay in `current`; the others go to their buckets (counted as moves).
    #[cold]
    #[inline(never)]
    fn become_radix(&mut self) {
        debug_assert!(self.small && self.early.is_empty() && self.current.is_empty());
        debug_assert!(self.nonempty == 0);
        self.small = false;
        let entries = std::mem::take(&mut self.run);
        self.last = entries.last().map_or(0, |&(first, _)| (first >> 64) as u64);
        for &(key, value) in &entries {
            if (key >> 64) as u64 == self.last {
                self.current.push(key, value);
            } else {
                self.moves += 1;
                self.put(key, value);
            }
        }
    }

    /// Put an entry after `last` in its bucket.
    fn put(&mut self, key: u128, value: T) {
        let at = (key >> 64) as u64;
        debug_assert!(at > self.last);
        let b = 63 - (at ^ self.last).leading_zeros() as usize;
        self.buckets[b].push((key, value));
        self.nonempty |= 1 << b;
    }

    /// The entry with the smallest key (`&mut`: looking ahead may spread a bucket).
    #[inline]
    pub fn peek(&mut self) -> Option<&(u128, T)> {
        if !self.early.is_empty() {
            return self.early.peek();
        }
        if self.current.is_empty() {
            // A small queue's `current` and `early` stay empty.
            if self.small {
                let top = self.run.last();
                #[cfg(debug_assertions)]
                debug_assert_eq!(top, self.shadow.peek(), "EventQueue: peek disagrees");
                return top;
            }
            self.spread();
        }
        let top = self.current.peek();
        #[cfg(debug_assertions)]
        debug_assert_eq!(top, self.shadow.peek(), "EventQueue: peek disagrees");
        top
    }

    /// The entry a pop would take, if it is already among the entries at the instant
    /// looked ahead to (or before it): no bucket is spread, so the queue is left as it is
    /// (for a cache hint ahead of the next event).
    pub fn peek_ready(&self) -> Option<&(u128, T)> {
        if !self.early.is_empty() {
            return self.early.peek();
        }
        if self.current.is_empty() && self.small {
            return self.run.last();
        }
        self.current.peek()
    }

    /// Take the entry with the smallest key out.
    #[inline]
    pub fn pop(&mut self) -> Option<(u128, T)> {
        let top = if !self.early.is_empty() {
            self.early.pop()
        } else if self.current.is_empty() {
            // A small queue's `current` and `early` stay empty.
            if self.small {
                self.run.pop()
            } else {
                self.spread();
                self.current.pop()
            }
        } else {
            self.current.pop()
        };
        if top.is_some() {
            self.len -= 1;
        }
        #[cfg(debug_assertions)]
        debug_assert_eq!(top, self.shadow.pop(), "EventQueue: popped out of order");
        top
    }

    /// `current` is empty: make the earliest instant in the buckets `last` and spread its
    /// bucket (nothing to do when the buckets are empty too, as in a small queue).
    fn spread(&mut self) {
        if self.nonempty == 0 {
            return;
        }
        let b = self.nonempty.trailing_zeros() as usize;
        let mut entries = std::mem::take(&mut self.buckets[b]);
        self.nonempty &= !(1 << b);
        let min = entries
            .iter()
            .map(|&(k, _)| (k >> 64) as u64)
            .min()
            .expect("a non-empty bucket");
        self.last = min;
        self.moves += entries.len() as u64;
        for &(key, value) in &entries {
            if (key >> 64) as u64 == min {
                self.current.push(key, value);
            } else {
                self.put(key, value);
            }
        }
        // Bucket `b` is empty now (every entry went lower): it keeps the allocation.
        entries.clear();
        self.buckets[b] = entries;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// A queue that is a radix heap from its first entry (the small queue's sorted run
    /// skipped), so that the tests exercise the buckets with few entries too.
    fn radix<T: Copy>() -> EventQueue<T> {
        EventQueue {
            small: false,
            last: 0,
            ..EventQueue::default()
        }
    }

    /// Random pushes at or after the last instant popped (some before the instant the
    /// queue looked ahead to), many at the same instant, and pops: the same order as the
    /// standard library's heap. At most `cap` entries wait at once (a push past it pops
    /// instead).
    fn random_ops(mut q: EventQueue<u64>, seed: u64, cap: usize) -> EventQueue<u64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut b = BinaryHeap::new();
        let mut now = 0u64;
        for n in 0..60_000u64 {
            match rng.random_range(0..10) {
                0..=4 if b.len() < cap => {
                    let at = now
                        + match rng.random_range(0..4) {
                            0 => 0,
                            1 => rng.random_range(0..8),
                            2 => rng.random_range(0..1_000) * 1_000,
                            _ => rng.random_range(0..1u64 << 40),
                        };
                    let k = (at as u128) << 64 | (rng.random_range(0..6u128) << 56) | n as u128;
                    q.push(k, n);
                    b.push(Reverse((k, n)));
                }
                5 => {
                    // Look ahead, as the engine does between instants.
                    assert_eq!(q.peek().copied(), b.peek().map(|Reverse(e)| *e));
                }
                _ => {
                    let want = b.pop().map(|Reverse(e)| e);
                    assert_eq!(q.pop(), want);
                    if let Some((k, _)) = want {
                        now = (k >> 64) as u64;
                    }
                }
            }
            assert_eq!(q.len(), b.len());
        }
        while let Some(Reverse(e)) = b.pop() {
            assert_eq!(q.pop(), Some(e));
        }
        assert!(q.is_empty());
        assert_eq!(q.pop(), None);
        q
    }

    /// A queue that grows past [`SMALL`] (its single heap turned into the radix heap on
    /// the way), one that is a radix heap throughout, and one that stays small.
    #[test]
    fn pops_in_key_order() {
        let q = random_ops(EventQueue::default(), 7, usize::MAX);
        assert!(!q.small && q.moves() > 0, "the queue became a radix heap");
        let q = random_ops(radix(), 7, usize::MAX);
        assert!(q.moves() > 0);
        for cap in [1, 3, 16, SMALL] {
            let q = random_ops(EventQueue::default(), cap as u64, cap);
            assert!(q.small && q.moves() == 0, "a queue of {cap} stays small");
            let q = random_ops(radix(), cap as u64, cap);
            assert!(!q.small);
        }
    }

    /// A hand-checked case: entries before the instant looked ahead to come first, and
    /// entries of one instant come out in their same-instant order.
    #[test]
    fn early_entries_and_same_instant_order() {
        let key = |at: u64, ord: u64| (at as u128) << 64 | ord as u128;
        let mut q = radix();
        q.push(key(100, 5), 'a');
        q.push(key(100, 2), 'b');
        q.push(key(7, 9), 'c');
        assert_eq!(q.peek(), Some(&(key(7, 9), 'c')));
        assert_eq!(q.pop(), Some((key(7, 9), 'c')));
        // Looking ahead moved to instant 100; an event at 50 is still queued before it.
        assert_eq!(q.peek(), Some(&(key(100, 2), 'b')));
        q.push(key(50, 1), 'd');
        q.push(key(100, 1), 'e');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, v)| v)).collect();
        assert_eq!(order, ['d', 'e', 'b', 'a']);
        assert!(q.moves() >= 3, "the two buckets were spread");
    }
}
