//! Which CPUs need attention at the end of an instant, kept as they are marked so that an
//! instant costs what changed, not the number of CPUs: CPUs marked for a decision
//! (`dirty` / `need_resched`), and CPUs whose timer must be re-armed.

use super::*;

/// A set of CPUs as a bitmap, visited in index order.
#[derive(Debug, Default, Clone)]
pub(super) struct CpuMask {
    words: Vec<u64>,
    len: usize,
}

impl CpuMask {
    pub(super) fn new(ncpu: usize) -> CpuMask {
        CpuMask {
            words: vec![0; ncpu.div_ceil(64)],
            len: 0,
        }
    }

    pub(super) fn insert(&mut self, cpu: CpuId) {
        let (w, b) = (cpu / 64, 1u64 << (cpu % 64));
        if self.words[w] & b == 0 {
            self.words[w] |= b;
            self.len += 1;
        }
    }

    pub(super) fn remove(&mut self, cpu: CpuId) {
        let (w, b) = (cpu / 64, 1u64 << (cpu % 64));
        if self.words[w] & b != 0 {
            self.words[w] &= !b;
            self.len -= 1;
        }
    }

    /// Whether `cpu` is in the set.
    pub(super) fn contains(&self, cpu: CpuId) -> bool {
        self.words[cpu / 64] & (1u64 << (cpu % 64)) != 0
    }

    /// Every CPU below `ncpu` in the set.
    pub(super) fn fill(&mut self, ncpu: usize) {
        self.clear();
        (0..ncpu).for_each(|c| self.insert(c));
    }

    /// Make this set equal to `other` (same size).
    pub(super) fn copy_from(&mut self, other: &CpuMask) {
        self.words.copy_from_slice(&other.words);
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
            words: &self.words,
            w: 0,
            bits: self.words.first().copied().unwrap_or(0),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(super) fn clear(&mut self) {
        if self.len > 0 {
            // Up to 64 CPUs one word: a store, not a call to `memset`.
            match self.words.as_mut_slice() {
                [w] => *w = 0,
                words => words.fill(0),
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
        let union = |w: usize| {
            masks
                .iter()
                .fold(0u64, |u, m| u | m.words.get(w).copied().unwrap_or(0))
        };
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
        self.words.iter().enumerate().any(|(w, &bits)| {
            let union = masks
                .iter()
                .fold(0u64, |u, m| u | m.words.get(w).copied().unwrap_or(0));
            bits & !union != 0
        })
    }

    /// The lowest CPU in the set at or after `from`.
    pub(super) fn next_from(&self, from: CpuId) -> Option<CpuId> {
        let mut w = from / 64;
        if w >= self.words.len() {
            return None;
        }
        let mut bits = self.words[w] & (!0u64 << (from % 64));
        loop {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w += 1;
            if w >= self.words.len() {
                return None;
            }
            bits = self.words[w];
        }
    }
}

/// [`CpuMask::iter`].
pub(super) struct CpuIter<'a> {
    words: &'a [u64],
    /// The word being visited, and its bits not yet visited.
    w: usize,
    bits: u64,
}

impl Iterator for CpuIter<'_> {
    type Item = CpuId;

    fn next(&mut self) -> Option<CpuId> {
        while self.bits == 0 {
            self.w += 1;
            self.bits = *self.words.get(self.w)?;
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
