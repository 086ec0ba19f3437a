//! `schedlab compare FILE --real [--platform FILE]`: the simulator's prediction and the
//! kernel's measurement side by side, one pair of columns per policy. With
//! `--platform FILE` (from `schedlab calibrate`) the simulator charges this machine's
//! measured context-switch and migration costs (and uses its HZ).

use crate::cli::CompareArgs;
use crate::commands::compare::BUILTIN_TABLE1;
use crate::commands::emit;
use crate::failure::Failure;
use crate::output;
use crate::progress::Progress;
use clap::Args;
use schedlab_linux::runner::{self, RunConfig};
use schedlab_model::spec::WorkloadSpec;
use schedlab_model::workload::parse_spec;
use schedlab_model::{Policy, Workload};
use schedlab_sim::{simulate, SimOptions, SimResult};
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
}

impl RealArgs {
    /// Whether compare must go through this module.
    pub fn active(&self) -> bool {
        self.real || self.platform.is_some()
    }
}

/// Policies compared for real when `--policies` is not given.
pub const REAL_DEFAULT: &[Policy] = &[Policy::Edf, Policy::Llf, Policy::Illf];

/// Replace the workload's hz, context_switch, migration and tick with those of the
/// calibrated platform file `path` (`schedlab calibrate -o FILE`).
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
    Ok(())
}

/// Simulate (with the calibrated platform) and, with `--real`, run every policy.
pub fn run(args: &CompareArgs) -> Result<(), Failure> {
    let ra = &args.real;
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
    let mut policies: Vec<Policy> = Vec::new();
    let requested: &[Policy] = if args.policies.is_empty() {
        if ra.real {
            REAL_DEFAULT
        } else {
            crate::commands::compare::DEFAULT_POLICIES
        }
    } else {
        &args.policies
    };
    for &p in requested {
        if !policies.contains(&p) {
            policies.push(p);
        }
    }

    let progress = Progress::new();
    let mut sims: Vec<SimResult> = Vec::new();
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
        let s = simulate(&w, &SimOptions::default())
            .map_err(|e| Failure::input(format!("{} under {}: {e}", path.display(), p.name())))?;
        sims.push(s);
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

    let text = if args.output.json {
        let v = serde_json::json!({
            "results": sims,
            "real": if ra.real {
                serde_json::Value::Array(reals.iter().map(|r| r.to_json()).collect())
            } else {
                serde_json::Value::Null
            },
            "platform": ra.platform.as_ref().map(|p| p.display().to_string()),
        });
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
                cols.push(r.result.clone());
            }
        }
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut out = output::render_compare(&base, &refs, &cols);
        out.push('\n');
        if let Some(pf) = &ra.platform {
            let _ = writeln!(out, "simulated with the platform of {}", pf.display());
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
