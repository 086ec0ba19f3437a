//! `edzl`: earliest deadline first until zero laxity (Cho, Lee, Han & Jeong, 2002).
//!
//! Jobs run in EDF order (absolute deadline; the CBS scheduling deadline when reservations
//! are enforced, as for `edf`), except that a waiting job whose laxity (deadline − now −
//! remaining) has reached zero is *promoted*: promoted jobs come before every other job
//! and are ordered among themselves by deadline; equal keys queue FIFO and never preempt.
//! A running job's laxity does not change while it runs, so a promoted job stays promoted
//! until its job ends, and a job that starts with positive laxity never needs promotion
//! while it runs. Negative laxity (a job that will miss anyway) also counts as zero.
//!
//! When zero laxity is detected:
//! - always when a job is queued (released, put back after a preemption, migrated): its
//!   laxity is computed then, so a job released with zero laxity is promoted at once
//!   (the heavy task of Dhall's example);
//! - tick mode (default, `edzl: { mode: tick }`, what a kernel would do): at every tick,
//!   for the waiting jobs whose laxity reached zero since (a job reaching zero between
//!   ticks waits for the next one, its laxity then negative);
//! - exact mode (`edzl: { mode: exact }`): at the exact instant, through
//!   [`SchedClass::next_decision`]: a waiting job's laxity falls at rate 1, so it
//!   reaches zero at `deadline − remaining`, known in advance.
//!
//! Waiting jobs are also indexed by that zero-laxity instant, so detection at a tick or a
//! timer looks only at the jobs that reached it (plus the next one): `laxity_evaluations`
//! counts the laxities computed, one per job queued and one per index entry looked at.
//!
//! With global placement a promotion preempts the CPU running the lowest-priority job
//! (idle CPUs first; among equals the lowest-numbered CPU, as the engine orders them).

use crate::class::{EnqueueReason, SchedClass};
use crate::queue::Keyed;
use crate::state::{ClassId, CpuId, Ctx, RqId, TaskId};
use schedlab_model::Ns;
use std::collections::BTreeSet;

/// EDF until zero laxity.
#[derive(Default)]
pub struct Edzl {
    exact: bool,
    /// Waiting jobs not promoted, by deadline.
    edf: Keyed,
    /// Waiting promoted jobs, by deadline.
    zl: Keyed,
    /// Per run queue: waiting jobs not promoted, by zero-laxity instant.
    zero: Vec<BTreeSet<(Ns, TaskId)>>,
    /// Per task: its entry in `zero`, kept so that it is removed as it was inserted even
    /// when the job changed meanwhile (a waiting job aborted at its deadline).
    zero_at: Vec<Option<(RqId, Ns)>>,
    /// Per task: the job (sequence number) that was promoted.
    promoted: Vec<Option<u64>>,
    /// Per task: queued or running in this class.
    known: Vec<bool>,
    /// Per run queue: the last tick at which promotions were looked for.
    ticked_at: Vec<Ns>,
    /// One run queue served by several CPUs.
    global: bool,
    /// How the engine lays out the queues (None when built outside the engine).
    topology: Option<crate::class::Topology>,
    /// `g-fl-zl`: jobs ordered by G-FL's priority point instead of the deadline.
    point: Option<crate::policy::g_fl::GFl>,
}

impl Edzl {
    /// EDZL with zero laxity detected at ticks (`exact == false`) or exactly.
    pub fn new(exact: bool) -> Edzl {
        Edzl {
            exact,
            ..Edzl::default()
        }
    }

    /// EDZL's rule on G-FL's priority points (`g-fl-zl`, policy/g_fl_zl.rs), exact mode.
    pub fn on_priority_points(point: crate::policy::g_fl::GFl) -> Edzl {
        Edzl {
            exact: true,
            point: Some(point),
            ..Edzl::default()
        }
    }

    /// The order among jobs of equal promotion: the deadline (the CBS one when
    /// reservations are enforced), or G-FL's priority point for `g-fl-zl`.
    fn base_key(&self, ctx: &Ctx, t: TaskId) -> u64 {
        match &self.point {
            Some(p) => crate::policy::job_prio::JobPriority::key(p, ctx, t),
            None => ctx.sched_deadline(t),
        }
    }

    fn job_seq(ctx: &Ctx, t: TaskId) -> Option<u64> {
        ctx.task(t).job.map(|j| j.seq)
    }

    /// `deadline − remaining`: when the job's laxity reaches zero if it waits.
    fn zero_instant(ctx: &Ctx, t: TaskId) -> Ns {
        ctx.task(t)
            .job
            .map_or(Ns::MAX, |j| j.deadline.saturating_sub(j.remaining))
    }

    /// Whether `t`'s current job has zero laxity for the policy: promoted if the class
    /// knows the task, else (a task being placed before it is queued) its laxity now.
    fn is_zl(&self, ctx: &Ctx, t: TaskId) -> bool {
        if self.known[t] {
            self.promoted[t].is_some() && self.promoted[t] == Self::job_seq(ctx, t)
        } else {
            ctx.laxity_uncounted(t) <= 0
        }
    }

    /// Priority key: promoted first, then by deadline (smaller is better).
    fn key(&self, ctx: &Ctx, t: TaskId) -> (bool, Ns) {
        (!self.is_zl(ctx, t), self.base_key(ctx, t))
    }

    fn beats(&self, ctx: &Ctx, a: TaskId, b: TaskId) -> bool {
        self.key(ctx, a) < self.key(ctx, b)
    }

    /// Queue a waiting task, computing its laxity (a detection point).
    fn queue(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.known[t] = true;
        let seq = Self::job_seq(ctx, t);
        if self.promoted[t].is_none() || self.promoted[t] != seq {
            self.promoted[t] = None;
            if ctx.laxity(t) <= 0 {
                self.promoted[t] = seq;
            }
        }
        let d = self.base_key(ctx, t);
        if self.promoted[t].is_some() {
            self.zl.push(rq, t, d);
        } else {
            self.edf.push(rq, t, d);
            let z = Self::zero_instant(ctx, t);
            self.zero[rq].insert((z, t));
            self.zero_at[t] = Some((rq, z));
        }
    }

    fn unqueue(&mut self, rq: RqId, t: TaskId) {
        self.edf.remove(rq, t);
        if let Some((zrq, z)) = self.zero_at[t].take() {
            self.zero[zrq].remove(&(z, t));
        }
        self.zl.remove(rq, t);
    }

    /// Promote every waiting job of `rq` whose laxity has reached zero.
    fn promote(&mut self, ctx: &Ctx, rq: RqId) {
        let mut looked = 0;
        while let Some(&(z, t)) = self.zero[rq].first() {
            looked += 1;
            if z > ctx.now {
                break;
            }
            self.zero[rq].pop_first();
            self.zero_at[t] = None;
            self.edf.remove(rq, t);
            self.promoted[t] = Self::job_seq(ctx, t);
            let d = self.base_key(ctx, t);
            self.zl.push(rq, t, d);
        }
        ctx.count_laxity(looked);
    }

    /// Tick mode with global placement: should `cpu`, running `curr`, be the one to give
    /// way? With k waiting jobs that beat `curr`, the k CPUs running the lowest-priority
    /// jobs reschedule (idle CPUs and CPUs running a lower class count first; among
    /// equals the lowest-numbered CPU is the lowest, as the engine's global order has it).
    fn gives_way(&self, ctx: &Ctx, rq: RqId, cpu: CpuId, curr: TaskId) -> bool {
        let ncpu = ctx.cpus.len();
        let k = [&self.zl, &self.edf]
            .into_iter()
            .flat_map(|q| {
                q.rqs[rq]
                    .iter()
                    .map(|e| e.2)
                    .filter(|&w| ctx.allowed(w, cpu))
                    .take_while(|&w| self.beats(ctx, w, curr))
            })
            .take(ncpu)
            .count();
        let below = (0..ncpu)
            .filter(|&c| c != cpu)
            .filter(
                |&c| match ctx.cpus[c].curr.filter(|&x| ctx.task(x).runnable) {
                    None => true,
                    Some(x) if ctx.task(x).class != ClassId::Dl => true,
                    Some(x) => self.beats(ctx, curr, x) || (!self.beats(ctx, x, curr) && c < cpu),
                },
            )
            .count();
        k > below
    }
}

impl SchedClass for Edzl {
    fn name(&self) -> &'static str {
        match self.point {
            Some(_) => "g-fl-zl",
            None => "edzl",
        }
    }

    fn set_topology(&mut self, topology: crate::class::Topology) {
        self.topology = Some(topology);
    }

    fn init(&mut self, nr_rqs: usize, nr_tasks: usize) {
        self.edf = Keyed::new(nr_rqs, nr_tasks);
        self.zl = Keyed::new(nr_rqs, nr_tasks);
        self.zero = vec![BTreeSet::new(); nr_rqs];
        self.zero_at = vec![None; nr_tasks];
        self.promoted = vec![None; nr_tasks];
        self.known = vec![false; nr_tasks];
        self.ticked_at = vec![Ns::MAX; nr_rqs];
        self.global = self.topology.map_or(nr_rqs == 1, |t| t.global_queue);
    }

    fn enqueue_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId, _why: EnqueueReason) {
        self.queue(ctx, rq, t);
    }

    fn dequeue_task(&mut self, _ctx: &Ctx, rq: RqId, t: TaskId) {
        self.unqueue(rq, t);
        self.known[t] = false;
    }

    fn peek_next_task(&self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.zl
            .peek(ctx, rq, cpu)
            .or_else(|| self.edf.peek(ctx, rq, cpu))
    }

    fn pick_next_task(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        let t = self.peek_next_task(ctx, rq, cpu)?;
        self.unqueue(rq, t);
        Some(t)
    }

    fn put_prev_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.queue(ctx, rq, t);
    }

    fn task_stopped(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.known[t] = false;
    }

    fn job_changed(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId) {
        // The running task goes on with a new job: its laxity is computed now.
        self.known[t] = true;
        self.promoted[t] = None;
        if ctx.laxity(t) <= 0 {
            self.promoted[t] = Self::job_seq(ctx, t);
        }
    }

    fn task_tick(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId, t: TaskId) -> bool {
        if self.exact {
            return false; // promotions come from next_decision
        }
        if self.ticked_at[rq] != ctx.now {
            self.ticked_at[rq] = ctx.now;
            self.promote(ctx, rq);
        }
        let Some(head) = self.peek_next_task(ctx, rq, cpu) else {
            return false;
        };
        self.beats(ctx, head, t) && (!self.global || self.gives_way(ctx, rq, cpu, t))
    }

    fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        self.beats(ctx, cand, curr)
    }

    fn uses_decision_timer(&self) -> bool {
        self.exact
    }

    fn check(&self, ctx: &Ctx) -> Result<(), String> {
        for (rq, z) in self.zero.iter().enumerate() {
            if let Some(&(_, t)) = z.iter().find(|e| self.edf.pos[e.1].is_none()) {
                return Err(format!(
                    "task {t} is in run queue {rq}'s zero-laxity index only"
                ));
            }
        }
        let queued = |t: TaskId| self.edf.pos[t].is_some() || self.zl.pos[t].is_some();
        match (0..self.known.len()).find(|&t| queued(t) && ctx.task(t).on_cpu.is_some()) {
            Some(t) => Err(format!("task {t} is queued while it runs")),
            None => Ok(()),
        }
    }

    /// Exact mode: the earliest instant a waiting job that may run on `cpu` reaches zero
    /// laxity.
    fn next_decision(&self, ctx: &Ctx, rq: RqId, cpu: CpuId, _curr: TaskId) -> Option<Ns> {
        if !self.exact {
            return None;
        }
        let &(z, _) = self.zero[rq].iter().find(|e| ctx.allowed(e.1, cpu))?;
        Some(z.max(ctx.now + 1))
    }

    fn decision_due(&mut self, ctx: &Ctx, rq: RqId, _cpu: CpuId, _curr: TaskId) -> bool {
        self.promote(ctx, rq);
        // The preemption test decides which CPU gives way (global: the lowest-priority).
        false
    }
}

/// Its entries in the simulator: the registry policies this file's class runs
/// (`schedlab_model::registry`), and how each is built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Edzl,
    build: |w| Ok(Box::new(Edzl::new(w.scheduler.edzl.exact))),
}];
