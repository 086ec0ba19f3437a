//! A scheduling class as the engine holds it: the policy's [`SchedClass`] behind a thin
//! wrapper that counts hook calls (the work a run does, for the benchmark and the guard
//! test against accidental O(n) scans) and keeps the engine's view of which tasks wait
//! in the class's queues — enqueued or put back, and not yet picked or dequeued — so
//! that the engine can skip asking a class that has nothing waiting.

use crate::class::{EnqueueReason, SchedClass};
use crate::state::{CpuId, Ctx, RqId, TaskId};
use schedlab_model::Ns;
use std::cell::Cell;

/// [`Counted`]'s mark of a task that waits on no run queue.
const NOT_WAITING: u32 = u32::MAX;

/// A policy's class plus the engine's bookkeeping around it.
pub(super) struct Counted {
    inner: Box<dyn SchedClass>,
    /// Per task: the run queue it waits on, [`NOT_WAITING`] if none (4 bytes a task, not
    /// an `Option<usize>`'s 16: at 100,000 tasks 0.4 MB, which stays in the caches).
    waiting: Vec<u32>,
    nr_waiting: usize,
    /// Per run queue: tasks waiting on it.
    rq_waiting: Vec<u32>,
    /// Run queues with a task waiting.
    waiting_rqs: super::marks::CpuMask,
    /// Run queues whose waiting tasks changed since [`Counted::take_changed`] (so that
    /// an index of their first tasks can be refreshed for those only), kept once
    /// `take_changed` has been called (`track_changed`).
    changed: super::marks::CpuMask,
    track_changed: bool,
    calls: Cell<u64>,
    /// Queue steps taken by uncounted calls (debug checks), left out of `queue_steps`.
    uncounted_steps: Cell<u64>,
    /// The class's [`SchedClass::ticks_all_at_once`], asked again only where its answer
    /// may change (the topology, `init`, `remaining_measured`), not through a dynamic
    /// call at every tick.
    at_once: bool,
}

impl Counted {
    pub(super) fn new(inner: Box<dyn SchedClass>) -> Counted {
        Counted {
            inner,
            waiting: Vec::new(),
            nr_waiting: 0,
            rq_waiting: Vec::new(),
            waiting_rqs: super::marks::CpuMask::default(),
            changed: super::marks::CpuMask::default(),
            track_changed: false,
            calls: Cell::new(0),
            uncounted_steps: Cell::new(0),
            at_once: false,
        }
    }

    /// Tasks that wait in this class's queues (any run queue).
    pub(super) fn nr_waiting(&self) -> usize {
        self.nr_waiting
    }

    /// The run queue task `t` waits on, if it waits.
    pub(super) fn waiting_rq(&self, t: TaskId) -> Option<RqId> {
        let rq = self.waiting[t];
        (rq != NOT_WAITING).then_some(rq as RqId)
    }

    /// The class's own consistency check ([`SchedClass::check`]).
    pub(super) fn check(&self, ctx: &Ctx) -> Result<(), String> {
        self.inner.check(ctx)
    }

    /// Tasks waiting on run queue `rq`. Every task on a per-CPU run queue may run on that
    /// CPU, so for per-CPU queues 0 means `peek_next_task(rq, rq)` finds nothing.
    pub(super) fn waiting_on(&self, rq: RqId) -> u32 {
        self.rq_waiting[rq]
    }

    /// The run queues with a task waiting.
    pub(super) fn waiting_mask(&self) -> &super::marks::CpuMask {
        &self.waiting_rqs
    }

    /// The lowest run queue at or after `from` with a task waiting.
    pub(super) fn next_waiting_rq(&self, from: RqId) -> Option<RqId> {
        self.waiting_rqs.next_from(from)
    }

    /// Move the run queues whose waiting tasks changed since the last call into `out`;
    /// the first call gives every run queue and starts keeping track (so that classes
    /// nobody asks pay nothing).
    pub(super) fn take_changed(&mut self, out: &mut Vec<RqId>) {
        if !self.track_changed {
            self.track_changed = true;
            out.extend(0..self.rq_waiting.len());
            return;
        }
        out.extend(self.changed.iter());
        self.changed.clear();
    }

    /// [`SchedClass::peek_next_task`] without counting a hook call or its queue steps
    /// (for debug checks, which must not change the counts that the work guard compares).
    pub(super) fn peek_uncounted(&self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        let before = self.inner.queue_steps();
        let t = self.inner.peek_next_task(ctx, rq, cpu);
        let taken = self.inner.queue_steps() - before;
        self.uncounted_steps.set(self.uncounted_steps.get() + taken);
        t
    }

    /// Hook calls so far.
    pub(super) fn calls(&self) -> u64 {
        self.calls.get()
    }

    /// [`SchedClass::global_first_preempted`].
    pub(super) fn global_first_preempted(
        &self,
        ctx: &Ctx,
        assign: &[Option<TaskId>],
        unsure: &[CpuId],
    ) -> Option<Option<CpuId>> {
        self.count();
        self.inner.global_first_preempted(ctx, assign, unsure)
    }

    /// The class's queue steps so far ([`SchedClass::queue_steps`]).
    pub(super) fn queue_steps(&self) -> u64 {
        self.inner.queue_steps() - self.uncounted_steps.get()
    }

    /// `f`'s hook calls and queue steps left out of the counts (debug checks that ask
    /// what a shortcut skipped).
    pub(super) fn uncounted<R>(&self, f: impl FnOnce() -> R) -> R {
        let (calls, steps) = (self.calls.get(), self.inner.queue_steps());
        let r = f();
        self.calls.set(calls);
        let taken = self.inner.queue_steps() - steps;
        self.uncounted_steps.set(self.uncounted_steps.get() + taken);
        r
    }

    fn count(&self) {
        self.calls.set(self.calls.get() + 1);
    }

    #[inline]
    fn set_waiting(&mut self, t: TaskId, rq: Option<RqId>) {
        if self.rq_waiting.len() == 1 {
            self.set_waiting_single(t, rq.is_some());
        } else {
            self.set_waiting_any(t, rq);
        }
    }

    /// [`Counted::set_waiting`] for a class with one run queue (global classes): its count
    /// is the total and its mask bit says whether any task waits, so the counts move
    /// once, without the per-queue tests.
    #[inline(always)]
    fn set_waiting_single(&mut self, t: TaskId, waits: bool) {
        let old = std::mem::replace(&mut self.waiting[t], if waits { 0 } else { NOT_WAITING });
        let was = old != NOT_WAITING;
        debug_assert!(
            !was || old == 0,
            "task {t} waits on a queue the class lacks"
        );
        if !was && !waits {
            return;
        }
        if self.track_changed {
            self.changed.insert(0);
        }
        let n = self.nr_waiting + waits as usize - was as usize;
        self.nr_waiting = n;
        self.rq_waiting[0] = n as u32;
        if n == 0 {
            self.waiting_rqs.remove(0);
        } else {
            self.waiting_rqs.insert(0);
        }
    }

    fn set_waiting_any(&mut self, t: TaskId, rq: Option<RqId>) {
        let new = rq.map_or(NOT_WAITING, |r| {
            debug_assert!(r < NOT_WAITING as RqId);
            r as u32
        });
        let old = std::mem::replace(&mut self.waiting[t], new);
        if old != NOT_WAITING {
            let old = old as RqId;
            if self.track_changed {
                self.changed.insert(old);
            }
            self.rq_waiting[old] -= 1;
            self.nr_waiting -= 1;
            if self.rq_waiting[old] == 0 {
                self.waiting_rqs.remove(old);
            }
        }
        if let Some(new) = rq {
            if self.track_changed {
                self.changed.insert(new);
            }
            self.rq_waiting[new] += 1;
            self.nr_waiting += 1;
            self.waiting_rqs.insert(new);
        }
    }

    pub(super) fn set_topology(&mut self, topology: crate::class::Topology) {
        self.inner.set_topology(topology);
        self.at_once = self.inner.ticks_all_at_once();
    }

    pub(super) fn select_task_rq(&self, ctx: &Ctx, t: TaskId, prev_cpu: CpuId) -> Option<CpuId> {
        self.count();
        self.inner.select_task_rq(ctx, t, prev_cpu)
    }

    pub(super) fn job_released(&mut self, ctx: &Ctx, t: TaskId) {
        self.count();
        self.inner.job_released(ctx, t);
    }

    pub(super) fn job_completed(&mut self, ctx: &Ctx, t: TaskId) {
        self.count();
        self.inner.job_completed(ctx, t);
    }

    pub(super) fn init(&mut self, nr_rqs: usize, nr_tasks: usize) {
        self.waiting = vec![NOT_WAITING; nr_tasks];
        self.nr_waiting = 0;
        self.rq_waiting = vec![0; nr_rqs];
        self.waiting_rqs = super::marks::CpuMask::new(nr_rqs);
        self.changed = super::marks::CpuMask::new(nr_rqs);
        self.track_changed = false;
        self.uncounted_steps.set(0); // the class's own count starts again at init
        self.inner.init(nr_rqs, nr_tasks);
        self.at_once = self.inner.ticks_all_at_once();
    }

    pub(super) fn enqueue_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId, why: EnqueueReason) {
        self.count();
        self.set_waiting(t, Some(rq));
        self.inner.enqueue_task(ctx, rq, t, why);
    }

    pub(super) fn dequeue_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.count();
        self.set_waiting(t, None);
        self.inner.dequeue_task(ctx, rq, t);
    }

    pub(super) fn peek_next_task(&self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.count();
        self.inner.peek_next_task(ctx, rq, cpu)
    }

    pub(super) fn pick_next_task(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.count();
        let t = self.inner.pick_next_task(ctx, rq, cpu)?;
        self.set_waiting(t, None);
        Some(t)
    }

    /// `put_prev_task` then `pick_next_task`, counted as the two calls they are.
    pub(super) fn put_prev_and_pick(
        &mut self,
        ctx: &Ctx,
        rq: RqId,
        cpu: CpuId,
        t: TaskId,
    ) -> Option<TaskId> {
        self.count();
        self.set_waiting(t, Some(rq));
        self.count();
        let n = self.inner.put_prev_and_pick(ctx, rq, cpu, t)?;
        self.set_waiting(n, None);
        Some(n)
    }

    /// [`SchedClass::put_prev_and_pick_all`] on run queue 0, counted as the calls it
    /// stands for (a put-back per task, a pick per task picked); the waiting set moves
    /// only for the tasks not put back and picked again.
    pub(super) fn put_prev_and_pick_all(
        &mut self,
        ctx: &Ctx,
        prev: &[TaskId],
        picks: usize,
        out: &mut Vec<TaskId>,
    ) -> bool {
        let start = out.len();
        if !self.inner.put_prev_and_pick_all(ctx, prev, picks, out) {
            return false;
        }
        self.calls
            .set(self.calls.get() + (prev.len() + out.len() - start) as u64);
        // A task put back is running (not waiting): picked again, it is marked here and
        // its mark undone below, with no count moved. The counts of run queue 0 move
        // once, by the tasks that left it and the put-backs left on it.
        const AGAIN: u32 = NOT_WAITING - 1;
        let (mut left, mut joined) = (0, 0);
        for &t in &out[start..] {
            if self.waiting[t] == NOT_WAITING {
                self.waiting[t] = AGAIN;
            } else {
                debug_assert_eq!(self.waiting[t], 0, "task {t} picked from another queue");
                self.waiting[t] = NOT_WAITING;
                left += 1;
            }
        }
        for &t in prev {
            if self.waiting[t] == AGAIN {
                self.waiting[t] = NOT_WAITING;
            } else {
                self.waiting[t] = 0;
                joined += 1;
            }
        }
        self.rq_waiting[0] = self.rq_waiting[0] + joined - left;
        self.nr_waiting = self.nr_waiting + joined as usize - left as usize;
        if self.rq_waiting[0] == 0 {
            self.waiting_rqs.remove(0);
        } else {
            self.waiting_rqs.insert(0);
        }
        if self.track_changed && !(prev.is_empty() && out.len() == start) {
            self.changed.insert(0);
        }
        true
    }

    pub(super) fn put_prev_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.count();
        self.set_waiting(t, Some(rq));
        self.inner.put_prev_task(ctx, rq, t);
    }

    pub(super) fn task_stopped(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.count();
        self.inner.task_stopped(ctx, rq, t);
    }

    pub(super) fn job_changed(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.count();
        if self.track_changed {
            self.changed.insert(rq); // a class may reorder its queue on a new job
        }
        self.inner.job_changed(ctx, rq, t);
    }

    pub(super) fn running_tasks_preempt(&self) -> bool {
        self.inner.running_tasks_preempt()
    }

    pub(super) fn name(&self) -> &'static str {
        self.inner.name()
    }

    pub(super) fn reads_progress(&self) -> bool {
        self.inner.reads_progress()
    }

    pub(super) fn remaining_measured(&mut self) {
        self.inner.remaining_measured();
        self.at_once = self.inner.ticks_all_at_once();
    }

    pub(super) fn uses_tick(&self, ctx: &Ctx) -> bool {
        self.inner.uses_tick(ctx)
    }

    pub(super) fn task_tick(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId, t: TaskId) -> bool {
        self.count();
        self.inner.task_tick(ctx, rq, cpu, t)
    }

    /// [`SchedClass::ticks_all_at_once`], as kept (debug builds ask the class again).
    #[inline]
    pub(super) fn ticks_all_at_once(&self) -> bool {
        debug_assert_eq!(
            self.at_once,
            self.inner.ticks_all_at_once(),
            "ticks_all_at_once moved"
        );
        self.at_once
    }

    /// [`SchedClass::tick_all`], one hook call.
    pub(super) fn tick_all(&mut self, ctx: &Ctx, resched: &mut Vec<CpuId>) {
        self.count();
        self.inner.tick_all(ctx, resched)
    }

    /// [`SchedClass::preempts_none_remote`].
    pub(super) fn preempts_none_remote(&self, ctx: &Ctx, t: TaskId) -> bool {
        self.count();
        self.inner.preempts_none_remote(ctx, t)
    }

    pub(super) fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        self.count();
        self.inner.wakeup_preempt(ctx, curr, cand)
    }

    pub(super) fn preempt_key(&self, ctx: &Ctx, t: TaskId) -> Option<u64> {
        self.count();
        self.inner.preempt_key(ctx, t)
    }

    pub(super) fn key_is_sched_deadline(&self) -> bool {
        self.inner.key_is_sched_deadline()
    }

    /// Count a [`SchedClass::preempt_key`] call whose answer the engine read itself
    /// ([`SchedClass::key_is_sched_deadline`]).
    #[inline]
    pub(super) fn count_key(&self) {
        self.count();
    }

    pub(super) fn plain_key_queue(&self) -> bool {
        self.inner.plain_key_queue()
    }

    /// [`SchedClass::preempt_key`] without counting a hook call (debug checks).
    pub(super) fn preempt_key_uncounted(&self, ctx: &Ctx, t: TaskId) -> Option<u64> {
        self.inner.preempt_key(ctx, t)
    }

    pub(super) fn global_preempt_key(&self, ctx: &Ctx, t: TaskId) -> Option<u64> {
        self.count();
        self.inner.global_preempt_key(ctx, t)
    }

    pub(super) fn global_key_bound(&self, ctx: &Ctx, t: TaskId) -> Option<u64> {
        self.count();
        self.inner.global_key_bound(ctx, t)
    }

    /// [`SchedClass::global_preempt_key`] without counting a hook call (debug checks).
    pub(super) fn global_preempt_key_uncounted(&self, ctx: &Ctx, t: TaskId) -> Option<u64> {
        self.inner.global_preempt_key(ctx, t)
    }

    pub(super) fn global_ties_to_last_cpu(&self, key: u64) -> bool {
        self.inner.global_ties_to_last_cpu(key)
    }

    pub(super) fn uses_decision_timer(&self) -> bool {
        self.inner.uses_decision_timer()
    }

    pub(super) fn next_decision(
        &self,
        ctx: &Ctx,
        rq: RqId,
        cpu: CpuId,
        curr: TaskId,
    ) -> Option<Ns> {
        self.count();
        self.inner.next_decision(ctx, rq, cpu, curr)
    }

    /// Not counted: asked of every running task at every global decision, it would
    /// change the work counts of every class.
    pub(super) fn next_decision_idle(&self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<Ns> {
        self.inner.next_decision_idle(ctx, rq, cpu)
    }

    /// Not counted (asked once per release).
    pub(super) fn release_reselects(&self) -> bool {
        self.inner.release_reselects()
    }

    /// Not counted (see [`Counted::next_decision_idle`]).
    pub(super) fn must_yield(&self, ctx: &Ctx, t: TaskId) -> bool {
        self.inner.must_yield(ctx, t)
    }

    pub(super) fn decision_due(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId, curr: TaskId) -> bool {
        self.count();
        self.inner.decision_due(ctx, rq, cpu, curr)
    }

    pub(super) fn quantum(&self) -> Option<Ns> {
        self.inner.quantum()
    }

    pub(super) fn quantum_boundary(&mut self, ctx: &Ctx) {
        self.count();
        self.inner.quantum_boundary(ctx);
    }

    pub(super) fn never_yields(&self) -> bool {
        self.inner.never_yields()
    }

    /// [`SchedClass::preempts_in_order`].
    pub(super) fn preempts_in_order(&self) -> bool {
        self.inner.preempts_in_order()
    }

    pub(super) fn decides_running(&self) -> bool {
        self.inner.decides_running()
    }

    pub(super) fn keeps_cpu(&mut self, ctx: &Ctx, cpu: CpuId, curr: TaskId) -> bool {
        self.count();
        self.inner.keeps_cpu(ctx, cpu, curr)
    }

    pub(super) fn vruntime(&self, ctx: &Ctx, t: TaskId) -> Option<i64> {
        self.inner.vruntime(ctx, t)
    }

    pub(super) fn report(&self, ctx: &Ctx, names: &[String]) -> Option<serde_json::Value> {
        self.inner.report(ctx, names)
    }
}
