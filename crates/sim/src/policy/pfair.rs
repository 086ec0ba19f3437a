//! What the quantum-based schedulers (`pd2`, `er-pd2`, `epdf`, `bf`) share: time cut into
//! quanta of `platform.quantum`, a decision only at each quantum boundary, and a job's
//! progress counted in quanta received.
//!
//! At every boundary [`Quantum`] syncs each task's job (a new job starts its windows at
//! the first boundary at or after its release), counts one quantum for each task that held
//! the quantum just ended, and asks its [`SlotRule`] for the at most m tasks that run
//! until the next boundary. Only those are offered to the engine: a CPU whose chosen task
//! completes early idles until the boundary (the quantum is that task's), and a chosen
//! task preempts only an unchosen one. A running task that is not chosen for the next
//! quantum is rescheduled at the boundary ([`SchedClass::decision_due`]). The rules
//! assume every task may run on every CPU (as the papers do): affinities and isolated
//! CPUs are honoured by the engine's placement only, so a chosen task no allowed CPU can
//! take loses that quantum, which then does not count as received.
//!
//! The Pfair windows ([`window`]) follow Anderson & Srinivasan: a task of weight e/L (e
//! quanta of WCET every L quanta: `L` is the relative deadline, or the period if shorter)
//! has subtasks T_1..T_e per job, T_i released at ⌊(i−1)L/e⌋ and due at ⌈iL/e⌉ after its
//! job's first boundary.
//!
//! Parameters that are not whole quanta are rounded as SimSo rounds them: the WCET up
//! (e = ⌈WCET/q⌉: a job reserves whole quanta and, doing only its real work, ends inside
//! its last one, which then idles), and each job's window to the quanta that lie wholly
//! between its release and its deadline (from ⌈r/q⌉ to ⌊(r + min(D, T))/q⌋), so that a
//! subtask meeting its pseudo-deadline never makes its job late. With whole-quantum
//! parameters nothing is rounded and the schedulers' guarantees hold (PD², ER-PD² and BF
//! are optimal); rounded sets may need more than U ≤ m.

use crate::class::{EnqueueReason, SchedClass};
use crate::state::{ClassId, CpuId, Ctx, RqId, TaskId};
use schedlab_model::{Ns, Placement, Workload};

/// A task's parameters counted in quanta.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskQuanta {
    /// Quanta of WCET per job (e).
    pub e: u64,
    /// Quanta of the job's window: its relative deadline, or its period if shorter (L);
    /// in an [`ActiveJob`], that job's own window (see the module's rounding rule).
    pub window: u64,
    /// Quanta of the period.
    pub period: u64,
    /// Quanta of the offset (first release).
    pub offset: u64,
}

/// A runnable task's current job, as the rules see it at a boundary.
#[derive(Debug, Clone, Copy)]
pub struct ActiveJob {
    /// The task.
    pub task: TaskId,
    /// The task's parameters.
    pub q: TaskQuanta,
    /// The quantum (index) at which the job's windows start.
    pub anchor: u64,
    /// Quanta the job has received.
    pub done: u64,
}

impl ActiveJob {
    /// Subtask index of the job's next quantum (1-based).
    pub fn subtask(&self) -> u64 {
        self.done + 1
    }

    /// The window of its next subtask, in absolute quanta.
    pub fn window(&self) -> Window {
        let w = window(self.q.e, self.q.window, self.subtask());
        Window {
            release: self.anchor + w.release,
            deadline: self.anchor + w.deadline,
            ..w
        }
    }
}

/// The Pfair window of one subtask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Pseudo-release r(T_i) = ⌊(i−1)L/e⌋ (quanta).
    pub release: u64,
    /// Pseudo-deadline d(T_i) = ⌈iL/e⌉ (quanta).
    pub deadline: u64,
    /// The b-bit: 1 when T_i's window overlaps T_{i+1}'s (iL/e not a whole number).
    pub b: bool,
}

/// Subtask `i` (1-based) of a task with `e` quanta every `l` quanta, relative to its
/// job's first quantum. Subtasks past `e` (a job that overran its WCET) continue the
/// pattern.
pub fn window(e: u64, l: u64, i: u64) -> Window {
    let lo = (i - 1) as u128 * l as u128;
    let hi = i as u128 * l as u128;
    let e = e as u128;
    Window {
        release: (lo / e) as u64,
        deadline: hi.div_ceil(e) as u64,
        b: !hi.is_multiple_of(e),
    }
}

/// Picks the tasks that hold the next quantum.
pub trait SlotRule {
    /// Registry name of the policy.
    fn name(&self) -> &'static str;

    /// Put in `out` at most `m` of `jobs` (distinct tasks) to run in quantum `slot`
    /// (index from time 0); `jobs` is in task order.
    fn choose(&mut self, slot: u64, jobs: &[ActiveJob], m: usize, out: &mut Vec<TaskId>);
}

/// Per task: the job whose quanta are counted.
#[derive(Debug, Clone, Copy, Default)]
struct Progress {
    seq: Option<u64>,
    anchor: u64,
    /// The job's window in quanta.
    window: u64,
    done: u64,
}

/// A quantum-driven global class around a [`SlotRule`].
pub struct Quantum<R: SlotRule> {
    rule: R,
    q: Ns,
    params: Vec<Option<TaskQuanta>>,
    /// Per task: min(relative deadline, period), ns.
    span: Vec<Ns>,
    nr_cpus: usize,
    /// Per task: waiting in this class's queue.
    queued: Vec<bool>,
    progress: Vec<Progress>,
    /// Per task: holds the current quantum.
    chosen: Vec<bool>,
    /// Per task: got a CPU in the current quantum (a chosen task may not: its affinity,
    /// or kernel work on the CPUs it may use); only then does the quantum count.
    ran: Vec<bool>,
    /// The current quantum's tasks with the job each was chosen for, in the rule's order.
    holders: Vec<(TaskId, Option<u64>)>,
    scratch_jobs: Vec<ActiveJob>,
    scratch_out: Vec<TaskId>,
}

impl<R: SlotRule> Quantum<R> {
    /// The class for workload `w` under `rule`, or why `w` cannot use it (placement other
    /// than global).
    pub fn for_workload(w: &Workload, rule: R) -> Result<Quantum<R>, crate::SimError> {
        let name = rule.name();
        if w.scheduler.placement != Placement::Global {
            return Err(crate::SimError::Unsupported(format!(
                "{name} is a global scheduler: use placement global"
            )));
        }
        let q = w.platform.quantum;
        let mut params = Vec::with_capacity(w.tasks.len());
        let mut span = Vec::with_capacity(w.tasks.len());
        for t in &w.tasks {
            let Some(period) = t.period.filter(|_| !t.class.is_fair()) else {
                params.push(None);
                span.push(0);
                continue;
            };
            let d = t.deadline.min(period);
            span.push(d);
            params.push(Some(TaskQuanta {
                e: t.runtime.div_ceil(q).max(1),
                window: (d / q).max(1),
                period: period / q,
                offset: t.offset / q,
            }));
        }
        Ok(Quantum {
            rule,
            q,
            params,
            span,
            nr_cpus: w.platform.cpus,
            queued: Vec::new(),
            progress: Vec::new(),
            chosen: Vec::new(),
            ran: Vec::new(),
            holders: Vec::new(),
            scratch_jobs: Vec::new(),
            scratch_out: Vec::new(),
        })
    }

    /// The tasks' parameters in quanta (None for tasks this class does not schedule).
    pub fn params(&self) -> &[Option<TaskQuanta>] {
        &self.params
    }

    fn job_seq(ctx: &Ctx, t: TaskId) -> Option<u64> {
        ctx.task(t).job.map(|j| j.seq)
    }
}

impl<R: SlotRule> SchedClass for Quantum<R> {
    fn name(&self) -> &'static str {
        self.rule.name()
    }

    fn init(&mut self, _nr_rqs: usize, nr_tasks: usize) {
        self.queued = vec![false; nr_tasks];
        self.progress = vec![Progress::default(); nr_tasks];
        self.chosen = vec![false; nr_tasks];
        self.ran = vec![false; nr_tasks];
        self.params.resize(nr_tasks, None);
        self.span.resize(nr_tasks, 0);
    }

    fn quantum(&self) -> Option<Ns> {
        Some(self.q)
    }

    fn quantum_boundary(&mut self, ctx: &Ctx) {
        let slot = ctx.now / self.q;
        // The quantum just ended counts for the job each holder held it for.
        for &(t, seq) in &self.holders {
            if self.ran[t] && seq.is_some() && self.progress[t].seq == seq {
                self.progress[t].done += 1;
            }
            self.chosen[t] = false;
            self.ran[t] = false;
        }
        self.holders.clear();
        let mut jobs = std::mem::take(&mut self.scratch_jobs);
        jobs.clear();
        for (t, ts) in ctx.tasks.iter().enumerate() {
            let (Some(p), Some(job)) = (self.params[t], ts.job) else {
                continue;
            };
            if ts.class != ClassId::Dl || !ts.runnable {
                continue;
            }
            let pr = &mut self.progress[t];
            if pr.seq != Some(job.seq) {
                let anchor = job.release.div_ceil(self.q);
                let end = job.release.saturating_add(self.span[t]) / self.q;
                *pr = Progress {
                    seq: Some(job.seq),
                    anchor,
                    window: end.saturating_sub(anchor).max(1),
                    done: 0,
                };
            }
            jobs.push(ActiveJob {
                task: t,
                q: TaskQuanta {
                    window: pr.window,
                    ..p
                },
                anchor: pr.anchor,
                done: pr.done,
            });
        }
        let mut out = std::mem::take(&mut self.scratch_out);
        out.clear();
        self.rule.choose(slot, &jobs, self.nr_cpus, &mut out);
        debug_assert!(out.len() <= self.nr_cpus);
        for &t in &out {
            self.chosen[t] = true;
            self.ran[t] = ctx.task(t).on_cpu.is_some();
            self.holders.push((t, Self::job_seq(ctx, t)));
        }
        self.scratch_jobs = jobs;
        self.scratch_out = out;
    }

    fn enqueue_task(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId, _why: EnqueueReason) {
        self.queued[t] = true;
    }

    fn dequeue_task(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.queued[t] = false;
    }

    fn peek_next_task(&self, ctx: &Ctx, _rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.holders
            .iter()
            .map(|h| h.0)
            .find(|&t| self.queued[t] && ctx.allowed(t, cpu))
    }

    fn pick_next_task(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        let t = self.peek_next_task(ctx, rq, cpu)?;
        self.queued[t] = false;
        self.ran[t] = true;
        Some(t)
    }

    fn put_prev_task(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.queued[t] = true;
    }

    fn uses_tick(&self, _ctx: &Ctx) -> bool {
        false // decisions come at quantum boundaries
    }

    fn running_tasks_preempt(&self) -> bool {
        false // every running task holds the current quantum
    }

    fn wakeup_preempt(&self, _ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        self.chosen[cand] && !self.chosen[curr]
    }

    fn decision_due(&mut self, _ctx: &Ctx, _rq: RqId, _cpu: CpuId, curr: TaskId) -> bool {
        !self.chosen[curr]
    }

    fn check(&self, ctx: &Ctx) -> Result<(), String> {
        if self.holders.len() > self.nr_cpus {
            return Err(format!(
                "{} tasks hold a quantum on {} CPUs",
                self.holders.len(),
                self.nr_cpus
            ));
        }
        for (t, ts) in ctx.tasks.iter().enumerate() {
            if ts.on_cpu.is_some() && self.queued[t] {
                return Err(format!("task {t} is queued while it runs"));
            }
            if ts.runnable && ts.class == ClassId::Dl && ts.on_cpu.is_some() && !self.chosen[t] {
                return Err(format!("task {t} runs without holding the quantum"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_of_weight_8_11_match_anderson_srinivasan() {
        // The weight-8/11 task of Anderson & Srinivasan's figure: windows
        // [0,2) [1,3) [2,5) [4,6) [5,7) [6,9) [8,10) [9,11).
        let got: Vec<(u64, u64)> = (1..=8)
            .map(|i| window(8, 11, i))
            .map(|w| (w.release, w.deadline))
            .collect();
        assert_eq!(
            got,
            [
                (0, 2),
                (1, 3),
                (2, 5),
                (4, 6),
                (5, 7),
                (6, 9),
                (8, 10),
                (9, 11)
            ]
        );
        let b: Vec<bool> = (1..=8).map(|i| window(8, 11, i).b).collect();
        assert_eq!(b, [true, true, true, true, true, true, true, false]);
    }
}
