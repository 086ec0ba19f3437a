//! Interactivity of the fair class, simulated and on this kernel: an interactive task
//! (run 2 ms, sleep 8 ms: it wants 20 % of a CPU) among 1, 3 and 7 CPU hogs on one CPU,
//! under the simulator's EEVDF and CFS with this host's tunables (read where the kernel
//! shows them, else its documented defaults: crates/linux/src/host.rs), and for real
//! under the host's own fair class. Compared: the interactive task's CPU share, its
//! wake-up latency (p50, p99) and the hogs' mean slice (CPU time per switch-out)
//! (docs/reproduction.md, "interactive").

use super::{r2, Case, Outcome};
use crate::figure::{Chart, Figure, Series};
use crate::Error;
use crate::Progress;
use schedlab_linux::host::HostSched;
use schedlab_linux::runner::{self, RunConfig};
use schedlab_model::{format_ns, Overrides, Policy, Workload};
use schedlab_sim::{simulate, SimOptions, SimResult};
use serde_json::{json, Value};
use std::path::Path;

/// Numbers of hogs beside the interactive task.
pub const HOGS: [usize; 3] = [1, 3, 7];
/// Length of each run (simulated and real).
pub const DURATION_S: u64 = 3;

/// The workload: `hogs` CPU-bound nice-0 tasks and `ui` (run 2 ms / sleep 8 ms) on one
/// CPU, with the host's HZ and fair tunables; `hrtick`: EEVDF requests end exactly when
/// used up (the HRTICK feature) instead of at the next tick.
pub fn workload(hogs: usize, host: &HostSched, hrtick: bool) -> String {
    format!(
        "name: interactive-{hogs}
platform: {{ cpus: 1, hz: {hz} }}
duration: {DURATION_S}s
scheduler:
  eevdf: {{ base_slice: {slice}, hrtick: {hrtick} }}
  cfs: {{ latency: {lat}, min_granularity: {gran}, wakeup_granularity: {wake} }}
  migration_cost: {mig}
tasks:
  - {{ name: hog, count: {hogs} }}
  - {{ name: ui, run: 2ms, sleep: 8ms }}
",
        hz = host.hz.unwrap_or(1000),
        slice = host.base_slice.ns,
        lat = host.latency.ns,
        gran = host.base_slice.ns,
        wake = host.wakeup_granularity.ns,
        mig = host.migration_cost.ns,
    )
}

/// The compared figures of one result: the interactive task's share, wake-ups and latency
/// (ms), the hogs' mean slice (ms) and the CPU time all tasks got (share of the CPU).
pub fn figures(r: &SimResult) -> Value {
    let ui = r.tasks.iter().find(|t| t.name == "ui");
    let hogs: Vec<_> = r.tasks.iter().filter(|t| t.name != "ui").collect();
    let (cpu, outs) = hogs.iter().fold((0u64, 0u64), |(c, p), t| {
        (c + t.cpu_time_ns, p + t.preemptions)
    });
    let total: u64 = r.tasks.iter().map(|t| t.cpu_time_ns).sum();
    let lat = ui.and_then(|t| t.latency.as_ref());
    json!({
        "ui_share": ui.and_then(|t| t.fair.as_ref()).map(|f| r2(100.0 * f.share)),
        "wakeups": ui.map(|t| t.jobs),
        "p50_ms": lat.map(|l| ms3(l.p50_ns)),
        "p99_ms": lat.map(|l| ms3(l.p99_ns)),
        "hog_slice_ms": (outs > 0).then(|| ms3(cpu / outs)),
        "cpu_used": r2(100.0 * total as f64 / r.duration_ns.max(1) as f64),
    })
}

fn ms3(ns: u64) -> f64 {
    (ns as f64 / 1e3).round() / 1e3
}

fn load(yaml: &str, name: &str, fair: Policy) -> Result<Workload, Error> {
    let ov = Overrides {
        policy: Some(fair),
        ..Overrides::default()
    };
    Workload::parse_str(yaml, Path::new(name), &ov).map_err(Error::input)
}

/// Run the experiment; `real`: also run each mix on this kernel (needs root).
pub fn run(progress: &dyn Progress, real: bool) -> Result<Outcome, Error> {
    let host = HostSched::read();
    let real_ok = if real {
        super::latency::real_possible()
    } else {
        Err("--no-real".into())
    };
    let mut cases = Vec::new();
    let mut lat = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    let mut share = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for (i, &hogs) in HOGS.iter().enumerate() {
        let yaml = workload(hogs, &host, true);
        let name = format!("<interactive-{hogs}>");
        progress.step(&format!(
            "[interactive {}/{}] simulating {hogs} hog(s)...",
            i + 1,
            HOGS.len()
        ));
        let mut sim = serde_json::Map::new();
        let variants = [
            ("eevdf-hrtick", Policy::Eevdf, true),
            ("eevdf", Policy::Eevdf, false),
            ("cfs", Policy::Cfs, false),
        ];
        for (k, (label, p, hrtick)) in variants.into_iter().enumerate() {
            let w = load(&workload(hogs, &host, hrtick), &name, p)?;
            let r = simulate(&w, &SimOptions::default())
                .map_err(|e| Error::input(format!("{name}: {e}")))?;
            let f = figures(&r);
            push_point(&mut lat[k], &mut share[k], hogs, &f);
            sim.insert(label.into(), f);
        }
        let measured = match &real_ok {
            Ok(()) => {
                progress.step(&format!(
                    "[interactive {}/{}] running {hogs} hog(s) on this kernel ({DURATION_S} s)...",
                    i + 1,
                    HOGS.len()
                ));
                let w = load(&yaml, &name, host.fair_policy())?;
                let cfg = RunConfig {
                    fair_group: true,
                    ..RunConfig::default()
                };
                let r = runner::run(&w, &cfg).map_err(|e| Error::input(format!("{name}: {e}")))?;
                if let Some(why) = &r.stopped_by {
                    return Err(Error::stopped(
                        why,
                        format!("the real run was stopped by {why}"),
                    ));
                }
                let f = figures(&r.result);
                push_point(&mut lat[3], &mut share[3], hogs, &f);
                json!({ host.fair_policy().name(): f, "kernel": host.release })
            }
            Err(_) => Value::Null,
        };
        let note = note(&sim, &measured, host.fair_policy().name());
        cases.push(Case {
            case: format!("ui (run 2ms, sleep 8ms) among {hogs} hog(s) on 1 CPU"),
            paper: Value::Null,
            simulated: Value::Object(sim),
            real: measured,
            expected: json!({
                "ui_demand": 20.0,
                "ui_fair_share": r2(100.0 / (hogs as f64 + 1.0)),
            }),
            note,
        });
    }
    if let Err(why) = &real_ok {
        if let Some(c) = cases.first_mut() {
            c.note = format!("{} (not run on this kernel: {why})", c.note);
        }
    }
    let mut plots = Vec::new();
    let labels = [
        "simulated eevdf, hrtick".to_string(),
        "simulated eevdf, tick".to_string(),
        "simulated cfs".to_string(),
        format!("kernel {} ({})", host.fair_policy().name(), host.release),
    ];
    let chart = |title: &str, y: &str, data: &[Vec<(f64, f64)>; 4]| Chart {
        title: title.into(),
        x_label: "CPU hogs beside the interactive task".into(),
        y_label: y.into(),
        series: labels
            .iter()
            .zip(data)
            .filter(|(_, d)| !d.is_empty())
            .map(|(l, d)| Series {
                label: l.clone(),
                points: d.clone(),
            })
            .collect(),
    };
    plots.push(Figure::new(
        "interactive-latency.svg",
        chart(
            &format!(
                "Wake-up latency p50 of run 2ms / sleep 8ms (base slice {}, HZ {})",
                format_ns(host.base_slice.ns),
                host.hz.unwrap_or(1000)
            ),
            "p50 wake-up latency (ms)",
            &lat,
        ),
    ));
    plots.push(Figure::new(
        "interactive-share.svg",
        chart(
            "CPU share of the interactive task (it wants 20%)",
            "share of the CPU (%)",
            &share,
        ),
    ));
    Ok(Outcome::new(cases, plots))
}

fn push_point(lat: &mut Vec<(f64, f64)>, share: &mut Vec<(f64, f64)>, hogs: usize, f: &Value) {
    if let Some(p) = f["p50_ms"].as_f64() {
        lat.push((hogs as f64, p));
    }
    if let Some(s) = f["ui_share"].as_f64() {
        share.push((hogs as f64, s));
    }
}

fn note(sim: &serde_json::Map<String, Value>, real: &Value, kernel: &str) -> String {
    let get = |v: &Value, k: &str| v[k].as_f64();
    let Some(r) = real.get(kernel) else {
        return format!(
            "simulated eevdf (hrtick): share {}%, p50 {} ms; eevdf (tick): share {}%, p50 {} ms; cfs: share {}%, p50 {} ms",
            sim["eevdf-hrtick"]["ui_share"],
            sim["eevdf-hrtick"]["p50_ms"],
            sim["eevdf"]["ui_share"],
            sim["eevdf"]["p50_ms"],
            sim["cfs"]["ui_share"],
            sim["cfs"]["p50_ms"]
        );
    };
    // This kernel ends requests exactly at base_slice (HRTICK; docs/reproduction.md).
    let s = &sim[&format!("{kernel}-hrtick")];
    match (
        get(s, "ui_share"),
        get(r, "ui_share"),
        get(s, "p50_ms"),
        get(r, "p50_ms"),
    ) {
        (Some(ss), Some(rs), Some(sp), Some(rp)) => {
            let dp = if rp > 0.0 {
                100.0 * (sp - rp) / rp
            } else {
                0.0
            };
            format!(
                "{kernel} (hrtick): share {ss:.1}% simulated vs {rs:.1}% on the kernel ({:+.1} points), p50 {sp:.2} vs {rp:.2} ms ({dp:+.0}%); the kernel run had {}% of the CPU",
                ss - rs,
                r["cpu_used"]
            )
        }
        _ => "incomplete figures".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workload_carries_the_hosts_tunables() {
        let host = HostSched::read();
        let w = load(&workload(3, &host, true), "w", Policy::Eevdf).unwrap();
        assert!(w.scheduler.eevdf.hrtick);
        assert_eq!(w.tasks.len(), 4);
        assert_eq!(w.scheduler.eevdf.base_slice, host.base_slice.ns);
        assert_eq!(w.duration, DURATION_S * 1_000_000_000);
    }
}
