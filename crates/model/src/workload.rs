//! Validated workload: what the simulator and the runner consume.

use crate::error::ModelError;
use crate::guard::{check_nesting, walk, WalkGoal};
use crate::limits::{MAX_FILE_BYTES, MAX_TASKS, MAX_TASK_CPUS, MAX_TUNABLE_NS};
use crate::options::PolicyOptions;
use crate::registry::POLICIES;
pub use crate::registry::{Policy, PolicyClass};
use crate::spec::{Dur, ExecSpec, TaskSpec, WorkloadSpec};
use crate::time::{format_ns, Ns, SimDuration, MS, S, US};
use crate::weights::WeightTable;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Where real-time work runs (DESIGN.md "Placement").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// One queue; the m highest-priority jobs always run.
    Global,
    /// Every task bound to one CPU (first-fit decreasing by utilisation).
    Partitioned,
    /// Per-CPU run queues with push/pull, as the kernel does.
    Linux,
}

impl Placement {
    /// Parse `global`, `partitioned` or `linux`.
    pub fn parse(name: &str) -> Result<Placement, String> {
        match name.trim().to_ascii_lowercase().as_str() {
            "global" => Ok(Placement::Global),
            "partitioned" => Ok(Placement::Partitioned),
            "linux" => Ok(Placement::Linux),
            _ => Err(format!(
                "unknown placement `{name}` (known: global, partitioned, linux)"
            )),
        }
    }

    /// The CLI/spec name.
    pub fn name(self) -> &'static str {
        match self {
            Placement::Global => "global",
            Placement::Partitioned => "partitioned",
            Placement::Linux => "linux",
        }
    }
}

/// How `placement: partitioned` binds the real-time tasks to CPUs (`scheduler.partition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PartitionHeuristic {
    /// Decreasing utilisation, each task to the first CPU where it fits.
    #[default]
    FirstFitDecreasing,
    /// Decreasing utilisation, each task to the most loaded CPU where it fits.
    BestFitDecreasing,
    /// Decreasing utilisation, each task to the least loaded CPU where it fits.
    WorstFitDecreasing,
    /// Workload order, each task to the least loaded CPU, without a test (SimSo's
    /// `LB_P_EDF` and `P_RM`).
    LoadBalance,
}

impl PartitionHeuristic {
    /// Every heuristic with its long and short names.
    pub const ALL: [(PartitionHeuristic, &'static str, &'static str); 4] = [
        (
            PartitionHeuristic::FirstFitDecreasing,
            "first-fit-decreasing",
            "ffd",
        ),
        (
            PartitionHeuristic::BestFitDecreasing,
            "best-fit-decreasing",
            "bfd",
        ),
        (
            PartitionHeuristic::WorstFitDecreasing,
            "worst-fit-decreasing",
            "wfd",
        ),
        (PartitionHeuristic::LoadBalance, "load-balance", "lb"),
    ];

    /// Parse a long or short name (case-insensitive).
    pub fn parse(name: &str) -> Result<PartitionHeuristic, String> {
        let n = name.trim().to_ascii_lowercase();
        Self::ALL
            .iter()
            .find(|(_, long, short)| n == *long || n == *short)
            .map(|&(h, _, _)| h)
            .ok_or_else(|| {
                let known: Vec<String> = Self::ALL
                    .iter()
                    .map(|(_, l, s)| format!("{l} ({s})"))
                    .collect();
                format!("unknown heuristic `{name}` (known: {})", known.join(", "))
            })
    }

    /// The long name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(h, _, _)| *h == self)
            .map_or("", |(_, l, _)| l)
    }
}

/// What happens to a job still running at its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OnMiss {
    /// Keep running it (Linux's behaviour).
    Continue,
    /// Drop it at its deadline (SimSo's behaviour).
    Abort,
}

impl OnMiss {
    /// Parse `continue` or `abort`.
    pub fn parse(name: &str) -> Result<OnMiss, String> {
        match name.trim().to_ascii_lowercase().as_str() {
            "continue" => Ok(OnMiss::Continue),
            "abort" => Ok(OnMiss::Abort),
            _ => Err(format!("unknown on_miss `{name}` (known: continue, abort)")),
        }
    }
}

/// Kernel scheduling class of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskClass {
    /// Periodic real-time task scheduled by the workload's deadline policy.
    Deadline,
    /// SCHED_FIFO with an explicit priority.
    Fifo,
    /// SCHED_RR with an explicit priority.
    Rr,
    /// SCHED_NORMAL.
    Normal,
    /// SCHED_BATCH.
    Batch,
    /// SCHED_IDLE (SCHED_IDLEPRIO under BFS).
    Idle,
    /// BFS's SCHED_ISO (isochronous: RT-like for unprivileged users, `fair: bfs` only).
    Iso,
}

impl TaskClass {
    /// Whether the fair class (or BFS) schedules this class.
    pub fn is_fair(self) -> bool {
        matches!(
            self,
            TaskClass::Normal | TaskClass::Batch | TaskClass::Idle | TaskClass::Iso
        )
    }

    /// The spec name (`deadline`, `fifo`, ...).
    pub fn name(self) -> &'static str {
        match self {
            TaskClass::Deadline => "deadline",
            TaskClass::Fifo => "fifo",
            TaskClass::Rr => "rr",
            TaskClass::Normal => "normal",
            TaskClass::Batch => "batch",
            TaskClass::Idle => "idle",
            TaskClass::Iso => "iso",
        }
    }

    fn parse(name: &str) -> Result<TaskClass, String> {
        match name.trim().to_ascii_lowercase().as_str() {
            "deadline" => Ok(TaskClass::Deadline),
            "fifo" => Ok(TaskClass::Fifo),
            "rr" => Ok(TaskClass::Rr),
            "normal" | "other" => Ok(TaskClass::Normal),
            "batch" => Ok(TaskClass::Batch),
            "idle" | "idleprio" => Ok(TaskClass::Idle),
            "iso" => Ok(TaskClass::Iso),
            _ => Err(format!(
                "unknown class `{name}` (known: deadline, fifo, rr, normal, batch, idle, iso)"
            )),
        }
    }
}

/// One phase of a fair task's behaviour (the list repeats).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Use this much CPU time.
    Run(Ns),
    /// Then sleep this long.
    Sleep(Ns),
}

/// How jobs are released.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Release {
    /// Exactly every period.
    Periodic,
    /// Period plus a uniform random delay in `[0, jitter]`.
    Sporadic {
        /// Largest extra delay.
        jitter: Ns,
    },
}

/// Execution time of each job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecModel {
    /// Always the task's runtime.
    Wcet,
    /// Uniform in `[min, max]`.
    Uniform {
        /// Shortest job.
        min: Ns,
        /// Longest job.
        max: Ns,
    },
    /// Normal around `mean` with standard deviation `stddev`, clipped to (0, runtime]
    /// (SimSo's ACET model, which clips at the WCET only).
    Normal {
        /// Average execution time.
        mean: Ns,
        /// Standard deviation.
        stddev: Ns,
    },
}

/// CPUs, tick and overheads.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Platform {
    /// Number of CPUs (≥ 1).
    pub cpus: usize,
    /// Tick rate in Hz (0 = no tick).
    pub hz: u32,
    /// Scheduling quantum of the quantum-based policies (pd2, er-pd2, epdf, bf).
    pub quantum: Ns,
    /// Time charged to the incoming task at every context switch.
    pub context_switch: Ns,
    /// Extra time charged when a job resumes on another CPU.
    pub migration: Ns,
    /// Time charged to a preempted job when it resumes on the CPU it left, after another
    /// task ran there.
    pub preemption: Ns,
    /// Time each tick steals from the running task.
    pub tick: Ns,
    /// Enforce CBS budgets exactly (HRTICK_DL) instead of at ticks.
    pub hrtick: bool,
    /// Cost of a timer wake-up on an idle CPU; probes add it to every sample.
    pub wakeup_cost: Ns,
    /// Periodic device interrupts.
    pub irqs: Vec<crate::kernel::Irq>,
    /// Per-CPU timer wheels (None: timers are not modelled).
    pub timers: Option<crate::kernel::Timers>,
    /// Isolated CPUs (sorted).
    pub isolated: Vec<usize>,
    /// Non-preemptible kernel sections of fair load.
    pub kernel_sections: Option<crate::kernel::KernelSections>,
    /// CPU idle states, shallowest first (empty: waking an idle CPU costs nothing extra).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub idle_states: Vec<crate::kernel::IdleState>,
    /// PM QoS CPU latency limit: states with a larger exit latency are not entered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pm_qos_latency: Option<Ns>,
    /// Per-job costs of a real run (off by default: `platform.job_costs`).
    #[serde(skip_serializing_if = "crate::job_costs::JobCosts::is_off")]
    pub job_costs: crate::job_costs::JobCosts,
}

impl Platform {
    /// The exit latency a task waking on a CPU idle for `idle_for` pays: that of the
    /// deepest state whose target residency has elapsed and whose exit latency the PM QoS
    /// limit allows (cpuidle with a governor that predicts the idle time exactly); 0 when
    /// no state qualifies.
    pub fn idle_exit_cost(&self, idle_for: Ns) -> Ns {
        self.idle_states
            .iter()
            .filter(|s| s.target_residency <= idle_for)
            .filter(|s| self.pm_qos_latency.is_none_or(|q| s.exit_latency <= q))
            .map(|s| s.exit_latency)
            .next_back()
            .unwrap_or(0)
    }
}

/// Policy and placement choices.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scheduler {
    /// Policy for periodic (`deadline`-class) tasks.
    pub policy: Policy,
    /// Policy for normal tasks.
    pub fair: Policy,
    /// Placement of real-time work.
    pub placement: Placement,
    /// How `partitioned` placement binds tasks to CPUs.
    pub partition: PartitionHeuristic,
    /// SCHED_RR slice.
    pub rr_timeslice: Ns,
    /// CBS budget = runtime × (1 + margin).
    pub dl_margin: f64,
    /// Whether CBS budgets are enforced.
    pub cbs: bool,
    /// Options of `llf`.
    pub llf: LlfOptions,
    /// Options of `illf`.
    pub illf: IllfOptions,
    /// Nice-to-weight table of the fair class.
    pub weights: WeightTable,
    /// CFS tunables (already scaled by CPU count).
    pub cfs: CfsParams,
    /// EEVDF tunables (already scaled by CPU count).
    pub eevdf: EevdfParams,
    /// BFS tunables.
    pub bfs: BfsParams,
    /// Cache-hot time for load balancing (`sysctl_sched_migration_cost`).
    pub migration_cost: Ns,
    /// Options of `edzl`.
    pub edzl: EdzlOptions,
    /// The validated `scheduler.<policy>:` block of every policy that declares options,
    /// defaults filled in, in registry order (`llf`, `illf` and `edzl` are also above,
    /// typed, for the real runner).
    #[serde(serialize_with = "options_by_block")]
    pub options: Vec<PolicyOptions>,
}

fn options_by_block<S: serde::Serializer>(v: &[PolicyOptions], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(v.iter().map(|o| (o.block, o)))
}

impl Scheduler {
    /// The validated options of `p`'s `scheduler.<name>:` block (`None`: `p` declares
    /// none).
    pub fn options_of(&self, p: Policy) -> Option<&PolicyOptions> {
        self.options.iter().find(|o| o.block == p.name())
    }

    /// [`Scheduler::options_of`] for mutation (tests and ablations built in code).
    pub fn options_of_mut(&mut self, p: Policy) -> Option<&mut PolicyOptions> {
        self.options.iter_mut().find(|o| o.block == p.name())
    }
}

/// How `edzl` detects zero laxity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct EdzlOptions {
    /// At the exact instant a waiting job's laxity reaches zero, instead of at ticks.
    pub exact: bool,
}

impl EdzlOptions {
    /// From the validated `scheduler.edzl:` block.
    pub fn from_options(o: &PolicyOptions) -> EdzlOptions {
        EdzlOptions {
            exact: o.word("mode") == "exact",
        }
    }
}

/// CFS tunables (kernel/sched/fair.c defaults × `1 + ilog2(min(cpus, 8))`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CfsParams {
    /// `sysctl_sched_latency`.
    pub latency: Ns,
    /// `sysctl_sched_min_granularity`.
    pub min_granularity: Ns,
    /// `sysctl_sched_wakeup_granularity`.
    pub wakeup_granularity: Ns,
}

/// EEVDF tunables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct EevdfParams {
    /// `sysctl_sched_base_slice`.
    pub base_slice: Ns,
    /// RUN_TO_PARITY.
    pub run_to_parity: bool,
    /// HRTICK: requests end exactly when used up, not at the next tick.
    pub hrtick: bool,
}

/// BFS tunables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BfsParams {
    /// `rr_interval`.
    pub rr_interval: Ns,
    /// Cache-locality deadline offset.
    pub locality: bool,
}

/// The kernel's tunable scaling factor `1 + ilog2(min(cpus, 8))` (SCHED_TUNABLESCALING_LOG).
pub fn tunable_factor(cpus: usize) -> u64 {
    let c = cpus.clamp(1, 8) as u64;
    1 + (63 - c.leading_zeros() as u64)
}

/// How `llf` decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LlfOptions {
    /// Decide at laxity crossings instead of at ticks.
    pub exact: bool,
    /// Break laxity ties by least recently scheduled (else FIFO by queueing order).
    pub lrs_tie: bool,
}

impl LlfOptions {
    /// From the validated `scheduler.llf:` block.
    pub fn from_options(o: &PolicyOptions) -> LlfOptions {
        LlfOptions {
            exact: o.word("mode") == "exact",
            lrs_tie: o.word("tie") == "lrs",
        }
    }
}

impl Default for LlfOptions {
    fn default() -> Self {
        LlfOptions {
            exact: false,
            lrs_tie: true,
        }
    }
}

/// Which of the seed paper's ILLF rules are in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IllfOptions {
    /// Rules 1-4 (index 0 = rule 1).
    pub rules: [bool; 4],
    /// Rule 4 only at activations (the paper's E2 narrative), not at picks after completion.
    pub swap_at_activation_only: bool,
    /// Strict `R_q < S_k` (the prose) instead of `S_k >= R_q` (Algorithm 2).
    pub strict: bool,
    /// Rule 3's zero laxity acted on at the instant a waiting task reaches it, instead of
    /// at the first tick after (rule 2's per-tick refresh).
    pub exact: bool,
}

impl IllfOptions {
    /// From the validated `scheduler.illf:` block.
    pub fn from_options(o: &PolicyOptions) -> IllfOptions {
        let rules = o.int_set("rules");
        IllfOptions {
            rules: [1, 2, 3, 4].map(|r| rules.contains(&r)),
            swap_at_activation_only: o.word("swap_at") == "activation",
            strict: o.flag("strict"),
            exact: o.word("mode") == "exact",
        }
    }
}

impl Default for IllfOptions {
    fn default() -> Self {
        IllfOptions {
            rules: [true; 4],
            swap_at_activation_only: false,
            strict: false,
            exact: false,
        }
    }
}

/// One (expanded) task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Task {
    /// Unique name.
    pub name: String,
    /// Kernel class.
    pub class: TaskClass,
    /// Worst-case execution time of each job.
    pub runtime: Ns,
    /// Period (None for aperiodic fair tasks).
    pub period: Option<Ns>,
    /// Relative deadline.
    pub deadline: Ns,
    /// First release.
    pub offset: Ns,
    /// RT priority for fifo/rr tasks.
    pub priority: Option<u8>,
    /// Nice value.
    pub nice: i8,
    /// Allowed CPUs (None = all), sorted, no duplicates.
    pub affinity: Option<Vec<usize>>,
    /// Release model.
    pub release: Release,
    /// Execution-time model.
    pub exec: ExecModel,
    /// CPU-bound work for batch-like tasks: the task ends when it has run this long.
    pub work: Option<Ns>,
    /// Behaviour of an aperiodic fair task: run/sleep phases, repeated (empty: CPU-bound).
    pub phases: Vec<Phase>,
    /// Set when the task is a cyclictest-like latency probe.
    pub probe: Option<crate::kernel::Probe>,
}

impl Task {
    /// Utilisation runtime / period (0 for aperiodic tasks).
    pub fn utilisation(&self) -> f64 {
        match self.period {
            Some(p) if p > 0 => self.runtime as f64 / p as f64,
            _ => 0.0,
        }
    }

    /// Whether the task may run on `cpu`.
    pub fn allowed_on(&self, cpu: usize) -> bool {
        self.affinity.as_ref().is_none_or(|a| a.contains(&cpu))
    }
}

/// A validated workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Workload {
    /// Name shown in outputs.
    pub name: String,
    /// Platform.
    pub platform: Platform,
    /// Simulated time.
    pub duration: Ns,
    /// Seed for random choices.
    pub seed: u64,
    /// What happens at a deadline miss.
    pub on_miss: OnMiss,
    /// Policy and placement.
    pub scheduler: Scheduler,
    /// The expanded task list.
    pub tasks: Vec<Task>,
}

/// Command-line values that override the file (applied before validation).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--policy`
    pub policy: Option<Policy>,
    /// `--placement`
    pub placement: Option<Placement>,
    /// `--cpus`
    pub cpus: Option<u64>,
    /// `--duration` (a time, or `hyperperiod[<=CAP]`)
    pub duration: Option<crate::time::SimDuration>,
    /// `--seed`
    pub seed: Option<u64>,
    /// `--on-miss`
    pub on_miss: Option<OnMiss>,
}

pub use crate::limits::MAX_CPUS;
/// Largest `count:` accepted for one entry (the task ceiling, [`crate::limits::MAX_TASKS`]).
pub const MAX_COUNT: u64 = crate::limits::MAX_TASKS;

impl Workload {
    /// Read, parse (YAML or JSON) and validate a workload file, applying overrides.
    /// A file larger than [`crate::limits::MAX_FILE_BYTES`] is refused before it is read.
    pub fn load(path: &Path, ov: &Overrides) -> Result<Workload, ModelError> {
        use std::io::Read;
        let io = |source| ModelError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        // Read one byte past the limit: a pipe or a growing file has no reliable size.
        let mut text = String::new();
        file.take(MAX_FILE_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(io)?;
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(ModelError::Invalid {
                path: path.to_path_buf(),
                message: format!(
                    "the file is larger than {MAX_FILE_BYTES} bytes (32 MiB), the limit for a workload"
                ),
            });
        }
        Workload::parse_str(&text, path, ov)
    }

    /// Parse and validate text; `path` names the source in messages and decides the format
    /// (`.json` → JSON; otherwise YAML, which also accepts JSON text).
    pub fn parse_str(text: &str, path: &Path, ov: &Overrides) -> Result<Workload, ModelError> {
        let spec = parse_spec(text, path)?;
        Workload::from_spec(spec, ov).map_err(|message| ModelError::Invalid {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Validate a parsed spec. The error names the task/field and the problem.
    pub fn from_spec(spec: WorkloadSpec, ov: &Overrides) -> Result<Workload, String> {
        let pf = spec.platform.unwrap_or_default();
        let cpus_field = if ov.cpus.is_some() {
            "--cpus"
        } else {
            "platform.cpus"
        };
        let cpus = ov.cpus.or(pf.cpus).unwrap_or(1);
        if cpus == 0 {
            return Err(format!("{cpus_field}: must be at least 1, got 0"));
        }
        if cpus > MAX_CPUS {
            return Err(format!("{cpus_field}: {cpus} is more than {MAX_CPUS}"));
        }
        let mut platform = Platform {
            cpus: cpus as usize,
            hz: pf.hz.unwrap_or(1000),
            quantum: 0, // set below, from the tick
            context_switch: pf.context_switch.map_or(0, |d| d.0),
            migration: pf.migration.map_or(0, |d| d.0),
            preemption: pf.preemption.map_or(0, |d| d.0),
            tick: pf.tick.map_or(0, |d| d.0),
            hrtick: pf.hrtick.unwrap_or(false),
            wakeup_cost: 0,
            irqs: Vec::new(),
            timers: None,
            isolated: Vec::new(),
            kernel_sections: None,
            idle_states: Vec::new(),
            pm_qos_latency: None,
            job_costs: crate::job_costs::JobCosts::from_spec(pf.job_costs.as_ref())?,
        };
        if platform.hz > 100_000 {
            return Err(format!("platform.hz: {} is above 100000", platform.hz));
        }
        if platform.hz > 0 && platform.tick >= S / platform.hz as u64 {
            return Err(format!(
                "platform.tick: tick cost {} is not shorter than the tick period",
                format_ns(platform.tick)
            ));
        }

        // The quantum defaults to the tick period (1 ms without a tick).
        platform.quantum = match pf.quantum {
            Some(d) if d.0 == 0 => return Err("platform.quantum: must be longer than 0".into()),
            Some(d) => d.0,
            None => S.checked_div(platform.hz as u64).unwrap_or(MS),
        };
        crate::kernel::apply_platform(&pf, &mut platform)?;

        let asked = ov
            .duration
            .or(spec.duration.map(|d| d.0))
            .unwrap_or(SimDuration::Fixed(S));
        let duration_field = if ov.duration.is_some() {
            "--duration"
        } else {
            "duration"
        };
        // A hyperperiod is resolved once the tasks are known (below); its cap is checked
        // here like any duration.
        let limit = match asked {
            SimDuration::Fixed(d) | SimDuration::Hyperperiod { cap: d } => d,
        };
        if limit == 0 {
            return Err(format!("{duration_field}: must be longer than 0"));
        }
        crate::time::check_time(limit)
            .map_err(|e| format!("{duration_field}: {} {e}", format_ns(limit)))?;
        // Names in the file are checked even when an override replaces them: a typo in the
        // file is still a typo. Ranges are checked on the value actually used.
        let file_on_miss = match &spec.on_miss {
            Some(s) => Some(OnMiss::parse(s).map_err(|e| format!("on_miss: {e}"))?),
            None => None,
        };
        let on_miss = ov.on_miss.or(file_on_miss).unwrap_or(OnMiss::Continue);

        let sc = spec.scheduler.unwrap_or_default();
        let mut policy = match &sc.deadline {
            Some(s) => Policy::parse(s).map_err(|e| format!("scheduler.deadline: {e}"))?,
            None => Policy::Edf,
        };
        if !policy.is_periodic() {
            return Err(format!(
                "scheduler.deadline: `{}` is not a real-time policy (use it as scheduler.fair)",
                policy.name()
            ));
        }
        if let Some(rt) = &sc.rt {
            let p = Policy::parse(rt).map_err(|e| format!("scheduler.rt: {e}"))?;
            if !matches!(p, Policy::Fifo | Policy::Rr) {
                return Err(format!("scheduler.rt: `{rt}` must be fifo or rr"));
            }
        }
        let mut fair = match &sc.fair {
            Some(s) => Policy::parse(s).map_err(|e| format!("scheduler.fair: {e}"))?,
            None => Policy::Cfs,
        };
        if fair.is_periodic() {
            return Err(format!(
                "scheduler.fair: `{}` is not a fair-share policy ({})",
                fair.name(),
                crate::registry::names_where(|e| !e.class.is_periodic()).join(", ")
            ));
        }
        if let Some(p) = ov.policy {
            if p.is_periodic() {
                policy = p;
            } else {
                fair = p;
            }
        }
        let file_placement = match &sc.placement {
            Some(s) => Some(Placement::parse(s).map_err(|e| format!("scheduler.placement: {e}"))?),
            None => None,
        };
        let placement = ov.placement.or(file_placement).unwrap_or(Placement::Linux);
        let partition = match &sc.partition {
            Some(p) => {
                PartitionHeuristic::parse(p).map_err(|e| format!("scheduler.partition: {e}"))?
            }
            None => PartitionHeuristic::default(),
        };
        let rr_timeslice = sc.rr_timeslice.map_or(100 * MS, |d| d.0);
        if rr_timeslice == 0 {
            return Err("scheduler.rr_timeslice: must be longer than 0".into());
        }
        let dl_margin = sc.dl_margin.unwrap_or(0.0);
        if !(0.0..=10.0).contains(&dl_margin) {
            return Err(format!(
                "scheduler.dl_margin: {dl_margin} is outside 0..10 (a fraction: 0.05 = 5%)"
            ));
        }
        let factor = tunable_factor(platform.cpus);
        let weights = match &sc.weights {
            Some(w) => WeightTable::parse(w).map_err(|e| format!("scheduler.weights: {e}"))?,
            None => WeightTable::Linux,
        };
        let cfs_spec = sc.cfs.clone().unwrap_or_default();
        let cfs = CfsParams {
            latency: cfs_spec.latency.map_or(6 * MS * factor, |d| d.0),
            min_granularity: cfs_spec.min_granularity.map_or(750 * US * factor, |d| d.0),
            wakeup_granularity: cfs_spec.wakeup_granularity.map_or(MS * factor, |d| d.0),
        };
        if cfs.latency == 0 || cfs.min_granularity == 0 {
            return Err("scheduler.cfs: latency and min_granularity must be longer than 0".into());
        }
        let eevdf_spec = sc.eevdf.clone().unwrap_or_default();
        let eevdf = EevdfParams {
            base_slice: eevdf_spec.base_slice.map_or(700 * US * factor, |d| d.0),
            run_to_parity: eevdf_spec.run_to_parity.unwrap_or(true),
            hrtick: eevdf_spec.hrtick.unwrap_or(false),
        };
        if eevdf.base_slice == 0 {
            return Err("scheduler.eevdf.base_slice: must be longer than 0".into());
        }
        let bfs_spec = sc.bfs.clone().unwrap_or_default();
        let bfs = BfsParams {
            rr_interval: bfs_spec.rr_interval.map_or(6 * MS, |d| d.0),
            locality: bfs_spec.locality.unwrap_or(true),
        };
        if !(MS..=1000 * MS).contains(&bfs.rr_interval) {
            return Err(format!(
                "scheduler.bfs.rr_interval: {} is outside 1ms..1000ms",
                format_ns(bfs.rr_interval)
            ));
        }
        let migration_cost = sc.migration_cost.map_or(500 * US, |d| d.0);
        for (field, v) in [
            ("scheduler.rr_timeslice", rr_timeslice),
            ("scheduler.cfs.latency", cfs.latency),
            ("scheduler.cfs.min_granularity", cfs.min_granularity),
            ("scheduler.cfs.wakeup_granularity", cfs.wakeup_granularity),
            ("scheduler.eevdf.base_slice", eevdf.base_slice),
            ("scheduler.migration_cost", migration_cost),
        ] {
            if v > MAX_TUNABLE_NS {
                return Err(format!(
                    "{field}: {} is above {}, the limit for a scheduler tunable",
                    format_ns(v),
                    format_ns(MAX_TUNABLE_NS)
                ));
            }
        }
        let options = POLICIES
            .iter()
            .filter(|e| !e.options.is_empty())
            .map(|e| {
                let raw = sc
                    .options
                    .iter()
                    .find(|(n, _)| *n == e.name)
                    .map(|(_, r)| r);
                crate::options::resolve(e.name, e.options, e.check, raw)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let of = |p: Policy| options.iter().find(|o| o.block == p.name());
        let scheduler = Scheduler {
            llf: of(Policy::Llf)
                .map(LlfOptions::from_options)
                .unwrap_or_default(),
            illf: of(Policy::Illf)
                .map(IllfOptions::from_options)
                .unwrap_or_default(),
            edzl: of(Policy::Edzl)
                .map(EdzlOptions::from_options)
                .unwrap_or_default(),
            options,
            policy,
            fair,
            placement,
            partition,
            rr_timeslice,
            dl_margin,
            cbs: sc.cbs.unwrap_or(placement == Placement::Linux),
            weights,
            cfs,
            eevdf,
            bfs,
            migration_cost,
        };

        if spec.tasks.is_empty() {
            return Err(
                "tasks: the task list is empty (a workload needs at least one task)".into(),
            );
        }
        let total = task_total(&spec.tasks, platform.cpus)?;
        let mut tasks = Vec::with_capacity(total);
        for (i, ts) in spec.tasks.iter().enumerate() {
            expand_task(ts, i, platform.cpus, &scheduler, &mut tasks)?;
        }
        let mut names = std::collections::BTreeSet::new();
        for t in &tasks {
            if !names.insert(t.name.as_str()) {
                return Err(format!(
                    "tasks: two tasks are named `{}` (names must be unique; `count: n` \
                     expands a name to name1..namen)",
                    t.name
                ));
            }
        }
        let duration = match asked {
            SimDuration::Fixed(d) => d,
            SimDuration::Hyperperiod { cap } => crate::horizon::feasibility(&platform, &tasks)
                .interval
                .map_or(cap, |i| i.min(cap)),
        };
        Ok(Workload {
            name: spec.name.unwrap_or_else(|| "workload".into()),
            platform,
            duration,
            seed: ov.seed.or(spec.seed).unwrap_or(0),
            on_miss,
            scheduler,
            tasks,
        })
    }

    /// Total utilisation of the periodic tasks.
    pub fn utilisation(&self) -> f64 {
        self.tasks.iter().map(Task::utilisation).sum()
    }
}

/// The number of tasks once `count:` is expanded, checked against [`MAX_TASKS`] and
/// [`MAX_TASK_CPUS`] before any task is built.
fn task_total(specs: &[TaskSpec], cpus: usize) -> Result<usize, String> {
    let mut total: u64 = 0;
    for (i, ts) in specs.iter().enumerate() {
        let count = ts.count.unwrap_or(1);
        if count == 0 || count > MAX_COUNT {
            let name = ts.name.clone().unwrap_or_else(|| format!("t{}", i + 1));
            return Err(format!(
                "tasks[{i}] ({name}).count: must be between 1 and {MAX_COUNT}, got {count}"
            ));
        }
        total = total.saturating_add(count);
    }
    if total > MAX_TASKS {
        return Err(format!(
            "tasks: {total} tasks after `count:` expansion is more than {MAX_TASKS}, the limit"
        ));
    }
    let product = total.saturating_mul(cpus as u64);
    if product > MAX_TASK_CPUS {
        return Err(format!(
            "tasks: {total} tasks × {cpus} CPUs = {product} is more than {MAX_TASK_CPUS}, the \
             limit on tasks × CPUs (use fewer tasks or fewer CPUs)"
        ));
    }
    Ok(total as usize)
}

fn expand_task(
    ts: &TaskSpec,
    index: usize,
    cpus: usize,
    sched: &Scheduler,
    out: &mut Vec<Task>,
) -> Result<(), String> {
    let base = ts.name.clone().unwrap_or_else(|| format!("t{}", index + 1));
    if base.trim().is_empty() {
        return Err(format!("tasks[{index}].name: empty name"));
    }
    let count = ts.count.unwrap_or(1);
    if count == 0 || count > MAX_COUNT {
        return Err(format!(
            "tasks[{index}] ({base}).count: must be between 1 and {MAX_COUNT}, got {count}"
        ));
    }
    for k in 1..=count {
        let name = if ts.count.is_some() {
            format!("{base}{k}")
        } else {
            base.clone()
        };
        out.push(match &ts.probe {
            Some(ps) => crate::kernel::build_probe(ts, ps, name, cpus, sched)?,
            None => build_task(ts, name, cpus, sched)?,
        });
        if ts.count.is_none() {
            break;
        }
    }
    Ok(())
}

/// "task NAME", the prefix of a task's errors, formatted only when an error is.
struct At<'a>(&'a str);

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "task {}", self.0)
    }
}

fn build_task(ts: &TaskSpec, name: String, cpus: usize, sched: &Scheduler) -> Result<Task, String> {
    // A sweep builds thousands of valid tasks a second: no string for the error path.
    let at = At(&name);
    let class = match &ts.class {
        Some(c) => TaskClass::parse(c).map_err(|e| format!("{at}: class: {e}"))?,
        None if ts.period.is_some() => TaskClass::Deadline,
        None => TaskClass::Normal,
    };
    let period = ts.period.map(|d| d.0);
    if period == Some(0) {
        return Err(format!("{at}: period must be longer than 0"));
    }
    let runtime = ts.runtime.map(|d| d.0);
    // Real-time classes are periodic; a fair task is periodic when it has a period.
    let rt_like =
        matches!(class, TaskClass::Deadline | TaskClass::Fifo | TaskClass::Rr) || period.is_some();
    let (runtime, deadline) = if rt_like {
        let Some(period) = period else {
            return Err(format!("{at}: a {} task needs a period", class.name()));
        };
        let Some(runtime) = runtime else {
            return Err(format!("{at}: runtime is missing"));
        };
        if runtime == 0 {
            return Err(format!("{at}: runtime must be longer than 0"));
        }
        let deadline = ts.deadline.map_or(period, |d| d.0);
        if deadline == 0 {
            return Err(format!("{at}: deadline must be longer than 0"));
        }
        if runtime > deadline {
            return Err(format!(
                "runtime {} exceeds deadline {} in task {name}",
                format_ns(runtime),
                format_ns(deadline)
            ));
        }
        if deadline > period {
            return Err(format!(
                "deadline {} exceeds period {} in task {name} (arbitrary deadlines are not supported)",
                format_ns(deadline),
                format_ns(period)
            ));
        }
        (runtime, deadline)
    } else {
        (runtime.unwrap_or(0), ts.deadline.map_or(0, |d| d.0))
    };
    let priority = match ts.priority {
        None => None,
        Some(p @ 1..=99) => Some(p as u8),
        Some(p) => return Err(format!("{at}: priority {p} is outside 1..99")),
    };
    if priority.is_some() && !matches!(class, TaskClass::Fifo | TaskClass::Rr | TaskClass::Deadline)
    {
        return Err(format!(
            "{at}: priority applies only to fifo/rr tasks (and to periodic tasks under \
             --policy fifo|rr), not to a {} task",
            class.name()
        ));
    }
    let (lo, hi) = sched.weights.nice_range();
    let nice = match ts.nice {
        None => 0,
        Some(n) if (lo as i64..=hi as i64).contains(&n) => n as i8,
        Some(n) => {
            return Err(format!(
                "{at}: nice {n} is outside {lo}..{hi} (weight table {})",
                sched.weights.name()
            ))
        }
    };
    if class == TaskClass::Iso && sched.fair != Policy::Bfs {
        return Err(format!(
            "{at}: class iso (SCHED_ISO) exists only with `fair: bfs`"
        ));
    }
    let phases = fair_phases(ts, &at, class, period.is_some())?;
    let affinity = match &ts.affinity {
        None => None,
        Some(list) if list.is_empty() => {
            return Err(format!("{at}: affinity is empty (list at least one CPU)"))
        }
        Some(list) => {
            let mut v = Vec::with_capacity(list.len());
            for &c in list {
                if c < 0 || c as u64 >= cpus as u64 {
                    return Err(format!(
                        "{at}: affinity names CPU {c}, but the platform has CPUs 0..{}",
                        cpus - 1
                    ));
                }
                v.push(c as usize);
            }
            v.sort_unstable();
            v.dedup();
            // A long list with repeats (`[0, 0, 0, ...]`) keeps only what it names.
            v.shrink_to_fit();
            Some(v)
        }
    };
    let release = match ts.release.as_deref() {
        None | Some("periodic") => {
            if ts.jitter.is_some() {
                return Err(format!("{at}: jitter needs `release: sporadic`"));
            }
            Release::Periodic
        }
        Some("sporadic") => Release::Sporadic {
            jitter: ts.jitter.map_or(0, |d: Dur| d.0),
        },
        Some(other) => {
            return Err(format!(
                "{at}: release `{other}` is unknown (known: periodic, sporadic)"
            ))
        }
    };
    let exec = match &ts.exec {
        None | Some(ExecSpec::Wcet) => ExecModel::Wcet,
        Some(ExecSpec::Uniform([a, b])) => {
            if a.0 == 0 || a.0 > b.0 || b.0 > runtime {
                return Err(format!(
                    "{at}: exec uniform [{}, {}] must satisfy 0 < min <= max <= runtime {}",
                    format_ns(a.0),
                    format_ns(b.0),
                    format_ns(runtime)
                ));
            }
            ExecModel::Uniform { min: a.0, max: b.0 }
        }
        Some(ExecSpec::Normal([mean, stddev])) => {
            if mean.0 == 0 || mean.0 > runtime {
                return Err(format!(
                    "{at}: exec normal mean {} must satisfy 0 < mean <= runtime {}",
                    format_ns(mean.0),
                    format_ns(runtime)
                ));
            }
            ExecModel::Normal {
                mean: mean.0,
                stddev: stddev.0,
            }
        }
    };
    Ok(Task {
        name,
        class,
        runtime,
        period,
        deadline,
        offset: ts.offset.map_or(0, |d| d.0),
        priority,
        nice,
        affinity,
        release,
        exec,
        work: ts.work.map(|d| d.0),
        phases,
        probe: None,
    })
}

/// The run/sleep behaviour of an aperiodic fair task.
fn fair_phases(
    ts: &TaskSpec,
    at: &At<'_>,
    class: TaskClass,
    periodic: bool,
) -> Result<Vec<Phase>, String> {
    let has_phases = ts.run.is_some() || ts.sleep.is_some() || ts.phases.is_some();
    if !has_phases {
        if ts.work == Some(Dur(0)) {
            return Err(format!("{at}: work must be longer than 0"));
        }
        return Ok(Vec::new());
    }
    if !class.is_fair() || periodic {
        return Err(format!(
            "{at}: run/sleep phases describe aperiodic fair tasks (normal, batch, idle, iso); \
             a periodic task uses runtime and period"
        ));
    }
    let mut out = Vec::new();
    match (&ts.phases, ts.run, ts.sleep) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            return Err(format!("{at}: give either run/sleep or phases, not both"))
        }
        (None, Some(r), Some(sl)) => {
            out.push(Phase::Run(r.0));
            out.push(Phase::Sleep(sl.0));
        }
        (None, Some(_), None) => {
            return Err(format!(
                "{at}: run needs sleep (a task that never sleeps is CPU-bound: leave both out, or use work)"
            ))
        }
        (None, None, Some(_)) => return Err(format!("{at}: sleep needs run")),
        (Some(list), None, None) => {
            for (i, p) in list.iter().enumerate() {
                match (p.run, p.sleep) {
                    (Some(r), None) => out.push(Phase::Run(r.0)),
                    (None, Some(sl)) => out.push(Phase::Sleep(sl.0)),
                    _ => {
                        return Err(format!(
                            "{at}: phases[{i}] needs exactly one of run or sleep"
                        ))
                    }
                }
            }
        }
        (None, None, None) => unreachable!("has_phases"),
    }
    if out
        .iter()
        .any(|p| matches!(p, Phase::Run(0) | Phase::Sleep(0)))
    {
        return Err(format!("{at}: every phase must be longer than 0"));
    }
    if !out.iter().any(|p| matches!(p, Phase::Run(_))) {
        return Err(format!("{at}: phases need at least one run"));
    }
    Ok(out)
}

/// Parse text into a [`WorkloadSpec`], reporting line/column and the field path on error.
///
/// The message names the field as a path (`tasks[2].runtime`), adds the task's name when
/// the document is readable enough to know it (`tasks[2] (small).runtime`), and carries
/// the location only once (in [`ModelError::Syntax::location`]).
pub fn parse_spec(text: &str, path: &Path) -> Result<WorkloadSpec, ModelError> {
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let syntax = |location: String, field: String, inner: String| ModelError::Syntax {
        path: path.to_path_buf(),
        location,
        message: with_field(name_tasks(text, &field), &clean_message(&inner, &field)),
    };
    // A limit broken in the walk below is reported without the task's name (finding it
    // would walk the oversized document again).
    let limit = |location: String, field: String, inner: String| ModelError::Syntax {
        path: path.to_path_buf(),
        location,
        message: with_field(tidy_path(&field), &clean_message(&inner, &field)),
    };
    // Before any parser: the raw size, then the nesting depth (see crate::guard).
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(ModelError::Invalid {
            path: path.to_path_buf(),
            message: format!(
                "the text is larger than {MAX_FILE_BYTES} bytes (32 MiB), the limit for a workload"
            ),
        });
    }
    check_nesting(text).map_err(|e| ModelError::Syntax {
        path: path.to_path_buf(),
        location: format!(":{}:{}", e.line, e.column),
        message: e.message,
    })?;
    // Then one pass over the document that builds nothing: the expanded size, list
    // lengths and YAML tags, before the typed parse allocates anything.
    if is_json {
        let mut de = serde_json::Deserializer::from_str(text);
        let mut track = serde_path_to_error::Track::new();
        walk(
            serde_path_to_error::Deserializer::new(&mut de, &mut track),
            WalkGoal::default(),
        )
        .map_err(|e| {
            let loc = format!(":{}:{}", e.line(), e.column());
            limit(loc, track.path().to_string(), e.to_string())
        })?;
    } else {
        let de = serde_norway::Deserializer::from_str(text);
        let mut track = serde_path_to_error::Track::new();
        walk(
            serde_path_to_error::Deserializer::new(de, &mut track),
            WalkGoal::default(),
        )
        .map_err(|e| {
            let loc = e
                .location()
                .map(|l| format!(":{}:{}", l.line(), l.column()))
                .unwrap_or_default();
            limit(loc, track.path().to_string(), e.to_string())
        })?;
    }
    if is_json {
        let mut de = serde_json::Deserializer::from_str(text);
        let spec = serde_path_to_error::deserialize::<_, WorkloadSpec>(&mut de).map_err(|e| {
            let loc = format!(":{}:{}", e.inner().line(), e.inner().column());
            syntax(loc, e.path().to_string(), e.inner().to_string())
        })?;
        // Trailing text after the object (`{...} {...}`) is an error too.
        de.end().map_err(|e| {
            let loc = format!(":{}:{}", e.line(), e.column());
            syntax(loc, String::new(), e.to_string())
        })?;
        Ok(spec)
    } else {
        let de = serde_norway::Deserializer::from_str(text);
        serde_path_to_error::deserialize::<_, WorkloadSpec>(de).map_err(|e| {
            let loc = e
                .inner()
                .location()
                .map(|l| format!(":{}:{}", l.line(), l.column()))
                .unwrap_or_default();
            syntax(loc, e.path().to_string(), e.inner().to_string())
        })
    }
}

fn with_field(field: String, msg: &str) -> String {
    if field.is_empty() {
        msg.to_string()
    } else {
        format!("{field}: {msg}")
    }
}

/// The field path as serde_path_to_error prints it, minus unknown (`?`) and root (`.`)
/// segments, which only appear when the text itself is broken.
fn tidy_path(field: &str) -> String {
    let segs: Vec<&str> = field
        .split('.')
        .filter(|s| !s.is_empty() && *s != "?")
        .collect();
    segs.join(".")
}

/// `tasks[3].runtime` -> `tasks[3] (small4).runtime` when task 3 has a readable name.
fn name_tasks(text: &str, field: &str) -> String {
    let field = tidy_path(field);
    let Some(rest) = field.strip_prefix("tasks[") else {
        return field;
    };
    let Some((index, tail)) = rest.split_once(']') else {
        return field;
    };
    let Ok(index) = index.parse::<usize>() else {
        return field;
    };
    // A second, lenient read that builds nothing but the name, within the same limits as
    // the first (YAML is a superset of JSON, so this works for both formats). A file that
    // broke a limit gives no name, only the path.
    let name = walk(
        serde_norway::Deserializer::from_str(text),
        WalkGoal {
            task_name: Some(index),
        },
    )
    .ok()
    .flatten();
    match name {
        Some(name) => format!("tasks[{index}] ({name}){tail}"),
        None => field,
    }
}

/// The parser's own message without what we print elsewhere (its copy of the field path,
/// `at line L column C`) and with Rust type names turned into words.
fn clean_message(msg: &str, field: &str) -> String {
    let mut msg = strip_locations(msg);
    // serde_norway prefixes its own path (`tasks[0]: ...`), a prefix of ours.
    let field = tidy_path(field);
    if let Some((head, tail)) = msg.split_once(": ") {
        let is_prefix = head == field
            || field
                .strip_prefix(head)
                .is_some_and(|r| r.starts_with('.') || r.starts_with('['));
        if !head.is_empty() && is_prefix {
            msg = tail.to_string();
        }
    }
    for (rust, words) in [
        ("struct WorkloadSpec", "a mapping of workload fields (name, platform, duration, seed, on_miss, scheduler, tasks)"),
        ("struct PlatformSpec", "a mapping of platform fields"),
        ("struct SchedulerSpec", "a mapping of scheduler fields"),
        ("struct TaskSpec", "a mapping of task fields"),
        ("expected u64", "expected a non-negative integer"),
        ("expected u32", "expected a non-negative integer"),
        ("expected i64", "expected an integer"),
        ("expected f64", "expected a number"),
    ] {
        msg = msg.replace(rust, words);
    }
    msg
}

/// Remove every ` at line L column C` the parsers append (and serde_json's bare
/// `line L column C`), keeping the rest of the sentence.
fn strip_locations(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(i) = rest.find(" at line ") {
        out.push_str(&rest[..i]);
        let after = &rest[i + " at line ".len()..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let after_line = &after[digits..];
        match after_line.strip_prefix(" column ") {
            Some(col) if digits > 0 => {
                rest = col.trim_start_matches(|c: char| c.is_ascii_digit());
            }
            _ => {
                out.push_str(" at line ");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Path used in messages when a workload does not come from a file.
pub fn inline_path() -> PathBuf {
    PathBuf::from("<built-in>")
}
