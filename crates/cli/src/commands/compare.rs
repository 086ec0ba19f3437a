//! `schedlab compare [FILE] --policies a,b,...`: one workload, several policies.

use crate::cli::CompareArgs;
use crate::commands::emit;
use crate::failure::Failure;
use crate::output;
use crate::progress::Progress;
use schedlab_model::{ModelError, Overrides, Policy, Workload};
use schedlab_sim::{simulate, SimError, SimOptions};
use std::path::{Path, PathBuf};

/// Policies compared when `--policies` is not given: every periodic policy of the
/// registry, in its order (the simulator implements them all).
pub const DEFAULT_POLICIES: &[Policy] = &schedlab_sim::PERIODIC_POLICIES;

/// The built-in workload (the seed paper's Table 1 set on 4 CPUs), used without FILE.
pub const BUILTIN_TABLE1: &str = include_str!("../builtin/table1.yaml");

/// Name the built-in workload goes by in messages.
const BUILTIN_NAME: &str = "<built-in table1>";

/// Where the workload comes from.
enum Source {
    File(PathBuf),
    Builtin,
}

impl Source {
    fn load(&self, ov: &Overrides) -> Result<Workload, ModelError> {
        match self {
            Source::File(p) => Workload::load(p, ov),
            Source::Builtin => Workload::parse_str(BUILTIN_TABLE1, Path::new(BUILTIN_NAME), ov),
        }
    }

    fn display(&self) -> String {
        match self {
            Source::File(p) => p.display().to_string(),
            Source::Builtin => BUILTIN_NAME.into(),
        }
    }
}

/// The default policies `w`'s placement allows: the global schedulers (SimSo's) refuse
/// per-CPU placements, so under `linux` or `partitioned` they are left out unless named
/// with `--policies` (where the refusal is reported).
pub fn default_policies_for(w: &Workload) -> Vec<Policy> {
    DEFAULT_POLICIES
        .iter()
        .copied()
        .filter(|&p| {
            let mut w = w.clone();
            w.scheduler.policy = p;
            let built = schedlab_sim::registry::sim_policy(p).map(|e| (e.build)(&w));
            !matches!(built, Some(Err(SimError::Unsupported(m))) if m.contains("is a global scheduler"))
        })
        .collect()
}

/// The requested policies in order, each once; the default list when none were given.
fn policy_list(requested: &[Policy]) -> Vec<Policy> {
    if requested.is_empty() {
        return DEFAULT_POLICIES.to_vec();
    }
    let mut list: Vec<Policy> = Vec::with_capacity(requested.len());
    for &p in requested {
        if !list.contains(&p) {
            list.push(p);
        }
    }
    list
}

/// Load once to validate, then simulate under every policy and print side by side.
pub fn run(args: &CompareArgs) -> Result<(), Failure> {
    if args.real.active() {
        return crate::commands::compare_real::run(args);
    }
    let source = match &args.file {
        Some(p) => Source::File(p.clone()),
        None => Source::Builtin,
    };
    // Validate the workload (and the overrides) before simulating anything.
    let base = source
        .load(&args.overrides.to_overrides(None))
        .map_err(Failure::input)?;
    let policies = match args.policies.is_empty() {
        true => default_policies_for(&base),
        false => policy_list(&args.policies),
    };

    let progress = Progress::new();
    let mut results = Vec::with_capacity(policies.len());
    let mut provenance = Vec::with_capacity(policies.len());
    for (i, &p) in policies.iter().enumerate() {
        progress.item(
            i + 1,
            policies.len(),
            &format!("simulating {} under {}...", base.name, p.name()),
        );
        let ov = args.overrides.to_overrides(Some(p));
        let w = source.load(&ov).map_err(Failure::input)?;
        provenance.push(output::Provenance::of(w.seed, &ov));
        let r = simulate(&w, &SimOptions::default())
            .map_err(|e| Failure::input(format!("{} under {}: {e}", source.display(), p.name())))?;
        results.push(r);
    }
    progress.done();

    let text = if args.output.json {
        let names: Vec<&str> = policies.iter().map(|p| p.name()).collect();
        let all = output::Provenance::of(base.seed, &args.overrides.to_overrides(None))
            .with("policies", serde_json::json!(names));
        output::json_compare(&results, &provenance, &all)
            .map_err(|e| Failure::output(format!("cannot encode JSON: {e}")))?
    } else {
        let names: Vec<&str> = policies.iter().map(|p| p.name()).collect();
        output::render_compare(&base, &names, &results)
    };
    emit(&text, args.output.output.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_model::{Placement, TaskClass};

    #[test]
    fn builtin_is_the_table1_set_on_4_cpus() {
        let w = Source::Builtin.load(&Overrides::default()).unwrap();
        assert_eq!(w.platform.cpus, 4);
        assert_eq!(w.platform.hz, 1000);
        assert_eq!(w.duration, 3_000_000_000);
        assert_eq!(w.scheduler.placement, Placement::Linux);
        assert_eq!(w.tasks.len(), 12);
        let big: Vec<_> = w
            .tasks
            .iter()
            .filter(|t| t.name.starts_with("big"))
            .collect();
        assert_eq!(big.len(), 4);
        assert!(big
            .iter()
            .all(|t| t.runtime == 60_000_000 && t.period == Some(100_000_000)));
        let small: Vec<_> = w
            .tasks
            .iter()
            .filter(|t| t.name.starts_with("small"))
            .collect();
        assert_eq!(small.len(), 8);
        assert!(small
            .iter()
            .all(|t| t.runtime == 5_000_000 && t.period == Some(60_000_000)));
        assert!(w.tasks.iter().all(|t| t.class == TaskClass::Deadline));
        // 4 × 0.6 + 8 × 1/12 = 3.0667 on 4 CPUs.
        assert!((w.utilisation() - (2.4 + 8.0 / 12.0)).abs() < 1e-9);
    }

    #[test]
    fn builtin_matches_examples_copy_when_present() {
        // examples/table1.yaml is the user-facing copy; it must describe the same workload.
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/table1.yaml");
        if !p.exists() {
            return;
        }
        // Policy, name and seed may differ; platform, duration, placement and tasks may not.
        let ex = Workload::load(&p, &Overrides::default()).unwrap();
        let built = Source::Builtin.load(&Overrides::default()).unwrap();
        let why = "crates/cli/src/builtin/table1.yaml and examples/table1.yaml differ";
        assert_eq!(built.platform, ex.platform, "{why}");
        assert_eq!(built.duration, ex.duration, "{why}");
        assert_eq!(built.scheduler.placement, ex.scheduler.placement, "{why}");
        assert_eq!(built.tasks, ex.tasks, "{why}");
    }

    #[test]
    fn default_policies_are_the_registrys_periodic_policies() {
        let periodic: Vec<Policy> = schedlab_model::POLICIES
            .iter()
            .filter(|e| e.policy.is_periodic())
            .map(|e| e.policy)
            .collect();
        assert_eq!(DEFAULT_POLICIES, periodic);
        assert!(DEFAULT_POLICIES.contains(&Policy::Edzl));
    }

    #[test]
    fn global_schedulers_are_default_columns_under_global_placement_only() {
        let linux = Source::Builtin.load(&Overrides::default()).unwrap();
        let global = Source::Builtin
            .load(&Overrides {
                placement: Some(Placement::Global),
                ..Overrides::default()
            })
            .unwrap();
        let (on_linux, on_global) = (default_policies_for(&linux), default_policies_for(&global));
        assert_eq!(on_global, DEFAULT_POLICIES);
        for p in [
            Policy::EdfUs,
            Policy::Prid,
            Policy::GFl,
            Policy::GFlZl,
            Policy::Mllf,
            Policy::Edcl,
            Policy::Nvnlf,
            Policy::Edhs,
        ] {
            assert!(!on_linux.contains(&p) && on_global.contains(&p), "{p:?}");
        }
        assert!(on_linux.contains(&Policy::Edzl) && on_linux.contains(&Policy::Rr));
    }

    #[test]
    fn policy_list_defaults_and_dedups() {
        assert_eq!(policy_list(&[]), DEFAULT_POLICIES);
        assert_eq!(
            policy_list(&[Policy::Rm, Policy::Edf, Policy::Rm]),
            vec![Policy::Rm, Policy::Edf]
        );
    }
}
