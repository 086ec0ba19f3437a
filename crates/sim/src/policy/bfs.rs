//! `bfs`: Con Kolivas' Brain Fuck Scheduler, the bitmap design of BFS ≤ 0.4xx (modelled on
//! kernel/sched/bfs.c v0.440, as seed 001's slides describe it).
//!
//! **One run queue for all CPUs** (the engine gives this class a single queue and schedules
//! it with its global path), split into priority levels with a bitmap of the non-empty ones:
//! `SCHED_ISO` ([`TaskClass::Iso`]), `SCHED_NORMAL`/`SCHED_BATCH`, `SCHED_IDLEPRIO`
//! ([`TaskClass::Idle`]). A CPU takes the first non-empty level (bitmap) and scans it, O(n),
//! for the **earliest virtual deadline** among the tasks allowed on it
//! (`earliest_deadline_task`); ties go to the task queued first. (The model finds the same
//! task in O(log n), each level kept as ordered sets: policy/bfs_queue.rs.)
//!
//! - **Virtual deadline** = `niffies + prio_deadline_diff(nice)`, where
//!   `prio_deadline_diff = prio_ratios[nice + 20] × rr_interval × (MS_TO_NS(1) / 128)`,
//!   `prio_ratios[0] = 128`, `prio_ratios[i] = prio_ratios[i − 1] × 11 / 10` and BFS's
//!   `MS_TO_NS(x) = x << 20` (rr_interval 6: nice −20 → 6,291,456 ns, nice 0 → 41,091,072 ns,
//!   nice 19 → 250,134,528 ns). `niffies` is the simulated clock: it is exact and monotonic,
//!   so BFS's jiffy-based sanity clamp has nothing to do; it starts at 0 like BFS's at boot.
//!   `rr_interval` is used in whole milliseconds, as the BFS sysctl is.
//! - **Time slice** `timeslice() = rr_interval << 10` BFS "µs" = 6144 at 6 ms. BFS charges
//!   it with `NS_TO_US(ns) = ns >> 10`, so one such µs is 1024 ns and the slice lasts
//!   `rr_interval << 20` ns = 6,291,456 ns, exactly the nice −20 deadline offset; the model
//!   charges it in ns with that unit. CPU time counted by the engine (switch and tick costs
//!   included) is charged, as BFS charges the rq clock.
//! - **The slice is refilled, and a new deadline set, only when it is used up**
//!   (`time_slice_expired`): `check_deadline` when a task is descheduled, with fewer than
//!   `RESCHED_US` = 100 BFS µs left counting as used up; `SCHED_BATCH` tasks get a new slice
//!   and deadline every time they are descheduled. Expiry is **exact**: the class asks the
//!   engine for a decision at the instant the running task's slice runs out
//!   ([`SchedClass::next_decision`]), as the hrtimer expiry of later BFS releases does, not
//!   at the next tick. Deadline and remaining slice are **kept across sleep**.
//! - **A new task** starts with a full slice and a fresh deadline (the `wake_up_new_task`
//!   case of a parent with too little slice left to share).
//! - **Wake-up**: the woken task runs on an idle CPU, else takes the CPU whose running task
//!   has the latest deadline (of a lower level first) if its own deadline is earlier
//!   (`try_preempt` / `can_preempt`). The engine realises this with [`Bfs::wakeup_preempt`]
//!   as a consistent (level, deadline) comparison. Among idle CPUs the engine takes the
//!   lowest-numbered one; BFS ranks idle CPUs by cache distance (`resched_best_idle`).
//! - **Cache locality** (`locality: true`, BFS 0.43x rule): a *sticky* task — descheduled
//!   while still runnable with other tasks waiting (`swap_sticky`; one per CPU, the previous
//!   one is unstuck) — is compared on another CPU with `deadline << locality`. This model's
//!   only topology is "every CPU is another core sharing the cache", BFS's locality 2, so
//!   the shift is 2 (×4). As in BFS the shift applies to the absolute deadline, so the bias
//!   grows with time since boot (here since the start of the run). A task is unstuck when it
//!   is picked, sleeps or wakes. Not modelled: frequency-scaling CPUs skipping sticky tasks,
//!   SMT siblings and NUMA (locality 1, 3, 4), unsticking when an RT task takes the CPU.
//! - **SCHED_ISO**: a level above NORMAL, round robin by deadline at rr_interval (so ISO
//!   tasks preempt NORMAL ones), until ISO tasks have used more than `iso_cpu` = 70% of all
//!   CPUs over a rolling ~5 s: then (`iso_refractory`) ISO tasks are queued at the NORMAL
//!   level, and one running at ISO level has its slice zeroed at the next tick. The budget
//!   is counted per CPU tick in BFS's integer units (`iso_ticks`, +100 for a tick running an
//!   ISO task, `ISO_PERIOD` = 5 × HZ × cpus + 1) as the decaying average of later BFS and
//!   MuQSS (every CPU tick multiplies by `(ISO_PERIOD − 1) / ISO_PERIOD`), whose steady
//!   state is exactly the ISO share, so the 70% holds; v0.440 decays only on non-ISO ticks,
//!   which trips already at a sustained ≈41%. The flag clears below
//!   `ISO_PERIOD × (70 × 115 / 128)` (62%, BFS's hysteresis). Ticks are accounted when the
//!   class next runs a hook, in CPU order, from the CPUs' state at each tick; with `hz: 0`
//!   the budget uses 1000 Hz. Not counted: real-time tasks (BFS counts them as ISO ticks).
//! - **SCHED_IDLEPRIO**: the lowest level, runs only when nothing else is runnable on a CPU,
//!   never preempts and is preempted by any other level.
//! - **Real-time tasks** (fifo/rr) stay in the engine's rt class, above this one. BFS
//!   queues them in its 100 static RT levels of the same global queue, which orders them
//!   the same way (strict priority, FIFO within a level); only their placement differs
//!   (the rt class's push/pull instead of BFS's one queue).

use super::bfs_queue::BfsQueue;
use crate::class::{EnqueueReason, SchedClass};
use crate::state::{CpuId, Ctx, RqId, TaskId};
use schedlab_model::{BfsParams, Ns, TaskClass};

/// Number of nice levels (`PRIO_RANGE`).
pub const PRIO_RANGE: usize = 40;

/// `prio_ratios`: the relative deadline length of each nice level, index `nice + 20`.
pub const PRIO_RATIOS: [u64; PRIO_RANGE] = prio_ratios();

const fn prio_ratios() -> [u64; PRIO_RANGE] {
    let mut r = [0u64; PRIO_RANGE];
    r[0] = 128;
    let mut i = 1;
    while i < PRIO_RANGE {
        r[i] = r[i - 1] * 11 / 10;
        i += 1;
    }
    r
}

/// BFS's `MS_TO_NS(x) = x << 20`: a BFS millisecond is 2^20 ns.
pub const fn ms_to_ns(ms: u64) -> Ns {
    ms << 20
}

/// One BFS "microsecond" (`NS_TO_US(x) = x >> 10`) in ns.
pub const BFS_US: Ns = 1 << 10;

/// `RESCHED_US`: a slice with less than this left counts as used up (100 BFS µs, in ns).
pub const RESCHED_NS: Ns = 100 * BFS_US;

/// `sched_iso_cpu`: percentage of all CPUs SCHED_ISO tasks may use over ~5 s.
pub const ISO_CPU: u64 = 70;

/// Locality distance of another core sharing the cache (`cpu_locality` = 2).
const LOCALITY_SHARED_CACHE: u32 = 2;

/// `prio_deadline_diff`: the virtual-deadline offset of nice level `nice` (ns).
pub fn prio_deadline_diff(nice: i8, rr_interval_ms: u64) -> Ns {
    let idx = (nice.clamp(-20, 19) + 20) as usize;
    PRIO_RATIOS[idx] * rr_interval_ms * (ms_to_ns(1) / 128)
}

/// `timeslice()` in ns: `rr_interval << 10` BFS µs of 1024 ns each.
pub fn timeslice_ns(rr_interval_ms: u64) -> Ns {
    (rr_interval_ms << 10) * BFS_US
}

/// Priority levels of the non-RT part of BFS's queue, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// `ISO_PRIO`.
    Iso = 0,
    /// `NORMAL_PRIO` (SCHED_NORMAL and SCHED_BATCH, and demoted SCHED_ISO).
    Normal = 1,
    /// `IDLE_PRIO`.
    Idle = 2,
}

/// The SCHED_ISO budget (`iso_ticks`, `iso_refractory`).
#[derive(Debug, Clone)]
struct IsoBudget {
    /// `ISO_PERIOD` = 5 × HZ × cpus + 1, in CPU ticks.
    period: u64,
    tick_ns: Ns,
    ticks: u64,
    refractory: bool,
    /// Next tick instant not yet accounted.
    next_tick: Ns,
    /// Per CPU: an ISO task is assigned to it.
    on_cpu: Vec<bool>,
}

impl IsoBudget {
    fn new(cpus: usize, hz: u32) -> IsoBudget {
        let hz = if hz == 0 { 1000 } else { hz as u64 };
        let tick_ns = (1_000_000_000 / hz).max(1);
        IsoBudget {
            period: 5 * hz * cpus.max(1) as u64 + 1,
            tick_ns,
            ticks: 0,
            refractory: false,
            next_tick: tick_ns,
            on_cpu: vec![false; cpus.max(1)],
        }
    }

    fn iso_tick(&mut self) {
        let p = self.period;
        self.ticks = self.ticks * (p - 1) / p + 100;
        if self.ticks > p * ISO_CPU {
            self.refractory = true;
            self.ticks = self.ticks.min(p * 100);
        }
    }

    fn no_iso_tick(&mut self) {
        let p = self.period;
        if self.ticks > 0 || self.refractory {
            self.ticks = self.ticks * (p - 1) / p;
            if self.ticks < p * (ISO_CPU * 115 / 128) {
                self.refractory = false;
            }
        }
    }

    /// Account every tick up to and including `now`, from the CPUs' current state.
    fn advance(&mut self, now: Ns) {
        while self.next_tick <= now {
            if self.ticks == 0 && !self.refractory && !self.on_cpu.contains(&true) {
                // Nothing to count until an ISO task runs: jump past `now`.
                let n = (now - self.next_tick) / self.tick_ns + 1;
                self.next_tick += n * self.tick_ns;
                break;
            }
            for cpu in 0..self.on_cpu.len() {
                if self.on_cpu[cpu] && !self.refractory {
                    self.iso_tick();
                } else {
                    self.no_iso_tick();
                }
            }
            self.next_tick += self.tick_ns;
        }
    }
}

/// The Brain Fuck Scheduler.
pub struct Bfs {
    rr_ms: u64,
    locality: bool,
    ncpus: usize,
    /// `grq.queue`: one list per level, kept as ordered sets (what
    /// `earliest_deadline_task` scans for, found in O(log n)).
    grq: BfsQueue,
    /// Virtual deadline (absolute niffies, ns).
    deadline: Vec<Ns>,
    /// Remaining time slice (ns; negative after an overrun).
    slice: Vec<i64>,
    /// CPU time of the task when its slice was last charged.
    charged_at: Vec<Ns>,
    /// Whether the task ever got a slice and deadline.
    placed: Vec<bool>,
    /// Level the task was queued at (the running task keeps it, like `rq_prio`).
    level: Vec<Level>,
    queued: Vec<bool>,
    /// CPU the task was picked for, while it is current.
    running_on: Vec<Option<CpuId>>,
    /// Per CPU: the task of this class assigned to it.
    cpu_task: Vec<Option<TaskId>>,
    /// Sticky flag, with the CPU the task last ran on (`task_cpu`).
    sticky: Vec<Option<CpuId>>,
    /// Sticky state before the last pick (restored if the pick is undone in the same
    /// instant, before the task ever ran there).
    sticky_before_pick: Vec<Option<CpuId>>,
    /// Per CPU: `rq->sticky_task`.
    sticky_task: Vec<Option<TaskId>>,
    iso: IsoBudget,
}

impl Bfs {
    /// BFS with the given tunables on `cpus` CPUs at `hz` ticks per second.
    pub fn new(p: BfsParams, cpus: usize, hz: u32) -> Bfs {
        Bfs {
            rr_ms: (p.rr_interval / 1_000_000).max(1),
            locality: p.locality,
            ncpus: cpus.max(1),
            grq: BfsQueue::default(),
            deadline: Vec::new(),
            slice: Vec::new(),
            charged_at: Vec::new(),
            placed: Vec::new(),
            level: Vec::new(),
            queued: Vec::new(),
            running_on: Vec::new(),
            cpu_task: vec![None; cpus.max(1)],
            sticky: Vec::new(),
            sticky_before_pick: Vec::new(),
            sticky_task: vec![None; cpus.max(1)],
            iso: IsoBudget::new(cpus, hz),
        }
    }

    /// Virtual deadline of `t` (absolute, ns).
    pub fn deadline(&self, t: TaskId) -> Ns {
        self.deadline[t]
    }

    /// Remaining time slice of `t` as last charged (ns).
    pub fn slice_left(&self, t: TaskId) -> i64 {
        self.slice[t]
    }

    /// Whether SCHED_ISO tasks are currently demoted (`iso_refractory`).
    pub fn iso_refractory(&self) -> bool {
        self.iso.refractory
    }

    /// The level `t` is queued at.
    pub fn level(&self, t: TaskId) -> Level {
        self.level[t]
    }

    /// Whether `t` is sticky (and to which CPU).
    pub fn sticky(&self, t: TaskId) -> Option<CpuId> {
        self.sticky[t]
    }

    /// `time_slice_expired`: a full slice and a new deadline from now.
    fn time_slice_expired(&mut self, ctx: &Ctx, t: TaskId) {
        debug_assert!(
            !self.queued[t],
            "the queue files a waiting task by its deadline"
        );
        self.slice[t] = timeslice_ns(self.rr_ms) as i64;
        self.deadline[t] = ctx.now + prio_deadline_diff(ctx.task(t).nice, self.rr_ms);
    }

    /// `check_deadline`.
    fn check_deadline(&mut self, ctx: &Ctx, t: TaskId) {
        if self.slice[t] < RESCHED_NS as i64 || ctx.task(t).kind == TaskClass::Batch {
            self.time_slice_expired(ctx, t);
        }
    }

    /// Charge the CPU time `t` used since last charged to its slice.
    fn charge(&mut self, ctx: &Ctx, t: TaskId) {
        let sum = ctx.task(t).stats.cpu_time;
        self.slice[t] -= sum.saturating_sub(self.charged_at[t]) as i64;
        self.charged_at[t] = sum;
    }

    /// The slice `t` has left now, if it is current.
    fn slice_now(&self, ctx: &Ctx, t: TaskId) -> i64 {
        let used = ctx
            .task(t)
            .stats
            .cpu_time
            .saturating_sub(self.charged_at[t]);
        self.slice[t] - used as i64
    }

    /// The level `t` is queued at now (`enqueue_task`: ISO only while not refractory).
    fn level_for(&self, ctx: &Ctx, t: TaskId) -> Level {
        match ctx.task(t).kind {
            TaskClass::Iso if !self.iso.refractory => Level::Iso,
            TaskClass::Idle => Level::Idle,
            _ => Level::Normal,
        }
    }

    fn insert(&mut self, ctx: &Ctx, t: TaskId) {
        if self.queued[t] {
            return;
        }
        let l = self.level_for(ctx, t);
        self.level[t] = l;
        self.grq.push(t, l as usize, self.deadline[t], self.home(t));
        self.queued[t] = true;
    }

    fn remove(&mut self, t: TaskId) {
        if !self.queued[t] {
            return;
        }
        self.grq.remove(t);
        self.queued[t] = false;
    }

    /// The CPU where `t` is compared by its plain deadline, if only there (sticky, with
    /// locality on).
    fn home(&self, t: TaskId) -> Option<CpuId> {
        self.sticky[t].filter(|_| self.locality)
    }

    /// Set `t`'s sticky flag, refiling it in the queue if it waits there.
    fn set_sticky(&mut self, t: TaskId, to: Option<CpuId>) {
        self.sticky[t] = to;
        if self.queued[t] {
            self.grq.set_home(t, self.home(t));
        }
    }

    /// The deadline a waiting `t` is compared with on `cpu`: shifted by the cache distance
    /// if it is sticky to another CPU.
    fn key_on(&self, t: TaskId, cpu: CpuId) -> Ns {
        let dl = self.deadline[t];
        match self.sticky[t] {
            Some(home) if self.locality && home != cpu => dl
                .checked_shl(LOCALITY_SHARED_CACHE)
                .filter(|&s| s >> LOCALITY_SHARED_CACHE == dl)
                .unwrap_or(Ns::MAX),
            _ => dl,
        }
    }

    /// `swap_sticky`: `t`, descheduled from `cpu` while runnable, becomes its sticky task.
    fn swap_sticky(&mut self, cpu: CpuId, t: TaskId) {
        if let Some(old) = self.sticky_task[cpu] {
            if old == t {
                self.set_sticky(t, Some(cpu));
                return;
            }
            if self.sticky[old] == Some(cpu) {
                self.set_sticky(old, None);
            }
        }
        self.set_sticky(t, Some(cpu));
        self.sticky_task[cpu] = Some(t);
    }

    /// `t` stops being current on its CPU.
    fn unassign(&mut self, t: TaskId) {
        if let Some(c) = self.running_on[t].take() {
            if self.cpu_task[c] == Some(t) {
                self.cpu_task[c] = None;
                self.iso.on_cpu[c] = false;
            }
        }
    }

    /// `t` becomes current on `cpu`.
    fn assign(&mut self, ctx: &Ctx, t: TaskId, cpu: CpuId) {
        self.running_on[t] = Some(cpu);
        self.charged_at[t] = ctx.task(t).stats.cpu_time;
        if cpu < self.ncpus {
            self.cpu_task[cpu] = Some(t);
            self.iso.on_cpu[cpu] = ctx.task(t).kind == TaskClass::Iso;
        }
    }
}

impl SchedClass for Bfs {
    fn name(&self) -> &'static str {
        "bfs"
    }

    fn init(&mut self, _nr_rqs: usize, nr_tasks: usize) {
        self.grq = BfsQueue::new(nr_tasks, LOCALITY_SHARED_CACHE);
        self.deadline = vec![0; nr_tasks];
        self.slice = vec![0; nr_tasks];
        self.charged_at = vec![0; nr_tasks];
        self.placed = vec![false; nr_tasks];
        self.level = vec![Level::Normal; nr_tasks];
        self.queued = vec![false; nr_tasks];
        self.running_on = vec![None; nr_tasks];
        self.sticky = vec![None; nr_tasks];
        self.sticky_before_pick = vec![None; nr_tasks];
    }

    fn enqueue_task(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId, why: EnqueueReason) {
        self.iso.advance(ctx.now);
        if !self.placed[t] {
            self.placed[t] = true;
            self.time_slice_expired(ctx, t);
        }
        if why == EnqueueReason::Wakeup {
            // try_preempt: a woken task is never sticky. Deadline and slice are kept.
            self.set_sticky(t, None);
        }
        self.insert(ctx, t);
    }

    fn dequeue_task(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.remove(t);
    }

    fn peek_next_task(&self, ctx: &Ctx, _rq: RqId, cpu: CpuId) -> Option<TaskId> {
        // earliest_deadline_task: the first level (bitmap) with a task allowed here, then
        // the earliest (locality-adjusted) deadline in it, the first queued on ties.
        self.grq.first_for(cpu, |t| ctx.allowed(t, cpu))
    }

    fn pick_next_task(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        let t = self.peek_next_task(ctx, rq, cpu)?;
        self.iso.advance(ctx.now);
        self.remove(t);
        // take_task: unstick (remembered in case the pick is undone before it runs).
        self.sticky_before_pick[t] = self.sticky[t];
        self.set_sticky(t, None);
        self.assign(ctx, t, cpu);
        Some(t)
    }

    fn put_prev_task(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.iso.advance(ctx.now);
        self.charge(ctx, t);
        self.unassign(t);
        match ctx.task(t).on_cpu {
            Some(cpu) => {
                // It ran on `cpu` and is descheduled while runnable (schedule()).
                self.check_deadline(ctx, t);
                let others_waiting = !self.grq.is_empty();
                if others_waiting && cpu < self.ncpus {
                    self.swap_sticky(cpu, t);
                }
            }
            None => {
                // Picked and put back in the same instant without running: as it was.
                self.set_sticky(t, self.sticky_before_pick[t]);
            }
        }
        self.insert(ctx, t);
    }

    fn task_stopped(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.iso.advance(ctx.now);
        self.charge(ctx, t);
        self.unassign(t);
        self.remove(t);
        // schedule(): check_deadline(prev) also for a task going to sleep; deactivate_task
        // unsticks it.
        self.check_deadline(ctx, t);
        self.set_sticky(t, None);
    }

    fn job_changed(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId) {
        // The current task goes on without sleeping (its next burst began at once).
        if self.running_on[t].is_none() {
            if let Some(cpu) = ctx.task(t).on_cpu {
                self.iso.advance(ctx.now);
                self.remove(t);
                self.assign(ctx, t, cpu);
            }
        }
    }

    fn task_tick(&mut self, ctx: &Ctx, _rq: RqId, _cpu: CpuId, t: TaskId) -> bool {
        self.iso.advance(ctx.now);
        if ctx.task(t).kind == TaskClass::Iso && self.level[t] == Level::Iso && self.iso.refractory
        {
            // The ISO budget is spent: zero the slice so that it requeues as NORMAL.
            self.charge(ctx, t);
            self.slice[t] = 0;
            return true;
        }
        false
    }

    fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        let _ = ctx;
        let (lc, lw) = (self.level[curr], self.level[cand]);
        if lw != lc {
            return lw < lc;
        }
        if lw == Level::Idle {
            // IDLEPRIO tasks never preempt each other.
            return false;
        }
        let cand_key = match (self.running_on[cand], self.running_on[curr]) {
            (None, Some(cpu)) => self.key_on(cand, cpu),
            _ => self.deadline[cand],
        };
        cand_key < self.deadline[curr]
    }

    fn uses_decision_timer(&self) -> bool {
        true
    }

    fn next_decision(&self, ctx: &Ctx, _rq: RqId, _cpu: CpuId, curr: TaskId) -> Option<Ns> {
        // The instant the running task's slice runs out (exact expiry).
        let left = self.slice_now(ctx, curr).max(1) as Ns;
        Some(ctx.now.saturating_add(left))
    }

    fn decision_due(&mut self, ctx: &Ctx, _rq: RqId, _cpu: CpuId, curr: TaskId) -> bool {
        // Slice used up: reschedule; put_prev_task refills it with a new deadline.
        self.slice_now(ctx, curr) < RESCHED_NS as i64
    }

    fn vruntime(&self, _ctx: &Ctx, _t: TaskId) -> Option<i64> {
        None
    }

    fn queue_steps(&self) -> u64 {
        self.grq.steps()
    }
}

/// Its entries in the simulator: the registry policies this file's class runs
/// (`schedlab_model::registry`), and how each is built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Bfs,
    build: |w| {
        Ok(Box::new(Bfs::new(
            w.scheduler.bfs,
            w.platform.cpus,
            w.platform.hz,
        )))
    },
}];
