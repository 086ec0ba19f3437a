//! `cfs`: the Completely Fair Scheduler as in kernel/sched/fair.c up to v6.5.
//!
//! Per run queue an rb-tree of waiting tasks ordered by vruntime (the running task is
//! outside it, as in the kernel); `min_vruntime` only moves forward. vruntime advances by
//! `delta × NICE_0_LOAD / weight` with the kernel's fixed point (`2^32 / weight`).
//! - slice = `period(nr) × weight / rq load`, period = `latency`, or `nr × min_granularity`
//!   beyond `latency / min_granularity` tasks;
//! - tick preemption (`check_preempt_tick`): after the slice, or after `min_granularity`
//!   when the leftmost waiting task is more than a slice of vruntime behind;
//! - wake-up preemption: when the woken task's vruntime is more than `wakeup_granularity`
//!   (scaled to its weight) below the current one's; SCHED_IDLE current tasks always
//!   yield to others, woken SCHED_BATCH/SCHED_IDLE tasks never preempt;
//! - placement (`place_entity`): a new task starts one vslice after `min_vruntime`
//!   (START_DEBIT); a woken task at `min_vruntime − latency/2` at the earliest
//!   (GENTLE_FAIR_SLEEPERS); a task moving to another queue keeps its distance to
//!   `min_vruntime`.
//!
//! Weights come from the workload's table (`scheduler.weights`), so the same code runs
//! the seed-004 tables.

use crate::class::{EnqueueReason, SchedClass};
use crate::state::{CpuId, Ctx, RqId, TaskId};
use schedlab_model::weights::NICE_0_LOAD;
use schedlab_model::{CfsParams, TaskClass, WeightTable};
use std::collections::BTreeSet;

#[derive(Debug, Clone, Default)]
struct CfsRq {
    tree: BTreeSet<(i64, u64, TaskId)>,
    min_vruntime: i64,
    curr: Option<TaskId>,
    /// Runnable tasks (queued + current) and their total weight.
    nr: usize,
    load: u64,
}

/// `delta × NICE_0_LOAD / weight` in the kernel's fixed point (`__calc_delta`).
pub fn calc_delta_fair(delta: u64, weight: u64) -> u64 {
    if weight == NICE_0_LOAD {
        return delta;
    }
    let inv = WeightTable::inv_weight(weight) as u128;
    // Saturates instead of wrapping for deltas near 2^64 ns.
    u64::try_from((delta as u128 * NICE_0_LOAD as u128 * inv) >> 32).unwrap_or(u64::MAX)
}

/// [`calc_delta_fair`] as a vruntime step: saturates at `i64::MAX` instead of turning
/// negative (virtual times are signed, as the kernel compares them).
pub fn vdelta(delta: u64, weight: u64) -> i64 {
    i64::try_from(calc_delta_fair(delta, weight)).unwrap_or(i64::MAX)
}

/// The Completely Fair Scheduler.
pub struct Cfs {
    p: CfsParams,
    rqs: Vec<CfsRq>,
    vruntime: Vec<i64>,
    /// Run queue the stored vruntime is relative to (tasks may wake elsewhere).
    home: Vec<usize>,
    /// Task CPU time when its vruntime was last brought up to date.
    sum_at: Vec<u64>,
    /// Task CPU time when it was last picked (slice accounting).
    prev_sum: Vec<u64>,
    placed: Vec<bool>,
    queued: Vec<Option<(i64, u64)>>,
    seq: u64,
}

impl Cfs {
    /// CFS with the given tunables.
    pub fn new(p: CfsParams) -> Cfs {
        Cfs {
            p,
            rqs: Vec::new(),
            vruntime: Vec::new(),
            home: Vec::new(),
            sum_at: Vec::new(),
            prev_sum: Vec::new(),
            placed: Vec::new(),
            queued: Vec::new(),
            seq: 0,
        }
    }

    /// `__sched_period`.
    fn period(&self, nr: usize) -> u64 {
        let nr_latency = (self.p.latency / self.p.min_granularity).max(1) as usize;
        if nr > nr_latency {
            nr as u64 * self.p.min_granularity
        } else {
            self.p.latency
        }
    }

    /// `sched_slice`: the wall time `t` may run before the tick preempts it.
    pub fn slice(&self, ctx: &Ctx, rq: RqId, t: TaskId) -> u64 {
        let r = &self.rqs[rq];
        let w = ctx.task(t).weight;
        let on_rq = r.curr == Some(t) || self.queued[t].is_some();
        let (nr, load) = if on_rq {
            (r.nr, r.load)
        } else {
            (r.nr + 1, r.load + w)
        };
        (self.period(nr) as u128 * w as u128 / load.max(1) as u128) as u64
    }

    /// vruntime of `t` brought up to date with the CPU time it used since last seen.
    fn current_vruntime(&self, ctx: &Ctx, t: TaskId) -> i64 {
        let ts = ctx.task(t);
        let delta = ts.stats.cpu_time.saturating_sub(self.sum_at[t]);
        self.vruntime[t].saturating_add(vdelta(delta, ts.weight))
    }

    /// `update_curr` for `t` and then `update_min_vruntime` of `rq`.
    fn update_curr(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.vruntime[t] = self.current_vruntime(ctx, t);
        self.sum_at[t] = ctx.task(t).stats.cpu_time;
        self.update_min_vruntime(ctx, rq);
    }

    fn update_min_vruntime(&mut self, ctx: &Ctx, rq: RqId) {
        let r = &self.rqs[rq];
        let curr = r.curr.map(|c| self.current_vruntime(ctx, c));
        let left = r.tree.first().map(|e| e.0);
        let cand = match (curr, left) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => return,
        };
        let r = &mut self.rqs[rq];
        r.min_vruntime = r.min_vruntime.max(cand);
    }

    fn insert(&mut self, rq: RqId, t: TaskId) {
        self.seq += 1;
        let key = (self.vruntime[t], self.seq);
        self.rqs[rq].tree.insert((key.0, key.1, t));
        self.queued[t] = Some(key);
    }

    fn remove(&mut self, rq: RqId, t: TaskId) {
        if let Some((v, s)) = self.queued[t].take() {
            self.rqs[rq].tree.remove(&(v, s, t));
        }
    }
}

impl SchedClass for Cfs {
    fn name(&self) -> &'static str {
        "cfs"
    }

    fn init(&mut self, nr_rqs: usize, nr_tasks: usize) {
        self.rqs = vec![CfsRq::default(); nr_rqs];
        self.vruntime = vec![0; nr_tasks];
        self.home = vec![0; nr_tasks];
        self.sum_at = vec![0; nr_tasks];
        self.prev_sum = vec![0; nr_tasks];
        self.placed = vec![false; nr_tasks];
        self.queued = vec![None; nr_tasks];
    }

    fn enqueue_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId, why: EnqueueReason) {
        // Keep the distance to min_vruntime when the task changes queue.
        let home = self.home[t];
        if home != rq {
            self.vruntime[t] += self.rqs[rq].min_vruntime - self.rqs[home].min_vruntime;
            self.home[t] = rq;
        }
        self.sum_at[t] = ctx.task(t).stats.cpu_time;
        if why == EnqueueReason::Wakeup || !self.placed[t] {
            let min = self.rqs[rq].min_vruntime;
            let v = if self.placed[t] {
                min - (self.p.latency / 2) as i64
            } else {
                // START_DEBIT: a new task pays one vslice before it runs.
                min.saturating_add(vdelta(self.slice(ctx, rq, t), ctx.task(t).weight))
            };
            self.vruntime[t] = if self.placed[t] {
                self.vruntime[t].max(v)
            } else {
                v
            };
            self.placed[t] = true;
        }
        let w = ctx.task(t).weight;
        let r = &mut self.rqs[rq];
        r.nr += 1;
        r.load += w;
        self.insert(rq, t);
    }

    fn dequeue_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.remove(rq, t);
        let r = &mut self.rqs[rq];
        r.nr = r.nr.saturating_sub(1);
        r.load = r.load.saturating_sub(ctx.task(t).weight);
    }

    fn peek_next_task(&self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.rqs[rq]
            .tree
            .iter()
            .map(|e| e.2)
            .find(|&t| ctx.allowed(t, cpu))
    }

    fn pick_next_task(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        let t = self.peek_next_task(ctx, rq, cpu)?;
        self.remove(rq, t);
        self.rqs[rq].curr = Some(t);
        let sum = ctx.task(t).stats.cpu_time;
        self.prev_sum[t] = sum;
        self.sum_at[t] = sum;
        Some(t)
    }

    fn put_prev_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.update_curr(ctx, rq, t);
        if self.rqs[rq].curr == Some(t) {
            self.rqs[rq].curr = None;
        }
        self.insert(rq, t);
    }

    fn task_stopped(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.update_curr(ctx, rq, t);
        let r = &mut self.rqs[rq];
        if r.curr == Some(t) {
            r.curr = None;
        }
        r.nr = r.nr.saturating_sub(1);
        r.load = r.load.saturating_sub(ctx.task(t).weight);
    }

    fn job_changed(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.update_curr(ctx, rq, t);
        let r = &mut self.rqs[rq];
        if r.curr != Some(t) && self.queued[t].is_none() {
            // Stopped and woken again at the same instant, before it left the CPU (its
            // next burst began at once): as in the kernel, it never left the queue.
            r.curr = Some(t);
            r.nr += 1;
            r.load += ctx.task(t).weight;
        }
    }

    fn task_tick(&mut self, ctx: &Ctx, rq: RqId, _cpu: CpuId, t: TaskId) -> bool {
        self.update_curr(ctx, rq, t);
        if self.rqs[rq].nr <= 1 {
            return false;
        }
        // check_preempt_tick
        let ideal = self.slice(ctx, rq, t);
        let ran = ctx.task(t).stats.cpu_time.saturating_sub(self.prev_sum[t]);
        if ran > ideal {
            return true;
        }
        if ran < self.p.min_granularity {
            return false;
        }
        match self.rqs[rq].tree.first() {
            Some(&(left, _, _)) => self.vruntime[t] - left > ideal as i64,
            None => false,
        }
    }

    fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        let (kc, kw) = (ctx.task(curr).kind, ctx.task(cand).kind);
        if kc == TaskClass::Idle && kw != TaskClass::Idle {
            return true;
        }
        if matches!(kw, TaskClass::Batch | TaskClass::Idle) {
            return false;
        }
        let vdiff = self.current_vruntime(ctx, curr) - self.vruntime[cand];
        let gran = vdelta(self.p.wakeup_granularity, ctx.task(cand).weight);
        vdiff > gran
    }

    fn vruntime(&self, ctx: &Ctx, t: TaskId) -> Option<i64> {
        Some(self.current_vruntime(ctx, t))
    }

    fn check(&self, ctx: &Ctx) -> Result<(), String> {
        let mut seen = vec![false; self.queued.len()];
        for (i, r) in self.rqs.iter().enumerate() {
            let curr = r.curr.into_iter();
            if let Some(c) = r.curr {
                if ctx.task(c).on_cpu.is_none() || self.queued[c].is_some() {
                    return Err(format!(
                        "run queue {i}'s current task {c} is not running (or also queued)"
                    ));
                }
            }
            for t in r.tree.iter().map(|e| e.2).chain(curr) {
                if std::mem::replace(&mut seen[t], true) {
                    return Err(format!("task {t} is on two run queues"));
                }
            }
            if r.tree.len() + usize::from(r.curr.is_some()) != r.nr {
                return Err(format!(
                    "run queue {i} counts {} tasks but holds {} and {:?} current",
                    r.nr,
                    r.tree.len(),
                    r.curr
                ));
            }
        }
        Ok(())
    }
}

/// Its entries in the simulator: the registry policies this file's class runs
/// (`schedlab_model::registry`), and how each is built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Cfs,
    build: |w| Ok(Box::new(Cfs::new(w.scheduler.cfs))),
}];
