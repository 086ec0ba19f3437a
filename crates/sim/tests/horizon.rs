//! `duration: hyperperiod` in the simulator: a run short of the feasibility interval can
//! miss nothing and still hide a miss that the whole interval finds; the result says which.

use schedlab_model::time::{MS, S};
use schedlab_model::{Overrides, SimDuration, Workload};
use schedlab_sim::{simulate, SimOptions, SimResult};
use std::path::Path;

/// U = 0.9 + 0.301/3 > 1 on one CPU under EDF. Demand first exceeds the time at the
/// 3 s deadline (300 × 9 ms + 301 ms = 3001 ms > 3000 ms); up to 2 s the 10 ms task
/// alone is due (200 × 9 ms = 1.8 s ≤ 2 s), so 2 s shows no miss. H = 3 s.
const LATE: &str = "
scheduler: {deadline: edf}
tasks:
  - {name: a, runtime: 9ms, period: 10ms}
  - {name: b, runtime: 301ms, period: 3s}
";

fn run(yaml: &str, duration: SimDuration, policy: &str) -> SimResult {
    let ov = Overrides {
        duration: Some(duration),
        policy: Some(schedlab_model::Policy::parse(policy).unwrap()),
        ..Overrides::default()
    };
    let w = Workload::parse_str(yaml, Path::new("late.yaml"), &ov).unwrap();
    simulate(&w, &SimOptions::default()).unwrap()
}

#[test]
fn hyperperiod_finds_the_miss_a_short_run_hides() {
    let short = run(LATE, SimDuration::Fixed(2 * S), "edf");
    assert_eq!(short.deadline_misses, 0);
    assert_eq!(short.hyperperiod_ns, Some(3 * S));
    assert!(!short.horizon_complete);
    let whole = run(LATE, SimDuration::Hyperperiod { cap: 100 * S }, "edf");
    assert_eq!(whole.duration_ns, 3 * S);
    assert!(whole.horizon_complete);
    assert!(whole.deadline_misses > 0);
    // A cap below the interval stops there: no miss yet, and not complete.
    let capped = run(LATE, SimDuration::Hyperperiod { cap: 2 * S }, "edf");
    assert_eq!((capped.duration_ns, capped.deadline_misses), (2 * S, 0));
    assert!(!capped.horizon_complete);
}

#[test]
fn a_clean_whole_interval_is_complete_and_keys_are_in_the_json() {
    // U = 0.9 + 0.1: exactly 1, EDF meets every deadline over H = 3 s.
    let ok = LATE.replace("301ms", "300ms");
    let r = run(&ok, SimDuration::Hyperperiod { cap: 100 * S }, "edf");
    assert_eq!((r.duration_ns, r.deadline_misses), (3 * S, 0));
    assert!(r.horizon_complete);
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["hyperperiod_ns"], 3 * S);
    assert_eq!(v["horizon_complete"], true);
    assert!(v["partition"].is_null());
    // A sporadic set: no hyperperiod, so null, and never complete.
    let sporadic = ok.replace(
        "period: 10ms}",
        "period: 10ms, release: sporadic, jitter: 1ms}",
    );
    let r = run(&sporadic, SimDuration::Fixed(100 * MS), "edf");
    let v = serde_json::to_value(&r).unwrap();
    assert!(v["hyperperiod_ns"].is_null());
    assert_eq!(v["horizon_complete"], false);
}
