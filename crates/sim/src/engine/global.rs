//! Global placement: the m highest-priority runnable tasks run (classes with one queue for all CPUs).

use super::*;

impl Engine {
    /// Global placement: keep the highest-priority runnable tasks on the CPUs.
    /// Used when some class has one queue for all CPUs (global placement, BFS); classes
    /// with per-CPU queues take part CPU by CPU (only `dirty` CPUs reconsider them).
    pub(super) fn schedule_global(&mut self) {
        self.invocations += 1;
        if let Some(mut g) = self.global_marked.take() {
            self.schedule_global_marked(&mut g);
            self.global_marked = Some(g);
            return;
        }
        self.visit(3 * self.cpus.len()); // reset, collect, switch
        let ncpu = self.cpus.len();
        self.cpus.iter_mut().for_each(|c| c.dirty = false);
        self.marked.clear(); // every CPU's flags are consumed below
        let mut assign = std::mem::take(&mut self.scratch_assign);
        assign.clear();
        for cpu in 0..ncpu {
            let curr = self.cpus[cpu].curr.filter(|&t| self.tasks[t].runnable);
            let mut resched = std::mem::take(&mut self.cpus[cpu].need_resched);
            if let Some(t) = curr.filter(|_| !resched) {
                let class = self.tasks[t].class as usize;
                resched = self.classes[class].must_yield(&ctx!(self), t);
            }
            match curr {
                Some(t) if resched || !self.keeps_cpu(cpu, t) => {
                    self.put_prev(t);
                    assign.push(None);
                }
                other => assign.push(other),
            }
        }
        self.settle(|e| e.global_step(&mut assign));
        // All departures before all arrivals, so a task moving between CPUs is seen
        // leaving one before it starts on the other.
        for (cpu, &next) in assign.iter().enumerate() {
            if self.cpus[cpu].curr != next {
                self.switch_out(cpu, next);
            }
        }
        for (cpu, &next) in assign.iter().enumerate() {
            if self.cpus[cpu].curr != next {
                self.switch_in(cpu, next);
            }
        }
        self.scratch_assign = assign;
    }

    /// Take a global decision's steps (`step`: whether it changed a CPU's task) until one
    /// changes nothing. Every change strictly raises the priority on one CPU, or (a class
    /// whose rules are not an order) settles a CPU for this instant ([`Engine::picked_now`]),
    /// so the steps end by themselves; the bound of 4·m·(n + 1) steps is a safety net.
    /// Reaching it means a class's preemption test and its pick disagree (each step undoes
    /// another): the invariant checker reports it rather than let the bound decide.
    pub(super) fn settle(&mut self, mut step: impl FnMut(&mut Self) -> bool) {
        let bound = self.settle_bound();
        let settled = (0..bound).any(|_| !step(self));
        if !settled {
            self.report_unsettled(&format!(
                "the global decision did not settle in {bound} steps (a class's wake-up \
                 preemption test and its pick disagree)"
            ));
        }
    }

    /// The safety bound of an instant's decision steps or push rounds: 4·m·(n + 1).
    pub(super) fn settle_bound(&self) -> usize {
        4 * self.cpus.len() * (self.tasks.len() + 1)
    }

    /// Steps that should end by themselves reached [`Engine::settle_bound`], so the bound
    /// chose the outcome: under the invariant checker, a violation (`what` says which).
    pub(super) fn report_unsettled(&mut self, what: &str) {
        if self.check && self.violation.is_none() {
            self.violation = Some(format!("at {} ns: {what}", self.now));
        }
    }

    /// One improvement of the global assignment; false when nothing changes.
    pub(super) fn global_step(&mut self, assign: &mut [Option<TaskId>]) -> bool {
        // Fill CPUs that are idle or run a lower class. A real-time class with nothing
        // waiting has nothing to give; the fair class is asked whenever the workload has
        // fair tasks (its pick may also settle tasks it keeps queued, e.g. EEVDF's delayed
        // dequeues).
        let offers = |s: &Self, class: ClassId| match class {
            ClassId::Fair => s.has_fair(),
            _ => s.classes[class as usize].nr_waiting() > 0,
        };
        if ClassId::ALL.iter().any(|&c| offers(self, c)) {
            for cpu in 0..assign.len() {
                self.visit(1);
                let cur = assign[cpu].map(|t| self.tasks[t].class);
                for class in ClassId::ALL {
                    if cur.is_some_and(|c| c <= class) {
                        break;
                    }
                    if !offers(self, class) {
                        continue;
                    }
                    let rq = self.rq_of(class, cpu);
                    let picked = self.classes[class as usize].pick_next_task(&ctx!(self), rq, cpu);
                    if let Some(n) = picked {
                        if class == ClassId::Fair {
                            self.fair_decisions += 1;
                        }
                        if let Some(old) = assign[cpu].replace(n) {
                            self.put_prev(old);
                        }
                        return true;
                    }
                }
                if assign[cpu].is_none() && self.fair_balance(cpu, true, assign) {
                    return true;
                }
            }
        }
        let mut running = std::mem::take(&mut self.scratch_cpus);
        let found = self.global_preempt(assign, &mut running);
        self.scratch_cpus = running;
        found.is_some()
    }

    /// Within each class: let the best waiting task take the CPU of the lowest-priority
    /// running task it beats. Returns the CPU whose task changed.
    pub(super) fn global_preempt(
        &mut self,
        assign: &mut [Option<TaskId>],
        running: &mut Vec<CpuId>,
    ) -> Option<CpuId> {
        for class in ClassId::ALL {
            // Nothing waiting in a real-time class: no task of it can take a CPU.
            if class != ClassId::Fair && self.classes[class as usize].nr_waiting() == 0 {
                continue;
            }
            if class == ClassId::Fair && !self.has_fair() {
                continue;
            }
            if !self.class_global[class as usize] {
                // Per-CPU queue: the usual wake-up preemption test on touched CPUs.
                let mut next = 0;
                while let Some(cpu) = self.touched.next_from(next) {
                    next = cpu + 1;
                    self.visit(1);
                    let Some(curr) = assign[cpu].filter(|&t| self.tasks[t].class == class) else {
                        continue;
                    };
                    // The wake-up test is asked of the task that was running when the
                    // instant's wake-ups came (`wakeup_preempt`); a task picked in this
                    // decision was the pick's own answer. Asking again is not the
                    // kernel's, and a class whose test and pick differ on ties (EEVDF:
                    // equal deadlines) would swap tasks until the loop's bound.
                    if self.picked_now(assign, cpu) {
                        continue;
                    }
                    let ctx = ctx!(self);
                    let cls = &self.classes[class as usize];
                    if let Some(cand) = cls.peek_next_task(&ctx, cpu, cpu) {
                        if cls.wakeup_preempt(&ctx, curr, cand) {
                            return self.repick(class, assign, cpu, cpu);
                        }
                    }
                }
                continue;
            }
            let by_key = self.lowest_beaten_by_key(class, assign);
            // Debug builds check the shortcut against the sort it replaces, so every test
            // run checks that the key order picks the same CPU.
            let found = match by_key {
                Some(found) if !cfg!(debug_assertions) => found,
                _ => {
                    let sorted = self.lowest_beaten_by_sort(class, assign, running);
                    if let Some(found) = by_key {
                        debug_assert_eq!(
                            found,
                            sorted,
                            "{}: the key order and the sort disagree",
                            self.classes[class as usize].name()
                        );
                    }
                    sorted
                }
            };
            if let Some(cpu) = found {
                return self.repick(class, assign, 0, cpu);
            }
        }
        None
    }

    /// Whether `cpu`'s task in `assign` was picked in this decision (the CPUs switch at
    /// its end, so `curr` is still the task it ran before). Such a CPU has decided for
    /// this instant, as a CPU reschedules once: a per-CPU class's wake-up test is not
    /// asked of its task, nor does a waiting task of a class whose rules are not an
    /// order ([`SchedClass::preempts_in_order`]) preempt it.
    ///
    /// [`SchedClass::preempts_in_order`]: crate::class::SchedClass::preempts_in_order
    pub(super) fn picked_now(&self, assign: &[Option<TaskId>], cpu: CpuId) -> bool {
        assign[cpu] != self.cpus[cpu].curr
    }

    /// A preemption on `cpu`: its task in `assign` goes back to `class`'s queue and the
    /// CPU gets the class's pick from run queue `rq`. `Some(cpu)` if that changed its
    /// task. A class whose pick, once its running task is put back, is that task again
    /// (ILLF: the candidate it offered beats the task as running, not once it waits)
    /// changes nothing, and the same step would repeat until the loop's safety bound:
    /// 4·m·(n + 1) steps of nothing at such an instant (every instant of ILLF's release
    /// at 0 on Table 1).
    pub(super) fn repick(
        &mut self,
        class: ClassId,
        assign: &mut [Option<TaskId>],
        rq: crate::state::RqId,
        cpu: CpuId,
    ) -> Option<CpuId> {
        let curr = assign[cpu].expect("a preempted CPU runs a task");
        self.put_prev(curr);
        assign[cpu] = self.classes[class as usize].pick_next_task(&ctx!(self), rq, cpu);
        (assign[cpu] != Some(curr)).then_some(cpu)
    }

    /// The CPU whose running task of `class` the waiting task it sees first would
    /// preempt: the running CPUs sorted worst-first with `wakeup_preempt`, then the first
    /// one beaten. `running` is scratch space.
    fn lowest_beaten_by_sort(
        &self,
        class: ClassId,
        assign: &[Option<TaskId>],
        running: &mut Vec<CpuId>,
    ) -> Option<CpuId> {
        running.clear();
        let cls = &self.classes[class as usize];
        let once = !cls.preempts_in_order();
        running.extend((0..assign.len()).filter(|&c| {
            assign[c].is_some_and(|t| self.tasks[t].class == class)
                && !(once && self.picked_now(assign, c))
        }));
        let ctx = ctx!(self);
        // Worst first: a before b if b's task would preempt a's. A class whose running
        // tasks never preempt one another leaves them in CPU order (checked in debug
        // builds, so every test run checks the claim).
        let sort = cls.running_tasks_preempt() || cfg!(debug_assertions);
        for i in (1..running.len()).filter(|_| sort) {
            let mut j = i;
            while j > 0
                && cls.wakeup_preempt(
                    &ctx,
                    assign[running[j]].unwrap(),
                    assign[running[j - 1]].unwrap(),
                )
            {
                debug_assert!(
                    cls.running_tasks_preempt(),
                    "{}: a running task preempts another",
                    cls.name()
                );
                running.swap(j, j - 1);
                j -= 1;
            }
        }
        running.iter().copied().find(|&cpu| {
            let curr = assign[cpu].unwrap();
            cls.peek_next_task(&ctx, 0, cpu)
                .is_some_and(|cand| cls.wakeup_preempt(&ctx, curr, cand))
        })
    }

    /// Global placement's preemption for a class with a key order and no affinity
    /// restrictions: the waiting task all CPUs see first takes the CPU of the running task
    /// with the largest key (the lowest-numbered of equals, or the highest where the class
    /// says so) if it beats it — what sorting
    /// the running CPUs worst-first and scanning them finds, in one pass. `None` when the
    /// shortcut does not apply (the caller sorts); `Some(None)` when nothing preempts.
    fn lowest_beaten_by_key(
        &self,
        class: ClassId,
        assign: &[Option<TaskId>],
    ) -> Option<Option<CpuId>> {
        if !self.class_unrestricted[class as usize] {
            return None;
        }
        let cls = &self.classes[class as usize];
        let ctx = ctx!(self);
        let mut worst: Option<(u64, CpuId)> = None;
        for (cpu, slot) in assign.iter().enumerate() {
            self.visit(1);
            let Some(t) = slot.filter(|&t| self.tasks[t].class == class) else {
                continue;
            };
            let key = cls.global_preempt_key(&ctx, t)?;
            if worst.is_none_or(|(k, _)| key > k || (key == k && cls.global_ties_to_last_cpu(key)))
            {
                worst = Some((key, cpu));
            }
        }
        let Some((key, cpu)) = worst else {
            return Some(None);
        };
        let cand = cls.peek_next_task(&ctx, 0, cpu)?;
        Some((cls.global_preempt_key(&ctx, cand)? < key).then_some(cpu))
    }

    /// Whether `t` keeps `cpu` by its class's own plan ([`SchedClass::keeps_cpu`]; always
    /// for classes that do not plan their running set).
    fn keeps_cpu(&mut self, cpu: CpuId, t: TaskId) -> bool {
        let class = self.tasks[t].class as usize;
        if !self.classes[class].decides_running() {
            return true;
        }
        self.classes[class].keeps_cpu(&ctx!(self), cpu, t)
    }
}
