//! The invariant checker on workloads that once broke the engine.

use schedlab_model::{Overrides, Placement, Policy, Workload};
use schedlab_sim::{simulate_checked, SimOptions};
use std::path::Path;

fn checked(yaml: &str, policy: &str, placement: &str) -> schedlab_sim::SimResult {
    let ov = Overrides {
        policy: Some(Policy::parse(policy).unwrap()),
        placement: Some(Placement::parse(placement).unwrap()),
        ..Overrides::default()
    };
    let w = Workload::parse_str(yaml, Path::new("checker.yaml"), &ov).unwrap();
    simulate_checked(&w, &SimOptions::default())
        .unwrap_or_else(|e| panic!("{policy}/{placement}: {e}"))
}

/// Three sleepers on two CPUs under global placement: the idle CPU's load balance pulled
/// the task just picked for the other CPU (not on it yet), leaving it the current task
/// of two run queues. EEVDF then inserted it twice in its timeline and overflowed the
/// stack (`Timeline::split`) or looped in `earliest_eligible`.
#[test]
fn global_placement_never_pulls_a_task_picked_for_another_cpu() {
    for fair in ["eevdf", "cfs"] {
        let yaml = format!(
            "platform: {{ cpus: 2 }}\nduration: 10s\nscheduler: {{ fair: {fair} }}\ntasks:\n\
             - {{ name: a, class: normal, run: 5ms, sleep: 7ms }}\n\
             - {{ name: b, class: normal, run: 2ms, sleep: 5ms }}\n\
             - {{ name: c, class: normal, run: 2ms, sleep: 7ms }}\n"
        );
        for policy in ["edf", "llf", "illf"] {
            let r = checked(&yaml, policy, "global");
            // Demand: a 5/12, b 2/7, c 2/9 of a CPU each, 0.93 CPU in all on 2 CPUs:
            // every burst is served, so each task gets its demand within one burst.
            let cpu: Vec<f64> = r
                .tasks
                .iter()
                .map(|t| t.cpu_time_ns as f64 / 10e9)
                .collect();
            for (got, want) in cpu.iter().zip([5.0 / 12.0, 2.0 / 7.0, 2.0 / 9.0]) {
                assert!((got - want).abs() < 0.01, "{fair}/{policy}: {cpu:?}");
            }
        }
    }
}
