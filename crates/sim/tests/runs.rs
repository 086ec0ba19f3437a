//! Whole runs: determinism, `on_miss: abort`, sporadic releases, metrics consistency.
mod common;
use common::*;

const MIXED: &str = "
platform: { cpus: 4, hz: 1000, context_switch: 5us, migration: 20us, tick: 1us }
duration: 2s
seed: 7
tasks:
  - { name: big, count: 4, runtime: 60ms, period: 100ms }
  - { name: small, count: 8, runtime: 5ms, period: 60ms }
  - { name: spor, count: 3, runtime: 2ms, period: 20ms, release: sporadic, jitter: 15ms, exec: { uniform: [500us, 2ms] } }
";

#[test]
fn same_input_and_seed_give_identical_results() {
    for placement in ["global", "partitioned", "linux"] {
        for policy in ["edf", "rm", "rr"] {
            let a = run_yaml(MIXED, policy, placement);
            let b = run_yaml(MIXED, policy, placement);
            let (mut ja, mut jb) = (
                serde_json::to_value(&a).unwrap(),
                serde_json::to_value(&b).unwrap(),
            );
            ja["wall_s"] = 0.into();
            jb["wall_s"] = 0.into();
            assert_eq!(ja, jb, "{policy}/{placement}");
            assert_eq!(a.trace, b.trace);
        }
    }
}

#[test]
fn a_different_seed_changes_sporadic_releases() {
    let a = run_yaml(MIXED, "edf", "global");
    let b = run_yaml(&MIXED.replace("seed: 7", "seed: 8"), "edf", "global");
    assert_ne!(
        a.tasks[12].jobs + a.tasks[13].jobs * 1000,
        b.tasks[12].jobs + b.tasks[13].jobs * 1000
    );
}

#[test]
fn metrics_add_up() {
    let r = run_yaml(MIXED, "edf", "linux");
    assert_eq!(r.jobs_released, r.tasks.iter().map(|t| t.jobs).sum::<u64>());
    assert_eq!(
        r.context_switches,
        r.per_cpu.iter().map(|c| c.context_switches).sum::<u64>()
    );
    let busy: f64 = r.per_cpu.iter().map(|c| c.utilisation).sum::<f64>() * r.duration_ns as f64;
    let cpu: u64 = r.tasks.iter().map(|t| t.cpu_time_ns).sum();
    assert!((busy - cpu as f64).abs() < 1.0, "{busy} vs {cpu}");
    let secs = r.duration_ns as f64 / 1e9;
    assert!(
        (r.context_switches_per_cpu_per_s - r.context_switches as f64 / 4.0 / secs).abs() < 1e-9
    );
    // Sporadic inter-arrivals are at least the period.
    for t in &r.tasks[12..] {
        assert!(t.jobs <= 100, "{t:?}");
    }
}

#[test]
fn abort_drops_late_jobs_at_their_deadline() {
    // Overloaded uniprocessor: U = 1.5.
    let yaml = "
platform: { cpus: 1 }
duration: 100ms
on_miss: abort
tasks:
  - { name: a, runtime: 6ms, period: 10ms }
  - { name: b, runtime: 9ms, period: 10ms }
";
    let w = workload(yaml, "edf", "global");
    let r = run(&w);
    assert!(r.jobs_aborted > 0);
    assert_eq!(r.deadline_misses, r.jobs_aborted);
    assert_eq!(r.jobs_completed + r.jobs_aborted, r.jobs_released);
    // No job ever runs past its deadline.
    for s in r.trace.as_ref().unwrap() {
        let period = 10 * MS;
        assert!(s.end <= (s.job + 1) * period, "{s:?}");
    }
    let cont = run(&workload(
        &yaml.replace("on_miss: abort", "on_miss: continue"),
        "edf",
        "global",
    ));
    assert_eq!(cont.jobs_aborted, 0);
    assert!(cont.deadline_misses > 0);
}

#[test]
fn running_in_steps_gives_the_same_result_as_one_run() {
    use schedlab_sim::{engine_for, SimOptions};
    for placement in ["global", "linux"] {
        let w = workload(MIXED, "edf", placement);
        let whole = run(&w);
        let mut e = engine_for(&w, &SimOptions { trace: true }).unwrap();
        for at in [0, 1, 7 * MS, 7 * MS, 500 * MS + 3, 1900 * MS, 5_000 * MS] {
            e.run_until(at);
        }
        let stepped = e.run();
        let (mut a, mut b) = (
            serde_json::to_value(&whole).unwrap(),
            serde_json::to_value(&stepped).unwrap(),
        );
        a["wall_s"] = 0.into();
        b["wall_s"] = 0.into();
        assert_eq!(a, b, "{placement}");
        assert_eq!(whole.trace, stepped.trace, "{placement}");
    }
}
