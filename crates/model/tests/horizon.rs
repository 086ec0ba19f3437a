//! `duration: hyperperiod`: the horizon each kind of task set resolves to, worked by hand.

use schedlab_model::horizon::feasibility;
use schedlab_model::time::{MS, S};
use schedlab_model::{Overrides, SimDuration, Workload};
use std::path::Path;

fn load(tasks: &str, duration: &str) -> Workload {
    let text = format!("duration: {duration}\ntasks:\n{tasks}");
    Workload::parse_str(&text, Path::new("w.yaml"), &Overrides::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

const TWO: &str =
    "  - {name: a, runtime: 1ms, period: 10ms}\n  - {name: b, runtime: 1ms, period: 15ms}\n";

#[test]
fn synchronous_set_runs_one_hyperperiod() {
    let w = load(TWO, "hyperperiod");
    assert_eq!(w.duration, 30 * MS);
    let f = feasibility(&w.platform, &w.tasks);
    assert_eq!(f.hyperperiod, Some(30 * MS));
    assert_eq!(f.interval, Some(30 * MS));
    assert!(f.complete(30 * MS) && !f.complete(30 * MS - 1));
}

#[test]
fn offsets_run_the_largest_offset_plus_two_hyperperiods() {
    let tasks = "  - {name: a, runtime: 1ms, period: 10ms, offset: 5ms}\n  - {name: b, runtime: 1ms, period: 15ms, offset: 2ms}\n";
    let w = load(tasks, "hyperperiod");
    // Omax + 2H = 5 + 2 x 30 ms.
    assert_eq!(w.duration, 65 * MS);
}

#[test]
fn the_tick_is_part_of_the_hyperperiod() {
    // Periods of 1.5 ms and a 1 ms tick repeat together every 3 ms; without a tick, 1.5 ms.
    let task = "  - {name: a, runtime: 100us, period: 1.5ms}\n";
    assert_eq!(load(task, "hyperperiod").duration, 3 * MS);
    let text = format!("platform: {{hz: 0}}\nduration: hyperperiod\ntasks:\n{task}");
    let w = Workload::parse_str(&text, Path::new("w.yaml"), &Overrides::default()).unwrap();
    assert_eq!(w.duration, 1_500_000);
}

#[test]
fn the_cap_bounds_the_horizon() {
    // H = lcm(7 s, 11 s) = 77 s: under the default cap of 100 s, above a cap of 20 s.
    let tasks =
        "  - {name: a, runtime: 1ms, period: 7s}\n  - {name: b, runtime: 1ms, period: 11s}\n";
    assert_eq!(load(tasks, "hyperperiod").duration, 77 * S);
    assert_eq!(load(tasks, "\"hyperperiod<=20s\"").duration, 20 * S);
    // H = 143 s: beyond the default cap, so 100 s, and the run is not complete.
    let tasks =
        "  - {name: a, runtime: 1ms, period: 11s}\n  - {name: b, runtime: 1ms, period: 13s}\n";
    let w = load(tasks, "hyperperiod");
    assert_eq!(w.duration, 100 * S);
    assert!(!feasibility(&w.platform, &w.tasks).complete(w.duration));
}

#[test]
fn an_lcm_beyond_u64_runs_to_the_cap() {
    // 1000000007 ns and 998244353 ns (two primes) with the 1 ms tick: lcm ≈ 10^24 > u64.
    let tasks = "  - {name: a, runtime: 1ms, period: 1000000007}\n  - {name: b, runtime: 1ms, period: 998244353}\n  - {name: c, runtime: 1ms, period: 1000000009}\n";
    let w = load(tasks, "\"hyperperiod<=3s\"");
    assert_eq!(w.duration, 3 * S);
    let f = feasibility(&w.platform, &w.tasks);
    assert_eq!((f.hyperperiod, f.interval), (None, None));
}

#[test]
fn sporadic_and_random_sets_have_no_hyperperiod() {
    for extra in [
        "release: sporadic, jitter: 1ms",
        "exec: {uniform: [1ms, 2ms]}",
    ] {
        let tasks = format!("  - {{name: a, runtime: 2ms, period: 10ms, {extra}}}\n");
        let text = format!("duration: \"hyperperiod<=2s\"\ntasks:\n{tasks}");
        let w = Workload::parse_str(&text, Path::new("w.yaml"), &Overrides::default())
            .unwrap_or_else(|e| panic!("{extra}: {e}"));
        assert_eq!(w.duration, 2 * S, "{extra}");
        assert_eq!(
            feasibility(&w.platform, &w.tasks).hyperperiod,
            None,
            "{extra}"
        );
    }
}

#[test]
fn an_override_carries_a_hyperperiod() {
    let text = format!("duration: 5s\ntasks:\n{TWO}");
    let ov = Overrides {
        duration: Some(SimDuration::Hyperperiod { cap: S }),
        ..Overrides::default()
    };
    let w = Workload::parse_str(&text, Path::new("w.yaml"), &ov).unwrap();
    assert_eq!(w.duration, 30 * MS);
}

#[test]
fn a_bad_hyperperiod_names_the_field() {
    let text = format!("duration: \"hyperperiod<=0s\"\ntasks:\n{TWO}");
    let e = Workload::parse_str(&text, Path::new("w.yaml"), &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("w.yaml") && e.contains("duration") && e.contains("longer than 0"),
        "{e}"
    );
    let text = format!("duration: hyperperiodic\ntasks:\n{TWO}");
    let e = Workload::parse_str(&text, Path::new("w.yaml"), &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("duration") && e.contains("hyperperiod<=20s"),
        "{e}"
    );
}
