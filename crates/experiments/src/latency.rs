//! Seed 002 (Linux scheduling-latency tuning measured with cyclictest): the article's
//! tuning steps one by one on a simulated 4-core x86 under general-purpose load, with a
//! cyclictest-like probe pinned to CPU 3, and — where the host allows (root) — the same
//! steps measured with `schedlab latency` on this machine (docs/reproduction.md).

use super::{r2, Case, Outcome};
use crate::figure::{Chart, Figure, Series};
use crate::Error;
use crate::Progress;
use schedlab_linux::latency::{self, LatencyConfig, LatencyResult, ProbePolicy};
use schedlab_model::{Overrides, Workload};
use schedlab_sim::result::LatencyStats;
use schedlab_sim::{simulate, SimOptions, SimResult};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// One tuning step of the article, as simulated.
pub(super) struct Step {
    /// Case title.
    title: &'static str,
    /// The article's numbers (µs; strings for relative claims).
    paper: Value,
    /// Probe policy: `normal`, `fifo` or `rr`.
    probe: &'static str,
    /// CFS tunables (ms): latency, min_granularity; migration cost (µs).
    latency_ms: u64,
    min_gran_us: u64,
    migration_cost_us: u64,
    /// IRQs bound to CPU 0.
    irq_affinity: bool,
    /// CPU 3 isolated (cpuset / isolcpus) or the load pinned off it (hybrid).
    isolate: Option<&'static str>,
    /// Fair policy (`cfs`, or `eevdf` for the modern kernel's baseline).
    fair: &'static str,
    /// CPU idle states on the platform.
    idle: Idle,
    /// What the real-kernel counterpart is.
    real: Real,
}

/// The CPU idle states of a step's platform.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Idle {
    /// Not modelled (steps 0-8: with its CPUs always busy or cyclictest's PM QoS request
    /// held, a wake-up never finds a CPU in an idle state).
    NotModelled,
    /// [`IDLE_STATES`], none held off (cyclictest --laptop).
    Allowed,
    /// [`IDLE_STATES`] held off by a PM QoS request of 0 (cyclictest's default).
    HeldOff,
}

/// A server x86's cpuidle table (intel_idle, Skylake-SP): exit latency and target
/// residency of C1, C1E and C6.
const IDLE_STATES: &str = "  idle_states:
    - { name: C1, exit_latency: 2us, target_residency: 2us }
    - { name: C1E, exit_latency: 10us, target_residency: 20us }
    - { name: C6, exit_latency: 133us, target_residency: 600us }
";

/// The real-kernel counterpart of a step on this host.
#[derive(Clone, Copy)]
enum Real {
    /// Probe policy, IRQs off the measured CPU, full shield, PM QoS request held (µs).
    Run(ProbePolicy, bool, bool, Option<u32>),
    /// The knob does not exist or cannot be set here.
    Knob(&'static str),
    /// Nothing to measure.
    None,
}

const PLATFORM: &str = "  cpus: 4
  hz: 250
  wakeup_cost: 5us
  context_switch: 2us
  timers: { wheel: hierarchical, expiry_cost: 1us, groups: [{ count: 200, timeout: 4ms, spread: 2s, periodic: true }] }
  kernel_sections: { every: 4ms, length: 10us, max_length: 800us }
";

fn irqs(bound: bool) -> String {
    let cpus = if bound { ", cpus: [0]" } else { "" };
    format!(
        "  irqs:
    - {{ name: eth0, period: 250us, jitter: 100us, handler: 5us, softirq: 25us{cpus} }}
    - {{ name: nvme, period: 2ms, jitter: 1ms, handler: 4us, softirq: 12us{cpus} }}
    - {{ name: ipi, period: 1ms, jitter: 1ms, handler: 3us, per_cpu: true }}
"
    )
}

/// The workload of a step: the probe on CPU 3, 4 CPU-bound hogs and 8 interactive
/// general-purpose tasks (different run/sleep lengths).
pub(super) fn yaml(s: &Step, seconds: u64) -> String {
    let mut y = format!(
        "name: latency-{}\nplatform:\n{PLATFORM}{}",
        s.title.split(':').next().unwrap_or("step"),
        irqs(s.irq_affinity)
    );
    match s.idle {
        Idle::NotModelled => {}
        Idle::Allowed => y.push_str(IDLE_STATES),
        Idle::HeldOff => {
            y.push_str(IDLE_STATES);
            y.push_str("  pm_qos_latency: 0us\n");
        }
    }
    let pin_load = match s.isolate {
        Some("isolcpus") => {
            y.push_str("  isolated: [3]\n");
            ""
        }
        Some(_) => ", affinity: [0, 1, 2]",
        None => "",
    };
    y += &format!(
        "duration: {seconds}s\nseed: 2\nscheduler: {{ fair: {}, migration_cost: {}us, cfs: {{ latency: {}ms, min_granularity: {}us, wakeup_granularity: 4ms }} }}\ntasks:\n",
        s.fair, s.migration_cost_us, s.latency_ms, s.min_gran_us
    );
    let probe = match s.probe {
        "normal" => "policy: normal".to_string(),
        p => format!("policy: {p}, priority: 99"),
    };
    // cyclictest's start is not on the tick grid: its phase here is 300 us.
    y += &format!(
        "  - {{ name: cyclictest, offset: 1300us, probe: {{ interval: 1ms, {probe} }}, affinity: [3] }}\n"
    );
    y += &format!("  - {{ name: hog, count: 4{pin_load} }}\n");
    for i in 0..8 {
        y += &format!(
            "  - {{ name: svc{i}, run: {}us, sleep: {}us{pin_load} }}\n",
            300 + 137 * i,
            2100 + 411 * (i % 5)
        );
    }
    y
}

pub(super) fn steps() -> Vec<Step> {
    let base = Step {
        title: "",
        paper: Value::Null,
        probe: "normal",
        latency_ms: 24,
        min_gran_us: 3000,
        migration_cost_us: 500,
        irq_affinity: false,
        isolate: None,
        fair: "cfs",
        idle: Idle::NotModelled,
        real: Real::None,
    };
    let fifo = ProbePolicy::Fifo(99);
    vec![
        Step {
            title: "0 baseline: CFS probe (cyclictest without -p), sched_latency 24 ms",
            paper: json!({ "avg_us": 82, "max_us": 1200 }),
            real: Real::Run(ProbePolicy::Other(0), false, false, None),
            ..base
        },
        Step {
            title: "1 sched_latency_ns 24 ms -> 6 ms",
            paper: json!({ "avg_us": 54 }),
            latency_ms: 6,
            real: Real::Knob("latency_ns"),
            ..base
        },
        Step {
            title: "2 + sched_min_granularity_ns 1 ms",
            paper: json!({ "claim": "short tasks get the CPU sooner, throughput suffers" }),
            latency_ms: 6,
            min_gran_us: 1000,
            real: Real::Knob("min_granularity_ns"),
            ..base
        },
        Step {
            title: "3 + sched_migration_cost 500 us -> 200 us",
            paper: json!({ "peaks": "-23% (load-balancing peaks)" }),
            latency_ms: 6,
            min_gran_us: 1000,
            migration_cost_us: 200,
            real: Real::Knob("migration_cost_ns"),
            ..base
        },
        Step {
            title: "4 probe SCHED_FIFO 99",
            paper: json!({ "stable_us": 15 }),
            probe: "fifo",
            latency_ms: 6,
            min_gran_us: 1000,
            migration_cost_us: 200,
            real: Real::Run(fifo, false, false, None),
            ..base
        },
        Step {
            title: "5 probe SCHED_RR 99 instead",
            paper: json!({ "avg_us": 28 }),
            probe: "rr",
            latency_ms: 6,
            min_gran_us: 1000,
            migration_cost_us: 200,
            real: Real::Run(ProbePolicy::Rr(99), false, false, None),
            ..base
        },
        Step {
            title: "6 FIFO 99 + device interrupts bound to CPU 0",
            paper: json!({ "max": "-41%" }),
            probe: "fifo",
            latency_ms: 6,
            min_gran_us: 1000,
            migration_cost_us: 200,
            irq_affinity: true,
            real: Real::Run(fifo, true, false, None),
            ..base
        },
        Step {
            title: "7 hybrid: FIFO probe, CFS load pinned to CPUs 0-2, interrupts on CPU 0",
            paper: json!({ "avg_us": 49, "max_us": 210, "utilisation_pct": 85 }),
            probe: "fifo",
            latency_ms: 6,
            min_gran_us: 1000,
            migration_cost_us: 200,
            irq_affinity: true,
            isolate: Some("affinity"),
            real: Real::Run(fifo, true, true, None),
            ..base
        },
        Step {
            title: "8 FIFO 99 + isolcpus=3 (cpuset isolation) + interrupts on CPU 0",
            paper: json!({ "claim": "RT policies need CPU isolation for best effect" }),
            probe: "fifo",
            latency_ms: 6,
            min_gran_us: 1000,
            migration_cost_us: 200,
            irq_affinity: true,
            isolate: Some("isolcpus"),
            real: Real::None,
            ..base
        },
        Step {
            title: "8' as 8 on a platform with idle states (C1, C1E, C6), none held off (cyclictest --laptop)",
            paper: Value::Null,
            probe: "fifo",
            latency_ms: 6,
            min_gran_us: 1000,
            migration_cost_us: 200,
            irq_affinity: true,
            isolate: Some("isolcpus"),
            idle: Idle::Allowed,
            real: Real::Run(fifo, true, true, None),
            ..base
        },
        Step {
            title: "9 + idle states held off: PM QoS request 0 on /dev/cpu_dma_latency (cyclictest's default)",
            paper: json!({ "claim": "cyclictest holds /dev/cpu_dma_latency at 0 unless --laptop" }),
            probe: "fifo",
            latency_ms: 6,
            min_gran_us: 1000,
            migration_cost_us: 200,
            irq_affinity: true,
            isolate: Some("isolcpus"),
            idle: Idle::HeldOff,
            real: Real::Run(fifo, true, true, Some(0)),
            ..base
        },
        Step {
            title: "0' baseline under EEVDF (Linux >= 6.6, as this host)",
            paper: Value::Null,
            fair: "eevdf",
            real: Real::None,
            ..base
        },
    ]
}

/// Simulated probe figures in µs.
pub fn sim_figures(l: &LatencyStats) -> Value {
    let us = |ns: u64| r2(ns as f64 / 1000.0);
    json!({
        "min_us": us(l.min_ns),
        "avg_us": r2(l.mean_ns / 1000.0),
        "p50_us": us(l.p50_ns),
        "p99_us": us(l.p99_ns),
        "p999_us": us(l.p999_ns),
        "max_us": us(l.max_ns),
    })
}

/// Real probe figures in µs (one thread), with the host's steal time.
pub fn real_figures(r: &LatencyResult) -> Value {
    let t = &r.threads[0];
    let us = |ns: u64| r2(ns as f64 / 1000.0);
    let steal: u64 = r.steal_ns.as_ref().map_or(0, |v| v.iter().sum());
    json!({
        "cpu": t.cpu,
        "samples": t.samples,
        "overruns": t.overruns,
        "min_us": us(t.min_ns),
        "avg_us": r2(t.mean_ns / 1000.0),
        "p99_us": us(t.p99_ns),
        "max_us": us(t.max_ns),
        "steal_ms": r2(steal as f64 / 1e6),
    })
}

/// The probe's latency and the mean CPU utilisation of a simulated workload.
pub fn simulate_probe(yaml: &str, name: &str) -> Result<(LatencyStats, SimResult), Error> {
    let w =
        Workload::parse_str(yaml, Path::new(name), &Overrides::default()).map_err(Error::input)?;
    probe_run(&w, name)
}

/// [`simulate_probe`] of a validated workload (`name` in errors).
pub fn probe_run(w: &Workload, name: &str) -> Result<(LatencyStats, SimResult), Error> {
    let r =
        simulate(w, &SimOptions::default()).map_err(|e| Error::input(format!("{name}: {e}")))?;
    let l = r
        .tasks
        .iter()
        .zip(&w.tasks)
        .find(|(_, t)| t.probe.is_some())
        .and_then(|(tr, _)| tr.latency.clone())
        .ok_or_else(|| Error::input(format!("{name}: the probe never ran")))?;
    Ok((l, r))
}

/// Whether real runs are possible here, and why not.
pub fn real_possible() -> Result<(), String> {
    if !latency::can_run_rt() {
        return Err("needs CAP_SYS_NICE (root)".into());
    }
    if latency::online_cpus().len() < 2 {
        return Err("needs 2 CPUs".into());
    }
    Ok(())
}

/// One real run of 2 s: a probe on the last online CPU, stress-ng (or busy threads) on
/// every CPU, with IRQs moved off the probe's CPU and/or a full shield; `dma_latency`: the
/// PM QoS request held (None: idle states allowed, as these steps were first measured).
pub fn measure(
    policy: ProbePolicy,
    irqs_off: bool,
    shield: bool,
    dma_latency: Option<u32>,
) -> Result<LatencyResult, String> {
    let cpu = *latency::online_cpus().last().unwrap_or(&0);
    let cfg = LatencyConfig {
        duration: Duration::from_secs(2),
        interval: Duration::from_millis(1),
        policy,
        cpus: vec![cpu],
        load: latency::online_cpus().len(),
        shield: (irqs_off || shield).then_some(cpu),
        shield_irqs_only: !shield,
        histogram: None,
        dma_latency,
        dma_latency_required: dma_latency.is_some(),
    };
    latency::run(&cfg).map_err(|e| e.to_string())
}

/// Why a scheduler knob cannot be measured on this host.
fn knob_reason(knob: &str) -> String {
    let debugfs = format!("/sys/kernel/debug/sched/{knob}");
    let procfs = format!("/proc/sys/kernel/sched_{knob}");
    if std::path::Path::new(&procfs).exists() || std::fs::read_to_string(&debugfs).is_ok() {
        return format!("{knob} exists here but the experiment leaves kernel tunables alone");
    }
    match std::fs::read_to_string(&debugfs) {
        Err(e) if std::path::Path::new(&debugfs).exists() => {
            format!("{debugfs}: {e} (debugfs locked down)")
        }
        _ => format!(
            "no {knob} on kernel {} (CFS tunable; EEVDF since 6.6 has base_slice_ns only)",
            schedlab_linux::policy::kernel_release()
        ),
    }
}

/// Run the experiment. `real`: also measure the steps on this host when it allows.
pub fn run(progress: &dyn Progress, real: bool) -> Result<Outcome, Error> {
    let real_ok = if real {
        real_possible()
    } else {
        Err("--no-real".into())
    };
    let mut cases = Vec::new();
    let mut hist_series = Vec::new();
    let (mut avg_pts, mut max_pts, mut pavg, mut pmax) = (vec![], vec![], vec![], vec![]);
    for (k, s) in steps().into_iter().enumerate() {
        progress.step(&format!("latency: {}", s.title));
        let (l, r) = match simulate_probe(&yaml(&s, 5), "seed-002.yaml") {
            Ok(x) => x,
            Err(e) if s.fair == "eevdf" => {
                cases.push(Case {
                    case: s.title.into(),
                    paper: s.paper,
                    simulated: Value::Null,
                    real: Value::Null,
                    expected: Value::Null,
                    note: format!("not simulated: {}", e.message),
                });
                continue;
            }
            Err(e) => return Err(e),
        };
        let mut sim = sim_figures(&l);
        let util = r.per_cpu.iter().map(|c| c.utilisation).sum::<f64>() / r.cpus as f64;
        sim["utilisation_pct"] = json!(r2(util * 100.0));
        if s.fair == "cfs" {
            avg_pts.push((k as f64, l.mean_ns / 1000.0));
            max_pts.push((k as f64, l.max_ns as f64 / 1000.0));
            if let Some(a) = s.paper.get("avg_us").and_then(Value::as_f64) {
                pavg.push((k as f64, a));
            }
            if let Some(m) = s.paper.get("max_us").and_then(Value::as_f64) {
                pmax.push((k as f64, m));
            }
        }
        if matches!(k, 0 | 4 | 8) {
            hist_series.push(log_hist(s.title, &l));
        }
        let (real_v, real_note) = match (&real_ok, s.real) {
            (Err(why), Real::Run(..)) => (Value::Null, format!("real: not measured ({why})")),
            (Ok(()), Real::Run(p, irqs, shield, dma)) => {
                progress.step(&format!(
                    "latency: {} (measuring 2 s on this host)",
                    s.title
                ));
                match measure(p, irqs, shield, dma) {
                    Ok(res) => (real_figures(&res), String::new()),
                    Err(e) => (Value::Null, format!("real: failed ({e})")),
                }
            }
            (_, Real::Knob(knob)) => (Value::Null, format!("real: {}", knob_reason(knob))),
            (_, Real::None) => (Value::Null, String::new()),
        };
        let note = [note_for(k), real_note]
            .into_iter()
            .filter(|n| !n.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        cases.push(Case {
            case: s.title.into(),
            paper: s.paper,
            simulated: sim,
            real: real_v,
            expected: Value::Null,
            note,
        });
    }
    let mut plots = Vec::new();
    let chart = Chart {
        title: "Seed 002: probe latency by tuning step (simulated 4-core x86)".into(),
        x_label: "tuning step".into(),
        y_label: "latency (us)".into(),
        series: vec![
            Series {
                label: "simulated max".into(),
                points: max_pts,
            },
            Series {
                label: "simulated avg".into(),
                points: avg_pts,
            },
            Series {
                label: "article max".into(),
                points: pmax,
            },
            Series {
                label: "article avg".into(),
                points: pavg,
            },
        ],
    };
    plots.push(Figure::new("latency-steps.svg", chart));
    let chart = Chart {
        title: "Seed 002: simulated probe histograms".into(),
        x_label: "latency (us)".into(),
        y_label: "log10(1 + samples)".into(),
        series: hist_series,
    };
    plots.push(Figure::new("latency-histograms.svg", chart));
    Ok(Outcome::new(cases, plots))
}

/// A histogram as a line of log10(1 + samples) per microsecond bucket.
pub fn log_hist(label: &str, l: &LatencyStats) -> Series {
    let pts = l
        .histogram_us
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .map(|b| (b[0] as f64, (1.0 + b[1] as f64).log10()))
        .collect();
    Series {
        label: label.split(':').next().unwrap_or(label).trim().to_string(),
        points: pts,
    }
}

fn note_for(step: usize) -> String {
    match step {
        0 => "the tail is the fair load's non-preemptible kernel sections (up to 800 us) and interrupt work; the CFS probe also waits behind woken interactive tasks",
        1 => "a shorter sched_latency halves every sleeper's credit (latency/2 = 3 ms < wakeup_granularity 4 ms): the probe no longer preempts at once, so the model's average rises where the article's fell",
        2 => "min_granularity shapes slices of tasks that compete as equals; a sleeper's wake-up preemption does not depend on it",
        3 => "migration_cost only decides which queued fair tasks load balancing may move; the probe is pinned",
        4 => "a SCHED_FIFO 99 probe preempts any fair task at once; what remains is interrupts and non-preemptible kernel sections on its CPU",
        5 => "alone at its priority, a SCHED_RR probe behaves exactly as SCHED_FIFO (its slice never matters)",
        6 => "interrupts leave CPU 3; the fair load's kernel sections still run there",
        7 => "with the fair load off CPU 3 only the wake-up cost and per-CPU interrupts (IPIs) remain there",
        8 => "isolcpus gives what the hybrid's affinity gives for a pinned probe",
        9 => "alone on its CPU the probe finds it idle at every wake-up, for nearly the whole 1 ms: long enough for C6, whose 133 us exit comes before the probe runs; the real run is step 7's without the PM QoS request",
        10 => "with the request no idle state is entered, and the exit cost is gone: the largest single knob once the CPU is isolated; the real run is step 7's holding the request",
        _ => "the modern kernel's fair class: lag-based placement without CFS's sleeper credit",
    }
    .to_string()
}
