//! Random periodic task sets with short hyperperiods, and the workload text that
//! simulates them: what the tests of the analysis against the simulator share
//! (analysis_agreement.rs, analysis_global.rs, partition_certified.rs), and the random
//! sets the global schedulers' tests run (simso_priority.rs, simso_laxity.rs).
#![allow(dead_code)]

use schedlab_analysis::{from_workload, generate, Deadlines, GenSpec, Method, Periods, RtTask};
use schedlab_model::{Overrides, Workload};
use std::path::Path;

/// Milliseconds in ns.
pub const MS: u64 = 1_000_000;
/// Periods whose hyperperiod is 200 ms, so simulations over it are short.
pub const PERIODS: [u64; 6] = [10 * MS, 20 * MS, 25 * MS, 40 * MS, 50 * MS, 100 * MS];

/// `tasks` RandFixedSum tasks of total utilisation `u` with periods from [`PERIODS`], as
/// the analysis reads them from the generated workload file.
pub fn random_set(
    tasks: usize,
    cpus: usize,
    u: f64,
    seed: u64,
    deadlines: Deadlines,
) -> Vec<RtTask> {
    let spec = GenSpec {
        tasks,
        cpus,
        utilization: u,
        method: Method::Randfixedsum,
        periods: Periods::Choice(PERIODS.to_vec()),
        deadlines,
        seed,
        ..GenSpec::default()
    };
    let set = generate(&spec).unwrap();
    let w =
        Workload::parse_str(&set.to_yaml(), Path::new("g.yaml"), &Overrides::default()).unwrap();
    from_workload(&w).unwrap()
}

/// Implicit deadlines, or constrained ones drawn down to `min_ratio` of the slack.
pub fn deadlines(constrained: bool, min_ratio: f64) -> Deadlines {
    if constrained {
        Deadlines::Constrained { min_ratio }
    } else {
        Deadlines::Implicit
    }
}

/// A workload file of `ts` on `cpus` CPUs, with `head` (top-level lines such as
/// `duration:` or a `scheduler:` block, each ending in a newline) before its tasks.
pub fn yaml_of(ts: &[RtTask], cpus: usize, head: &str) -> String {
    let mut y = format!("platform: {{ cpus: {cpus} }}\n{head}tasks:\n");
    for t in ts {
        y += &format!(
            "  - {{ name: {}, runtime: {}ns, period: {}ns, deadline: {}ns }}\n",
            t.name, t.c, t.t, t.d
        );
    }
    y
}

/// A random implicit-deadline set ([`random_set`]) as a workload of 200 ms (its
/// hyperperiod) under `policy` with global placement.
pub fn global_workload(tasks: usize, cpus: usize, u: f64, seed: u64, policy: &str) -> Workload {
    let ts = random_set(tasks, cpus, u, seed, deadlines(false, 1.0));
    let yaml = yaml_of(&ts, cpus, "duration: 200ms\n");
    let ov = Overrides {
        policy: Some(schedlab_model::Policy::parse(policy).unwrap()),
        placement: Some(schedlab_model::Placement::Global),
        ..Overrides::default()
    };
    Workload::parse_str(&yaml, Path::new("g.yaml"), &ov).unwrap()
}
