//! `lre-tl`: Local Remaining Execution - TL-plane (S. Funk, "LRE-TL: An Optimal
//! Multiprocessor Algorithm for Sporadic Task Sets", Real-Time Systems 46(3), 2010;
//! first at RTNS 2009).
//!
//! LLREF's TL-planes and local remaining executions `l` (see [`super::llref`]), with
//! fewer preemptions: instead of re-sorting every job at every event, only the jobs an
//! event concerns change.
//! - At the start of a plane the first m active jobs (workload order; Funk lets any m
//!   run) run, the others wait.
//! - *B event*, a running job's `l` reaches 0 (or its job completes): the waiting job
//!   with the least local laxity (`tf − now − l`, i.e. the largest `l`; ties: workload
//!   order) takes its place, if one has `l > 0`.
//! - *C event*, a waiting job's local laxity reaches 0: it swaps with the running job
//!   with the smallest `l` (the earliest B event; ties: workload order).
//!
//! A job that starts takes the CPU its job last ran on if that is free, else the lowest
//! free CPU (in a swap the CPU the leaving job frees).
//!
//! A new plane begins at every release as well as at `tf`: for periodic implicit-deadline
//! tasks every release is a deadline, so this is Funk's rule; for sporadic arrivals Funk
//! instead adds the new job to the current plane (an *A event*), which is not done here.
//!
//! `laxity_evaluations` counts the local values (B or C instants) computed: one per
//! active job at a plane start, one per job moved at an event.
//!
//! Cost per event: one pass over the tasks (waiting jobs' `l` and the largest of them,
//! whose C event comes first); only the jobs that move are ordered (a B event takes the
//! first few by `select_nth`, a C event sorts the zero-laxity jobs alone), never the
//! whole waiting set.
//!
//! SimSo 0.8.5's `LRE_TL` rounds each share up (`ceil`) and ends a plane at the earliest
//! deadline or `now + min period`, whichever comes first; here shares are rounded down
//! from the absolute fluid target (see [`super::fluid`]) and planes end at deadlines.

use super::fluid::{self, Plan, TlPlane};
use crate::state::{CpuId, Ctx, TaskId};
use schedlab_model::Ns;

/// LRE-TL's plan.
#[derive(Default)]
pub struct LreTl {
    plane: TlPlane,
    /// The running set, in the order it was chosen.
    running: Vec<TaskId>,
    /// Per task: in `running`.
    is_running: Vec<bool>,
    /// Scratch for an update: the waiting jobs with local work, `(l, task)`, in task order
    /// but for the few an event moves (see `events`); kept to reuse its allocation.
    waiting: Vec<(Ns, TaskId)>,
    /// Per CPU: the task it runs.
    slots: Vec<Option<TaskId>>,
    next: Option<Ns>,
}

impl LreTl {
    /// `t`'s local remaining execution now.
    pub fn local_remaining(&self, ctx: &Ctx, t: TaskId) -> Ns {
        self.plane.local_remaining(ctx, t)
    }

    fn set_running(&mut self, running: impl Iterator<Item = TaskId>) {
        for &t in &self.running {
            self.is_running[t] = false;
        }
        self.running.clear();
        for t in running {
            self.is_running[t] = true;
            self.running.push(t);
        }
    }

    fn new_plane(&mut self, ctx: &Ctx, wcet: &[Ns]) {
        self.set_running(std::iter::empty());
        let shares = self.plane.begin(ctx, wcet);
        if shares.is_empty() {
            return; // no active job: an empty plane
        }
        ctx.count_laxity(shares.len() as u64);
        let m = ctx.cpus.len();
        self.set_running(shares.iter().filter(|s| s.1 > 0).map(|s| s.0).take(m));
    }

    /// Fill `self.waiting` with the waiting jobs that have local work, `(l, task)`, in
    /// task order (not sorted: an event moves few of them).
    fn collect_waiting(&mut self, ctx: &Ctx) {
        let mut w = std::mem::take(&mut self.waiting);
        w.clear();
        w.extend(
            (0..ctx.tasks.len())
                .filter(|&t| !self.is_running[t] && fluid::active(ctx, t))
                .map(|t| (self.local_remaining(ctx, t), t))
                .filter(|e| e.0 > 0),
        );
        self.waiting = w;
    }

    /// B and C events due now. Waiting jobs are taken least local laxity (largest `l`)
    /// first, ties in workload order; returns the largest `l` of the jobs left waiting
    /// (0: none), whose C event comes first.
    fn events(&mut self, ctx: &Ctx) -> Ns {
        // B: running jobs whose local budget is used up or whose job ended leave; the
        // waiting jobs with the least local laxity take their places. (The jobs that
        // leave have no local work left, so they are not among the waiting ones.)
        let before = self.running.len();
        let mut k = 0;
        while k < self.running.len() {
            let t = self.running[k];
            if !fluid::active(ctx, t) || self.local_remaining(ctx, t) == 0 {
                self.is_running[t] = false;
                self.running.remove(k);
            } else {
                k += 1;
            }
        }
        let done = before - self.running.len();
        self.collect_waiting(ctx);
        let first = |e: &(Ns, TaskId)| (std::cmp::Reverse(e.0), e.1);
        let taken = done.min(self.waiting.len());
        if taken > 0 {
            // The `taken` first in that order, in order; the rest after them, unordered.
            if taken < self.waiting.len() {
                self.waiting.select_nth_unstable_by_key(taken - 1, first);
            }
            self.waiting[..taken].sort_unstable_by_key(first);
        }
        for i in 0..taken {
            let t = self.waiting[i].1;
            ctx.count_laxity(1);
            self.is_running[t] = true;
            self.running.push(t);
        }
        // C: waiting jobs whose local laxity is 0 (`l` = the time left in the plane), in
        // that order, swap with the running job with the smallest local remaining
        // execution.
        let left = self.plane.end().saturating_sub(ctx.now);
        let mut zero: Vec<(Ns, TaskId)> = self.waiting[taken..]
            .iter()
            .copied()
            .filter(|e| e.0 >= left)
            .collect();
        zero.sort_unstable_by_key(first);
        let mut out_max = 0;
        for (l, t) in zero {
            ctx.count_laxity(1);
            if self.running.len() < ctx.cpus.len() {
                self.is_running[t] = true;
                self.running.push(t);
                continue;
            }
            let Some((k, out)) = self
                .running
                .iter()
                .copied()
                .enumerate()
                .min_by_key(|&(_, r)| (self.local_remaining(ctx, r), r))
            else {
                break;
            };
            let lo = self.local_remaining(ctx, out);
            if lo >= l {
                break; // every running job has zero laxity too: nothing to swap
            }
            self.is_running[out] = false;
            self.is_running[t] = true;
            self.running[k] = t;
            out_max = out_max.max(lo);
        }
        self.waiting
            .iter()
            .filter(|e| !self.is_running[e.1])
            .map(|e| e.0)
            .fold(out_max, Ns::max)
    }
}

impl Plan for LreTl {
    fn name(&self) -> &'static str {
        "lre-tl"
    }

    fn update(&mut self, ctx: &Ctx, wcet: &[Ns], released: bool, _completed: bool) {
        if self.is_running.len() != ctx.tasks.len() {
            self.running.clear();
            self.is_running = vec![false; ctx.tasks.len()];
        }
        if self.plane.due(ctx, released) {
            self.new_plane(ctx, wcet);
        }
        let waiting_max = self.events(ctx);
        self.slots = fluid::place(ctx, &self.running);
        // The next event: a running job's B event, the first C event of the waiting jobs
        // (the one with the largest `l`), or the plane's end.
        let now = ctx.now;
        let tf = self.plane.end();
        let b = self
            .running
            .iter()
            .map(|&t| now + self.local_remaining(ctx, t))
            .filter(|&e| e > now)
            .min();
        let c = Some(tf.saturating_sub(waiting_max)).filter(|&e| waiting_max > 0 && e > now);
        self.next = b
            .into_iter()
            .chain(c)
            .chain([tf])
            .filter(|&e| e > now)
            .min();
    }

    fn slot(&self, ctx: &Ctx, cpu: CpuId) -> Option<TaskId> {
        self.slots
            .get(cpu)
            .copied()
            .flatten()
            .filter(|&t| fluid::active(ctx, t))
    }

    fn next_event(&self) -> Option<Ns> {
        self.next
    }
}

/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::LreTl,
    build: |w| Ok(Box::new(crate::policy::fluid::build(w, LreTl::default())?)),
}];
