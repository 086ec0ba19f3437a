//! 64-bit edges of simulated time: a run as long as `u64::MAX` ns (which the engine can
//! now reach, since ticks nothing needs are counted instead of simulated) must neither
//! overflow nor invent misses for jobs whose deadline lies past the end of time.

use schedlab_model::{Overrides, Workload};
use schedlab_sim::{simulate, SimOptions};
use std::path::Path;

fn run(yaml: &str, policy: &str, placement: &str) -> schedlab_sim::SimResult {
    let ov = Overrides {
        policy: Some(schedlab_model::Policy::parse(policy).unwrap()),
        placement: Some(schedlab_model::Placement::parse(placement).unwrap()),
        ..Overrides::default()
    };
    let w = Workload::parse_str(yaml, Path::new("edges.yaml"), &ov).unwrap();
    simulate(&w, &SimOptions::default()).unwrap()
}

#[test]
fn a_run_to_the_end_of_time_does_not_overflow() {
    let yaml = "platform: { cpus: 2, hz: 1000 }\nduration: 18446744073709551615ns\n\
                tasks:\n  - { name: a, runtime: 1ms, period: 1000000s }\n";
    for placement in ["global", "partitioned"] {
        let r = run(yaml, "edf", placement);
        // Releases at 0, 1e15, ... up to the last one before u64::MAX ns.
        assert_eq!(r.jobs_released, 18_447, "{placement}");
        assert_eq!(r.jobs_completed, 18_447, "{placement}");
        // The last job's deadline (release + 1e15 ns) is past u64::MAX: not a miss.
        assert_eq!(r.deadline_misses, 0, "{placement}");
        // Every tick is counted as processed, none simulated.
        assert!(r.events > 18_446_744_073_709, "{placement}: {}", r.events);
    }
}

/// Fair classes at 64-bit extremes: a base slice and a run near 2^61 ns with the
/// lightest and heaviest weights. `eevdf: { base_slice: 18446744073s }` once panicked
/// (`min > max` in the lag clamp: the limit wrapped negative); vruntimes now saturate
/// instead of wrapping (overflow checks are on in test builds). BFS is left out: its
/// slice (`rr_interval`, at most 1 s) expires exactly, so such a run is 2^31 real
/// decisions, not an edge case.
#[test]
fn fair_classes_survive_slices_and_runs_near_the_limit() {
    let big = "2305843009213693951ns"; // 2^61 - 1
    for fair in ["cfs", "eevdf"] {
        let yaml = format!(
            "platform: {{ cpus: 2, hz: 0 }}\nduration: {big}\n\
             scheduler: {{ fair: {fair}, eevdf: {{ base_slice: {big} }}, \
             cfs: {{ latency: {big}, min_granularity: {big}, wakeup_granularity: {big} }} }}\n\
             tasks:\n  - {{ name: light, nice: 19 }}\n  - {{ name: heavy, nice: -20 }}\n  \
             - {{ name: idle, class: idle }}\n  - {{ name: s, run: 1ms, sleep: {big} }}\n"
        );
        let r = run(&yaml, "edf", "linux");
        let total: u128 = r.tasks.iter().map(|t| t.cpu_time_ns as u128).sum();
        assert!(total <= 2 * ((1u128 << 61) - 1), "{fair}: {total}");
        assert_eq!(r.deadline_misses, 0, "{fair}");
    }
}
