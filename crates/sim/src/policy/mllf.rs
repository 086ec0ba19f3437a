//! `mllf`: modified least laxity first (Oh & Yang, "A modified least-laxity-first
//! scheduling algorithm for real-time tasks", RTCSA 1998), global, as SimSo 0.8.5 has it
//! (`MLLF.py`): **rule as in SimSo 0.8.5's MLLF.py; the paper's text was not available.**
//!
//! LLF without its thrashing: the laxities are compared only at decision instants, and
//! between them the chosen jobs keep their CPUs even when a waiting job's laxity falls
//! below a running one's (MLLF's bounded "laxity inversion"). At each decision instant
//! every ready job (running or waiting) is sorted by laxity (deadline − now − remaining),
//! then absolute deadline, then workload order, and the first m (m CPUs) run; a running
//! job among them keeps its CPU. Decision instants are releases, completions and one
//! timer: with more than m ready jobs, the (m+1)-th has deadline d and the m-th laxity l,
//! and the next decision is at d − l (the instant after which the inversion could cost
//! the waiting job its deadline, as MLLF bounds it). `laxity_evaluations` counts one
//! laxity per ready job per decision instant (what SimSo's sort computes).
//!
//! SimSo's evident bugs, fixed here: (1) it computes the timer's delay in cycles but hands
//! it to `Timer` as milliseconds (`in_ms` left at its default), so the timer fires 10⁶
//! times too late, never within a run: SimSo's MLLF decides at releases and completions
//! only; (2) its timer is cancelled only when a later decision arms a new one, so a timer
//! armed while more than m jobs were ready would still fire (and re-sort) after a decision
//! that found at most m; here only the latest decision's timer counts. Also different from SimSo (tie-breaks, not rules): SimSo's sort is stable over
//! its ready list (activation order, re-sorted at each decision), here equal (laxity,
//! deadline) go by workload order; and SimSo gives the freed CPUs in CPU order while the
//! engine fills idle CPUs first (which CPU, not which job).

use crate::class::{EnqueueReason, SchedClass};
use crate::policy::global_queue::GlobalQueue;
use crate::policy::job_prio::require_global;
use crate::state::{CpuId, Ctx, RqId, TaskId};
use crate::SimError;
use schedlab_model::{Ns, Workload};

/// Registry name.
pub const NAME: &str = "mllf";

/// Modified LLF over one global queue.
#[derive(Default)]
pub struct Mllf {
    /// CPUs (m).
    m: usize,
    /// The ready tasks in the last decision's order (`peek` takes the first m that wait).
    q: GlobalQueue,
    /// Per task: its place in the last decision's order (`usize::MAX`: not ready then).
    rank: Vec<usize>,
}

impl Mllf {
    /// MLLF on `m` CPUs.
    pub fn new(m: usize) -> Mllf {
        Mllf {
            m,
            ..Mllf::default()
        }
    }

    fn deadline(ctx: &Ctx, t: TaskId) -> Ns {
        ctx.task(t).job.map_or(Ns::MAX, |j| j.deadline)
    }

    /// A decision instant: sort the ready jobs, select the first m, arm the timer.
    fn decide(&mut self, ctx: &Ctx) {
        let ready: Vec<TaskId> = self.q.ready_tasks().collect();
        self.q.count_evaluations(ctx, ready.iter().copied());
        let mut jobs: Vec<(i64, Ns, TaskId)> = ready
            .iter()
            .map(|&t| (ctx.laxity_uncounted(t), Self::deadline(ctx, t), t))
            .collect();
        jobs.sort_unstable();
        self.rank.iter_mut().for_each(|r| *r = usize::MAX);
        for (i, j) in jobs.iter().enumerate() {
            self.rank[j.2] = i;
        }
        self.q.order = jobs.iter().map(|j| j.2).collect();
        self.q.timer = (jobs.len() > self.m && self.m > 0).then(|| {
            let (l, _, _) = jobs[self.m - 1];
            let (_, d, _) = jobs[self.m];
            // d − l > now whenever the (m+1)-th job has work left (its laxity ≥ l).
            (d as i64 - l).max(ctx.now as i64 + 1) as Ns
        });
    }

    fn selected(&self, t: TaskId) -> bool {
        self.rank[t] < self.m
    }
}

impl SchedClass for Mllf {
    fn name(&self) -> &'static str {
        NAME
    }

    fn init(&mut self, _nr_rqs: usize, nr_tasks: usize) {
        self.q.init(nr_tasks);
        self.rank = vec![usize::MAX; nr_tasks];
    }

    fn enqueue_task(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId, _why: EnqueueReason) {
        self.q.ready[t] = true;
        self.q.waiting[t] = true;
        self.decide(ctx); // a release
    }

    fn dequeue_task(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.q.ready[t] = false;
        self.q.waiting[t] = false;
    }

    fn peek_next_task(&self, ctx: &Ctx, _rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.q.peek(ctx, cpu, self.m)
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
        // Also after `task_stopped` at this instant, when the next job is released then.
        self.q.ready[t] = true;
        self.decide(ctx); // a completion and a release
    }

    fn uses_tick(&self, _ctx: &Ctx) -> bool {
        false // decisions come from events and the timer
    }

    fn wakeup_preempt(&self, _ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        self.selected(cand) && !self.selected(curr)
    }

    fn uses_decision_timer(&self) -> bool {
        true
    }

    fn next_decision(&self, ctx: &Ctx, _rq: RqId, _cpu: CpuId, _curr: TaskId) -> Option<Ns> {
        self.q.timer_after(ctx.now)
    }

    fn decision_due(&mut self, ctx: &Ctx, _rq: RqId, _cpu: CpuId, _curr: TaskId) -> bool {
        // Every CPU's timer fires at the instant; the first one decides.
        if self.q.timer == Some(ctx.now) {
            self.decide(ctx);
        }
        false // the preemption test moves the selected jobs onto CPUs
    }

    fn check(&self, ctx: &Ctx) -> Result<(), String> {
        self.q.check(ctx)
    }
}

/// The registry's constructor: global placement only.
pub fn build(w: &Workload) -> Result<Mllf, SimError> {
    require_global(w, NAME)?;
    Ok(Mllf::new(w.platform.cpus))
}

/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Mllf,
    build: |w| Ok(Box::new(crate::policy::mllf::build(w)?)),
}];
