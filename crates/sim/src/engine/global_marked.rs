//! Global placement for one class without a key order (ILLF): `schedule_global`'s steps,
//! but a decision visits only the CPUs that changed. `schedule_global` starts from every
//! CPU (collecting its task, asking its class whether it yields) and ends by comparing
//! every CPU's new task with its current one: O(CPUs) per instant, most of the time at
//! 1024 CPUs where an instant changes a few. Here the assignment is kept between
//! instants; a CPU nothing happened to (not marked) keeps its task, as `schedule_global`
//! would find (the class never asks a running task to yield, [`SchedClass::never_yields`],
//! nor plans its running set), so only the marked CPUs are collected, free CPUs are found
//! in a bitmap, and only the CPUs the steps changed are switched. The steps themselves,
//! and so every hook call and every result, are `schedule_global`'s.
//!
//! [`SchedClass::never_yields`]: crate::class::SchedClass::never_yields

use super::marks::CpuMask;
use super::*;

/// Brent's cycle finding on the assignment after each step of one decision (each step
/// changes one CPU's task): a snapshot taken at 1, 2, 4, ... steps, compared at every
/// step through a hash kept up to date.
struct Cycle {
    /// The assignment as hashed.
    shadow: Vec<Option<TaskId>>,
    hash: u64,
    snap: Vec<Option<TaskId>>,
    snap_hash: u64,
    power: usize,
    since: usize,
}

impl Cycle {
    fn new(assign: &[Option<TaskId>]) -> Cycle {
        let hash = assign
            .iter()
            .enumerate()
            .fold(0, |h, (cpu, &t)| h ^ Cycle::mix(cpu, t));
        Cycle {
            shadow: assign.to_vec(),
            hash,
            snap: assign.to_vec(),
            snap_hash: hash,
            power: 1,
            since: 0,
        }
    }

    /// splitmix64 of (CPU, task).
    fn mix(cpu: CpuId, t: Option<TaskId>) -> u64 {
        let mut x = ((cpu as u64) << 32) ^ t.map_or(u64::MAX, |t| t as u64);
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }

    /// After a step that changed `cpu`'s task: a period of the steps once the
    /// assignment is one seen before.
    fn step(&mut self, cpu: CpuId, assign: &[Option<TaskId>]) -> Option<usize> {
        self.hash ^= Cycle::mix(cpu, self.shadow[cpu]) ^ Cycle::mix(cpu, assign[cpu]);
        self.shadow[cpu] = assign[cpu];
        self.since += 1;
        if self.hash == self.snap_hash && self.snap == assign {
            return Some(self.since);
        }
        if self.since == self.power {
            self.snap.copy_from_slice(assign);
            self.snap_hash = self.hash;
            self.power *= 2;
            self.since = 0;
        }
        None
    }
}

/// The assignment of the one global class between instants.
pub(super) struct GlobalMarked {
    class: ClassId,
    /// Per CPU: the task it runs (runnable), as of the last decision.
    assign: Vec<Option<TaskId>>,
    /// CPUs with no task.
    free: CpuMask,
    /// CPUs whose task may change at this decision.
    changed: CpuMask,
    /// `changed` as a list, for the class's preemption scan (reused).
    unsure: Vec<CpuId>,
}

impl Engine {
    /// The incremental global placement for this workload, if it applies: one class with
    /// tasks, global, no fair task, no key order (keyed classes take `global_fast.rs`), a
    /// class that never makes a running task yield nor plans its running set, and
    /// `global` placement (no push or pull changes a CPU's task outside the decision).
    pub(super) fn global_marked_for(&self) -> Option<GlobalMarked> {
        let used: Vec<ClassId> = ClassId::ALL
            .into_iter()
            .filter(|&c| self.class_has_tasks[c as usize])
            .collect();
        let &[class] = used.as_slice() else {
            return None;
        };
        let cls = &self.classes[class as usize];
        (class != ClassId::Fair
            && self.global_fast.is_none()
            && self.placement == Placement::Global
            && self.class_global[class as usize]
            && cls.never_yields()
            && !cls.decides_running())
        .then(|| {
            let ncpu = self.cpus.len();
            let mut free = CpuMask::new(ncpu);
            (0..ncpu).for_each(|c| free.insert(c));
            GlobalMarked {
                class,
                assign: vec![None; ncpu],
                free,
                changed: CpuMask::new(ncpu),
                unsure: Vec::new(),
            }
        })
    }

    /// `schedule_global` for one class that never yields: see the module documentation.
    pub(super) fn schedule_global_marked(&mut self, mut g: GlobalMarked) -> GlobalMarked {
        if cfg!(debug_assertions) {
            // What the module relies on: an unmarked CPU still runs the task it was
            // given, runnable, with no decision asked of it.
            for cpu in (0..self.cpus.len()).filter(|&c| !self.marked.contains(c)) {
                let c = &self.cpus[cpu];
                debug_assert!(
                    !c.dirty && !c.need_resched,
                    "CPU {cpu} unmarked but flagged"
                );
                debug_assert_eq!(c.curr, g.assign[cpu], "CPU {cpu}: task changed unmarked");
                debug_assert!(c.curr.is_none_or(|t| self.tasks[t].runnable));
            }
        }
        g.changed.clear();
        let mut cpu = 0;
        while let Some(c) = self.marked.next_from(cpu) {
            cpu = c + 1;
            self.visit(1);
            self.cpus[c].dirty = false;
            let resched = std::mem::take(&mut self.cpus[c].need_resched);
            let curr = self.cpus[c].curr.filter(|&t| self.tasks[t].runnable);
            let next = match curr {
                Some(t) if resched => {
                    self.put_prev(t);
                    None
                }
                other => other,
            };
            g.assign[c] = next;
            if next.is_some() {
                g.free.remove(c);
            } else {
                g.free.insert(c);
            }
            g.changed.insert(c);
        }
        self.marked.clear();
        // Every change strictly raises the priority on one CPU; the bound is a safety net.
        // A class whose rules are not such an order (ILLF: Algorithm 2 may hand a CPU
        // back) can cycle until the bound, and at 1024 CPUs and 10,000 tasks that is 41
        // million steps: where the steps depend on the assignment alone, a repeated
        // assignment gives the cycle's period, and whole periods are skipped (the
        // assignment the bound ends on is the same).
        let ncpu = self.cpus.len();
        let mut bound = 4 * ncpu * (self.tasks.len() + 1);
        let mut watch = self.classes[g.class as usize].global_steps_memoryless();
        let mut cycle: Option<Cycle> = None;
        let mut done = 0;
        while done < bound {
            done += 1;
            let Some(cpu) = self.global_marked_step(&mut g) else {
                break;
            };
            if !watch || done < ncpu {
                continue;
            }
            match &mut cycle {
                None => cycle = Some(Cycle::new(&g.assign)),
                Some(c) => {
                    if let Some(period) = c.step(cpu, &g.assign) {
                        if cfg!(debug_assertions) && done + period <= bound {
                            // The steps read the assignment alone: one more period
                            // comes back to it.
                            let at = g.assign.clone();
                            for _ in 0..period {
                                self.global_marked_step(&mut g);
                            }
                            done += period;
                            debug_assert_eq!(
                                g.assign, at,
                                "global steps: a cycle that does not repeat"
                            );
                        }
                        bound = done + (bound - done) % period;
                        watch = false;
                    }
                }
            }
        }
        // All departures before all arrivals, in CPU order, as `schedule_global`.
        let mut at = 0;
        while let Some(c) = g.changed.next_from(at) {
            at = c + 1;
            if self.cpus[c].curr != g.assign[c] {
                self.switch_out(c, g.assign[c]);
            }
        }
        let mut at = 0;
        while let Some(c) = g.changed.next_from(at) {
            at = c + 1;
            if self.cpus[c].curr != g.assign[c] {
                self.switch_in(c, g.assign[c]);
            }
        }
        g
    }

    /// `global_step` for one class: fill the lowest free CPU that gets a task, else let
    /// a waiting task preempt (`global_preempt`).
    fn global_marked_step(&mut self, g: &mut GlobalMarked) -> Option<CpuId> {
        let class = g.class;
        if self.classes[class as usize].nr_waiting() > 0 {
            let mut at = 0;
            while let Some(cpu) = g.free.next_from(at) {
                at = cpu + 1;
                self.visit(1);
                let rq = self.rq_of(class, cpu);
                let picked = self.classes[class as usize].pick_next_task(&ctx!(self), rq, cpu);
                if let Some(n) = picked {
                    g.assign[cpu] = Some(n);
                    g.free.remove(cpu);
                    g.changed.insert(cpu);
                    return Some(cpu);
                }
            }
        }
        let found = match self.class_first_preempted(g) {
            Some(found) => found,
            None => {
                let mut running = std::mem::take(&mut self.scratch_cpus);
                let found = self.global_preempt(&mut g.assign, &mut running);
                self.scratch_cpus = running;
                found
            }
        };
        match found {
            Some(cpu) => {
                if g.assign[cpu].is_some() {
                    g.free.remove(cpu);
                } else {
                    g.free.insert(cpu);
                }
                g.changed.insert(cpu);
                Some(cpu)
            }
            None => None,
        }
    }

    /// `global_preempt` by the class's own scan ([`SchedClass::global_first_preempted`]):
    /// the CPU whose task changed, `Some(None)` when none did, `None` when the class has
    /// no such scan (the caller asks every CPU). The class is told which CPUs this
    /// decision changed: only there may `assign` differ from a CPU's current task.
    ///
    /// [`SchedClass::global_first_preempted`]: crate::class::SchedClass::global_first_preempted
    fn class_first_preempted(&mut self, g: &mut GlobalMarked) -> Option<Option<CpuId>> {
        let class = g.class as usize;
        if !self.class_unrestricted[class] {
            return None;
        }
        if self.classes[class].nr_waiting() == 0 {
            return Some(None); // as `global_preempt`: nothing waits, nothing preempts
        }
        g.unsure.clear();
        g.unsure.extend(g.changed.iter());
        let cpu = self.classes[class].global_first_preempted(&ctx!(self), &g.assign, &g.unsure)?;
        let Some(cpu) = cpu else {
            return Some(None);
        };
        // What `global_preempt` does with the CPU it found.
        let curr = g.assign[cpu].expect("a preempted CPU runs a task");
        self.put_prev(curr);
        g.assign[cpu] = self.classes[class].pick_next_task(&ctx!(self), 0, cpu);
        Some((g.assign[cpu] != Some(curr)).then_some(cpu))
    }
}

#[cfg(test)]
mod tests {
    use super::Cycle;

    /// Five distinct assignments, then CPU 0 takes tasks 1, 2, 3, 1, 2, 3, ...: nothing is
    /// reported before a repeat, and the period reported is 3.
    #[test]
    fn a_repeated_assignment_gives_the_cycle_period() {
        let mut assign = vec![Some(0), None];
        let mut cycle = Cycle::new(&assign);
        for t in 10..15 {
            assign[1] = Some(t);
            assert_eq!(cycle.step(1, &assign), None, "no repeat yet at task {t}");
        }
        let mut found = None;
        for i in 0..64 {
            assign[0] = Some(1 + i % 3);
            if let Some(period) = cycle.step(0, &assign) {
                found = Some((period, i));
                break;
            }
        }
        let (period, at) = found.expect("the cycle is found");
        assert_eq!(period, 3);
        assert!(at >= 3, "found at step {at} before any assignment repeated");
    }
}
