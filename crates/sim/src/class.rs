//! The policy trait, shaped like the kernel's `struct sched_class`.
//!
//! The engine owns time, CPUs, accounting and tracing; a class owns only its run queues.
//! The running task is not in its class's queue (as with CFS): `pick_next_task` takes it
//! out, `put_prev_task` puts a still-runnable task back.

use crate::state::{CpuId, Ctx, RqId, TaskId};
use schedlab_model::Ns;

/// Why a task is being enqueued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnqueueReason {
    /// A job was released or a throttled reservation was replenished.
    Wakeup,
    /// Moved here from another run queue by push/pull.
    Migrated,
}

/// How the engine lays out a class's run queues, told to the class before
/// [`SchedClass::init`] so that it need not guess from the number of queues (one queue
/// could mean global placement or a single CPU).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Topology {
    /// The workload's placement of real-time work.
    pub placement: schedlab_model::Placement,
    /// CPUs in the system.
    pub nr_cpus: usize,
    /// Whether this class has one queue for all CPUs (global placement, BFS).
    pub global_queue: bool,
    /// Whether every task of this class may run on every CPU (no affinity restriction).
    pub unrestricted: bool,
    /// Whether the platform never charges a running task overhead (no context-switch,
    /// migration, preemption, tick or per-job cost, no idle-state exit latency, no kernel
    /// work): a running job then
    /// progresses at rate 1, so its laxity stays as it was while it runs.
    pub no_overhead: bool,
}

/// A scheduling class (kernel `struct sched_class`), one per policy file.
pub trait SchedClass {
    /// Policy name as in DESIGN.md.
    fn name(&self) -> &'static str;

    /// Called once before [`SchedClass::init`]: how this class's queues are laid out.
    fn set_topology(&mut self, _topology: Topology) {}

    /// Called once before the run: the number of run queues and tasks.
    fn init(&mut self, nr_rqs: usize, nr_tasks: usize);

    /// `select_task_rq`: the run queue (CPU) a waking task `t` should join, or `None`
    /// (the default) for the engine's placement rule — the kernel's
    /// `select_task_rq_dl`/`_rt`/`_fair` under `linux` placement, the task's CPU under
    /// `partitioned`. Not asked for classes with one queue for all CPUs. An answer the
    /// task's affinity forbids is ignored.
    fn select_task_rq(&self, _ctx: &Ctx, _t: TaskId, _prev_cpu: CpuId) -> Option<CpuId> {
        None
    }

    /// A job of `t` was released (LITMUS^RT's `release_at`), before it is queued or, if
    /// `t` still runs an earlier job, put in its backlog. The default does nothing.
    fn job_released(&mut self, _ctx: &Ctx, _t: TaskId) {}

    /// `t` completed a job (LITMUS^RT's `complete_job`), before it goes on with its next
    /// job or sleeps. The default does nothing.
    fn job_completed(&mut self, _ctx: &Ctx, _t: TaskId) {}

    /// `t` became runnable on `rq`.
    fn enqueue_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId, why: EnqueueReason);

    /// `t` leaves `rq` while waiting (migration away).
    fn dequeue_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId);

    /// The task `cpu` should run next from `rq`, without taking it out.
    fn peek_next_task(&self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId>;

    /// Take the task `cpu` runs next out of `rq` (it becomes current).
    fn pick_next_task(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId>;

    /// The current task `t` stops running but is still runnable: queue it again.
    fn put_prev_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId);

    /// `put_prev_task(t)` then `pick_next_task(cpu)`, as one step where the class can
    /// (a preemption: one heap operation instead of two).
    fn put_prev_and_pick(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId, t: TaskId) -> Option<TaskId> {
        self.put_prev_task(ctx, rq, t);
        self.pick_next_task(ctx, rq, cpu)
    }

    /// Global placement with one run queue (0) whose tasks may all run on every CPU:
    /// `put_prev_task(0, t)` for each `t` of `prev` in turn, then up to `picks`
    /// `pick_next_task`s (each as on any CPU, since every task may run on every CPU: a
    /// class with a key order takes the first task; they stop when the queue is empty),
    /// the picked tasks appended to `out` in order — in one call, so that a task put back
    /// and picked again at the same decision is never inserted. `false` (the default):
    /// the class did nothing, the caller makes the calls one by one.
    fn put_prev_and_pick_all(
        &mut self,
        _ctx: &Ctx,
        _prev: &[TaskId],
        _picks: usize,
        _out: &mut Vec<TaskId>,
    ) -> bool {
        false
    }

    /// The current task `t` stopped being runnable (job done and asleep, or throttled).
    fn task_stopped(&mut self, _ctx: &Ctx, _rq: RqId, _t: TaskId) {}

    /// The running task `t` goes on with a new job without sleeping: its next job was
    /// already released when the previous one completed (or is released at that instant).
    fn job_changed(&mut self, _ctx: &Ctx, _rq: RqId, _t: TaskId) {}

    /// Whether this class needs the periodic tick for the workload's tasks (`ctx` holds
    /// them, before the run). Answer `false` only when [`SchedClass::task_tick`] would
    /// neither change the class's state nor ask for a reschedule for any of them (EDF,
    /// the rt class without round-robin tasks): when no class, no fair task, no CBS
    /// depletion at ticks, no tick cost and no timer wheel needs it, the engine counts the
    /// ticks instead of simulating them (same results, fewer instants). Default `true`.
    fn uses_tick(&self, _ctx: &Ctx) -> bool {
        true
    }

    /// Whether `wakeup_preempt(a, b)` can be true when `b` is running too (on another CPU
    /// of a queue shared by all CPUs). Global placement sorts the running CPUs with it to
    /// find the lowest-priority one; `false` (ILLF: its rules only ever give a CPU to a
    /// waiting task) lets it skip the sort. Default `true`.
    fn running_tasks_preempt(&self) -> bool {
        true
    }

    /// Whether the class's hooks read the progress of running tasks — a job's `remaining`,
    /// `stats.cpu_time`, CBS runtime, a CPU's `overhead_left` or `last_update` (laxities
    /// and virtual runtimes do). Answer `false` only for classes that order tasks by what
    /// does not change while they run (EDF's deadlines, rt priorities): the engine then
    /// accounts a CPU only when something about it changes. Default `true`.
    fn reads_progress(&self) -> bool {
        true
    }

    /// The engine is driven from outside ([`crate::engine::external`]): between two
    /// decisions the caller replaces running jobs' remaining times with measured ones, so
    /// a running job's laxity may move either way while it runs, even on a platform with
    /// no overhead. A class that relies on it staying put turns that off. Called once,
    /// after `init`. Default: nothing.
    fn remaining_measured(&mut self) {}

    /// Scheduler tick on `cpu` while `t` runs; `true` asks for a reschedule.
    fn task_tick(&mut self, _ctx: &Ctx, _rq: RqId, _cpu: CpuId, _t: TaskId) -> bool {
        false
    }

    /// Whether the engine may tick this class with one call of [`SchedClass::tick_all`]
    /// instead of calling `task_tick` on every CPU running one of its tasks. The engine
    /// uses it only on a platform with no tick cost and no CBS, where a tick changes
    /// nothing of a CPU's accounting: it then brings up to date only the CPUs the class
    /// asks to reschedule (the others are accounted when next read, which gives the same
    /// sums). Asked after [`SchedClass::set_topology`], [`SchedClass::init`] and
    /// [`SchedClass::remaining_measured`], and kept: the answer must not change
    /// otherwise (debug builds check at each tick). Default `false`.
    fn ticks_all_at_once(&self) -> bool {
        false
    }

    /// The scheduler tick for every CPU running a runnable task of this class, for a
    /// class that answers [`SchedClass::ticks_all_at_once`]: exactly what calling
    /// `task_tick` on each such CPU in CPU order would do (nothing when none runs one),
    /// with the CPUs whose call would ask a reschedule appended to `resched`, in any
    /// order. Asked at every tick while the class has tasks. The default does nothing.
    fn tick_all(&mut self, _ctx: &Ctx, _resched: &mut Vec<CpuId>) {}

    /// Should the waiting task `cand` preempt the running task `curr`? Also used to find
    /// the lowest-priority running task (global placement, push/pull).
    fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool;

    /// A priority key for `t` such that `wakeup_preempt(curr, cand)` is exactly
    /// `key(cand) < key(curr)`, for classes whose preemption rule is such an order (EDF's
    /// deadline, the rt class's priority). With it, global placement finds the
    /// lowest-priority CPU in one pass instead of sorting CPUs with `wakeup_preempt`.
    /// `None` (the default) when the rule is not a key order (laxity rules with
    /// tie-breaks on history, ILLF's rules).
    fn preempt_key(&self, _ctx: &Ctx, _t: TaskId) -> Option<u64> {
        None
    }

    /// Whether [`SchedClass::preempt_key`] is always [`Ctx::sched_deadline`] (EDF): the
    /// engine may then read the key itself (the hook counted as called) instead of a
    /// dynamic call per key. Default `false`.
    fn key_is_sched_deadline(&self) -> bool {
        false
    }

    /// Whether the class's waiting tasks are nothing but an order by
    /// [`SchedClass::preempt_key`], first in first out among equal keys, that only
    /// `enqueue_task`, `pick_next_task`, `peek_next_task`, `put_prev_task` and
    /// `dequeue_task` read or change, and that enqueueing a woken task and picking it
    /// again changes nothing else (EDF). Then incremental global placement may hand a
    /// woken task straight to a free CPU without queueing and picking it: the same task
    /// on the same CPU, by the same order. Default `false`.
    fn plain_key_queue(&self) -> bool {
        false
    }

    /// Global placement's order at this instant: a waiting task takes the CPU of the
    /// running task with the largest key if its own key is smaller — what sorting the
    /// running CPUs worst-first with `wakeup_preempt` and taking the first one beaten
    /// finds, in one pass. Unlike [`SchedClass::preempt_key`] it may hold for the current
    /// instant only (a laxity, a tie-break on history), so nothing keeps it between
    /// instants. Defaults to `preempt_key`.
    fn global_preempt_key(&self, ctx: &Ctx, t: TaskId) -> Option<u64> {
        self.preempt_key(ctx, t)
    }

    /// An upper bound of [`SchedClass::global_preempt_key`] of the running task `t`, at
    /// this instant and at every later one while `t` keeps running on its CPU and nothing
    /// marks that CPU for a decision. With it, global placement keeps each running CPU's
    /// bound between decisions and asks no running CPU's key when the first waiting
    /// task's key is not below the largest bound (no running task can be beaten). `None`
    /// (the default): no such bound, every running CPU is asked at every decision.
    fn global_key_bound(&self, _ctx: &Ctx, _t: TaskId) -> Option<u64> {
        None
    }

    /// Among running tasks with the same largest [`SchedClass::global_preempt_key`],
    /// whether the one on the highest CPU is preempted first (default: the lowest).
    fn global_ties_to_last_cpu(&self, _key: u64) -> bool {
        false
    }

    /// Whether `t` (waking, or waiting to be pushed) preempts no running task of this
    /// class outside its own run queue: `wakeup_preempt(curr, t)` is false for every
    /// such `curr`, as the class can tell from `t`'s values alone. `find_later_cpu` then
    /// asks no running CPU (with per-CPU queues a CPU runs a task of its own queue).
    /// Default `false`: ask each.
    fn preempts_none_remote(&self, _ctx: &Ctx, _t: TaskId) -> bool {
        false
    }

    /// Global placement's preemption step for a class without a key order, with one run
    /// queue (0) for all CPUs and no affinity restriction: the first CPU, in CPU order,
    /// whose task in `assign` (a task of this class on every CPU that has one) the
    /// waiting task `peek_next_task(0, cpu)` offers would preempt (`wakeup_preempt`) —
    /// what asking each running CPU in turn finds, without asking each. `unsure` lists,
    /// in CPU order, the CPUs whose task in `assign` may differ from `ctx.cpus[cpu].curr`
    /// (changed by this decision); every other CPU's is its current task. `None` (the
    /// default): no shortcut, the engine asks every CPU.
    fn global_first_preempted(
        &self,
        _ctx: &Ctx,
        _assign: &[Option<TaskId>],
        _unsure: &[CpuId],
    ) -> Option<Option<CpuId>> {
        None
    }

    /// Steps the class's queue structures took so far (heap levels moved, entries or tree
    /// nodes looked at): [`crate::WorkStats::queue_steps`], for the work guard test. 0 for
    /// classes that do not count.
    fn queue_steps(&self) -> u64 {
        0
    }

    /// Whether this class implements [`SchedClass::next_decision`] (a class that does must
    /// say so: the engine asks `next_decision` only of classes that answer `true`, so that
    /// thousands of CPUs running timer-less classes cost nothing at each instant).
    fn uses_decision_timer(&self) -> bool {
        false
    }

    /// Absolute time (> `ctx.now`) at which this class wants `cpu`, running `curr` from
    /// `rq`, reconsidered although no release, completion or tick happens then (a
    /// kernel class would arm an hrtimer): e.g. the instant a waiting job's laxity
    /// crosses the running job's. Asked again after every instant the engine handles;
    /// `None` (the default) means no such instant. Time-driven policies (tick mode) keep
    /// the default.
    fn next_decision(&self, _ctx: &Ctx, _rq: RqId, _cpu: CpuId, _curr: TaskId) -> Option<Ns> {
        None
    }

    /// [`SchedClass::next_decision`] for a `cpu` that runs no task of this class (idle, or
    /// running a lower class): a class whose decisions do not wait for a running task (a
    /// server's budget running out in a virtual schedule) arms the CPU's timer with it;
    /// when it fires the CPU is marked for a decision (the running task's class is not
    /// asked). Asked only of classes that use decision timers; `None` (the default)
    /// means no such instant.
    fn next_decision_idle(&self, _ctx: &Ctx, _rq: RqId, _cpu: CpuId) -> Option<Ns> {
        None
    }

    /// Whether any release may change which tasks run, even the release of a job that
    /// waits behind its task's current one (RUN: a release replenishes every server above
    /// the task): the engine then takes a decision at every release of the class's tasks.
    /// Default `false` (a release matters only through the task it wakes).
    fn release_reselects(&self) -> bool {
        false
    }

    /// Whether the running task `t` must give up its CPU at this decision although no
    /// waiting task preempts it (RUN: its server stopped executing). Global placement asks
    /// it of every running task of the class at each decision; the default is `false`.
    fn must_yield(&self, _ctx: &Ctx, _t: TaskId) -> bool {
        false
    }

    /// Whether [`SchedClass::must_yield`] answers `false` for every task, always (the
    /// default's answer). Global placement then asks nothing of a CPU nothing happened to
    /// since the last decision, and a decision costs the CPUs that changed. Default
    /// `false` (the engine asks every running task); a class that leaves `must_yield` as
    /// it is may answer `true`.
    fn never_yields(&self) -> bool {
        false
    }

    /// Whether the class's preemption test under global placement follows a priority
    /// order (the default), so that a global decision's steps end by themselves. A class
    /// whose rules are not an order (ILLF: Algorithm 2's swaps) answers `false`: a
    /// waiting task then does not preempt a CPU whose task was picked in the same
    /// decision (each CPU decides once per instant, as a CPU reschedules once), and the
    /// steps cannot hand CPUs round in a cycle until the loop's safety bound decides.
    fn preempts_in_order(&self) -> bool {
        true
    }

    /// The instant announced by [`SchedClass::next_decision`] has come (and `curr` did not
    /// complete then). The engine marks `cpu` as needing a decision; return `true` to
    /// also force a reschedule (`need_resched`: `curr` is put back and a task picked), or
    /// `false` to let the usual preemption test (`peek_next_task` + `wakeup_preempt`)
    /// decide, which lets global placement preempt the lowest-priority CPU instead.
    fn decision_due(&mut self, _ctx: &Ctx, _rq: RqId, _cpu: CpuId, _curr: TaskId) -> bool {
        true
    }

    /// The scheduling quantum of a quantum-driven class (Pfair and boundary-fair
    /// schedulers), or `None` (the default). With `Some(q)` the engine calls
    /// [`SchedClass::quantum_boundary`] at every multiple of `q` (after the releases of
    /// that instant), then asks [`SchedClass::decision_due`] of every CPU running one of
    /// the class's tasks and reconsiders every CPU.
    fn quantum(&self) -> Option<Ns> {
        None
    }

    /// A quantum boundary (`ctx.now` is a multiple of [`SchedClass::quantum`]): the class
    /// decides what runs until the next one. The default does nothing.
    fn quantum_boundary(&mut self, _ctx: &Ctx) {}

    /// Whether this class itself decides, at each global decision, which of its running
    /// tasks keep their CPUs ([`SchedClass::keeps_cpu`]): schedulers that plan the set of
    /// running jobs at boundaries (LLREF, DP-WRAP, ...), where a task leaves its CPU when
    /// its share of the slice is used up even if no other task is waiting. Default `false`.
    fn decides_running(&self) -> bool {
        false
    }

    /// Global placement, for classes that answer [`SchedClass::decides_running`]: whether
    /// `curr` (runnable, of this class) goes on running on `cpu`; `false` puts it back as
    /// `need_resched` does. Asked of every CPU running such a task, in CPU order, at the
    /// start of every global decision and before any pick.
    fn keeps_cpu(&mut self, _ctx: &Ctx, _cpu: CpuId, _curr: TaskId) -> bool {
        true
    }

    /// The task's virtual runtime, for classes that keep one (reported and sampled).
    fn vruntime(&self, _ctx: &Ctx, _t: TaskId) -> Option<i64> {
        None
    }

    /// Check the class's own bookkeeping against the engine's state (run by the
    /// invariant checker after every instant, `simulate --check`): the first
    /// inconsistency found. The default checks nothing.
    fn check(&self, _ctx: &Ctx) -> Result<(), String> {
        Ok(())
    }

    /// What the class built from the task set (RUN's reduction tree, U-EDF's allotments,
    /// DP-Wrap's slice layout, EDHS's split tasks), as JSON for the result's
    /// `scheduler_structure`; `names` are the workload's task names, by task index. Asked
    /// once, at the end of the first instant at which the engine took decisions (after
    /// them); it must not change the class's state, so that asking it changes no result.
    /// `None` (the default): nothing to report.
    fn report(&self, _ctx: &Ctx, _names: &[String]) -> Option<serde_json::Value> {
        None
    }
}
