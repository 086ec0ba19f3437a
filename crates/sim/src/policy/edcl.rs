//! `edcl`: earliest deadline critical laxity (Kato & Yamasaki, "Global EDF-based
//! scheduling with efficient priority promotion", RTCSA 2008), global. **Rule as in
//! SimSo 0.8.5's EDCL.py; the paper's text was not available** (its abstract: EDZL's
//! promotion, but "confined to the release time or the completion time of a job").
//!
//! Jobs run in EDF order, except that at every release and every completion each ready
//! job (running or waiting) whose laxity (deadline − now − remaining) is exactly zero is
//! promoted above every unpromoted job; the others are (again) ordered by deadline. So
//! a promotion lasts until the next release or completion, where it is re-evaluated: a
//! running job keeps zero laxity and stays promoted; a waiting job that did not get a
//! CPU has negative laxity by then and falls back to its deadline (SimSo's rule: a job
//! that will miss anyway is not critical). Between releases and completions nothing is
//! re-evaluated (no timer: the point of EDCL). Equal keys queue FIFO and never preempt.
//! `laxity_evaluations` counts one laxity per ready job per release/completion instant.
//!
//! SimSo's evident bug, fixed here: SimSo picks the waiting job by the promoted order but
//! lets it preempt only a running job with a later *deadline*, so a promoted job whose
//! deadline is later than every running job's never preempts (the promotion then does
//! nothing), and while it waits no other waiting job is considered. Here a promoted job
//! preempts the lowest-priority unpromoted running job, as the paper's "promoted to the
//! top" says. Not a rule difference: SimSo compares laxities in floating-point
//! milliseconds (here exact nanoseconds).

use crate::class::{EnqueueReason, SchedClass};
use crate::policy::job_prio::{favoured_first, require_global};
use crate::queue::Keyed;
use crate::state::{CpuId, Ctx, RqId, TaskId};
use crate::SimError;
use schedlab_model::{Ns, Workload};

/// Registry name.
pub const NAME: &str = "edcl";

/// EDF with promotion at zero laxity, evaluated at releases and completions.
#[derive(Default)]
pub struct Edcl {
    /// Waiting jobs by key (promoted first, then deadline).
    q: Keyed,
    /// Per task: ready (waiting or running).
    ready: Vec<bool>,
    /// Per task: promoted at the last evaluation.
    promoted: Vec<bool>,
    /// Per task: the instant and job its laxity was last evaluated at (counted once).
    evaluated: Vec<Option<(Ns, u64)>>,
}

impl Edcl {
    /// The class.
    pub fn new() -> Edcl {
        Edcl::default()
    }

    /// Whether `t` is promoted (for tests).
    pub fn is_promoted(&self, t: TaskId) -> bool {
        self.promoted.get(t).copied().unwrap_or(false)
    }

    fn key(&self, ctx: &Ctx, t: TaskId) -> u64 {
        let d = ctx.task(t).job.map_or(Ns::MAX, |j| j.deadline);
        favoured_first(self.is_promoted(t), d)
    }

    /// A release or completion: re-evaluate every ready job's promotion and re-queue the
    /// waiting ones whose key changed.
    fn evaluate(&mut self, ctx: &Ctx) {
        let mut counted = 0;
        for t in 0..self.ready.len() {
            if !self.ready[t] {
                continue;
            }
            let Some(seq) = ctx.task(t).job.map(|j| j.seq) else {
                continue;
            };
            if self.evaluated[t] != Some((ctx.now, seq)) {
                self.evaluated[t] = Some((ctx.now, seq));
                counted += 1;
            }
            let zero = ctx.laxity_uncounted(t) == 0;
            if zero != self.promoted[t] {
                let queued = self.q.pos[t].is_some();
                self.q.remove(0, t);
                self.promoted[t] = zero;
                if queued {
                    let k = self.key(ctx, t);
                    self.q.push(0, t, k);
                }
            }
        }
        ctx.count_laxity(counted);
    }
}

impl SchedClass for Edcl {
    fn name(&self) -> &'static str {
        NAME
    }

    fn init(&mut self, _nr_rqs: usize, nr_tasks: usize) {
        self.q = Keyed::new(1, nr_tasks);
        self.ready = vec![false; nr_tasks];
        self.promoted = vec![false; nr_tasks];
        self.evaluated = vec![None; nr_tasks];
    }

    fn enqueue_task(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId, _why: EnqueueReason) {
        self.ready[t] = true;
        self.promoted[t] = false;
        let k = self.key(ctx, t);
        self.q.push(0, t, k);
        self.evaluate(ctx); // a release
    }

    fn dequeue_task(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.q.remove(0, t);
        self.ready[t] = false;
        self.promoted[t] = false;
    }

    fn peek_next_task(&self, ctx: &Ctx, _rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.q.peek(ctx, 0, cpu)
    }

    fn pick_next_task(&mut self, ctx: &Ctx, _rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.q.pop(ctx, 0, cpu)
    }

    fn put_prev_task(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId) {
        let k = self.key(ctx, t);
        self.q.push(0, t, k);
    }

    fn task_stopped(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.ready[t] = false;
        self.promoted[t] = false;
        self.evaluate(ctx); // a completion
    }

    fn job_changed(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId) {
        // Also after `task_stopped` at this instant, when the next job is released then.
        self.ready[t] = true;
        self.promoted[t] = false;
        self.evaluate(ctx); // a completion and a release
    }

    fn uses_tick(&self, _ctx: &Ctx) -> bool {
        false
    }

    fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        self.key(ctx, cand) < self.key(ctx, curr)
    }

    // No `preempt_key`: a running job's key changes when it is promoted, which the
    // engine's incremental global placement (keys cached per running CPU) would not see.

    fn check(&self, ctx: &Ctx) -> Result<(), String> {
        match (0..self.ready.len())
            .find(|&t| self.q.pos[t].is_some() && ctx.task(t).on_cpu.is_some())
        {
            Some(t) => Err(format!("task {t} is queued while it runs")),
            None => Ok(()),
        }
    }
}

/// The registry's constructor: global placement only.
pub fn build(w: &Workload) -> Result<Edcl, SimError> {
    require_global(w, NAME)?;
    Ok(Edcl::new())
}

/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Edcl,
    build: |w| Ok(Box::new(crate::policy::edcl::build(w)?)),
}];
