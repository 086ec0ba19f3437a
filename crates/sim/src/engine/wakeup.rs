//! Wake-up placement (`try_to_wake_up` + `select_task_rq_*`): which run queue a waking task joins, and which CPUs must then decide.

use super::*;

impl Engine {
    /// Make `t` runnable and queue it (`try_to_wake_up` + `enqueue_task`).
    pub(super) fn wakeup(&mut self, t: TaskId, why: EnqueueReason) {
        self.fair_untrack(t);
        self.tasks[t].runnable = true;
        self.note_busy_task(t);
        self.fair_track(t);
        if let Some(cpu) = self.tasks[t].on_cpu {
            self.sync(cpu);
            // Its previous job ended at this very instant and it is still current: like a
            // thread whose next release is already due, it goes on without sleeping.
            self.mark_dirty(cpu);
            let (rq, class) = (self.tasks[t].rq, self.tasks[t].class as usize);
            self.classes[class].job_changed(&ctx!(self), rq, t);
            self.note_dispatch(t);
            return;
        }
        if let Some(log) = self.log.as_mut() {
            log.push(SimEvent::Wakeup {
                time: self.now,
                task: t,
            });
        }
        let class = self.tasks[t].class;
        let prev = self.tasks[t].last_cpu;
        let chosen = (!self.class_global[class as usize])
            .then(|| self.classes[class as usize].select_task_rq(&ctx!(self), t, prev))
            .flatten()
            .filter(|&c| c < self.cpus.len() && self.tasks[t].may_run_on(c));
        let rq = if self.class_global[class as usize] {
            0
        } else if let Some(cpu) = chosen {
            cpu
        } else if class == ClassId::Fair {
            self.select_task_rq_fair(t)
        } else {
            match self.placement {
                Placement::Partitioned => self.partition[t].unwrap_or(self.tasks[t].last_cpu),
                _ => self.select_task_rq(t),
            }
        };
        self.fair_untrack(t);
        self.tasks[t].rq = rq;
        self.fair_track(t);
        if !self.wake_direct(t, why) {
            self.classes[class as usize].enqueue_task(&ctx!(self), rq, t, why);
        }
        self.poke(class, rq);
    }

    /// Mark the CPUs served by run queue `rq` of `class` as needing a decision.
    pub(super) fn poke(&mut self, class: ClassId, rq: usize) {
        if self.class_global[class as usize] {
            // Every CPU is touched; said once instead of marking each (see `schedule`).
            self.global_poked = true;
            self.visit(self.cpus.len());
        } else {
            self.mark_dirty(rq);
        }
    }

    /// The run queue of `class` that serves `cpu`.
    pub(super) fn rq_of(&self, class: ClassId, cpu: CpuId) -> usize {
        if self.class_global[class as usize] {
            0
        } else {
            cpu
        }
    }

    /// `select_task_rq_fair`: the last CPU if it is idle, else an idle CPU (all CPUs
    /// share one cache in this model, so `select_idle_sibling` may pick any), else the
    /// one with the least fair load, the last CPU on ties.
    pub(super) fn select_task_rq_fair(&self, t: TaskId) -> CpuId {
        self.visit(self.cpus.len());
        let ts = &self.tasks[t];
        let idle = |c: CpuId| {
            self.cpus[c].curr.is_none_or(|x| !self.tasks[x].runnable) && self.rq_load(c) == 0
        };
        let prev = if ts.may_run_on(ts.last_cpu) {
            ts.last_cpu
        } else {
            ts.first_allowed()
        };
        if idle(prev) {
            return prev;
        }
        let allowed = (0..self.cpus.len()).filter(|&c| ts.may_run_on(c));
        if let Some(c) = allowed.clone().find(|&c| idle(c)) {
            return c;
        }
        allowed
            .min_by_key(|&c| (self.rq_load(c), c != prev, c))
            .unwrap_or(prev)
    }

    /// `select_task_rq_dl` / `select_task_rq_rt`: stay on the last CPU unless its current
    /// task would not be preempted by `t` and a better CPU exists.
    pub(super) fn select_task_rq(&self, t: TaskId) -> CpuId {
        let ts = &self.tasks[t];
        let prev = if ts.may_run_on(ts.last_cpu) {
            ts.last_cpu
        } else {
            ts.first_allowed()
        };
        if ts.nr_allowed < 2 {
            return prev;
        }
        let Some(cur) = self.cpus[prev].curr.filter(|&x| self.tasks[x].runnable) else {
            return prev;
        };
        let cc = self.tasks[cur].class;
        let ctx = ctx!(self);
        let search = cc < ts.class
            || (cc == ts.class
                && (self.tasks[cur].nr_allowed < 2
                    || !self.classes[cc as usize].wakeup_preempt(&ctx, cur, t)));
        if search {
            if let Some(target) = self.find_later_cpu(t, None) {
                return target;
            }
        }
        prev
    }

    /// Is `cpu` free for a task of `class`: nothing of that class or higher running or
    /// queued there (the kernel's cpudl `free_cpus` / lowest cpupri)?
    pub(super) fn cpu_free_for(&self, cpu: CpuId, class: ClassId) -> bool {
        self.cpu_free_for_counted(cpu, class, true)
    }

    /// [`Engine::cpu_free_for`] without counting hook calls (debug checks).
    pub(super) fn cpu_free_for_uncounted(&self, cpu: CpuId, class: ClassId) -> bool {
        self.cpu_free_for_counted(cpu, class, false)
    }

    fn cpu_free_for_counted(&self, cpu: CpuId, class: ClassId, counted: bool) -> bool {
        let ctx = ctx!(self);
        let nothing_waits = ClassId::ALL.iter().filter(|&&c| c <= class).all(|&c| {
            let cls = &self.classes[c as usize];
            if self.class_global[c as usize] {
                if counted {
                    cls.peek_next_task(&ctx, cpu, cpu).is_none()
                } else {
                    cls.peek_uncounted(&ctx, cpu, cpu).is_none()
                }
            } else {
                cls.waiting_on(cpu) == 0 // what peek_next_task(cpu, cpu) would find
            }
        });
        nothing_waits
            && self.cpus[cpu]
                .curr
                .is_none_or(|t| !self.tasks[t].runnable || self.tasks[t].class > class)
    }

    /// The lowest CPU `t` may run on (other than `exclude`) that is free for `class`.
    /// A CPU running a runnable task of `class` or a higher class is not free, so when
    /// no lower class has tasks only the CPUs out of `busy` are looked at (not every CPU
    /// when none is free); debug builds check the answer against the scan of all CPUs.
    fn first_free_for(&self, t: TaskId, class: ClassId, exclude: Option<CpuId>) -> Option<CpuId> {
        let ts = &self.tasks[t];
        let ncpu = self.cpus.len();
        let ok = |c: CpuId| ts.may_run_on(c) && Some(c) != exclude && self.cpu_free_for(c, class);
        let lower_has_tasks = ClassId::ALL
            .iter()
            .any(|&c| c > class && self.class_has_tasks[c as usize]);
        if lower_has_tasks || !self.track_busy {
            return (0..ncpu).find(|&c| ok(c));
        }
        let mut at = 0;
        let mut found = None;
        while let Some(c) = marks::CpuMask::next_in_none(&[&self.busy], at, ncpu) {
            if ok(c) {
                found = Some(c);
                break;
            }
            at = c + 1;
        }
        debug_assert_eq!(found, (0..ncpu).find(|&c| ok(c)), "the busy mask is stale");
        found
    }

    /// `find_later_rq` / `find_lowest_rq`: a CPU where `t` would run at once — a free one
    /// (its last CPU first, then the lowest index), else the one running the
    /// lowest-priority task of `t`'s class that `t` beats.
    pub(super) fn find_later_cpu(&self, t: TaskId, exclude: Option<CpuId>) -> Option<CpuId> {
        self.visit(2 * self.cpus.len());
        let ts = &self.tasks[t];
        let class = ts.class;
        let last = ts.last_cpu;
        if ts.may_run_on(last) && Some(last) != exclude && self.cpu_free_for(last, class) {
            return Some(last);
        }
        if let Some(c) = self.first_free_for(t, class, exclude) {
            return Some(c);
        }
        let cls = &self.classes[class as usize];
        let ctx = ctx!(self);
        // A task the class knows to preempt no running task (ILLF: positive laxity and
        // big, so neither rule 3 nor Algorithm 2 lets it in) needs no tournament.
        if cls.preempts_none_remote(&ctx, t) {
            if cfg!(debug_assertions) {
                let asked = cls.uncounted(|| self.later_by_tournament(t, exclude));
                debug_assert_eq!(asked, None, "task {t} preempts a running task after all");
            }
            return None;
        }
        self.later_by_tournament(t, exclude)
    }

    /// The tournament of [`Engine::find_later_cpu`] over every CPU `t` may run on (other
    /// than `exclude`): the lowest-priority running task of `t`'s class that `t` beats.
    fn later_by_tournament(&self, t: TaskId, exclude: Option<CpuId>) -> Option<CpuId> {
        let ts = &self.tasks[t];
        let class = ts.class;
        let candidates =
            || (0..self.cpus.len()).filter(|&c| ts.may_run_on(c) && Some(c) != exclude);
        let cls = &self.classes[class as usize];
        let ctx = ctx!(self);
        let mut worst: Option<(CpuId, TaskId)> = None;
        for c in candidates() {
            let Some(cur) = self.cpus[c].curr.filter(|&x| self.tasks[x].runnable) else {
                continue;
            };
            if self.tasks[cur].class != class || !cls.wakeup_preempt(&ctx, cur, t) {
                continue;
            }
            match worst {
                Some((_, w)) if !cls.wakeup_preempt(&ctx, cur, w) => {}
                _ => worst = Some((c, cur)),
            }
        }
        worst.map(|(c, _)| c)
    }
}
