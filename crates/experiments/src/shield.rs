//! Seed 003 (CPU shield and per-core timer control): interrupt latency on the RT core of
//! a simulated 4-core embedded board with the pre-4.8 cascading timer wheel, without a
//! shield, with the shield only (timers still on the RT core: one cascade of many timers
//! with interrupts off), and with the shield plus the timers moved to the other cores;
//! the same on the v4.8+ wheel; and, where the host allows, the shield measured for real
//! (docs/reproduction.md).

use super::latency::{log_hist, measure, real_figures, real_possible, sim_figures, simulate_probe};
use super::{Case, Outcome};
use crate::figure::{Chart, Figure};
use crate::Error;
use crate::Progress;
use schedlab_linux::latency::ProbePolicy;
use serde_json::{json, Value};

/// The board: 4 cores at HZ 1000 with the RT patch; the RT task (the probe) on core 3;
/// general work (file and network processing that disables interrupts for up to 600 us)
/// on the others; 2200 one-shot timers per core armed with 1.3-1.5 s timeouts (all in one
/// tv2 bucket, cascaded into tv1 together at jiffy 1280) and 100 periodic timers per
/// core. Timer callbacks cost nothing on the RT core (`expiry_cost` 0): with the RT patch
/// they run in a softirq thread below the RT task; the cascade itself runs with
/// interrupts off, as the seed reports.
pub fn board(shield: bool, migrate: bool, wheel: &str) -> String {
    let isolated = if shield { "  isolated: [3]\n" } else { "" };
    format!(
        "name: seed-003
platform:
  cpus: 4
  hz: 1000
  wakeup_cost: 25us
{isolated}  irqs:
    - {{ name: eth0, period: 500us, jitter: 300us, handler: 10us, softirq: 40us }}
    - {{ name: mmc, period: 3ms, jitter: 2ms, handler: 8us, softirq: 30us }}
    - {{ name: ipi, period: 3ms, jitter: 2ms, handler: 12us, per_cpu: true }}
  timers:
    wheel: {wheel}
    migrate: {migrate}
    cascade_cost: 2us
    cascade_per_timer: 500ns
    groups:
      - {{ name: connections, count: 2200, timeout: 1300ms, spread: 200ms }}
      - {{ name: housekeeping, count: 100, timeout: 10ms, spread: 1s, periodic: true }}
  kernel_sections: {{ every: 2ms, length: 20us, max_length: 600us }}
duration: 2s
seed: 3
tasks:
  - {{ name: rt, probe: {{ interval: 1ms }}, affinity: [3] }}
  - {{ name: general, count: 6 }}
"
    )
}

/// Run the experiment. `real`: also measure on this host when it allows.
pub fn run(progress: &dyn Progress, real: bool) -> Result<Outcome, Error> {
    let real_ok = if real {
        real_possible()
    } else {
        Err("--no-real".into())
    };
    struct Sc {
        title: &'static str,
        paper: Value,
        shield: bool,
        migrate: bool,
        wheel: &'static str,
        real: Option<bool>,
        note: &'static str,
    }
    let scenarios = [
        Sc {
            title: "no shield: RT task on core 3 among general work",
            paper: json!({ "claim": "interrupts-off sections of general work lengthen RT latency" }),
            shield: false,
            migrate: false,
            wheel: "cascading",
            real: Some(false),
            note: "general work's interrupts-off sections and device interrupts reach core 3",
        },
        Sc {
            title: "A: CPU shield, timers still on core 3 (Fig. 2)",
            paper: json!({ "most_le_us": 100, "max_us_over": 1100 }),
            shield: true,
            migrate: false,
            wheel: "cascading",
            real: Some(true),
            note: "one cascade moves core 3's 2200 long timers from tv2 into tv1 with interrupts off (2 + 0.5 x 2200 us); the probe released then waits for it",
        },
        Sc {
            title: "B: CPU shield + timers moved to cores 0-2 (Fig. 5)",
            paper: json!({ "max_us_le": 60 }),
            shield: true,
            migrate: true,
            wheel: "cascading",
            real: None,
            note: "core 3 has no timer left: only the wake-up cost (25 us) and the per-CPU IPI (12 us) remain, so max <= 37 us",
        },
        Sc {
            title: "A on the v4.8+ wheel (no cascades)",
            paper: Value::Null,
            shield: true,
            migrate: false,
            wheel: "hierarchical",
            real: None,
            note: "timers never move on the v4.8+ wheel: the spike is gone without the technique; expiries still run on core 3",
        },
    ];
    let mut cases = Vec::new();
    let mut series = Vec::new();
    for sc in scenarios {
        progress.step(&format!("shield: {}", sc.title));
        let (l, r) = simulate_probe(&board(sc.shield, sc.migrate, sc.wheel), "seed-003.yaml")?;
        let mut sim = sim_figures(&l);
        let k3 = &r.kernel.as_ref().expect("kernel work").per_cpu[3];
        sim["cascades_core3"] = json!(k3.cascades);
        sim["largest_cascade_timers"] = json!(k3.largest_cascade_timers);
        sim["largest_cascade_us"] = json!(k3.largest_cascade_ns as f64 / 1000.0);
        sim["share_le_100us"] = json!(share_le(&l, 100));
        if sc.wheel == "cascading" && sc.shield {
            series.push(log_hist(sc.title, &l));
        }
        let (real_v, real_note) = match (&real_ok, sc.real) {
            (Ok(()), Some(shield)) => {
                progress.step(&format!(
                    "shield: {} (measuring 2 s on this host)",
                    sc.title
                ));
                match measure(ProbePolicy::Fifo(99), false, shield, None) {
                    Ok(res) => {
                        let mut v = real_figures(&res);
                        if let Some(s) = &res.shield {
                            v["irqs_moved"] = json!(s.irqs_moved.len());
                            v["irqs_refused"] = json!(s.irqs_refused.len());
                            v["threads_moved"] = json!(s.tasks_moved);
                        }
                        let note = if shield {
                            format!(
                                "real: kernel {} has the v4.8+ wheel, so the shield alone is scenario B here",
                                schedlab_linux::policy::kernel_release()
                            )
                        } else {
                            "real: stress-ng on every CPU, the probe on the last one".into()
                        };
                        (v, note)
                    }
                    Err(e) => (Value::Null, format!("real: failed ({e})")),
                }
            }
            (Err(why), Some(_)) => (Value::Null, format!("real: not measured ({why})")),
            (_, None) => (Value::Null, String::new()),
        };
        let note = [sc.note.to_string(), real_note]
            .into_iter()
            .filter(|n| !n.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        cases.push(Case {
            case: sc.title.into(),
            paper: sc.paper,
            simulated: sim,
            real: real_v,
            expected: Value::Null,
            note,
        });
    }
    let mut plots = Vec::new();
    let chart = Chart {
        title: "Seed 003: interrupt latency on the RT core (simulated)".into(),
        x_label: "latency (us)".into(),
        y_label: "log10(1 + samples)".into(),
        series,
    };
    plots.push(Figure::new("shield-histograms.svg", chart));
    Ok(Outcome::new(cases, plots))
}

/// Share of samples at most `us` microseconds.
fn share_le(l: &schedlab_sim::result::LatencyStats, us: u64) -> f64 {
    let h = l.histogram_us.as_deref().unwrap_or(&[]);
    let le: u64 = h.iter().filter(|b| b[0] <= us).map(|b| b[1]).sum();
    (le as f64 / l.samples.max(1) as f64 * 1e4).round() / 1e4
}
