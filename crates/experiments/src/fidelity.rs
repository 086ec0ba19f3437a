//! `schedlab reproduce fidelity`: how well the calibrated simulator predicts this kernel.
//! A few workloads run simulated (with this machine's measured costs: context switch,
//! migration and the runner's per-job costs, `platform.job_costs`) and for real (as
//! root), same file, same seed, same releases; the table gives each metric on both sides
//! and the prediction error. With `--no-real` the real side is the last recorded one
//! (crates/experiments/src/fidelity-real.json, written by `--record FILE`), and so is
//! the calibration the simulator uses, so the table is reproducible anywhere.
//! docs/fidelity.md explains each remaining error.

use super::{r2, Case, Outcome};
use crate::workloads::{dur, Draft};
use crate::Error;
use crate::Progress;
use schedlab_linux::calibrate::{self, Calibration};
use schedlab_linux::host::HostSched;
use schedlab_linux::measure::RunResult;
use schedlab_linux::runner::{self, RunConfig};
use schedlab_model::job_costs::JobCosts;
use schedlab_model::{Overrides, Policy, Workload};
use schedlab_sim::result::SimEvent;
use schedlab_sim::{simulate, SimOptions, SimResult};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// The real figures recorded last (`--record`), used by `--no-real`.
const RECORDED: &str = include_str!("fidelity-real.json");

/// The 2-CPU Table-1 analogue (examples/table1-2cpu.yaml).
const TABLE1: &str = include_str!("../../../examples/table1-2cpu.yaml");

/// Overloaded: U = 2/5 + 5/7 = 1.11 on one CPU. Under RM the fast task meets every
/// deadline and the slow one falls further behind at every hyperperiod.
const OVERLOAD: &str = "name: overload-1cpu
platform: { cpus: 1, hz: 250 }
duration: 3s
tasks:
  - { name: fast, runtime: 2ms, period: 5ms }
  - { name: slow, runtime: 5ms, period: 7ms }
";

/// Fair tasks beside a real-time one on one CPU: a SCHED_FIFO periodic task (RM), two
/// interactive fair tasks (run 2 ms, sleep 8 ms) and a CPU hog, under EEVDF (the
/// kernel's fair class since 6.6); [`draft_of`] sets this host's base slice.
const FAIR_MIX: &str = "name: fair-mix
platform: { cpus: 1, hz: 250 }
duration: 3s
scheduler: { fair: eevdf }
tasks:
  - { name: rt, runtime: 2ms, period: 10ms }
  - { name: ui, count: 2, run: 2ms, sleep: 8ms }
  - { name: hog }
";

/// One compared run: a workload under a policy (and SCHED_DEADLINE margin).
struct Setup {
    /// Key in the recorded file and row label.
    key: &'static str,
    policy: Policy,
    margin: Option<f64>,
    fair_group: bool,
}

const SETUPS: &[Setup] = &[
    Setup {
        key: "table1-2cpu edf margin 0",
        policy: Policy::Edf,
        margin: Some(0.0),
        fair_group: false,
    },
    Setup {
        key: "table1-2cpu edf margin 0.05",
        policy: Policy::Edf,
        margin: Some(0.05),
        fair_group: false,
    },
    Setup {
        key: "table1-2cpu rm",
        policy: Policy::Rm,
        margin: None,
        fair_group: false,
    },
    Setup {
        key: "overload-1cpu rm",
        policy: Policy::Rm,
        margin: None,
        fair_group: false,
    },
    Setup {
        key: "fair-mix rm+eevdf",
        policy: Policy::Rm,
        margin: None,
        fair_group: true,
    },
];

/// The figures compared on both sides.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Metrics {
    /// Jobs released (periodic jobs and fair tasks' bursts).
    pub jobs: u64,
    /// Deadline misses.
    pub misses: u64,
    /// Switches away from the workload's threads per CPU per second (the simulator's
    /// switch events whose outgoing task is a workload task; the kernel's voluntary +
    /// involuntary switches of the worker threads).
    pub switches_per_cpu_s: f64,
    /// Context switches per CPU per second counted on the workload's timeline, idle
    /// included (the simulator's `context_switches_per_cpu_per_s`; the real side's from
    /// the run's kernel trace, so other processes' switches are left out). None in a
    /// record made without a trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traced_switches_per_cpu_s: Option<f64>,
    /// Median response time (completion − release) over completed jobs, ms: all jobs,
    /// then per task group (the name without its `count:` number: big1, big2 → big).
    pub median_response_ms: BTreeMap<String, f64>,
}

/// The recorded real side: the calibration the simulator used and each setup's figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// Kernel release.
    pub kernel: String,
    /// Context switch, migration and per-job costs measured by `schedlab calibrate`.
    pub calibration: Costs,
    /// Host fair base slice (ns), used by the fair-mix workload.
    pub base_slice_ns: u64,
    /// Per setup key.
    pub cases: BTreeMap<String, Metrics>,
}

/// The calibrated costs the simulator is given.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Costs {
    /// One context switch (ns).
    pub context_switch_ns: u64,
    /// Extra cost of resuming on another CPU (ns).
    pub migration_ns: u64,
    /// CPU time per job beyond its work (ns).
    pub job_overhead_ns: u64,
    /// Least delay from a release to its thread running (5th percentile, ns).
    pub wakeup_latency_ns: u64,
    /// Spread of that delay (95th − 5th percentile, ns).
    pub wakeup_jitter_ns: u64,
    /// Extra delay when the CPU was idle (ns).
    #[serde(default)]
    pub wakeup_from_idle_ns: u64,
}

impl Costs {
    fn of(c: &Calibration) -> Costs {
        Costs {
            context_switch_ns: c.context_switch_ns,
            migration_ns: c.migration_ns.unwrap_or(0),
            job_overhead_ns: c.job_overhead_ns,
            wakeup_latency_ns: c.job_wake_p5_ns,
            wakeup_jitter_ns: c.job_wake_p95_ns.saturating_sub(c.job_wake_p5_ns),
            wakeup_from_idle_ns: c.job_wake_from_idle_ns,
        }
    }
}

/// The workload of setup `key` (named `name` in errors): its file, and for the fair mix
/// this host's base slice.
fn draft_of(key: &str, name: &str, base_slice_ns: u64) -> Result<Draft, Error> {
    if key.starts_with("table1-2cpu") {
        Draft::parse(TABLE1, name)
    } else if key.starts_with("overload") {
        Draft::parse(OVERLOAD, name)
    } else {
        let mut d = Draft::parse(FAIR_MIX, name)?;
        d.eevdf().base_slice = dur(base_slice_ns);
        Ok(d)
    }
}

/// The workload of `s`, with `costs` as its platform's costs (None: the file's own).
fn load(s: &Setup, base_slice_ns: u64, costs: Option<Costs>) -> Result<Workload, Error> {
    let ov = Overrides {
        policy: Some(s.policy),
        ..Overrides::default()
    };
    let name = format!("<fidelity {}>", s.key);
    let mut w = draft_of(s.key, &name, base_slice_ns)?.workload(&ov)?;
    if let Some(m) = s.margin {
        w.scheduler.dl_margin = m;
    }
    if let Some(c) = costs {
        w.platform.context_switch = c.context_switch_ns;
        w.platform.migration = c.migration_ns;
        w.platform.job_costs = JobCosts {
            per_job: c.job_overhead_ns,
            reads_cpu_clock: true,
            wakeup_latency: c.wakeup_latency_ns,
            wakeup_jitter: c.wakeup_jitter_ns,
            wakeup_from_idle: c.wakeup_from_idle_ns,
        };
    }
    Ok(w)
}

/// The lower median in ms, rounded to 1 µs (0 when empty), as the trace reports it.
fn median(v: Vec<u64>) -> f64 {
    schedlab_linux::traced::median(v).map_or(0.0, |ns| (ns as f64 / 1e3).round() / 1e3)
}

/// The simulated side's figures (the result must carry its event log).
pub fn sim_metrics(r: &SimResult) -> Metrics {
    let log = r.log.as_deref().unwrap_or(&[]);
    let mut released = BTreeMap::new();
    let mut responses = Vec::new();
    let names: Vec<&str> = r.tasks.iter().map(|t| t.name.as_str()).collect();
    let mut outs = 0u64;
    for e in log {
        match *e {
            SimEvent::Release {
                time, task, job, ..
            } => {
                released.insert((task, job), time);
            }
            SimEvent::Complete {
                time, task, job, ..
            } => {
                if let Some(r) = released.get(&(task, job)) {
                    responses.push((names[task], time - r));
                }
            }
            SimEvent::Switch { prev: Some(_), .. } => outs += 1,
            _ => {}
        }
    }
    Metrics {
        jobs: r.jobs_released,
        misses: r.deadline_misses,
        switches_per_cpu_s: per_cpu_s(outs, r.cpus, r.duration_ns),
        traced_switches_per_cpu_s: Some(r2(r.context_switches_per_cpu_per_s)),
        median_response_ms: medians(&responses),
    }
}

/// The real side's figures: the ONE place they are taken from a real run (today the
/// runner's own records: misses and response times per job, the worker threads'
/// switch counters).
pub fn real_metrics(r: &RunResult) -> Metrics {
    let responses: Vec<(&str, u64)> = r
        .jobs
        .iter()
        .zip(&r.result.tasks)
        .flat_map(|(jobs, t)| jobs.iter().map(move |j| (t.name.as_str(), j)))
        .filter(|(_, j)| !j.aborted)
        .filter_map(|(n, j)| j.finish.map(|f| (n, f - j.release)))
        .collect();
    Metrics {
        jobs: r.result.jobs_released,
        misses: r.result.deadline_misses,
        switches_per_cpu_s: per_cpu_s(r.thread_switches, r.result.cpus, r.result.duration_ns),
        traced_switches_per_cpu_s: r
            .trace
            .as_ref()
            .map(|t| r2(t.metrics.context_switches_per_cpu_per_s)),
        median_response_ms: medians(&responses),
    }
}

/// Medians of `(task name, response)` pairs: `all`, then one per task group.
fn medians(responses: &[(&str, u64)]) -> BTreeMap<String, f64> {
    let mut groups: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for &(name, ns) in responses {
        groups.entry(group(name).to_string()).or_default().push(ns);
    }
    let mut out: BTreeMap<String, f64> = groups.into_iter().map(|(g, v)| (g, median(v))).collect();
    out.insert(
        "all".into(),
        median(responses.iter().map(|&(_, ns)| ns).collect()),
    );
    out
}

/// A task's group: its name without the number `count:` appended (`small3` → `small`).
fn group(name: &str) -> &str {
    let g = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if g.is_empty() {
        name
    } else {
        g
    }
}

fn per_cpu_s(n: u64, cpus: usize, ns: u64) -> f64 {
    r2(n as f64 / cpus.max(1) as f64 / (ns.max(1) as f64 / 1e9))
}

/// Prediction error of `sim` against `real`, in % of the real value (None when the
/// real value is 0: then only "both zero" or not says anything).
pub fn error_pct(sim: f64, real: f64) -> Option<f64> {
    (real != 0.0).then(|| r2(100.0 * (sim - real) / real))
}

fn simulate_setup(s: &Setup, base: u64, costs: Option<Costs>) -> Result<Metrics, Error> {
    simulate_seeded(s, base, costs, None)
}

fn simulate_seeded(
    s: &Setup,
    base: u64,
    costs: Option<Costs>,
    seed: Option<u64>,
) -> Result<Metrics, Error> {
    let mut w = load(s, base, costs)?;
    if let Some(seed) = seed {
        w.seed = seed;
    }
    let r = simulate(&w, &SimOptions { trace: true })
        .map_err(|e| Error::input(format!("fidelity {}: {e}", s.key)))?;
    Ok(sim_metrics(&r))
}

/// Seeds of the calibrated simulation's wake-up draws. The kernel's wake-up jitter has no
/// seed, and on a strictly periodic set the draws decide which phase the simulated
/// schedule settles in (the fair mix's `ui` median moves by a third between seeds), so
/// the prediction is shown as the range over these seeds beside the file's own seed.
pub const SEEDS: u64 = 8;

/// (lowest, highest) of each compared figure of `s` over seeds 0..SEEDS, by row label;
/// `own` is the calibrated run with the file's own seed, which is not simulated again.
fn seed_ranges(
    s: &Setup,
    base: u64,
    costs: Costs,
    own: &Metrics,
) -> Result<BTreeMap<String, (f64, f64)>, Error> {
    let own_seed = load(s, base, Some(costs))?.seed;
    let mut out: BTreeMap<String, (f64, f64)> =
        rows_of(own).into_iter().map(|(l, v)| (l, (v, v))).collect();
    for seed in (0..SEEDS).filter(|&x| x != own_seed) {
        let m = simulate_seeded(s, base, Some(costs), Some(seed))?;
        for (label, v) in rows_of(&m) {
            let e = out.entry(label).or_insert((v, v));
            *e = (e.0.min(v), e.1.max(v));
        }
    }
    Ok(out)
}

/// The compared figures of one side, by row label.
fn rows_of(m: &Metrics) -> Vec<(String, f64)> {
    let mut rows = vec![
        ("misses".to_string(), m.misses as f64),
        ("switches/CPU/s".to_string(), m.switches_per_cpu_s),
    ];
    if let Some(t) = m.traced_switches_per_cpu_s {
        rows.push((
            "task-level switches/CPU/s (with idle, traced)".to_string(),
            t,
        ));
    }
    for (g, &v) in &m.median_response_ms {
        rows.push((format!("median response ms ({g})"), v));
    }
    rows
}

/// The recorded real side built into the binary.
pub fn recorded() -> Result<Record, Error> {
    serde_json::from_str(RECORDED).map_err(|e| Error::bug(format!("built-in fidelity record: {e}")))
}

/// Run the comparison. `real`: measure this machine (root) instead of using the
/// record; `record`: the file the caller will write what was measured to (checked here,
/// before 20 s of real runs); what was measured is then in [`Outcome::record`].
pub fn run(progress: &dyn Progress, real: bool, record: Option<&Path>) -> Result<Outcome, Error> {
    if let Some(path) = record {
        // Said before 20 s of real runs, not after them.
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        if dir.is_some_and(|d| !d.is_dir()) || path.is_dir() {
            return Err(Error::output(format!(
                "--record {}: its directory does not exist or it is a directory",
                path.display()
            )));
        }
    }
    // Without the privileges a real run needs, the recorded side is shown and the case
    // title says why.
    let cannot = match real {
        true => super::latency::real_possible().err(),
        false => Some("--no-real".to_string()),
    };
    if let (Some(path), Some(why)) = (record, &cannot) {
        return Err(Error::input(format!(
            "--record {}: nothing measured to record ({why})",
            path.display()
        )));
    }
    let (data, source) = match &cannot {
        None => (measure(progress)?, "measured now".to_string()),
        Some(why) => (recorded()?, format!("recorded, not measured: {why}")),
    };
    let mut cases = Vec::new();
    let mut table = serde_json::Map::new();
    for (i, s) in SETUPS.iter().enumerate() {
        progress.step(&format!(
            "[fidelity {}/{}] simulating {}...",
            i + 1,
            SETUPS.len(),
            s.key
        ));
        let sim = simulate_setup(s, data.base_slice_ns, Some(data.calibration))?;
        let plain = simulate_setup(s, data.base_slice_ns, None)?;
        let ranges = seed_ranges(s, data.base_slice_ns, data.calibration, &sim)?;
        let real = data.cases.get(s.key).cloned();
        if let Some(rm) = &real {
            let sim_rows: BTreeMap<String, f64> = rows_of(&sim).into_iter().collect();
            for (metric, b) in rows_of(rm) {
                let a = sim_rows.get(&metric).copied().unwrap_or(0.0);
                let (lo, hi) = ranges.get(&metric).copied().unwrap_or((a, a));
                let err = |x: f64| {
                    error_pct(x, b)
                        .map_or(json!(if x == b { "0 (both 0)" } else { "-" }), |e| json!(e))
                };
                let over_seeds = match (error_pct(lo, b), error_pct(hi, b)) {
                    (Some(l), Some(h)) => json!(format!("{l} to {h}")),
                    _ => err(lo),
                };
                let mut row = serde_json::Map::new();
                row.insert("simulated".into(), json!(a));
                row.insert("real".into(), json!(b));
                row.insert("error %".into(), err(a));
                row.insert(
                    format!("simulated, seeds 0-{}", SEEDS - 1),
                    json!(format!("{}-{}", super::fmt_num(lo), super::fmt_num(hi))),
                );
                row.insert("error % over seeds".into(), over_seeds);
                table.insert(format!("{} / {metric}", s.key), Value::Object(row));
            }
        }
        cases.push(Case {
            case: s.key.to_string(),
            paper: Value::Null,
            simulated: json!({ "calibrated": sim, "without job costs": plain }),
            real: real
                .as_ref()
                .map_or(Value::Null, |m| json!({ "figures": m, "source": source })),
            expected: Value::Null,
            note: note(&sim, &plain, real.as_ref()),
        });
    }
    cases.push(Case {
        case: format!(
            "prediction error (real side {source}, kernel {}; calibrated: context switch {} ns, migration {} ns, per job {} ns, wake-up {} ns + up to {} ns, + {} ns from idle)",
            data.kernel,
            data.calibration.context_switch_ns,
            data.calibration.migration_ns,
            data.calibration.job_overhead_ns,
            data.calibration.wakeup_latency_ns,
            data.calibration.wakeup_jitter_ns,
            data.calibration.wakeup_from_idle_ns
        ),
        paper: Value::Null,
        simulated: Value::Object(table),
        real: Value::Null,
        expected: Value::Null,
        note: "error = (simulated − real) / real; docs/fidelity.md says where each remaining error comes from".into(),
    });
    Ok(Outcome {
        cases,
        figures: Vec::new(),
        record: record.map(|_| data),
    })
}

fn note(sim: &Metrics, plain: &Metrics, real: Option<&Metrics>) -> String {
    let Some(r) = real else {
        return "no real figures for this case".into();
    };
    let mut s = format!(
        "misses: {} simulated, {} real ({} without the job costs)",
        sim.misses, r.misses, plain.misses
    );
    let all = |m: &Metrics| m.median_response_ms.get("all").copied().unwrap_or(0.0);
    if let Some(e) = error_pct(all(sim), all(r)) {
        s.push_str(&format!("; median response off by {e}%"));
    }
    if let Some(e) = error_pct(sim.switches_per_cpu_s, r.switches_per_cpu_s) {
        s.push_str(&format!("; switches off by {e}%"));
    }
    s
}

/// Measure this machine: calibrate, then run every setup for real.
fn measure(progress: &dyn Progress) -> Result<Record, Error> {
    progress.step("[fidelity] calibrating this machine (about 3 s)...");
    let cal = calibrate::calibrate();
    let host = HostSched::read();
    let base = host.base_slice.ns;
    let mut cases = BTreeMap::new();
    for (i, s) in SETUPS.iter().enumerate() {
        progress.step(&format!(
            "[fidelity {}/{}] running {} on this kernel (3 s)...",
            i + 1,
            SETUPS.len(),
            s.key
        ));
        let w = load(s, base, None)?;
        let cfg = RunConfig {
            margin: s.margin,
            fair_group: s.fair_group,
            // The task-level switch count comes from the run's kernel trace.
            trace: true,
            ..RunConfig::default()
        };
        let r =
            runner::run(&w, &cfg).map_err(|e| Error::input(format!("fidelity {}: {e}", s.key)))?;
        if let Some(why) = &r.stopped_by {
            return Err(Error::stopped(
                why,
                format!("the real run of {} was stopped by {why}", s.key),
            ));
        }
        cases.insert(s.key.to_string(), real_metrics(&r));
    }
    Ok(Record {
        kernel: host.release,
        calibration: Costs::of(&cal),
        base_slice_ns: base,
        cases,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_record_covers_every_setup() {
        let r = recorded().unwrap();
        for s in SETUPS {
            assert!(r.cases.contains_key(s.key), "{} not recorded", s.key);
        }
    }

    #[test]
    fn errors_are_relative_to_the_real_value() {
        assert_eq!(error_pct(110.0, 100.0), Some(10.0));
        assert_eq!(error_pct(0.0, 0.0), None);
        assert_eq!(median(vec![3_000_000, 1_000_000, 2_000_000]), 2.0);
        let m = medians(&[
            ("big1", 4_000_000),
            ("big2", 6_000_000),
            ("small1", 1_000_000),
        ]);
        // Lower medians: an even count reports the lower middle value, not a mean.
        assert_eq!((m["big"], m["small"], m["all"]), (4.0, 1.0, 4.0));
        assert_eq!(median(vec![]), 0.0);
        assert_eq!(median(vec![1_234_567, 9_000_000]), 1.235);
        assert_eq!(group("p"), "p");
        assert_eq!(group("42"), "42");
    }
}
