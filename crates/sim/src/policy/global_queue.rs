//! The one global queue of SimSo's laxity-rule schedulers `mllf` and `nvnlf`: which tasks
//! are ready (waiting or running) and which wait, the last decision's order of the ready
//! tasks (a CPU picks the first that waits), the decision timer, and the count of
//! laxity evaluations (one per ready job per decision instant).

use crate::state::{CpuId, Ctx, TaskId};
use schedlab_model::Ns;

/// The queue; each class keeps its own decision rule and fills `order` and `timer`.
#[derive(Debug, Default)]
pub struct GlobalQueue {
    /// Per task: ready (waiting in the queue or running).
    pub ready: Vec<bool>,
    /// Per task: waiting in the queue.
    pub waiting: Vec<bool>,
    /// Tasks in the last decision's order (`peek` takes the first that waits).
    pub order: Vec<TaskId>,
    /// The last decision's timer.
    pub timer: Option<Ns>,
    /// Per task: the instant and job it was last evaluated at (counted once).
    evaluated: Vec<Option<(Ns, u64)>>,
}

impl GlobalQueue {
    /// Empty, for `nr_tasks` tasks.
    pub fn init(&mut self, nr_tasks: usize) {
        self.ready = vec![false; nr_tasks];
        self.waiting = vec![false; nr_tasks];
        self.order.clear();
        self.timer = None;
        self.evaluated = vec![None; nr_tasks];
    }

    /// The ready tasks in task order.
    pub fn ready_tasks(&self) -> impl Iterator<Item = TaskId> + '_ {
        (0..self.ready.len()).filter(|&t| self.ready[t])
    }

    /// Count the evaluations of a decision over `tasks` at `ctx.now`: each job once per
    /// instant.
    pub fn count_evaluations(&mut self, ctx: &Ctx, tasks: impl Iterator<Item = TaskId>) {
        let mut counted = 0;
        for t in tasks {
            let seq = ctx.task(t).job.map(|j| j.seq);
            if seq.is_some() && self.evaluated[t] != seq.map(|s| (ctx.now, s)) {
                self.evaluated[t] = seq.map(|s| (ctx.now, s));
                counted += 1;
            }
        }
        ctx.count_laxity(counted);
    }

    /// The first of the first `limit` tasks of `order` that waits and may run on `cpu`.
    pub fn peek(&self, ctx: &Ctx, cpu: CpuId, limit: usize) -> Option<TaskId> {
        self.order
            .iter()
            .take(limit)
            .copied()
            .find(|&t| self.waiting[t] && ctx.allowed(t, cpu))
    }

    /// The timer, if it is still ahead of `now`.
    pub fn timer_after(&self, now: Ns) -> Option<Ns> {
        self.timer.filter(|&at| at > now)
    }

    /// The queue's invariants: a waiting task is ready and not on a CPU.
    pub fn check(&self, ctx: &Ctx) -> Result<(), String> {
        for t in 0..self.ready.len() {
            if self.waiting[t] && ctx.task(t).on_cpu.is_some() {
                return Err(format!("task {t} is queued while it runs"));
            }
            if self.waiting[t] && !self.ready[t] {
                return Err(format!("task {t} is queued but not ready"));
            }
        }
        Ok(())
    }
}
