//! `llf`: least laxity first, laxity = absolute deadline − now − remaining time.
//!
//! # Tick mode (default)
//!
//! What a kernel does, and what the seed paper measured: decisions at every tick and at
//! every release/completion; every ready job's laxity counts as re-evaluated each time
//! (`laxity_evaluations`). Ties go to the least recently scheduled job, as the paper says
//! (or FIFO by queueing order with `tie: fifo`).
//!
//! A waiting job's laxity falls at the rate of wall time, so `deadline − remaining`
//! (its "zero-laxity instant") is constant while it waits: the queue is kept in that
//! order and never needs re-sorting; only the running job's value moves.
//!
//! # Exact mode (`llf: { mode: exact }`)
//!
//! Textbook LLF with no quantum. Decisions happen at releases, at completions, and at the
//! exact instant a waiting job's laxity falls *strictly* below the running job's (the
//! running job's laxity is constant while it runs, a waiting job's falls at rate 1, so
//! that instant is known in advance: the class arms the CPU's timer for it through
//! [`SchedClass::next_decision`]). Ties at the crossing instant go to the running job:
//! the switch happens 1 ns after the laxities become equal, when the waiting one is
//! strictly smaller. At a release or a pick (after a completion) the order is laxity,
//! then earlier deadline, then workload order (`tie:` applies to tick mode only).
//!
//! **Ties after a crossing.** In continuous time every crossing is a tie: at the crossing
//! instant both laxities are equal, and whichever job then runs keeps its laxity while
//! the other's falls below it. Pure LLF therefore shares the CPU between the two from
//! then on (processor sharing, LLF's well-known thrashing); in integer nanoseconds this
//! is a switch every 1-2 ns until one job completes. Measured on E2 (t1, t2 = 5ms/50ms,
//! t3 = 60ms/100ms, one CPU, 100 ms) with that rule ([`TieRule::Share`]): 20,000,002
//! context switches, 20,000,105 events and 3.2 s of wall time (release build, no trace)
//! for 100 simulated milliseconds — not a usable default.
//!
//! So exact mode resolves the tie a crossing creates by deadline, as Oh & Yang's MLLF
//! resolves laxity ties ([`TieRule::Edf`], the default): a waiting job whose laxity has
//! fallen below the running job's by *crossing* it preempts only if its absolute
//! deadline is strictly earlier; otherwise the running job keeps the CPU (a bounded
//! "laxity inversion") and the waiting job stays tied to it. Jobs that did not get there
//! by a crossing are compared by laxity as in pure LLF: a job released (or migrated) at
//! this instant, and a job that starts at this instant (a pick, or a new job of the
//! running task). The result is exact (every decision at the instant the rule
//! determines, no quantum) and finite: between two releases/completions on a CPU, each
//! crossing switch strictly lowers the running job's deadline, so there are at most as
//! many as there are ready jobs. On one CPU a job cannot miss its deadline because of
//! the inversion unless the two jobs together were infeasible (both must finish by the
//! later deadline, and the earlier-deadline one is the one running). Schedules where no
//! crossing happens are exactly pure LLF's. On E2 exact mode makes 7 context switches
//! (1 preemption) and meets every deadline (tests/laxity_exact.rs).
//!
//! `laxity_evaluations` in exact mode counts, at each decision point (release,
//! completion, crossing), every ready job on the run queue, running one included.
//!
//! Exact mode needs per-CPU run queues (`placement: linux` or `partitioned`): the
//! crossing rule compares a waiting job with the job running on a given CPU.

use super::progress;
use crate::class::{EnqueueReason, SchedClass, Topology};
use crate::heap::{Entry, KeyHeap};
use crate::queue::Keyed;
use crate::state::{ClassId, CpuId, Ctx, RqId, TaskId};
use schedlab_model::Ns;
use std::cell::Cell;

/// How exact mode treats the tie a laxity crossing creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TieRule {
    /// Pure LLF: a waiting job whose laxity is strictly below the running job's always
    /// preempts. Tied jobs then alternate every 1-2 ns (only for measurements and tests).
    Share,
    /// After a crossing the earlier absolute deadline runs; no preemption otherwise.
    Edf,
}

/// Tick mode keeps its run queues sorted ([`Sorted`]) up to this many tasks, in an
/// indexed heap above.
const SORTED_MAX_TASKS: usize = 256;

/// The run queues: tick mode needs only the first task of a queue (a sorted vector for
/// few tasks, an indexed heap otherwise); exact mode walks its queue in laxity order (the
/// B-trees). Same order in all three.
enum LlfQueue {
    Sorted(Sorted),
    Heap(KeyHeap),
    Tree(Keyed),
}

/// Small run queues as vectors sorted in decreasing `(key, seq, task)` order, the
/// [`KeyHeap`] order reversed: the first task is the last entry, so a pick takes it with
/// no move, where the heap's removal of its root moves an entry down every level. An
/// insertion moves the entries that come before it in the queue order (at most
/// [`SORTED_MAX_TASKS`]); a task preempted at a tick has a laxity near the first waiting
/// task's, so it goes near the end. Tail sequence numbers are `KeyHeap`'s.
#[derive(Default)]
struct Sorted {
    rqs: Vec<Vec<Entry>>,
    /// Per task: `(key, seq)` while queued.
    pos: Vec<Option<(u64, u64)>>,
    seq: u64,
    /// Entries looked at and moved (the work guard's count).
    steps: Cell<u64>,
}

impl Sorted {
    fn new(nr_rqs: usize, nr_tasks: usize) -> Sorted {
        Sorted {
            rqs: vec![Vec::new(); nr_rqs],
            pos: vec![None; nr_tasks],
            seq: 1 << 62, // as KeyHeap's
            steps: Cell::new(0),
        }
    }

    #[inline]
    fn step(steps: &Cell<u64>, n: usize) {
        steps.set(steps.get() + n as u64);
    }

    #[inline]
    fn push(&mut self, rq: RqId, t: TaskId, key: u64) {
        self.seq += 1;
        self.push_seq(rq, t, key, self.seq);
    }

    // Always inlined: a release's push went through two calls (the queue kind's, then
    // this one) for a few tens of instructions.
    #[inline(always)]
    fn push_seq(&mut self, rq: RqId, t: TaskId, key: u64, seq: u64) {
        debug_assert!(self.pos[t].is_none(), "task {t} queued twice");
        self.pos[t] = Some((key, seq));
        let e = (key, seq, t);
        let q = &mut self.rqs[rq];
        // Most releases are the queue's new first task (its last entry): one comparison
        // instead of the search.
        let i = if q.last().is_none_or(|l| *l > e) {
            q.len()
        } else {
            q.partition_point(|x| *x > e)
        };
        Self::step(&self.steps, 1 + q.len() - i);
        q.insert(i, e);
        debug_assert!(
            (i == 0 || q[i - 1] > e) && q.get(i + 1).is_none_or(|&n| n < e),
            "LLF: run queue {rq} out of order at {i}"
        );
    }

    #[inline]
    fn remove(&mut self, rq: RqId, t: TaskId) {
        if let Some((key, seq)) = self.pos[t].take() {
            let e = (key, seq, t);
            let q = &mut self.rqs[rq];
            let i = q.partition_point(|x| *x > e);
            debug_assert_eq!(q.get(i), Some(&e), "task {t} not on rq {rq}");
            Self::step(&self.steps, 1 + q.len() - i);
            q.remove(i);
        }
    }

    /// Index of the first entry of `rq` (in queue order) whose task is `allowed`.
    #[inline]
    fn first_where(&self, rq: RqId, allowed: impl Fn(TaskId) -> bool) -> Option<usize> {
        let q = &self.rqs[rq];
        let i = q.iter().rposition(|e| allowed(e.2))?;
        Self::step(&self.steps, q.len() - i);
        Some(i)
    }

    #[inline]
    fn peek(&self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.first_where(rq, |t| ctx.allowed(t, cpu))
            .map(|i| self.rqs[rq][i].2)
    }

    #[inline]
    fn pop(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.pop_where(rq, |t| ctx.allowed(t, cpu))
    }

    /// Take the first entry of `rq` whose task is `allowed` out of the queue.
    #[inline]
    fn pop_where(&mut self, rq: RqId, allowed: impl Fn(TaskId) -> bool) -> Option<TaskId> {
        let i = self.first_where(rq, allowed)?;
        let q = &mut self.rqs[rq];
        let t = if i + 1 == q.len() {
            q.pop()
        } else {
            Self::step(&self.steps, q.len() - i);
            Some(q.remove(i))
        }?
        .2;
        self.pos[t] = None;
        Some(t)
    }

    /// The first entry of `rq` whoever it may run on.
    #[inline]
    fn head(&self, rq: RqId) -> Option<&Entry> {
        self.rqs[rq].last()
    }

    /// `push_seq` of every entry of `held` (their tasks' positions already set), then up
    /// to `picks` pops of the first entry of `rq`, whatever task it holds, appended to
    /// `out` — in one pass: `held` sorted as the queue (best last), each pop takes the
    /// better of the queue's and `held`'s first entries, and only the entries left in
    /// `held` are inserted. Entries are distinct, so the pops and the queue left are
    /// those of the pushes and pops one by one (debug builds compare).
    fn push_all_then_pop(
        &mut self,
        rq: RqId,
        held: &mut Vec<Entry>,
        picks: usize,
        out: &mut Vec<TaskId>,
    ) {
        // Most decisions put back one or two tasks: two entries are ordered by one
        // comparison, not through the library sort's setup.
        match held.len() {
            0 | 1 => {}
            2 => {
                if held[0] < held[1] {
                    held.swap(0, 1);
                }
            }
            _ => held.sort_unstable_by(|a, b| b.cmp(a)),
        }
        let slow = cfg!(debug_assertions).then(|| {
            let mut q = self.rqs[rq].clone();
            for &e in held.iter() {
                let i = q.partition_point(|x| *x > e);
                q.insert(i, e);
            }
            let n = picks.min(q.len());
            let popped: Vec<TaskId> = q.drain(q.len() - n..).rev().map(|e| e.2).collect();
            (q, popped)
        });
        let start = out.len();
        let q = &mut self.rqs[rq];
        for _ in 0..picks {
            let e = match (q.last(), held.last()) {
                (Some(a), Some(b)) if a < b => q.pop(),
                (Some(_), Some(_)) | (None, Some(_)) => held.pop(),
                (Some(_), None) => q.pop(),
                (None, None) => break,
            };
            let t = e.expect("an entry to take").2;
            self.pos[t] = None;
            out.push(t);
        }
        Self::step(&self.steps, out.len() - start);
        // The entries left in `held` merged in from the queue's tail, where a preempted
        // task's entry lands (its laxity is near the first waiting task's): each queue
        // entry after one moves once, not a search and a shift per insertion. Each is
        // counted as its insertion one by one (best first) counts: itself and the
        // entries after it then, which are those after it in the merged queue.
        if !held.is_empty() {
            // Debug builds: the count of the insertions one by one.
            let one_by_one = cfg!(debug_assertions).then(|| {
                let mut c = q.clone();
                let mut steps = 0;
                for &e in held.iter().rev() {
                    let i = c.partition_point(|x| *x > e);
                    steps += 1 + c.len() - i;
                    c.insert(i, e);
                }
                steps
            });
            let (n, total) = (q.len(), q.len() + held.len());
            q.extend_from_slice(held);
            // `q[..i]`: the queue's entries not moved; `q[w..]`: the merged tail.
            let (mut i, mut w, mut steps) = (n, total, 0);
            for &e in held.iter().rev() {
                while i > 0 && q[i - 1] < e {
                    w -= 1;
                    q[w] = q[i - 1];
                    i -= 1;
                }
                w -= 1;
                q[w] = e;
                steps += total - w;
            }
            debug_assert_eq!(i, w, "LLF: merged put-backs");
            debug_assert!(one_by_one.is_none_or(|s| s == steps), "LLF: merged steps");
            Self::step(&self.steps, steps);
        }
        held.clear();
        if let Some((q, popped)) = slow {
            debug_assert_eq!(&out[start..], &popped[..], "LLF: batched picks differ");
            debug_assert_eq!(self.rqs[rq], q, "LLF: batched put-backs differ");
        }
    }
}

impl Default for LlfQueue {
    fn default() -> LlfQueue {
        LlfQueue::Heap(KeyHeap::default())
    }
}

impl LlfQueue {
    #[inline]
    fn push(&mut self, rq: RqId, t: TaskId, key: u64) {
        match self {
            LlfQueue::Sorted(q) => q.push(rq, t, key),
            LlfQueue::Heap(h) => h.push(rq, t, key),
            LlfQueue::Tree(q) => q.push(rq, t, key),
        }
    }

    #[inline(always)]
    fn push_seq(&mut self, rq: RqId, t: TaskId, key: u64, seq: u64) {
        match self {
            LlfQueue::Sorted(q) => q.push_seq(rq, t, key, seq),
            LlfQueue::Heap(h) => h.push_seq(rq, t, key, seq),
            LlfQueue::Tree(q) => q.push_seq(rq, t, key, seq),
        }
    }

    #[inline]
    fn remove(&mut self, rq: RqId, t: TaskId) {
        match self {
            LlfQueue::Sorted(q) => q.remove(rq, t),
            LlfQueue::Heap(h) => h.remove(rq, t),
            LlfQueue::Tree(q) => q.remove(rq, t),
        }
    }

    #[inline(always)]
    fn peek(&self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        match self {
            LlfQueue::Sorted(q) => q.peek(ctx, rq, cpu),
            LlfQueue::Heap(h) => h.peek(ctx, rq, cpu),
            LlfQueue::Tree(q) => q.peek(ctx, rq, cpu),
        }
    }

    #[inline]
    fn pop(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        match self {
            LlfQueue::Sorted(q) => q.pop(ctx, rq, cpu),
            LlfQueue::Heap(h) => h.pop(ctx, rq, cpu),
            LlfQueue::Tree(q) => q.pop(ctx, rq, cpu),
        }
    }

    /// `(key, seq)` of `t` while queued.
    #[inline(always)]
    fn pos(&self, t: TaskId) -> Option<(u64, u64)> {
        match self {
            LlfQueue::Sorted(q) => q.pos[t],
            LlfQueue::Heap(h) => h.pos[t],
            LlfQueue::Tree(q) => q.pos[t],
        }
    }

    #[inline(always)]
    fn len(&self, rq: RqId) -> usize {
        match self {
            LlfQueue::Sorted(q) => q.rqs[rq].len(),
            LlfQueue::Heap(h) => h.len(rq),
            LlfQueue::Tree(q) => q.rqs[rq].len(),
        }
    }

    /// The B-trees (exact mode).
    #[inline]
    fn tree(&self) -> Option<&Keyed> {
        match self {
            LlfQueue::Sorted(_) => None,
            LlfQueue::Heap(_) => None,
            LlfQueue::Tree(q) => Some(q),
        }
    }

    #[inline]
    fn steps(&self) -> u64 {
        match self {
            LlfQueue::Sorted(q) => q.steps.get(),
            LlfQueue::Heap(h) => h.steps(),
            LlfQueue::Tree(_) => 0,
        }
    }
}

/// [`Llf::tick_head`]: a run queue's first task at a tick instant, with what
/// `wakeup_preempt` reads of it.
#[derive(Clone, Copy)]
struct TickHead {
    at: Ns,
    rq: RqId,
    task: TaskId,
    /// Its laxity at `at`, and when it was last scheduled (its queue position's).
    laxity: i64,
    last: u64,
}

/// Least laxity first.
#[derive(Default)]
pub struct Llf {
    q: LlfQueue,
    /// Tie-break by least recently scheduled (else FIFO); tick mode.
    lrs: bool,
    /// Exact mode and its tie rule (None = tick mode).
    exact: Option<TieRule>,
    /// Exact mode, per task: when it was last queued by a release or a migration.
    arrived_at: Vec<Ns>,
    /// Exact mode, per task: when it last started (picked, or a new job while running).
    started_at: Vec<Ns>,
    /// Exact mode, per run queue: the task put back and when (still "current" for the
    /// pick that follows at the same instant).
    put: Vec<Option<(TaskId, Ns)>>,
    /// Tick mode: the first task of a run queue as the tick found it, so the tick peeks
    /// a global queue and takes that task's laxity once for all its CPUs, not once per
    /// CPU. Only `&mut self` hooks change the queue or a waiting job, and each of them
    /// but `task_tick` drops it.
    tick_head: Option<TickHead>,
    /// [`SchedClass::put_prev_and_pick_all`]'s put-backs (reused).
    held: Vec<Entry>,
    /// One run queue for all CPUs, whose tasks may all run on every CPU (the topology).
    one_queue: bool,
    /// Under the real runner's dispatcher ([`SchedClass::remaining_measured`]): no
    /// tick in one call.
    remaining_rises: bool,
    /// The engine's class this instance runs, as its first queued task tells
    /// ([`SchedClass::tick_all`] ticks the CPUs running a task of it).
    class: Option<ClassId>,
}

impl Llf {
    /// LLF in tick mode with the given tie-break.
    pub fn new(lrs_tie: bool) -> Llf {
        Llf {
            lrs: lrs_tie,
            ..Llf::default()
        }
    }

    /// LLF in exact mode with the given tie rule.
    pub fn exact(rule: TieRule) -> Llf {
        Llf {
            exact: Some(rule),
            ..Llf::default()
        }
    }

    /// `deadline − remaining`: the instant the job's laxity reaches zero if it waits.
    /// The remaining time with its CPU's pending accounting: a task put back is keyed
    /// before the switch accounts its CPU (tick mode accounts lazily, `reads_progress`).
    fn zero_instant(ctx: &Ctx, t: TaskId) -> u64 {
        let ts = ctx.task(t);
        match &ts.job {
            Some(j) => j.deadline.saturating_sub(progress::job_remaining(ctx, t, ts, j)),
            None => u64::MAX,
        }
    }

    /// Tick mode's global key without its tie code: the laxity biased to stay positive,
    /// below 2^62. In i64, saturating: the same as the sum in i128 and the clamp, since
    /// the clamp's upper end is below i64::MAX and the sum cannot go below i64::MIN.
    fn biased_laxity(ctx: &Ctx, t: TaskId) -> u64 {
        progress::laxity(ctx, t)
            .saturating_add(1 << 61)
            .clamp(0, (1 << 62) - 1) as u64
    }

    fn deadline(ctx: &Ctx, t: TaskId) -> Ns {
        ctx.task(t).job.map_or(Ns::MAX, |j| j.deadline)
    }

    // Inlined into its two callers: a release's push was a call of its own.
    #[inline(always)]
    fn queue(&mut self, ctx: &Ctx, rq: RqId, t: TaskId, last_ran: u64) {
        let key = Self::zero_instant(ctx, t);
        if self.exact.is_some() {
            // Laxity, then deadline, then workload order (the task id in the entry).
            self.q.push_seq(rq, t, key, Self::deadline(ctx, t));
        } else if self.lrs {
            self.q.push_seq(rq, t, key, last_ran);
        } else {
            self.q.push(rq, t, key);
        }
    }

    /// When `t` was last scheduled, as tick mode's tie-break reads it: its queue
    /// position's stamp while it waits, else when it last left a CPU. Inlined: the tick
    /// called it once per tick.
    #[inline]
    fn last_scheduled(&self, ctx: &Ctx, t: TaskId) -> u64 {
        self.q.pos(t).map_or(ctx.task(t).last_ran, |p| p.1)
    }

    /// Tick mode's `wakeup_preempt`: does a waiting task of laxity `lc`, last scheduled
    /// at `cand_last`, preempt running `curr`?
    fn tick_preempts(&self, ctx: &Ctx, curr: TaskId, lc: i64, cand_last: u64) -> bool {
        let lr = progress::laxity(ctx, curr);
        if self.lrs {
            // The running job counts as scheduled now; a waiting job scheduled longer ago
            // wins a tie (a job put back at this very instant does not).
            lc < lr || (lc == lr && cand_last < ctx.now)
        } else {
            lc < lr
        }
    }

    /// Every ready job on `rq` (the waiting ones and the running one) is re-evaluated.
    /// Tick mode counts the running slot even when the CPU is idle or its task just
    /// stopped; exact mode counts only the jobs that are ready.
    #[inline(always)]
    fn count_rq(&self, ctx: &Ctx, rq: RqId) {
        let running = match self.exact {
            None => 1,
            Some(_) => u64::from(self.running_on(ctx, rq, rq).is_some()),
        };
        ctx.count_laxity(self.q.len(rq) as u64 + running);
    }

    /// Exact mode: is the comparison of `cand` with `curr` a pick-time one (pure LLF
    /// order) rather than the consequence of a crossing?
    fn fresh(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        self.arrived_at[cand] == ctx.now
            || self.started_at[curr] == ctx.now
            || ctx.task(cand).rq != ctx.task(curr).rq
    }

    /// Exact mode: should waiting `cand` take the CPU from `curr`?
    fn exact_preempts(&self, rule: TieRule, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        let (lc, lr) = (ctx.laxity_uncounted(cand), ctx.laxity_uncounted(curr));
        let (dc, dr) = (Self::deadline(ctx, cand), Self::deadline(ctx, curr));
        match rule {
            TieRule::Share => lc < lr,
            TieRule::Edf if self.fresh(ctx, curr, cand) => (lc, dc) < (lr, dr),
            TieRule::Edf => lc < lr && dc < dr,
        }
    }

    /// Exact mode: the first waiting task of `rq` (laxity order) allowed on `cpu` that
    /// should take it from `curr`. Only tasks whose laxity is at most `curr`'s can.
    fn preemptor(
        &self,
        rule: TieRule,
        ctx: &Ctx,
        rq: RqId,
        cpu: CpuId,
        curr: TaskId,
    ) -> Option<TaskId> {
        // Waiting laxity z − now ≤ curr's laxity  ⇔  z ≤ curr's laxity + now.
        let bound = (ctx.laxity_uncounted(curr) + ctx.now as i64).max(0) as u64;
        self.q.tree()?.rqs[rq]
            .iter()
            .take_while(|e| e.0 <= bound)
            .map(|e| e.2)
            .find(|&c| c != curr && ctx.allowed(c, cpu) && self.exact_preempts(rule, ctx, curr, c))
    }

    /// The task running on `cpu` from `rq`, if any.
    fn running_on(&self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        ctx.cpus[cpu].curr.filter(|&c| {
            let ts = ctx.task(c);
            ts.runnable && ts.rq == rq && ts.on_cpu == Some(cpu) && self.q.pos(c).is_none()
        })
    }
}

impl SchedClass for Llf {
    fn name(&self) -> &'static str {
        "llf"
    }

    fn never_yields(&self) -> bool {
        true // LLF preempts only for a waiting task of lower laxity
    }

    fn set_topology(&mut self, topology: Topology) {
        self.one_queue = topology.global_queue && topology.unrestricted;
    }

    fn remaining_measured(&mut self) {
        self.remaining_rises = true;
    }

    /// Tick mode reads running tasks' remaining times and laxities through
    /// `policy/progress.rs`, which adds the accounting still pending on their CPU (as
    /// ILLF): the engine need not account every CPU at every instant for it. Exact mode
    /// reads `overhead_left` and the records directly (`next_decision`), so it keeps the
    /// eager accounting.
    fn reads_progress(&self) -> bool {
        self.exact.is_some()
    }

    fn init(&mut self, nr_rqs: usize, nr_tasks: usize) {
        self.tick_head = None;
        self.q = match self.exact {
            Some(_) => LlfQueue::Tree(Keyed::new(nr_rqs, nr_tasks)),
            None if nr_tasks <= SORTED_MAX_TASKS => LlfQueue::Sorted(Sorted::new(nr_rqs, nr_tasks)),
            None => LlfQueue::Heap(KeyHeap::new(nr_rqs, nr_tasks)),
        };
        self.arrived_at = vec![Ns::MAX; nr_tasks];
        self.started_at = vec![Ns::MAX; nr_tasks];
        self.put = vec![None; nr_rqs];
    }

    fn enqueue_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId, _why: EnqueueReason) {
        self.tick_head = None;
        debug_assert!(self.class.is_none_or(|c| c == ctx.task(t).class));
        self.class = Some(ctx.task(t).class);
        let last = ctx.task(t).last_ran;
        self.queue(ctx, rq, t, last);
        // Read by exact mode only (`fresh`).
        if self.exact.is_some() {
            self.arrived_at[t] = ctx.now;
        }
        self.count_rq(ctx, rq);
    }

    fn dequeue_task(&mut self, _ctx: &Ctx, rq: RqId, t: TaskId) {
        self.tick_head = None;
        self.q.remove(rq, t);
    }

    fn peek_next_task(&self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        // Exact mode only: tick mode does not look for the CPU's running task (the
        // end-of-decision check peeks at every global decision).
        if let Some(rule) = self.exact {
            if let Some(curr) = self.running_on(ctx, rq, cpu) {
                if let Some(c) = self.preemptor(rule, ctx, rq, cpu, curr) {
                    return Some(c);
                }
            }
        }
        self.q.peek(ctx, rq, cpu)
    }

    fn pick_next_task(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.tick_head = None;
        let Some(rule) = self.exact else {
            return self.q.pop(ctx, rq, cpu);
        };
        // A task put back at this instant is still "current": it keeps the CPU unless
        // the rule gives it to another task.
        let prev = self.put[rq]
            .filter(|&(p, at)| at == ctx.now && self.q.pos(p).is_some() && ctx.allowed(p, cpu))
            .map(|(p, _)| p);
        let next = match prev {
            Some(p) => self.preemptor(rule, ctx, rq, cpu, p).unwrap_or(p),
            None => self.q.peek(ctx, rq, cpu)?,
        };
        self.q.remove(rq, next);
        self.started_at[next] = ctx.now;
        Some(next)
    }

    fn put_prev_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.tick_head = None;
        // It ran until now: it is the most recently scheduled.
        self.queue(ctx, rq, t, ctx.now);
        if self.exact.is_some() {
            self.put[rq] = Some((t, ctx.now));
        }
    }

    /// Tick mode's sorted queues: the put-backs' entries as `put_prev_task` makes them,
    /// then the picks and the insertions in one pass ([`Sorted::push_all_then_pop`]).
    fn put_prev_and_pick_all(
        &mut self,
        ctx: &Ctx,
        prev: &[TaskId],
        picks: usize,
        out: &mut Vec<TaskId>,
    ) -> bool {
        let (None, LlfQueue::Sorted(q)) = (self.exact, &mut self.q) else {
            return false;
        };
        self.tick_head = None;
        // In place (a field beside the queue), not moved out and back.
        let held = &mut self.held;
        for &t in prev {
            debug_assert!(q.pos[t].is_none(), "task {t} queued twice");
            let key = Self::zero_instant(ctx, t);
            // As `queue(.., ctx.now)`: it ran until now.
            let seq = if self.lrs {
                ctx.now
            } else {
                q.seq += 1;
                q.seq
            };
            q.pos[t] = Some((key, seq));
            held.push((key, seq, t));
        }
        let start = out.len();
        q.push_all_then_pop(0, held, picks, out);
        debug_assert!(out[start..].iter().all(|&t| (0..ctx.cpus.len()).all(|c| ctx.allowed(t, c))));
        true
    }

    fn task_stopped(&mut self, ctx: &Ctx, rq: RqId, _t: TaskId) {
        self.tick_head = None;
        self.count_rq(ctx, rq);
    }

    fn job_changed(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.tick_head = None;
        self.count_rq(ctx, rq);
        if self.exact.is_some() {
            self.started_at[t] = ctx.now;
        }
    }

    fn task_tick(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId, t: TaskId) -> bool {
        if self.exact.is_some() {
            return false; // no quantum: decisions come from next_decision
        }
        self.count_rq(ctx, rq);
        // The queue's first task, if allowed on `cpu`, is what the peek finds; the other
        // CPUs' ticks at this instant reuse it and its laxity.
        let cached = self
            .tick_head
            .filter(|h| h.at == ctx.now && h.rq == rq && ctx.allowed(h.task, cpu));
        let head = match cached {
            Some(h) => h,
            None => {
                let Some(c) = self.q.peek(ctx, rq, cpu) else {
                    self.tick_head = None;
                    return false;
                };
                let head = TickHead {
                    at: ctx.now,
                    rq,
                    task: c,
                    laxity: progress::laxity(ctx, c),
                    last: self.last_scheduled(ctx, c),
                };
                self.tick_head = match &self.q {
                    LlfQueue::Heap(h) if h.entries(rq)[0].2 == c => Some(head),
                    LlfQueue::Sorted(q) if q.head(rq).is_some_and(|e| e.2 == c) => Some(head),
                    _ => None,
                };
                head
            }
        };
        debug_assert_eq!(
            Some(head.task),
            self.q.peek(ctx, rq, cpu),
            "LLF: stale tick head"
        );
        debug_assert_eq!(
            (head.laxity, head.last),
            (progress::laxity(ctx, head.task), self.last_scheduled(ctx, head.task)),
            "LLF: stale tick head laxity"
        );
        self.tick_preempts(ctx, t, head.laxity, head.last)
    }

    /// Tick mode on one queue for all CPUs (global placement, no affinity restriction):
    /// every CPU's tick compares its task with the same first waiting task, so one call
    /// takes that task's laxity once and asks no hook per CPU.
    ///
    /// Not under the real runner's dispatcher (`remaining_rises`), as ILLF: there the
    /// engine's view of a running job is replaced between instants.
    fn ticks_all_at_once(&self) -> bool {
        self.exact.is_none() && self.one_queue && !self.remaining_rises
    }

    /// `task_tick` on every CPU running a runnable task of this class, in CPU order:
    /// the same laxity counts (each CPU's call counts the queue and its running slot)
    /// and the same answers (the first waiting task preempts where its laxity is below
    /// the running task's, LRS ties as `tick_preempts`).
    fn tick_all(&mut self, ctx: &Ctx, resched: &mut Vec<CpuId>) {
        let Some(mine) = self.class else {
            return; // nothing was ever queued: no CPU runs a task of this class
        };
        debug_assert!(self.ticks_all_at_once());
        let mut ticked = 0u64;
        let (now, lrs) = (ctx.now, self.lrs);
        // The first waiting task's laxity and stamp, taken at the first CPU ticked.
        let mut head: Option<Option<(i64, u64)>> = None;
        for (cpu, c) in ctx.cpus.iter().enumerate() {
            let Some(t) = c.curr else { continue };
            let ts = ctx.task(t);
            if !ts.runnable || ts.class != mine {
                continue;
            }
            ticked += 1;
            let h = *head.get_or_insert_with(|| {
                let first = self.q.peek(ctx, 0, cpu)?;
                Some((progress::laxity(ctx, first), self.last_scheduled(ctx, first)))
            });
            if cfg!(debug_assertions) {
                // The queue's first entry, read without counting a step.
                let first = match &self.q {
                    LlfQueue::Sorted(q) => q.head(0).map(|e| e.2),
                    LlfQueue::Heap(q) => q.entries(0).first().map(|e| e.2),
                    LlfQueue::Tree(_) => unreachable!("exact mode has no tick"),
                };
                let fresh =
                    first.map(|f| (progress::laxity(ctx, f), self.last_scheduled(ctx, f)));
                debug_assert_eq!(h, fresh, "LLF: tick_all's first waiting task");
            }
            let Some((lc, last)) = h else { continue };
            // `tick_preempts`, with the running laxity from the record in hand (not
            // indexed again) and the tie rule read once per tick.
            let lr = progress::laxity_running(now, c, ts);
            debug_assert_eq!(ts.on_cpu, Some(cpu));
            debug_assert_eq!(lr, progress::laxity(ctx, t));
            let preempts = lc < lr || (lrs && lc == lr && last < now);
            debug_assert_eq!(preempts, self.tick_preempts(ctx, t, lc, last));
            if preempts {
                resched.push(cpu);
            }
        }
        ctx.count_laxity(ticked * (self.q.len(0) as u64 + 1));
    }

    fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        if let Some(rule) = self.exact {
            return self.exact_preempts(rule, ctx, curr, cand);
        }
        let last = if self.lrs {
            self.last_scheduled(ctx, cand)
        } else {
            0 // not read
        };
        self.tick_preempts(ctx, curr, progress::laxity(ctx, cand), last)
    }

    /// Tick mode: `wakeup_preempt` as a key at this instant, so global placement finds the
    /// CPU to preempt in one pass instead of sorting the running CPUs at every tick. The
    /// laxity, biased to stay positive, times 4, plus a tie code:
    ///
    /// - waiting, last scheduled before now: 0 (beats a running task of equal laxity);
    /// - running: 2, or 3 if it was also scheduled (switched out) at this instant;
    /// - waiting, put back at this instant (or FIFO ties): 3 (beats no equal laxity).
    ///
    /// Between running tasks of equal laxity the sort (LRS ties) puts first the lowest CPU
    /// whose task last ran at this instant, else the highest CPU (a running task scheduled
    /// earlier "preempts" the one before it): code 3 over 2, and
    /// [`SchedClass::global_ties_to_last_cpu`] for code 2. Debug builds check every use
    /// against the sort (engine/global.rs).
    fn global_preempt_key(&self, ctx: &Ctx, t: TaskId) -> Option<u64> {
        if self.exact.is_some() {
            return None;
        }
        let biased = Self::biased_laxity(ctx, t);
        // Asked of every running CPU at a global decision: the queue position is read
        // once (a running task has none).
        let tie = match self.q.pos(t) {
            Some((_, last)) if self.lrs && last < ctx.now => 0,
            Some(_) => 3,
            None if self.lrs && ctx.task(t).last_ran >= ctx.now => 3,
            None => 2,
        };
        Some(biased * 4 + tie)
    }

    /// A running job's laxity is constant while it runs (its remaining time falls with
    /// the clock), or falls while its CPU pays switch or tick overhead (the clock moves,
    /// the job does not), and its tie code is 2 or 3: its key with tie code 3 bounds its
    /// key until its job completes or changes, which marks its CPU.
    fn global_key_bound(&self, ctx: &Ctx, t: TaskId) -> Option<u64> {
        if self.exact.is_some() {
            return None;
        }
        Some(Self::biased_laxity(ctx, t) * 4 + 3)
    }

    fn global_ties_to_last_cpu(&self, key: u64) -> bool {
        self.lrs && key % 4 == 2
    }

    fn uses_decision_timer(&self) -> bool {
        self.exact.is_some()
    }

    /// Exact mode: the first instant a waiting job that would take the CPU at a crossing
    /// has a laxity strictly below `curr`'s. `curr`'s laxity is constant while it runs,
    /// except that it falls during switch/tick overhead still to be paid (the job makes no
    /// progress then), by `overhead_left` at most.
    fn next_decision(&self, ctx: &Ctx, rq: RqId, cpu: CpuId, curr: TaskId) -> Option<Ns> {
        let rule = self.exact?;
        let lr = ctx.laxity_uncounted(curr);
        let dr = Self::deadline(ctx, curr);
        let overhead = ctx.cpus[cpu].overhead_left as i64;
        // Waiting laxity z − t < lr − overhead  ⇔  t > z − lr + overhead. The queue is in
        // z order, so the first eligible entry gives the earliest instant.
        let e = self.q.tree()?.rqs[rq].iter().find(|e| {
            e.2 != curr
                && e.0 != u64::MAX
                && ctx.allowed(e.2, cpu)
                && (rule == TieRule::Share || Self::deadline(ctx, e.2) < dr)
        })?;
        let at = e.0 as i64 - lr + overhead + 1;
        Some((at.max(ctx.now as i64 + 1)) as Ns)
    }

    fn queue_steps(&self) -> u64 {
        self.q.steps()
    }

    fn decision_due(&mut self, ctx: &Ctx, rq: RqId, _cpu: CpuId, _curr: TaskId) -> bool {
        self.tick_head = None;
        // A crossing is a decision point; the preemption test (peek + wakeup_preempt)
        // picks the task that takes the CPU.
        self.count_rq(ctx, rq);
        false
    }
}

/// Its entries in the simulator: the registry policies this file's class runs
/// (`schedlab_model::registry`), and how each is built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Llf,
    build,
}];

/// Tick mode with `scheduler.llf.tie`, or exact mode (per-CPU run queues only).
fn build(w: &schedlab_model::Workload) -> crate::registry::Built {
    let o = w.scheduler.llf;
    if !o.exact {
        return Ok(Box::new(Llf::new(o.lrs_tie)));
    }
    if w.scheduler.placement == schedlab_model::Placement::Global {
        return Err(crate::SimError::Unsupported(
            "llf mode exact needs per-CPU run queues: use placement linux or partitioned (global placement works with mode tick)".into(),
        ));
    }
    Ok(Box::new(Llf::exact(TieRule::Edf)))
}

#[cfg(test)]
mod tests {
    use super::Sorted;
    use crate::queue::Keyed;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Random pushes (with tail and explicit sequence numbers, few distinct keys: many
    /// ties), removals and pops (some under an affinity filter): the sorted queue always
    /// holds what the B-tree queue holds, gives its first entry, and the same sequence
    /// numbers.
    #[test]
    fn sorted_queue_is_the_btree_queue_s_order() {
        let mut rng = ChaCha8Rng::seed_from_u64(29);
        let (rqs, tasks) = (3, 64);
        let mut s = Sorted::new(rqs, tasks);
        let mut k = Keyed::new(rqs, tasks);
        let mut on = vec![None; tasks];
        let mut filtered = 0;
        for _ in 0..20_000 {
            let t = rng.random_range(0..tasks);
            match on[t] {
                None => {
                    let (rq, key) = (rng.random_range(0..rqs), rng.random_range(0..8u64));
                    if rng.random_bool(0.3) {
                        let seq = rng.random_range(0..4u64);
                        s.push_seq(rq, t, key, seq);
                        k.push_seq(rq, t, key, seq);
                    } else {
                        s.push(rq, t, key);
                        k.push(rq, t, key);
                    }
                    on[t] = Some(rq);
                }
                Some(rq) if rng.random_bool(0.4) => {
                    s.remove(rq, t);
                    k.remove(rq, t);
                    on[t] = None;
                }
                Some(rq) => {
                    let m = if rng.random_bool(0.3) { 3 } else { 1 };
                    filtered += usize::from(m == 3);
                    let want = k.rqs[rq].iter().map(|e| e.2).find(|x| x % m == 0);
                    let first = s.first_where(rq, |x| x % m == 0).map(|i| s.rqs[rq][i].2);
                    assert_eq!(first, want);
                    assert_eq!(s.pop_where(rq, |x| x % m == 0), want);
                    if let Some(w) = want {
                        k.remove(rq, w);
                        on[w] = None;
                    }
                }
            }
            for rq in 0..rqs {
                let sorted: Vec<_> = s.rqs[rq].iter().rev().copied().collect();
                let tree: Vec<_> = k.rqs[rq].iter().copied().collect();
                assert_eq!(sorted, tree);
                assert_eq!(
                    s.head(rq).map(|e| e.2),
                    k.rqs[rq].iter().next().map(|e| e.2)
                );
            }
            assert_eq!(s.pos, k.pos);
        }
        assert!(filtered > 1000, "{filtered} filtered pops");
    }

    /// A decision's put-backs and picks in one pass (`push_all_then_pop`): the same picks,
    /// queue and positions as pushing each put-back then popping one by one from the
    /// B-tree queue, with few distinct keys and one sequence number for all put-backs
    /// (LRS ties: put back at the same instant), so that ties fall to the task ids.
    #[test]
    fn batched_put_backs_and_picks_are_the_one_by_one_order() {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let tasks = 48;
        let mut s = Sorted::new(1, tasks);
        let mut k = Keyed::new(1, tasks);
        let mut on = vec![false; tasks];
        let (mut again, mut left) = (0, 0);
        for round in 0..5_000u64 {
            // Releases: a few pushes with older sequence numbers.
            for _ in 0..rng.random_range(0..4) {
                let t = rng.random_range(0..tasks);
                if !on[t] {
                    let (key, seq) = (rng.random_range(0..6u64), rng.random_range(0..round + 1));
                    s.push_seq(0, t, key, seq);
                    k.push_seq(0, t, key, seq);
                    on[t] = true;
                }
            }
            // Put-backs of tasks not queued, all stamped `round`, then picks.
            let mut held = Vec::new();
            for _ in 0..rng.random_range(0..8) {
                let t = rng.random_range(0..tasks);
                if !on[t] && !held.iter().any(|e: &(u64, u64, usize)| e.2 == t) {
                    let key = rng.random_range(0..6u64);
                    s.pos[t] = Some((key, round));
                    held.push((key, round, t));
                    k.push_seq(0, t, key, round);
                    on[t] = true;
                }
            }
            let put: Vec<usize> = held.iter().map(|e| e.2).collect();
            let picks = rng.random_range(0..10);
            let mut out = Vec::new();
            s.push_all_then_pop(0, &mut held, picks, &mut out);
            assert!(held.is_empty());
            let want: Vec<usize> = (0..picks)
                .map_while(|_| {
                    let t = k.rqs[0].iter().next()?.2;
                    k.remove(0, t);
                    Some(t)
                })
                .collect();
            assert_eq!(out, want, "round {round}");
            for &t in &out {
                on[t] = false;
                again += usize::from(put.contains(&t));
            }
            left += put.iter().filter(|t| !out.contains(t)).count();
            let sorted: Vec<_> = s.rqs[0].iter().rev().copied().collect();
            let tree: Vec<_> = k.rqs[0].iter().copied().collect();
            assert_eq!(sorted, tree, "round {round}");
            assert_eq!(s.pos, k.pos, "round {round}");
        }
        assert!(again > 1000 && left > 1000, "{again} picked again, {left} left");
    }
}
