//! Human-readable tables and JSON for simulation results.
//!
//! Human output goes to a terminal or a pager; JSON is one compact object per run followed
//! by a newline, so `jq` and line-oriented tools work on it.

use crate::table::Table;
use schedlab_model::{format_ns, Overrides, Workload};
use schedlab_sim::SimResult;
use serde::Serialize;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// Nanoseconds as milliseconds with three decimals (µs resolution).
fn ms(ns: f64) -> String {
    if ns.is_finite() {
        format!("{:.3}", ns / 1e6)
    } else {
        "-".into()
    }
}

fn rate(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "-".into()
    }
}

/// The policies that schedule this workload's tasks, for the summary header: the
/// periodic tasks' policy when there are periodic tasks, the fair tasks' policy (marked
/// `fair`) when there are fair tasks. A fair-only workload (a nice mix, an imported
/// desktop trace) is thus not shown as `edf`, which schedules nothing in it.
/// `fallback` (the result's policy) is used when neither kind is present (fifo/rr only).
pub fn policies_in_use(w: &Workload, fallback: &str) -> String {
    let periodic = w
        .tasks
        .iter()
        .any(|t| t.class == schedlab_model::TaskClass::Deadline);
    let fair = w.tasks.iter().any(|t| t.class.is_fair());
    match (periodic, fair) {
        (true, false) => w.scheduler.policy.name().to_string(),
        (false, true) => format!("{} (fair)", w.scheduler.fair.name()),
        (true, true) => format!(
            "{} + {} (fair)",
            w.scheduler.policy.name(),
            w.scheduler.fair.name()
        ),
        (false, false) => fallback.to_string(),
    }
}

/// `12    utilisation 3.070 (76.8% of 4 CPUs)`, or with fair tasks
/// `5 (2 periodic, 3 fair)    ...`: the utilisation (Σ runtime/period) covers the
/// periodic tasks only, so it is left out when there are none instead of printing 0.
fn task_counts(w: &Workload, cpus: usize) -> String {
    let n = w.tasks.len();
    let periodic = w
        .tasks
        .iter()
        .filter(|t| t.period.is_some() && !t.class.is_fair())
        .count();
    let fair = w.tasks.iter().filter(|t| t.class.is_fair()).count();
    let mut s = if fair == 0 {
        n.to_string()
    } else if periodic == 0 {
        format!("{n} ({fair} fair)")
    } else {
        format!("{n} ({periodic} periodic, {fair} fair)")
    };
    if periodic > 0 {
        let u = w.utilisation();
        let _ = write!(
            s,
            "    utilisation {u:.3} ({:.1}% of {cpus} CPUs)",
            100.0 * u / cpus.max(1) as f64
        );
    }
    s
}

/// The readable summary of one run: header, per-task table, per-CPU table, totals.
pub fn render_simulate(w: &Workload, r: &SimResult) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "workload   {}", r.workload);
    let _ = writeln!(
        out,
        "policy     {}    placement {}    cpus {}    duration {}    seed {}    on_miss {}",
        policies_in_use(w, &r.policy),
        r.placement,
        r.cpus,
        format_ns(r.duration_ns),
        w.seed,
        match w.on_miss {
            schedlab_model::OnMiss::Continue => "continue",
            schedlab_model::OnMiss::Abort => "abort",
        }
    );
    let _ = writeln!(out, "tasks      {}", task_counts(w, r.cpus));
    out.push('\n');

    let mut t = Table::new([
        "task",
        "jobs",
        "completed",
        "misses",
        "mean resp ms",
        "max resp ms",
        "preemptions",
        "migrations",
        "cpu time ms",
    ]);
    for task in &r.tasks {
        let done = task.completed > 0;
        t.row(vec![
            task.name.clone(),
            task.jobs.to_string(),
            task.completed.to_string(),
            task.misses.to_string(),
            if done {
                ms(task.mean_response_ns)
            } else {
                "-".into()
            },
            if done {
                ms(task.max_response_ns as f64)
            } else {
                "-".into()
            },
            task.preemptions.to_string(),
            task.migrations.to_string(),
            ms(task.cpu_time_ns as f64),
        ]);
    }
    t.render(&mut out);
    out.push('\n');

    let mut c = Table::new(["cpu", "utilisation %", "context switches", "to/from idle"]);
    for cpu in &r.per_cpu {
        c.row(vec![
            cpu.cpu.to_string(),
            format!("{:.1}", 100.0 * cpu.utilisation),
            cpu.context_switches.to_string(),
            cpu.idle_switches.to_string(),
        ]);
    }
    c.render(&mut out);
    out.push('\n');

    let mut totals: Vec<(&str, String)> = vec![
        (
            "jobs",
            format!(
                "{} released, {} completed, {} aborted",
                r.jobs_released, r.jobs_completed, r.jobs_aborted
            ),
        ),
        ("deadline misses", r.deadline_misses.to_string()),
        ("horizon", horizon_line(r)),
    ];
    if let Some(p) = &r.partition {
        totals.push(("partition", partition_line(p)));
    }
    totals.extend([
        (
            "context switches",
            format!(
                "{} total, {} per CPU per s ({} without idle)",
                r.context_switches,
                rate(r.context_switches_per_cpu_per_s),
                rate(r.task_switches_per_cpu_per_s)
            ),
        ),
        ("preemptions", r.preemptions.to_string()),
        ("migrations", r.migrations.to_string()),
        ("throttles", r.throttles.to_string()),
        ("laxity evaluations", r.laxity_evaluations.to_string()),
        ("scheduler calls", r.scheduler_invocations.to_string()),
        ("events", r.events.to_string()),
        ("wall time", format!("{:.3} s", r.wall_s)),
    ]);
    let kw = totals.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in totals {
        let _ = writeln!(out, "{k:<kw$}  {v}");
    }
    if let Some(s) = &r.scheduler_structure {
        out.push('\n');
        out += &structure_text(s);
    }
    out
}

/// Lines of a policy's `scheduler_structure` shown by `simulate` (RUN's tree, the first
/// slice of DP-Wrap, ...); the rest is in `--json`.
const STRUCTURE_LINES: usize = 40;

/// The policy's `scheduler_structure` for the terminal: its kind, then its `text` (the
/// policy's own rendering: RUN's tree in its display form), cut after
/// [`STRUCTURE_LINES`] lines.
fn structure_text(s: &Value) -> String {
    let kind = s["kind"].as_str().unwrap_or("structure");
    let mut out = format!("scheduler structure ({kind}):\n");
    let text = s["text"].as_str().unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    for l in lines.iter().take(STRUCTURE_LINES) {
        let _ = writeln!(out, "  {l}");
    }
    if lines.len() > STRUCTURE_LINES {
        let _ = writeln!(
            out,
            "  ... {} more lines (`--json`: scheduler_structure)",
            lines.len() - STRUCTURE_LINES
        );
    }
    out
}

/// What the simulated time decides: a miss decides whatever the horizon; without one, only
/// a run over the feasibility interval of a deterministic schedule does.
pub fn horizon_line(r: &SimResult) -> String {
    let ran = format_ns(r.duration_ns);
    if r.deadline_misses > 0 {
        return format!("{ran} (a miss decides: the set is not schedulable by this policy)");
    }
    if r.horizon_complete {
        return format!(
            "{ran} covers the feasibility interval {} (hyperperiod {}): no miss in it",
            format_ns(r.feasibility_interval_ns.unwrap_or(r.duration_ns)),
            format_ns(r.hyperperiod_ns.unwrap_or(0))
        );
    }
    match r.feasibility_interval_ns {
        Some(i) if r.duration_ns < i => format!(
            "incomplete: no miss within {ran}, the feasibility interval is {} (a miss may \
             come later; --duration hyperperiod runs it whole)",
            format_ns(i)
        ),
        Some(_) => format!(
            "no miss within {ran}; deadlines beyond periods, so the hyperperiod decides nothing"
        ),
        None => format!(
            "incomplete: no miss within {ran}; the schedule has no feasibility interval \
             (sporadic, aperiodic or random work, jitter, or a hyperperiod beyond u64), so it \
             shows nothing beyond {ran}"
        ),
    }
}

fn partition_line(p: &schedlab_sim::PartitionReport) -> String {
    let cpus: Vec<String> = p
        .cpus
        .iter()
        .enumerate()
        .map(|(c, names)| format!("cpu{c} [{}]", names.join(" ")))
        .collect();
    format!(
        "{} ({}): {}",
        p.method,
        if p.certified {
            "certified"
        } else {
            "not certified by a test"
        },
        cpus.join(", ")
    )
}

/// Side-by-side table of several runs of one workload, one column per policy.
/// `names` are the column headers (the policies as requested).
pub fn render_compare(w: &Workload, names: &[&str], results: &[SimResult]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "workload   {}    placement {}    cpus {}    duration {}    tasks {}",
        w.name,
        w.scheduler.placement.name(),
        w.platform.cpus,
        format_ns(w.duration),
        task_counts(w, w.platform.cpus),
    );
    out.push('\n');

    let mut t = Table::new(std::iter::once("").chain(names.iter().copied()));
    let metric = |t: &mut Table, label: &str, f: &dyn Fn(&SimResult) -> String| {
        let mut row = vec![label.to_string()];
        row.extend(results.iter().map(f));
        t.row(row);
    };
    metric(&mut t, "deadline misses", &|r| {
        r.deadline_misses.to_string()
    });
    metric(&mut t, "jobs completed", &|r| {
        format!("{}/{}", r.jobs_completed, r.jobs_released)
    });
    metric(&mut t, "switches/cpu/s", &|r| {
        rate(r.context_switches_per_cpu_per_s)
    });
    metric(&mut t, "  without idle", &|r| {
        rate(r.task_switches_per_cpu_per_s)
    });
    metric(&mut t, "preemptions", &|r| r.preemptions.to_string());
    metric(&mut t, "migrations", &|r| r.migrations.to_string());
    metric(&mut t, "laxity evaluations", &|r| {
        r.laxity_evaluations.to_string()
    });
    metric(&mut t, "scheduler calls", &|r| {
        r.scheduler_invocations.to_string()
    });
    metric(&mut t, "wall time s", &|r| format!("{:.3}", r.wall_s));

    let ntasks = results.iter().map(|r| r.tasks.len()).max().unwrap_or(0);
    let blank = |label: &str| {
        let mut row = vec![label.to_string()];
        row.extend(results.iter().map(|_| String::new()));
        row
    };
    if ntasks > 0 {
        t.row(blank(""));
        t.row(blank("max response ms"));
        for i in 0..ntasks {
            let name = results
                .iter()
                .find_map(|r| r.tasks.get(i))
                .map_or_else(String::new, |t| t.name.clone());
            let mut row = vec![format!("  {name}")];
            row.extend(results.iter().map(|r| match r.tasks.get(i) {
                Some(task) if task.completed > 0 => ms(task.max_response_ns as f64),
                _ => "-".into(),
            }));
            t.row(row);
        }
        let missing: Vec<usize> = (0..ntasks)
            .filter(|&i| {
                results
                    .iter()
                    .any(|r| r.tasks.get(i).is_some_and(|t| t.misses > 0))
            })
            .collect();
        if !missing.is_empty() {
            t.row(blank(""));
            t.row(blank("misses by task"));
            for i in missing {
                let name = results
                    .iter()
                    .find_map(|r| r.tasks.get(i))
                    .map_or_else(String::new, |t| t.name.clone());
                let mut row = vec![format!("  {name}")];
                row.extend(
                    results
                        .iter()
                        .map(|r| r.tasks.get(i).map_or("-".into(), |t| t.misses.to_string())),
                );
                t.row(row);
            }
        }
    }
    t.render(&mut out);
    // The runs share the task set, so one horizon note covers every column without a miss.
    if let Some(r) = results
        .iter()
        .find(|r| r.deadline_misses == 0 && !r.horizon_complete)
    {
        let _ = writeln!(out, "\nhorizon    {}", horizon_line(r));
    }
    out
}

/// The schedlab version written into every machine-readable result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where a `--json` result came from: the seed in effect (None where the command takes
/// none) and the options that produced it. Written as the keys `schedlab_version`,
/// `seed` and `options`, after the result's own keys; a key the result already has is
/// kept as it is (existing keys are a contract).
pub struct Provenance {
    /// The seed the run used (the workload's, after `--seed`).
    pub seed: Option<u64>,
    /// The options as given (null where the file's value was used).
    pub options: Value,
}

impl Provenance {
    /// `options` = the overrides as given on the command line, null where not given.
    pub fn of(seed: u64, ov: &Overrides) -> Provenance {
        Provenance {
            seed: Some(seed),
            options: overrides_json(ov),
        }
    }

    /// Add `name: value` to the options.
    pub fn with(mut self, name: &str, value: Value) -> Provenance {
        if let Value::Object(m) = &mut self.options {
            m.insert(name.into(), value);
        }
        self
    }

    /// `value` with the provenance keys appended.
    pub fn stamp(&self, value: impl Serialize) -> Result<Value, serde_json::Error> {
        let mut v = serde_json::to_value(value)?;
        if let Value::Object(m) = &mut v {
            m.entry("schedlab_version").or_insert(json!(VERSION));
            m.entry("seed").or_insert(json!(self.seed));
            m.entry("options").or_insert(self.options.clone());
        }
        Ok(v)
    }
}

/// The overrides as given: `policy`, `placement`, `cpus`, `duration` (as written in a
/// workload file), `seed`, `on_miss`, each null when not given (the workload file's
/// value was used).
pub fn overrides_json(ov: &Overrides) -> Value {
    json!({
        "policy": ov.policy.map(|p| p.name()),
        "placement": ov.placement.map(|p| p.name()),
        "cpus": ov.cpus,
        "duration": ov.duration.map(duration_text),
        "seed": ov.seed,
        "on_miss": ov.on_miss,
    })
}

/// A duration override as a workload file writes it (`300ms`). The one place that knows
/// the override's type (a duration that may also be `hyperperiod` would give its text).
fn duration_text(d: schedlab_model::SimDuration) -> String {
    d.text()
}

/// A JSON value as one compact line plus a newline.
pub fn json_line(v: &impl Serialize) -> Result<String, serde_json::Error> {
    let mut s = serde_json::to_string(v)?;
    s.push('\n');
    Ok(s)
}

/// One run as compact JSON plus a newline, with its provenance.
pub fn json_simulate(r: &SimResult, p: &Provenance) -> Result<String, serde_json::Error> {
    json_line(&p.stamp(r)?)
}

/// `{"results": [ ... ], ...}` as compact JSON plus a newline: each result stamped with
/// its own provenance (`each[i]`), the whole with `all`'s.
pub fn json_compare(
    results: &[SimResult],
    each: &[Provenance],
    all: &Provenance,
) -> Result<String, serde_json::Error> {
    let results = results
        .iter()
        .zip(each)
        .map(|(r, p)| p.stamp(r))
        .collect::<Result<Vec<_>, _>>()?;
    json_line(&all.stamp(json!({ "results": results }))?)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use schedlab_model::{Overrides, Workload};
    use schedlab_sim::{CpuResult, TaskResult};
    use std::path::Path;

    pub(crate) fn workload() -> Workload {
        let yaml = "name: t\nplatform: { cpus: 2 }\nduration: 1s\ntasks:\n  - { name: a, runtime: 5ms, period: 10ms }\n  - { name: b, runtime: 1ms, period: 20ms }\n";
        Workload::parse_str(yaml, Path::new("t.yaml"), &Overrides::default()).unwrap()
    }

    /// A made-up result with the shape the engine will produce.
    pub(crate) fn result(policy: &str, misses: u64) -> SimResult {
        let task = |name: &str, completed: u64, misses: u64| TaskResult {
            name: name.into(),
            jobs: 100,
            completed,
            misses,
            cpu_time_ns: 500_000_000,
            mean_response_ns: 5_250_000.0,
            max_response_ns: 9_000_000,
            max_tardiness_ns: 0,
            preemptions: 3,
            migrations: 1,
            throttles: 0,
            latency: None,
            fair: None,
            cpu: None,
        };
        SimResult {
            fairness: None,
            kernel: None,
            workload: "t".into(),
            policy: policy.into(),
            placement: "linux".into(),
            cpus: 2,
            duration_ns: 1_000_000_000,
            hyperperiod_ns: Some(7_200_000_000),
            horizon_complete: false,
            feasibility_interval_ns: Some(7_200_000_000),
            partition: None,
            events: 1234,
            wall_s: 0.0042,
            jobs_released: 150,
            jobs_completed: 150,
            jobs_aborted: 0,
            deadline_misses: misses,
            context_switches: 400,
            context_switches_per_cpu_per_s: 200.0,
            task_switches_per_cpu_per_s: 100.0,
            preemptions: 3,
            migrations: 1,
            laxity_evaluations: 0,
            scheduler_invocations: 321,
            scheduler_structure: None,
            throttles: 0,
            tasks: vec![task("a", 100, misses), task("b", 0, 0)],
            per_cpu: vec![
                CpuResult {
                    cpu: 0,
                    utilisation: 0.55,
                    context_switches: 200,
                    idle_switches: 100,
                },
                CpuResult {
                    cpu: 1,
                    utilisation: 0.05,
                    context_switches: 200,
                    idle_switches: 100,
                },
            ],
            trace: None,
            log: None,
            work: Default::default(),
        }
    }

    /// The horizon line for each case, by hand: 1 s simulated against a 7.2 s interval.
    #[test]
    fn the_horizon_line_says_what_the_run_decides() {
        let mut r = result("edf", 0);
        assert_eq!(
            horizon_line(&r),
            "incomplete: no miss within 1s, the feasibility interval is 7200ms (a miss may come later; --duration hyperperiod runs it whole)"
        );
        r.duration_ns = 7_200_000_000;
        r.horizon_complete = true;
        assert_eq!(
            horizon_line(&r),
            "7200ms covers the feasibility interval 7200ms (hyperperiod 7200ms): no miss in it"
        );
        let missed = result("edf", 3);
        assert!(horizon_line(&missed).contains("a miss decides"));
        let mut sporadic = result("edf", 0);
        sporadic.hyperperiod_ns = None;
        sporadic.feasibility_interval_ns = None;
        assert!(horizon_line(&sporadic).contains("no feasibility interval"));
        // The summary carries the line, and a partition line when there is one.
        let mut p = result("rm", 0);
        p.partition = Some(schedlab_sim::PartitionReport {
            method: "ffd-rm".into(),
            certified: true,
            cpus: vec![vec!["a".into()], vec!["b".into()]],
        });
        let text = render_simulate(&workload(), &p);
        assert!(
            text.contains("horizon             incomplete: no miss within 1s"),
            "{text}"
        );
        assert!(
            text.contains("partition           ffd-rm (certified): cpu0 [a], cpu1 [b]"),
            "{text}"
        );
    }

    #[test]
    fn simulate_summary_has_every_section() {
        let s = render_simulate(&workload(), &result("edf", 2));
        for want in [
            "workload   t",
            "policy     edf",
            "placement linux",
            "duration 1s",
            "mean resp ms",
            "utilisation %",
            "deadline misses     2",
            "200.0 per CPU per s (100.0 without idle)",
            "laxity evaluations",
            "scheduler calls     321\n",
            "wall time",
        ] {
            assert!(s.contains(want), "missing `{want}` in\n{s}");
        }
        assert!(!s.contains("scheduler structure"), "{s}");
        // Task a: mean 5.250 ms, max 9.000 ms; task b completed nothing: dashes.
        let a = s.lines().find(|l| l.starts_with("a ")).unwrap();
        assert!(
            a.contains("5.250") && a.contains("9.000") && a.contains("500.000"),
            "{a}"
        );
        let b = s.lines().find(|l| l.starts_with("b ")).unwrap();
        assert!(b.contains(" - "), "{b}");
    }

    /// A policy's structure follows the totals: its kind, its text indented, cut after
    /// 40 lines with the number left out.
    #[test]
    fn simulate_summary_shows_the_scheduler_structure_briefly() {
        let mut r = result("run", 0);
        r.scheduler_structure = Some(json!({"kind": "run-reduction-tree",
            "text": "subsystem on cpu 0:\n  S2 pack rate 1\n"}));
        let s = render_simulate(&workload(), &r);
        assert!(
            s.ends_with(
                "\nscheduler structure (run-reduction-tree):\n  subsystem on cpu 0:\n    S2 pack rate 1\n"
            ),
            "{s}"
        );
        let long: String = (0..45).map(|i| format!("line {i}\n")).collect();
        r.scheduler_structure = Some(json!({"kind": "k", "text": long}));
        let s = render_simulate(&workload(), &r);
        assert!(
            s.contains("  line 39\n  ... 5 more lines (`--json`: scheduler_structure)\n"),
            "{s}"
        );
        assert!(!s.contains("line 40"), "{s}");
    }

    #[test]
    fn compare_table_has_one_column_per_policy() {
        let rs = [result("edf", 0), result("rm", 3)];
        let s = render_compare(&workload(), &["edf", "rm"], &rs);
        let header = s.lines().nth(2).unwrap();
        assert!(header.contains("edf") && header.contains("rm"), "{s}");
        let misses = s
            .lines()
            .find(|l| l.starts_with("deadline misses"))
            .unwrap();
        assert!(misses.ends_with('3'), "{misses}");
        assert!(s.contains("misses by task"), "{s}");
    }

    #[test]
    fn json_is_one_line_with_design_keys() {
        let prov = || Provenance::of(7, &Overrides::default());
        let j = json_simulate(&result("edf", 0), &prov()).unwrap();
        assert!(j.ends_with('\n') && j.trim_end().lines().count() == 1);
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        for k in DESIGN_KEYS {
            assert!(v.get(k).is_some(), "missing key {k}");
        }
        for k in DESIGN_TASK_KEYS {
            assert!(v["tasks"][0].get(k).is_some(), "missing task key {k}");
        }
        let c: serde_json::Value = serde_json::from_str(
            &json_compare(
                &[result("edf", 0), result("rm", 1)],
                &[prov(), prov()],
                &prov(),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(c["results"].as_array().unwrap().len(), 2);
        assert_eq!(c["results"][1]["policy"], "rm");
    }

    #[test]
    fn provenance_is_appended_and_never_replaces_a_key() {
        let ov = Overrides {
            cpus: Some(3),
            seed: Some(9),
            on_miss: Some(schedlab_model::OnMiss::Abort),
            ..Overrides::default()
        };
        let p = Provenance::of(9, &ov).with("platform", json!("p.yaml"));
        let v = p.stamp(json!({"a": 1, "seed": "theirs"})).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["a", "seed", "schedlab_version", "options"]);
        assert_eq!(v["seed"], "theirs");
        assert_eq!(v["schedlab_version"], VERSION);
        assert_eq!(
            v["options"],
            json!({"policy": null, "placement": null, "cpus": 3, "duration": null,
                   "seed": 9, "on_miss": "abort", "platform": "p.yaml"})
        );
    }

    /// DESIGN.md "Machine-readable results": keys every result object has.
    pub(crate) const DESIGN_KEYS: [&str; 17] = [
        "policy",
        "placement",
        "cpus",
        "duration_ns",
        "events",
        "wall_s",
        "jobs_released",
        "jobs_completed",
        "deadline_misses",
        "context_switches",
        "context_switches_per_cpu_per_s",
        "preemptions",
        "migrations",
        "laxity_evaluations",
        "scheduler_invocations",
        "scheduler_structure",
        "tasks",
    ];
    /// DESIGN.md: keys of every `tasks[]` entry.
    pub(crate) const DESIGN_TASK_KEYS: [&str; 8] = [
        "name",
        "jobs",
        "misses",
        "cpu_time_ns",
        "mean_response_ns",
        "max_response_ns",
        "preemptions",
        "migrations",
    ];
}
