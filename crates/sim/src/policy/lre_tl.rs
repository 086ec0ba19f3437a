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
//! SimSo 0.8.5's `LRE_TL` rounds each share up (`ceil`) and ends a plane at the earliest
//! deadline or `now + min period`, whichever comes first; here shares are rounded down
//! from the absolute fluid target (see [`super::fluid`]) and planes end at deadlines.

use super::fluid::{self, Plan};
use crate::state::{CpuId, Ctx, TaskId};
use schedlab_model::Ns;

/// LRE-TL's plan.
#[derive(Default)]
pub struct LreTl {
    /// End of the current TL-plane.
    tf: Ns,
    /// Per task: local remaining execution at the last event and the job's remaining
    /// time then.
    local: Vec<(Ns, Ns)>,
    /// The running set, in the order it was chosen.
    running: Vec<TaskId>,
    /// Per CPU: the task it runs.
    slots: Vec<Option<TaskId>>,
    next: Option<Ns>,
}

impl LreTl {
    /// `t`'s local remaining execution now.
    pub fn local_remaining(&self, ctx: &Ctx, t: TaskId) -> Ns {
        let Some(&(l, rem)) = self.local.get(t) else {
            return 0;
        };
        l.saturating_sub(rem.saturating_sub(ctx.task(t).remaining()))
    }

    fn new_plane(&mut self, ctx: &Ctx, wcet: &[Ns]) {
        self.local = vec![(0, 0); ctx.tasks.len()];
        self.running.clear();
        let Some(tf) = fluid::next_deadline(ctx, 0..ctx.tasks.len()) else {
            self.tf = ctx.now;
            return;
        };
        self.tf = tf;
        let active: Vec<TaskId> = (0..ctx.tasks.len())
            .filter(|&t| fluid::active(ctx, t))
            .collect();
        let shares = fluid::shares(ctx, wcet, &active, tf);
        ctx.count_laxity(shares.len() as u64);
        for &(t, l) in &shares {
            self.local[t] = (l, ctx.task(t).remaining());
        }
        let m = ctx.cpus.len();
        self.running = shares
            .iter()
            .filter(|s| s.1 > 0)
            .map(|s| s.0)
            .take(m)
            .collect();
    }

    /// Waiting jobs with local work, least local laxity (largest `l`) first.
    fn waiting(&self, ctx: &Ctx) -> Vec<(Ns, TaskId)> {
        let mut w: Vec<(Ns, TaskId)> = (0..ctx.tasks.len())
            .filter(|&t| fluid::active(ctx, t) && !self.running.contains(&t))
            .map(|t| (self.local_remaining(ctx, t), t))
            .filter(|e| e.0 > 0)
            .collect();
        w.sort_by_key(|&(l, t)| (std::cmp::Reverse(l), t));
        w
    }

    /// B and C events due now.
    fn events(&mut self, ctx: &Ctx) {
        // B: running jobs whose local budget is used up or whose job ended.
        let done: Vec<TaskId> = self
            .running
            .iter()
            .copied()
            .filter(|&t| !fluid::active(ctx, t) || self.local_remaining(ctx, t) == 0)
            .collect();
        self.running.retain(|t| !done.contains(t));
        let waiting = self.waiting(ctx);
        let mut next = waiting.iter();
        for _ in &done {
            match next.next() {
                Some(&(_, t)) => {
                    ctx.count_laxity(1);
                    self.running.push(t);
                }
                None => break,
            }
        }
        // C: waiting jobs whose local laxity is 0 swap with the running job with the
        // smallest local remaining execution.
        for (l, t) in self.waiting(ctx) {
            if self.tf.saturating_sub(ctx.now) > l {
                break; // sorted by l: the others have laxity left
            }
            ctx.count_laxity(1);
            if self.running.len() < ctx.cpus.len() {
                self.running.push(t);
                continue;
            }
            let Some(out) = self
                .running
                .iter()
                .copied()
                .min_by_key(|&r| (self.local_remaining(ctx, r), r))
            else {
                break;
            };
            if self.local_remaining(ctx, out) >= l {
                break; // every running job has zero laxity too: nothing to swap
            }
            let k = self
                .running
                .iter()
                .position(|&r| r == out)
                .expect("running");
            self.running[k] = t;
        }
    }
}

impl Plan for LreTl {
    fn name(&self) -> &'static str {
        "lre-tl"
    }

    fn update(&mut self, ctx: &Ctx, wcet: &[Ns], released: bool, _completed: bool) {
        if released || ctx.now >= self.tf || self.local.len() != ctx.tasks.len() {
            self.new_plane(ctx, wcet);
        }
        self.events(ctx);
        self.slots = fluid::place(ctx, &self.running);
        let now = ctx.now;
        let b = self
            .running
            .iter()
            .map(|&t| now + self.local_remaining(ctx, t));
        let c = self
            .waiting(ctx)
            .into_iter()
            .map(|(l, _)| self.tf.saturating_sub(l));
        self.next = b.chain(c).chain([self.tf]).filter(|&e| e > now).min();
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
