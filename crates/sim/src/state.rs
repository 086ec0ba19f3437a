//! Engine state that policies may read: tasks with their current job, CPUs, and the
//! read-only [`Ctx`] handed to every class hook.

use schedlab_model::Ns;
use std::cell::Cell;
use std::collections::VecDeque;

/// Index of a task in the workload (the schedulable entity, like a kernel thread).
pub type TaskId = usize;
/// Index of a CPU.
pub type CpuId = usize;
/// Index of a run queue: 0 with global placement, the CPU index otherwise.
pub type RqId = usize;

/// Kernel scheduling classes, in the order the core asks them (highest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClassId {
    /// SCHED_DEADLINE and the other deadline-class policies.
    Dl = 0,
    /// SCHED_FIFO / SCHED_RR.
    Rt = 1,
    /// SCHED_NORMAL / BATCH / IDLE (CFS, EEVDF) — or BFS, which replaces rt + fair.
    Fair = 2,
}

impl ClassId {
    /// All classes, highest first.
    pub const ALL: [ClassId; 3] = [ClassId::Dl, ClassId::Rt, ClassId::Fair];
    /// The real-time classes (placement and push/pull apply to them).
    pub const RT: [ClassId; 2] = [ClassId::Dl, ClassId::Rt];
}

/// One job of a periodic task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// Job number within its task (0-based).
    pub seq: u64,
    /// Release time.
    pub release: Ns,
    /// Absolute deadline.
    pub deadline: Ns,
    /// Execution time this job needs in total.
    pub exec: Ns,
    /// Execution time still needed.
    pub remaining: Ns,
}

/// CBS reservation state of a deadline task (SCHED_DEADLINE's `sched_dl_entity`).
#[derive(Debug, Clone, Copy, Default)]
pub struct DlEntity {
    /// Budget per period (Q).
    pub budget: Ns,
    /// Current scheduling deadline (d).
    pub deadline: Ns,
    /// Remaining runtime (q); negative after an overrun.
    pub runtime: i64,
    /// Throttled until replenishment.
    pub throttled: bool,
}

/// Per-task statistics.
///
/// Laid out in declaration order (`repr(C)`): the counters every job updates (release,
/// dispatch, accounting, completion) fill the first 64 bytes, the rare ones follow.
#[derive(Debug, Clone, Default)]
#[repr(C)]
pub struct TaskStats {
    /// Jobs released.
    pub jobs: u64,
    /// Jobs completed.
    pub completed: u64,
    /// CPU time consumed, overheads included.
    pub cpu_time: Ns,
    /// Largest response time.
    pub response_max: Ns,
    /// Sum of response times of completed jobs.
    pub response_sum: u128,
    /// Preemptions.
    pub preemptions: u64,
    /// Migrations.
    pub migrations: u64,
    /// Deadline misses.
    pub misses: u64,
    /// Largest tardiness.
    pub tardiness_max: Ns,
    /// Jobs aborted at their deadline.
    pub aborted: u64,
    /// Budget exhaustions with work left.
    pub throttles: u64,
    /// When a task with `work:` finished it.
    pub finished_at: Option<Ns>,
}

/// Engine-side state of one task.
///
/// Laid out in declaration order (`repr(C)`) and aligned to a cache line, so that what
/// every job touches (its job, where the task is, its CBS state, the per-job counters)
/// sits in the first four 64-byte lines and the fields read only by some classes or at
/// set-up (period, rt key, weight, affinity) come last: with 100,000 tasks the records
/// (38 MB) do not fit the caches and each line touched is a miss.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct TaskState {
    // Line 0.
    /// The job being worked on, if any.
    pub job: Option<Job>,
    /// CPU currently running it.
    pub on_cpu: Option<CpuId>,
    // Line 1.
    /// Run queue it belongs to (where it is queued when waiting).
    pub rq: RqId,
    /// CPU the task last ran on (kernel `task_cpu`).
    pub last_cpu: CpuId,
    /// Relative deadline.
    pub rel_deadline: Ns,
    /// When it last stopped running (least-recently-scheduled tie-breaks).
    pub last_ran: Ns,
    /// CBS reservation.
    pub dl: DlEntity,
    // Line 2.
    /// CPU the current job last ran on (for migration counting); None for a fresh job.
    pub job_last_cpu: Option<CpuId>,
    /// Released jobs waiting for the current one to finish (a thread runs its jobs in order).
    pub backlog: VecDeque<Job>,
    /// Number of allowed CPUs.
    pub nr_allowed: usize,
    /// Class that schedules it.
    pub class: ClassId,
    /// Queued on a run queue or running (has work and is not throttled).
    pub runnable: bool,
    /// Whether the current job has been dispatched at least once (wake-up latency).
    pub job_started: bool,
    /// Whether the task is SCHED_RR (round robin among equal priorities).
    pub round_robin: bool,
    /// Nice value.
    pub nice: i8,
    /// The task's class as the workload gives it (normal, batch, idle, iso, ...).
    pub kind: schedlab_model::TaskClass,
    /// May run on every CPU: `allowed` is empty (kept here, in a hot line, so that
    /// [`TaskState::may_run_on`] does not read `allowed` from the record's last line).
    pub allowed_everywhere: bool,
    // Lines 3 and 4 (the per-job counters first).
    /// Statistics.
    pub stats: TaskStats,
    // Cold: read by some classes only, or at set-up.
    /// Period.
    pub period: Ns,
    /// Fixed-priority rank for the rt class: smaller runs first (99 − rt_priority).
    pub rt_key: u64,
    /// Load weight in the fair class (from the weight table and nice; 3 for SCHED_IDLE).
    pub weight: u64,
    /// CPUs the task may run on (index = CPU); empty when it may run on every CPU, so
    /// that an unrestricted task costs no per-CPU memory (use [`TaskState::may_run_on`]).
    pub allowed: Vec<bool>,
}

// The hot part is the first four lines: the job and placement fields before the
// statistics, the statistics' per-job counters in their first 64 bytes.
const _: () = {
    assert!(std::mem::offset_of!(TaskState, stats) == 192);
    assert!(std::mem::offset_of!(TaskStats, misses) == 64);
    assert!(std::mem::size_of::<TaskState>() == 384);
};

impl TaskState {
    /// Laxity at `now`: absolute deadline − now − remaining execution time
    /// (`i64::MAX` without a job). Not counted: [`Ctx::laxity`] counts.
    #[inline]
    pub fn laxity_at(&self, now: Ns) -> i64 {
        match self.job {
            Some(j) => j.deadline as i64 - now as i64 - j.remaining as i64,
            None => i64::MAX,
        }
    }

    /// Whether the task may run on `cpu`.
    ///
    /// A task allowed everywhere is told by `allowed_everywhere` (line 2, read with the
    /// task's other hot fields): the wake-up placement asks this of every waking task,
    /// and with 100,000 tasks the last line, where `allowed` sits, was a cache miss.
    pub fn may_run_on(&self, cpu: CpuId) -> bool {
        debug_assert_eq!(
            self.allowed_everywhere,
            self.allowed.is_empty(),
            "allowed_everywhere disagrees with allowed"
        );
        self.allowed_everywhere || self.allowed.get(cpu).copied().unwrap_or(false)
    }

    /// The lowest-numbered CPU the task may run on.
    pub fn first_allowed(&self) -> CpuId {
        self.allowed.iter().position(|&a| a).unwrap_or(0)
    }

    /// Remaining execution time of the current job (0 if none).
    pub fn remaining(&self) -> Ns {
        self.job.map_or(0, |j| j.remaining)
    }
}

/// Engine-side state of one CPU.
#[derive(Debug, Clone, Default)]
pub struct CpuState {
    /// Task running (None = idle).
    pub curr: Option<TaskId>,
    /// Start of the current trace segment.
    pub since: Ns,
    /// Time of the last accounting update.
    pub last_update: Ns,
    /// Non-productive time (switch/migration/tick costs) still to be paid by `curr`.
    pub overhead_left: Ns,
    /// A class asked for a reschedule of this CPU (put the current task back and pick).
    pub need_resched: bool,
    /// Something happened on this CPU's run queue since its last decision (a wake-up,
    /// the current task stopping): the CPU must reconsider what it runs. CPUs that were
    /// not touched keep running, as in the kernel, where only a poked CPU reschedules.
    pub dirty: bool,
    /// Generation of the armed CPU timer (stale timer events are ignored).
    pub timer_gen: u64,
    /// When the armed CPU timer fires (u64::MAX = none).
    pub timer_at: Ns,
    /// The armed timer is (also) the class's decision instant
    /// ([`crate::class::SchedClass::next_decision`]), not only a completion.
    pub timer_decision: bool,
    /// Time spent running tasks.
    pub busy: Ns,
    /// Context switches (idle counts as a task).
    pub switches: u64,
    /// Context switches to or from idle.
    pub idle_switches: u64,
    /// The last task that ran here (kept while idle): a job resuming here after another
    /// task pays `platform.preemption`.
    pub last_task: Option<TaskId>,
}

/// What a class hook may read: the clock, tasks and CPUs. Policies never change engine
/// state through it; the only side effect is counting laxity evaluations.
pub struct Ctx<'a> {
    /// Current time.
    pub now: Ns,
    /// All tasks.
    pub tasks: &'a [TaskState],
    /// All CPUs.
    pub cpus: &'a [CpuState],
    /// Whether CBS reservations are enforced (EDF then orders by the CBS deadline).
    pub cbs: bool,
    /// Counter of laxity values computed.
    pub laxity_evals: &'a Cell<u64>,
}

impl Ctx<'_> {
    /// Task `t`.
    pub fn task(&self, t: TaskId) -> &TaskState {
        &self.tasks[t]
    }

    /// Whether `t` may run on `cpu` ([`TaskState::may_run_on`], which answers a task
    /// allowed everywhere from its hot line).
    pub fn allowed(&self, t: TaskId, cpu: CpuId) -> bool {
        self.tasks[t].may_run_on(cpu)
    }

    /// Absolute deadline EDF orders `t` by: the CBS scheduling deadline when reservations
    /// are enforced (as SCHED_DEADLINE does), else the current job's deadline.
    pub fn sched_deadline(&self, t: TaskId) -> Ns {
        let ts = &self.tasks[t];
        if self.cbs && ts.class == ClassId::Dl {
            ts.dl.deadline
        } else {
            ts.job.map_or(Ns::MAX, |j| j.deadline)
        }
    }

    /// Laxity of `t` now: absolute deadline − now − remaining execution time, counted as
    /// one laxity evaluation (the `laxity_evaluations` metric).
    pub fn laxity(&self, t: TaskId) -> i64 {
        self.count_laxity(1);
        self.laxity_uncounted(t)
    }

    /// Record `n` laxity evaluations a policy performs by its own rules, when it derives
    /// the values more cheaply than the algorithm it models.
    pub fn count_laxity(&self, n: u64) {
        self.laxity_evals.set(self.laxity_evals.get() + n);
    }

    /// Laxity of `t` without counting it (for engine-side comparisons that the modelled
    /// algorithm does not perform).
    pub fn laxity_uncounted(&self, t: TaskId) -> i64 {
        self.tasks[t].laxity_at(self.now)
    }
}
