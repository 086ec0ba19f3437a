//! The discrete-event engine: time, events, CPUs, accounting, CBS and placement.
//!
//! Events are processed in time order; events at the same instant in this fixed order
//! (then by insertion): CPU timers (job completion, budget exhaustion, class decision
//! instants), CBS replenishments, deadline checks, job releases (workload order), the
//! tick. Only after every event of an instant has been handled does the engine make
//! scheduling decisions, CPU by CPU in index order — like `need_resched` being acted on
//! when the interrupt handlers return. The window is `[0, duration]`: releases and ticks
//! happen before `duration`, completions at exactly `duration` still count, and no
//! decision is taken at `duration` itself.
//!
//! Each CPU has one timer (a kernel hrtimer), re-armed after every instant for whichever
//! comes first: the running job's completion, its exact CBS budget exhaustion (with
//! `hrtick`), or the instant its class asks to reconsider the CPU
//! ([`SchedClass::next_decision`]; exact-mode `llf` arms it where a waiting job's laxity
//! crosses the running job's, `edzl` where a waiting job's laxity reaches zero). A
//! decision instant that coincides with the completion is handled as the completion.
//! When the decision instant fires, the class is told ([`SchedClass::decision_due`]) and
//! the CPU is marked for a decision like any other event of that instant, so releases
//! at the same instant are seen before the CPU decides. A timer whose instant moved is
//! superseded by its generation number, never removed from the heap, so runs stay
//! deterministic.
//!
//! Interrupts and kernel work ([`kernel`], docs/latency.md: device interrupts, timer-wheel
//! cascades and expiries, kernel sections of fair tasks) come after the tick in an
//! instant (interrupts in platform order, then kernel sections, then ends of kernel work,
//! each by insertion). While a CPU does kernel work it takes no decision: its pending
//! `dirty`/`need_resched` wait for the end of the work, and the time is charged to the
//! running task as `overhead_left`, like the tick cost.

use crate::class::{EnqueueReason, SchedClass};
use crate::result::{
    CpuResult, FairTaskStats, FairnessStats, Segment, SimEvent, SimResult, TaskResult,
};
use crate::state::{ClassId, CpuId, CpuState, Ctx, DlEntity, Job, TaskId, TaskState, TaskStats};
use crate::SimError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedlab_model::time::S;
use schedlab_model::{
    ExecModel, Ns, OnMiss, Phase, Placement, Policy, Release, TaskClass, Workload,
};
use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

mod kernel;
mod latency;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum EventKind {
    CpuTimer { cpu: CpuId, gen: u64 },
    Replenish { task: TaskId },
    DeadlineCheck { task: TaskId, seq: u64 },
    Release { task: TaskId },
    Wake { task: TaskId },
    Tick,
    // Interrupts and kernel work (engine/kernel.rs).
    Irq { src: usize },
    Section { cpu: CpuId },
    KernelEnd { cpu: CpuId },
}

impl EventKind {
    fn rank(self) -> u8 {
        match self {
            EventKind::CpuTimer { .. } => 0,
            EventKind::Replenish { .. } => 1,
            EventKind::DeadlineCheck { .. } => 2,
            EventKind::Release { .. } | EventKind::Wake { .. } => 3,
            EventKind::Tick => 4,
            EventKind::Irq { .. } | EventKind::Section { .. } | EventKind::KernelEnd { .. } => 5,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    time: Ns,
    rank: u8,
    seq: u64,
    kind: EventKind,
}

/// Static per-task release parameters.
struct ReleaseModel {
    release: Release,
    exec: ExecModel,
    runtime: Ns,
    next_seq: u64,
    rng: ChaCha8Rng,
}

/// What an aperiodic fair task does: CPU-bound, finite `work`, or run/sleep phases.
struct Behaviour {
    phases: Vec<Phase>,
    /// Index of the next phase to run.
    next: usize,
    /// CPU time still to do for a task with `work:`.
    work_left: Option<Ns>,
}

/// Execution time of a job that never ends within a run (a CPU-bound task).
const FOREVER: Ns = Ns::MAX / 4;

/// The simulator for one workload under one configuration.
pub struct Engine {
    duration: Ns,
    tick_ns: Ns,
    cs_cost: Ns,
    mig_cost: Ns,
    tick_cost: Ns,
    hrtick: bool,
    cbs: bool,
    placement: Placement,
    on_miss: OnMiss,
    policy_name: String,
    workload_name: String,
    names: Vec<String>,
    partition: Vec<Option<CpuId>>,

    now: Ns,
    tasks: Vec<TaskState>,
    releases: Vec<ReleaseModel>,
    /// Per task: Some for aperiodic fair tasks.
    behaviour: Vec<Option<Behaviour>>,
    /// Per class: one run queue for all CPUs (global placement, BFS) or one per CPU.
    class_global: [bool; 3],
    /// Per CPU: when its next periodic fair load balance is due.
    next_balance: Vec<Ns>,
    /// Per CPU: periodic balances in a row that found an imbalance but moved nothing
    /// (`sd->nr_balance_failed`).
    balance_failed: Vec<u32>,
    /// Wake-up latency per task (first dispatch − release; probes add the wake-up cost).
    latency: Vec<latency::LatencyRec>,
    /// Interrupts, timer wheels, kernel sections; CPUs busy in kernel work.
    kernel: kernel::KernelState,
    /// Largest vruntime spread sampled at ticks.
    vruntime_spread: i64,
    /// Fair-class picks.
    fair_decisions: u64,
    /// Whether any task is in the fair class.
    has_fair: bool,
    /// `sysctl_sched_migration_cost`: recently run tasks are cache-hot.
    migration_cost: Ns,
    cpus: Vec<CpuState>,
    classes: Vec<Box<dyn SchedClass>>,
    events: BinaryHeap<Reverse<Event>>,
    event_seq: u64,
    events_processed: u64,
    laxity_evals: Cell<u64>,
    trace: Option<Vec<Segment>>,
    /// Event log for exporters, recorded with the trace.
    log: Option<Vec<SimEvent>>,
    /// Reused buffers so that scheduling decisions do not allocate.
    scratch_assign: Vec<Option<TaskId>>,
    scratch_cpus: Vec<CpuId>,
    scratch_touched: Vec<bool>,
}

/// Build a read-only context from the engine's fields (a macro so that `self.classes`
/// can be borrowed mutably beside it).
macro_rules! ctx {
    ($s:expr) => {
        Ctx {
            now: $s.now,
            tasks: &$s.tasks,
            cpus: &$s.cpus,
            cbs: $s.cbs,
            laxity_evals: &$s.laxity_evals,
        }
    };
}

impl Engine {
    /// Prepare a run. `classes` holds one class per [`ClassId`] (dl, rt, fair),
    /// `task_class` and `rt_prio` give each task's class and rt priority (1..99).
    pub fn new(
        w: &Workload,
        classes: Vec<Box<dyn SchedClass>>,
        task_class: &[ClassId],
        rt_prio: &[u8],
        partition: Vec<Option<CpuId>>,
        trace: bool,
    ) -> Result<Engine, SimError> {
        let ncpu = w.platform.cpus;
        let tick_ns = if w.platform.hz == 0 {
            0
        } else {
            S / w.platform.hz as u64
        };
        let mut tasks = Vec::with_capacity(w.tasks.len());
        let mut releases = Vec::with_capacity(w.tasks.len());
        for (i, t) in w.tasks.iter().enumerate() {
            // Without an explicit affinity a task avoids the isolated CPUs (isolcpus).
            let mut allowed: Vec<bool> = (0..ncpu)
                .map(|c| {
                    t.allowed_on(c) && (t.affinity.is_some() || !w.platform.isolated.contains(&c))
                })
                .collect();
            if let Some(cpu) = partition[i] {
                allowed = (0..ncpu).map(|c| c == cpu).collect();
            }
            let nr_allowed = allowed.iter().filter(|&&a| a).count();
            let first_allowed = allowed.iter().position(|&a| a).unwrap_or(0);
            // Threads start spread over the CPUs (fork balancing), as on a real system.
            let start_cpu = if allowed[i % ncpu] {
                i % ncpu
            } else {
                first_allowed
            };
            let period = t.period.unwrap_or(Ns::MAX);
            let budget = ((t.runtime as f64) * (1.0 + w.scheduler.dl_margin)).round() as Ns;
            tasks.push(TaskState {
                class: task_class[i],
                rt_key: 99 - rt_prio[i] as u64,
                rel_deadline: t.deadline,
                period,
                round_robin: matches!(
                    (t.class, w.scheduler.policy),
                    (schedlab_model::TaskClass::Rr, _)
                        | (
                            schedlab_model::TaskClass::Deadline,
                            schedlab_model::Policy::Rr
                        )
                ),
                allowed,
                nr_allowed,
                job: None,
                backlog: VecDeque::new(),
                runnable: false,
                on_cpu: None,
                rq: match (w.scheduler.placement, task_class[i]) {
                    (Placement::Global, ClassId::Dl | ClassId::Rt) => 0,
                    (_, ClassId::Fair) if w.scheduler.fair == Policy::Bfs => 0,
                    _ => start_cpu,
                },
                job_last_cpu: None,
                last_cpu: start_cpu,
                last_ran: 0,
                dl: DlEntity {
                    budget: budget.max(1),
                    deadline: 0,
                    runtime: 0,
                    throttled: false,
                },
                stats: TaskStats::default(),
                weight: fair_weight(w, t),
                kind: t.class,
                nice: t.nice,
                job_started: false,
            });
            let seed = w.seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            releases.push(ReleaseModel {
                release: t.release,
                exec: t.exec,
                runtime: t.runtime,
                next_seq: 0,
                rng: ChaCha8Rng::seed_from_u64(seed),
            });
        }
        let rt_global = w.scheduler.placement == Placement::Global;
        let class_global = [rt_global, rt_global, w.scheduler.fair == Policy::Bfs];
        let mut classes = classes;
        for (i, c) in classes.iter_mut().enumerate() {
            c.init(if class_global[i] { 1 } else { ncpu }, tasks.len());
        }
        let behaviour = w
            .tasks
            .iter()
            .map(|t| {
                (t.class.is_fair() && t.period.is_none()).then(|| Behaviour {
                    phases: t.phases.clone(),
                    next: 0,
                    work_left: t.work,
                })
            })
            .collect();
        let latency = w
            .tasks
            .iter()
            .map(|t| latency::LatencyRec::new(t.probe.map(|_| w.platform.wakeup_cost)))
            .collect();
        let cpus = vec![
            CpuState {
                timer_at: Ns::MAX,
                ..CpuState::default()
            };
            ncpu
        ];
        let mut e = Engine {
            duration: w.duration,
            tick_ns,
            cs_cost: w.platform.context_switch,
            mig_cost: w.platform.migration,
            tick_cost: w.platform.tick,
            hrtick: w.platform.hrtick,
            cbs: w.scheduler.cbs,
            placement: w.scheduler.placement,
            on_miss: w.on_miss,
            policy_name: w.scheduler.policy.name().to_string(),
            workload_name: w.name.clone(),
            names: w.tasks.iter().map(|t| t.name.clone()).collect(),
            partition,
            now: 0,
            tasks,
            releases,
            behaviour,
            class_global,
            next_balance: vec![0; ncpu],
            balance_failed: vec![0; ncpu],
            latency,
            kernel: kernel::KernelState::new(w, &class_global)?,
            vruntime_spread: 0,
            fair_decisions: 0,
            has_fair: task_class.contains(&ClassId::Fair),
            migration_cost: w.scheduler.migration_cost,
            cpus,
            classes,
            events: BinaryHeap::new(),
            event_seq: 0,
            events_processed: 0,
            laxity_evals: Cell::new(0),
            trace: trace.then(Vec::new),
            log: trace.then(Vec::new),
            scratch_assign: Vec::with_capacity(ncpu),
            scratch_cpus: Vec::with_capacity(ncpu),
            scratch_touched: Vec::with_capacity(ncpu),
        };
        for (i, t) in w.tasks.iter().enumerate() {
            if t.offset >= e.duration {
                continue;
            }
            if t.period.is_some() {
                e.push(t.offset, EventKind::Release { task: i });
            } else if let Some(b) = e.behaviour[i].as_mut() {
                // Phases that start with sleeps begin asleep: the first wake-up comes
                // after them, at the first run phase.
                let first_run = b
                    .phases
                    .iter()
                    .position(|p| matches!(p, Phase::Run(_)))
                    .unwrap_or(0);
                let asleep: Ns = b.phases[..first_run]
                    .iter()
                    .map(|p| match p {
                        Phase::Sleep(d) => *d,
                        Phase::Run(_) => 0,
                    })
                    .sum();
                b.next = first_run;
                let at = t.offset.saturating_add(asleep);
                if at < e.duration {
                    e.push(at, EventKind::Wake { task: i });
                }
            }
        }
        if tick_ns > 0 && tick_ns < e.duration {
            e.push(tick_ns, EventKind::Tick);
        }
        e.start_kernel_sources();
        Ok(e)
    }

    fn push(&mut self, time: Ns, kind: EventKind) {
        self.event_seq += 1;
        self.events.push(Reverse(Event {
            time,
            rank: kind.rank(),
            seq: self.event_seq,
            kind,
        }));
    }

    /// Run to the end and return the results.
    pub fn run(mut self) -> SimResult {
        let started = std::time::Instant::now();
        self.run_to(self.duration, true);
        self.advance(self.duration);
        self.finish(started.elapsed().as_secs_f64())
    }

    /// Handle every instant before `until` (capped at the run's duration), then stop; the
    /// run goes on with [`Engine::run_until`] or [`Engine::run`] exactly as if it had not
    /// stopped (only `wall_s` then counts just the final `run`). Lets a benchmark time a
    /// steady state without its set-up.
    pub fn run_until(&mut self, until: Ns) {
        self.run_to(until.min(self.duration), false);
    }

    /// The event loop: every instant before `until` (and at `until` if `inclusive`).
    fn run_to(&mut self, until: Ns, inclusive: bool) {
        while let Some(&Reverse(ev)) = self.events.peek() {
            if ev.time > until || (ev.time == until && !inclusive) {
                break;
            }
            let t = ev.time;
            self.advance(t);
            while let Some(&Reverse(ev)) = self.events.peek() {
                if ev.time != t {
                    break;
                }
                self.events.pop();
                self.handle(ev.kind);
            }
            if t < self.duration {
                self.schedule();
            }
            self.rearm_timers();
        }
    }

    // ----- time and accounting -------------------------------------------------------

    /// Account every running CPU up to `t` (the kernel's `update_curr`).
    fn advance(&mut self, t: Ns) {
        for cpu in 0..self.cpus.len() {
            self.account(cpu, t);
        }
        self.now = t;
    }

    fn account(&mut self, cpu: CpuId, t: Ns) {
        let c = &mut self.cpus[cpu];
        let delta = t - c.last_update;
        c.last_update = t;
        let Some(task) = c.curr else { return };
        if delta == 0 {
            return;
        }
        let oh = delta.min(c.overhead_left);
        c.overhead_left -= oh;
        c.busy += delta;
        let ts = &mut self.tasks[task];
        if let Some(j) = ts.job.as_mut() {
            debug_assert!(delta - oh <= j.remaining, "CPU {cpu} ran past a completion");
            j.remaining -= (delta - oh).min(j.remaining);
        }
        ts.stats.cpu_time += delta;
        if self.cbs && ts.class == ClassId::Dl {
            ts.dl.runtime -= delta as i64;
        }
    }

    // ----- events --------------------------------------------------------------------

    fn handle(&mut self, kind: EventKind) {
        match kind {
            EventKind::CpuTimer { cpu, gen } => {
                if gen != self.cpus[cpu].timer_gen {
                    return; // superseded
                }
                self.events_processed += 1;
                let decision = std::mem::take(&mut self.cpus[cpu].timer_decision);
                self.cpus[cpu].timer_at = Ns::MAX;
                self.cpus[cpu].dirty = true;
                self.cpu_timer(cpu, decision);
            }
            EventKind::Replenish { task } => {
                self.events_processed += 1;
                self.replenish(task);
            }
            EventKind::DeadlineCheck { task, seq } => {
                self.events_processed += 1;
                self.deadline_check(task, seq);
            }
            EventKind::Release { task } => {
                self.events_processed += 1;
                self.release(task);
            }
            EventKind::Wake { task } => {
                self.events_processed += 1;
                self.fair_wake(task);
            }
            EventKind::Tick => {
                self.events_processed += 1;
                self.tick();
            }
            EventKind::Irq { src } => {
                self.events_processed += 1;
                self.irq(src);
            }
            EventKind::Section { cpu } => {
                self.events_processed += 1;
                self.kernel_section(cpu);
            }
            EventKind::KernelEnd { cpu } => self.kernel_end(cpu),
        }
    }

    /// The CPU timer fired: the running job completed, its CBS budget ran out, or (with
    /// `decision`) its class asked for a decision at this instant. A completion or a
    /// throttle at the same instant takes precedence: it is a decision point anyway.
    fn cpu_timer(&mut self, cpu: CpuId, decision: bool) {
        let Some(t) = self.cpus[cpu].curr else { return };
        if !self.tasks[t].runnable {
            return;
        }
        if self.tasks[t].remaining() == 0 && self.cpus[cpu].overhead_left == 0 {
            self.complete_job(t, cpu);
        } else if self.budget_exhausted(t) {
            self.throttle(t);
        } else if decision {
            let (rq, class) = (self.tasks[t].rq, self.tasks[t].class as usize);
            if self.classes[class].decision_due(&ctx!(self), rq, cpu, t) {
                self.cpus[cpu].need_resched = true;
            }
        }
    }

    fn budget_exhausted(&self, t: TaskId) -> bool {
        let ts = &self.tasks[t];
        self.cbs && ts.class == ClassId::Dl && ts.dl.runtime <= 0
    }

    fn release(&mut self, t: TaskId) {
        let now = self.now;
        // A latency probe (periodic) still waiting for its previous wake-up skips this
        // period, as cyclictest does when it wakes after its next target: an overrun, no
        // job and no sample.
        if self.tasks[t].job.is_some() && self.latency[t].overrun() {
            let next = now.saturating_add(self.tasks[t].period);
            if next < self.duration {
                self.push(next, EventKind::Release { task: t });
            }
            return;
        }
        let rm = &mut self.releases[t];
        let seq = rm.next_seq;
        rm.next_seq += 1;
        let exec = match rm.exec {
            ExecModel::Wcet => rm.runtime,
            ExecModel::Uniform { min, max } => rm.rng.random_range(min..=max),
        };
        let gap = match rm.release {
            Release::Periodic => self.tasks[t].period,
            Release::Sporadic { jitter } => {
                self.tasks[t].period
                    + if jitter > 0 {
                        rm.rng.random_range(0..=jitter)
                    } else {
                        0
                    }
            }
        };
        let job = Job {
            seq,
            release: now,
            deadline: now + self.tasks[t].rel_deadline,
            exec,
            remaining: exec,
        };
        if let Some(next) = now.checked_add(gap) {
            if next < self.duration {
                self.push(next, EventKind::Release { task: t });
            }
        }
        if self.on_miss == OnMiss::Abort && job.deadline <= self.duration {
            self.push(job.deadline, EventKind::DeadlineCheck { task: t, seq });
        }
        if let Some(log) = self.log.as_mut() {
            log.push(SimEvent::Release {
                time: now,
                task: t,
                job: seq,
                deadline: job.deadline,
                exec,
            });
        }
        let ts = &mut self.tasks[t];
        ts.stats.jobs += 1;
        if ts.job.is_some() {
            ts.backlog.push_back(job);
            return;
        }
        ts.job = Some(job);
        ts.job_started = false;
        // A fresh job has not run anywhere yet, unless its task is still on a CPU.
        ts.job_last_cpu = ts.on_cpu;
        if !ts.dl.throttled {
            self.cbs_wakeup_rule(t);
            self.wakeup(t, EnqueueReason::Wakeup);
        }
    }

    /// An aperiodic fair task wakes for its next burst (or starts its work).
    fn fair_wake(&mut self, t: TaskId) {
        let Some(b) = self.behaviour[t].as_mut() else {
            return;
        };
        let mut exec = match b.phases.get(b.next) {
            Some(Phase::Run(r)) => *r,
            _ => b.work_left.unwrap_or(FOREVER),
        };
        if let Some(left) = b.work_left {
            exec = exec.min(left);
        }
        let rm = &mut self.releases[t];
        let seq = rm.next_seq;
        rm.next_seq += 1;
        let job = Job {
            seq,
            release: self.now,
            deadline: Ns::MAX,
            exec,
            remaining: exec,
        };
        if let Some(log) = self.log.as_mut() {
            log.push(SimEvent::Release {
                time: self.now,
                task: t,
                job: seq,
                deadline: Ns::MAX,
                exec,
            });
        }
        let ts = &mut self.tasks[t];
        ts.stats.jobs += 1;
        ts.job = Some(job);
        ts.job_started = false;
        ts.job_last_cpu = ts.on_cpu;
        self.wakeup(t, EnqueueReason::Wakeup);
    }

    /// An aperiodic fair task finished a burst of `ran` ns: sleep until its next run
    /// phase, or end when its work is done.
    fn after_burst(&mut self, t: TaskId, ran: Ns) {
        let now = self.now;
        let Some(b) = self.behaviour[t].as_mut() else {
            return;
        };
        if let Some(left) = b.work_left.as_mut() {
            *left = left.saturating_sub(ran);
            if *left == 0 {
                self.tasks[t].stats.finished_at = Some(now);
                return;
            }
        }
        if b.phases.is_empty() {
            return;
        }
        // Past the run phase just done, sum the sleeps up to the next run.
        let n = b.phases.len();
        let mut sleep = 0;
        let mut i = (b.next + 1) % n;
        for _ in 0..n {
            match b.phases[i] {
                Phase::Sleep(d) => sleep += d,
                Phase::Run(_) => break,
            }
            i = (i + 1) % n;
        }
        b.next = i;
        if let Some(at) = now.checked_add(sleep) {
            if at < self.duration {
                self.push(at, EventKind::Wake { task: t });
            }
        }
    }

    /// CBS rule 2 at wake-up (`update_dl_entity`): start a new reservation period unless
    /// the current one still has room for the remaining budget.
    fn cbs_wakeup_rule(&mut self, t: TaskId) {
        if !self.cbs || self.tasks[t].class != ClassId::Dl {
            return;
        }
        let now = self.now;
        let ts = &mut self.tasks[t];
        let (d, q) = (ts.dl.deadline, ts.dl.runtime);
        let big_d = ts.rel_deadline as u128;
        let big_q = ts.dl.budget as u128;
        let overflow = q > 0 && d > now && (d - now) as u128 * big_q < big_d * q as u128;
        // `d <= now` where the kernel tests `d < now`: in the model a periodic release lands
        // exactly on the old deadline, which real clocks never do; the reservation period
        // is over then, so a new one starts (as for a never-run reservation, d = 0).
        if d <= now || overflow {
            let implicit = ts.rel_deadline == ts.period;
            if !implicit && d > now {
                // Revised wake-up rule for constrained deadlines: keep d, scale the budget.
                ts.dl.runtime = ((big_q * (d - now) as u128) / big_d) as i64;
            } else {
                ts.dl.deadline = now + ts.rel_deadline;
                ts.dl.runtime = ts.dl.budget as i64;
            }
        }
    }

    /// Make `t` runnable and queue it (`try_to_wake_up` + `enqueue_task`).
    fn wakeup(&mut self, t: TaskId, why: EnqueueReason) {
        self.tasks[t].runnable = true;
        if let Some(cpu) = self.tasks[t].on_cpu {
            // Its previous job ended at this very instant and it is still current: like a
            // thread whose next release is already due, it goes on without sleeping.
            self.cpus[cpu].dirty = true;
            let (rq, class) = (self.tasks[t].rq, self.tasks[t].class as usize);
            self.classes[class].job_changed(&ctx!(self), rq, t);
            self.note_dispatch(t);
            return;
        }
        if let Some(log) = self.log.as_mut() {
            log.push(SimEvent::Wakeup {
                time: self.now,
                task: t,
            });
        }
        let class = self.tasks[t].class;
        let rq = if self.class_global[class as usize] {
            0
        } else if class == ClassId::Fair {
            self.select_task_rq_fair(t)
        } else {
            match self.placement {
                Placement::Partitioned => self.partition[t].unwrap_or(self.tasks[t].last_cpu),
                _ => self.select_task_rq(t),
            }
        };
        self.tasks[t].rq = rq;
        self.classes[class as usize].enqueue_task(&ctx!(self), rq, t, why);
        self.poke(class, rq);
    }

    /// Mark the CPUs served by run queue `rq` of `class` as needing a decision.
    fn poke(&mut self, class: ClassId, rq: usize) {
        if self.class_global[class as usize] {
            self.cpus.iter_mut().for_each(|c| c.dirty = true);
        } else {
            self.cpus[rq].dirty = true;
        }
    }

    /// The run queue of `class` that serves `cpu`.
    fn rq_of(&self, class: ClassId, cpu: CpuId) -> usize {
        if self.class_global[class as usize] {
            0
        } else {
            cpu
        }
    }

    /// `select_task_rq_fair`: the last CPU if it is idle, else an idle CPU (all CPUs
    /// share one cache in this model, so `select_idle_sibling` may pick any), else the
    /// one with the least fair load, the last CPU on ties.
    fn select_task_rq_fair(&self, t: TaskId) -> CpuId {
        let ts = &self.tasks[t];
        let idle = |c: CpuId| {
            self.cpus[c].curr.is_none_or(|x| !self.tasks[x].runnable) && self.rq_load(c) == 0
        };
        let prev = if ts.allowed[ts.last_cpu] {
            ts.last_cpu
        } else {
            ts.allowed.iter().position(|&a| a).unwrap_or(0)
        };
        if idle(prev) {
            return prev;
        }
        let allowed = (0..self.cpus.len()).filter(|&c| ts.allowed[c]);
        if let Some(c) = allowed.clone().find(|&c| idle(c)) {
            return c;
        }
        allowed
            .min_by_key(|&c| (self.rq_load(c), c != prev, c))
            .unwrap_or(prev)
    }

    /// Fair load of CPU `cpu`'s run queue: weights of its runnable fair tasks.
    fn rq_load(&self, cpu: CpuId) -> u64 {
        self.tasks
            .iter()
            .filter(|x| x.class == ClassId::Fair && x.runnable && x.rq == cpu)
            .map(|x| x.weight)
            .sum()
    }

    fn complete_job(&mut self, t: TaskId, cpu: CpuId) {
        let now = self.now;
        if let (Some(log), Some(j)) = (self.log.as_mut(), self.tasks[t].job) {
            log.push(SimEvent::Complete {
                time: now,
                task: t,
                job: j.seq,
                cpu,
            });
        }
        let ts = &mut self.tasks[t];
        let job = ts.job.take().expect("completing task has a job");
        ts.stats.completed += 1;
        let response = now - job.release;
        ts.stats.response_sum += response as u128;
        ts.stats.response_max = ts.stats.response_max.max(response);
        if now > job.deadline {
            ts.stats.misses += 1;
            ts.stats.tardiness_max = ts.stats.tardiness_max.max(now - job.deadline);
        }
        if let Some(tr) = self.trace.as_mut() {
            let since = self.cpus[cpu].since;
            if now > since {
                tr.push(Segment {
                    cpu,
                    task: t,
                    job: job.seq,
                    start: since,
                    end: now,
                });
            }
            self.cpus[cpu].since = now;
        }
        self.next_job_or_sleep(t, Some(cpu));
        if self.behaviour[t].is_some() {
            self.after_burst(t, job.exec);
        }
    }

    /// After the current job of `t` ended (completed or aborted): start the next released
    /// job at once, or put the task to sleep.
    fn next_job_or_sleep(&mut self, t: TaskId, cpu: Option<CpuId>) {
        let ts = &mut self.tasks[t];
        if let Some(next) = ts.backlog.pop_front() {
            ts.job = Some(next);
            ts.job_last_cpu = cpu;
            ts.job_started = false;
            if cpu.is_some() && self.tasks[t].runnable {
                self.note_dispatch(t); // it goes on running its next job at once
            }
            if self.budget_exhausted(t) {
                self.throttle(t);
            } else {
                let rq = self.tasks[t].rq;
                let class = self.tasks[t].class as usize;
                if cpu.is_some() {
                    self.classes[class].job_changed(&ctx!(self), rq, t);
                } else {
                    // Waiting with a new job: requeue so that its key is the new one.
                    self.classes[class].dequeue_task(&ctx!(self), rq, t);
                    self.classes[class].enqueue_task(&ctx!(self), rq, t, EnqueueReason::Wakeup);
                    self.poke(self.tasks[t].class, rq);
                }
            }
            return;
        }
        ts.runnable = false;
        if cpu.is_none() {
            // Not running: it is waiting on a run queue; take it off.
            let rq = ts.rq;
            let class = ts.class as usize;
            self.classes[class].dequeue_task(&ctx!(self), rq, t);
        } else {
            let rq = ts.rq;
            let class = ts.class as usize;
            self.classes[class].task_stopped(&ctx!(self), rq, t);
        }
        if self.cbs && self.tasks[t].class == ClassId::Dl && self.tasks[t].dl.runtime < 0 {
            // The job overran its budget before sleeping: throttled until the next period
            // (`update_curr_dl` at dequeue). A job ending exactly on its budget is not: with
            // no modelled overhead its dequeue charges nothing.
            self.arm_replenish(t);
        }
    }

    /// Budget exhausted while work remains: throttle until the next period.
    fn throttle(&mut self, t: TaskId) {
        let ts = &mut self.tasks[t];
        ts.stats.throttles += 1;
        let was_queued = ts.runnable && ts.on_cpu.is_none();
        ts.runnable = false;
        let rq = ts.rq;
        let class = ts.class as usize;
        if was_queued {
            self.classes[class].dequeue_task(&ctx!(self), rq, t);
        } else {
            self.classes[class].task_stopped(&ctx!(self), rq, t);
        }
        self.arm_replenish(t);
    }

    fn arm_replenish(&mut self, t: TaskId) {
        let ts = &mut self.tasks[t];
        ts.dl.throttled = true;
        // The replenishment timer fires at the start of the next period (`dl_next_period`).
        let at = (ts.dl.deadline + ts.period.min(u64::MAX / 4)).saturating_sub(ts.rel_deadline);
        let at = at.max(self.now);
        self.push(at, EventKind::Replenish { task: t });
    }

    /// `replenish_dl_entity`, then wake the task if it has work.
    fn replenish(&mut self, t: TaskId) {
        let now = self.now;
        let ts = &mut self.tasks[t];
        if !ts.dl.throttled {
            return;
        }
        while ts.dl.runtime <= 0 {
            ts.dl.deadline += ts.period;
            ts.dl.runtime += ts.dl.budget as i64;
        }
        if ts.dl.deadline < now {
            ts.dl.deadline = now + ts.rel_deadline;
            ts.dl.runtime = ts.dl.budget as i64;
        }
        ts.dl.throttled = false;
        if ts.job.is_some() {
            self.wakeup(t, EnqueueReason::Wakeup);
        }
    }

    /// `on_miss: abort`: drop a job still unfinished at its deadline.
    fn deadline_check(&mut self, t: TaskId, seq: u64) {
        if let Some(log) = self.log.as_mut() {
            let ts = &self.tasks[t];
            if ts.job.is_some_and(|j| j.seq == seq) || ts.backlog.iter().any(|j| j.seq == seq) {
                log.push(SimEvent::Abort {
                    time: self.now,
                    task: t,
                    job: seq,
                });
            }
        }
        let ts = &mut self.tasks[t];
        if ts.job.is_some_and(|j| j.seq == seq) {
            ts.stats.misses += 1;
            ts.stats.aborted += 1;
            ts.job = None;
            let cpu = ts.on_cpu;
            if let Some(c) = cpu {
                self.cpus[c].dirty = true;
            }
            let ts = &mut self.tasks[t];
            if !ts.runnable {
                // Throttled: it will find no job when replenished.
                if let Some(next) = ts.backlog.pop_front() {
                    ts.job = Some(next);
                    ts.job_last_cpu = None;
                }
                return;
            }
            if let (Some(cpu), Some(tr)) = (cpu, self.trace.as_mut()) {
                let since = self.cpus[cpu].since;
                if self.now > since {
                    tr.push(Segment {
                        cpu,
                        task: t,
                        job: seq,
                        start: since,
                        end: self.now,
                    });
                }
                self.cpus[cpu].since = self.now;
            }
            self.next_job_or_sleep(t, cpu);
        } else if let Some(pos) = ts.backlog.iter().position(|j| j.seq == seq) {
            ts.backlog.remove(pos);
            ts.stats.misses += 1;
            ts.stats.aborted += 1;
        }
    }

    fn tick(&mut self) {
        let next = self.now + self.tick_ns;
        if next < self.duration {
            self.push(next, EventKind::Tick);
        }
        for cpu in 0..self.cpus.len() {
            let Some(t) = self.cpus[cpu].curr else {
                continue;
            };
            if !self.tasks[t].runnable {
                continue;
            }
            self.cpus[cpu].overhead_left += self.tick_cost;
            if self.tick_cost > 0 {
                self.cpus[cpu].timer_at = Ns::MAX - 1; // force re-arming: completion moved
            }
            if self.budget_exhausted(t) {
                self.cpus[cpu].dirty = true;
                self.throttle(t);
                continue;
            }
            let rq = self.tasks[t].rq;
            let class = self.tasks[t].class as usize;
            if self.classes[class].task_tick(&ctx!(self), rq, cpu, t) {
                self.cpus[cpu].need_resched = true;
                self.cpus[cpu].dirty = true;
            }
        }
        if self.has_fair {
            self.fair_tick();
        }
        self.timer_softirq();
    }

    /// Periodic fair load balancing (every `cpus` ms on an idle CPU, 16 times less often
    /// on a busy one: `balance_interval` = domain weight, `busy_factor` = 16), and the
    /// vruntime-spread sample.
    fn fair_tick(&mut self) {
        let ncpu = self.cpus.len() as u64;
        for cpu in 0..self.cpus.len() {
            if self.now < self.next_balance[cpu] {
                continue;
            }
            let busy = self.cpus[cpu].curr.is_some();
            let interval = ncpu * schedlab_model::time::MS * if busy { 16 } else { 1 };
            self.next_balance[cpu] = self.now + interval;
            if self.fair_balance(cpu, false) {
                self.cpus[cpu].dirty = true;
            }
        }
        let nrq = if self.class_global[ClassId::Fair as usize] {
            1
        } else {
            self.cpus.len()
        };
        let fair = &self.classes[ClassId::Fair as usize];
        let ctx = ctx!(self);
        for rq in 0..nrq {
            let (mut lo, mut hi) = (i64::MAX, i64::MIN);
            for (i, x) in self.tasks.iter().enumerate() {
                if x.class == ClassId::Fair && x.runnable && x.rq == rq {
                    if let Some(v) = fair.vruntime(&ctx, i) {
                        lo = lo.min(v);
                        hi = hi.max(v);
                    }
                }
            }
            if hi >= lo {
                self.vruntime_spread = self.vruntime_spread.max(hi - lo);
            }
        }
    }

    // ----- scheduling decisions ------------------------------------------------------

    fn schedule(&mut self) {
        let mut touched = std::mem::take(&mut self.scratch_touched);
        touched.clear();
        touched.extend(self.cpus.iter().map(|c| c.dirty || c.need_resched));
        if touched.iter().any(|&t| t) {
            if self.class_global.iter().any(|&g| g) {
                self.schedule_global(&touched);
            } else {
                for cpu in 0..self.cpus.len() {
                    self.schedule_local(cpu);
                }
            }
            if self.placement == Placement::Linux {
                self.push_tasks(&mut touched);
            }
        }
        self.scratch_touched = touched;
    }

    /// Does class `class` (or a higher one) have a task waiting on `rq` that should take
    /// `cpu` from `curr`?
    fn should_preempt(&self, rq: usize, cpu: CpuId, curr: TaskId) -> bool {
        let cc = self.tasks[curr].class;
        let ctx = ctx!(self);
        for class in ClassId::ALL {
            if class > cc {
                break;
            }
            let rq = if self.class_global[class as usize] {
                0
            } else {
                rq
            };
            if let Some(cand) = self.classes[class as usize].peek_next_task(&ctx, rq, cpu) {
                return class < cc || self.classes[class as usize].wakeup_preempt(&ctx, curr, cand);
            }
        }
        false
    }

    /// `pick_next_task`: ask each class in order; a CPU about to go idle first tries to
    /// pull fair work from a busier CPU (`newidle_balance`).
    fn pick(&mut self, cpu: CpuId) -> Option<TaskId> {
        for attempt in 0..2 {
            for class in ClassId::ALL {
                let rq = self.rq_of(class, cpu);
                if let Some(t) = self.classes[class as usize].pick_next_task(&ctx!(self), rq, cpu) {
                    if class == ClassId::Fair {
                        self.fair_decisions += 1;
                    }
                    return Some(t);
                }
            }
            if attempt == 0 && !self.fair_balance(cpu, true) {
                break;
            }
        }
        None
    }

    /// Fair load balancing for CPU `cpu` (per-CPU fair run queues only): pull one queued,
    /// not cache-hot fair task from the busiest CPU when that evens the load out; a
    /// periodic balance first requires the busiest load to exceed this CPU's by the
    /// domain's `imbalance_pct` (117%). As the kernel's `detach_tasks` (migrate_load), a
    /// periodic balance also moves a task whose weight, halved once per balance that
    /// failed before (`nr_balance_failed`), fits the imbalance `min(busiest − avg, avg −
    /// this)`, and ignores cache-hotness after more than `cache_nice_tries` (1) failures:
    /// so 3 CPU-bound tasks on 2 CPUs take turns on the shared CPU instead of one of them
    /// keeping a CPU to itself for ever. Returns whether a task moved.
    fn fair_balance(&mut self, cpu: CpuId, newidle: bool) -> bool {
        if self.class_global[ClassId::Fair as usize] {
            return false;
        }
        let this_load = self.rq_load(cpu);
        let mut busiest: Option<(u64, CpuId)> = None;
        // Groups are visited from the one after this CPU's, cyclically, as the kernel's
        // circular `sd->groups` list starts at the local group; the first of equally
        // loaded CPUs wins, so ties do not always favour the lowest-numbered CPU.
        let ncpu = self.cpus.len();
        for src in (1..ncpu).map(|k| (cpu + k) % ncpu) {
            let queued = self
                .tasks
                .iter()
                .filter(|x| {
                    x.class == ClassId::Fair && x.runnable && x.rq == src && x.on_cpu.is_none()
                })
                .count();
            if queued == 0 {
                continue;
            }
            let load = self.rq_load(src);
            if busiest.is_none_or(|(l, _)| load > l) {
                busiest = Some((load, src));
            }
        }
        let Some((load, src)) = busiest else {
            return false;
        };
        if !newidle && load * 100 <= this_load * 117 {
            return false;
        }
        let now = self.now;
        let hot = self.migration_cost;
        let failed = if newidle { 0 } else { self.balance_failed[cpu] };
        let avg =
            (0..self.cpus.len()).map(|c| self.rq_load(c)).sum::<u64>() / self.cpus.len() as u64;
        let imbalance = load.saturating_sub(avg).min(avg.saturating_sub(this_load));
        let cand = (0..self.tasks.len()).find(|&i| {
            let x = &self.tasks[i];
            x.class == ClassId::Fair
                && x.runnable
                && x.rq == src
                && x.on_cpu.is_none()
                && x.allowed[cpu]
                && (x.stats.cpu_time == 0 || now.saturating_sub(x.last_ran) >= hot || failed > 1)
                && (this_load + x.weight < load
                    || (failed > 0 && x.weight >> failed.min(63) <= imbalance))
        });
        let Some(t) = cand else {
            if !newidle {
                self.balance_failed[cpu] += 1;
            }
            return false;
        };
        self.balance_failed[cpu] = 0;
        let fair = ClassId::Fair as usize;
        self.classes[fair].dequeue_task(&ctx!(self), src, t);
        self.tasks[t].rq = cpu;
        self.classes[fair].enqueue_task(&ctx!(self), cpu, t, EnqueueReason::Migrated);
        self.cpus[cpu].dirty = true;
        true
    }

    fn put_prev(&mut self, t: TaskId) {
        let rq = self.tasks[t].rq;
        let class = self.tasks[t].class as usize;
        self.classes[class].put_prev_task(&ctx!(self), rq, t);
    }

    /// Per-CPU run queue: `__schedule()` on one CPU.
    fn schedule_local(&mut self, cpu: CpuId) {
        if self.kernel.blocked(cpu, self.now) {
            return; // decided when its kernel work ends (KernelEnd)
        }
        if !std::mem::take(&mut self.cpus[cpu].dirty) {
            return;
        }
        let curr = self.cpus[cpu].curr.filter(|&t| self.tasks[t].runnable);
        let resched = std::mem::take(&mut self.cpus[cpu].need_resched);
        let need = match curr {
            None => true,
            Some(t) => resched || self.should_preempt(cpu, cpu, t),
        };
        if !need {
            return;
        }
        if let Some(t) = curr {
            self.put_prev(t);
        }
        let next = self.pick(cpu);
        self.switch_out(cpu, next);
        self.switch_in(cpu, next);
    }

    /// Global placement: keep the highest-priority runnable tasks on the CPUs.
    /// Used when some class has one queue for all CPUs (global placement, BFS); classes
    /// with per-CPU queues take part CPU by CPU (only `dirty` CPUs reconsider them).
    fn schedule_global(&mut self, dirty: &[bool]) {
        let ncpu = self.cpus.len();
        self.cpus.iter_mut().for_each(|c| c.dirty = false);
        let mut assign = std::mem::take(&mut self.scratch_assign);
        assign.clear();
        for cpu in 0..ncpu {
            let curr = self.cpus[cpu].curr.filter(|&t| self.tasks[t].runnable);
            let resched = std::mem::take(&mut self.cpus[cpu].need_resched);
            match curr {
                Some(t) if resched => {
                    self.put_prev(t);
                    assign.push(None);
                }
                other => assign.push(other),
            }
        }
        // Every change strictly raises the priority on one CPU; the bound is a safety net.
        for _ in 0..(4 * ncpu * (self.tasks.len() + 1)) {
            if !self.global_step(&mut assign, dirty) {
                break;
            }
        }
        // All departures before all arrivals, so a task moving between CPUs is seen
        // leaving one before it starts on the other.
        for (cpu, &next) in assign.iter().enumerate() {
            self.switch_out(cpu, next);
        }
        for (cpu, &next) in assign.iter().enumerate() {
            self.switch_in(cpu, next);
        }
        self.scratch_assign = assign;
    }

    /// One improvement of the global assignment; false when nothing changes.
    fn global_step(&mut self, assign: &mut [Option<TaskId>], dirty: &[bool]) -> bool {
        // Fill CPUs that are idle or run a lower class.
        for (cpu, slot) in assign.iter_mut().enumerate() {
            let cur = slot.map(|t| self.tasks[t].class);
            for class in ClassId::ALL {
                if cur.is_some_and(|c| c <= class) {
                    break;
                }
                let rq = self.rq_of(class, cpu);
                let picked = self.classes[class as usize].pick_next_task(&ctx!(self), rq, cpu);
                if let Some(n) = picked {
                    if class == ClassId::Fair {
                        self.fair_decisions += 1;
                    }
                    if let Some(old) = slot.replace(n) {
                        self.put_prev(old);
                    }
                    return true;
                }
            }
            if slot.is_none() && self.fair_balance(cpu, true) {
                return true;
            }
        }
        let mut running = std::mem::take(&mut self.scratch_cpus);
        let found = self.global_preempt(assign, &mut running, dirty);
        self.scratch_cpus = running;
        found
    }

    /// Within each class: let the best waiting task take the CPU of the lowest-priority
    /// running task it beats.
    fn global_preempt(
        &mut self,
        assign: &mut [Option<TaskId>],
        running: &mut Vec<CpuId>,
        dirty: &[bool],
    ) -> bool {
        for class in ClassId::ALL {
            if !self.class_global[class as usize] {
                // Per-CPU queue: the usual wake-up preemption test on touched CPUs.
                for cpu in 0..assign.len() {
                    let Some(curr) = assign[cpu].filter(|&t| self.tasks[t].class == class) else {
                        continue;
                    };
                    if !dirty[cpu] {
                        continue;
                    }
                    let ctx = ctx!(self);
                    let cls = &self.classes[class as usize];
                    if let Some(cand) = cls.peek_next_task(&ctx, cpu, cpu) {
                        if cls.wakeup_preempt(&ctx, curr, cand) {
                            self.put_prev(curr);
                            assign[cpu] =
                                self.classes[class as usize].pick_next_task(&ctx!(self), cpu, cpu);
                            return true;
                        }
                    }
                }
                continue;
            }
            running.clear();
            running.extend(
                (0..assign.len())
                    .filter(|&c| assign[c].is_some_and(|t| self.tasks[t].class == class)),
            );
            let cls = &self.classes[class as usize];
            let ctx = ctx!(self);
            // Worst first: a before b if b's task would preempt a's.
            for i in 1..running.len() {
                let mut j = i;
                while j > 0
                    && cls.wakeup_preempt(
                        &ctx,
                        assign[running[j]].unwrap(),
                        assign[running[j - 1]].unwrap(),
                    )
                {
                    running.swap(j, j - 1);
                    j -= 1;
                }
            }
            for &cpu in running.iter() {
                let curr = assign[cpu].unwrap();
                if let Some(cand) = cls.peek_next_task(&ctx, 0, cpu) {
                    if cls.wakeup_preempt(&ctx, curr, cand) {
                        self.put_prev(curr);
                        assign[cpu] =
                            self.classes[class as usize].pick_next_task(&ctx!(self), 0, cpu);
                        return true;
                    }
                }
            }
        }
        false
    }

    /// First half of a context switch: the previous task leaves `cpu`.
    fn switch_out(&mut self, cpu: CpuId, next: Option<TaskId>) {
        let prev = self.cpus[cpu].curr;
        if prev == next {
            return;
        }
        let now = self.now;
        if let Some(log) = self.log.as_mut() {
            let prev_runnable = prev.is_some_and(|p| self.tasks[p].runnable);
            log.push(SimEvent::Switch {
                time: now,
                cpu,
                prev,
                next,
                prev_runnable,
            });
        }
        let c = &mut self.cpus[cpu];
        c.switches += 1;
        if prev.is_none() || next.is_none() {
            c.idle_switches += 1;
        }
        c.overhead_left = 0;
        let since = c.since;
        c.since = now;
        let Some(p) = prev else { return };
        let ts = &mut self.tasks[p];
        if ts.on_cpu == Some(cpu) {
            ts.on_cpu = None;
        }
        ts.last_ran = now;
        ts.last_cpu = cpu;
        // A preemption interrupts a job that has started; a task whose next job was
        // released at the instant its previous one completed is not preempted.
        if ts.runnable && ts.job.is_some_and(|j| j.remaining < j.exec) {
            ts.stats.preemptions += 1;
        }
        if let (Some(tr), Some(j)) = (self.trace.as_mut(), ts.job) {
            if now > since {
                tr.push(Segment {
                    cpu,
                    task: p,
                    job: j.seq,
                    start: since,
                    end: now,
                });
            }
        }
    }

    /// Second half of a context switch: `next` starts on `cpu`, paying the switch and,
    /// when its job resumes on another CPU, the migration cost.
    fn switch_in(&mut self, cpu: CpuId, next: Option<TaskId>) {
        if self.cpus[cpu].curr == next {
            return;
        }
        self.cpus[cpu].curr = next;
        self.cpus[cpu].timer_at = Ns::MAX - 1; // force re-arming
        let Some(n) = next else { return };
        let ts = &mut self.tasks[n];
        ts.on_cpu = Some(cpu);
        let mut overhead = self.cs_cost;
        if ts.job_last_cpu.is_some_and(|l| l != cpu) {
            ts.stats.migrations += 1;
            overhead += self.mig_cost;
        }
        ts.job_last_cpu = Some(cpu);
        self.cpus[cpu].overhead_left = overhead;
        self.note_dispatch(n);
    }

    /// Record the wake-up latency of `t`'s current job at its first dispatch.
    fn note_dispatch(&mut self, t: TaskId) {
        let ts = &mut self.tasks[t];
        if ts.job_started {
            return;
        }
        ts.job_started = true;
        if let Some(j) = ts.job {
            self.latency[t].record(self.now.saturating_sub(j.release));
        }
    }

    // ----- linux placement: select_task_rq and push ------------------------------------

    /// Is `cpu` free for a task of `class`: nothing of that class or higher running or
    /// queued there (the kernel's cpudl `free_cpus` / lowest cpupri)?
    fn cpu_free_for(&self, cpu: CpuId, class: ClassId) -> bool {
        let running_ok = self.cpus[cpu]
            .curr
            .is_none_or(|t| !self.tasks[t].runnable || self.tasks[t].class > class);
        let ctx = ctx!(self);
        running_ok
            && ClassId::ALL.iter().filter(|&&c| c <= class).all(|&c| {
                self.classes[c as usize]
                    .peek_next_task(&ctx, cpu, cpu)
                    .is_none()
            })
    }

    /// `find_later_rq` / `find_lowest_rq`: a CPU where `t` would run at once — a free one
    /// (its last CPU first, then the lowest index), else the one running the
    /// lowest-priority task of `t`'s class that `t` beats.
    fn find_later_cpu(&self, t: TaskId, exclude: Option<CpuId>) -> Option<CpuId> {
        let ts = &self.tasks[t];
        let class = ts.class;
        let candidates = || (0..self.cpus.len()).filter(|&c| ts.allowed[c] && Some(c) != exclude);
        let last = ts.last_cpu;
        if ts.allowed[last] && Some(last) != exclude && self.cpu_free_for(last, class) {
            return Some(last);
        }
        if let Some(c) = candidates().find(|&c| self.cpu_free_for(c, class)) {
            return Some(c);
        }
        let cls = &self.classes[class as usize];
        let ctx = ctx!(self);
        let mut worst: Option<(CpuId, TaskId)> = None;
        for c in candidates() {
            let Some(cur) = self.cpus[c].curr.filter(|&x| self.tasks[x].runnable) else {
                continue;
            };
            if self.tasks[cur].class != class || !cls.wakeup_preempt(&ctx, cur, t) {
                continue;
            }
            match worst {
                Some((_, w)) if !cls.wakeup_preempt(&ctx, cur, w) => {}
                _ => worst = Some((c, cur)),
            }
        }
        worst.map(|(c, _)| c)
    }

    /// `select_task_rq_dl` / `select_task_rq_rt`: stay on the last CPU unless its current
    /// task would not be preempted by `t` and a better CPU exists.
    fn select_task_rq(&self, t: TaskId) -> CpuId {
        let ts = &self.tasks[t];
        let prev = if ts.allowed[ts.last_cpu] {
            ts.last_cpu
        } else {
            ts.allowed.iter().position(|&a| a).unwrap_or(0)
        };
        if ts.nr_allowed < 2 {
            return prev;
        }
        let Some(cur) = self.cpus[prev].curr.filter(|&x| self.tasks[x].runnable) else {
            return prev;
        };
        let cc = self.tasks[cur].class;
        let ctx = ctx!(self);
        let search = cc < ts.class
            || (cc == ts.class
                && (self.tasks[cur].nr_allowed < 2
                    || !self.classes[cc as usize].wakeup_preempt(&ctx, cur, t)));
        if search {
            if let Some(target) = self.find_later_cpu(t, None) {
                return target;
            }
        }
        prev
    }

    /// Push waiting tasks to CPUs where they would run now (`push_dl_task` /
    /// `push_rt_task` from a CPU that just scheduled; `pull_*` towards a CPU that did).
    /// Only moves that start or end on a CPU touched in this instant are considered.
    fn push_tasks(&mut self, touched: &mut [bool]) {
        let bound = 4 * (self.tasks.len() + 1) * self.cpus.len();
        for _ in 0..bound {
            let mut moved = false;
            for cpu in 0..self.cpus.len() {
                if self.cpus[cpu].curr.is_none() {
                    continue; // an idle CPU ran its queue already
                }
                for class in ClassId::RT {
                    let cand = self.classes[class as usize].peek_next_task(&ctx!(self), cpu, cpu);
                    let Some(cand) = cand else { continue };
                    if self.tasks[cand].nr_allowed < 2 {
                        continue;
                    }
                    let Some(target) = self.find_later_cpu(cand, Some(cpu)) else {
                        continue;
                    };
                    if !touched[cpu] && !touched[target] {
                        continue;
                    }
                    self.classes[class as usize].dequeue_task(&ctx!(self), cpu, cand);
                    self.tasks[cand].rq = target;
                    self.classes[class as usize].enqueue_task(
                        &ctx!(self),
                        target,
                        cand,
                        EnqueueReason::Migrated,
                    );
                    self.cpus[target].dirty = true;
                    touched[target] = true;
                    self.schedule_local(target);
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
    }

    // ----- timers and results ----------------------------------------------------------

    /// Arm each CPU's timer for the next completion (or exact budget exhaustion), or for
    /// the class's own decision instant ([`SchedClass::next_decision`]) if that is earlier.
    fn rearm_timers(&mut self) {
        for cpu in 0..self.cpus.len() {
            let c = &self.cpus[cpu];
            let (want, decision) = match c.curr {
                Some(t) if self.tasks[t].runnable => {
                    let ts = &self.tasks[t];
                    let mut at = self.now + c.overhead_left + ts.remaining();
                    if self.hrtick && self.cbs && ts.class == ClassId::Dl {
                        at = at.min(self.now + ts.dl.runtime.max(0) as Ns);
                    }
                    let class = &self.classes[ts.class as usize];
                    match class.next_decision(&ctx!(self), ts.rq, cpu, t) {
                        Some(d) if d <= at => {
                            debug_assert!(d > self.now, "decision instant {d} not after now");
                            // No decision before kernel work on the CPU ends.
                            let d = d.max(self.kernel.busy_until(cpu));
                            (d.max(self.now + 1), true)
                        }
                        _ => (at, false),
                    }
                }
                _ => (Ns::MAX, false),
            };
            let c = &mut self.cpus[cpu];
            c.timer_decision = decision;
            if want != c.timer_at {
                c.timer_gen += 1;
                c.timer_at = want;
                let gen = c.timer_gen;
                if want != Ns::MAX {
                    self.push(want, EventKind::CpuTimer { cpu, gen });
                }
            }
        }
    }

    /// The CPU share each always-runnable fair task is entitled to: weight / total weight
    /// of such tasks × CPUs, no task more than one CPU (water-filling).
    fn entitlements(&self) -> Vec<Option<f64>> {
        let hog: Vec<usize> = (0..self.tasks.len())
            .filter(|&i| {
                self.behaviour[i]
                    .as_ref()
                    .is_some_and(|b| b.phases.is_empty() && b.work_left.is_none())
            })
            .collect();
        let mut out = vec![None; self.tasks.len()];
        let mut cpus = self.cpus.len() as f64;
        let mut left: Vec<usize> = hog.clone();
        left.sort_by_key(|&i| std::cmp::Reverse(self.tasks[i].weight));
        while let Some(&i) = left.first() {
            let total: u64 = left.iter().map(|&j| self.tasks[j].weight).sum();
            if cpus * self.tasks[i].weight as f64 / total as f64 > 1.0 {
                out[i] = Some(1.0);
                cpus -= 1.0;
                left.remove(0);
            } else {
                for &j in &left {
                    out[j] = Some(cpus * self.tasks[j].weight as f64 / total as f64);
                }
                break;
            }
        }
        out
    }

    fn finish(mut self, wall_s: f64) -> SimResult {
        let end = self.duration;
        // Jobs still unfinished whose deadline has passed count as misses.
        for ts in self.tasks.iter_mut() {
            let late = ts
                .job
                .iter()
                .chain(ts.backlog.iter())
                .filter(|j| j.deadline < end || (j.deadline == end && j.remaining > 0))
                .count() as u64;
            ts.stats.misses += late;
        }
        if let Some(tr) = self.trace.as_mut() {
            for (cpu, c) in self.cpus.iter().enumerate() {
                if let Some(t) = c.curr {
                    if let Some(j) = self.tasks[t].job {
                        if end > c.since {
                            tr.push(Segment {
                                cpu,
                                task: t,
                                job: j.seq,
                                start: c.since,
                                end,
                            });
                        }
                    }
                }
            }
            tr.sort_by_key(|s| (s.start, s.cpu));
        }
        let ncpu = self.cpus.len();
        let secs = end as f64 / S as f64;
        let entitled = self.entitlements();
        let switches: u64 = self.cpus.iter().map(|c| c.switches).sum();
        let idle_sw: u64 = self.cpus.iter().map(|c| c.idle_switches).sum();
        let tasks: Vec<TaskResult> = self
            .tasks
            .iter()
            .enumerate()
            .map(|(i, ts)| TaskResult {
                name: self.names[i].clone(),
                jobs: ts.stats.jobs,
                completed: ts.stats.completed,
                misses: ts.stats.misses,
                cpu_time_ns: ts.stats.cpu_time,
                mean_response_ns: if ts.stats.completed > 0 {
                    ts.stats.response_sum as f64 / ts.stats.completed as f64
                } else {
                    0.0
                },
                max_response_ns: ts.stats.response_max,
                max_tardiness_ns: ts.stats.tardiness_max,
                preemptions: ts.stats.preemptions,
                migrations: ts.stats.migrations,
                throttles: ts.stats.throttles,
                latency: self.latency[i].stats(),
                fair: (ts.class == ClassId::Fair).then(|| FairTaskStats {
                    nice: ts.nice,
                    weight: ts.weight,
                    share: ts.stats.cpu_time as f64 / end as f64,
                    entitled_share: entitled[i],
                    vruntime_ns: self.classes[ClassId::Fair as usize].vruntime(&ctx!(self), i),
                    finished_ns: ts.stats.finished_at,
                }),
                cpu: self.partition[i],
            })
            .collect();
        let fairness = self.has_fair.then(|| {
            let xs: Vec<f64> = tasks
                .iter()
                .filter_map(|t| t.fair.as_ref())
                .filter_map(|f| f.entitled_share.map(|e| f.share / e))
                .collect();
            let jain = (xs.len() >= 2).then(|| {
                let sum: f64 = xs.iter().sum();
                let sq: f64 = xs.iter().map(|x| x * x).sum();
                sum * sum / (xs.len() as f64 * sq)
            });
            let work: Vec<Option<Ns>> = self
                .behaviour
                .iter()
                .enumerate()
                .filter(|(_, b)| b.as_ref().is_some_and(|b| b.work_left.is_some()))
                .map(|(i, _)| self.tasks[i].stats.finished_at)
                .collect();
            FairnessStats {
                jain_index: jain,
                max_vruntime_spread_ns: self.vruntime_spread,
                decisions: self.fair_decisions,
                makespan_ns: if work.is_empty() || work.iter().any(Option::is_none) {
                    None
                } else {
                    work.iter().flatten().max().copied()
                },
            }
        });
        SimResult {
            workload: self.workload_name.clone(),
            policy: self.policy_name.clone(),
            placement: self.placement.name().to_string(),
            cpus: ncpu,
            duration_ns: end,
            events: self.events_processed,
            wall_s,
            jobs_released: tasks.iter().map(|t| t.jobs).sum(),
            jobs_completed: tasks.iter().map(|t| t.completed).sum(),
            jobs_aborted: self.tasks.iter().map(|t| t.stats.aborted).sum(),
            deadline_misses: tasks.iter().map(|t| t.misses).sum(),
            context_switches: switches,
            context_switches_per_cpu_per_s: switches as f64 / ncpu as f64 / secs,
            task_switches_per_cpu_per_s: (switches - idle_sw) as f64 / ncpu as f64 / secs,
            preemptions: tasks.iter().map(|t| t.preemptions).sum(),
            migrations: tasks.iter().map(|t| t.migrations).sum(),
            laxity_evaluations: self.laxity_evals.get(),
            throttles: self.tasks.iter().map(|t| t.stats.throttles).sum(),
            per_cpu: self
                .cpus
                .iter()
                .enumerate()
                .map(|(cpu, c)| CpuResult {
                    cpu,
                    utilisation: c.busy as f64 / end as f64,
                    context_switches: c.switches,
                    idle_switches: c.idle_switches,
                })
                .collect(),
            fairness,
            kernel: self.kernel_stats(),
            tasks,
            trace: self.trace,
            log: self.log,
        }
    }
}

/// Load weight of a fair task: SCHED_IDLE tasks weigh 3, others take their nice value's
/// weight from the workload's table.
fn fair_weight(w: &Workload, t: &schedlab_model::Task) -> u64 {
    if t.class == TaskClass::Idle && w.scheduler.fair != Policy::Bfs {
        schedlab_model::weights::WEIGHT_IDLEPRIO
    } else {
        w.scheduler.weights.weight(t.nice)
    }
}
