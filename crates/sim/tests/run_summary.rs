//! `Engine::run_summary` (a sweep's row: eight numbers of a run) gives each number as
//! `simulate`'s full result does, for sets with and without misses, under global and
//! partitioned placement, EDF and LLF, and with a horizon short of the hyperperiod.
//! (Debug builds also compare inside `run_summary` itself.)

use schedlab_model::{Overrides, Placement, Policy, Workload};
use schedlab_sim::engine::summary::RunSummary;
use schedlab_sim::{engine_for, simulate, SimOptions};
use std::path::Path;

mod common;

fn workload(policy: &str, placement: &str, n: usize, cpus: usize, load: f64) -> Workload {
    let y = common::periodic_set(n, cpus, load * cpus as f64, 300, n as u64 + 7);
    let ov = Overrides {
        policy: Some(Policy::parse(policy).unwrap()),
        placement: Some(Placement::parse(placement).unwrap()),
        ..Overrides::default()
    };
    Workload::parse_str(&y, Path::new("summary.yaml"), &ov).unwrap()
}

#[test]
fn the_summary_equals_the_full_results_numbers() {
    let mut misses = 0;
    for (policy, placement) in [
        ("edf", "global"),
        ("llf", "global"),
        ("edf", "linux"),
        ("rm", "partitioned"),
    ] {
        for load in [0.6, 0.95, 1.3] {
            if placement == "partitioned" && load > 1.0 {
                continue; // no partition: not a run
            }
            let w = workload(policy, placement, 12, 3, load);
            let opts = SimOptions::default();
            let full = simulate(&w, &opts).unwrap();
            let summary = engine_for(&w, &opts).unwrap().run_summary();
            let want = RunSummary::of(&full);
            assert_eq!(
                summary.context_switches_per_cpu_per_s.to_bits(),
                want.context_switches_per_cpu_per_s.to_bits(),
                "{policy}@{placement} at {load}"
            );
            assert_eq!(summary, want, "{policy}@{placement} at {load}");
            assert!(summary.events > 0 && summary.scheduler_invocations > 0);
            misses += summary.deadline_misses;
        }
    }
    // The overloaded sets miss: the misses' count (unfinished jobs included) is compared.
    assert!(misses > 0);
}
