//! `schedlab simulate FILE`: one workload, one policy.

use crate::cli::SimulateArgs;
use crate::commands::compare_real::merge_platform;
use crate::commands::emit;
use crate::failure::Failure;
use crate::output;
use crate::progress::Progress;
use schedlab_model::workload::parse_spec;
use schedlab_model::{format_ns, Workload};
use schedlab_sim::{simulate, simulate_checked, SimError, SimOptions};

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
