//! What the boundary ("fluid") schedulers share: `dp-wrap`, `llref`, `lre-tl` (the last
//! two also their TL-planes, [`TlPlane`]).
//!
//! These schedulers do not order tasks by a priority: at each *event* (a job release, a
//! slice or TL-plane boundary, a task's local budget used up, a waiting task's local
//! laxity reaching zero) they decide which task each CPU runs until the next event, and
//! a CPU may idle while jobs wait. [`Fluid`] turns such a [`Plan`] into a
//! [`SchedClass`]: the plan is brought up to date lazily, at the first hook of an
//! instant that needs it, only when an event happened (a release, a completion, or the
//! plan's own next event is due); global placement then keeps a running task on its CPU
//! only where the plan says so ([`SchedClass::keeps_cpu`]) and each CPU picks its planned
//! task. Every CPU, busy or idle, arms its timer for the plan's next event
//! ([`SchedClass::next_decision`], [`SchedClass::next_decision_idle`]).
//!
//! # Local allocations in integer time
//!
//! Between two boundaries `t0 < tf` a task's share is its fluid schedule's work over the
//! slice. Computed as `u·(tf − t0)` and rounded, errors would add up from slice to slice;
//! so it is computed from the job's absolute fluid target instead ([`shares`]): the work
//! a fluid schedule at rate `C/(d − r)` has done by `tf`, minus what the job has
//! executed, rounded to a neighbouring integer so that the slice's total is exact.
//! Rounding then never accumulates (every job stays within 1 ns of its fluid schedule),
//! and in the slice that ends at the job's deadline the share is exactly what the job
//! still needs.

use crate::class::{EnqueueReason, SchedClass};
use crate::state::{ClassId, CpuId, Ctx, RqId, TaskId};
use schedlab_model::Ns;

/// A boundary scheduler's decisions: which task each CPU runs from now on.
pub trait Plan {
    /// Registry name.
    fn name(&self) -> &'static str;
    /// Bring the plan up to date at `ctx.now`: `released` when a job was released since
    /// the last update, `completed` when a job completed; otherwise the plan's own next
    /// event is due. `wcet` gives each task's worst-case execution time.
    fn update(&mut self, ctx: &Ctx, wcet: &[Ns], released: bool, completed: bool);
    /// The task `cpu` runs now by the plan, if any.
    fn slot(&self, ctx: &Ctx, cpu: CpuId) -> Option<TaskId>;
    /// The next instant after the last update at which the plan changes by itself.
    fn next_event(&self) -> Option<Ns>;
    /// What the plan has laid out, for the result's `scheduler_structure`
    /// ([`SchedClass::report`]); `None` (the default): nothing reported.
    fn report(&self, _ctx: &Ctx, _names: &[String]) -> Option<serde_json::Value> {
        None
    }
}

/// A [`Plan`] as a scheduling class.
pub struct Fluid<P: Plan> {
    plan: P,
    /// Per task: worst-case execution time (the workload's `runtime`).
    wcet: Vec<Ns>,
    /// Per task: waiting in this class's queue.
    waiting: Vec<bool>,
    released: bool,
    completed: bool,
    /// When the plan was last brought up to date (`Ns::MAX`: never).
    updated_at: Ns,
}

impl<P: Plan> Fluid<P> {
    /// The class for `plan`, with the tasks' worst-case execution times.
    pub fn new(plan: P, wcet: Vec<Ns>) -> Fluid<P> {
        Fluid {
            plan,
            wcet,
            waiting: Vec::new(),
            released: false,
            completed: false,
            updated_at: Ns::MAX,
        }
    }

    /// The plan (for tests and reports).
    pub fn plan(&self) -> &P {
        &self.plan
    }

    fn stale(&self, now: Ns) -> bool {
        self.updated_at == Ns::MAX
            || self.released
            || self.completed
            || self.plan.next_event().is_some_and(|e| e <= now)
    }

    fn refresh(&mut self, ctx: &Ctx) {
        if !self.stale(ctx.now) {
            return;
        }
        self.plan
            .update(ctx, &self.wcet, self.released, self.completed);
        self.released = false;
        self.completed = false;
        self.updated_at = ctx.now;
    }

    /// The planned task of `cpu` if it waits here.
    fn waiting_slot(&self, ctx: &Ctx, cpu: CpuId) -> Option<TaskId> {
        self.plan
            .slot(ctx, cpu)
            .filter(|&t| self.waiting.get(t).copied().unwrap_or(false))
    }

    fn planned(&self, ctx: &Ctx, t: TaskId) -> bool {
        (0..ctx.cpus.len()).any(|c| self.plan.slot(ctx, c) == Some(t))
    }

    /// The plan's next event, if it is still ahead. A plan whose event has passed was not
    /// consulted then (no task of the class ran or waited): it is brought up to date at
    /// the next release, and needs no timer meanwhile.
    fn next_instant(&self, ctx: &Ctx) -> Option<Ns> {
        self.plan.next_event().filter(|&e| e > ctx.now)
    }
}

impl<P: Plan> SchedClass for Fluid<P> {
    fn name(&self) -> &'static str {
        self.plan.name()
    }

    fn init(&mut self, _nr_rqs: usize, nr_tasks: usize) {
        self.waiting = vec![false; nr_tasks];
        self.wcet.resize(nr_tasks, 0);
    }

    fn job_released(&mut self, _ctx: &Ctx, _t: TaskId) {
        self.released = true;
    }

    fn job_completed(&mut self, _ctx: &Ctx, _t: TaskId) {
        self.completed = true;
    }

    fn enqueue_task(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId, _why: EnqueueReason) {
        self.waiting[t] = true;
    }

    fn dequeue_task(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.waiting[t] = false;
    }

    fn peek_next_task(&self, ctx: &Ctx, _rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.waiting_slot(ctx, cpu)
    }

    fn pick_next_task(&mut self, ctx: &Ctx, _rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.refresh(ctx);
        let t = self.waiting_slot(ctx, cpu)?;
        self.waiting[t] = false;
        Some(t)
    }

    fn put_prev_task(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.waiting[t] = true;
    }

    fn task_stopped(&mut self, _ctx: &Ctx, _rq: RqId, _t: TaskId) {
        self.completed = true;
    }

    fn job_changed(&mut self, _ctx: &Ctx, _rq: RqId, _t: TaskId) {
        self.completed = true;
    }

    fn uses_tick(&self, _ctx: &Ctx) -> bool {
        false // decisions come from events and the plan's timers
    }

    fn running_tasks_preempt(&self) -> bool {
        false // a CPU keeps its task only where the plan puts it: no running task displaces another
    }

    fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        self.planned(ctx, cand) && !self.planned(ctx, curr)
    }

    fn uses_decision_timer(&self) -> bool {
        true
    }

    fn next_decision(&self, ctx: &Ctx, _rq: RqId, _cpu: CpuId, _curr: TaskId) -> Option<Ns> {
        self.next_instant(ctx)
    }

    fn decision_due(&mut self, _ctx: &Ctx, _rq: RqId, _cpu: CpuId, _curr: TaskId) -> bool {
        false // the plan is brought up to date at the decision; keeps_cpu acts on it
    }

    fn next_decision_idle(&self, ctx: &Ctx, _rq: RqId, _cpu: CpuId) -> Option<Ns> {
        self.next_instant(ctx)
    }

    fn decides_running(&self) -> bool {
        true
    }

    fn keeps_cpu(&mut self, ctx: &Ctx, cpu: CpuId, curr: TaskId) -> bool {
        self.refresh(ctx);
        self.plan.slot(ctx, cpu) == Some(curr)
    }

    fn check(&self, ctx: &Ctx) -> Result<(), String> {
        for cpu in 0..ctx.cpus.len() {
            let Some(t) = self.plan.slot(ctx, cpu) else {
                continue;
            };
            if let Some(other) =
                (cpu + 1..ctx.cpus.len()).find(|&c| self.plan.slot(ctx, c) == Some(t))
            {
                return Err(format!("task {t} is planned on CPUs {cpu} and {other}"));
            }
        }
        match (0..self.waiting.len()).find(|&t| self.waiting[t] && ctx.task(t).on_cpu.is_some()) {
            Some(t) => Err(format!("task {t} is queued while it runs")),
            None => Ok(()),
        }
    }

    fn report(&self, ctx: &Ctx, names: &[String]) -> Option<serde_json::Value> {
        self.plan.report(ctx, names)
    }
}

/// A TL-plane (Cho, Ravindran & Jensen's *time and local remaining execution* plane),
/// what `llref` and `lre-tl` share: the plane's end and each job's *local remaining
/// execution* `l`, its share of the plane ([`shares`]), which falls at rate 1 while the
/// job runs.
#[derive(Default)]
pub struct TlPlane {
    /// End of the current plane.
    tf: Ns,
    /// Per task: local remaining execution at the plane's start, and the job's remaining
    /// time then (so that `l` now is the former minus what ran since).
    local: Vec<(Ns, Ns)>,
}

impl TlPlane {
    /// End of the current plane.
    pub fn end(&self) -> Ns {
        self.tf
    }

    /// Whether a new plane begins now: at a release, at the plane's end, or before the
    /// first plane.
    pub fn due(&self, ctx: &Ctx, released: bool) -> bool {
        released || ctx.now >= self.tf || self.local.len() != ctx.tasks.len()
    }

    /// `t`'s local remaining execution now.
    pub fn local_remaining(&self, ctx: &Ctx, t: TaskId) -> Ns {
        let Some(&(l, rem)) = self.local.get(t) else {
            return 0;
        };
        l.saturating_sub(rem.saturating_sub(ctx.task(t).remaining()))
    }

    /// Begin a plane now: it ends at the earliest deadline of the active jobs, each of
    /// which gets its share. The shares (task, `l`), active jobs in task order.
    pub fn begin(&mut self, ctx: &Ctx, wcet: &[Ns]) -> Vec<(TaskId, Ns)> {
        self.local.clear();
        self.local.resize(ctx.tasks.len(), (0, 0));
        let Some(tf) = next_deadline(ctx, 0..ctx.tasks.len()) else {
            self.tf = ctx.now;
            return Vec::new();
        };
        self.tf = tf;
        let active: Vec<TaskId> = (0..ctx.tasks.len()).filter(|&t| active(ctx, t)).collect();
        let shares = shares(ctx, wcet, &active, tf);
        for &(t, l) in &shares {
            self.local[t] = (l, ctx.task(t).remaining());
        }
        shares
    }
}

/// Whether `t` is a task of the deadline class (the class these policies fill) with a
/// job that has work left.
pub fn active(ctx: &Ctx, t: TaskId) -> bool {
    let ts = ctx.task(t);
    ts.class == ClassId::Dl && ts.runnable && ts.job.is_some_and(|j| j.remaining > 0)
}

/// The earliest deadline after `now` of the active jobs (the end of the slice or TL-plane
/// that begins now), if any.
pub fn next_deadline(ctx: &Ctx, tasks: impl Iterator<Item = TaskId>) -> Option<Ns> {
    tasks
        .filter(|&t| active(ctx, t))
        .filter_map(|t| ctx.task(t).job.map(|j| j.deadline))
        .filter(|&d| d > ctx.now)
        .min()
}

/// The shares of the active jobs among `tasks` of the slice `[now, tf)`, in task order:
/// each job's fluid work by `tf` (rate `wcet/(d − r)` from its release), minus what it
/// has executed, rounded to a neighbouring integer so that the total is the exact total
/// rounded down (Hamilton's apportionment: every share is first rounded down, then the
/// units left go to the largest fractional parts, ties in task order). A job whose
/// deadline is `tf` gets exactly its remaining time. Each share is at most the job's
/// remaining time and the slice's length, and the total at most `m·(tf − now)`.
///
/// Every job then stays within 1 ns of its fluid schedule, and with `U = m` the slices
/// are exactly full: rounding each share down alone would leave the schedule behind
/// the fluid one by up to 1 ns per task, which a full slice ending at a deadline cannot
/// make up.
pub fn shares(ctx: &Ctx, wcet: &[Ns], tasks: &[TaskId], tf: Ns) -> Vec<(TaskId, Ns)> {
    let len = tf.saturating_sub(ctx.now);
    // (task, share, fractional part as (numerator, denominator), cap)
    let mut out: Vec<(TaskId, Ns, (u128, u128), Ns)> = Vec::with_capacity(tasks.len());
    for &t in tasks {
        let Some(j) = ctx.task(t).job else { continue };
        let cap = j.remaining.min(len);
        if tf >= j.deadline {
            out.push((t, cap, (0, 1), cap));
            continue;
        }
        let span = j.deadline.saturating_sub(j.release).max(1) as u128;
        let by = tf.saturating_sub(j.release) as u128;
        let done = j.exec.saturating_sub(j.remaining) as u128;
        // ideal = (wcet·by − done·span) / span
        let num = wcet[t] as u128 * by;
        let owed = done * span;
        let (whole, frac) = if num > owed {
            ((num - owed) / span, (num - owed) % span)
        } else {
            (0, 0)
        };
        let share = whole.min(cap as u128) as Ns;
        out.push((t, share, (frac, span), cap));
    }
    let capacity = len as u128 * ctx.cpus.len() as u128;
    let total: u128 = out.iter().map(|s| s.1 as u128).sum();
    let fracs: f64 = out.iter().map(|s| s.2 .0 as f64 / s.2 .1 as f64).sum();
    // The units the rounding down left out (the sum of the fractional parts is an
    // integer when the slice is full; the margin absorbs the float error of the sum).
    let mut units = (fracs + 1e-6).floor() as u128;
    units = units.min(capacity.saturating_sub(total));
    let mut order: Vec<usize> = (0..out.len()).filter(|&i| out[i].2 .0 > 0).collect();
    // Largest fractional part first: a/b > c/d  <=>  a·d > c·b.
    order.sort_by(|&a, &b| {
        let (x, y) = (out[a].2, out[b].2);
        (y.0 * x.1).cmp(&(x.0 * y.1)).then(out[a].0.cmp(&out[b].0))
    });
    for i in order {
        if units == 0 {
            break;
        }
        if out[i].1 < out[i].3 {
            out[i].1 += 1;
            units -= 1;
        }
    }
    let mut fitted: Vec<(TaskId, Ns, Ns)> = out
        .iter()
        .map(|s| (s.0, s.1, ctx.task(s.0).job.map_or(Ns::MAX, |j| j.deadline)))
        .collect();
    fit(&mut fitted, capacity, tf);
    fitted.into_iter().map(|s| (s.0, s.1)).collect()
}

/// Make `shares` (task, share, deadline) fit in `capacity`: take 1 ns at a time, last
/// task first, from shares whose job's deadline is after `tf` (only when the jobs are
/// already behind their fluid schedule by more than the slice's spare capacity). Shares
/// of jobs due at `tf` are never cut.
fn fit(shares: &mut [(TaskId, Ns, Ns)], capacity: u128, tf: Ns) {
    let mut total: u128 = shares.iter().map(|s| s.1 as u128).sum();
    while total > capacity {
        let mut cut = false;
        for s in shares.iter_mut().rev() {
            if total <= capacity {
                break;
            }
            if s.2 > tf && s.1 > 0 {
                s.1 -= 1;
                total -= 1;
                cut = true;
            }
        }
        if !cut {
            return; // only jobs due at tf: the slice cannot hold them
        }
    }
}

/// Per CPU, the task it runs when the set `run` (at most one task per CPU) runs: a task
/// already running on a CPU stays there; the others go to the free CPUs, each to the CPU
/// its job last ran on if that is free, else to the lowest free CPU.
pub fn place(ctx: &Ctx, run: &[TaskId]) -> Vec<Option<TaskId>> {
    let ncpu = ctx.cpus.len();
    let mut slots: Vec<Option<TaskId>> = vec![None; ncpu];
    let mut rest = Vec::new();
    for &t in run {
        match ctx
            .task(t)
            .on_cpu
            .filter(|&c| c < ncpu && slots[c].is_none())
        {
            Some(c) if ctx.cpus[c].curr == Some(t) => slots[c] = Some(t),
            _ => rest.push(t),
        }
    }
    let mut later = Vec::new();
    for t in rest {
        match ctx
            .task(t)
            .job_last_cpu
            .filter(|&c| c < ncpu && slots[c].is_none())
        {
            Some(c) if !run.iter().any(|&o| o != t && ctx.task(o).on_cpu == Some(c)) => {
                slots[c] = Some(t)
            }
            _ => later.push(t),
        }
    }
    for t in later {
        if let Some(c) = (0..ncpu).find(|&c| slots[c].is_none()) {
            slots[c] = Some(t);
        }
    }
    slots
}

/// A boundary scheduler's class for a workload: global placement only, every CPU open to
/// every task it schedules (the plans place its tasks on any CPU).
pub fn build<P: Plan + 'static>(
    w: &schedlab_model::Workload,
    plan: P,
) -> Result<Fluid<P>, crate::SimError> {
    let name = plan.name();
    if w.scheduler.placement != schedlab_model::Placement::Global {
        return Err(crate::SimError::Unsupported(format!(
            "{name} is a global scheduler: use placement global"
        )));
    }
    let planned = |t: &&schedlab_model::Task| t.class == schedlab_model::TaskClass::Deadline;
    if let Some(t) = w
        .tasks
        .iter()
        .filter(planned)
        .find(|t| t.affinity.is_some())
    {
        return Err(crate::SimError::Unsupported(format!(
            "{name} places tasks on any CPU: task `{}` has an affinity",
            t.name
        )));
    }
    let wcet = w.tasks.iter().map(|t| t.runtime).collect();
    Ok(Fluid::new(plan, wcet))
}
