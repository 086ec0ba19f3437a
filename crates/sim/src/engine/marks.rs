//! Which CPUs need attention at the end of an instant, kept as they are marked so that an
//! instant costs what changed, not the number of CPUs: CPUs marked for a decision
//! (`dirty` / `need_resched`), and CPUs whose timer must be re-armed.

use super::*;

/// A set of CPUs as a bitmap, visited in index order. CPUs 0 to 63 are one word kept
/// inline: up to 64 CPUs (every small set) an insertion or a test is a bit operation on a
/// field, with no heap word to load and no bounds check; the words above follow in `high`.
#[derive(Debug, Default, Clone)]
pub(super) struct CpuMask {
    /// CPUs 0 to 63.
    low: u64,
    /// CPUs 64 and up, 64 a word.
    high: Vec<u64>,
    len: usize,
}

impl CpuMask {
    pub(super) fn new(ncpu: usize) -> CpuMask {
        CpuMask {
            low: 0,
            high: vec![0; ncpu.div_ceil(64).saturating_sub(1)],
            len: 0,
        }
    }

    /// Number of words, `low` included.
    #[inline]
    fn words(&self) -> usize {
        1 + self.high.len()
    }

    /// Word `w` (`low` is word 0); 0 past the end.
    #[inline]
    fn word(&self, w: usize) -> u64 {
        if w == 0 {
            self.low
        } else {
            self.high.get(w - 1).copied().unwrap_or(0)
        }
    }

    /// The word holding `cpu`.
    #[inline]
    fn word_mut(&mut self, cpu: CpuId) -> &mut u64 {
        if cpu < 64 {
            &mut self.low
        } else {
            &mut self.high[cpu / 64 - 1]
        }
    }

    #[inline]
    pub(super) fn insert(&mut self, cpu: CpuId) {
        let b = 1u64 << (cpu % 64);
        let w = self.word_mut(cpu);
        if *w & b == 0 {
            *w |= b;
            self.len += 1;
        }
    }

    #[inline]
    pub(super) fn remove(&mut self, cpu: CpuId) {
        let b = 1u64 << (cpu % 64);
        let w = self.word_mut(cpu);
        if *w & b != 0 {
            *w &= !b;
            self.len -= 1;
        }
    }

    /// Whether `cpu` is in the set.
    pub(super) fn contains(&self, cpu: CpuId) -> bool {
        let w = if cpu < 64 {
            self.low
        } else {
            self.high[cpu / 64 - 1]
        };
        w & (1u64 << (cpu % 64)) != 0
    }

    /// Every CPU below `ncpu` in the set.
    pub(super) fn fill(&mut self, ncpu: usize) {
        self.clear();
        (0..ncpu).for_each(|c| self.insert(c));
    }

    /// Make this set equal to `other` (same size).
    pub(super) fn copy_from(&mut self, other: &CpuMask) {
        self.low = other.low;
        // Up to 64 CPUs nothing more: not a call to `memcpy` for no bytes (twice a
        // decision on the small sets).
        if !self.high.is_empty() {
            self.high.copy_from_slice(&other.high);
        }
        self.len = other.len;
    }

    /// Number of CPUs in the set.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The CPUs in the set, in index order: each word's bits taken lowest first, not a
    /// search from the last CPU found at every step.
    pub(super) fn iter(&self) -> CpuIter<'_> {
        CpuIter {
            high: &self.high,
            w: 0,
            bits: self.low,
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(super) fn clear(&mut self) {
        if self.len > 0 {
            self.low = 0;
            // Up to 64 CPUs nothing more: a store, not a call to `memset`.
            if !self.high.is_empty() {
                self.high.fill(0);
            }
            self.len = 0;
        }
    }

    /// The lowest CPU below `limit`, at or after `from`, in none of `masks`.
    pub(super) fn next_in_none(masks: &[&CpuMask], from: CpuId, limit: usize) -> Option<CpuId> {
        let words = limit.div_ceil(64);
        let mut w = from / 64;
        if w >= words {
            return None;
        }
        let union = |w: usize| masks.iter().fold(0u64, |u, m| u | m.word(w));
        let mut bits = !union(w) & (!0u64 << (from % 64));
        loop {
            if bits != 0 {
                let c = w * 64 + bits.trailing_zeros() as usize;
                return (c < limit).then_some(c);
            }
            w += 1;
            if w >= words {
                return None;
            }
            bits = !union(w);
        }
    }

    /// Whether some CPU of the set is in none of `masks` (a word at a time).
    pub(super) fn any_in_none(&self, masks: &[&CpuMask]) -> bool {
        (0..self.words()).any(|w| {
            let union = masks.iter().fold(0u64, |u, m| u | m.word(w));
            self.word(w) & !union != 0
        })
    }

    /// The lowest CPU in the set at or after `from`.
    #[inline]
    pub(super) fn next_from(&self, from: CpuId) -> Option<CpuId> {
        if from < 64 {
            let bits = self.low & (!0u64 << from);
            if bits != 0 {
                return Some(bits.trailing_zeros() as usize);
            }
            if self.high.is_empty() {
                return None;
            }
        }
        self.next_from_high(from.max(64))
    }

    /// [`CpuMask::next_from`] among the CPUs from 64 up (`from` ≥ 64).
    fn next_from_high(&self, from: CpuId) -> Option<CpuId> {
        let mut w = from / 64;
        if w >= self.words() {
            return None;
        }
        let mut bits = self.high[w - 1] & (!0u64 << (from % 64));
        loop {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w += 1;
            if w >= self.words() {
                return None;
            }
            bits = self.high[w - 1];
        }
    }
}

/// [`CpuMask::iter`].
pub(super) struct CpuIter<'a> {
    /// The words after the first (`CpuMask::high`).
    high: &'a [u64],
    /// The word being visited (0: the first), and its bits not yet visited.
    w: usize,
    bits: u64,
}

impl Iterator for CpuIter<'_> {
    type Item = CpuId;

    #[inline]
    fn next(&mut self) -> Option<CpuId> {
        while self.bits == 0 {
            self.bits = *self.high.get(self.w)?;
            self.w += 1;
        }
        let c = self.w * 64 + self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(c)
    }
}

impl Engine {
    /// Mark `cpu` for a decision at the end of this instant.
    pub(super) fn mark_dirty(&mut self, cpu: CpuId) {
        self.cpus[cpu].dirty = true;
        self.marked.insert(cpu);
        self.want_rearm(cpu);
    }

    /// Ask `cpu` to reschedule (its current task is put back and a task picked).
    pub(super) fn mark_resched(&mut self, cpu: CpuId) {
        self.cpus[cpu].need_resched = true;
        self.marked.insert(cpu);
        self.want_rearm(cpu);
    }

    /// [`Engine::mark_resched`] and [`Engine::mark_dirty`] at once (a tick's preemption):
    /// both flags, with one insertion into each CPU set instead of two.
    pub(super) fn mark_preempted(&mut self, cpu: CpuId) {
        let c = &mut self.cpus[cpu];
        c.need_resched = true;
        c.dirty = true;
        self.marked.insert(cpu);
        self.want_rearm(cpu);
    }

    /// The instant `cpu`'s timer is due moved (a context switch, tick or kernel work cost):
    /// re-arm it at the end of the instant.
    pub(super) fn force_rearm(&mut self, cpu: CpuId) {
        self.cpus[cpu].timer_at = Ns::MAX - 1;
        self.want_rearm(cpu);
    }

    fn want_rearm(&mut self, cpu: CpuId) {
        self.rearm.insert(cpu);
    }

    /// Keep `busy` in step with `cpu`'s current task and whether it is runnable.
    #[inline(always)]
    pub(super) fn note_busy(&mut self, cpu: CpuId) {
        // Inlined to this test (two calls per job): only `linux` placement keeps `busy`.
        if self.track_busy {
            self.note_busy_now(cpu);
        }
    }

    fn note_busy_now(&mut self, cpu: CpuId) {
        if self.cpus[cpu].curr.is_some_and(|t| self.tasks[t].runnable) {
            self.busy.insert(cpu);
        } else {
            self.busy.remove(cpu);
        }
    }

    /// `note_busy` for the CPU `t` runs on, if any (its runnable state changed).
    #[inline(always)]
    pub(super) fn note_busy_task(&mut self, t: TaskId) {
        if !self.track_busy {
            return;
        }
        if let Some(cpu) = self.tasks[t].on_cpu {
            self.note_busy(cpu);
        }
    }

    /// Forget `cpu`'s mark once its decision flags are consumed.
    pub(super) fn unmark_if_clean(&mut self, cpu: CpuId) {
        let c = &self.cpus[cpu];
        if !c.dirty && !c.need_resched {
            self.marked.remove(cpu);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CpuMask;

    /// `iter` visits what `contains` says, in index order, across word boundaries.
    #[test]
    fn iter_visits_the_set_in_order() {
        for ncpu in [1, 8, 63, 64, 65, 130, 1024] {
            let mut m = CpuMask::new(ncpu);
            assert_eq!(m.iter().count(), 0);
            // A deterministic spread of members: every 3rd, 7th and the last CPU.
            let want: Vec<usize> = (0..ncpu)
                .filter(|&c| c % 3 == 0 || c % 7 == 5 || c == ncpu - 1)
                .collect();
            want.iter().rev().for_each(|&c| m.insert(c));
            assert_eq!(m.iter().collect::<Vec<_>>(), want, "{ncpu} CPUs");
            assert!(want.iter().all(|&c| m.contains(c)));
            assert_eq!(m.len(), want.len());
        }
    }
}
