//! `schedlab compare FILE --real [--platform FILE]`: the simulator's prediction and the
//! kernel's measurement side by side, one pair of columns per policy. With
//! `--platform FILE` (from `schedlab calibrate`) the simulator charges this machine's
//! measured context-switch and migration costs (and uses its HZ).

use crate::cli::CompareArgs;
use crate::commands::compare::BUILTIN_TABLE1;
use crate::commands::emit;
use crate::exports::ExportArgs;
use crate::failure::Failure;
use crate::output;
use crate::progress::Progress;
use clap::Args;
use schedlab_linux::prediction::{self, MetricRow};
use schedlab_linux::runner::{self, RunConfig};
use schedlab_linux::RunResult;
use schedlab_model::spec::WorkloadSpec;
use schedlab_model::workload::parse_spec;
use schedlab_model::{Policy, Workload};
use schedlab_sim::{simulate, SimOptions, SimResult};
use schedlab_trace::report::{PolicyRun, PredictionTable, Report};
use schedlab_trace::Schedule;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// `compare`'s flags for real runs and calibrated platforms.
#[derive(Debug, Args, Clone, Default)]
pub struct RealArgs {
    /// Also run every policy for real on this machine (needs root; see `schedlab run`)
    /// and print measured columns next to the simulated ones.
    #[arg(long)]
    pub real: bool,

    /// A platform file from `schedlab calibrate`: the simulator uses its hz,
    /// context_switch, migration and tick costs instead of the workload's.
    #[arg(long, value_name = "FILE")]
    pub platform: Option<PathBuf>,

    /// SCHED_DEADLINE budget margin for the real runs and the simulated CBS budgets
    /// (default: the file's scheduler.dl_margin, else 0.05, as `schedlab run`).
    #[arg(long, value_name = "F")]
    pub margin: Option<f64>,

    /// With --real: write one HTML page with, per policy, the simulated and the real
    /// Gantt chart of the same window, the prediction table (simulated, real, error)
    /// and both sides' response-time distributions.
    #[arg(long, value_name = "FILE", requires = "real")]
    pub report: Option<PathBuf>,

    /// With --real: the real runs' traces (--trace-out, --jobs-csv, --gantt; with
    /// several policies each file gets `-POLICY` before its extension).
    #[command(flatten)]
    pub exports: ExportArgs,
}

impl RealArgs {
    /// Whether compare must go through this module.
    pub fn active(&self) -> bool {
        self.real || self.platform.is_some() || self.exports.wants_trace()
    }
}

/// Policies compared for real when `--policies` is not given.
pub const REAL_DEFAULT: &[Policy] = &[Policy::Edf, Policy::Llf, Policy::Illf];

/// Replace the workload's hz, context_switch, migration, tick and idle states (with any
/// PM QoS limit) with those of the calibrated platform file `path` (`schedlab calibrate
/// -o FILE`).
pub fn merge_platform(spec: &mut WorkloadSpec, path: &Path) -> Result<(), Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
    let cal = parse_spec(&text, path).map_err(Failure::input)?;
    let Some(cp) = cal.platform else {
        return Err(Failure::input(format!(
            "{}: no `platform:` block (write one with `schedlab calibrate -o FILE`)",
            path.display()
        )));
    };
    let p = spec.platform.get_or_insert_with(Default::default);
    if cp.hz.is_some() {
        p.hz = cp.hz;
    }
    if cp.context_switch.is_some() {
        p.context_switch = cp.context_switch;
    }
    if cp.migration.is_some() {
        p.migration = cp.migration;
    }
    if cp.tick.is_some() {
        p.tick = cp.tick;
    }
    if cp.idle_states.is_some() {
        p.idle_states = cp.idle_states;
    }
    if cp.pm_qos_latency.is_some() {
        p.pm_qos_latency = cp.pm_qos_latency;
    }
    if cp.job_costs.is_some() {
        p.job_costs = cp.job_costs;
    }
    Ok(())
}

/// A real run's column beside the simulator's: for a traced run, the figures the trace
/// counts the way the simulator does (the prediction section's), so that one output
/// never gives two counts of one thing; untraced, the runner's own.
fn real_column(r: &RunResult) -> SimResult {
    let mut res = r.result.clone();
    if let Some(t) = &r.trace {
        let m = &t.metrics;
        res.jobs_released = m.jobs_released;
        res.jobs_completed = m.jobs_completed;
        res.deadline_misses = m.deadline_misses;
        res.context_switches = m.context_switches;
        res.context_switches_per_cpu_per_s = m.context_switches_per_cpu_per_s;
        res.task_switches_per_cpu_per_s = m.task_switches_per_cpu_per_s;
        res.preemptions = m.preemptions;
        res.migrations = m.migrations;
    }
    res
}

/// Simulate (with the calibrated platform) and, with `--real`, run every policy.
pub fn run(args: &CompareArgs) -> Result<(), Failure> {
    let ra = &args.real;
    if ra.exports.wants_trace() && !ra.real {
        return Err(Failure::input(
            "--trace-out, --jobs-csv and --gantt with compare write the real runs' traces: add --real (`schedlab simulate` writes a simulated one)",
        ));
    }
    if let Some(m) = ra.margin {
        if !(0.0..=10.0).contains(&m) {
            return Err(Failure::input(format!(
                "--margin: {m} is outside 0..10 (a fraction: 0.05 = 5%)"
            )));
        }
    }
    let (text, path) = match &args.file {
        Some(p) => (
            std::fs::read_to_string(p)
                .map_err(|e| Failure::input(format!("{}: {e}", p.display())))?,
            p.clone(),
        ),
        None => (
            BUILTIN_TABLE1.to_string(),
            PathBuf::from("<built-in table1>"),
        ),
    };
    let mut spec = parse_spec(&text, &path).map_err(Failure::input)?;
    let file_margin = spec.scheduler.as_ref().and_then(|s| s.dl_margin);
    let margin = ra.margin.or(file_margin).unwrap_or(runner::DEFAULT_MARGIN);
    spec.scheduler
        .get_or_insert_with(Default::default)
        .dl_margin = Some(margin);
    if let Some(pf) = &ra.platform {
        merge_platform(&mut spec, pf)?;
    }
    let load = |p: Option<Policy>| -> Result<Workload, Failure> {
        Workload::from_spec(spec.clone(), &args.overrides.to_overrides(p))
            .map_err(|m| Failure::input(format!("{}: {m}", path.display())))
    };
    let base = load(None)?;
    ra.exports.check_window(base.duration)?;
    if ra.real {
        crate::commands::run::check_outputs(&[args.output.output.as_deref()])?;
        schedlab_linux::machine_lock::wait_limit().map_err(Failure::input)?;
    }
    let mut policies: Vec<Policy> = Vec::new();
    let requested: Vec<Policy> = if args.policies.is_empty() {
        if ra.real {
            REAL_DEFAULT.to_vec()
        } else {
            crate::commands::compare::default_policies_for(&base)
        }
    } else {
        args.policies.clone()
    };
    for p in requested {
        if !policies.contains(&p) {
            policies.push(p);
        }
    }

    let progress = Progress::new();
    let mut sims: Vec<SimResult> = Vec::new();
    let mut loaded: Vec<Workload> = Vec::new();
    let mut reals = Vec::new();
    let mut interrupted = None;
    for (i, &p) in policies.iter().enumerate() {
        let w = load(Some(p))?;
        progress.step(&format!(
            "[{}/{}] simulating {}...",
            i + 1,
            policies.len(),
            p.name()
        ));
        let s = simulate(&w, &SimOptions { trace: ra.real })
            .map_err(|e| Failure::input(format!("{} under {}: {e}", path.display(), p.name())))?;
        sims.push(s);
        loaded.push(w.clone());
        if ra.real {
            progress.step(&format!(
                "[{}/{}] running {} for real ({})...",
                i + 1,
                policies.len(),
                p.name(),
                schedlab_model::format_ns(w.duration)
            ));
            let cfg = RunConfig {
                margin: Some(margin),
                trace: true,
                ..RunConfig::default()
            };
            let r = {
                let _countdown = progress.countdown(
                    &format!("[{}/{}] {} for real", i + 1, policies.len(), p.name()),
                    std::time::Duration::from_nanos(w.duration),
                );
                runner::run(&w, &cfg)
            }
            .map_err(|e| {
                crate::commands::run::run_failure(
                    &format!("{} under {}", path.display(), p.name()),
                    &e,
                )
            })?;
            let stop = r.stopped_by.clone();
            reals.push(r);
            if stop.is_some() {
                interrupted = stop;
                break;
            }
        }
    }
    progress.done();

    // The simulated schedules, and per traced real run the prediction table.
    let sim_schedules: Vec<Option<Schedule>> = sims
        .iter()
        .zip(&loaded)
        .map(|(s, w)| Schedule::from_sim(w, s))
        .collect();
    let periodic: Vec<bool> = base.tasks.iter().map(|t| t.period.is_some()).collect();
    let predictions: Vec<Option<Vec<MetricRow>>> = reals
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let t = r.trace.as_ref()?;
            let ss = sim_schedules[i].as_ref()?;
            Some(prediction::compare(&sims[i], ss, t, &periodic))
        })
        .collect();
    let mut drawings = String::new();
    for (i, r) in reals.iter().enumerate() {
        if let Some(t) = &r.trace {
            let name = sims[i].policy.clone();
            let suffix = (policies.len() > 1).then_some(name.as_str());
            if let Some(d) = crate::exports::write_schedule(&t.schedule, &ra.exports, suffix)? {
                let _ = writeln!(drawings, "{name} real run:\n{d}");
            }
        }
    }
    if let Some(out) = &ra.report {
        let page = report_page(&path, &loaded, &sims, &sim_schedules, &reals, &predictions)?;
        crate::atomic::write_atomic(out, page.as_bytes())
            .map_err(|e| Failure::output(format!("cannot write {}: {e}", out.display())))?;
    }

    let text = if args.output.json {
        let platform = ra.platform.as_ref().map(|p| p.display().to_string());
        let prov = |p: Option<Policy>, seed: u64| {
            crate::output::Provenance::of(seed, &args.overrides.to_overrides(p))
                .with("platform", platform.clone().into())
                .with("margin", serde_json::json!(margin))
                .with("real", serde_json::json!(ra.real))
        };
        let encoding = |e: serde_json::Error| Failure::output(format!("cannot encode JSON: {e}"));
        let mut results = Vec::with_capacity(sims.len());
        for ((s, w), p) in sims.iter().zip(&loaded).zip(&policies) {
            results.push(prov(Some(*p), w.seed).stamp(s).map_err(encoding)?);
        }
        let v = serde_json::json!({
            "results": results,
            "real": if ra.real {
                serde_json::Value::Array(reals.iter().map(|r| r.to_json()).collect())
            } else {
                serde_json::Value::Null
            },
            "platform": ra.platform.as_ref().map(|p| p.display().to_string()),
            "prediction": if ra.real {
                serde_json::Value::Array(
                    predictions
                        .iter()
                        .zip(&sims)
                        .map(|(p, s)| serde_json::json!({"policy": s.policy, "metrics": p}))
                        .collect(),
                )
            } else {
                serde_json::Value::Null
            },
        });
        let names: Vec<&str> = policies.iter().map(|p| p.name()).collect();
        let v = prov(None, base.seed)
            .with("policies", serde_json::json!(names))
            .stamp(v)
            .map_err(encoding)?;
        let mut s = serde_json::to_string(&v)
            .map_err(|e| Failure::output(format!("cannot encode JSON: {e}")))?;
        s.push('\n');
        s
    } else if ra.real {
        let mut names = Vec::new();
        let mut cols = Vec::new();
        for (i, s) in sims.iter().enumerate() {
            names.push(format!("{} sim", s.policy));
            cols.push(s.clone());
            if let Some(r) = reals.get(i) {
                names.push(format!("{} real", s.policy));
                cols.push(real_column(r));
            }
        }
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut out = output::render_compare(&base, &refs, &cols);
        out.push('\n');
        if let Some(pf) = &ra.platform {
            let _ = writeln!(out, "simulated with the platform of {}", pf.display());
        }
        if reals.iter().any(|r| r.trace.is_some()) {
            let _ = writeln!(
                out,
                "real columns of traced runs: jobs, misses, switches, preemptions and \
                 migrations counted from the kernel trace, as in the prediction below"
            );
        }
        for r in &reals {
            let _ = write!(
                out,
                "{:<5} real: switches from {} (system-wide), {} by the workers; margin {}",
                r.result.policy, r.switch_source, r.thread_switches, r.margin
            );
            if let Some(d) = &r.dispatcher {
                let _ = write!(
                    out,
                    "; dispatcher {} decisions, median {:.2} us, p99 {:.2} us, {} displaced",
                    d.decisions,
                    d.median_ns as f64 / 1e3,
                    d.p99_ns as f64 / 1e3,
                    d.displaced
                );
            }
            out.push('\n');
        }
        for (i, r) in reals.iter().enumerate() {
            let _ = writeln!(
                out,
                "\nprediction {} (simulated schedule vs the real run's kernel trace, counted alike)",
                sims[i].policy
            );
            match (&predictions[i], &r.trace, &r.trace_unavailable) {
                (Some(rows), Some(t), _) => {
                    out.push_str(&prediction::render(rows));
                    out.push_str(&crate::commands::run::render_trace(t));
                }
                (_, _, Some(why)) => {
                    let _ = writeln!(out, "no trace: {why}");
                }
                _ => {
                    let _ = writeln!(out, "no trace");
                }
            }
        }
        out.push_str(&drawings);
        out
    } else {
        let names: Vec<&str> = policies.iter().map(|p| p.name()).collect();
        output::render_compare(&base, &names, &sims)
    };
    emit(&text, args.output.output.as_deref())?;
    match interrupted.as_deref() {
        Some(why @ ("SIGINT" | "SIGTERM")) => Err(Failure {
            code: if why == "SIGINT" { 130 } else { 143 },
            message: format!("interrupted by {why}: the results printed are partial"),
        }),
        Some(why) => Err(Failure {
            code: 1,
            message: format!("a run was stopped by the {why}: the results printed are partial"),
        }),
        None => Ok(()),
    }
}

/// The `--report` page: per policy the simulated run and the real one (its metrics
/// counted from the trace), the same Gantt window, and the prediction tables.
fn report_page(
    path: &Path,
    loaded: &[Workload],
    sims: &[SimResult],
    sim_schedules: &[Option<Schedule>],
    reals: &[RunResult],
    predictions: &[Option<Vec<MetricRow>>],
) -> Result<String, Failure> {
    let mut real_results = Vec::new();
    for (i, r) in reals.iter().enumerate() {
        if r.trace.is_none() {
            continue;
        }
        let mut res = real_column(r);
        res.policy = format!("{} real", sims[i].policy);
        real_results.push((i, res));
    }
    if real_results.is_empty() {
        return Err(Failure::output(
            "--report: no real run was traced, so there is nothing to compare (see the notes above)",
        ));
    }
    let mut runs = Vec::new();
    let mut tables = Vec::new();
    for (i, res) in &real_results {
        let (Some(ss), Some(t)) = (&sim_schedules[*i], &reals[*i].trace) else {
            continue;
        };
        runs.push(PolicyRun {
            workload: &loaded[*i],
            result: &sims[*i],
            schedule: ss,
        });
        runs.push(PolicyRun {
            workload: &loaded[*i],
            result: res,
            schedule: &t.schedule,
        });
        if let Some(rows) = &predictions[*i] {
            tables.push(PredictionTable {
                policy: sims[*i].policy.clone(),
                rows: prediction::cells(rows),
            });
        }
    }
    let window = crate::commands::report::default_window(&loaded[0])
        .clip(loaded[0].duration)
        .map_err(|e| Failure::input(format!("--report window: {e}")))?;
    Ok(schedlab_trace::report::render(&Report {
        source: format!("{} (simulated and real)", path.display()),
        runs,
        window,
        prediction: tables,
    }))
}
