//! `llf`: least laxity first, laxity = absolute deadline − now − remaining time.
//!
//! Tick mode (what a kernel does, and what the seed paper measured): decisions at every
//! tick and at every release/completion; every ready job's laxity counts as re-evaluated
//! each time (`laxity_evaluations`). Ties go to the least recently scheduled job, as the
//! paper says (or FIFO by queueing order with `tie: fifo`).
//!
//! A waiting job's laxity falls at the rate of wall time, so `deadline − remaining`
//! (its "zero-laxity instant") is constant while it waits: the queue is kept in that
//! order and never needs re-sorting; only the running job's value moves.

use crate::class::{EnqueueReason, SchedClass};
use crate::queue::Keyed;
use crate::state::{CpuId, Ctx, RqId, TaskId};

/// Least laxity first.
#[derive(Default)]
pub struct Llf {
    q: Keyed,
    /// Tie-break by least recently scheduled (else FIFO).
    lrs: bool,
}

impl Llf {
    /// LLF with the given tie-break.
    pub fn new(lrs_tie: bool) -> Llf {
        Llf {
            lrs: lrs_tie,
            ..Llf::default()
        }
    }

    /// `deadline − remaining`: the instant the job's laxity reaches zero if it waits.
    fn zero_instant(ctx: &Ctx, t: TaskId) -> u64 {
        let ts = ctx.task(t);
        ts.job
            .map_or(u64::MAX, |j| j.deadline.saturating_sub(j.remaining))
    }

    fn queue(&mut self, ctx: &Ctx, rq: RqId, t: TaskId, last_ran: u64) {
        let key = Self::zero_instant(ctx, t);
        if self.lrs {
            self.q.push_seq(rq, t, key, last_ran);
        } else {
            self.q.push(rq, t, key);
        }
    }

    /// Every ready job on `rq` (the waiting ones and the running one) is re-evaluated.
    fn count_rq(&self, ctx: &Ctx, rq: RqId) {
        ctx.count_laxity(self.q.rqs[rq].len() as u64 + 1);
    }
}

impl SchedClass for Llf {
    fn name(&self) -> &'static str {
        "llf"
    }

    fn init(&mut self, nr_rqs: usize, nr_tasks: usize) {
        self.q = Keyed::new(nr_rqs, nr_tasks);
    }

    fn enqueue_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId, _why: EnqueueReason) {
        let last = ctx.task(t).last_ran;
        self.queue(ctx, rq, t, last);
        self.count_rq(ctx, rq);
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
        // It ran until now: it is the most recently scheduled.
        self.queue(ctx, rq, t, ctx.now);
    }

    fn task_stopped(&mut self, ctx: &Ctx, rq: RqId, _t: TaskId) {
        self.count_rq(ctx, rq);
    }

    fn job_changed(&mut self, ctx: &Ctx, rq: RqId, _t: TaskId) {
        self.count_rq(ctx, rq);
    }

    fn task_tick(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId, t: TaskId) -> bool {
        self.count_rq(ctx, rq);
        self.q
            .peek(ctx, rq, cpu)
            .is_some_and(|cand| self.wakeup_preempt(ctx, t, cand))
    }

    fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        let (lc, lr) = (ctx.laxity_uncounted(cand), ctx.laxity_uncounted(curr));
        if self.lrs {
            // The running job counts as scheduled now; a waiting job scheduled longer ago
            // wins a tie (a job put back at this very instant does not).
            let cand_last = self.q.pos[cand].map_or(ctx.task(cand).last_ran, |p| p.1);
            lc < lr || (lc == lr && cand_last < ctx.now)
        } else {
            lc < lr
        }
    }
}
