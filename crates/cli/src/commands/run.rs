//! `schedlab run WORKLOAD`: the workload as real threads on this machine's kernel
//! (crates/linux), measured and printed like `simulate`.

use crate::cli::{OutputArgs, OverrideArgs, PolicyArg};
use crate::commands::emit;
use crate::exports::ExportArgs;
use crate::failure::Failure;
use crate::output;
use crate::progress::Progress;
use clap::Args;
use schedlab_linux::job::{calibrate_loop, JobMode};
use schedlab_linux::runner::{self, Backend, RunConfig};
use schedlab_linux::RunResult;
use schedlab_model::registry::{and_list, PolicyInfo, POLICIES};
use schedlab_model::{format_ns, parse_duration, Ns, Policy, Workload};
use std::fmt::Write as _;
use std::path::PathBuf;

const RUN_EXAMPLES: &str = "\
Examples:
  sudo schedlab run examples/table1-2cpu.yaml --policy edf --duration 3s
  sudo schedlab run examples/table1-2cpu.yaml --policy rm --json | jq .deadline_misses
  sudo schedlab run examples/table1-2cpu.yaml --policy llf      # user-space dispatcher
  sudo schedlab run examples/table1-2cpu.yaml --margin 0         # budget = runtime
  sudo schedlab run examples/table1-2cpu.yaml --policy illf --backend scx   # sched_ext BPF
  sudo schedlab run examples/table1-2cpu.yaml --policy rm --trace-out rm.pftrace --jobs-csv rm.csv
                    # the kernel's schedule, traced (private tracefs instance; docs/run.md)

Needs CAP_SYS_NICE (root). Exit status: 0 on success, 2 on bad input, missing privileges
or SCHED_DEADLINE admission refusal, 1 when an output cannot be written (checked before
the run), another real run holds the machine (SCHEDLAB_LOCK_WAIT: seconds to wait,
default 600), or a trace was asked for and could not be
recorded (the result is printed, measured with the counters), 130/143 when interrupted by
SIGINT/SIGTERM (the partial result is still printed, marked \"partial\": true). See
docs/run.md.";

/// `schedlab run`
#[derive(Debug, Args)]
#[command(
    after_help = RUN_EXAMPLES,
    mut_arg("duration", |a| a.help(
        "How long the workload runs on this machine (real time; default: the file's \
         duration), with a unit: ns, us, ms or s (e.g. 3s, 500ms)"
    ))
)]
pub struct RunArgs {
    /// Workload file (YAML, or JSON with a .json extension).
    #[arg(value_name = "WORKLOAD")]
    pub file: PathBuf,

    /// Policy of the periodic tasks (the backends that run each are listed). Default: the
    /// file's, else edf.
    #[arg(long, value_name = "P", value_parser = PolicyArg::described_by(real_backends))]
    pub policy: Option<Policy>,

    // Help text built from the policy registry: which policies each backend runs.
    #[arg(
        long,
        value_name = "kernel|dispatcher|scx",
        value_parser = parse_backend,
        help = backend_help()
    )]
    pub backend: Option<Backend>,

    /// SCHED_DEADLINE budget margin: budget = runtime × (1 + F). Default: the file's
    /// scheduler.dl_margin, else 0.05.
    #[arg(long, value_name = "F", value_parser = parse_margin)]
    pub margin: Option<f64>,

    /// How a job consumes its runtime: thread-cpu (spin until the thread's CPU clock
    /// advanced by the runtime; default) or loop (a busy loop calibrated at start).
    #[arg(long, value_name = "thread-cpu|loop", default_value = "thread-cpu")]
    pub job_mode: String,

    /// Dispatcher tick (decisions happen at every tick, release and completion).
    #[arg(long, value_name = "TIME", value_parser = parse_duration, default_value = "1ms")]
    pub tick: Ns,

    /// Hold a PM QoS CPU latency request of US µs for the run (/dev/cpu_dma_latency, as
    /// cyclictest does; 0 keeps CPUs out of idle states; needs root). Default: the
    /// workload's `platform.pm_qos_latency`, else none.
    #[arg(long, value_name = "US")]
    pub dma_latency: Option<u32>,
    /// Put the fair tasks' threads in their own CPU cgroup weighted 256 × a session
    /// (cgroup v1 `cpu.shares` 262144), so other work on this machine barely disturbs
    /// them; the group is removed at the end (docs/run.md).
    #[arg(long)]
    pub fair_group: bool,

    /// The run's own trace (recorded through a private tracefs instance of the run's
    /// CPUs; needs root): --trace-out, --jobs-csv and --gantt write and draw what the
    /// kernel did, as `simulate` does for the simulator.
    #[command(flatten)]
    pub exports: ExportArgs,

    #[command(flatten)]
    pub overrides: OverrideArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// `--policy` help for one policy: the real backends that run it.
fn real_backends(e: &PolicyInfo) -> String {
    let mut ways: Vec<String> = Vec::new();
    if let Some(k) = e.real.kernel {
        ways.push(format!("kernel {}", k.name()));
    }
    if e.real.dispatcher {
        ways.push("dispatcher".into());
    }
    if e.real.scx {
        ways.push("scx".into());
    }
    if ways.is_empty() {
        ways.push("simulator only".into());
    }
    format!("{} — {}", e.summary, ways.join(", "))
}

/// `--backend` help: each backend with the policies it runs and is the default for.
fn backend_help() -> String {
    let defaults = |b: Backend| -> String {
        let names: Vec<&str> = POLICIES
            .iter()
            .filter(|e| Backend::default_for(e.policy) == Some(b))
            .map(|e| e.name)
            .collect();
        and_list(&names)
    };
    format!(
        "Who schedules the periodic tasks: kernel (its own policies; default for {}), \
         dispatcher (the user-space dispatcher, for {}; default for {}) or scx (schedlab's \
         sched_ext BPF schedulers for {}, and for a workload without periodic tasks its fair \
         tasks under `fair: bfs` or `fair: cfs` with any weight table: Linux >= 6.12 with \
         CONFIG_SCHED_CLASS_EXT, loader scx_schedlab from scx/build.sh; docs/scx.md)",
        defaults(Backend::Kernel),
        and_list(&Backend::Dispatcher.policies()),
        defaults(Backend::Dispatcher),
        and_list(&Backend::Scx.policies()),
    )
}

fn parse_backend(s: &str) -> Result<Backend, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "kernel" => Ok(Backend::Kernel),
        "dispatcher" => Ok(Backend::Dispatcher),
        "scx" => Ok(Backend::Scx),
        _ => Err(format!(
            "unknown backend `{s}` (known: kernel, dispatcher, scx)"
        )),
    }
}

fn parse_margin(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number (a fraction: 0.05 = 5%)"))?;
    if (0.0..=10.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is outside 0..10 (a fraction: 0.05 = 5%)"))
    }
}

/// The run configuration for a loaded workload.
pub fn config(args: &RunArgs, file_has_margin: bool) -> Result<RunConfig, Failure> {
    let job_mode = match args.job_mode.as_str() {
        "thread-cpu" => JobMode::ThreadCpu,
        "loop" => JobMode::Loop {
            iters_per_us: calibrate_loop(50),
        },
        other => {
            return Err(Failure::input(format!(
                "--job-mode: unknown mode `{other}` (known: thread-cpu, loop)"
            )))
        }
    };
    if args.tick < 100_000 {
        return Err(Failure::input("--tick: must be at least 100us"));
    }
    Ok(RunConfig {
        margin: args.margin,
        backend: args.backend,
        job_mode,
        tick: std::time::Duration::from_nanos(args.tick),
        file_margin: file_has_margin,
        dma_latency: args.dma_latency,
        fair_group: args.fair_group,
        trace: args.exports.wants_trace(),
    })
}

/// Whether the workload file sets `scheduler.dl_margin` (the model defaults it to 0,
/// which is not the runner's default).
pub fn file_sets_margin(path: &std::path::Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| schedlab_model::workload::parse_spec(&text, path).ok())
        .and_then(|spec| spec.scheduler.and_then(|s| s.dl_margin))
        .is_some()
}

/// The failure of a real run: bad input (exit 2); when the machine is the cause (a
/// capability, SCHED_DEADLINE admission, a setup call, sched_ext) the message also points
/// to `schedlab doctor`.
pub fn run_failure(what: &str, e: &runner::RunError) -> Failure {
    match e {
        // Another real run holds the machine: docs/errors.md's exit 1, as `latency`.
        runner::RunError::Setup(m) if schedlab_linux::machine_lock::is_busy(m) => Failure {
            code: 1,
            message: format!("{what}: {e}"),
        },
        // Ctrl-C (or SIGTERM) during the set-up: the shell's codes, as for a run stopped.
        runner::RunError::Interrupted(sig) => Failure {
            code: if *sig == "SIGINT" { 130 } else { 143 },
            message: format!("{what}: {e}"),
        },
        runner::RunError::Privilege(_)
        | runner::RunError::Admission(_)
        | runner::RunError::Setup(_) => {
            Failure::host(crate::failure::EXIT_INPUT, format!("{what}: {e}"))
        }
        runner::RunError::Unsupported(m) if m.contains("sched_ext") => {
            Failure::host(crate::failure::EXIT_INPUT, format!("{what}: {e}"))
        }
        _ => Failure::input(format!("{what}: {e}")),
    }
}

/// Refuse, before a real run starts, the outputs it could not write when it ends (an
/// input of the command, a device, a directory, an unwritable directory): a real run
/// cannot be repeated exactly, so its results must not be lost to a bad `-o`.
pub fn check_outputs(paths: &[Option<&std::path::Path>]) -> Result<(), Failure> {
    for path in paths.iter().flatten() {
        crate::atomic::check_target(path)
            .map_err(|e| Failure::output(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

/// Load, run, print.
pub fn run(args: &RunArgs) -> Result<(), Failure> {
    let ov = args.overrides.to_overrides(args.policy);
    let w = Workload::load(&args.file, &ov).map_err(Failure::input)?;
    let mut cfg = config(args, file_sets_margin(&args.file))?;
    args.exports.check_window(w.duration)?;
    check_outputs(&[
        args.output.output.as_deref(),
        args.exports.trace_out.as_deref(),
        args.exports.jobs_csv.as_deref(),
    ])?;
    schedlab_linux::machine_lock::wait_limit().map_err(Failure::input)?;
    // The workload's PM QoS limit is held for real unless --dma-latency overrides it.
    cfg.dma_latency = cfg.dma_latency.or(w
        .platform
        .pm_qos_latency
        .map(|ns| (ns / 1000).min(i32::MAX as u64) as u32));
    let progress = Progress::new();
    progress.step(&format!(
        "running {} under {} for real ({} on {} CPUs)...",
        w.name,
        output::policies_in_use(&w, w.scheduler.policy.name()),
        format_ns(w.duration),
        w.platform.cpus
    ));
    let rr = {
        let _countdown = progress.countdown(
            &format!(
                "running {} under {}",
                w.name,
                output::policies_in_use(&w, w.scheduler.policy.name())
            ),
            std::time::Duration::from_nanos(w.duration),
        );
        runner::run(&w, &cfg)
    };
    progress.done();
    let rr = rr.map_err(|e| run_failure(&args.file.display().to_string(), &e))?;
    // A trace file that cannot be written does not lose the run: the result is still
    // printed, then the error ends the command.
    let (drawing, unwritten) = match &rr.trace {
        Some(t) => match crate::exports::write_schedule(&t.schedule, &args.exports, None) {
            Ok(d) => (d, None),
            Err(e) => (None, Some(e)),
        },
        None => (None, None),
    };
    let mut text = if args.output.json {
        json(&rr, &output::Provenance::of(w.seed, &ov))?
    } else {
        render(&w, &rr)
    };
    crate::exports::append(drawing, args.output.json, &mut text);
    emit(&text, args.output.output.as_deref())?;
    if let Some(e) = unwritten {
        return Err(e);
    }
    if let Some(why) = &rr.trace_unavailable {
        return Err(Failure {
            code: 1,
            message: format!(
                "the run's trace was not recorded, so --trace-out/--jobs-csv/--gantt wrote nothing: {why}"
            ),
        });
    }
    match rr.stopped_by.as_deref() {
        Some(why @ ("SIGINT" | "SIGTERM")) => Err(Failure {
            code: if why == "SIGINT" { 130 } else { 143 },
            message: format!("interrupted by {why}: the result printed is partial"),
        }),
        Some(why) => Err(Failure {
            code: 1,
            message: format!("the run was stopped by the {why}: the result printed is partial"),
        }),
        None => Ok(()),
    }
}

/// The run as one JSON line, with its provenance (`schedlab_version`, `seed`, `options`)
/// after its own keys, as `simulate --json` has them.
pub fn json(rr: &RunResult, p: &output::Provenance) -> Result<String, Failure> {
    let encode = |e: serde_json::Error| Failure::output(format!("cannot encode JSON: {e}"));
    let mut s = serde_json::to_string(&p.stamp(rr.to_json()).map_err(encode)?).map_err(encode)?;
    s.push('\n');
    Ok(s)
}

/// The simulate summary plus what only a real run has.
pub fn render(w: &Workload, rr: &RunResult) -> String {
    let mut out = output::render_simulate(w, &rr.result);
    out.push('\n');
    let _ = writeln!(
        out,
        "real run   kernel {}    hz {}    job mode {}    {}",
        rr.kernel,
        rr.hz.map_or("?".into(), |h| h.to_string()),
        rr.job_mode,
        if rr.partial { "PARTIAL" } else { "complete" }
    );
    if let Some(why) = &rr.stopped_by {
        let _ = writeln!(out, "stopped by {why}");
    }
    let _ = writeln!(
        out,
        "switches   {} context switches (source: {}), {} by the worker threads themselves",
        rr.result.context_switches, rr.switch_source, rr.thread_switches
    );
    if let Some((asked, avail)) = rr.dl_bandwidth {
        let _ = writeln!(
            out,
            "deadline   margin {}    bandwidth asked {asked:.3} of {avail:.3} available",
            rr.margin
        );
    }
    let budgets: Vec<String> = w
        .tasks
        .iter()
        .zip(&rr.budget_ns)
        .zip(&rr.kernel_policy)
        .map(|((t, b), p)| match b {
            Some(b) => format!("{} {p} budget {}", t.name, format_ns(*b)),
            None => format!("{} {p}", t.name),
        })
        .collect();
    let _ = writeln!(out, "policies   {}", budgets.join(", "));
    if let Some(d) = &rr.dispatcher {
        let _ = writeln!(
            out,
            "dispatcher {} decisions, median {:.2} us, p99 {:.2} us; {} changes enforced (median {:.2} us)",
            d.decisions,
            d.median_ns as f64 / 1e3,
            d.p99_ns as f64 / 1e3,
            d.changes,
            d.enforce_median_ns as f64 / 1e3
        );
    }
    if let Some(s) = &rr.scx {
        let stat = |k: &str| s.stats.get(k).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "scx        {} ({}), state {} while running, {} after; {} laxity evaluations, {} swaps, {} zero-laxity preemptions",
            s.scheduler,
            s.options,
            s.state_during,
            s.state_after,
            stat("laxity_evaluations"),
            stat("swaps"),
            stat("zero_laxity_preemptions")
        );
    }
    if let Some(us) = rr.dma_latency_us {
        let _ = writeln!(
            out,
            "pm_qos     /dev/cpu_dma_latency held at {us} us for the run"
        );
    }
    if let Some(t) = &rr.trace {
        out.push_str(&render_trace(t));
    }
    let _ = writeln!(out, "restored   {}", if rr.restored { "yes" } else { "NO" });
    for wn in &rr.warnings {
        let _ = writeln!(out, "warning    {wn}");
    }
    out
}

/// The traced figures of a run: the simulator's metrics counted from the kernel trace,
/// other work on the run's CPUs and the interrupts.
pub fn render_trace(t: &schedlab_linux::traced::TracedRun) -> String {
    let m = &t.metrics;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "traced     {} events, {} switches inferred (lost by the tracer), {} dropped by the buffer",
        t.events, t.inferred_switches, t.lost_events
    );
    let a = &t.agreement;
    let _ = writeln!(
        out,
        "  jobs     {} of the runner's {} jobs seen alike{}; start within {:.1} us (median {:.1}), finish within {:.1} us (median {:.1}) of its records",
        a.same_status,
        a.runner_jobs,
        if a.cut_by_end > 0 {
            format!(" ({} more cut by the run's end)", a.cut_by_end)
        } else {
            String::new()
        },
        a.max_start_diff_ns as f64 / 1e3,
        a.median_start_diff_ns as f64 / 1e3,
        a.max_finish_diff_ns as f64 / 1e3,
        a.median_finish_diff_ns as f64 / 1e3
    );
    let ms = |ns: Option<u64>| ns.map_or("-".into(), |v| format!("{:.3} ms", v as f64 / 1e6));
    let _ = writeln!(
        out,
        "  workload {} jobs, {} completed, {} missed; {:.1} switches/CPU/s ({:.1} task-level); {} preemptions, {} interruptions by other work, {} migrations",
        m.jobs_released,
        m.jobs_completed,
        m.deadline_misses,
        m.context_switches_per_cpu_per_s,
        m.task_switches_per_cpu_per_s,
        m.preemptions,
        m.interruptions,
        m.migrations
    );
    let _ = writeln!(
        out,
        "  response median {}; release-to-start median {}, max {}",
        ms(m.median_response_ns),
        ms(m.median_start_latency_ns),
        ms(m.max_start_latency_ns)
    );
    for o in &t.other {
        let top: Vec<String> = o
            .busiest
            .iter()
            .map(|(c, ns)| format!("{c} {:.2} ms", *ns as f64 / 1e6))
            .collect();
        let _ = writeln!(
            out,
            "  other    {}: {} threads, {} switch-ins, {:.2} ms ({})",
            o.kind,
            o.threads,
            o.switches_in,
            o.cpu_ns as f64 / 1e6,
            top.join(", ")
        );
    }
    for i in t.interrupts.iter().filter(|i| i.count > 0) {
        let _ = writeln!(
            out,
            "  irq      {}: {} ({} on a workload thread), {:.2} ms",
            i.kind,
            i.count,
            i.on_workload,
            i.time_ns as f64 / 1e6
        );
    }
    out
}
