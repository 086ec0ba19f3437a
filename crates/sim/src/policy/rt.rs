//! The rt class: SCHED_FIFO and SCHED_RR over fixed priorities, which also serves `rm`
//! and `dm` (priorities assigned by period / relative deadline, see
//! [`schedlab_model::classes::assign_priorities`]).
//!
//! As in kernel/sched/rt.c: a woken task goes to the tail of its priority; a preempted
//! task stays at the head; an RR task whose slice runs out (counted in ticks) goes to the
//! tail if another task of its priority waits.

use crate::class::{EnqueueReason, SchedClass};
use crate::heap::KeyHeap;
use crate::state::{CpuId, Ctx, RqId, TaskId};

/// Fixed-priority FIFO / round-robin class.
#[derive(Default)]
pub struct Rt {
    q: KeyHeap,
    /// Sequence numbers below every tail number: a preempted task re-enters at the head.
    head_seq: u64,
    to_tail: Vec<bool>,
    slice_left: Vec<u64>,
    slice_ticks: u64,
}

impl Rt {
    /// An rt class whose RR slice lasts `slice_ticks` ticks (0 = never expires).
    pub fn new(slice_ticks: u64) -> Rt {
        Rt {
            slice_ticks,
            ..Rt::default()
        }
    }
}

impl SchedClass for Rt {
    fn name(&self) -> &'static str {
        "rt"
    }

    fn init(&mut self, nr_rqs: usize, nr_tasks: usize) {
        self.q = KeyHeap::new(nr_rqs, nr_tasks);
        self.head_seq = 1 << 62;
        self.to_tail = vec![false; nr_tasks];
        self.slice_left = vec![self.slice_ticks; nr_tasks];
    }

    fn enqueue_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId, _why: EnqueueReason) {
        self.q.push(rq, t, ctx.task(t).rt_key);
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
        let key = ctx.task(t).rt_key;
        if std::mem::take(&mut self.to_tail[t]) {
            self.q.push(rq, t, key);
        } else {
            self.head_seq -= 1;
            self.q.push_seq(rq, t, key, self.head_seq);
        }
    }

    fn reads_progress(&self) -> bool {
        false // priorities and, for round robin, ticks
    }

    fn uses_tick(&self, ctx: &Ctx) -> bool {
        // Only SCHED_RR time slices are counted in ticks.
        self.slice_ticks > 0 && ctx.tasks.iter().any(|t| t.round_robin)
    }

    fn task_tick(&mut self, ctx: &Ctx, rq: RqId, _cpu: CpuId, t: TaskId) -> bool {
        if !ctx.task(t).round_robin || self.slice_ticks == 0 {
            return false;
        }
        self.slice_left[t] = self.slice_left[t].saturating_sub(1);
        if self.slice_left[t] > 0 {
            return false;
        }
        self.slice_left[t] = self.slice_ticks;
        let key = ctx.task(t).rt_key;
        let peer_waits = self.q.has_key(rq, key);
        if peer_waits {
            self.to_tail[t] = true;
        }
        peer_waits
    }

    fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        ctx.task(cand).rt_key < ctx.task(curr).rt_key
    }

    fn preempt_key(&self, ctx: &Ctx, t: TaskId) -> Option<u64> {
        Some(ctx.task(t).rt_key)
    }

    fn queue_steps(&self) -> u64 {
        self.q.steps()
    }
}

/// Its entries in the simulator: the registry policies this file's class runs
/// (`schedlab_model::registry`), and how each is built for a workload.
/// The four differ in their tasks' priorities and round-robin flag
/// (`schedlab_model::classes`), not in the class.
pub const SIM: &[crate::registry::SimPolicy] = &[
    crate::registry::SimPolicy {
        policy: schedlab_model::Policy::Rm,
        build: crate::registry::rt_class,
    },
    crate::registry::SimPolicy {
        policy: schedlab_model::Policy::Dm,
        build: crate::registry::rt_class,
    },
    crate::registry::SimPolicy {
        policy: schedlab_model::Policy::Fifo,
        build: crate::registry::rt_class,
    },
    crate::registry::SimPolicy {
        policy: schedlab_model::Policy::Rr,
        build: crate::registry::rt_class,
    },
];
