//! Global placement when it is simple enough to be incremental: one real-time class holds
//! every task, it orders them by a key ([`SchedClass::preempt_key`]: EDF, fixed
//! priorities) and no task has a restricted affinity. Then the m tasks with the smallest
//! keys run, and a decision needs only the lowest free CPU and the running task with the
//! largest key — kept between instants (a bitmap of free CPUs and an indexed heap of
//! running keys, one entry per CPU) and updated for the CPUs that change — instead of a
//! pass over every CPU per step. The state stays boxed in the engine, so a decision
//! moves a pointer, not the state. The steps, and so every hook call and every result, are those of
//! `global.rs`, which handles all other cases.

use super::marks::CpuMask;
use super::*;
use crate::heap::SlotHeap;

/// A running CPU's key in [`GlobalFast::running`], whose first entry is then the largest
/// task key, the lowest CPU among equals.
fn worst_first(key: u64, cpu: CpuId) -> u128 {
    ((!key) as u128) << 64 | cpu as u128
}

/// Up to this many CPUs the running task with the largest key is found by a scan of
/// `key` when a decision asks (a comparison per CPU), not kept in a heap: a heap move at
/// every occupation (about 150 instructions on 8 CPUs) costs more than the scans, which
/// only the decisions with no CPU free make (64x8 EDF: 10,873 scans for 18,626 moves).
const SCAN_CPUS: usize = 32;

/// The assignment of the one global class between instants.
pub(super) struct GlobalFast {
    class: ClassId,
    /// Per CPU: the task it runs (runnable), as of the last decision.
    slot: Vec<Option<TaskId>>,
    /// Per CPU: the key of `slot`'s task.
    key: Vec<u64>,
    /// CPUs with no runnable task.
    free: CpuMask,
    /// (key, CPU) of the running tasks; the first is the one a waiting task preempts
    /// first: the largest key, the lowest CPU among equals. A CPU that is vacated keeps
    /// its stale entry until it is occupied again (one move in place instead of a removal
    /// and an insertion): the heap is read only when no CPU is free, when every entry is
    /// current. None up to [`SCAN_CPUS`] CPUs: `key` is scanned instead.
    running: Option<SlotHeap>,
    changed: Vec<CpuId>,
}

impl GlobalFast {
    fn new(class: ClassId, ncpu: usize) -> GlobalFast {
        let mut free = CpuMask::new(ncpu);
        (0..ncpu).for_each(|c| free.insert(c));
        GlobalFast {
            class,
            slot: vec![None; ncpu],
            key: vec![0; ncpu],
            free,
            running: (ncpu > SCAN_CPUS).then(|| SlotHeap::new(ncpu)),
            changed: Vec::new(),
        }
    }

    fn vacate(&mut self, cpu: CpuId) {
        if self.slot[cpu].take().is_some() {
            self.free.insert(cpu);
        }
    }

    fn occupy(&mut self, cpu: CpuId, t: TaskId, key: u64) {
        // The CPU's entry is moved in place (not removed and inserted).
        self.slot[cpu] = Some(t);
        self.key[cpu] = key;
        if let Some(running) = self.running.as_mut() {
            running.set(cpu, worst_first(key, cpu));
        }
        self.free.remove(cpu);
    }

    /// The CPU a waiting task preempts first, when no CPU is free: the largest key, the
    /// lowest CPU among equals.
    fn worst(&self) -> Option<CpuId> {
        debug_assert!(self.free.is_empty());
        let cpu = match &self.running {
            Some(running) => running.first().map(|(_, cpu)| cpu),
            None => {
                let mut worst = 0;
                for c in 1..self.key.len() {
                    if self.key[c] > self.key[worst] {
                        worst = c;
                    }
                }
                (!self.key.is_empty()).then_some(worst)
            }
        };
        // Debug builds check it against the definition, and the heap's entries.
        debug_assert_eq!(
            cpu,
            (0..self.key.len()).min_by_key(|&c| (std::cmp::Reverse(self.key[c]), c))
        );
        debug_assert!(self.running.as_ref().is_none_or(
            |r| (0..self.slot.len()).all(|c| r.get(c) == Some(worst_first(self.key[c], c)))
        ));
        cpu
    }
}

impl Engine {
    /// The incremental global placement for this workload, if it applies.
    pub(super) fn global_fast_for(&self, task_class: &[ClassId]) -> Option<Box<GlobalFast>> {
        let used: Vec<ClassId> = ClassId::ALL
            .into_iter()
            .filter(|&c| self.class_has_tasks[c as usize])
            .collect();
        let &[class] = used.as_slice() else {
            return None;
        };
        let keyed = self.classes[class as usize]
            .preempt_key(&ctx!(self), task_class.iter().position(|&c| c == class)?)
            .is_some();
        (class != ClassId::Fair
            && self.class_global[class as usize]
            && self.class_unrestricted[class as usize]
            && keyed)
            .then(|| Box::new(GlobalFast::new(class, self.cpus.len())))
    }

    /// `schedule_global` for the simple case: see the module documentation.
    pub(super) fn schedule_global_fast(&mut self, g: &mut GlobalFast) {
        self.invocations += 1;
        self.global_poked = false; // no CPU's own state changed by a wake-up alone
        g.changed.clear();
        // The marked CPUs are the only ones whose task may have stopped, changed job or
        // been asked to reschedule since the last decision.
        let mut cpu = 0;
        while let Some(c) = self.marked.next_from(cpu) {
            cpu = c + 1;
            self.visit(1);
            self.cpus[c].dirty = false;
            let resched = std::mem::take(&mut self.cpus[c].need_resched);
            match self.cpus[c].curr.filter(|&t| self.tasks[t].runnable) {
                Some(t) if resched => {
                    self.put_prev(t);
                    g.vacate(c);
                    g.changed.push(c);
                }
                Some(t) => {
                    let key = self.key_of(g.class, t);
                    g.occupy(c, t, key);
                }
                None => {
                    g.vacate(c);
                    g.changed.push(c); // its current task leaves
                }
            }
        }
        self.marked.clear();
        let class = g.class;
        while self.classes[class as usize].nr_waiting() > 0 {
            self.visit(1);
            if let Some(cpu) = g.free.next_from(0) {
                // Fill the lowest free CPU.
                let Some(n) = self.classes[class as usize].pick_next_task(&ctx!(self), 0, cpu)
                else {
                    break;
                };
                let key = self.key_of(class, n);
                g.occupy(cpu, n, key);
                g.changed.push(cpu);
                continue;
            }
            // Preempt the largest key if the first waiting task beats it. No CPU is free,
            // so every CPU's key is current.
            debug_assert!(g.slot.iter().all(|s| s.is_some()));
            if g.running.is_none() {
                self.visit(g.key.len()); // the scan
            }
            let Some(cpu) = g.worst() else {
                break;
            };
            let worst = g.key[cpu];
            let cls = &self.classes[class as usize];
            let Some(cand) = cls.peek_next_task(&ctx!(self), 0, cpu) else {
                break;
            };
            if self.key_of(class, cand) >= worst {
                break;
            }
            let curr = g.slot[cpu].expect("a running CPU has a task");
            g.vacate(cpu);
            let rq = self.tasks[curr].rq;
            debug_assert_eq!(rq, 0, "a global class has one run queue");
            let picked = self.classes[class as usize].put_prev_and_pick(&ctx!(self), rq, cpu, curr);
            if let Some(n) = picked {
                let key = self.key_of(class, n);
                g.occupy(cpu, n, key);
            }
            g.changed.push(cpu);
        }
        // All departures before all arrivals, in CPU order, as `schedule_global`.
        g.changed.sort_unstable();
        g.changed.dedup();
        for i in 0..g.changed.len() {
            let c = g.changed[i];
            if self.cpus[c].curr != g.slot[c] {
                self.switch_out(c, g.slot[c]);
            }
        }
        for i in 0..g.changed.len() {
            let c = g.changed[i];
            if self.cpus[c].curr != g.slot[c] {
                self.switch_in(c, g.slot[c]);
            }
        }
    }

    fn key_of(&self, class: ClassId, t: TaskId) -> u64 {
        self.classes[class as usize]
            .preempt_key(&ctx!(self), t)
            .expect("a keyed class keys every task")
    }
}
