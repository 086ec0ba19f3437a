//! Interrupts and kernel work as first-class parts of the platform (docs/latency.md), and
//! the task-level latency `probe:`.
//!
//! - `irqs`: periodic device interrupts with a handler time (interrupts off) and
//!   optional softirq work, delivered round-robin over their IRQ affinity;
//! - `timers`: per-CPU timer wheels; the pre-4.8 wheel cascades timers from coarser lists
//!   into finer ones with interrupts off for `a + b × timers moved` (seed 003);
//! - `kernel_sections`: non-preemptible kernel sections entered by running fair tasks;
//! - `isolated`: CPUs that tasks without `affinity`, device interrupts and (with
//!   `timers.migrate`) timers avoid;
//! - `wakeup_cost`: the fixed cost of a timer wake-up that a probe adds to every sample;
//! - `idle_states` and `pm_qos_latency`: cpuidle's states and a PM QoS limit; a task waking
//!   on an idle CPU pays the exit latency of the deepest state its idle time allows.
//!
//! Everything here is validated once; the simulator reads the result.

use crate::spec::{Dur, IdleStateSpec, IrqSpec, PlatformSpec, ProbeSpec, TaskSpec, TimerGroupSpec};
use crate::time::{format_ns, Ns, S, US};
use crate::workload::{Platform, Release, Scheduler, Task, TaskClass};
use crate::ExecModel;
use serde::Serialize;

/// One CPU idle state (cpuidle's `name`, `latency`, `residency`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdleState {
    /// Name shown in results.
    pub name: String,
    /// Time to leave the state before the woken task runs.
    pub exit_latency: Ns,
    /// Least idle time for which the state is entered.
    pub target_residency: Ns,
}

/// Most idle states accepted (cpuidle's CPUIDLE_STATE_MAX is 10).
pub const MAX_IDLE_STATES: usize = 10;

fn idle_state(spec: &IdleStateSpec, i: usize) -> Result<IdleState, String> {
    let at = format!("platform.idle_states[{i}]");
    let exit_latency = spec
        .exit_latency
        .ok_or_else(|| format!("{at}.exit_latency: missing (the time to leave the state)"))?
        .0;
    if exit_latency > S {
        return Err(format!(
            "{at}.exit_latency: {} is more than 1s",
            format_ns(exit_latency)
        ));
    }
    let target_residency = spec.target_residency.map_or(exit_latency, |d| d.0);
    if target_residency > 10 * S {
        return Err(format!(
            "{at}.target_residency: {} is more than 10s",
            format_ns(target_residency)
        ));
    }
    Ok(IdleState {
        name: spec.name.clone().unwrap_or_else(|| format!("state{i}")),
        exit_latency,
        target_residency,
    })
}

/// Validate `platform.idle_states` and `platform.pm_qos_latency` into `p`.
fn apply_idle(pf: &PlatformSpec, p: &mut Platform) -> Result<(), String> {
    let specs = pf.idle_states.as_deref().unwrap_or(&[]);
    if specs.len() > MAX_IDLE_STATES {
        return Err(format!(
            "platform.idle_states: {} states, at most {MAX_IDLE_STATES} (as cpuidle)",
            specs.len()
        ));
    }
    for (i, spec) in specs.iter().enumerate() {
        let s = idle_state(spec, i)?;
        if let Some(prev) = p.idle_states.last() {
            if s.target_residency < prev.target_residency {
                return Err(format!(
                    "platform.idle_states[{i}].target_residency: {} is below the previous state's {} (list the states shallowest first)",
                    format_ns(s.target_residency),
                    format_ns(prev.target_residency)
                ));
            }
        }
        p.idle_states.push(s);
    }
    p.pm_qos_latency = pf.pm_qos_latency.map(|d| d.0);
    Ok(())
}

/// A periodic device interrupt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Irq {
    /// Name shown in results.
    pub name: String,
    /// Time between two interrupts.
    pub period: Ns,
    /// Hard-interrupt handler time (interrupts off).
    pub handler: Ns,
    /// Softirq work run right after the handler.
    pub softirq: Ns,
    /// IRQ affinity as written (sorted, no duplicates; all CPUs by default).
    pub cpus: Vec<usize>,
    /// First interrupt.
    pub offset: Ns,
    /// Extra random delay per period, uniform in [0, jitter].
    pub jitter: Ns,
    /// Fires on every CPU of `cpus` (local timer, IPI) and ignores isolation.
    pub per_cpu: bool,
}

impl Irq {
    /// The CPUs it is delivered to: a per-CPU interrupt, all of `cpus`; a device
    /// interrupt, `cpus` without the isolated CPUs (all of `cpus` if that leaves none,
    /// as an explicit affinity to isolated CPUs is honoured).
    pub fn effective_cpus(&self, isolated: &[usize]) -> Vec<usize> {
        if self.per_cpu {
            return self.cpus.clone();
        }
        let v: Vec<usize> = self
            .cpus
            .iter()
            .copied()
            .filter(|c| !isolated.contains(c))
            .collect();
        if v.is_empty() {
            self.cpus.clone()
        } else {
            v
        }
    }
}

/// Which timer wheel the CPUs have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TimerWheel {
    /// Before Linux 4.8: tv1 (256 slots of one jiffy) and tv2..tv5 (64 slots each); when
    /// tv1's index wraps, the next tv2 bucket is cascaded into tv1 (recursively up).
    Cascading,
    /// Linux 4.8+: levels of 64 buckets, each 8× coarser; timers never move, expiries are
    /// rounded up to their level's granularity.
    Hierarchical,
}

/// Timers armed on the CPUs' wheels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimerGroup {
    /// Name shown in messages.
    pub name: String,
    /// Timers per CPU.
    pub count: u64,
    /// Timeout (lower bound when `spread` > 0).
    pub timeout: Ns,
    /// Timeouts drawn uniformly in [timeout, timeout + spread].
    pub spread: Ns,
    /// Re-armed with the same timeout at each expiry.
    pub periodic: bool,
    /// When they are registered (0: armed when the run starts).
    pub offset: Ns,
    /// CPUs whose wheels hold them.
    pub cpus: Vec<usize>,
}

/// `platform.timers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Timers {
    /// Wheel model.
    pub wheel: TimerWheel,
    /// Fixed cost `a` of a cascade that moves at least one timer.
    pub cascade_cost: Ns,
    /// Cost `b` per timer moved.
    pub cascade_per_timer: Ns,
    /// Softirq cost per expired timer.
    pub expiry_cost: Ns,
    /// Timers of isolated CPUs armed at the start go to housekeeping CPUs (seed 003's
    /// technique, first half).
    pub migrate: bool,
    /// Timers registered later for isolated CPUs go to housekeeping CPUs (its second half).
    pub forbid_new: bool,
    /// The timer population.
    pub groups: Vec<TimerGroup>,
}

/// `platform.kernel_sections`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KernelSections {
    /// Period of the sections on each CPU.
    pub every: Ns,
    /// Shortest section.
    pub length: Ns,
    /// Longest section (= length for fixed sections).
    pub max_length: Ns,
}

/// A task that is a cyclictest-like latency probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Probe {
    /// Wake-up interval (absolute sleeps: release k is at offset + k × interval).
    pub interval: Ns,
}

/// Default fixed cost of a cascade (an assumption: docs/latency.md).
pub const DEFAULT_CASCADE_COST: Ns = US;
/// Default cost per timer moved by a cascade (an assumption: docs/latency.md).
pub const DEFAULT_CASCADE_PER_TIMER: Ns = 250;
/// Largest number of timers over all CPUs.
pub const MAX_TIMERS: u64 = 10_000_000;

fn cpu_list(list: &[i64], cpus: usize, at: &str) -> Result<Vec<usize>, String> {
    if list.is_empty() {
        return Err(format!("{at}: empty CPU list (list at least one CPU)"));
    }
    let mut v = Vec::with_capacity(list.len());
    for &c in list {
        if c < 0 || c as u64 >= cpus as u64 {
            return Err(format!(
                "{at}: names CPU {c}, but the platform has CPUs 0..{}",
                cpus - 1
            ));
        }
        v.push(c as usize);
    }
    v.sort_unstable();
    v.dedup();
    v.shrink_to_fit();
    Ok(v)
}

/// Validate the kernel-work fields of `platform:` into `p` (cpus and hz already set).
pub fn apply_platform(pf: &PlatformSpec, p: &mut Platform) -> Result<(), String> {
    p.wakeup_cost = pf.wakeup_cost.map_or(0, |d| d.0);
    apply_idle(pf, p)?;
    let cpus = p.cpus;
    if let Some(iso) = &pf.isolated {
        p.isolated = if iso.is_empty() {
            Vec::new()
        } else {
            cpu_list(iso, cpus, "platform.isolated")?
        };
        if p.isolated.len() >= cpus {
            return Err(format!(
                "platform.isolated: isolates every CPU ({}); leave at least one housekeeping CPU",
                cpus
            ));
        }
    }
    for (i, spec) in pf.irqs.iter().flatten().enumerate() {
        p.irqs.push(irq(spec, i, cpus)?);
    }
    if let Some(ts) = &pf.timers {
        if p.hz == 0 {
            return Err(
                "platform.timers: the timer wheel advances with the tick; set platform.hz above 0"
                    .into(),
            );
        }
        let wheel = match ts.wheel.as_deref().map(str::trim) {
            None | Some("cascading") => TimerWheel::Cascading,
            Some("hierarchical") => TimerWheel::Hierarchical,
            Some(w) => {
                return Err(format!(
                    "platform.timers.wheel: unknown wheel `{w}` (known: cascading, hierarchical)"
                ))
            }
        };
        let mut groups = Vec::new();
        let mut total = 0u64;
        for (i, g) in ts.groups.iter().flatten().enumerate() {
            let g = group(g, i, cpus)?;
            total = total.saturating_add(g.count.saturating_mul(g.cpus.len() as u64));
            groups.push(g);
        }
        if total > MAX_TIMERS {
            return Err(format!(
                "platform.timers.groups: {total} timers in all is more than {MAX_TIMERS}"
            ));
        }
        p.timers = Some(Timers {
            wheel,
            cascade_cost: ts.cascade_cost.map_or(DEFAULT_CASCADE_COST, |d| d.0),
            cascade_per_timer: ts
                .cascade_per_timer
                .map_or(DEFAULT_CASCADE_PER_TIMER, |d| d.0),
            expiry_cost: ts.expiry_cost.map_or(0, |d| d.0),
            migrate: ts.migrate.unwrap_or(false),
            forbid_new: ts.forbid_new.or(ts.migrate).unwrap_or(false),
            groups,
        });
    }
    if let Some(ks) = &pf.kernel_sections {
        let at = "platform.kernel_sections";
        let every = ks.every.ok_or(format!("{at}.every is missing"))?.0;
        let length = ks.length.ok_or(format!("{at}.length is missing"))?.0;
        let max_length = ks.max_length.map_or(length, |d| d.0);
        if every == 0 || length == 0 {
            return Err(format!("{at}: every and length must be longer than 0"));
        }
        if max_length < length {
            return Err(format!(
                "{at}: max_length {} is shorter than length {}",
                format_ns(max_length),
                format_ns(length)
            ));
        }
        if max_length >= every {
            return Err(format!(
                "{at}: sections of up to {} every {} leave no time for tasks (make them shorter than `every`)",
                format_ns(max_length),
                format_ns(every)
            ));
        }
        p.kernel_sections = Some(KernelSections {
            every,
            length,
            max_length,
        });
    }
    Ok(())
}

fn irq(spec: &IrqSpec, i: usize, cpus: usize) -> Result<Irq, String> {
    let name = spec.name.clone().unwrap_or_else(|| format!("irq{i}"));
    let at = format!("platform.irqs[{i}] ({name})");
    let period = spec.period.ok_or(format!("{at}.period is missing"))?.0;
    let handler = spec.handler.ok_or(format!("{at}.handler is missing"))?.0;
    let softirq = spec.softirq.map_or(0, |d| d.0);
    if period == 0 {
        return Err(format!("{at}.period: must be longer than 0"));
    }
    if handler + softirq >= period {
        return Err(format!(
            "{at}: handler + softirq ({}) is not shorter than the period {} (the CPU would do nothing else)",
            format_ns(handler + softirq),
            format_ns(period)
        ));
    }
    let cpus_v = match &spec.cpus {
        None => (0..cpus).collect(),
        Some(l) => cpu_list(l, cpus, &format!("{at}.cpus"))?,
    };
    Ok(Irq {
        name,
        period,
        handler,
        softirq,
        cpus: cpus_v,
        offset: spec.offset.map_or(period, |d| d.0),
        jitter: spec.jitter.map_or(0, |d: Dur| d.0),
        per_cpu: spec.per_cpu.unwrap_or(false),
    })
}

fn group(g: &TimerGroupSpec, i: usize, cpus: usize) -> Result<TimerGroup, String> {
    let name = g.name.clone().unwrap_or_else(|| format!("group{i}"));
    let at = format!("platform.timers.groups[{i}] ({name})");
    let count = g.count.ok_or(format!("{at}.count is missing"))?;
    if count == 0 {
        return Err(format!("{at}.count: must be at least 1"));
    }
    let timeout = g.timeout.ok_or(format!("{at}.timeout is missing"))?.0;
    if timeout == 0 {
        return Err(format!("{at}.timeout: must be longer than 0"));
    }
    let spread = g.spread.map_or(0, |d| d.0);
    if timeout.saturating_add(spread) > 365 * 24 * 3600 * S {
        return Err(format!("{at}: timeouts beyond a year are not modelled"));
    }
    let cpus_v = match &g.cpus {
        None => (0..cpus).collect(),
        Some(l) => cpu_list(l, cpus, &format!("{at}.cpus"))?,
    };
    Ok(TimerGroup {
        name,
        count,
        timeout,
        spread,
        periodic: g.periodic.unwrap_or(false),
        offset: g.offset.map_or(0, |d| d.0),
        cpus: cpus_v,
    })
}

/// Build a probe task: a periodic `fifo`/`rr`/`normal` task of `runtime` every
/// `interval`, first released one interval after the start (as cyclictest).
pub fn build_probe(
    ts: &TaskSpec,
    ps: &ProbeSpec,
    name: String,
    cpus: usize,
    sched: &Scheduler,
) -> Result<Task, String> {
    let at = format!("task {name}");
    let mut extra = Vec::new();
    let fields: [(&str, bool); 13] = [
        ("class", ts.class.is_some()),
        ("runtime", ts.runtime.is_some()),
        ("period", ts.period.is_some()),
        ("deadline", ts.deadline.is_some()),
        ("priority", ts.priority.is_some()),
        ("nice", ts.nice.is_some()),
        ("release", ts.release.is_some()),
        ("jitter", ts.jitter.is_some()),
        ("exec", ts.exec.is_some()),
        ("work", ts.work.is_some()),
        ("run", ts.run.is_some()),
        ("sleep", ts.sleep.is_some()),
        ("phases", ts.phases.is_some()),
    ];
    for (f, set) in fields {
        if set {
            extra.push(f);
        }
    }
    if !extra.is_empty() {
        return Err(format!(
            "{at}: a probe task takes only name, count, affinity, offset and probe \
             (policy, priority, nice and runtime go inside `probe:`), not {}",
            extra.join(", ")
        ));
    }
    let interval = ps
        .interval
        .ok_or(format!("{at}: probe.interval is missing"))?
        .0;
    if interval == 0 {
        return Err(format!("{at}: probe.interval must be longer than 0"));
    }
    let class = match ps.policy.as_deref().map(|s| s.trim().to_ascii_lowercase()) {
        None => TaskClass::Fifo,
        Some(p) => match p.as_str() {
            "fifo" => TaskClass::Fifo,
            "rr" => TaskClass::Rr,
            "normal" | "other" => TaskClass::Normal,
            _ => {
                return Err(format!(
                    "{at}: probe.policy: unknown policy `{p}` (known: fifo, rr, normal)"
                ))
            }
        },
    };
    let rt = class != TaskClass::Normal;
    let priority = match (ps.priority, rt) {
        (None, true) => Some(99),
        (Some(p @ 1..=99), true) => Some(p as u8),
        (Some(p), true) => return Err(format!("{at}: probe.priority {p} is outside 1..99")),
        (Some(_), false) => {
            return Err(format!(
                "{at}: probe.priority applies to fifo/rr probes; a normal probe takes `nice`"
            ))
        }
        (None, false) => None,
    };
    let (lo, hi) = sched.weights.nice_range();
    let nice = match (ps.nice, rt) {
        (None, _) => 0,
        (Some(_), true) => {
            let m = "applies to a normal probe (policy: normal); fifo/rr take `priority`";
            return Err(format!("{at}: probe.nice {m}"));
        }
        (Some(n), false) if (lo as i64..=hi as i64).contains(&n) => n as i8,
        (Some(n), false) => {
            return Err(format!(
                "{at}: probe.nice {n} is outside {lo}..{hi} (weight table {})",
                sched.weights.name()
            ))
        }
    };
    let runtime = ps.runtime.map_or(US, |d| d.0);
    if runtime == 0 || runtime >= interval {
        return Err(format!(
            "{at}: probe.runtime {} must be longer than 0 and shorter than the interval {}",
            format_ns(runtime),
            format_ns(interval)
        ));
    }
    let affinity = match &ts.affinity {
        None => None,
        Some(l) => Some(cpu_list(l, cpus, &format!("{at}: affinity"))?),
    };
    Ok(Task {
        name,
        class,
        runtime,
        period: Some(interval),
        deadline: interval,
        offset: ts.offset.map_or(interval, |d| d.0),
        priority,
        nice,
        affinity,
        release: Release::Periodic,
        exec: ExecModel::Wcet,
        work: None,
        phases: Vec::new(),
        probe: Some(Probe { interval }),
    })
}

impl Platform {
    /// Whether interrupts, timers or kernel sections take CPU time from tasks.
    pub fn has_kernel_work(&self) -> bool {
        !self.irqs.is_empty()
            || self
                .timers
                .as_ref()
                .is_some_and(|t| t.groups.iter().any(|g| g.count > 0))
            || self.kernel_sections.is_some()
    }
}
