//! `edhs`: a semi-partitioned EDF (Kato & Yamasaki's EDHS, as SimSo 0.8.5 cites it: "Semi-
//! partitioning technique for multiprocessor real-time scheduling"). **Rule as in SimSo
//! 0.8.5's EDHS.py; the paper's text was not available.**
//!
//! The tasks are placed first-fit in workload order (a CPU takes a task while its
//! utilisation stays ≤ 1). A task that fits nowhere is split: its utilisation is cut into
//! portions, one per CPU with spare capacity (in CPU order), each portion u giving a
//! budget ⌈u·T⌉. Each CPU runs EDF over its own tasks, except that a job of a split task
//! runs before all of them while it is on that CPU: released on the first CPU of its
//! task, it runs there for that CPU's budget (it has the highest priority, so the budget
//! is wall-clock time), then moves to the next CPU for the next budget, and so on; it
//! leaves a CPU early when it completes. Decisions are per CPU; the engine's global
//! placement only ever offers a CPU the tasks of that CPU.
//!
//! SimSo's evident bugs, fixed here: (1) its split portions use the CPUs' spare capacity
//! without subtracting the portions already given to an earlier split task, so two split
//! tasks can overload a CPU (here each portion is taken off the CPU's spare capacity);
//! (2) a CPU holds one split job at a time, so a second one arriving there replaces the
//! first (here the one whose portion started first keeps the CPU; the other waits, FIFO);
//! (3) the plan is in module globals shared by every simulation in the process.
//! Utilisations are compared in f64 with a 10⁻⁹ slack (SimSo: exact fractions of its
//! float milliseconds), so a CPU filled to exactly 1 still takes its last task.
//! A split job still unfinished after its last budget waits, as in SimSo, until it
//! completes or its deadline aborts it (it has no CPU left).

use crate::class::{EnqueueReason, SchedClass};
use crate::policy::job_prio::require_global;
use crate::queue::Keyed;
use crate::state::{CpuId, Ctx, RqId, TaskId};
use crate::SimError;
use schedlab_model::{Ns, TaskClass, Workload};

/// Registry name.
pub const NAME: &str = "edhs";

/// Where a task runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Home {
    /// On one CPU.
    Cpu(CpuId),
    /// Split: (CPU, budget) in order.
    Split(Vec<(CpuId, Ns)>),
}

/// Slack in utilisation comparisons: utilisations are f64 (exact fractions of periods in
/// ns overflow u128 on large sets), so sums that are 1 in exact arithmetic still fit.
const EPS: f64 = 1e-9;

/// The partition: per task (workload order), its home.
pub fn plan(w: &Workload) -> Vec<Home> {
    let m = w.platform.cpus;
    let mut load = vec![0.0f64; m];
    let mut homes = Vec::with_capacity(w.tasks.len());
    let mut split = Vec::new();
    for (i, t) in w.tasks.iter().enumerate() {
        let (c, p) = match t.period {
            Some(p) if t.class == TaskClass::Deadline && p > 0 => (t.runtime, p),
            _ => (0, 1),
        };
        let u = c as f64 / p as f64;
        match (0..m).find(|&j| load[j] + u <= 1.0 + EPS) {
            Some(j) => {
                load[j] += u;
                homes.push(Home::Cpu(j));
            }
            None => {
                homes.push(Home::Split(Vec::new()));
                split.push((i, u, p));
            }
        }
    }
    for (i, mut rem, p) in split {
        // The remaining utilisation, taken from each CPU's spare capacity in turn.
        let mut parts = Vec::new();
        for (j, l) in load.iter_mut().enumerate() {
            let spare = 1.0 - *l;
            if rem <= EPS {
                break;
            }
            if spare <= EPS {
                continue;
            }
            let u = rem.min(spare);
            // ⌈u·T⌉, not rounded up by the f64 error of u·T.
            let budget = (u * p as f64 - 1e-6).ceil().max(1.0) as Ns;
            parts.push((j, budget));
            *l += u;
            rem -= u;
        }
        homes[i] = Home::Split(parts);
    }
    homes
}

/// Per split job: which portion it is on and when that portion ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Portion {
    /// Index in the task's parts.
    part: usize,
    /// When the portion started, and its end.
    start: Ns,
    end: Ns,
    /// The job it belongs to.
    seq: u64,
}

/// Semi-partitioned EDF with split tasks on top.
#[derive(Default)]
pub struct Edhs {
    /// CPUs (m).
    m: usize,
    homes: Vec<Home>,
    /// Per CPU: its own waiting tasks by deadline.
    edf: Keyed,
    /// Per task: waiting.
    waiting: Vec<bool>,
    /// Per split task: its current job's portion.
    portion: Vec<Option<Portion>>,
}

impl Edhs {
    /// The class for a plan.
    pub fn new(m: usize, homes: Vec<Home>) -> Edhs {
        Edhs {
            m,
            homes,
            ..Edhs::default()
        }
    }

    /// The CPU a split task's job is on now, if any.
    fn split_cpu(&self, t: TaskId) -> Option<CpuId> {
        let p = self.portion.get(t).copied().flatten()?;
        match &self.homes[t] {
            Home::Split(parts) => parts.get(p.part).map(|x| x.0),
            Home::Cpu(_) => None,
        }
    }

    /// The split job that holds `cpu` (the earliest-started portion there).
    fn split_on(&self, cpu: CpuId) -> Option<TaskId> {
        (0..self.portion.len())
            .filter(|&t| self.split_cpu(t) == Some(cpu))
            .min_by_key(|&t| (self.portion[t].map(|p| p.start), t))
    }

    /// The CPU whose queue offers `t`: its own, or its split job's current portion's.
    fn offered_cpu(&self, t: TaskId) -> Option<CpuId> {
        match self.homes.get(t) {
            Some(Home::Cpu(c)) => Some(*c),
            Some(Home::Split(_)) => self.split_cpu(t),
            None => None,
        }
    }

    fn is_split(&self, t: TaskId) -> bool {
        matches!(self.homes.get(t), Some(Home::Split(_)))
    }

    /// Start `t`'s current job on its first portion.
    fn start_split(&mut self, ctx: &Ctx, t: TaskId) {
        let Some(seq) = ctx.task(t).job.map(|j| j.seq) else {
            return;
        };
        let first = match &self.homes[t] {
            Home::Split(parts) => parts.first().copied(),
            Home::Cpu(_) => None,
        };
        self.portion[t] = first.map(|(_, b)| Portion {
            part: 0,
            start: ctx.now,
            end: ctx.now + b,
            seq,
        });
    }

    /// Move split jobs whose portion ended to their next CPU (or off every CPU).
    fn advance(&mut self, ctx: &Ctx) {
        for t in 0..self.portion.len() {
            let Some(p) = self.portion[t] else { continue };
            if p.end > ctx.now {
                continue;
            }
            let next = match &self.homes[t] {
                Home::Split(parts) => parts.get(p.part + 1).copied(),
                Home::Cpu(_) => None,
            };
            self.portion[t] = next.map(|(_, b)| Portion {
                part: p.part + 1,
                start: ctx.now,
                end: ctx.now + b,
                seq: p.seq,
            });
        }
    }

    fn deadline(ctx: &Ctx, t: TaskId) -> Ns {
        ctx.task(t).job.map_or(Ns::MAX, |j| j.deadline)
    }

    /// The task `cpu` should run: its split job if one holds it, else its EDF head.
    fn best_for(&self, ctx: &Ctx, cpu: CpuId) -> Option<TaskId> {
        if let Some(s) = self.split_on(cpu) {
            if self.waiting[s] {
                return Some(s);
            }
            if ctx.task(s).on_cpu == Some(cpu) {
                return None; // it runs there already
            }
        }
        self.edf.peek(ctx, cpu, cpu)
    }
}

impl SchedClass for Edhs {
    fn name(&self) -> &'static str {
        NAME
    }

    fn init(&mut self, _nr_rqs: usize, nr_tasks: usize) {
        self.homes.resize(nr_tasks, Home::Cpu(0));
        self.edf = Keyed::new(self.m.max(1), nr_tasks);
        self.waiting = vec![false; nr_tasks];
        self.portion = vec![None; nr_tasks];
    }

    fn enqueue_task(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId, _why: EnqueueReason) {
        self.waiting[t] = true;
        match self.homes[t] {
            Home::Cpu(c) => self.edf.push(c, t, Self::deadline(ctx, t)),
            Home::Split(_) => self.start_split(ctx, t),
        }
    }

    fn dequeue_task(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.waiting[t] = false;
        if let Home::Cpu(c) = self.homes[t] {
            self.edf.remove(c, t);
        }
        self.portion[t] = None;
    }

    fn peek_next_task(&self, ctx: &Ctx, _rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.best_for(ctx, cpu)
    }

    fn pick_next_task(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        let t = self.peek_next_task(ctx, rq, cpu)?;
        self.waiting[t] = false;
        if let Home::Cpu(c) = self.homes[t] {
            self.edf.remove(c, t);
        }
        Some(t)
    }

    fn put_prev_task(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.waiting[t] = true;
        if let Home::Cpu(c) = self.homes[t] {
            self.edf.push(c, t, Self::deadline(ctx, t));
        }
    }

    fn task_stopped(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.portion[t] = None;
    }

    fn job_changed(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId) {
        if self.is_split(t) {
            self.start_split(ctx, t);
        }
    }

    fn uses_tick(&self, _ctx: &Ctx) -> bool {
        false
    }

    /// Only ever asked with `cand` offered to `curr`'s CPU (`peek_next_task` answers per
    /// CPU): a split job takes its CPU; otherwise EDF within the CPU.
    fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        if self.is_split(curr) {
            // It keeps its CPU while its portion is there (a new job of it starts on the
            // first CPU of its task, which may be another). The CPU is the one `cand` is
            // offered to, not `curr`'s `on_cpu`: during a decision `curr` may be only
            // assigned to the CPU its portion just moved to, not yet running there.
            return self.offered_cpu(cand) != self.split_cpu(curr);
        }
        if self.is_split(cand) {
            return self.split_cpu(cand).is_some();
        }
        Self::deadline(ctx, cand) < Self::deadline(ctx, curr)
    }

    fn uses_decision_timer(&self) -> bool {
        true
    }

    /// The end of the portion of the split job running on `cpu`, or the end of the
    /// portion that brings a split job to `cpu`.
    fn next_decision(&self, ctx: &Ctx, _rq: RqId, _cpu: CpuId, _curr: TaskId) -> Option<Ns> {
        self.portion
            .iter()
            .flatten()
            .map(|p| p.end)
            .filter(|&e| e > ctx.now)
            .min()
    }

    fn decision_due(&mut self, ctx: &Ctx, _rq: RqId, cpu: CpuId, curr: TaskId) -> bool {
        self.advance(ctx);
        // The split job leaves this CPU at the end of its portion.
        self.is_split(curr) && self.split_cpu(curr) != Some(cpu)
    }

    fn check(&self, ctx: &Ctx) -> Result<(), String> {
        for t in 0..self.waiting.len() {
            if self.waiting[t] && ctx.task(t).on_cpu.is_some() {
                return Err(format!("task {t} is queued while it runs"));
            }
            if let Some(p) = self.portion[t] {
                if ctx.task(t).job.map(|j| j.seq) != Some(p.seq) && ctx.task(t).runnable {
                    return Err(format!("task {t}'s portion is for another job"));
                }
            }
        }
        Ok(())
    }

    /// The partition: per CPU the tasks placed whole on it, and the split tasks with
    /// their portions in order (CPU, budget, and the share budget / period).
    fn report(&self, ctx: &Ctx, names: &[String]) -> Option<serde_json::Value> {
        let ours = |t: TaskId| {
            ctx.task(t).kind == TaskClass::Deadline && ctx.task(t).period != Ns::MAX
        };
        let name = |t: TaskId| names.get(t).cloned().unwrap_or_default();
        let mut whole = vec![Vec::new(); self.m];
        let mut split = Vec::new();
        let mut text = String::new();
        for (t, home) in self.homes.iter().enumerate().filter(|&(t, _)| ours(t)) {
            match home {
                Home::Cpu(c) => whole[*c].push(name(t)),
                Home::Split(parts) => {
                    let period = ctx.task(t).period;
                    let shown: Vec<String> = parts
                        .iter()
                        .map(|&(c, b)| format!("cpu{c} {}", schedlab_model::format_ns(b)))
                        .collect();
                    text += &format!("  split {}: {}\n", name(t), shown.join(", "));
                    let portions: Vec<serde_json::Value> = parts
                        .iter()
                        .map(|&(c, b)| {
                            serde_json::json!({
                                "cpu": c,
                                "budget_ns": b,
                                "share": b as f64 / period as f64,
                            })
                        })
                        .collect();
                    split.push(serde_json::json!({
                        "task": name(t),
                        "period_ns": period,
                        "portions": portions,
                    }));
                }
            }
        }
        let mut head = String::new();
        for (c, tasks) in whole.iter().enumerate() {
            head += &format!("  cpu{c}: [{}]\n", tasks.join(" "));
        }
        Some(serde_json::json!({
            "kind": "edhs-partition",
            "cpus": whole,
            "split": split,
            "text": head + &text,
        }))
    }
}

/// The registry's constructor: global placement only (the class places the tasks).
pub fn build(w: &Workload) -> Result<Edhs, SimError> {
    require_global(w, NAME)?;
    Ok(Edhs::new(w.platform.cpus, plan(w)))
}

/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Edhs,
    build: |w| Ok(Box::new(crate::policy::edhs::build(w)?)),
}];
