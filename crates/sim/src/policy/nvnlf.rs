//! `nvnlf`: no virtual nodal laxity first (Funaoka, Kato & Yamasaki, "Work-conserving
//! optimal real-time scheduling on multiprocessors", ECRTS 2008), global. **Rule as in
//! SimSo 0.8.5's NVNLF.py; the paper's text was not available** (its abstract: the
//! Extended T-N Plane Abstraction, a work-conserving LNREF/LLREF).
//!
//! Time is cut into windows at job deadlines: at every release the window runs to the
//! earliest deadline of any task's latest job (for implicit deadlines, the next release).
//! At every release each ready job gets a budget for the window: its fluid share
//! ⌈w·C/T⌉ (w the window's length, C the task's `runtime`, T its period), cut to its
//! remaining work if that is smaller; the capacity left over, w·m minus the budgets, is
//! then handed to the other jobs in activation order, each up to its remaining work or
//! the window, whichever is smaller (what makes it work-conserving). A running job's
//! budget falls as it runs. At every release, completion and timer the first m of these
//! run: jobs whose budget has reached the time left in the window ("no virtual nodal
//! laxity": they must run without pause), then the jobs with budget left, in activation
//! order; a running job among them keeps its CPU. The timer is the first instant a
//! chosen job's budget runs out or a waiting job's budget reaches the time left in the
//! window. A job with no budget left waits even if a CPU is idle. The paper proves every
//! implicit-deadline set with U ≤ m schedulable; with the rounding below the
//! property tests find no miss on 210 sets up to 0.999·m and 300 at exactly m.
//!
//! **Rounding at U = m.** Each window's share is rounded up to a whole ns (SimSo rounds
//! up to a whole cycle), so with U = m the budgets can exceed w·m by a few ns, and
//! SimSo's rule cuts the excess from the first job in activation order that does not
//! finish in the window. That job falls behind its fluid share by those ns in every
//! window and misses its deadline (197 of 300 random sets at U = m exactly). The paper's
//! shares are exact (w·C/T, no excess), so in a window whose rounded-up shares exceed
//! w·m, and only there, the budgets are rounded against each job's cumulative fluid
//! target instead (`⌈C·(end − release)/T⌉` less what the job has executed, the excess
//! taken 1 ns at a time from jobs not due in the window): a job short in one window is
//! owed it in the next, and a job due at the window's end gets all it still needs. No
//! set misses then (the tests run 300 at exactly U = m). Every other window keeps
//! SimSo's rule: the schedules differ from SimSo's only from such a window on.
//!
//! Budgets are exact integers (ns); SimSo computes w·C/T in floating point before its
//! ceiling, so a share that is a whole number of ns can round one ns apart. SimSo's
//! timers are never cancelled (each decision arms another), which only adds decisions
//! that choose the same jobs; here only the latest decision's timer counts.
//! `laxity_evaluations` counts one budget per ready job per decision instant.

use crate::class::{EnqueueReason, SchedClass};
use crate::policy::global_queue::GlobalQueue;
use crate::policy::job_prio::require_global;
use crate::state::{CpuId, Ctx, RqId, TaskId};
use crate::SimError;
use schedlab_model::{Ns, TaskClass, Workload};

/// Registry name.
pub const NAME: &str = "nvnlf";

/// NVNLF over one global queue.
#[derive(Default)]
pub struct Nvnlf {
    /// CPUs (m).
    m: usize,
    /// Per task (workload order): (C, T), or None for tasks that are not periodic.
    share: Vec<Option<(u64, u64)>>,
    /// Ready and waiting tasks; `order`: the chosen tasks in the last decision's order
    /// (`peek` takes the first that waits).
    q: GlobalQueue,
    /// Per task: activation order of its current job (SimSo's dictionary order).
    activated: Vec<u64>,
    next_activation: u64,
    /// Per task: the deadline of its latest released job.
    last_deadline: Vec<Option<Ns>>,
    /// Per task: budget given at the last release instant, and the job's remaining work
    /// then (the budget left is the budget minus the work done since).
    budget: Vec<(i64, Ns)>,
    /// End of the current window.
    window_end: Ns,
    /// Per task: chosen at the last decision.
    chosen: Vec<bool>,
}

impl Nvnlf {
    /// NVNLF on `m` CPUs for tasks with the given (runtime, period).
    pub fn new(m: usize, share: Vec<Option<(u64, u64)>>) -> Nvnlf {
        Nvnlf {
            m,
            share,
            ..Nvnlf::default()
        }
    }

    fn remaining(ctx: &Ctx, t: TaskId) -> Ns {
        ctx.task(t).job.map_or(0, |j| j.remaining)
    }

    /// The budget `t` has left now.
    pub fn budget_left(&self, ctx: &Ctx, t: TaskId) -> i64 {
        let (b, rem0) = self.budget[t];
        b - (rem0 as i64 - Self::remaining(ctx, t) as i64)
    }

    /// Ready tasks in activation order.
    fn ready_in_order(&self) -> Vec<TaskId> {
        let mut v: Vec<TaskId> = self.q.ready_tasks().collect();
        v.sort_by_key(|&t| self.activated[t]);
        v
    }

    /// A release: a new window and every ready job's budget for it.
    fn assign_budgets(&mut self, ctx: &Ctx) {
        self.window_end = self
            .last_deadline
            .iter()
            .flatten()
            .copied()
            .filter(|&d| d > ctx.now)
            .min()
            .unwrap_or(ctx.now);
        let w = (self.window_end - ctx.now) as i128;
        let jobs = self.ready_in_order();
        let mut b: Vec<i128> = jobs
            .iter()
            .map(|&t| match self.share.get(t).copied().flatten() {
                Some((c, p)) if p > 0 => (w * c as i128 + p as i128 - 1) / p as i128,
                _ => 0,
            })
            .collect();
        let capacity = w * self.m as i128;
        if b.iter().sum::<i128>() > capacity {
            self.cumulative_budgets(ctx, &jobs, &mut b, capacity);
        }
        let mut left = capacity - b.iter().sum::<i128>();
        let mut rest = Vec::new();
        for (i, &t) in jobs.iter().enumerate() {
            let e = Self::remaining(ctx, t) as i128;
            if e <= b[i] {
                left += b[i] - e;
                b[i] = e;
            } else {
                rest.push(i);
            }
        }
        for i in rest {
            let e = Self::remaining(ctx, jobs[i]) as i128;
            let a = (e.min(w) - b[i]).min(left);
            b[i] += a;
            left -= a;
        }
        for (i, &t) in jobs.iter().enumerate() {
            let b = b[i].clamp(i64::MIN as i128, i64::MAX as i128) as i64;
            self.budget[t] = (b, Self::remaining(ctx, t));
        }
    }

    /// The budgets of a window whose rounded-up shares exceed its capacity (`U = m`, or
    /// within a few ns of it): each job's fluid work by the window's end, `⌈C·(end −
    /// release)/T⌉` (its whole WCET when the window ends at or after its deadline), minus
    /// what it has executed; the excess over the capacity (under 1 ns per job) is then
    /// taken 1 ns at a time from the jobs not due by the window's end, last in activation
    /// order first. SimSo's rule (each window's `⌈w·C/T⌉`, the excess cut from one job)
    /// leaves that job behind its fluid schedule by the excess in every window until it
    /// misses; here a job short in one window is owed it in the next, so no job falls
    /// more than a few ns behind and a job due by the window's end gets all it still
    /// needs.
    fn cumulative_budgets(&self, ctx: &Ctx, jobs: &[TaskId], b: &mut [i128], capacity: i128) {
        let end = self.window_end;
        for (i, &t) in jobs.iter().enumerate() {
            let (Some((c, _)), Some(j)) = (self.share.get(t).copied().flatten(), ctx.task(t).job)
            else {
                continue;
            };
            let span = j.deadline.saturating_sub(j.release).max(1) as i128;
            let by = (end.min(j.deadline).saturating_sub(j.release)) as i128;
            let target = (c as i128 * by + span - 1) / span;
            let done = j.exec.saturating_sub(j.remaining) as i128;
            b[i] = (target - done).max(0);
        }
        let mut excess = b.iter().sum::<i128>() - capacity;
        while excess > 0 {
            let mut cut = false;
            for (i, &t) in jobs.iter().enumerate().rev() {
                let due = ctx.task(t).job.is_some_and(|j| j.deadline <= end);
                if excess > 0 && !due && b[i] > 0 {
                    b[i] -= 1;
                    excess -= 1;
                    cut = true;
                }
            }
            if !cut {
                break; // only jobs due by the end: the window cannot hold them
            }
        }
    }

    /// A decision instant: choose the jobs to run and arm the timer.
    fn decide(&mut self, ctx: &Ctx) {
        let wl = self.window_end.saturating_sub(ctx.now) as i64;
        let jobs = self.ready_in_order();
        self.q.count_evaluations(ctx, jobs.iter().copied());
        let left: Vec<(TaskId, i64)> = jobs
            .iter()
            .map(|&t| (t, self.budget_left(ctx, t)))
            .collect();
        let mut res: Vec<(TaskId, i64)> = left.iter().copied().filter(|&(_, b)| wl <= b).collect();
        res.extend(left.iter().copied().filter(|&(_, b)| b > 0 && wl > b));
        let cut = res.len().min(self.m);
        let (chosen, others) = res.split_at(cut);
        self.chosen.iter_mut().for_each(|c| *c = false);
        for &(t, _) in chosen {
            self.chosen[t] = true;
        }
        self.q.order = chosen.iter().map(|&(t, _)| t).collect();
        let bottom = chosen.iter().map(|&(_, b)| b).min();
        let ceiling = others.iter().map(|&(_, b)| wl - b).min();
        let next = match (bottom, ceiling) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.q.timer = next.filter(|&n| n > 0).map(|n| ctx.now + n as Ns);
    }

    fn release(&mut self, ctx: &Ctx, t: TaskId) {
        self.activated[t] = self.next_activation;
        self.next_activation += 1;
        self.q.ready[t] = true;
        self.assign_budgets(ctx);
        self.decide(ctx);
    }
}

impl SchedClass for Nvnlf {
    fn name(&self) -> &'static str {
        NAME
    }

    fn init(&mut self, _nr_rqs: usize, nr_tasks: usize) {
        self.share.resize(nr_tasks, None);
        self.q.init(nr_tasks);
        self.activated = vec![0; nr_tasks];
        self.last_deadline = vec![None; nr_tasks];
        self.budget = vec![(0, 0); nr_tasks];
        self.chosen = vec![false; nr_tasks];
    }

    fn job_released(&mut self, ctx: &Ctx, t: TaskId) {
        self.last_deadline[t] = Some(ctx.now + ctx.task(t).rel_deadline);
    }

    fn enqueue_task(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId, _why: EnqueueReason) {
        self.q.waiting[t] = true;
        self.release(ctx, t);
    }

    fn dequeue_task(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.q.ready[t] = false;
        self.q.waiting[t] = false;
        self.chosen[t] = false;
        self.q.order.retain(|&x| x != t);
    }

    fn peek_next_task(&self, ctx: &Ctx, _rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.q.peek(ctx, cpu, usize::MAX)
    }

    fn pick_next_task(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        let t = self.peek_next_task(ctx, rq, cpu)?;
        self.q.waiting[t] = false;
        Some(t)
    }

    fn put_prev_task(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.q.waiting[t] = true;
    }

    fn task_stopped(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.q.ready[t] = false;
        self.decide(ctx); // a completion
    }

    fn job_changed(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.release(ctx, t); // a completion and a release
    }

    fn uses_tick(&self, _ctx: &Ctx) -> bool {
        false
    }

    fn wakeup_preempt(&self, _ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        self.chosen[cand] && !self.chosen[curr]
    }

    fn uses_decision_timer(&self) -> bool {
        true
    }

    fn next_decision(&self, ctx: &Ctx, _rq: RqId, _cpu: CpuId, _curr: TaskId) -> Option<Ns> {
        self.q.timer_after(ctx.now)
    }

    fn decision_due(&mut self, ctx: &Ctx, _rq: RqId, _cpu: CpuId, curr: TaskId) -> bool {
        if self.q.timer == Some(ctx.now) {
            self.decide(ctx);
        }
        // A running job left without budget gives its CPU up even if nothing replaces it.
        !self.chosen[curr]
    }

    fn check(&self, ctx: &Ctx) -> Result<(), String> {
        self.q.check(ctx)
    }
}

/// The registry's constructor: global placement only.
pub fn build(w: &Workload) -> Result<Nvnlf, SimError> {
    require_global(w, NAME)?;
    let share = w
        .tasks
        .iter()
        .map(|t| match t.period {
            Some(p) if t.class == TaskClass::Deadline => Some((t.runtime, p)),
            _ => None,
        })
        .collect();
    Ok(Nvnlf::new(w.platform.cpus, share))
}

/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Nvnlf,
    build: |w| Ok(Box::new(crate::policy::nvnlf::build(w)?)),
}];
