//! Global schedulers that give every job one priority for its whole life, fixed when it
//! is queued: EDF with heavy tasks first (`edf-us`, `prid`) and EDF with other priority
//! points (`g-fl`). Each policy file supplies the key ([`JobPriority`]); this file holds
//! the run queue they share.
//!
//! Smaller keys run first; equal keys queue FIFO and never preempt (as `edf`). The key
//! depends only on the job (its deadline, release and the task's parameters), never on
//! its progress, so global placement finds the lowest-priority CPU by key in one pass.

use crate::class::{EnqueueReason, SchedClass};
use crate::queue::Keyed;
use crate::state::{CpuId, Ctx, RqId, TaskId};
use crate::SimError;
use schedlab_model::{Ns, Placement, Workload};

/// Top bit of a key: set for jobs of the ordinary (non-favoured) tasks, so that the
/// favoured tasks of `edf-us` and `prid` come first whatever their deadlines.
pub const ORDINARY: u64 = 1 << 63;

/// A policy's job priority.
pub trait JobPriority {
    /// Registry name.
    const NAME: &'static str;
    /// Priority key of `t`'s current job (smaller runs first).
    fn key(&self, ctx: &Ctx, t: TaskId) -> u64;
}

/// `deadline` ordered after every favoured job unless `favoured`: the key of "some tasks
/// first, the rest by EDF" rules. Ties among favoured jobs go to the earlier deadline.
pub fn favoured_first(favoured: bool, deadline: Ns) -> u64 {
    let d = deadline.min(ORDINARY - 1);
    if favoured {
        d
    } else {
        ORDINARY | d
    }
}

/// Refuse per-CPU placements: these rules are defined for one queue shared by all CPUs.
pub fn require_global(w: &Workload, name: &str) -> Result<(), SimError> {
    if w.scheduler.placement == Placement::Global {
        Ok(())
    } else {
        Err(SimError::Unsupported(format!(
            "{name} is a global scheduler: use placement global"
        )))
    }
}

/// A global run queue ordered by a fixed per-job key.
#[derive(Default)]
pub struct JobPrio<P> {
    rule: P,
    q: Keyed,
}

impl<P: JobPriority> JobPrio<P> {
    /// The class for `rule`.
    pub fn new(rule: P) -> Self {
        JobPrio {
            rule,
            q: Keyed::default(),
        }
    }

    /// The rule (for tests and reports).
    pub fn rule(&self) -> &P {
        &self.rule
    }
}

impl<P: JobPriority> SchedClass for JobPrio<P> {
    fn name(&self) -> &'static str {
        P::NAME
    }

    fn init(&mut self, nr_rqs: usize, nr_tasks: usize) {
        self.q = Keyed::new(nr_rqs, nr_tasks);
    }

    fn enqueue_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId, _why: EnqueueReason) {
        self.q.push(rq, t, self.rule.key(ctx, t));
    }

    fn dequeue_task(&mut self, _ctx: &Ctx, rq: RqId, t: TaskId) {
        self.q.remove(rq, t);
    }

    fn peek_next_task(&self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.q.peek(ctx, rq, cpu)
    }

    fn pick_next_task(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.q.pop(ctx, rq, cpu)
    }

    fn put_prev_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.q.push(rq, t, self.rule.key(ctx, t));
    }

    fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        self.rule.key(ctx, cand) < self.rule.key(ctx, curr)
    }

    fn reads_progress(&self) -> bool {
        false // keys are fixed per job
    }

    fn uses_tick(&self, _ctx: &Ctx) -> bool {
        false // task_tick is the default no-op
    }

    fn preempt_key(&self, ctx: &Ctx, t: TaskId) -> Option<u64> {
        Some(self.rule.key(ctx, t))
    }
}
