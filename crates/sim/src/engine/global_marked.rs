//! Global placement for one class without a key order (ILLF): `schedule_global`'s steps,
//! but a decision visits only the CPUs that changed. `schedule_global` starts from every
//! CPU (collecting its task, asking its class whether it yields) and ends by comparing
//! every CPU's new task with its current one: O(CPUs) per instant, most of the time at
//! 1024 CPUs where an instant changes a few. Here the assignment is kept between
//! instants; a CPU nothing happened to (not marked) keeps its task, as `schedule_global`
//! would find (the class never asks a running task to yield, [`SchedClass::never_yields`],
//! nor plans its running set), so only the marked CPUs are collected, free CPUs are found
//! in a bitmap, and only the CPUs the steps changed are switched. The steps themselves,
//! and so every hook call and every result, are `schedule_global`'s. The state stays
//! boxed in the engine and is updated in place.
//!
//! [`SchedClass::never_yields`]: crate::class::SchedClass::never_yields

use super::marks::CpuMask;
use super::*;

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
    /// `assign` as the class's preemption scan sees it: for a class whose rules are not
    /// an order, a CPU whose task was picked in this decision shows none, as it is not
    /// preempted again ([`Engine::picked_now`]).
    view: Vec<Option<TaskId>>,
    /// Per CPU: an upper bound of its task's key in `assign` at every later decision
    /// while the CPU is not marked ([`SchedClass::global_key_bound`]), 0 for a free CPU;
    /// out of date on the CPUs in `stale`.
    ///
    /// [`SchedClass::global_key_bound`]: crate::class::SchedClass::global_key_bound
    bounds: Vec<u64>,
    /// CPUs whose task in `assign` changed since their bound was taken: refreshed when a
    /// decision next needs the bounds, not at the end of every decision (most decisions
    /// end with nothing waiting, and a CPU often changes again before then).
    stale: CpuMask,
    /// Whether the class gives such bounds (until it answers `None`).
    bounded: bool,
    /// The class's [`SchedClass::preempts_in_order`], a property of the class asked once
    /// (not at every pick).
    ///
    /// [`SchedClass::preempts_in_order`]: crate::class::SchedClass::preempts_in_order
    in_order: bool,
    /// Whether the class takes a decision's put-backs and picks in one call
    /// ([`SchedClass::put_prev_and_pick_all`]) until it answers it does not.
    ///
    /// [`SchedClass::put_prev_and_pick_all`]: crate::class::SchedClass::put_prev_and_pick_all
    batch: bool,
    /// This decision's preempted tasks, in CPU order, and the batch's picks (reused).
    prev: Vec<TaskId>,
    picked: Vec<TaskId>,
}

impl GlobalMarked {
    /// Never use the class's key bounds (running keys that cannot rise while their jobs
    /// run): for an engine whose running jobs' remaining times are replaced from outside.
    pub(super) fn without_bounds(&mut self) {
        self.bounded = false;
    }
}

impl Engine {
    /// The incremental global placement for this workload, if it applies: one class with
    /// tasks, global, no fair task, no key order (keyed classes take `global_fast.rs`), a
    /// class that never makes a running task yield nor plans its running set, and
    /// `global` placement (no push or pull changes a CPU's task outside the decision).
    pub(super) fn global_marked_for(&self) -> Option<Box<GlobalMarked>> {
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
            Box::new(GlobalMarked {
                class,
                assign: vec![None; ncpu],
                free,
                changed: CpuMask::new(ncpu),
                unsure: Vec::new(),
                view: vec![None; ncpu],
                bounds: vec![0; ncpu],
                stale: CpuMask::new(ncpu),
                bounded: true,
                in_order: cls.preempts_in_order(),
                batch: true,
                prev: Vec::new(),
                picked: Vec::new(),
            })
        })
    }

    /// `schedule_global` for one class that never yields: see the module documentation.
    pub(super) fn schedule_global_marked(&mut self, g: &mut GlobalMarked) {
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
                if let Some(t) = c.curr.filter(|_| g.bounded && !g.stale.contains(cpu)) {
                    let key =
                        self.classes[g.class as usize].global_preempt_key_uncounted(&ctx!(self), t);
                    debug_assert!(
                        key.is_none_or(|k| k <= g.bounds[cpu]),
                        "CPU {cpu}: key {key:?} above its bound {}",
                        g.bounds[cpu]
                    );
                }
            }
        }
        // The put-backs and the picks of free CPUs in one call where the class can: every
        // task may run on every CPU, so a pick does not depend on the CPU it fills (a
        // class whose rules are not an order, ILLF, picks by them; its view of a CPU
        // picked now is set as a step sets it).
        let batch = g.batch && self.class_unrestricted[g.class as usize];
        // The marked CPUs are this decision's first changed ones: copied at once (not
        // inserted one by one) and visited from the copy, then every marked CPU's flags
        // are consumed here (nothing marks a CPU meanwhile).
        g.changed.copy_from(&self.marked);
        self.marked.clear();
        self.visit(g.changed.len());
        for c in g.changed.iter() {
            self.cpus[c].dirty = false;
            let resched = std::mem::take(&mut self.cpus[c].need_resched);
            let curr = self.cpus[c].curr.filter(|&t| self.tasks[t].runnable);
            let next = match curr {
                Some(t) if resched && batch => {
                    g.prev.push(t);
                    None
                }
                Some(t) if resched => {
                    self.put_prev(t);
                    None
                }
                other => other,
            };
            g.assign[c] = next;
            g.view[c] = next;
            if next.is_some() {
                g.free.remove(c);
            } else {
                g.free.insert(c);
            }
            g.stale.insert(c);
        }
        if batch {
            self.put_prev_and_fill(g);
        }
        self.settle(|e| e.global_marked_step(g).is_some());
        self.switch_changed(g);
    }

    /// The decision's context switches: all departures before all arrivals, in CPU
    /// order, as `schedule_global` (`switch_out` then `switch_in` on each changed CPU
    /// whose task changes). One call whose walks inline both halves' work, not two calls
    /// per moved task, each saving and restoring the registers of a large function.
    #[inline(never)]
    fn switch_changed(&mut self, g: &mut GlobalMarked) {
        // The engine's flags are fixed for a run: tested once per decision, not in each
        // half of each move (`leave`/`arrive` stay as they are for their other callers,
        // global EDF's among them).
        if self.plain_switches() {
            #[cfg(debug_assertions)]
            let before = SwitchRecords::take(self, g);
            self.switch_changed_plain(g);
            #[cfg(debug_assertions)]
            self.check_plain_switches(g, before);
            return;
        }
        self.switch_changed_general(g);
    }

    /// The decision's switches through `leave` and `arrive`.
    #[inline(always)]
    fn switch_changed_general(&mut self, g: &mut GlobalMarked) {
        for c in g.changed.iter() {
            let next = g.assign[c];
            if self.cpus[c].curr != next {
                self.leave(c, next);
            }
        }
        for c in g.changed.iter() {
            let next = g.assign[c];
            if self.cpus[c].curr != next {
                self.arrive(c, next);
            }
            g.view[c] = next;
        }
    }

    /// Debug builds: `switch_changed_plain`, just run from the records in `before`, left
    /// every record it may write as `switch_changed_general` (`leave` and `arrive`) does
    /// from the same records; the general path's state is kept.
    #[cfg(debug_assertions)]
    fn check_plain_switches(&mut self, g: &mut GlobalMarked, before: SwitchRecords) {
        let plain = before.again(self, g);
        before.restore(self, g);
        self.switch_changed_general(g);
        let general = before.again(self, g);
        // Compared as text: the records have no `PartialEq`.
        assert!(
            format!("{plain:?}") == format!("{general:?}"),
            "at {} ns: the plain switch walk and leave/arrive disagree\n\
             plain: {plain:#?}\ngeneral: {general:#?}",
            self.now
        );
    }

    /// [`Engine::switch_changed`] when [`Engine::plain_switches`] holds: one walk, each
    /// CPU's departure then its arrival (`PlainSwitch::switch`, which gives the state
    /// of all departures then all arrivals, lazy accounting's `sync` included).
    #[inline(always)]
    fn switch_changed_plain(&mut self, g: &mut GlobalMarked) {
        let mut sw = self.plain_switch();
        for c in g.changed.iter() {
            let next = g.assign[c];
            g.view[c] = next;
            sw.switch(c, next);
        }
    }

    /// The decision's put-backs (`g.prev`) and the picks of the free CPUs, lowest first,
    /// as the steps would take them (each step fills the lowest free CPU while a task
    /// waits, and a pick does not depend on the CPU it fills), in one class call
    /// ([`Counted::put_prev_and_pick_all`]); one by one if the class cannot.
    fn put_prev_and_fill(&mut self, g: &mut GlobalMarked) {
        let class = g.class as usize;
        if g.prev.is_empty() && (g.free.is_empty() || self.classes[class].nr_waiting() == 0) {
            return;
        }
        debug_assert!(g.prev.iter().all(|&t| self.tasks[t].rq == 0));
        let picks = g.free.len();
        let waiting = self.classes[class].nr_waiting() + g.prev.len();
        // The lists are used in place (fields of `g`, not of the engine): not moved out
        // and back at each call.
        if self.classes[class].put_prev_and_pick_all(&ctx!(self), &g.prev, picks, &mut g.picked) {
            // The steps fill free CPUs while a task waits, every pick finding one.
            debug_assert_eq!(g.picked.len(), picks.min(waiting), "batch: picks");
            let mut at = 0;
            for &n in &g.picked {
                let cpu = g.free.next_from(at).expect("a free CPU per pick");
                at = cpu + 1;
                self.visit(1);
                g.assign[cpu] = Some(n);
                // `settle_view`, inlined (an in-order class's view is its task).
                g.view[cpu] = (g.in_order || self.cpus[cpu].curr == Some(n)).then_some(n);
                g.free.remove(cpu);
                g.changed.insert(cpu);
                g.stale.insert(cpu);
            }
        } else {
            g.batch = false;
            for &t in &g.prev {
                self.put_prev(t);
            }
        }
        g.prev.clear();
        g.picked.clear();
    }

    /// The bounds of the stale CPUs, from their tasks in `assign`; false if the class
    /// gives none (`bounded` is then cleared).
    fn refresh_bounds(&self, g: &mut GlobalMarked) -> bool {
        let cls = &self.classes[g.class as usize];
        let ctx = ctx!(self);
        for c in g.stale.iter() {
            g.bounds[c] = match g.assign[c] {
                None => 0,
                Some(t) => match cls.global_key_bound(&ctx, t) {
                    Some(b) => b,
                    None => {
                        g.bounded = false;
                        return false;
                    }
                },
            };
        }
        g.stale.clear();
        true
    }

    /// Whether the kept bounds show that no waiting task preempts at this step: what
    /// `global_preempt` would find, without asking every running CPU's key. A running
    /// task's key is at most its CPU's bound, so a waiting task whose key is not below
    /// the largest bound beats none (debug builds check every CPU's key). False when the
    /// bounds cannot tell (the caller asks every CPU).
    fn none_beaten_by_bound(&self, g: &mut GlobalMarked) -> bool {
        let class = g.class as usize;
        if self.classes[class].nr_waiting() == 0 {
            return true; // as `global_preempt`: nothing waits, nothing preempts
        }
        if !self.class_unrestricted[class] || !self.refresh_bounds(g) {
            return false;
        }
        self.visit(g.bounds.len());
        let worst = g.bounds.iter().copied().max().unwrap_or(0);
        let cls = &self.classes[class];
        let ctx = ctx!(self);
        // Unrestricted: every CPU sees the same first waiting task.
        let Some(cand) = cls.peek_next_task(&ctx, 0, 0) else {
            return false;
        };
        let Some(key) = cls.global_preempt_key(&ctx, cand) else {
            return false;
        };
        if key < worst {
            return false;
        }
        if cfg!(debug_assertions) {
            for (cpu, t) in g.assign.iter().enumerate() {
                let Some(t) = *t else { continue };
                let k = cls.global_preempt_key_uncounted(&ctx, t);
                debug_assert!(
                    k.is_some_and(|k| k <= g.bounds[cpu] && k <= key),
                    "CPU {cpu}: key {k:?}, bound {}, waiting key {key}",
                    g.bounds[cpu]
                );
            }
        }
        true
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
                    g.stale.insert(cpu);
                    self.settle_view(g, cpu);
                    return Some(cpu);
                }
            }
        }
        if g.bounded && self.none_beaten_by_bound(g) {
            return None;
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
                g.stale.insert(cpu);
                self.settle_view(g, cpu);
                Some(cpu)
            }
            None => None,
        }
    }

    /// `g.view[cpu]` after a step changed `cpu`'s task.
    fn settle_view(&self, g: &mut GlobalMarked, cpu: CpuId) {
        debug_assert_eq!(
            g.in_order,
            self.classes[g.class as usize].preempts_in_order()
        );
        let once = !g.in_order;
        g.view[cpu] = if once && self.picked_now(&g.assign, cpu) {
            None
        } else {
            g.assign[cpu]
        };
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
        let cpu = self.classes[class].global_first_preempted(&ctx!(self), &g.view, &g.unsure)?;
        let Some(cpu) = cpu else {
            return Some(None);
        };
        Some(self.repick(g.class, &mut g.assign, 0, cpu))
    }
}

/// The records a decision's switches may write, with the decision's `view`, to compare
/// the plain walk with `leave`/`arrive` ([`Engine::check_plain_switches`]).
#[cfg(debug_assertions)]
#[derive(Debug)]
struct SwitchRecords {
    records: super::decide::SwitchRecords,
    view: Vec<Option<TaskId>>,
}

#[cfg(debug_assertions)]
impl SwitchRecords {
    /// The records before this decision's switches.
    fn take(e: &Engine, g: &GlobalMarked) -> SwitchRecords {
        let cpus: Vec<CpuId> = g.changed.iter().collect();
        SwitchRecords {
            records: super::decide::SwitchRecords::take(e, cpus, |c| g.assign[c]),
            view: g.view.clone(),
        }
    }

    /// The same records now.
    fn again(&self, e: &Engine, g: &GlobalMarked) -> SwitchRecords {
        SwitchRecords {
            records: self.records.again(e),
            view: g.view.clone(),
        }
    }

    /// Put the records back as they were.
    fn restore(&self, e: &mut Engine, g: &mut GlobalMarked) {
        self.records.restore(e);
        g.view.clone_from(&self.view);
    }
}
