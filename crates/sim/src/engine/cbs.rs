//! SCHED_DEADLINE's constant bandwidth server: the wake-up rule, throttling at budget exhaustion, replenishment.

use super::*;

impl Engine {
    pub(super) fn budget_exhausted(&self, t: TaskId) -> bool {
        let ts = &self.tasks[t];
        self.cbs && ts.class == ClassId::Dl && ts.dl.runtime <= 0
    }

    /// CBS rule 2 at wake-up (`update_dl_entity`): start a new reservation period unless
    /// the current one still has room for the remaining budget.
    #[inline]
    pub(super) fn cbs_wakeup_rule(&mut self, t: TaskId) {
        // Inlined to its test (a call per release otherwise): most runs have no CBS.
        if self.cbs && self.tasks[t].class == ClassId::Dl {
            self.cbs_wakeup_rule_now(t);
        }
    }

    fn cbs_wakeup_rule_now(&mut self, t: TaskId) {
        if let Some(c) = self.tasks[t].on_cpu {
            self.sync(c); // its runtime is read below
        }
        let now = self.now;
        let ts = &mut self.tasks[t];
        let (d, q) = (ts.dl.deadline, ts.dl.runtime);
        let big_d = ts.rel_deadline as u128;
        let big_q = ts.dl.budget as u128;
        let overflow = q > 0 && d > now && (d - now) as u128 * big_q < big_d * q as u128;
        // `d <= now` where the kernel tests `d < now`: in the model a periodic release lands
        // exactly on the old deadline, which real clocks never do; the reservation period
        // is over then, so a new one starts (as for a never-run reservation, d = 0).
        if d <= now || overflow {
            let implicit = ts.rel_deadline == ts.period;
            if !implicit && d > now {
                // Revised wake-up rule for constrained deadlines: keep d, scale the budget.
                ts.dl.runtime = ((big_q * (d - now) as u128) / big_d) as i64;
            } else {
                ts.dl.deadline = now.saturating_add(ts.rel_deadline);
                ts.dl.runtime = ts.dl.budget as i64;
            }
        }
    }

    /// Budget exhausted while work remains: throttle until the next period.
    pub(super) fn throttle(&mut self, t: TaskId) {
        self.fair_untrack(t);
        let ts = &mut self.tasks[t];
        ts.stats.throttles += 1;
        let was_queued = ts.runnable && ts.on_cpu.is_none();
        ts.runnable = false;
        self.note_busy_task(t);
        let ts = &mut self.tasks[t];
        let rq = ts.rq;
        let class = ts.class as usize;
        if was_queued {
            self.classes[class].dequeue_task(&ctx!(self), rq, t);
        } else {
            self.classes[class].task_stopped(&ctx!(self), rq, t);
        }
        self.arm_replenish(t);
    }

    pub(super) fn arm_replenish(&mut self, t: TaskId) {
        let ts = &mut self.tasks[t];
        ts.dl.throttled = true;
        // The replenishment timer fires at the start of the next period (`dl_next_period`).
        let at = (ts.dl.deadline + ts.period.min(u64::MAX / 4)).saturating_sub(ts.rel_deadline);
        let at = at.max(self.now);
        self.push(at, EventKind::Replenish { task: t as u32 });
    }

    /// `replenish_dl_entity`, then wake the task if it has work.
    pub(super) fn replenish(&mut self, t: TaskId) {
        let now = self.now;
        let ts = &mut self.tasks[t];
        if !ts.dl.throttled {
            return;
        }
        while ts.dl.runtime <= 0 {
            ts.dl.deadline += ts.period;
            ts.dl.runtime += ts.dl.budget as i64;
        }
        if ts.dl.deadline < now {
            ts.dl.deadline = now.saturating_add(ts.rel_deadline);
            ts.dl.runtime = ts.dl.budget as i64;
        }
        ts.dl.throttled = false;
        // A task asleep until its wake-up is only refilled (`dl_task_timer` for a task
        // that is not queued); the wake-up enqueues it.
        if ts.job.is_some() && !self.wake_pending(t) {
            self.wakeup(t, EnqueueReason::Wakeup);
        }
    }
}
