//! Per-CPU timers (hrtimers): completion, exact CBS budget exhaustion, class decision instants.

use super::*;

impl Engine {
    /// Arm each CPU's timer for the next completion (or exact budget exhaustion), or for
    /// the class's own decision instant ([`SchedClass::next_decision`]) if that is earlier.
    /// Only CPUs whose timer may have moved are looked at (marked, switched, charged a
    /// cost), unless a class arms decision timers, which any change anywhere may move.
    pub(super) fn rearm_timers(&mut self) {
        // In CPU order: the timers' sequence numbers order equal instants.
        let mut list = std::mem::take(&mut self.rearm);
        if self.decision_timers {
            list.fill(self.cpus.len());
        }
        self.visit(list.len());
        for cpu in list.iter() {
            self.sync(cpu);
            let c = &self.cpus[cpu];
            let (want, decision) = match c.curr {
                Some(t) if self.tasks[t].runnable => {
                    let ts = &self.tasks[t];
                    let mut at = self.now + c.overhead_left + ts.remaining();
                    if self.hrtick && self.cbs && ts.class == ClassId::Dl {
                        at = at.min(self.now + ts.dl.runtime.max(0) as Ns);
                    }
                    if !self.decision_timers {
                        // No class with tasks asks for decision instants (the flag is
                        // set from all of them), this one included: no virtual call.
                        debug_assert!(!self.classes[ts.class as usize].uses_decision_timer());
                        (at, false)
                    } else {
                        let class = &self.classes[ts.class as usize];
                        let decision = if class.uses_decision_timer() {
                            class.next_decision(&ctx!(self), ts.rq, cpu, t)
                        } else {
                            None
                        };
                        // A higher class may want this CPU back at an instant of its own
                        // (a server's budget running out while a lower class runs here).
                        let above = self.idle_decision(cpu, |c| c < ts.class);
                        match decision {
                            Some(d) if d <= at && above.is_none_or(|a| d <= a) => {
                                debug_assert!(d > self.now, "decision instant {d} not after now");
                                // No decision before kernel work on the CPU ends.
                                let d = d.max(self.kernel.busy_until(cpu));
                                (d.max(self.now + 1), true)
                            }
                            // Not the running class's decision: the CPU is only marked
                            // for one.
                            _ => match above {
                                Some(a) if a < at => {
                                    (a.max(self.kernel.busy_until(cpu)).max(self.now + 1), false)
                                }
                                _ => (at, false),
                            },
                        }
                    }
                }
                _ if self.decision_timers => match self.idle_decision(cpu, |_| true) {
                    Some(d) => (d.max(self.kernel.busy_until(cpu)).max(self.now + 1), true),
                    None => (Ns::MAX, false),
                },
                _ => (Ns::MAX, false),
            };
            let c = &mut self.cpus[cpu];
            c.timer_decision = decision;
            if want != c.timer_at {
                self.arm_cpu_timer(cpu, want);
            }
        }
        list.clear();
        self.rearm = list;
    }

    /// The earliest decision instant the classes `which` with tasks ask for on `cpu`,
    /// where none of their tasks runs ([`SchedClass::next_decision_idle`]).
    fn idle_decision(&self, cpu: CpuId, which: impl Fn(ClassId) -> bool) -> Option<Ns> {
        ClassId::ALL
            .into_iter()
            .filter(|&c| which(c) && self.class_has_tasks[c as usize])
            .filter(|&c| self.classes[c as usize].uses_decision_timer())
            .filter_map(|c| {
                let rq = self.rq_of(c, cpu);
                self.classes[c as usize].next_decision_idle(&ctx!(self), rq, cpu)
            })
            .min()
    }
}

/// Up to this many CPUs the armed timers are kept flat, one key per CPU, and the earliest
/// is found by a scan when the cached earliest fires, is cancelled or moves later (about
/// once per completion); above, an indexed heap finds it. At 8 CPUs a heap's removal of
/// the earliest timer and the next `set` each cost about 100 instructions, a scan of 8
/// keys about 50 (the same threshold as `global_fast.rs`'s running keys).
const FLAT_TIMERS: usize = 32;

/// No timer armed on a CPU (no key is this large: `Ns::MAX` disarms instead).
const NONE: u128 = u128::MAX;

/// The armed CPU timers: per CPU, its key (`events::timer_key`: instant, then sequence
/// number) if armed; the smallest key first. Keys are distinct (sequence numbers are).
/// Flat, the smallest is cached while it is known; with the heap every call goes to it
/// at once (a cache kept beside the heap cost scale-100k 1 % more instructions).
#[derive(Debug, Clone)]
pub(super) struct CpuTimers {
    /// Per CPU, its key or `NONE` (flat only).
    keys: Vec<u128>,
    len: usize,
    /// The smallest key and its CPU (`NONE` when no timer is armed), valid when `known`.
    first: (u128, u32),
    /// Flat only (with the heap `first` is not used).
    known: bool,
    /// Above [`FLAT_TIMERS`] CPUs, the keys in an indexed heap instead.
    heap: Option<crate::heap::SlotHeap>,
}

impl CpuTimers {
    pub(super) fn new(ncpu: usize) -> CpuTimers {
        CpuTimers {
            keys: vec![NONE; if ncpu > FLAT_TIMERS { 0 } else { ncpu }],
            len: 0,
            first: (NONE, 0),
            known: ncpu <= FLAT_TIMERS,
            heap: (ncpu > FLAT_TIMERS).then(|| crate::heap::SlotHeap::new(ncpu)),
        }
    }

    /// Number of armed timers.
    #[inline]
    pub(super) fn len(&self) -> usize {
        match &self.heap {
            Some(h) => h.len(),
            None => self.len,
        }
    }

    /// `cpu`'s key, if armed.
    #[inline]
    pub(super) fn get(&self, cpu: CpuId) -> Option<u128> {
        if let Some(h) = &self.heap {
            return h.get(cpu);
        }
        let k = self.keys[cpu];
        (k != NONE).then_some(k)
    }

    /// Arm (or move) `cpu`'s timer to `key`.
    #[inline]
    pub(super) fn set(&mut self, cpu: CpuId, key: u128) {
        debug_assert!(key != NONE);
        if let Some(h) = self.heap.as_mut() {
            return h.set(cpu, key);
        }
        let old = std::mem::replace(&mut self.keys[cpu], key);
        self.len += (old == NONE) as usize;
        if self.known {
            if key < self.first.0 {
                self.first = (key, cpu as u32);
            } else if self.first.1 as usize == cpu {
                // The earliest moved later: another CPU's timer may come first now.
                self.known = false;
            }
        }
    }

    /// Disarm `cpu`'s timer; its key if it was armed.
    #[inline]
    pub(super) fn remove(&mut self, cpu: CpuId) -> Option<u128> {
        if let Some(h) = self.heap.as_mut() {
            return h.remove(cpu);
        }
        let old = std::mem::replace(&mut self.keys[cpu], NONE);
        if old == NONE {
            return None;
        }
        self.len -= 1;
        if self.first.1 as usize == cpu {
            self.known = false;
        }
        Some(old)
    }

    /// With the heap, the CPU of the earliest timer, read without counting anything (for
    /// a cache hint); flat, None.
    #[inline]
    pub(super) fn first_cpu_hint(&self) -> Option<CpuId> {
        self.heap.as_ref()?.first_slot_hint()
    }

    /// The smallest key and its CPU; a scan of the flat keys counts its CPU visits.
    #[inline]
    pub(super) fn first(&mut self, visits: &Cell<u64>) -> Option<(u128, CpuId)> {
        // `known` first: it is never set with the heap, and flat it is the common case.
        if !self.known {
            if let Some(h) = &self.heap {
                return h.first();
            }
            visits.set(visits.get() + self.keys.len() as u64);
            self.first = self.scan();
            self.known = true;
        }
        debug_assert_eq!(self.first.0, self.scan().0, "CpuTimers: stale earliest");
        (self.first.0 != NONE).then_some((self.first.0, self.first.1 as CpuId))
    }

    /// The smallest key and its CPU, by a look at every CPU.
    fn scan(&self) -> (u128, u32) {
        let mut best = (NONE, 0);
        for (cpu, &k) in self.keys.iter().enumerate() {
            if k < best.0 {
                best = (k, cpu as u32);
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heap::SlotHeap;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Random sets, moves and removals, as the engine makes them (distinct keys from a
    /// sequence number): the flat timers (up to 32 CPUs) and the heap behind them (above)
    /// give the same earliest entry, lengths and keys as an indexed heap alone at every
    /// step.
    #[test]
    fn cpu_timers_agree_with_the_heap() {
        let mut rng = ChaCha8Rng::seed_from_u64(29);
        for ncpu in [1, 2, 3, 4, 8, 16, 32, 33, 64] {
            let (mut flat, mut heap) = (CpuTimers::new(ncpu), SlotHeap::new(ncpu));
            assert_eq!(flat.heap.is_some(), ncpu > FLAT_TIMERS);
            let visits = Cell::new(0);
            let mut seq = 0u64;
            for _ in 0..20_000 {
                let cpu = rng.random_range(0..ncpu);
                match rng.random_range(0..10) {
                    0..=5 => {
                        seq += 1;
                        let at = rng.random_range(0..64u64);
                        let key = (at as u128) << 64 | seq as u128;
                        flat.set(cpu, key);
                        heap.set(cpu, key);
                    }
                    6 | 7 => assert_eq!(flat.remove(cpu), heap.remove(cpu)),
                    _ => {
                        // The earliest fires, as `pop_timer` takes it.
                        let f = flat.first(&visits);
                        assert_eq!(f, heap.first());
                        if let Some((k, c)) = f {
                            assert_eq!(flat.remove(c), Some(k));
                            heap.remove(c);
                        }
                    }
                }
                assert_eq!(flat.first(&visits), heap.first());
                assert_eq!(flat.len(), heap.len());
                assert!((0..ncpu).all(|c| flat.get(c) == heap.get(c)));
            }
            // Only the flat layout scans (and counts its CPU visits).
            assert_eq!(visits.get() > 0, ncpu <= FLAT_TIMERS);
        }
    }
}
