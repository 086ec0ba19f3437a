//! What a simulation reports: the DESIGN.md result object, plus an optional schedule trace.

use schedlab_model::Ns;
use serde::Serialize;

/// Per-task results.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TaskResult {
    /// Task name.
    pub name: String,
    /// Jobs released.
    pub jobs: u64,
    /// Jobs completed.
    pub completed: u64,
    /// Deadline misses (a job not complete at its absolute deadline, counted once).
    pub misses: u64,
    /// CPU time consumed, overheads charged to the task included.
    pub cpu_time_ns: Ns,
    /// Mean response time (completion − release) over completed jobs.
    pub mean_response_ns: f64,
    /// Largest response time over completed jobs.
    pub max_response_ns: Ns,
    /// Largest lateness (completion − deadline, ≥ 0) over completed jobs.
    pub max_tardiness_ns: Ns,
    /// Switches away from this task while it was still runnable.
    pub preemptions: u64,
    /// Times one of its jobs resumed on a different CPU than the one it last ran on.
    pub migrations: u64,
    /// Times its CBS reservation ran out with work left (`linux` placement).
    pub throttles: u64,
    /// Wake-up latency: from each job's release (or wake-up) to its first dispatch.
    pub latency: Option<LatencyStats>,
    /// Fair-class figures (CPU share against entitlement, vruntime, batch completion).
    pub fair: Option<FairTaskStats>,
    /// CPUs the task is bound to by partitioning (None when not partitioned).
    pub cpu: Option<usize>,
}

/// Distribution of wake-up latencies of one task.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LatencyStats {
    /// Samples (jobs dispatched at least once).
    pub samples: u64,
    /// Smallest.
    pub min_ns: u64,
    /// Mean.
    pub mean_ns: f64,
    /// Median.
    pub p50_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// Largest.
    pub max_ns: u64,
    /// Latency probes: `[microseconds, samples]` for every whole microsecond that has
    /// samples, ascending (cyclictest's `-h` buckets, sparse).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub histogram_us: Option<Vec<[u64; 2]>>,
    /// Latency probes: periods skipped because the previous wake-up had not run yet
    /// (cyclictest's overruns: no sample is taken for them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overruns: Option<u64>,
}

/// Interrupt and kernel work of a run (present when the platform has some).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KernelStats {
    /// One entry per CPU.
    pub per_cpu: Vec<KernelCpuStats>,
}

/// Interrupt and kernel work on one CPU.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct KernelCpuStats {
    /// CPU index.
    pub cpu: usize,
    /// Interrupts taken.
    pub irqs: u64,
    /// Time in interrupt handlers and their softirq work.
    pub irq_ns: u64,
    /// Timer-wheel cascades that moved timers.
    pub cascades: u64,
    /// Timers moved by cascades.
    pub timers_moved: u64,
    /// Most timers one cascade moved.
    pub largest_cascade_timers: u64,
    /// Cost of that cascade (interrupts off).
    pub largest_cascade_ns: u64,
    /// When it happened.
    pub largest_cascade_at_ns: u64,
    /// Timers that expired (callbacks run).
    pub timer_expiries: u64,
    /// Time in the timer softirq (cascades and callbacks).
    pub timer_ns: u64,
    /// Timers on the CPU's wheel at the end.
    pub timers_armed: u64,
    /// Non-preemptible kernel sections entered by fair tasks.
    pub sections: u64,
    /// Time in them.
    pub section_ns: u64,
    /// Longest stretch during which the CPU took no scheduling decision.
    pub longest_block_ns: u64,
}

/// Fair-class figures of one task.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FairTaskStats {
    /// Nice value.
    pub nice: i8,
    /// Load weight from the weight table.
    pub weight: u64,
    /// CPU time / simulated time.
    pub share: f64,
    /// The share its weight entitles it to when it is always runnable (CPU-bound tasks:
    /// weight / total weight × CPUs, capped at one CPU); None for tasks that sleep.
    pub entitled_share: Option<f64>,
    /// vruntime at the end (CFS/EEVDF), ns.
    pub vruntime_ns: Option<i64>,
    /// When a task with `work:` completed it.
    pub finished_ns: Option<Ns>,
}

/// Fair-class figures of the whole run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FairnessStats {
    /// Jain's index over share / entitled share of the always-runnable fair tasks
    /// (1 = perfectly fair); None with fewer than two such tasks.
    pub jain_index: Option<f64>,
    /// Largest spread (max − min) of vruntime among the runnable tasks of one run queue,
    /// sampled at every tick.
    pub max_vruntime_spread_ns: i64,
    /// Scheduling decisions of the fair class (picks).
    pub decisions: u64,
    /// Makespan: when the last task with `work:` finished (None if one did not).
    pub makespan_ns: Option<Ns>,
}

/// Per-CPU results.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CpuResult {
    /// CPU index.
    pub cpu: usize,
    /// Fraction of the simulated time spent running tasks (overheads included).
    pub utilisation: f64,
    /// Context switches on this CPU (idle counts as a task).
    pub context_switches: u64,
    /// Context switches that went to or came from idle.
    pub idle_switches: u64,
}

/// One simulation's results (DESIGN.md "Machine-readable results").
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SimResult {
    /// Workload name.
    pub workload: String,
    /// Policy of the periodic tasks.
    pub policy: String,
    /// Placement of real-time work.
    pub placement: String,
    /// Number of CPUs.
    pub cpus: usize,
    /// Simulated time.
    pub duration_ns: Ns,
    /// Hyperperiod of the task set (lcm of the periods and of the tick period); `None`
    /// when the schedule has none: sporadic, aperiodic or fair tasks, random execution
    /// times, modelled jitter or platform noise, or an lcm beyond u64.
    pub hyperperiod_ns: Option<Ns>,
    /// The run covers the feasibility interval (the hyperperiod, or the largest offset
    /// plus twice the hyperperiod) of a deterministic schedule with constrained deadlines:
    /// a run without misses then decides schedulability for a memoryless scheduler
    /// (docs/analysis.md "What a finite horizon proves").
    pub horizon_complete: bool,
    /// The feasibility interval itself (`None` without a hyperperiod or on overflow).
    pub feasibility_interval_ns: Option<Ns>,
    /// The partition the run used under `partitioned` placement (`None` otherwise).
    pub partition: Option<PartitionReport>,
    /// What the policy built from the task set, as the policy reports it
    /// ([`crate::class::SchedClass::report`]: RUN's reduction tree, U-EDF's allotments, DP-Wrap's
    /// first slice, EDHS's split tasks), taken at the end of the first instant at which
    /// the engine took decisions; `None` (JSON `null`) for policies with nothing to report.
    pub scheduler_structure: Option<serde_json::Value>,
    /// Events processed by the engine.
    pub events: u64,
    /// Wall-clock seconds the simulation took (the only non-deterministic field).
    pub wall_s: f64,
    /// Jobs released.
    pub jobs_released: u64,
    /// Jobs completed.
    pub jobs_completed: u64,
    /// Jobs aborted at their deadline (`on_miss: abort`).
    pub jobs_aborted: u64,
    /// Deadline misses.
    pub deadline_misses: u64,
    /// Context switches over all CPUs (idle counts as a task).
    pub context_switches: u64,
    /// context_switches / cpus / simulated seconds.
    pub context_switches_per_cpu_per_s: f64,
    /// Same, not counting switches to or from idle.
    pub task_switches_per_cpu_per_s: f64,
    /// Preemptions.
    pub preemptions: u64,
    /// Migrations.
    pub migrations: u64,
    /// Laxity values computed by the policy.
    pub laxity_evaluations: u64,
    /// Scheduling decisions the engine took (SimSo's `schedule_count`, as close as
    /// instant-batched decisions allow): one per CPU that runs `__schedule` on its own
    /// run queue (a CPU marked for a decision at an instant: a release, a wake-up, a
    /// completion, a throttle, a tick or a class timer that asks for it), and one per
    /// pass of global placement over all CPUs (a queue shared by all CPUs: every instant
    /// at which a CPU is marked or a task joins the shared queue, quantum boundaries
    /// included). Events of one instant share the decision they cause
    /// (docs/format.md "Scheduler invocations").
    pub scheduler_invocations: u64,
    /// Times a CBS reservation ran out and its task was throttled.
    pub throttles: u64,
    /// Fair-class figures (present when the workload has fair tasks).
    pub fairness: Option<FairnessStats>,
    /// Interrupt and kernel work (present when the platform has some).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelStats>,
    /// Per-task results, in workload order.
    pub tasks: Vec<TaskResult>,
    /// Per-CPU results.
    pub per_cpu: Vec<CpuResult>,
    /// The schedule, when requested.
    #[serde(skip)]
    pub trace: Option<Vec<Segment>>,
    /// The event log (releases, wake-ups, context switches, completions, aborts), recorded
    /// with the trace; exporters (Perfetto, ftrace text, jobs CSV) are built on it.
    #[serde(skip)]
    pub log: Option<Vec<SimEvent>>,
    /// What the engine did to get here (benchmarks and the work guard test; not part of
    /// the JSON result, which is the same whatever the engine's internals).
    #[serde(skip)]
    pub work: WorkStats,
}

/// A partitioned placement: how it was built and which tasks each CPU holds.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PartitionReport {
    /// The schedulability test whose partition this is (`ffd-edf`, `ffd-rm`, `ffd-dm`),
    /// or `load-ffd` for first-fit decreasing by load alone (fifo/rr, or a set no
    /// certified partition admits).
    pub method: String,
    /// Whether the test proved every CPU schedulable (false for `load-ffd`).
    pub certified: bool,
    /// Task names per CPU, in CPU order (real-time tasks only).
    pub cpus: Vec<Vec<String>>,
}

/// Counts of the engine's work: deterministic, unlike wall time, so a test can check that
/// the cost per event does not grow with the number of tasks or CPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct WorkStats {
    /// Calls of scheduling-class hooks (enqueue, pick, wakeup_preempt, ...).
    pub class_calls: u64,
    /// Events put on the event queue.
    pub events_queued: u64,
    /// CPU timers cancelled (re-armed for another instant) before they fired.
    pub timers_cancelled: u64,
    /// CPUs looked at by the engine's loops over CPUs (every such loop adds its length).
    pub cpu_visits: u64,
    /// Largest number of events waiting in the queue at once.
    pub queue_peak: u64,
    /// Fair load balances that looked for a busiest CPU (none when no fair task waits).
    pub balance_scans: u64,
    /// Steps in the classes' queue structures: heap levels moved, queued entries or tree
    /// nodes looked at (O(log n) per operation; a scan of a queue shows up as O(n)).
    pub queue_steps: u64,
    /// Pending events moved within the event queue when it looked ahead to a new instant
    /// (its radix buckets spread): at most one per bit of an event's distance in time.
    pub event_moves: u64,
}

impl SimResult {
    /// Task dispatches in `[0, until)` in the recorded trace: a task starting to run on a
    /// CPU (a segment that does not continue the same task on the same CPU; idle not
    /// counted). 0 without a trace.
    pub fn dispatches(&self, until: Ns) -> u64 {
        let mut segs = self.trace.clone().unwrap_or_default();
        segs.sort_by_key(|s| (s.cpu, s.start));
        let mut n = 0;
        for (i, s) in segs.iter().enumerate() {
            let continues = i > 0
                && segs[i - 1].cpu == s.cpu
                && segs[i - 1].task == s.task
                && segs[i - 1].end == s.start;
            if s.start < until && !continues {
                n += 1;
            }
        }
        n
    }
}

/// One entry of the event log, in the order the engine handled it (time order; within
/// an instant, events before the decisions they cause).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SimEvent {
    /// A job was released.
    Release {
        /// Release time.
        time: Ns,
        /// Task index in the workload.
        task: usize,
        /// Job number within the task (0-based).
        job: u64,
        /// Absolute deadline.
        deadline: Ns,
        /// Execution time drawn for this job.
        exec: Ns,
    },
    /// A task became runnable and was queued (at a release, or when its CBS budget was
    /// replenished); not logged when its new job continues on the CPU it is running on.
    Wakeup {
        /// Time.
        time: Ns,
        /// Task index.
        task: usize,
    },
    /// A context switch on `cpu`, exactly as counted in the results (`None` = idle).
    Switch {
        /// Time.
        time: Ns,
        /// CPU index.
        cpu: usize,
        /// Task switched out.
        prev: Option<usize>,
        /// Task switched in.
        next: Option<usize>,
        /// Whether the task switched out was still runnable (a preemption).
        prev_runnable: bool,
    },
    /// A job completed.
    Complete {
        /// Completion time.
        time: Ns,
        /// Task index.
        task: usize,
        /// Job number.
        job: u64,
        /// CPU it completed on.
        cpu: usize,
    },
    /// A job was dropped at its deadline (`on_miss: abort`).
    Abort {
        /// Time (the deadline).
        time: Ns,
        /// Task index.
        task: usize,
        /// Job number.
        job: u64,
    },
}

/// A stretch of time during which one CPU ran one job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// CPU index.
    pub cpu: usize,
    /// Task index in the workload.
    pub task: usize,
    /// Job number within the task (0-based).
    pub job: u64,
    /// Start time.
    pub start: Ns,
    /// End time.
    pub end: Ns,
}
