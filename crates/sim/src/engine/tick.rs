//! The scheduler tick (`scheduler_tick`): class tick hooks, CBS depletion at ticks, periodic fair balancing and the vruntime-spread sample.

use super::*;

impl Engine {
    pub(super) fn tick(&mut self) {
        self.flush_woken(); // class hooks may read the queue (`External::tick`)
        let next = self.now + self.tick_ns;
        if next < self.duration {
            self.push(next, EventKind::Tick);
        }
        // Classes ticked in one call (`tick_all`): with no tick cost and no CBS a tick
        // changes no CPU's accounting, so their CPUs are not synced here (each is
        // accounted when next read, as lazy accounting does anyway).
        let mut at_once = [false; 3];
        if self.tick_cost == 0 && !self.cbs {
            for c in ClassId::ALL {
                at_once[c as usize] = self.class_has_tasks[c as usize]
                    && self.classes[c as usize].ticks_all_at_once();
            }
        }
        // Every task is of such a class: no CPU needs a visit.
        let visit_cpus = ClassId::ALL
            .iter()
            .any(|&c| self.class_has_tasks[c as usize] && !at_once[c as usize]);
        if visit_cpus {
            self.tick_each_cpu(&at_once);
        }
        for c in ClassId::ALL {
            if at_once[c as usize] {
                self.tick_class_at_once(c);
            }
        }
        if self.has_fair() {
            self.fair_tick();
        }
        self.timer_softirq();
    }

    /// `task_tick` on every CPU running a runnable task of a class not ticked at once.
    fn tick_each_cpu(&mut self, at_once: &[bool; 3]) {
        self.visit(self.cpus.len());
        let any_at_once = at_once.contains(&true);
        for cpu in 0..self.cpus.len() {
            let Some(t) = self.cpus[cpu].curr else {
                continue;
            };
            if !self.tasks[t].runnable || (any_at_once && at_once[self.tasks[t].class as usize]) {
                continue;
            }
            self.sync(cpu);
            self.cpus[cpu].overhead_left += self.tick_cost;
            if self.tick_cost > 0 {
                self.force_rearm(cpu); // the completion moved
            }
            if self.budget_exhausted(t) {
                self.mark_dirty(cpu);
                self.throttle(t);
                continue;
            }
            let rq = self.tasks[t].rq;
            let class = self.tasks[t].class as usize;
            if self.classes[class].task_tick(&ctx!(self), rq, cpu, t) {
                self.mark_preempted(cpu);
            }
        }
    }

    /// [`crate::class::SchedClass::tick_all`] for class `c`: the CPUs it reschedules
    /// are marked as `task_tick`'s answer would mark them (a mark reads no accounting;
    /// the switch that follows syncs the CPU).
    fn tick_class_at_once(&mut self, c: ClassId) {
        // The engine's scratch list, not a new one: most ticks reschedule a CPU, and a
        // new list was an allocation per tick.
        let mut resched = std::mem::take(&mut self.scratch_cpus);
        resched.clear();
        self.classes[c as usize].tick_all(&ctx!(self), &mut resched);
        for &cpu in &resched {
            debug_assert!(
                self.cpus[cpu]
                    .curr
                    .is_some_and(|t| self.tasks[t].runnable && self.tasks[t].class == c),
                "tick_all rescheduled CPU {cpu}, which runs no runnable task of its class"
            );
            self.mark_preempted(cpu);
        }
        self.scratch_cpus = resched;
    }

    /// Periodic fair load balancing (every `cpus` ms on an idle CPU, 16 times less often
    /// on a busy one: `balance_interval` = domain weight, `busy_factor` = 16), and the
    /// vruntime-spread sample.
    pub(super) fn fair_tick(&mut self) {
        self.visit(self.cpus.len());
        let ncpu = self.cpus.len() as u64;
        for cpu in 0..self.cpus.len() {
            if self.now < self.next_balance[cpu] {
                continue;
            }
            let busy = self.cpus[cpu].curr.is_some();
            let interval = ncpu * schedlab_model::time::MS * if busy { 16 } else { 1 };
            self.next_balance[cpu] = self.now + interval;
            if self.fair_balance(cpu, false, &[]) {
                self.mark_dirty(cpu);
            }
        }
        let nrq = if self.class_global[ClassId::Fair as usize] {
            1
        } else {
            self.cpus.len()
        };
        let fair = &self.classes[ClassId::Fair as usize];
        let ctx = ctx!(self);
        for rq in 0..nrq {
            let (mut lo, mut hi) = (i64::MAX, i64::MIN);
            for &i in &self.fair.members[rq] {
                if let Some(v) = fair.vruntime(&ctx, i) {
                    lo = lo.min(v);
                    hi = hi.max(v);
                }
            }
            if hi >= lo {
                self.vruntime_spread = self.vruntime_spread.max(hi - lo);
            }
        }
    }
}
