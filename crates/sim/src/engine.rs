//! The discrete-event engine: time, events, CPUs, accounting, CBS and placement.
//!
//! Events are processed in time order; events at the same instant in this fixed order
//! (then by insertion): CPU timers (job completion, budget exhaustion, class decision
//! instants), CBS replenishments, deadline checks, job releases (workload order) and
//! wake-ups (fair tasks' bursts, delayed wake-ups of released jobs), the tick. Only after every event of an instant has been handled does the engine make
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
//! at the same instant are seen before the CPU decides. A timer whose instant moves is
//! re-keyed in place in the per-CPU timer heap ([`crate::heap::SlotHeap`]) under a new
//! sequence number, which orders timers due at the same instant, so runs stay
//! deterministic.
//!
//! Interrupts and kernel work ([`kernel`], docs/latency.md: device interrupts, timer-wheel
//! cascades and expiries, kernel sections of fair tasks) come after the tick in an
//! instant (interrupts in platform order, then kernel sections, then ends of kernel work,
//! each by insertion). While a CPU does kernel work it takes no decision: its pending
//! `dirty`/`need_resched` wait for the end of the work, and the time is charged to the
//! running task as `overhead_left`, like the tick cost.
//!
//! Where each concern lives (one file each, `impl Engine` blocks):
//! - `events.rs`: the event kinds, their same-instant order and their dispatch;
//! - `accounting.rs`: `update_curr`, CPU time and job progress;
//! - `jobs.rs`: releases, fair bursts and sleeps, completions, aborts;
//! - `cbs.rs`: SCHED_DEADLINE's reservations (wake-up rule, throttle, replenish);
//! - `job_wake.rs`: the wake-up delay of released jobs (`platform.job_costs`);
//! - `wakeup.rs`: `try_to_wake_up` and `select_task_rq_*`;
//! - `tick.rs`: the scheduler tick and periodic fair balancing;
//! - `decide.rs`: per-CPU `__schedule`, pick and context switch;
//! - `global.rs`: global placement (the m best tasks run); `global_fast.rs` and
//!   `global_marked.rs`: the same, visiting only what changed, where they apply;
//! - `push_pull.rs`: RT/DL push and pull under `linux` placement;
//! - `fair_balance.rs`: fair load balancing;
//! - `timers.rs`: per-CPU hrtimers;
//! - `kernel.rs`: interrupts, timer wheels, kernel sections;
//! - `latency.rs`: wake-up latency records; `idle.rs`: CPU idle states and their exit
//!   latency; `metrics.rs`: the results; `reported.rs`: the decisions counted and what
//!   the classes built.

use crate::class::{EnqueueReason, SchedClass};
use crate::result::{
    CpuResult, FairTaskStats, FairnessStats, Segment, SimEvent, SimResult, TaskResult, WorkStats,
};
use crate::state::{ClassId, CpuId, CpuState, Ctx, DlEntity, Job, TaskId, TaskState, TaskStats};
use crate::SimError;
use schedlab_model::time::S;
use schedlab_model::{Ns, OnMiss, Phase, Placement, Policy, Workload};
use std::cell::Cell;
use std::collections::VecDeque;

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

mod accounting;
mod cbs;
mod check;
mod counted;
mod decide;
mod events;
pub mod external;
mod fair_balance;
mod global;
mod global_fast;
mod global_marked;
mod idle;
mod job_wake;
mod jobs;
mod kernel;
mod latency;
mod marks;
mod metrics;
mod push_pull;
mod reported;
pub mod summary;
mod tick;
mod timers;
mod wakeup;

use events::EventKind;

/// From this many tasks on, the event loop prefetches the next event's task records
/// (`events.rs`): 4,096 records of `tasks` alone are 1.5 MB, past a core's L2.
const PREFETCH_TASKS: usize = 4096;
use jobs::{Behaviour, ReleaseModel};

/// The simulator for one workload under one configuration.
pub struct Engine {
    duration: Ns,
    tick_ns: Ns,
    cs_cost: Ns,
    mig_cost: Ns,
    pre_cost: Ns,
    tick_cost: Ns,
    /// CBS budgets are enforced the instant they run out (HRTICK_DL, or jobs that read
    /// their own CPU clock: `platform.job_costs.reads_cpu_clock`), not at ticks.
    hrtick: bool,
    /// CPU time each job costs beyond its work (`platform.job_costs.per_job`).
    job_cost: Ns,
    /// Wake-up delays of periodic releases (None: a release wakes its task at once).
    job_wakes: Option<job_wake::JobWakes>,
    cbs: bool,
    placement: Placement,
    on_miss: OnMiss,
    policy_name: &'static str,
    workload_name: String,
    names: Vec<String>,
    /// Entitled CPU share of each always-runnable fair task (reported in `fair`).
    entitled: Vec<Option<f64>>,
    partition: Vec<Option<CpuId>>,
    /// The partition behind `partition`, for the result (set by [`crate::engine_for`]).
    pub(crate) partition_report: Option<crate::result::PartitionReport>,
    /// Hyperperiod and feasibility interval of the workload, for the result.
    feasibility: schedlab_model::horizon::Feasibility,

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
    /// CPU idle states (None: the platform has none).
    idle: Option<idle::IdleStates>,
    /// Largest vruntime spread sampled at ticks.
    vruntime_spread: i64,
    /// Fair-class picks.
    fair_decisions: u64,
    /// Per class: no task of it has a restricted affinity (so every CPU sees the same
    /// first task of a global queue).
    class_unrestricted: [bool; 3],
    /// Load, waiting tasks and members of each fair run queue.
    fair: fair_balance::FairRqs,
    /// `sysctl_sched_migration_cost`: recently run tasks are cache-hot.
    migration_cost: Ns,
    cpus: Vec<CpuState>,
    classes: Vec<counted::Counted>,
    /// Pending events under (time, order) packed in a `u128` (`events.rs`).
    events: crate::event_queue::EventQueue<EventKind>,
    /// Armed CPU timers: per CPU, (instant, sequence) if armed (`events::timer_key`),
    /// the earliest first; cancellable, unlike heap entries (`timers.rs`).
    cpu_timers: timers::CpuTimers,
    event_seq: u64,
    events_processed: u64,
    /// No class with tasks reads running tasks' progress and there is no fair task: CPUs
    /// are accounted only when touched (see `accounting.rs`; the engine's own CBS reads
    /// are preceded by `sync`).
    lazy_accounting: bool,
    /// Ticks not simulated because none could change anything, counted as processed.
    ticks_counted: u64,
    laxity_evals: Cell<u64>,
    /// Engine work (see [`WorkStats`]); CPU visits in a `Cell` as `&self` loops count them.
    work: WorkStats,
    cpu_visits: Cell<u64>,
    trace: Option<Vec<Segment>>,
    /// Event log for exporters, recorded with the trace.
    log: Option<Vec<SimEvent>>,
    /// CPUs marked for a decision (`dirty` or `need_resched`).
    marked: marks::CpuMask,
    /// A task joined a queue shared by all CPUs: every CPU counts as touched.
    global_poked: bool,
    /// Per real-time class under `linux` placement: its running tasks by key, when it
    /// has a key and no restricted affinity (`push_pull.rs`).
    push_state: [Option<push_pull::PushState>; 2],
    /// Per class: whether any task belongs to it.
    class_has_tasks: [bool; 3],
    /// The CPUs touched in the current instant's decisions: marked when they begin, and
    /// the targets of pushes.
    touched: marks::CpuMask,
    /// Incremental global placement, when it applies (`global_fast.rs`).
    global_fast: Option<Box<global_fast::GlobalFast>>,
    /// Tasks woke without being queued (`GlobalFast::woken`): queued before the next
    /// event that might read the queue, unless the decision places them first.
    woken_pending: bool,
    /// Global placement visiting only the CPUs that changed (`global_marked.rs`), boxed
    /// so that a decision moves a pointer in and out, not the state.
    global_marked: Option<Box<global_marked::GlobalMarked>>,
    /// CPUs running a runnable task (`curr` set and runnable): the others are where a
    /// waking or pushed task may find a free CPU (`find_later_cpu`).
    busy: marks::CpuMask,
    /// `busy` is kept (`linux` placement: wake-up placement and pushes look for free
    /// CPUs; global placement never does, and saves the bookkeeping).
    track_busy: bool,
    /// CPUs whose timer is re-armed at the end of the instant.
    rearm: marks::CpuMask,
    /// Some class with tasks arms decision timers: every CPU's timer is recomputed at
    /// every instant, as a waiting task anywhere may move any CPU's decision instant.
    decision_timers: bool,
    /// Reused buffers so that scheduling decisions do not allocate.
    scratch_assign: Vec<Option<TaskId>>,
    scratch_cpus: Vec<CpuId>,
    /// Enough tasks that their records miss the caches: the event loop prefetches the
    /// next event's ([`PREFETCH_TASKS`]).
    prefetch: bool,
    /// Check the invariants after every instant (`check.rs`).
    check: bool,
    /// The instant last checked (time must not go backwards).
    last_checked: Ns,
    /// The invariant checker's place in its rotation over the tasks (`check.rs`).
    check_cursor: usize,
    /// The first invariant violation found; the run stops there.
    violation: Option<String>,
    /// Scheduling decisions taken (`scheduler_invocations`, see `reported.rs`).
    invocations: u64,
    /// The classes' `scheduler_structure`, once asked (`reported.rs`).
    structure: Option<Option<serde_json::Value>>,
}

/// A running CPU's key in a [`crate::heap::SlotHeap`] of running CPUs (global placement's
/// in `global_fast.rs`, the push state's in `push_pull.rs`), whose first entry is then
/// the largest task key, the lowest CPU among equals.
fn worst_first(key: u64, cpu: CpuId) -> u128 {
    ((!key) as u128) << 64 | cpu as u128
}

impl Engine {
    /// The names of `w`, the workload an engine was built from without them
    /// ([`Engine::build`]), moved in rather than copied.
    pub(crate) fn take_names(&mut self, w: Workload) {
        debug_assert!(self.names.is_empty() && self.workload_name.is_empty());
        debug_assert_eq!(w.tasks.len(), self.tasks.len());
        self.workload_name = w.name;
        self.names = w.tasks.into_iter().map(|t| t.name).collect();
    }

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
        Self::build(w, classes, task_class, rt_prio, partition, trace, true)
    }

    /// [`Engine::new`]; without `names`, the workload's and tasks' names are left empty
    /// for [`Engine::take_names`] to move in (nothing reads them before the run).
    pub(crate) fn build(
        w: &Workload,
        classes: Vec<Box<dyn SchedClass>>,
        task_class: &[ClassId],
        rt_prio: &[u8],
        partition: Vec<Option<CpuId>>,
        trace: bool,
        names: bool,
    ) -> Result<Engine, SimError> {
        let ncpu = w.platform.cpus;
        let tick_ns = if w.platform.hz == 0 {
            0
        } else {
            S / w.platform.hz as u64
        };
        let mut tasks = Vec::with_capacity(w.tasks.len());
        let mut releases = Vec::with_capacity(w.tasks.len());
        // Where a task may run and the CPU it starts on: (its mask, empty when every CPU
        // is allowed; how many are; the start CPU).
        let placement_of = |i: usize, t: &schedlab_model::Task| {
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
            if nr_allowed == ncpu {
                allowed = Vec::new(); // every CPU: stored as empty
            }
            (allowed, nr_allowed, start_cpu)
        };
        for (i, t) in w.tasks.iter().enumerate() {
            // A task with neither an affinity nor a partition's CPU, on a platform without
            // isolated CPUs, may run everywhere: no mask to build (and free) per task.
            let (allowed, nr_allowed, start_cpu) =
                if t.affinity.is_none() && partition[i].is_none() && w.platform.isolated.is_empty()
                {
                    let anywhere = (Vec::new(), ncpu, i % ncpu);
                    debug_assert_eq!(anywhere, placement_of(i, t));
                    anywhere
                } else {
                    placement_of(i, t)
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
                allowed_everywhere: allowed.is_empty(),
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
                weight: schedlab_model::fair::fair_weight(w, t),
                kind: t.class,
                nice: t.nice,
                job_started: false,
            });
            releases.push(ReleaseModel {
                stream: schedlab_model::release::ReleaseStream::new(w, i),
                next_seq: 0,
            });
        }
        let mut class_unrestricted = [true; 3];
        for ts in &tasks {
            if ts.nr_allowed < ncpu {
                class_unrestricted[ts.class as usize] = false;
            }
        }
        let rt_global = w.scheduler.placement == Placement::Global;
        let class_global = [rt_global, rt_global, w.scheduler.fair == Policy::Bfs];
        let mut classes: Vec<counted::Counted> =
            classes.into_iter().map(counted::Counted::new).collect();
        for (i, c) in classes.iter_mut().enumerate() {
            c.set_topology(crate::class::Topology {
                placement: w.scheduler.placement,
                nr_cpus: ncpu,
                global_queue: class_global[i],
                unrestricted: class_unrestricted[i],
                no_overhead: w.platform.context_switch == 0
                    && w.platform.migration == 0
                    && w.platform.preemption == 0
                    && w.platform.tick == 0
                    && w.platform.job_costs.per_job == 0
                    && w.platform.idle_states.is_empty()
                    && !w.platform.has_kernel_work(),
            });
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
            pre_cost: w.platform.preemption,
            tick_cost: w.platform.tick,
            // A job reading its own CPU clock makes the kernel account it at every read
            // (`task_sched_runtime` → `update_curr`): exhaustion is seen at once, as with
            // HRTICK_DL.
            hrtick: w.platform.hrtick || w.platform.job_costs.reads_cpu_clock,
            job_cost: w.platform.job_costs.per_job,
            job_wakes: job_wake::JobWakes::new(w),
            cbs: w.scheduler.cbs,
            placement: w.scheduler.placement,
            on_miss: w.on_miss,
            policy_name: w.scheduler.policy.name(),
            workload_name: if names { w.name.clone() } else { String::new() },
            names: if names {
                w.tasks.iter().map(|t| t.name.clone()).collect()
            } else {
                Vec::new()
            },
            entitled: schedlab_model::fair::entitled_shares(w),
            partition,
            partition_report: None,
            feasibility: schedlab_model::horizon::feasibility(&w.platform, &w.tasks),
            now: 0,
            tasks,
            releases,
            behaviour,
            class_global,
            next_balance: vec![0; ncpu],
            balance_failed: vec![0; ncpu],
            latency,
            kernel: kernel::KernelState::new(w, &class_global)?,
            idle: idle::IdleStates::new(&w.platform),
            vruntime_spread: 0,
            fair_decisions: 0,
            class_unrestricted,
            fair: fair_balance::FairRqs::new(ncpu),
            migration_cost: w.scheduler.migration_cost,
            cpus,
            classes,
            events: crate::event_queue::EventQueue::default(),
            cpu_timers: timers::CpuTimers::new(ncpu),
            event_seq: 0,
            events_processed: 0,
            ticks_counted: 0,
            lazy_accounting: false,
            laxity_evals: Cell::new(0),
            work: WorkStats::default(),
            cpu_visits: Cell::new(0),
            trace: trace.then(Vec::new),
            log: trace.then(Vec::new),
            scratch_assign: Vec::with_capacity(ncpu),
            scratch_cpus: Vec::with_capacity(ncpu),
            marked: marks::CpuMask::new(ncpu),
            global_poked: false,
            global_fast: None,
            global_marked: None,
            woken_pending: false,
            busy: marks::CpuMask::new(ncpu),
            track_busy: w.scheduler.placement == Placement::Linux,
            push_state: [None, None],
            class_has_tasks: ClassId::ALL.map(|c| task_class.contains(&c)),
            touched: marks::CpuMask::new(ncpu),
            rearm: marks::CpuMask::new(ncpu),
            decision_timers: false,
            prefetch: w.tasks.len() >= PREFETCH_TASKS,
            check: false,
            last_checked: 0,
            check_cursor: 0,
            violation: None,
            invocations: 0,
            structure: None,
        };
        for (i, t) in w.tasks.iter().enumerate() {
            if t.offset >= e.duration {
                continue;
            }
            if t.period.is_some() {
                e.push(t.offset, EventKind::Release { task: i as u32 });
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
                    e.push(at, EventKind::Wake { task: i as u32 });
                }
            }
        }
        e.lazy_accounting = !e.has_fair()
            && ClassId::ALL.iter().all(|&c| {
                !e.class_has_tasks[c as usize] || !e.classes[c as usize].reads_progress()
            });
        e.global_fast = e.global_fast_for(task_class);
        e.global_marked = e.global_marked_for();
        e.push_state = e.push_states_for(task_class);
        e.decision_timers = ClassId::ALL
            .iter()
            .any(|&c| e.class_has_tasks[c as usize] && e.classes[c as usize].uses_decision_timer());
        // Quantum-driven classes decide at every multiple of their quantum from 0 on.
        for c in ClassId::ALL {
            if e.class_has_tasks[c as usize] && e.classes[c as usize].quantum().is_some() {
                e.push(0, EventKind::Quantum { class: c as u32 });
            }
        }
        if tick_ns > 0 && tick_ns < e.duration {
            if e.tick_needed() {
                e.push(tick_ns, EventKind::Tick);
            } else {
                // Nothing happens at a tick: count the ticks, simulate none.
                e.ticks_counted = (e.duration - 1) / tick_ns;
            }
        }
        e.start_kernel_sources();
        Ok(e)
    }

    /// Whether any task is in the fair class.
    fn has_fair(&self) -> bool {
        self.class_has_tasks[ClassId::Fair as usize]
    }

    /// Whether any tick could change something: a class with tasks that uses it, fair
    /// tasks (balancing, vruntime samples), CBS depletion checked at ticks, a tick cost, or
    /// timer wheels.
    fn tick_needed(&self) -> bool {
        let ctx = ctx!(self);
        let class_needs = ClassId::ALL
            .iter()
            .any(|&c| self.class_has_tasks[c as usize] && self.classes[c as usize].uses_tick(&ctx));
        class_needs
            || self.has_fair()
            || self.tick_cost > 0
            || (self.cbs && !self.hrtick && self.class_has_tasks[ClassId::Dl as usize])
            || self.kernel.has_timer_wheels()
    }

    /// Run with the invariant checker on (see `check.rs`): the result, or the first
    /// violation as [`SimError::Invariant`] (the run stops there).
    pub fn run_checked(mut self) -> Result<SimResult, SimError> {
        self.check = true;
        let started = std::time::Instant::now();
        self.run_to(self.duration, true);
        if let Some(v) = self.violation.take() {
            return Err(SimError::Invariant(v));
        }
        self.advance_all(self.duration);
        if let Err(e) = self.check_accounting() {
            return Err(SimError::Invariant(format!("at the end: {e}")));
        }
        Ok(self.finish(started.elapsed().as_secs_f64()))
    }

    /// Run to the end and return the results.
    pub fn run(mut self) -> SimResult {
        let started = std::time::Instant::now();
        self.run_to(self.duration, true);
        self.advance_all(self.duration);
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
        while let Some(t) = self.next_event_time() {
            if t > until || (t == until && !inclusive) {
                break;
            }
            self.advance(t);
            while let Some(ev) = self.pop_event_at(t) {
                if self.prefetch {
                    self.prefetch_next_event();
                }
                if self.woken_pending {
                    // Tasks woke without being queued (`global_fast.rs`): queued before
                    // an event that might read the queue.
                    self.flush_woken_before(ev.kind);
                }
                self.handle(ev.kind);
            }
            if t >= self.duration {
                self.flush_woken(); // no decision at the end: queued as they woke
            }
            if t < self.duration {
                self.schedule();
                if self.structure.is_none() {
                    self.record_structure();
                }
            }
            self.rearm_timers();
            if self.check {
                if let Err(e) = self.check_state() {
                    self.violation = Some(format!("at {t} ns: {e}"));
                    return;
                }
                if self.violation.is_some() {
                    return; // found during the instant's decisions
                }
            }
        }
    }
}
