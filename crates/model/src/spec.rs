//! The workload file exactly as written (serde types). Unknown fields are errors.
//! [`crate::Workload::from_spec`] turns this into a validated workload.

use crate::options::{FieldSeed, OptionsSeed, RawOptions};
use crate::registry::{PolicyInfo, POLICIES};
use crate::time::{check_time, parse_duration, parse_sim_duration, Ns, SimDuration};
use serde::de::{self, DeserializeSeed, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;
use std::sync::LazyLock;

/// A duration field: a string with a unit (`10ms`) or an integer number of nanoseconds,
/// at most [`crate::limits::MAX_TIME_NS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dur(pub Ns);

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Dur;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration such as `10ms`, `250us`, `1.5s` or an integer in ns")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dur, E> {
                check_time(v)
                    .map(Dur)
                    .map_err(|e| E::custom(format!("duration {v} ns {e}")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dur, E> {
                let v =
                    u64::try_from(v).map_err(|_| E::custom(format!("negative duration {v}")))?;
                self.visit_u64(v)
            }
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<Dur, E> {
                self.visit_u64(u64::try_from(v).unwrap_or(u64::MAX))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Dur, E> {
                Err(E::custom(format!(
                    "`{v}` has no unit: write it as a string with a unit, e.g. `{v}ms`"
                )))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Dur, E> {
                parse_duration(v).map(Dur).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// The top-level `duration:`: a [`Dur`], `hyperperiod` or `hyperperiod<=DURATION`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimDur(pub SimDuration);

impl<'de> Deserialize<'de> for SimDur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = SimDur;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a duration such as `10ms`, `1.5s`, an integer in ns, `hyperperiod` or `hyperperiod<=20s`",
                )
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<SimDur, E> {
                check_time(v)
                    .map(|v| SimDur(SimDuration::Fixed(v)))
                    .map_err(|e| E::custom(format!("duration {v} ns {e}")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<SimDur, E> {
                let v =
                    u64::try_from(v).map_err(|_| E::custom(format!("negative duration {v}")))?;
                self.visit_u64(v)
            }
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<SimDur, E> {
                self.visit_u64(u64::try_from(v).unwrap_or(u64::MAX))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<SimDur, E> {
                Err(E::custom(format!(
                    "`{v}` has no unit: write it as a string with a unit, e.g. `{v}ms`"
                )))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SimDur, E> {
                parse_sim_duration(v).map(SimDur).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// Top level of a workload file.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Free-form name shown in outputs.
    pub name: Option<String>,
    /// CPUs, tick rate and overheads.
    pub platform: Option<PlatformSpec>,
    /// Simulated time (default: 1 s), or `hyperperiod[<=CAP]`.
    pub duration: Option<SimDur>,
    /// Seed for every random choice (sporadic releases, execution times).
    pub seed: Option<u64>,
    /// `continue` (default, as Linux) or `abort`.
    pub on_miss: Option<String>,
    /// Policy and placement choices.
    pub scheduler: Option<SchedulerSpec>,
    /// The task list (must not be empty).
    #[serde(default)]
    pub tasks: Vec<TaskSpec>,
}

/// `platform:` block.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct PlatformSpec {
    /// Number of CPUs (default 1).
    pub cpus: Option<u64>,
    /// Tick rate in Hz (default 1000; 0 = no tick).
    pub hz: Option<u32>,
    /// Scheduling quantum of the quantum-based policies (pd2, er-pd2, epdf, bf; default:
    /// the tick period, or 1 ms without a tick).
    pub quantum: Option<Dur>,
    /// Time charged to the incoming task at every context switch.
    pub context_switch: Option<Dur>,
    /// Extra time charged when a job resumes on another CPU.
    pub migration: Option<Dur>,
    /// Time charged to a preempted job when it resumes on the CPU it left, after another
    /// task ran there (SimSo's fixed preemption penalty).
    pub preemption: Option<Dur>,
    /// Time each tick steals from the running task.
    pub tick: Option<Dur>,
    /// Enforce CBS budgets with a high-resolution timer instead of at ticks.
    pub hrtick: Option<bool>,
    /// Modelled cost of a timer wake-up on an idle CPU (interrupt entry, hrtimer,
    /// `try_to_wake_up`, switch, return to user); latency probes add it to every sample.
    pub wakeup_cost: Option<Dur>,
    /// Periodic device interrupts (docs/latency.md).
    pub irqs: Option<Vec<IrqSpec>>,
    /// Per-CPU timer wheels whose cascades run with interrupts off (seed 003).
    pub timers: Option<TimersSpec>,
    /// CPUs that tasks without `affinity`, interrupts and (with `timers.migrate`) timers
    /// avoid (a CPU shield / `isolcpus`).
    pub isolated: Option<Vec<i64>>,
    /// Non-preemptible kernel sections of the fair (general-purpose) load.
    pub kernel_sections: Option<KernelSectionsSpec>,
    /// CPU idle states (cpuidle's table), shallowest first: a CPU idle at least a state's
    /// target residency pays its exit latency when a task wakes on it (default: none).
    pub idle_states: Option<Vec<IdleStateSpec>>,
    /// PM QoS CPU latency limit (`/dev/cpu_dma_latency`): idle states whose exit latency
    /// exceeds it are not entered (default: no limit).
    pub pm_qos_latency: Option<Dur>,
    /// What each job costs a real machine beyond its work (the runner's own per-job CPU
    /// time, how its budget is enforced): `schedlab calibrate` measures it (default: none).
    pub job_costs: Option<crate::job_costs::JobCostsSpec>,
}

/// One entry of `platform.idle_states:` (as /sys/devices/system/cpu/cpuN/cpuidle/stateM).
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct IdleStateSpec {
    /// Name shown in results (default `state<i>`).
    pub name: Option<String>,
    /// Time to leave the state before the woken task runs (cpuidle's `latency`; required).
    pub exit_latency: Option<Dur>,
    /// Least idle time for which the state is entered (cpuidle's `residency`; default:
    /// the exit latency).
    pub target_residency: Option<Dur>,
}

/// One entry of `platform.irqs:`: a periodic device interrupt.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct IrqSpec {
    /// Name shown in results (default `irq<i>`).
    pub name: Option<String>,
    /// Time between two interrupts (required).
    pub period: Option<Dur>,
    /// Hard-interrupt handler time, run with interrupts off (required).
    pub handler: Option<Dur>,
    /// Deferred (softirq) work run right after the handler (default 0).
    pub softirq: Option<Dur>,
    /// IRQ affinity (`/proc/irq/N/smp_affinity`; default all CPUs).
    pub cpus: Option<Vec<i64>>,
    /// First interrupt (default: one period after the start).
    pub offset: Option<Dur>,
    /// Extra random delay added to each period, uniform in [0, jitter] (default 0).
    pub jitter: Option<Dur>,
    /// A per-CPU interrupt (local timer, IPI): it fires on every CPU of `cpus` and cannot
    /// be moved or isolated away (default false).
    pub per_cpu: Option<bool>,
}

/// `platform.timers:` block.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct TimersSpec {
    /// `cascading` (default: the pre-4.8 wheel, tv1 256 slots + tv2..tv5 64 each) or
    /// `hierarchical` (the v4.8+ wheel: no cascades, expiries rounded up).
    pub wheel: Option<String>,
    /// Fixed cost `a` of a cascade that moves at least one timer.
    pub cascade_cost: Option<Dur>,
    /// Cost `b` per timer moved by a cascade.
    pub cascade_per_timer: Option<Dur>,
    /// Softirq cost of running one expired timer's callback (default 0).
    pub expiry_cost: Option<Dur>,
    /// Move the timers of isolated CPUs to housekeeping CPUs and register new ones there.
    pub migrate: Option<bool>,
    /// Register timers armed during the run (a group's `offset` > 0) for an isolated CPU
    /// on the housekeeping CPUs instead (default: as `migrate`).
    pub forbid_new: Option<bool>,
    /// The timers armed on the CPUs.
    pub groups: Option<Vec<TimerGroupSpec>>,
}

/// One entry of `platform.timers.groups:`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct TimerGroupSpec {
    /// Name shown in messages (default `group<i>`).
    pub name: Option<String>,
    /// Timers per CPU (required).
    pub count: Option<u64>,
    /// Timeout of each timer (required).
    pub timeout: Option<Dur>,
    /// Timeouts are drawn uniformly in [timeout, timeout + spread] (default 0).
    pub spread: Option<Dur>,
    /// Re-armed with the same timeout each time it expires (default false: one-shot).
    pub periodic: Option<bool>,
    /// CPUs whose wheels hold these timers (default all).
    pub cpus: Option<Vec<i64>>,
    /// When the timers are registered (default 0: armed when the run starts).
    pub offset: Option<Dur>,
}

/// `platform.kernel_sections:` block.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct KernelSectionsSpec {
    /// How often a CPU running a fair task enters a section (required).
    pub every: Option<Dur>,
    /// Length of a section (required).
    pub length: Option<Dur>,
    /// With it, lengths are drawn uniformly in [length, max_length].
    pub max_length: Option<Dur>,
}

/// Task-level `probe:`: the task is a cyclictest-like latency probe.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ProbeSpec {
    /// Sleep to an absolute time every interval (required).
    pub interval: Option<Dur>,
    /// `fifo` (default), `rr` or `normal` (alias `other`).
    pub policy: Option<String>,
    /// RT priority 1..99 for `fifo`/`rr` (default 99).
    pub priority: Option<i64>,
    /// Nice value for a `normal` probe (default 0).
    pub nice: Option<i64>,
    /// CPU time of each wake-up (default 1us: read the clock, store the sample).
    pub runtime: Option<Dur>,
}

/// `scheduler:` block. Its fields are the ones below plus one `scheduler.<policy>:` block
/// per registry policy that declares options ([`crate::options`]), so it is read by hand
/// (the derive cannot know the registry) with the derive's messages.
#[derive(Debug, Clone, Default)]
pub struct SchedulerSpec {
    /// Policy for periodic real-time tasks: a deadline- or rt-class policy of the registry
    /// ([`crate::registry::POLICIES`]).
    pub deadline: Option<String>,
    /// Policy for explicit `fifo`/`rr` tasks (accepted for symmetry; they use their own class).
    pub rt: Option<String>,
    /// Policy for normal tasks: a fair-class (or whole) policy of the registry.
    pub fair: Option<String>,
    /// `global`, `partitioned` or `linux`.
    pub placement: Option<String>,
    /// Partitioning heuristic: `first-fit-decreasing` (`ffd`, default), `best-fit-decreasing`
    /// (`bfd`), `worst-fit-decreasing` (`wfd`) or `load-balance` (`lb`).
    pub partition: Option<String>,
    /// SCHED_RR time slice (default 100ms).
    pub rr_timeslice: Option<Dur>,
    /// CBS budget margin: budget = runtime × (1 + margin) (default 0).
    pub dl_margin: Option<f64>,
    /// Enforce CBS budgets (default: on with `linux` placement, off otherwise).
    pub cbs: Option<bool>,
    /// Nice-to-weight table of the fair class: `linux` (default), `grouped-2`,
    /// `grouped-5`, `extended-60` (seed 004).
    pub weights: Option<String>,
    /// CFS tunables.
    pub cfs: Option<CfsSpec>,
    /// EEVDF tunables.
    pub eevdf: Option<EevdfSpec>,
    /// BFS tunables.
    pub bfs: Option<BfsSpec>,
    /// Tasks that ran within this time are cache-hot and not moved by load balancing
    /// (default 500us, `sysctl_sched_migration_cost`).
    pub migration_cost: Option<Dur>,
    /// The declared policies' blocks as written, by policy name, in file order.
    pub options: Vec<(&'static str, RawOptions)>,
}

/// Policy blocks that are typed structs here rather than declared options (their values
/// are read outside their policy: the default fair class, the real runner's comparison
/// with the host kernel's tunables).
pub const TYPED_BLOCKS: &[&str] = &["cfs", "eevdf", "bfs"];

/// The fields of `scheduler:`, in the order serde's messages list them: the fixed ones
/// with the declared policies' blocks (registry order) after `cbs`.
pub fn scheduler_fields() -> &'static [&'static str] {
    static FIELDS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
        let mut v = vec![
            "deadline",
            "rt",
            "fair",
            "placement",
            "partition",
            "rr_timeslice",
            "dl_margin",
            "cbs",
        ];
        v.extend(declared().map(|e| e.name));
        v.extend(["weights", "cfs", "eevdf", "bfs", "migration_cost"]);
        v
    });
    &FIELDS
}

/// The registry entries that declare options.
fn declared() -> impl Iterator<Item = &'static PolicyInfo> {
    POLICIES.iter().filter(|e| !e.options.is_empty())
}

/// The option names of `policy`'s block (for serde's unknown-field message).
pub fn option_names(policy: &str) -> &'static [&'static str] {
    static NAMES: LazyLock<Vec<(&'static str, Vec<&'static str>)>> = LazyLock::new(|| {
        declared()
            .map(|e| (e.name, e.options.iter().map(|d| d.name).collect()))
            .collect()
    });
    NAMES
        .iter()
        .find(|(p, _)| *p == policy)
        .map_or(&[], |(_, v)| v.as_slice())
}

impl<'de> Deserialize<'de> for SchedulerSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct("SchedulerSpec", scheduler_fields(), SchedulerVisitor)
    }
}

struct SchedulerVisitor;

impl<'de> Visitor<'de> for SchedulerVisitor {
    type Value = SchedulerSpec;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        // Turned into words by the loader, as the derive's `struct ...` are.
        f.write_str("struct SchedulerSpec")
    }
    fn visit_map<A: de::MapAccess<'de>>(self, mut m: A) -> Result<SchedulerSpec, A::Error> {
        let mut s = SchedulerSpec::default();
        let mut seen: Vec<&'static str> = Vec::new();
        while let Some(field) = m.next_key_seed(FieldSeed(scheduler_fields()))? {
            if seen.contains(&field) {
                return Err(de::Error::duplicate_field(field));
            }
            seen.push(field);
            match field {
                "deadline" => s.deadline = m.next_value()?,
                "rt" => s.rt = m.next_value()?,
                "fair" => s.fair = m.next_value()?,
                "placement" => s.placement = m.next_value()?,
                "partition" => s.partition = m.next_value()?,
                "rr_timeslice" => s.rr_timeslice = m.next_value()?,
                "dl_margin" => s.dl_margin = m.next_value()?,
                "cbs" => s.cbs = m.next_value()?,
                "weights" => s.weights = m.next_value()?,
                "cfs" => s.cfs = m.next_value()?,
                "eevdf" => s.eevdf = m.next_value()?,
                "bfs" => s.bfs = m.next_value()?,
                "migration_cost" => s.migration_cost = m.next_value()?,
                policy => {
                    let e = declared()
                        .find(|e| e.name == policy)
                        .expect("scheduler_fields lists the declared blocks");
                    let seed = OptionsSeed {
                        block: e.name,
                        decls: e.options,
                        names: option_names(e.name),
                    };
                    if let Some(raw) = m.next_value_seed(Nullable(seed))? {
                        s.options.push((e.name, raw));
                    }
                }
            }
        }
        Ok(s)
    }
}

/// `null` (or `~`) for a block means "absent", as for the derive's `Option` fields.
struct Nullable<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Nullable<S> {
    type Value = Option<S::Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for Nullable<S> {
    type Value = Option<S::Value>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a mapping of options")
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.0.deserialize(d).map(Some)
    }
}

/// `scheduler.cfs:` block (defaults: the kernel's, scaled by `1 + ilog2(min(cpus, 8))`).
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CfsSpec {
    /// `sysctl_sched_latency` (6ms × factor).
    pub latency: Option<Dur>,
    /// `sysctl_sched_min_granularity` (0.75ms × factor).
    pub min_granularity: Option<Dur>,
    /// `sysctl_sched_wakeup_granularity` (1ms × factor).
    pub wakeup_granularity: Option<Dur>,
}

/// `scheduler.eevdf:` block.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct EevdfSpec {
    /// `sysctl_sched_base_slice` (0.70ms × factor, as since v6.15).
    pub base_slice: Option<Dur>,
    /// RUN_TO_PARITY (default true).
    pub run_to_parity: Option<bool>,
    /// HRTICK: end a request exactly when it is used up (an hrtimer armed at pick for
    /// the rest of the slice) instead of at the next tick (default false, the kernel's
    /// default feature set).
    pub hrtick: Option<bool>,
}

/// `scheduler.bfs:` block.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct BfsSpec {
    /// `rr_interval` (default 6ms, 1..1000 ms).
    pub rr_interval: Option<Dur>,
    /// Cache-locality deadline offset for tasks that last ran on another CPU (default true).
    pub locality: Option<bool>,
}

/// One entry of `tasks:` (possibly expanded by `count:`).
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// Task name; with `count: n` it becomes `name1..namen`.
    pub name: Option<String>,
    /// Expand this entry into n identical tasks.
    pub count: Option<u64>,
    /// `deadline` (default with a period), `fifo`, `rr`, `normal`, `batch`, `idle`.
    pub class: Option<String>,
    /// Execution time of each job (WCET).
    pub runtime: Option<Dur>,
    /// Release period (minimum inter-arrival time for sporadic tasks).
    pub period: Option<Dur>,
    /// Relative deadline (default: the period).
    pub deadline: Option<Dur>,
    /// First release time (default 0).
    pub offset: Option<Dur>,
    /// RT priority 1..99 for `fifo`/`rr`.
    pub priority: Option<i64>,
    /// Nice value for fair tasks.
    pub nice: Option<i64>,
    /// CPUs this task may run on.
    pub affinity: Option<Vec<i64>>,
    /// `periodic` (default) or `sporadic`.
    pub release: Option<String>,
    /// Sporadic: extra random delay added to each inter-arrival, uniform in [0, jitter].
    pub jitter: Option<Dur>,
    /// Execution-time model: `wcet` (default) or `{ uniform: [min, max] }`.
    pub exec: Option<ExecSpec>,
    /// CPU-bound work for batch-like tasks: the task ends when it has run this long.
    pub work: Option<Dur>,
    /// Run (CPU time) of each burst of an interactive task; with `sleep`, repeats.
    pub run: Option<Dur>,
    /// Sleep between bursts.
    pub sleep: Option<Dur>,
    /// Explicit phases, repeated: `[{ run: 2ms }, { sleep: 8ms }, ...]`.
    pub phases: Option<Vec<PhaseSpec>>,
    /// A cyclictest-like latency probe instead of a workload task.
    pub probe: Option<ProbeSpec>,
}

/// One phase of a task's behaviour.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseSpec {
    /// Use the CPU for this long.
    pub run: Option<Dur>,
    /// Then sleep this long.
    pub sleep: Option<Dur>,
}

/// Execution time of each job: `wcet` or `{ uniform: [min, max] }` (the YAML tag form
/// `!uniform [min, max]` is accepted too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecSpec {
    /// Every job runs exactly `runtime`.
    Wcet,
    /// Each job runs a uniformly drawn time in `[min, max]` (max ≤ runtime).
    Uniform([Dur; 2]),
    /// Each job runs a normally drawn time `[mean, stddev]`, clipped to (0, runtime].
    Normal([Dur; 2]),
}

const EXEC_KNOWN: &str = "known: `wcet`, `{ uniform: [min, max] }`, `{ normal: [mean, stddev] }`";

fn exec_from<E: de::Error>(model: &str, bounds: Option<Vec<Dur>>) -> Result<ExecSpec, E> {
    match (model, bounds) {
        ("wcet", None) => Ok(ExecSpec::Wcet),
        ("wcet", Some(_)) => Err(E::custom("`wcet` takes no value: write `exec: wcet`")),
        ("uniform", None) => Err(E::custom(
            "`uniform` needs its bounds: write `exec: { uniform: [min, max] }`",
        )),
        ("uniform", Some(b)) => match b[..] {
            [min, max] => Ok(ExecSpec::Uniform([min, max])),
            _ => Err(E::custom(format!(
                "`uniform` needs exactly two bounds [min, max], got {}",
                b.len()
            ))),
        },
        ("normal", None) => Err(E::custom(
            "`normal` needs its parameters: write `exec: { normal: [mean, stddev] }`",
        )),
        ("normal", Some(b)) => match b[..] {
            [mean, stddev] => Ok(ExecSpec::Normal([mean, stddev])),
            _ => Err(E::custom(format!(
                "`normal` needs exactly two values [mean, stddev], got {}",
                b.len()
            ))),
        },
        (other, _) => Err(E::custom(format!(
            "unknown execution-time model `{other}` ({EXEC_KNOWN})"
        ))),
    }
}

impl<'de> Deserialize<'de> for ExecSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ExecSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("`wcet`, `{ uniform: [min, max] }` or `{ normal: [mean, stddev] }`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ExecSpec, E> {
                exec_from(v.trim(), None)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut m: A) -> Result<ExecSpec, A::Error> {
                let Some(key) = m.next_key::<String>()? else {
                    return Err(de::Error::custom(format!(
                        "empty execution-time model ({EXEC_KNOWN})"
                    )));
                };
                let spec = match key.as_str() {
                    "uniform" | "normal" => exec_from(&key, Some(m.next_value::<Vec<Dur>>()?))?,
                    "wcet" => {
                        m.next_value::<de::IgnoredAny>()?;
                        exec_from(&key, Some(Vec::new()))?
                    }
                    other => exec_from(other, None)?,
                };
                if m.next_key::<String>()?.is_some() {
                    return Err(de::Error::custom("give exactly one execution-time model"));
                }
                Ok(spec)
            }
            fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<ExecSpec, A::Error> {
                use de::VariantAccess;
                let (model, variant) = data.variant::<String>()?;
                match model.as_str() {
                    "wcet" => {
                        variant.unit_variant()?;
                        Ok(ExecSpec::Wcet)
                    }
                    "uniform" | "normal" => {
                        exec_from(&model, Some(variant.newtype_variant::<Vec<Dur>>()?))
                    }
                    other => exec_from(other, None),
                }
            }
        }
        d.deserialize_any(V)
    }
}
