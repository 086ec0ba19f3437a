//! Per-CPU decisions (`__schedule`): preemption test, `pick_next_task` over the class stack, and the two halves of a context switch.

use super::*;

impl Engine {
    /// Decide on every marked CPU, in index order (as if each CPU checked its
    /// `need_resched` on return from the instant's interrupts), then push and pull.
    pub(super) fn schedule(&mut self) {
        if self.marked.is_empty() && !self.global_poked {
            return;
        }
        if let Some(mut g) = self.global_fast.take() {
            self.schedule_global_fast(&mut g);
            self.global_fast = Some(g);
            return; // global placement: no push or pull
        }
        if self.global_marked.is_some() {
            // The marked decision (one class, global, `global` placement) reads no
            // `touched` (below): only the set's size is counted, and the set is not
            // built (a fill of every CPU at each release on the global queue).
            debug_assert!(self.touched.is_empty() && self.placement == Placement::Global);
            let poked = std::mem::take(&mut self.global_poked);
            self.visit(if poked {
                self.cpus.len()
            } else {
                self.marked.len()
            });
            self.schedule_global();
            return;
        }
        self.schedule_touched();
    }

    /// [`Engine::schedule`] for the decisions that read `touched`: a call of its own, so
    /// that global EDF's path through `schedule` is compiled as it was.
    #[inline(never)]
    fn schedule_touched(&mut self) {
        // `touched`: the CPUs marked when the instant's decisions begin (all of them
        // after a wake-up on a queue shared by all CPUs), read by the pushes and by the
        // preemption test of per-CPU queues in a global decision.
        if std::mem::take(&mut self.global_poked) {
            self.touched.fill(self.cpus.len());
        } else {
            self.touched.copy_from(&self.marked);
        }
        self.visit(self.touched.len());
        if self.class_global.iter().any(|&g| g) {
            self.schedule_global();
        } else {
            // A CPU marked while this runs is decided now if it comes later in index
            // order, at the next instant otherwise.
            let mut cpu = 0;
            while let Some(c) = self.marked.next_from(cpu) {
                self.visit(1);
                self.schedule_local(c);
                cpu = c + 1;
            }
        }
        if self.placement == Placement::Linux {
            // A push may preempt a task of a class with one queue for all CPUs (BFS): it
            // goes back to that queue, where an idle CPU must see it at once, as BFS
            // reschedules an idle CPU for a preempted task. Only then is the decision
            // taken again (a fresh global pass would also let per-CPU classes re-decide,
            // and ILLF's put-back rule then bounces tasks between CPUs); it repeats while
            // pushes leave such a CPU (each move raises a CPU's priority, so this ends).
            for _ in 0..=self.cpus.len() {
                if !self.push_tasks() || !self.idle_beside_global_work() {
                    break;
                }
                self.global_poked = true;
                self.schedule_global();
            }
        }
        self.touched.clear();
    }

    /// Whether a CPU idles (and takes no decision later this instant) while a class with
    /// one queue for all CPUs has a task waiting that may run there.
    fn idle_beside_global_work(&self) -> bool {
        // Without such a class no CPU qualifies: skip the pass, which reads the record
        // of every CPU's task (1,024 cache misses per push round at 100,000 tasks).
        if !self.class_global.iter().any(|&g| g) {
            return false;
        }
        (0..self.cpus.len()).any(|cpu| {
            self.cpus[cpu].curr.is_none_or(|t| !self.tasks[t].runnable)
                && !self.kernel.blocked(cpu, self.now)
                && ClassId::ALL
                    .into_iter()
                    .any(|c| self.class_global[c as usize] && self.waiting_for(c, cpu))
        })
    }

    /// Does class `class` (or a higher one) have a task waiting on `rq` that should take
    /// `cpu` from `curr`?
    pub(super) fn should_preempt(&self, rq: usize, cpu: CpuId, curr: TaskId) -> bool {
        let cc = self.tasks[curr].class;
        let ctx = ctx!(self);
        for class in ClassId::ALL {
            if class > cc {
                break;
            }
            let rq = if self.class_global[class as usize] {
                0
            } else {
                rq
            };
            if let Some(cand) = self.classes[class as usize].peek_next_task(&ctx, rq, cpu) {
                return class < cc || self.classes[class as usize].wakeup_preempt(&ctx, curr, cand);
            }
        }
        false
    }

    /// `pick_next_task`: ask each class in order; a CPU about to go idle first tries to
    /// pull fair work from a busier CPU (`newidle_balance`).
    pub(super) fn pick(&mut self, cpu: CpuId) -> Option<TaskId> {
        for attempt in 0..2 {
            for class in ClassId::ALL {
                let rq = self.rq_of(class, cpu);
                if let Some(t) = self.classes[class as usize].pick_next_task(&ctx!(self), rq, cpu) {
                    if class == ClassId::Fair {
                        self.fair_decisions += 1;
                    }
                    return Some(t);
                }
            }
            if attempt == 0 && !self.fair_balance(cpu, true, &[]) {
                break;
            }
        }
        None
    }

    pub(super) fn put_prev(&mut self, t: TaskId) {
        let rq = self.tasks[t].rq;
        let class = self.tasks[t].class as usize;
        self.classes[class].put_prev_task(&ctx!(self), rq, t);
    }

    /// Per-CPU run queue: `__schedule()` on one CPU.
    pub(super) fn schedule_local(&mut self, cpu: CpuId) {
        if self.kernel.blocked(cpu, self.now) {
            return; // decided when its kernel work ends (KernelEnd)
        }
        if !std::mem::take(&mut self.cpus[cpu].dirty) {
            self.unmark_if_clean(cpu);
            return;
        }
        self.invocations += 1;
        let curr = self.cpus[cpu].curr.filter(|&t| self.tasks[t].runnable);
        let resched = std::mem::take(&mut self.cpus[cpu].need_resched);
        self.unmark_if_clean(cpu);
        let need = match curr {
            None => true,
            Some(t) => resched || self.should_preempt(cpu, cpu, t),
        };
        if !need {
            return;
        }
        if let Some(t) = curr {
            self.put_prev(t);
        }
        let next = self.pick(cpu);
        self.switch_cpu(cpu, next);
    }

    /// Both halves of a context switch on `cpu` in one call, for a decision where no
    /// other CPU's task leaves or arrives: [`Engine::switch_out`] then
    /// [`Engine::switch_in`], the same steps, with one test and one call.
    pub(super) fn switch_cpu(&mut self, cpu: CpuId, next: Option<TaskId>) {
        if self.cpus[cpu].curr == next {
            return;
        }
        self.leave(cpu, next);
        self.arrive(cpu, next);
    }

    /// First half of a context switch: the previous task leaves `cpu`.
    pub(super) fn switch_out(&mut self, cpu: CpuId, next: Option<TaskId>) {
        if self.cpus[cpu].curr == next {
            return;
        }
        self.leave(cpu, next);
    }

    /// [`Engine::switch_out`]'s work, when the task changes.
    #[inline(always)]
    pub(super) fn leave(&mut self, cpu: CpuId, next: Option<TaskId>) {
        let prev = self.cpus[cpu].curr;
        self.sync(cpu);
        let now = self.now;
        if let Some(log) = self.log.as_mut() {
            let prev_runnable = prev.is_some_and(|p| self.tasks[p].runnable);
            log.push(SimEvent::Switch {
                time: now,
                cpu,
                prev,
                next,
                prev_runnable,
            });
        }
        let c = &mut self.cpus[cpu];
        c.switches += 1;
        if prev.is_none() || next.is_none() {
            c.idle_switches += 1;
        }
        c.overhead_left = 0;
        let since = c.since;
        c.since = now;
        let Some(p) = prev else { return };
        // The fair counters read `on_cpu`, none of the fields set first here: those are
        // set with the record indexed once (a possible call in between, as the counters'
        // is, makes the compiler index it again).
        let fair = self.has_fair();
        let ts = &mut self.tasks[p];
        ts.last_ran = now;
        ts.last_cpu = cpu;
        // A preemption interrupts a job that has started; a task whose next job was
        // released at the instant its previous one completed is not preempted.
        if ts.runnable && ts.job.is_some_and(|j| j.remaining < j.exec) {
            ts.stats.preemptions += 1;
        }
        if let (Some(tr), Some(j)) = (self.trace.as_mut(), ts.job) {
            if now > since {
                tr.push(Segment {
                    cpu,
                    task: p,
                    job: j.seq,
                    start: since,
                    end: now,
                });
            }
        }
        if fair {
            self.fair_untrack(p);
            let ts = &mut self.tasks[p];
            if ts.on_cpu == Some(cpu) {
                ts.on_cpu = None;
            }
            self.fair_track(p);
        } else if ts.on_cpu == Some(cpu) {
            ts.on_cpu = None;
        }
    }

    /// Second half of a context switch: `next` starts on `cpu`, paying the switch and,
    /// when its job resumes on another CPU, the migration cost, or when it resumes here
    /// after another task ran, the preemption cost. Always after [`Engine::switch_out`]
    /// on the same CPU at the same instant (every caller switches all departures out
    /// first), which accounted the CPU.
    pub(super) fn switch_in(&mut self, cpu: CpuId, next: Option<TaskId>) {
        if self.cpus[cpu].curr == next {
            return;
        }
        self.arrive(cpu, next);
    }

    /// [`Engine::switch_in`]'s work, when the task changes.
    #[inline(always)]
    pub(super) fn arrive(&mut self, cpu: CpuId, next: Option<TaskId>) {
        // Accounted already: `switch_out` on this CPU at this instant comes first.
        debug_assert!(!self.lazy_accounting || self.cpus[cpu].last_update == self.now);
        let exit = self.idle_exit(cpu, next);
        self.cpus[cpu].curr = next;
        self.note_busy(cpu);
        self.force_rearm(cpu);
        let Some(n) = next else { return };
        if self.has_fair() {
            self.fair_untrack(n);
            self.tasks[n].on_cpu = Some(cpu);
            self.fair_track(n);
        }
        // The CPU's and the task's records indexed once for the fields below (the fair
        // counters' possible calls above are behind their test).
        let (c, ts) = (&mut self.cpus[cpu], &mut self.tasks[n]);
        ts.on_cpu = Some(cpu);
        let last_here = c.last_task.replace(n);
        let mut overhead = self.cs_cost + exit;
        if ts.job_last_cpu.is_some_and(|l| l != cpu) {
            ts.stats.migrations += 1;
            overhead += self.mig_cost;
        } else if ts.job_last_cpu == Some(cpu)
            && last_here != Some(n)
            && ts.job.is_some_and(|j| j.remaining < j.exec)
        {
            // Resumes where it was preempted, after another task ran here (SimSo's
            // FixedPenalty: its cache state is gone).
            overhead += self.pre_cost;
        }
        ts.job_last_cpu = Some(cpu);
        c.overhead_left = overhead;
        self.note_dispatch_after(n, exit);
    }
}
