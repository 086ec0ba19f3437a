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
