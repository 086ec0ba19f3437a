//! Per-CPU decisions (`__schedule`): preemption test, `pick_next_task` over the class stack, and the two halves of a context switch.

use super::accounting::account_cpu;
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
        let penalty = arrival_penalty(ts, cpu, n, last_here, self.mig_cost, self.pre_cost);
        c.overhead_left = self.cs_cost + exit + penalty;
        self.note_dispatch_after(n, exit);
    }
}

/// What task `n` (record `ts`) arriving on `cpu` pays besides the switch itself: the
/// migration cost if its job last ran elsewhere (counted as a migration), or the
/// preemption penalty if it resumes here after another task ran (SimSo's FixedPenalty:
/// its cache state is gone). Sets the job's last CPU. `last_here` is the CPU's task before
/// `n`. Shared by [`Engine::arrive`] and [`PlainSwitch::switch`].
#[inline(always)]
fn arrival_penalty(
    ts: &mut TaskState,
    cpu: CpuId,
    n: TaskId,
    last_here: Option<TaskId>,
    mig_cost: Ns,
    pre_cost: Ns,
) -> Ns {
    let penalty = if ts.job_last_cpu.is_some_and(|l| l != cpu) {
        ts.stats.migrations += 1;
        mig_cost
    } else if ts.job_last_cpu == Some(cpu)
        && last_here != Some(n)
        && ts.job.is_some_and(|j| j.remaining < j.exec)
    {
        pre_cost
    } else {
        0
    };
    ts.job_last_cpu = Some(cpu);
    penalty
}

/// The records a context switch writes when [`Engine::plain_switches`] holds, borrowed
/// once for a decision's walk (each `&mut self` step of `leave`/`arrive` reloads the
/// engine's vectors), with the run's fixed costs.
pub(super) struct PlainSwitch<'a> {
    cpus: &'a mut [CpuState],
    tasks: &'a mut [TaskState],
    latency: &'a mut [latency::LatencyRec],
    rearm: &'a mut marks::CpuMask,
    lazy_accounting: bool,
    cbs: bool,
    now: Ns,
    cs_cost: Ns,
    mig_cost: Ns,
    pre_cost: Ns,
}

impl Engine {
    /// Whether a context switch can take [`PlainSwitch::switch`]: no event log, trace,
    /// idle states, fair tasks, `busy` or per-job cost (all fixed for a run).
    pub(super) fn plain_switches(&self) -> bool {
        self.log.is_none()
            && self.trace.is_none()
            && self.idle.is_none()
            && !self.has_fair()
            && !self.track_busy
            && self.job_cost == 0
    }

    /// The records for [`PlainSwitch::switch`].
    pub(super) fn plain_switch(&mut self) -> PlainSwitch<'_> {
        debug_assert!(self.plain_switches());
        PlainSwitch {
            cpus: &mut self.cpus,
            tasks: &mut self.tasks,
            latency: &mut self.latency,
            rearm: &mut self.rearm,
            lazy_accounting: self.lazy_accounting,
            cbs: self.cbs,
            now: self.now,
            cs_cost: self.cs_cost,
            mig_cost: self.mig_cost,
            pre_cost: self.pre_cost,
        }
    }
}

impl PlainSwitch<'_> {
    /// [`Engine::leave`] then [`Engine::arrive`] on CPU `c` if its task changes to `next`,
    /// reduced to the steps left when [`Engine::plain_switches`] holds.
    ///
    /// A walk over several CPUs, each CPU's departure then its arrival, gives the state
    /// of all departures then all arrivals: what remains of the two halves touches only
    /// the CPU and its two tasks, and a task leaving CPU `a` for CPU `b` has its two
    /// halves commute (the departure clears `on_cpu` only if it is still `a`, and writes
    /// `last_ran`, `last_cpu` and the preemption count, which the arrival does not read;
    /// the arrival writes `on_cpu`, `job_last_cpu` and `job_started`, which the departure
    /// does not read). Lazy accounting's `sync` is taken at each departure, in the walk:
    /// `leave` takes them all before any arrival, but the accounting of CPU `a` touches
    /// only `a` and its task, and an arrival on `b` of the task leaving `a` reads its
    /// job's `remaining` only under `job_last_cpu == Some(b)`, which is `a` while it runs
    /// there.
    #[inline(always)]
    pub(super) fn switch(&mut self, c: CpuId, next: Option<TaskId>) {
        let now = self.now;
        let cr = &mut self.cpus[c];
        let prev = cr.curr;
        if prev == next {
            return;
        }
        // `leave`: `sync`, on the records in hand.
        if self.lazy_accounting {
            account_cpu(cr, self.tasks, self.cbs, c, now);
        }
        cr.switches += 1;
        if prev.is_none() || next.is_none() {
            cr.idle_switches += 1;
        }
        cr.since = now;
        if let Some(p) = prev {
            let ts = &mut self.tasks[p];
            if ts.on_cpu == Some(c) {
                ts.on_cpu = None;
            }
            ts.last_ran = now;
            ts.last_cpu = c;
            // A job that has started is preempted.
            if ts.runnable && ts.job.is_some_and(|j| j.remaining < j.exec) {
                ts.stats.preemptions += 1;
            }
        }
        // `arrive` (`leave` clears `overhead_left`, set again here).
        debug_assert!(!self.lazy_accounting || cr.last_update == now);
        cr.curr = next;
        // `force_rearm`.
        cr.timer_at = Ns::MAX - 1;
        self.rearm.insert(c);
        let Some(n) = next else {
            cr.overhead_left = 0;
            return;
        };
        let last_here = cr.last_task.replace(n);
        let ts = &mut self.tasks[n];
        ts.on_cpu = Some(c);
        cr.overhead_left =
            self.cs_cost + arrival_penalty(ts, c, n, last_here, self.mig_cost, self.pre_cost);
        // `note_dispatch_after` with no exit latency and no per-job cost.
        if !ts.job_started {
            ts.job_started = true;
            if let Some(j) = ts.job {
                self.latency[n].record(now.saturating_sub(j.release));
            }
        }
    }
}

/// Debug builds: the records a decision's switches may write (the CPUs', their tasks'
/// before and after, those tasks' latency samples, the re-arm set), to compare the plain
/// walk ([`PlainSwitch::switch`]) with `leave`/`arrive`.
#[cfg(debug_assertions)]
#[derive(Debug)]
pub(super) struct SwitchRecords {
    cpus: Vec<(CpuId, CpuState)>,
    tasks: Vec<(TaskId, TaskState, latency::LatencyRec)>,
    rearm: marks::CpuMask,
}

#[cfg(debug_assertions)]
impl SwitchRecords {
    /// The records before the switches of `cpus`, whose tasks become `next(cpu)`.
    pub(super) fn take(
        e: &Engine,
        cpus: Vec<CpuId>,
        next: impl Fn(CpuId) -> Option<TaskId>,
    ) -> SwitchRecords {
        let mut tasks: Vec<TaskId> = cpus
            .iter()
            .flat_map(|&c| [e.cpus[c].curr, next(c)])
            .flatten()
            .collect();
        tasks.sort_unstable();
        tasks.dedup();
        SwitchRecords::of(e, &cpus, &tasks)
    }

    fn of(e: &Engine, cpus: &[CpuId], tasks: &[TaskId]) -> SwitchRecords {
        SwitchRecords {
            cpus: cpus.iter().map(|&c| (c, e.cpus[c].clone())).collect(),
            tasks: tasks
                .iter()
                .map(|&t| (t, e.tasks[t].clone(), e.latency[t].clone()))
                .collect(),
            rearm: e.rearm.clone(),
        }
    }

    /// The same records now.
    pub(super) fn again(&self, e: &Engine) -> SwitchRecords {
        let cpus: Vec<CpuId> = self.cpus.iter().map(|r| r.0).collect();
        let tasks: Vec<TaskId> = self.tasks.iter().map(|r| r.0).collect();
        SwitchRecords::of(e, &cpus, &tasks)
    }

    /// Put the records back as they were.
    pub(super) fn restore(&self, e: &mut Engine) {
        for (c, r) in &self.cpus {
            e.cpus[*c] = r.clone();
        }
        for (t, r, l) in &self.tasks {
            e.tasks[*t] = r.clone();
            e.latency[*t] = l.clone();
        }
        e.rearm = self.rearm.clone();
    }
}
