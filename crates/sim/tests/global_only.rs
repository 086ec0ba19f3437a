//! The global schedulers (SimSo's): every one refuses per-CPU placements with the same
//! message, runs under global placement, and is exactly the set docs/usage.md lists as
//! "global placement only".
use schedlab_model::{Overrides, Placement, Policy, Workload};
use schedlab_sim::{simulate_checked, SimError, SimOptions, PERIODIC_POLICIES};
use std::collections::BTreeSet;
use std::path::Path;

/// Two CPUs, implicit deadlines, whole milliseconds (on every quantum grid), U = 1.2.
const SET: &str = "platform: { cpus: 2, hz: 1000 }
duration: 60ms
tasks:
  - { name: a, runtime: 4ms, period: 10ms }
  - { name: b, runtime: 6ms, period: 15ms }
  - { name: c, runtime: 8ms, period: 20ms }
";

fn run(p: Policy, placement: Placement) -> Result<u64, SimError> {
    let ov = Overrides {
        policy: Some(p),
        placement: Some(placement),
        ..Overrides::default()
    };
    let w = Workload::parse_str(SET, Path::new("set.yaml"), &ov).unwrap();
    simulate_checked(&w, &SimOptions::default()).map(|r| r.deadline_misses)
}

/// The policies docs/usage.md's policy table puts on a "global placement only" row.
fn documented() -> BTreeSet<String> {
    let usage =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/usage.md"))
            .unwrap();
    usage
        .lines()
        .filter(|l| l.starts_with("| deadline") && l.contains("global placement only"))
        .flat_map(|l| l.split('`').skip(1).step_by(2).map(str::to_owned))
        .filter(|n| Policy::parse(n).is_ok())
        .collect()
}

#[test]
fn global_schedulers_refuse_per_cpu_placements_alike_and_are_the_documented_ones() {
    let mut global = BTreeSet::new();
    for &p in &PERIODIC_POLICIES {
        match run(p, Placement::Linux) {
            Err(SimError::Unsupported(m)) => {
                let want = format!("{} is a global scheduler: use placement global", p.name());
                assert_eq!(m, want);
                match run(p, Placement::Partitioned) {
                    Err(SimError::Unsupported(m)) => assert_eq!(m, want, "partitioned"),
                    other => panic!("{} under partitioned: {:?}", p.name(), other),
                }
                // Light enough for every one of them: no miss under global placement.
                assert_eq!(run(p, Placement::Global).unwrap(), 0, "{}", p.name());
                global.insert(p.name().to_owned());
            }
            other => assert!(other.is_ok(), "{} under linux: {:?}", p.name(), other),
        }
    }
    assert_eq!(global.len(), 18, "{global:?}");
    assert_eq!(global, documented());
}
