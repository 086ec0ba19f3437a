//! `eevdf`: Earliest Eligible Virtual Deadline First, the fair class of Linux v6.6+
//! (kernel/sched/fair.c as of v6.12–v6.15, default scheduler features).
//!
//! Per run queue, as the kernel keeps it:
//! - **virtual time** `V = Σ w_i v_i / Σ w_i` over the queued entities and the current
//!   one (`avg_vruntime`), kept as `Σ w_i (v_i − v0)` and `Σ w_i` relative to
//!   `v0 = min_vruntime` (monotonic; the sum is shifted when it moves). Integer arithmetic
//!   throughout: `V` is the floored quotient, and **eligibility** `v_i ≤ V`
//!   (`vruntime_eligible`) is tested without division as `Σ w_j (v_j − v0) ≥ (v_i − v0) Σ w_j`.
//!   Sums are `i128` where the kernel uses `s64` (same values whenever the kernel's do
//!   not overflow). Weights are the workload table's (`ctx.task(t).weight`).
//! - **lag** `lag_i = w_i (V − v_i)`; **virtual deadline** `vd_i = v_i + vslice_i`,
//!   `vslice_i = calc_delta_fair(base_slice, w_i)` in the kernel's fixed point.
//! - **pick** (`pick_eevdf`): the eligible entity with the earliest virtual deadline, found
//!   in O(log n) expected time in a deadline-ordered treap augmented, like the kernel's
//!   rb-tree, with the subtree minimum vruntime (eligible subtrees are found without a
//!   scan). Equal deadlines go in insertion order (rb_add puts an equal key to the right);
//!   the current task wins only with a strictly earlier deadline (`entity_before`).
//!   Treap priorities are a fixed hash of the insertion number: deterministic.
//! - **RUN_TO_PARITY** (`scheduler.eevdf.run_to_parity`, default true): at pick the
//!   deadline is stashed in `vlag` (`set_protect_slice`); while it is unchanged and the
//!   current task is eligible, `pick_eevdf` keeps it, so a wake-up cannot preempt it before
//!   its request is used up.
//! - **update_curr / update_deadline**: vruntime advances by
//!   `calc_delta_fair(delta_exec, w)` at every event that updates the current task (tick,
//!   enqueue, dequeue, pick, job change); once `v ≥ vd`, `vd = v + vslice` and, with more
//!   than one task queued, a reschedule is requested.
//! - **tick**: `update_curr`; reschedules only when the request is used up (there is no
//!   `check_preempt_tick` any more). Without HRTICK (the kernel's default features) a
//!   request ends at the first tick after it is used up (hence the kernel's 0.70 ms base
//!   slice at HZ=1000 since v6.15).
//! - **HRTICK** (`scheduler.eevdf.hrtick`, default false; `hrtick_start_fair`): with more
//!   than one task on the queue, picking a task arms a timer for `slice − (CPU time since
//!   it was picked)`; when it fires, `update_curr` renews a used-up request and
//!   reschedules, so slices end at `base_slice` exactly instead of at a tick. Kernels
//!   that enable the feature behave so: on the 6.18 VM these notes were measured on, a
//!   sched_switch trace of hogs shows every slice ending 1.400 ms after it started, with
//!   HZ=250 (docs/reproduction.md, `interactive`). The timer is armed at picks only (the
//!   kernel also re-arms it at enqueues and dequeues; the remaining time is the same).
//! - **dequeue** (sleep or migration, `update_entity_lag`):
//!   `vlag = clamp(V − v, ±calc_delta_fair(max(2·slice, TICK_NSEC), w))`.
//! - **DELAY_DEQUEUE / DELAY_ZERO** (v6.12, on by default; [`Eevdf::with_delay_dequeue`]
//!   turns them off for the v6.6–v6.11 behaviour): a task that goes to sleep while not
//!   eligible stays queued as a delayed entity, counted in `V`, so its negative lag is
//!   paid off while it sleeps. When a pick comes out on it, it is dequeued for good (lag
//!   clipped to ≤ 0) and the pick repeated (`pick_next_entity`); if it wakes first, it is
//!   requeued as it is, or placed again at `V` if its lag has turned positive
//!   (`requeue_delayed_entity`). A wake-up preemption test that picks a delayed entity
//!   does not preempt, as in the kernel.
//! - **placement** (`place_entity`, PLACE_LAG): `v = V − vlag·(W + w)/W` (W = load of the
//!   queue incl. the current task) so the lag survives the insertion; on an empty queue
//!   or with zero lag `v = V`. A new task has `vlag = 0` and `vd = v + vslice/2`
//!   (PLACE_DEADLINE_INITIAL); a task moved between queues (not asleep) keeps its
//!   relative deadline `vd − v` (PLACE_REL_DEADLINE, v6.12); otherwise `vd = v + vslice`.
//!   Lag carries across CPUs: vruntime is re-derived from it on every enqueue.
//! - **wake-up preemption** (`check_preempt_wakeup_fair`): preempt iff `pick_eevdf`,
//!   with the current task at its up-to-date vruntime and RUN_TO_PARITY protection, now
//!   chooses the candidate. A SCHED_IDLE current task yields to any non-idle one; woken
//!   SCHED_BATCH / SCHED_IDLE tasks never preempt. A reschedule already requested by
//!   `update_deadline` preempts whatever the candidate.
//!
//! Left out or simplified:
//! - A delayed task woken on another CPU (the engine's `select_task_rq_fair` decides; the
//!   kernel keeps a delayed task on its queue) finishes its delayed dequeue there and is
//!   placed on the new queue with the lag it leaves with. The engine's load figures do
//!   not count delayed tasks (the kernel's PELT load still does for a while).
//! - Custom slices (`sched_setattr` runtime) and therefore PREEMPT_SHORT and the
//!   min-slice protection of later kernels: every task has `base_slice`, so they would
//!   never apply. The 2025 `vprot` rework of RUN_TO_PARITY (v6.17+) is not modelled.
//! - Buddies (NEXT_BUDDY is off by default), group scheduling (one level of entities),
//!   reweighting of queued tasks (weights are fixed for a run), HRTICK.
//! - The engine asks for wake-up preemption with its best waiting candidate (the task the
//!   queue would pick next), not with the woken task itself; the two differ only when
//!   another queued task would be picked before the woken one, where the kernel does not
//!   preempt (the current task goes on until its request ends) but this model does.
//! - A reschedule requested by `update_deadline` on a CPU the engine is not already
//!   reconsidering (e.g. the source CPU of a load-balancing pull) is acted on 1 ns later,
//!   through the class decision timer.

use crate::class::{EnqueueReason, SchedClass};
use crate::policy::cfs::vdelta;
use crate::state::{CpuId, Ctx, RqId, TaskId};
use schedlab_model::time::MS;
use schedlab_model::{EevdfParams, Ns, TaskClass};

/// No node.
const NIL: u32 = u32::MAX;

/// One queued task in a run queue's timeline.
#[derive(Debug, Clone, Copy)]
struct Node {
    left: u32,
    right: u32,
    /// Treap heap priority.
    prio: u64,
    /// Order: virtual deadline, then insertion number.
    key: (i64, u64),
    vruntime: i64,
    /// Smallest vruntime in the subtree (the kernel's `se->min_vruntime`).
    min_vruntime: i64,
}

const EMPTY: Node = Node {
    left: NIL,
    right: NIL,
    prio: 0,
    key: (0, 0),
    vruntime: 0,
    min_vruntime: 0,
};

/// Deadline-ordered treaps augmented with the subtree minimum vruntime, one root per run
/// queue; node `i` is task `i` (a task is queued on at most one run queue).
#[derive(Debug, Clone, Default)]
struct Timeline {
    nodes: Vec<Node>,
}

/// A fixed 64-bit mix (splitmix64) for treap priorities.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Timeline {
    fn node(&self, n: u32) -> &Node {
        &self.nodes[n as usize]
    }

    fn node_mut(&mut self, n: u32) -> &mut Node {
        &mut self.nodes[n as usize]
    }

    /// Recompute the augmentation of `n` from its children.
    fn pull(&mut self, n: u32) {
        let nd = *self.node(n);
        let mut m = nd.vruntime;
        if nd.left != NIL {
            m = m.min(self.node(nd.left).min_vruntime);
        }
        if nd.right != NIL {
            m = m.min(self.node(nd.right).min_vruntime);
        }
        self.node_mut(n).min_vruntime = m;
    }

    /// Join two treaps, every key of `a` before every key of `b`.
    fn merge(&mut self, a: u32, b: u32) -> u32 {
        if a == NIL {
            return b;
        }
        if b == NIL {
            return a;
        }
        if self.node(a).prio >= self.node(b).prio {
            let m = self.merge(self.node(a).right, b);
            self.node_mut(a).right = m;
            self.pull(a);
            a
        } else {
            let m = self.merge(a, self.node(b).left);
            self.node_mut(b).left = m;
            self.pull(b);
            b
        }
    }

    /// Split into the keys before `key` and the others.
    fn split(&mut self, n: u32, key: (i64, u64)) -> (u32, u32) {
        if n == NIL {
            return (NIL, NIL);
        }
        if self.node(n).key < key {
            let (l, r) = self.split(self.node(n).right, key);
            self.node_mut(n).right = l;
            self.pull(n);
            (n, r)
        } else {
            let (l, r) = self.split(self.node(n).left, key);
            self.node_mut(n).left = r;
            self.pull(n);
            (l, n)
        }
    }

    /// Insert task `t` into the treap rooted at `root`; returns the new root.
    fn insert(&mut self, root: u32, t: TaskId, key: (i64, u64), vruntime: i64) -> u32 {
        let n = t as u32;
        *self.node_mut(n) = Node {
            left: NIL,
            right: NIL,
            prio: mix(key.1),
            key,
            vruntime,
            min_vruntime: vruntime,
        };
        let (l, r) = self.split(root, key);
        let l = self.merge(l, n);
        self.merge(l, r)
    }

    /// Remove the node with `key` from the treap rooted at `n`; returns the new root.
    fn remove(&mut self, n: u32, key: (i64, u64)) -> u32 {
        if n == NIL {
            return NIL;
        }
        let nd = *self.node(n);
        if nd.key == key {
            return self.merge(nd.left, nd.right);
        }
        if key < nd.key {
            let l = self.remove(nd.left, key);
            self.node_mut(n).left = l;
        } else {
            let r = self.remove(nd.right, key);
            self.node_mut(n).right = r;
        }
        self.pull(n);
        n
    }

    /// The earliest-deadline node whose vruntime passes `eligible` (monotone: true for
    /// every vruntime up to some bound), pruning subtrees by their minimum vruntime
    /// (the heap search of `pick_eevdf`).
    fn earliest_eligible(&self, root: u32, eligible: impl Fn(i64) -> bool) -> u32 {
        let mut n = root;
        while n != NIL {
            let nd = self.node(n);
            if nd.left != NIL && eligible(self.node(nd.left).min_vruntime) {
                n = nd.left;
                continue;
            }
            if eligible(nd.vruntime) {
                return n;
            }
            n = nd.right;
        }
        NIL
    }

    /// Nodes in deadline order.
    fn in_order(&self, root: u32) -> Vec<TaskId> {
        let mut out = Vec::new();
        let mut stack = Vec::new();
        let mut n = root;
        while n != NIL || !stack.is_empty() {
            while n != NIL {
                stack.push(n);
                n = self.node(n).left;
            }
            let top = stack.pop().expect("non-empty stack");
            out.push(top as TaskId);
            n = self.node(top).right;
        }
        out
    }
}

/// One EEVDF run queue (`struct cfs_rq`).
#[derive(Debug, Clone)]
struct EevdfRq {
    /// Timeline of waiting tasks (the running one is outside, as in the kernel).
    root: u32,
    curr: Option<TaskId>,
    /// Reference `v0`: only moves forward.
    min_vruntime: i64,
    /// `Σ w_i (v_i − v0)` over the waiting tasks (`cfs_rq->avg_vruntime`).
    avg_vruntime: i128,
    /// `Σ w_i` over the waiting tasks (`cfs_rq->avg_load`).
    avg_load: i128,
    /// Tasks on the queue, the current one included (`nr_queued`), and their weight.
    nr: usize,
    load: u64,
    /// `update_deadline` asked for a reschedule not yet acted on.
    resched: bool,
}

impl Default for EevdfRq {
    fn default() -> EevdfRq {
        EevdfRq {
            root: NIL,
            curr: None,
            min_vruntime: 0,
            avg_vruntime: 0,
            avg_load: 0,
            nr: 0,
            load: 0,
            resched: false,
        }
    }
}

/// The EEVDF fair class.
pub struct Eevdf {
    p: EevdfParams,
    /// `TICK_NSEC` (bounds the lag kept across a sleep).
    tick_nsec: Ns,
    rqs: Vec<EevdfRq>,
    timeline: Timeline,
    vruntime: Vec<i64>,
    deadline: Vec<i64>,
    /// Lag kept across dequeue; while running, the deadline stashed at pick
    /// (RUN_TO_PARITY's `set_protect_slice`).
    vlag: Vec<i64>,
    /// The deadline is stored relative to the vruntime (moved between queues).
    rel_deadline: Vec<bool>,
    /// Task CPU time when its vruntime was last brought up to date.
    sum_at: Vec<Ns>,
    /// Task CPU time when it was last picked (`prev_sum_exec_runtime`, for HRTICK).
    picked_at: Vec<Ns>,
    /// Placed at least once (later enqueues are not ENQUEUE_INITIAL).
    placed: Vec<bool>,
    /// Insertion number while waiting in a timeline.
    queued: Vec<Option<u64>>,
    /// DELAY_DEQUEUE: asleep but still queued (on this run queue) until eligible.
    delayed: Vec<Option<RqId>>,
    /// The RUN_TO_PARITY stash (`vlag` while running) of a task when it last stopped,
    /// given back if it is woken before it leaves the CPU.
    stopped_protect: Vec<i64>,
    delay_dequeue: bool,
    seq: u64,
}

impl Eevdf {
    /// EEVDF with the given tunables and `TICK_NSEC` = 1 ms (HZ=1000); see
    /// [`Eevdf::with_tick`].
    pub fn new(p: EevdfParams) -> Eevdf {
        Eevdf {
            p,
            tick_nsec: MS,
            rqs: Vec::new(),
            timeline: Timeline::default(),
            vruntime: Vec::new(),
            deadline: Vec::new(),
            vlag: Vec::new(),
            rel_deadline: Vec::new(),
            sum_at: Vec::new(),
            picked_at: Vec::new(),
            placed: Vec::new(),
            queued: Vec::new(),
            delayed: Vec::new(),
            stopped_protect: Vec::new(),
            delay_dequeue: true,
            seq: 0,
        }
    }

    /// Turn DELAY_DEQUEUE (and DELAY_ZERO) off, as before v6.12: a task going to sleep
    /// leaves its queue at once and keeps its lag, negative or positive.
    pub fn with_delay_dequeue(mut self, on: bool) -> Eevdf {
        self.delay_dequeue = on;
        self
    }

    /// Whether `t` sleeps as a delayed entity (DELAY_DEQUEUE).
    pub fn is_delayed(&self, t: TaskId) -> bool {
        self.delayed[t].is_some()
    }

    /// Set `TICK_NSEC` (the platform's tick period; 0 without a tick).
    pub fn with_tick(mut self, tick_nsec: Ns) -> Eevdf {
        self.tick_nsec = tick_nsec;
        self
    }

    fn weight(ctx: &Ctx, t: TaskId) -> u64 {
        ctx.task(t).weight
    }

    /// `calc_delta_fair(slice, w)`: the virtual length of one request.
    fn vslice(&self, ctx: &Ctx, t: TaskId) -> i64 {
        vdelta(self.p.base_slice, Self::weight(ctx, t))
    }

    /// vruntime of `t` brought up to date with the CPU time it used since last seen
    /// (only the current task runs, so only its value moves).
    fn current_vruntime(&self, ctx: &Ctx, t: TaskId) -> i64 {
        let ts = ctx.task(t);
        let delta = ts.stats.cpu_time.saturating_sub(self.sum_at[t]);
        self.vruntime[t].saturating_add(vdelta(delta, ts.weight))
    }

    /// `Σ w (v − v0)` and `Σ w` over the queue, the current task at its up-to-date
    /// vruntime.
    fn avg_parts(&self, ctx: &Ctx, rq: RqId) -> (i128, i128) {
        let r = &self.rqs[rq];
        let (mut avg, mut load) = (r.avg_vruntime, r.avg_load);
        if let Some(c) = r.curr {
            let w = Self::weight(ctx, c) as i128;
            avg += (self.current_vruntime(ctx, c) - r.min_vruntime) as i128 * w;
            load += w;
        }
        (avg, load)
    }

    /// `avg_vruntime`: the queue's virtual time `V` (floored), `min_vruntime` when empty.
    pub fn avg_vruntime(&self, ctx: &Ctx, rq: RqId) -> i64 {
        let (avg, load) = self.avg_parts(ctx, rq);
        let v0 = self.rqs[rq].min_vruntime;
        if load == 0 {
            v0
        } else {
            v0 + avg.div_euclid(load) as i64
        }
    }

    /// Lag `w (V − v)` of `t` on its run queue (ns × weight).
    pub fn lag(&self, ctx: &Ctx, t: TaskId) -> i64 {
        let rq = ctx.task(t).rq;
        let v = self.vruntime(ctx, t).unwrap_or(0);
        (self.avg_vruntime(ctx, rq) - v) * Self::weight(ctx, t) as i64
    }

    /// Whether `t` is eligible on its run queue (`entity_eligible`: `v ≤ V`, exactly).
    pub fn eligible(&self, ctx: &Ctx, t: TaskId) -> bool {
        let rq = ctx.task(t).rq;
        let (avg, load) = self.avg_parts(ctx, rq);
        let v = self.vruntime(ctx, t).unwrap_or(0);
        avg >= (v - self.rqs[rq].min_vruntime) as i128 * load
    }

    /// Virtual deadline of `t` (absolute, as on its run queue).
    pub fn deadline(&self, t: TaskId) -> i64 {
        if self.rel_deadline[t] {
            self.deadline[t] + self.vruntime[t]
        } else {
            self.deadline[t]
        }
    }

    /// Tasks queued on `rq` (waiting or delayed, not the current one) in virtual-deadline
    /// order.
    pub fn timeline(&self, rq: RqId) -> Vec<TaskId> {
        self.timeline.in_order(self.rqs[rq].root)
    }

    /// `update_curr` (with `update_deadline` and `update_min_vruntime`).
    fn update_curr(&mut self, ctx: &Ctx, rq: RqId) {
        let Some(c) = self.rqs[rq].curr else { return };
        let sum = ctx.task(c).stats.cpu_time;
        if sum <= self.sum_at[c] {
            return;
        }
        let v = self.current_vruntime(ctx, c);
        self.vruntime[c] = v;
        self.sum_at[c] = sum;
        if v >= self.deadline[c] {
            // The request is used up: a new one (`update_deadline`).
            self.deadline[c] = v + self.vslice(ctx, c);
            if self.rqs[rq].nr > 1 {
                self.rqs[rq].resched = true;
            }
        }
        self.update_min_vruntime(rq);
    }

    /// `update_min_vruntime`: the smallest vruntime on the queue, never backwards; the
    /// weighted sum follows its reference.
    fn update_min_vruntime(&mut self, rq: RqId) {
        let r = &self.rqs[rq];
        let curr = r.curr.map(|c| self.vruntime[c]);
        let tree = (r.root != NIL).then(|| self.timeline.node(r.root).min_vruntime);
        let v = match (curr, tree) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return,
        };
        let r = &mut self.rqs[rq];
        if v > r.min_vruntime {
            r.avg_vruntime -= r.avg_load * (v - r.min_vruntime) as i128;
            r.min_vruntime = v;
        }
    }

    /// `update_entity_lag` for `t`, still counted on the queue.
    fn update_entity_lag(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        let vlag = self.avg_vruntime(ctx, rq) - self.vruntime[t];
        let span = self.p.base_slice.saturating_mul(2).max(self.tick_nsec);
        // Saturate: with a huge base slice the limit does not fit in i64, and a wrapped
        // (negative) limit would make the clamp's bounds cross.
        let limit = vdelta(span, Self::weight(ctx, t));
        self.vlag[t] = vlag.clamp(-limit, limit);
    }

    /// `place_entity`: vruntime and deadline of `t` joining `rq` (not yet counted).
    fn place_entity(&mut self, ctx: &Ctx, rq: RqId, t: TaskId, initial: bool) {
        let w = Self::weight(ctx, t) as i128;
        let v_avg = self.avg_vruntime(ctx, rq);
        let r = &self.rqs[rq];
        let mut lag = 0i64;
        if r.nr > 0 && self.vlag[t] != 0 {
            // PLACE_LAG: inflate so that the lag is what it was once `t` is counted in V.
            let load = match r.load as i128 {
                0 => 1,
                l => l,
            };
            let scaled = self.vlag[t] as i128 * (load + w);
            lag = (scaled / load) as i64; // div_s64 truncates toward zero
        }
        let v = v_avg - lag;
        self.vruntime[t] = v;
        if self.rel_deadline[t] {
            self.rel_deadline[t] = false;
            self.deadline[t] += v;
            return;
        }
        let vslice = self.vslice(ctx, t);
        self.deadline[t] = v + if initial { vslice / 2 } else { vslice };
    }

    /// Put `t` into the timeline of `rq` (`__enqueue_entity`).
    fn insert(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.seq += 1;
        let seq = self.seq;
        let (v, d) = (self.vruntime[t], self.deadline[t]);
        let r = &mut self.rqs[rq];
        r.root = self.timeline.insert(r.root, t, (d, seq), v);
        let w = Self::weight(ctx, t) as i128;
        r.avg_vruntime += (v - r.min_vruntime) as i128 * w;
        r.avg_load += w;
        self.queued[t] = Some(seq);
    }

    /// Take `t` out of the timeline of `rq` (`__dequeue_entity`).
    fn remove(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        let Some(seq) = self.queued[t].take() else {
            return;
        };
        let (v, d) = (self.vruntime[t], self.deadline[t]);
        let r = &mut self.rqs[rq];
        r.root = self.timeline.remove(r.root, (d, seq));
        let w = Self::weight(ctx, t) as i128;
        r.avg_vruntime -= (v - r.min_vruntime) as i128 * w;
        r.avg_load -= w;
    }

    /// The waiting task `cpu` would take from `rq`: the eligible one with the earliest
    /// deadline (the current task counts in `V`). With none eligible and allowed, the
    /// earliest-deadline allowed one (the kernel's "picking leftmost" fallback).
    fn pick_waiting(&self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        let r = &self.rqs[rq];
        if r.root == NIL {
            return None;
        }
        let (avg, load) = self.avg_parts(ctx, rq);
        let v0 = r.min_vruntime;
        let eligible = |v: i64| avg >= (v - v0) as i128 * load;
        let n = self.timeline.earliest_eligible(r.root, eligible);
        if n != NIL && ctx.allowed(n as TaskId, cpu) {
            return Some(n as TaskId);
        }
        // Affinity excluded the answer (fair queues are per CPU, so this does not happen
        // in engine runs): scan in deadline order.
        let order = self.timeline.in_order(r.root);
        order
            .iter()
            .copied()
            .find(|&t| ctx.allowed(t, cpu) && eligible(self.vruntime[t]))
            .or_else(|| order.iter().copied().find(|&t| ctx.allowed(t, cpu)))
    }

    /// `dequeue_entity(DEQUEUE_DELAYED)`: the delayed task `t` leaves `rq` for good, its
    /// lag clipped to ≤ 0 (DELAY_ZERO).
    fn finish_delayed(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.update_curr(ctx, rq);
        self.update_entity_lag(ctx, rq, t);
        self.vlag[t] = self.vlag[t].min(0);
        self.remove(ctx, rq, t);
        self.delayed[t] = None;
        let r = &mut self.rqs[rq];
        r.nr = r.nr.saturating_sub(1);
        r.load = r.load.saturating_sub(Self::weight(ctx, t));
        self.update_min_vruntime(rq);
    }

    /// `requeue_delayed_entity`: the delayed task `t` wakes on its queue `rq`; a positive
    /// lag is dropped (DELAY_ZERO: placed again at `V`), otherwise it goes on as it was.
    fn requeue_delayed(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.update_curr(ctx, rq);
        self.update_entity_lag(ctx, rq, t);
        if self.vlag[t] > 0 {
            self.remove(ctx, rq, t);
            let r = &mut self.rqs[rq];
            r.nr -= 1;
            r.load -= Self::weight(ctx, t);
            self.vlag[t] = 0;
            self.place_entity(ctx, rq, t, false);
            let r = &mut self.rqs[rq];
            r.nr += 1;
            r.load += Self::weight(ctx, t);
            self.insert(ctx, rq, t);
        }
        self.delayed[t] = None;
    }

    /// What [`SchedClass::pick_next_task`] takes from `rq`: [`Eevdf::pick_waiting`], where
    /// a delayed task that comes out first is dequeued and the pick repeated
    /// (`pick_next_entity`); computed here without changing the queue.
    fn pick_runnable(&self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        let first = self.pick_waiting(ctx, rq, cpu)?;
        if self.delayed[first].is_none() {
            return Some(first);
        }
        let r = &self.rqs[rq];
        let (mut avg, mut load) = self.avg_parts(ctx, rq);
        let v0 = r.min_vruntime;
        let order = self.timeline.in_order(r.root);
        let mut gone: Vec<TaskId> = Vec::new();
        let mut next = Some(first);
        while let Some(t) = next {
            if self.delayed[t].is_none() {
                return Some(t);
            }
            let w = Self::weight(ctx, t) as i128;
            avg -= (self.vruntime[t] - v0) as i128 * w;
            load -= w;
            gone.push(t);
            let left = || {
                order
                    .iter()
                    .copied()
                    .filter(|x| !gone.contains(x) && ctx.allowed(*x, cpu))
            };
            next = left()
                .find(|&x| avg >= (self.vruntime[x] - v0) as i128 * load)
                .or_else(|| left().next());
        }
        None
    }

    /// `pick_eevdf` with the current task `curr` of `rq` still running (RUN_TO_PARITY
    /// protection applies).
    fn pick_eevdf(&self, ctx: &Ctx, rq: RqId, cpu: CpuId, curr: TaskId) -> Option<TaskId> {
        let r = &self.rqs[rq];
        if r.nr == 1 {
            return Some(curr);
        }
        let (avg, load) = self.avg_parts(ctx, rq);
        let v_curr = self.current_vruntime(ctx, curr);
        let curr_ok = avg >= (v_curr - r.min_vruntime) as i128 * load;
        if self.p.run_to_parity && curr_ok && self.vlag[curr] == self.deadline[curr] {
            return Some(curr);
        }
        match self.pick_waiting(ctx, rq, cpu) {
            Some(b) if avg >= (self.vruntime[b] - r.min_vruntime) as i128 * load => {
                if curr_ok && self.deadline[curr] < self.deadline[b] {
                    Some(curr)
                } else {
                    Some(b)
                }
            }
            _ if curr_ok => Some(curr),
            other => other,
        }
    }

    /// Whether `update_deadline` asks (or, brought up to date now, would ask) to
    /// reschedule the current task `curr` of `rq`.
    fn resched_pending(&self, ctx: &Ctx, rq: RqId, curr: TaskId) -> bool {
        let r = &self.rqs[rq];
        r.resched || (r.nr > 1 && self.current_vruntime(ctx, curr) >= self.deadline[curr])
    }
}

impl SchedClass for Eevdf {
    fn name(&self) -> &'static str {
        "eevdf"
    }

    fn init(&mut self, nr_rqs: usize, nr_tasks: usize) {
        assert!(nr_tasks < NIL as usize, "too many tasks for the timeline");
        self.rqs = vec![EevdfRq::default(); nr_rqs];
        self.timeline.nodes = vec![EMPTY; nr_tasks];
        self.vruntime = vec![0; nr_tasks];
        self.deadline = vec![0; nr_tasks];
        self.vlag = vec![0; nr_tasks];
        self.rel_deadline = vec![false; nr_tasks];
        self.sum_at = vec![0; nr_tasks];
        self.picked_at = vec![0; nr_tasks];
        self.placed = vec![false; nr_tasks];
        self.queued = vec![None; nr_tasks];
        self.delayed = vec![None; nr_tasks];
        self.stopped_protect = vec![0; nr_tasks];
        self.seq = 0;
    }

    fn enqueue_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId, _why: EnqueueReason) {
        if let Some(old) = self.delayed[t] {
            if old == rq {
                // ttwu_runnable: still queued here, only requeued.
                self.requeue_delayed(ctx, rq, t);
                self.sum_at[t] = ctx.task(t).stats.cpu_time;
                return;
            }
            // Woken elsewhere (the kernel would keep it on its queue): finish the delayed
            // dequeue there and place it here with the lag it leaves with.
            self.finish_delayed(ctx, old, t);
        }
        // enqueue_entity: update_curr, place_entity, account, __enqueue_entity.
        self.update_curr(ctx, rq);
        let initial = !self.placed[t];
        if initial {
            self.placed[t] = true;
            self.vlag[t] = 0;
            self.rel_deadline[t] = false;
        }
        self.place_entity(ctx, rq, t, initial);
        self.sum_at[t] = ctx.task(t).stats.cpu_time;
        let r = &mut self.rqs[rq];
        r.nr += 1;
        r.load += Self::weight(ctx, t);
        self.insert(ctx, rq, t);
    }

    fn dequeue_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        // dequeue_entity of a waiting task: a migration (still runnable) or a sleep.
        self.update_curr(ctx, rq);
        if self.queued[t].is_none() {
            return;
        }
        self.update_entity_lag(ctx, rq, t);
        self.remove(ctx, rq, t);
        if ctx.task(t).runnable {
            // PLACE_REL_DEADLINE: keep the deadline relative to the vruntime.
            self.deadline[t] -= self.vruntime[t];
            self.rel_deadline[t] = true;
        }
        let r = &mut self.rqs[rq];
        r.nr = r.nr.saturating_sub(1);
        r.load = r.load.saturating_sub(Self::weight(ctx, t));
        self.update_min_vruntime(rq);
    }

    fn peek_next_task(&self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.pick_runnable(ctx, rq, cpu)
    }

    fn pick_next_task(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        if let Some(c) = self.rqs[rq].curr {
            // The engine puts the previous task back first; stay consistent if not.
            self.put_prev_task(ctx, rq, c);
        }
        let t = loop {
            let t = self.pick_waiting(ctx, rq, cpu)?;
            if self.delayed[t].is_none() {
                break t;
            }
            self.finish_delayed(ctx, rq, t);
        };
        // set_next_entity
        self.remove(ctx, rq, t);
        let r = &mut self.rqs[rq];
        r.curr = Some(t);
        r.resched = false;
        self.sum_at[t] = ctx.task(t).stats.cpu_time;
        self.picked_at[t] = self.sum_at[t];
        self.vlag[t] = self.deadline[t]; // set_protect_slice
        Some(t)
    }

    fn put_prev_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        if self.rqs[rq].curr == Some(t) {
            self.update_curr(ctx, rq);
            self.rqs[rq].curr = None;
        }
        self.rqs[rq].resched = false;
        if self.queued[t].is_none() {
            self.insert(ctx, rq, t);
        }
    }

    fn task_stopped(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        // dequeue_entity(DEQUEUE_SLEEP) of the current task.
        self.update_curr(ctx, rq);
        if self.delay_dequeue && self.rqs[rq].curr == Some(t) && !self.eligible(ctx, t) {
            // DELAY_DEQUEUE: asleep, but competing on until eligible (then dequeued at
            // its pick, or requeued if it wakes first).
            let r = &mut self.rqs[rq];
            r.curr = None;
            r.resched = false;
            self.delayed[t] = Some(rq);
            self.insert(ctx, rq, t);
            return;
        }
        self.stopped_protect[t] = self.vlag[t];
        self.update_entity_lag(ctx, rq, t);
        self.remove(ctx, rq, t);
        let r = &mut self.rqs[rq];
        if r.curr == Some(t) {
            r.curr = None;
            r.resched = false;
        }
        r.nr = r.nr.saturating_sub(1);
        r.load = r.load.saturating_sub(Self::weight(ctx, t));
        self.update_min_vruntime(rq);
    }

    fn job_changed(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.update_curr(ctx, rq);
        if self.rqs[rq].curr == Some(t) {
            return;
        }
        // Stopped and woken again at the same instant, before it left the CPU (its next
        // burst began at once): as in the kernel, it never left the queue.
        if self.delayed[t] == Some(rq) {
            self.remove(ctx, rq, t); // a delayed entity back as the current one
            self.delayed[t] = None;
        } else if self.queued[t].is_none() {
            let r = &mut self.rqs[rq];
            r.nr += 1;
            r.load += Self::weight(ctx, t);
            self.vlag[t] = self.stopped_protect[t]; // the RUN_TO_PARITY stash it had
        } else {
            return;
        }
        self.rqs[rq].curr = Some(t);
        self.sum_at[t] = ctx.task(t).stats.cpu_time;
    }

    fn task_tick(&mut self, ctx: &Ctx, rq: RqId, _cpu: CpuId, t: TaskId) -> bool {
        if self.rqs[rq].curr != Some(t) {
            return false;
        }
        self.update_curr(ctx, rq);
        std::mem::take(&mut self.rqs[rq].resched)
    }

    fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        let rq = ctx.task(curr).rq;
        if self.rqs[rq].curr != Some(curr) {
            return false;
        }
        if self.resched_pending(ctx, rq, curr) {
            return true;
        }
        let (kc, kw) = (ctx.task(curr).kind, ctx.task(cand).kind);
        if kc == TaskClass::Idle && kw != TaskClass::Idle {
            return true;
        }
        if matches!(kw, TaskClass::Batch | TaskClass::Idle) {
            return false;
        }
        let cpu = ctx.task(curr).on_cpu.unwrap_or(rq);
        self.pick_eevdf(ctx, rq, cpu, curr) == Some(cand)
    }

    fn uses_decision_timer(&self) -> bool {
        true
    }

    fn next_decision(&self, ctx: &Ctx, rq: RqId, _cpu: CpuId, curr: TaskId) -> Option<Ns> {
        let r = &self.rqs[rq];
        if r.curr != Some(curr) {
            return None;
        }
        if r.resched {
            return Some(ctx.now + 1);
        }
        if !self.p.hrtick || r.nr <= 1 {
            return None;
        }
        // hrtick_start_fair: the rest of the slice since the pick.
        let ran = ctx
            .task(curr)
            .stats
            .cpu_time
            .saturating_sub(self.picked_at[curr]);
        // A task kept after its request ended (picked again, or never put back) has
        // the timer re-armed for a full slice, as set_next_task re-arms it; never for
        // the instant just past (a storm of 1 ns decisions).
        let left = match self.p.base_slice {
            0 => return None,
            s => s - ran % s,
        };
        Some(ctx.now.saturating_add(left))
    }

    fn decision_due(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId, curr: TaskId) -> bool {
        if !self.p.hrtick || self.rqs[rq].resched {
            return true;
        }
        // The hrtick: a tick of the current task (`task_tick_fair(queued = 1)`).
        self.task_tick(ctx, rq, cpu, curr)
    }

    fn check(&self, ctx: &Ctx) -> Result<(), String> {
        let mut seen = vec![false; self.queued.len()];
        for (i, r) in self.rqs.iter().enumerate() {
            let queued = self.timeline.in_order(r.root);
            if let Some(c) = r.curr {
                if ctx.task(c).on_cpu.is_none() || self.queued[c].is_some() {
                    return Err(format!(
                        "run queue {i}'s current task {c} is not running (or also queued)"
                    ));
                }
            }
            for &t in queued.iter().chain(r.curr.as_ref()) {
                if std::mem::replace(&mut seen[t], true) {
                    return Err(format!("task {t} is on two run queues"));
                }
            }
            if queued.len() + usize::from(r.curr.is_some()) != r.nr {
                return Err(format!(
                    "run queue {i} counts {} tasks but holds {} and {:?} current",
                    r.nr,
                    queued.len(),
                    r.curr
                ));
            }
            if let Some(&t) = queued.iter().find(|&&t| self.queued[t].is_none()) {
                return Err(format!("task {t} is in run queue {i}'s timeline unmarked"));
            }
        }
        Ok(())
    }

    fn vruntime(&self, ctx: &Ctx, t: TaskId) -> Option<i64> {
        let rq = ctx.task(t).rq;
        if self.rqs.get(rq).is_some_and(|r| r.curr == Some(t)) {
            Some(self.current_vruntime(ctx, t))
        } else {
            Some(self.vruntime[t])
        }
    }
}

/// Its entries in the simulator: the registry policies this file's class runs
/// (`schedlab_model::registry`), and how each is built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Eevdf,
    build: |w| {
        let tick = schedlab_model::time::S
            .checked_div(w.platform.hz as u64)
            .unwrap_or(0);
        let mut p = w.scheduler.eevdf;
        // A task reading its own CPU clock runs `update_curr` at every read, which
        // ends a used-up request at once (`update_deadline`), as HRTICK would.
        p.hrtick |= w.platform.job_costs.reads_cpu_clock;
        Ok(Box::new(Eevdf::new(p).with_tick(tick)))
    },
}];

#[cfg(test)]
mod tests {
    use super::*;

    /// The treap agrees with a brute-force scan under random inserts and removals.
    #[test]
    fn timeline_matches_scan() {
        let n = 200;
        let mut tl = Timeline {
            nodes: vec![EMPTY; n],
        };
        let mut root = NIL;
        let mut present: Vec<Option<(i64, u64, i64)>> = vec![None; n];
        let mut x = 12345u64;
        let mut seq = 0;
        for step in 0..20_000u64 {
            x = mix(x ^ step);
            let t = (x % n as u64) as usize;
            match present[t] {
                Some((d, s, _)) => {
                    root = tl.remove(root, (d, s));
                    present[t] = None;
                }
                None => {
                    seq += 1;
                    let d = (mix(x) % 50) as i64;
                    let v = (mix(x + 1) % 100) as i64;
                    root = tl.insert(root, t, (d, seq), v);
                    present[t] = Some((d, seq, v));
                }
            }
            let bound = (mix(x + 2) % 110) as i64;
            let got = tl.earliest_eligible(root, |v| v <= bound);
            let want = (0..n)
                .filter_map(|i| present[i].map(|(d, s, v)| (d, s, v, i)))
                .filter(|e| e.2 <= bound)
                .min()
                .map_or(NIL, |e| e.3 as u32);
            assert_eq!(got, want, "step {step}");
            let order = tl.in_order(root);
            assert!(order
                .windows(2)
                .all(|w| tl.node(w[0] as u32).key < tl.node(w[1] as u32).key));
            assert_eq!(order.len(), present.iter().flatten().count());
        }
    }
}
