//! Seed 001 (BFS lecture slides, with the 2012 benchmark of BFS "CK-patched" vs CFS
//! "Vanilla"): workloads shaped like its three benchmarks — a parallel kernel build
//! (many short CPU bursts with I/O waits), lrzip compression (a few long CPU-bound
//! threads) and an ffmpeg encode (a pipeline of stages) — run under `bfs`, `cfs` and
//! `eevdf` on a 4-CPU machine (the i7-3770K's four cores), with the seed's measured
//! times per machine beside them.
//!
//! A simulator answers only the scheduling part of those benchmarks: idle time left by
//! placement, wake-up latency, switches and migrations. It has no caches, no lock
//! contention (BFS's single run-queue lock), no I/O beyond sleeps, no SMT, no frequency
//! scaling and no real dependencies between the stages of a pipeline, so its makespans
//! are not the seed's seconds (docs/reproduction.md says what follows and what does not).

use super::{bfs_machines, r2, Case, Outcome};
use crate::figure::{Chart, Figure, Series};
use crate::workloads::{dur, Draft};
use crate::Error;
use crate::Progress;
use schedlab_model::{Overrides, Phase, Policy, Workload};
use schedlab_sim::{simulate, SimError, SimOptions, SimResult};
use serde_json::{json, Map, Value};
use std::fmt::Write;
use std::path::Path;

const MS: f64 = 1e6;
const US: f64 = 1e3;

/// The policies compared, BFS first as in the seed's table: (name, policy, BFS cache
/// locality). `bfs-nolocality` is BFS without its sticky-task bias, which in a model
/// without caches only costs balance (docs/reproduction.md).
pub const POLICIES: [(&str, Policy, bool); 4] = [
    ("bfs", Policy::Bfs, true),
    ("bfs-nolocality", Policy::Bfs, false),
    ("cfs", Policy::Cfs, true),
    ("eevdf", Policy::Eevdf, true),
];

/// The seed's measured times (s): (CPU, Vanilla = CFS, CK-patched = BFS, stated result).
pub(super) type Row = (&'static str, f64, f64, &'static str);

pub(super) const COMPILE: [Row; 7] = [
    ("AMD Athlon XP", 1120.6486, 1095.6486, "2.3% faster"),
    ("Intel E5200", 374.0274, 366.0912, "2.1% faster"),
    ("Intel Atom 330", 1568.5016, 1546.4804, "1.4% faster"),
    ("Intel i7-2620M", 192.5477, 190.6712, "1.4% faster"),
    ("Intel X3360", 127.6179, 127.2340, "0.3% faster"),
    ("Intel i7-3770K", 68.9835, 67.9671, "1.5% faster"),
    ("Dual Intel E5620", 74.1218, 68.2665, "7.9% faster"),
];

pub(super) const COMPRESSION: [Row; 7] = [
    ("AMD Athlon XP", 558.3320, 547.7577, "1.9% faster"),
    ("Intel E5200", 166.3141, 165.7622, "0.3% faster"),
    ("Intel Atom 330", 470.0283, 454.8185, "3.2% faster"),
    ("Intel i7-2620M", 81.2978, 79.4898, "2.2% faster"),
    ("Intel X3360", 68.2635, 67.7987, "0.7% faster"),
    ("Intel i7-3770K", 35.2904, 34.3310, "2.7% faster"),
    ("Dual Intel E5620", 27.7919, 28.2716, "1.7% slower"),
];

pub(super) const VIDEO: [Row; 7] = [
    ("AMD Athlon XP", 380.8340, 386.4206, "1.5% slower"),
    ("Intel E5200", 102.3183, 99.8744, "2.4% faster"),
    ("Intel Atom 330", 471.0781, 443.4450, "5.9% faster"),
    ("Intel i7-2620M", 50.1631, 48.7489, "2.8% faster"),
    ("Intel X3360", 39.3656, 37.6724, "4.4% faster"),
    ("Intel i7-3770K", 19.6863, 18.1044, "8.0% faster"),
    ("Dual Intel E5620", 30.9037, 30.7141, "0.6% faster"),
];

fn paper(rows: &[Row]) -> Value {
    let mut m = Map::new();
    for &(cpu, cfs, bfs, result) in rows {
        m.insert(
            cpu.into(),
            json!({ "cfs_s": cfs, "bfs_s": bfs, "result": result }),
        );
    }
    Value::Object(m)
}

/// How many variants of each workload are run (the seed averaged repeated runs): each
/// shifts start times and work by a few milliseconds, so that one lucky or unlucky
/// alignment of slices, ticks and balancing does not decide a comparison.
pub const VARIANTS: u64 = 5;

/// `make -j8` of a kernel tree on 4 CPUs: 48 compiler runs in six waves of eight (a new
/// wave every 150 ms, as make starts jobs while earlier ones finish), each 60-250 ms of
/// CPU in 4 ms bursts separated by 1 ms of I/O, plus make itself (0.2 ms every 5 ms).
pub fn compile(v: u64) -> String {
    bfs_machines::compile(4, 8, v, CASE_DURATION)
}

/// lrzip on 4 CPUs: five long compression threads (about 1.2 s of CPU each: one more
/// thread than CPUs) and a reader thread feeding them (1 ms of CPU every 5 ms).
pub fn compression(v: u64) -> String {
    bfs_machines::compression(4, 5, v, CASE_DURATION)
}

/// ffmpeg 720p → 360p on 4 CPUs: a demux/decode thread, four encoder slice threads that
/// wait for frames (sleeps stand for the waits) and a muxer.
pub fn video(v: u64) -> String {
    bfs_machines::video(4, 4, v, CASE_DURATION)
}

/// The cases' simulated time: far beyond every makespan (their switch rates are per
/// second of it).
const CASE_DURATION: &str = "30s";

/// The shortest possible makespan on 4 CPUs, ns: the total work spread evenly, or the
/// task that needs longest on its own (its start, its work and the sleeps between its
/// bursts), whichever is longer.
fn ideal_makespan(yaml: &str) -> Result<u64, Error> {
    let w =
        Workload::parse_str(yaml, Path::new("bfs"), &Overrides::default()).map_err(Error::input)?;
    let total: u64 = w.tasks.iter().filter_map(|t| t.work).sum();
    let alone = w
        .tasks
        .iter()
        .map(|t| {
            let work = t.work.unwrap_or(0);
            let (run, sleep) = t.phases.iter().fold((0, 0), |(r, s), p| match p {
                Phase::Run(x) => (r + x, s),
                Phase::Sleep(x) => (r, s + x),
            });
            let sleeps = if run == 0 { 0 } else { work.div_ceil(run) - 1 };
            t.offset + work + sleeps * sleep
        })
        .max()
        .unwrap_or(0);
    Ok((total / w.platform.cpus as u64).max(alone))
}

/// `Ok(None)` when the policy is not simulated yet.
pub(super) fn try_sim(
    yaml: &str,
    policy: Policy,
    locality: bool,
    costs: bool,
) -> Result<Option<SimResult>, Error> {
    let mut d = Draft::parse(yaml, "bfs")?;
    if costs {
        d.platform().context_switch = dur(2_000);
        d.platform().migration = dur(50_000);
    }
    d.bfs().locality = Some(locality);
    let ov = Overrides {
        policy: Some(policy),
        ..Overrides::default()
    };
    let w = d.workload(&ov)?;
    match simulate(&w, &SimOptions::default()) {
        Ok(r) => Ok(Some(r)),
        Err(SimError::Unsupported(_)) => Ok(None),
        Err(e) => Err(Error::input(format!("bfs: {e}"))),
    }
}

/// Wake-up latency over every burst of every task: (samples, mean µs, largest p99 µs).
pub(super) fn latency(r: &SimResult) -> (u64, f64, f64) {
    let (mut n, mut sum, mut p99) = (0u64, 0.0, 0u64);
    for t in &r.tasks {
        if let Some(l) = &t.latency {
            n += l.samples;
            sum += l.mean_ns * l.samples as f64;
            p99 = p99.max(l.p99_ns);
        }
    }
    let mean = if n > 0 { sum / n as f64 } else { 0.0 };
    (n, mean / US, p99 as f64 / US)
}

pub(super) fn makespan_ms(r: &SimResult) -> Option<f64> {
    r.fairness
        .as_ref()
        .and_then(|f| f.makespan_ns)
        .map(|m| r2(m as f64 / MS))
}

/// Mean makespan over the ideal, per policy.
type Ratios = Vec<(&'static str, f64)>;

/// A benchmark: label, workload generator (by variant), the seed's rows.
type Bench = (&'static str, fn(u64) -> String, &'static [Row]);

/// What one policy gave over the variants of a workload.
#[derive(Default)]
struct Acc {
    spans: Vec<f64>,
    unfinished: u64,
    idle_ms: f64,
    samples: u64,
    lat_sum_us: f64,
    p99_us: f64,
    switches: f64,
    migrations: u64,
}

/// Run one workload's variants under the three policies.
fn case(
    label: &str,
    make: fn(u64) -> String,
    rows: &[Row],
    costs: bool,
    progress: &dyn Progress,
) -> Result<(Case, Ratios), Error> {
    let ideal = ideal_makespan(&make(0))? as f64 / MS;
    let mut sim = Map::new();
    let mut means: Vec<(&'static str, f64)> = Vec::new();
    let mut skipped = Vec::new();
    for (name, policy, locality) in POLICIES {
        progress.step(&format!("bfs: {label}, {name}"));
        let mut acc = Acc::default();
        let mut simulated = true;
        for v in 0..VARIANTS {
            let Some(r) = try_sim(&make(v), policy, locality, costs)? else {
                simulated = false;
                break;
            };
            match makespan_ms(&r) {
                Some(s) => {
                    let busy: f64 = r.per_cpu.iter().map(|c| c.utilisation).sum::<f64>()
                        * r.duration_ns as f64
                        / MS;
                    acc.idle_ms += s * r.cpus as f64 - busy;
                    acc.spans.push(s);
                }
                None => acc.unfinished += 1,
            }
            let (n, mean, p99) = latency(&r);
            acc.samples += n;
            acc.lat_sum_us += mean * n as f64;
            acc.p99_us = acc.p99_us.max(p99);
            acc.switches += r.context_switches_per_cpu_per_s / VARIANTS as f64;
            acc.migrations += r.migrations;
        }
        if !simulated {
            skipped.push(name);
            continue;
        }
        let k = acc.spans.len().max(1) as f64;
        let mean = acc.spans.iter().sum::<f64>() / k;
        let lo = acc.spans.iter().copied().fold(f64::MAX, f64::min);
        let hi = acc.spans.iter().copied().fold(0.0, f64::max);
        if acc.unfinished == 0 {
            means.push((name, mean));
        }
        sim.insert(
            name.into(),
            json!({
                "makespan_ms": r2(mean),
                "min_ms": r2(lo),
                "max_ms": r2(hi),
                "over_ideal_pct": r2((mean / ideal - 1.0) * 100.0),
                "unfinished_runs": acc.unfinished,
                "idle_before_end_ms": r2(acc.idle_ms / k),
                "wakeup_mean_us": r2(acc.lat_sum_us / acc.samples.max(1) as f64),
                "wakeup_p99_us": r2(acc.p99_us),
                "switches_per_cpu_s": r2(acc.switches),
                "migrations_per_run": r2(acc.migrations as f64 / VARIANTS as f64),
            }),
        );
    }
    let get = |p: &str| means.iter().find(|s| s.0 == p).map(|s| s.1);
    let mut diff = Map::new();
    if let Some(cfs) = get("cfs") {
        for other in ["bfs", "bfs-nolocality", "eevdf"] {
            if let Some(x) = get(other) {
                // Positive: faster than CFS, as the seed states "x% faster".
                diff.insert(
                    format!("{other}_faster_than_cfs_pct"),
                    json!(r2((cfs - x) / cfs * 100.0)),
                );
            }
        }
    }
    let mut note = match (get("bfs"), get("cfs")) {
        (Some(b), Some(c)) => {
            sim.insert("difference".into(), Value::Object(diff));
            format!(
                "mean of {VARIANTS} variants: BFS {} CFS by {}% (seed, i7-3770K: {}); ideal {} ms; scheduling alone: no caches, no run-queue lock, no real I/O",
                if b < c { "faster than" } else if b > c { "slower than" } else { "equal to" },
                r2(((c - b) / c * 100.0).abs()),
                rows[5].3,
                r2(ideal)
            )
        }
        _ => {
            if !diff.is_empty() {
                sim.insert("difference".into(), Value::Object(diff));
            }
            String::new()
        }
    };
    if sim
        .values()
        .any(|v| v["unfinished_runs"].as_u64().unwrap_or(0) > 0)
    {
        note.push_str("; a policy did not finish the work within 30 s");
    }
    if !skipped.is_empty() {
        if !note.is_empty() {
            note.push_str("; ");
        }
        let _ = write!(
            note,
            "{} not simulated yet: skipped (re-run when the policy lands)",
            skipped.join(", ")
        );
    }
    let ratios = means.iter().map(|&(p, m)| (p, m / ideal)).collect();
    Ok((
        Case {
            case: label.into(),
            paper: paper(rows),
            simulated: Value::Object(sim),
            real: Value::Null,
            expected: json!({ "ideal_makespan_ms": r2(ideal) }),
            note,
        },
        ratios,
    ))
}

/// Run the three benchmarks, without and with switch/migration costs; one plot of
/// makespan over the ideal per workload and policy.
pub fn run(progress: &dyn Progress) -> Result<Outcome, Error> {
    let mut cases = Vec::new();
    let mut plots = Vec::new();
    let mut series: Vec<Series> = POLICIES
        .iter()
        .map(|p| Series {
            label: p.0.into(),
            points: vec![],
        })
        .collect();
    let benches: [Bench; 3] = [
        ("compile (make -j8 of a kernel tree)", compile, &COMPILE),
        ("compression (lrzip, 5 threads)", compression, &COMPRESSION),
        ("video encode (ffmpeg pipeline)", video, &VIDEO),
    ];
    for costs in [false, true] {
        let suffix = if costs {
            ", with 2 µs switches and 50 µs migrations"
        } else {
            ""
        };
        for (i, (label, make, rows)) in benches.iter().enumerate() {
            let (c, ratios) = case(
                &format!("{label}, 4 CPUs{suffix}"),
                *make,
                rows,
                costs,
                progress,
            )?;
            cases.push(c);
            if !costs {
                for (p, ratio) in ratios {
                    if let Some(s) = series.iter_mut().find(|s| s.label == p) {
                        s.points.push(((i + 1) as f64, ratio));
                    }
                }
            }
        }
    }
    series.retain(|s| !s.points.is_empty());
    let chart = Chart {
        title: "Seed 001: makespan over the ideal (4 CPUs, mean of 5 variants)".into(),
        x_label: "workload (1 = compile, 2 = compression, 3 = video)".into(),
        y_label: "mean makespan / ideal makespan".into(),
        series,
    };
    plots.push(Figure::new("bfs-makespan.svg", chart));
    Ok(Outcome::new(cases, plots))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_are_valid_and_finite() {
        for y in [compile(3), compression(3), video(3)] {
            let w = Workload::parse_str(&y, Path::new("w"), &Overrides::default()).unwrap();
            assert!(w.tasks.iter().all(|t| t.work.is_some()));
        }
        // The seed's percentages are its own: (cfs − bfs) / cfs.
        let (_, c, b, _) = COMPILE[5];
        assert!(((c - b) / c * 100.0 - 1.47).abs() < 0.01);
    }
}
