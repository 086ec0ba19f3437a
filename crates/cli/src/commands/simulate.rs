//! `schedlab simulate FILE`: one workload, one policy.

use crate::cli::SimulateArgs;
use crate::commands::compare_real::merge_platform;
use crate::commands::emit;
use crate::failure::Failure;
use crate::output;
use crate::progress::Progress;
use schedlab_model::workload::parse_spec;
use schedlab_model::{format_ns, Workload};
use schedlab_sim::{engine_for, estimate_events, simulate, simulate_checked, SimError, SimOptions};
use schedlab_sim::{EventEstimate, SimResult};

/// Runs estimated above this many events show their progress (about a second and more).
const PROGRESS_FROM_EVENTS: f64 = 5e6;

/// Load, validate, simulate, print.
pub fn run(args: &SimulateArgs) -> Result<(), Failure> {
    let ov = args.overrides.to_overrides(args.policy);
    let w = match &args.platform {
        None => Workload::load(&args.file, &ov).map_err(Failure::input)?,
        Some(pf) => {
            let text = std::fs::read_to_string(&args.file)
                .map_err(|e| Failure::input(format!("{}: {e}", args.file.display())))?;
            let mut spec = parse_spec(&text, &args.file).map_err(Failure::input)?;
            merge_platform(&mut spec, pf)?;
            Workload::from_spec(spec, &ov)
                .map_err(|m| Failure::input(format!("{}: {m}", args.file.display())))?
        }
    };

    let estimate = estimate_events(&w);
    check_budget(&estimate, args.max_events)
        .map_err(|m| Failure::input(format!("{}: {m}", args.file.display())))?;

    let progress = Progress::new();
    progress.step(&format!(
        "simulating {} under {} ({} on {} CPUs)...",
        w.name,
        crate::output::policies_in_use(&w, w.scheduler.policy.name()),
        format_ns(w.duration),
        w.platform.cpus
    ));
    let opts = SimOptions {
        trace: args.exports.wants_trace(),
    };
    let result = if args.check {
        simulate_checked(&w, &opts)
    } else if estimate.total >= PROGRESS_FROM_EVENTS && progress.on() {
        simulate_in_steps(&w, &opts, &progress)
    } else {
        simulate(&w, &opts)
    };
    progress.done();
    let r = result.map_err(|e| match e {
        SimError::Invariant(_) => Failure::bug(format!("{}: {e}", args.file.display())),
        e => Failure::input(format!("{}: {e}", args.file.display())),
    })?;
    let drawing = crate::exports::write_files(&w, &r, &args.exports)?;

    let mut text = if args.output.json {
        let platform = args.platform.as_ref().map(|p| p.display().to_string());
        let prov = output::Provenance::of(w.seed, &ov).with("platform", platform.into());
        output::json_simulate(&r, &prov)
            .map_err(|e| Failure::output(format!("cannot encode JSON: {e}")))?
    } else {
        output::render_simulate(&w, &r)
    };
    crate::exports::append(drawing, args.output.json, &mut text);
    emit(&text, args.output.output.as_deref())
}

/// Refuse a run estimated above `max_events` (0: no limit), naming the estimate and the
/// flag that allows it.
fn check_budget(estimate: &EventEstimate, max_events: f64) -> Result<(), String> {
    if max_events <= 0.0 || estimate.total <= max_events {
        return Ok(());
    }
    Err(format!(
        "the run would take about {}, over the limit of {max_events:.0e} events: at the \
         simulator's 0.5 to 5 million events per second, {} to {}. Shorten `duration` or \
         lengthen the shortest periods or phases, or pass --max-events {:.0e} (or 0, no \
         limit) to run it anyway",
        estimate.describe(),
        duration_text(estimate.total / 5e6),
        duration_text(estimate.total / 5e5),
        (estimate.total * 2.0).max(1.0)
    ))
}

/// `40 s`, `12 min`, `3.5 h`.
fn duration_text(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// [`simulate`] in 100 steps of simulated time, showing how far it got and the time left
/// (the same schedule: `run_until` stops between instants).
fn simulate_in_steps(
    w: &Workload,
    opts: &SimOptions,
    progress: &Progress,
) -> Result<SimResult, SimError> {
    let mut engine = engine_for(w, opts)?;
    let started = std::time::Instant::now();
    const STEPS: u64 = 100;
    for k in 1..STEPS {
        progress.item(
            k as usize,
            STEPS as usize,
            &format!("steps of {} simulated", format_ns(w.duration / STEPS)),
        );
        engine.run_until(w.duration / STEPS * k);
    }
    let mut r = engine.run();
    r.wall_s = started.elapsed().as_secs_f64();
    Ok(r)
}
