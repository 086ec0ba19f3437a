//! `edf`: earliest deadline first, SCHED_DEADLINE's rule.
//!
//! Ordered by the absolute deadline (the CBS scheduling deadline when reservations are
//! enforced). Equal deadlines never preempt (`dl_entity_preempt` is strict) and queue FIFO.

use crate::class::{EnqueueReason, SchedClass};
use crate::heap::KeyHeap;
use crate::state::{CpuId, Ctx, RqId, TaskId};

/// Earliest deadline first.
#[derive(Default)]
pub struct Edf {
    q: KeyHeap,
}

impl SchedClass for Edf {
    fn name(&self) -> &'static str {
        "edf"
    }

    fn init(&mut self, nr_rqs: usize, nr_tasks: usize) {
        self.q = KeyHeap::new(nr_rqs, nr_tasks);
    }

    fn enqueue_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId, _why: EnqueueReason) {
        self.q.push(rq, t, ctx.sched_deadline(t));
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
        self.q.push(rq, t, ctx.sched_deadline(t));
    }

    fn put_prev_and_pick(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId, t: TaskId) -> Option<TaskId> {
        self.q.push_pop(ctx, rq, cpu, t, ctx.sched_deadline(t))
    }

    fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        ctx.sched_deadline(cand) < ctx.sched_deadline(curr)
    }

    fn reads_progress(&self) -> bool {
        false // deadlines only
    }

    fn uses_tick(&self, _ctx: &Ctx) -> bool {
        false // task_tick is the default no-op
    }

    fn preempt_key(&self, ctx: &Ctx, t: TaskId) -> Option<u64> {
        Some(ctx.sched_deadline(t))
    }

    fn key_is_sched_deadline(&self) -> bool {
        true // `preempt_key` above
    }

    fn plain_key_queue(&self) -> bool {
        true // a heap by deadline, FIFO among equal ones, and nothing else
    }

    fn queue_steps(&self) -> u64 {
        self.q.steps()
    }
}

/// Its entries in the simulator: the registry policies this file's class runs
/// (`schedlab_model::registry`), and how each is built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Edf,
    build: |_| Ok(Box::new(Edf::default())),
}];
