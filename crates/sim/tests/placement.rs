//! Placement: first-fit-decreasing partitioning, affinity, linux push/pull.
mod common;
use common::*;
use schedlab_model::{Overrides, Workload};
use schedlab_sim::{simulate, SimError, SimOptions};
use std::path::Path;

#[test]
fn partitioned_placement_is_first_fit_decreasing() {
    // Utilisations 0.2, 0.6, 0.5, 0.4, 0.3 → sorted 0.6, 0.5, 0.4, 0.3, 0.2:
    // 0.6→cpu0, 0.5→cpu1, 0.4→cpu0 (1.0), 0.3→cpu1 (0.8), 0.2→cpu1 (1.0).
    let yaml = "
platform: { cpus: 2 }
duration: 100ms
tasks:
  - { name: u20, runtime: 2ms, period: 10ms }
  - { name: u60, runtime: 6ms, period: 10ms }
  - { name: u50, runtime: 5ms, period: 10ms }
  - { name: u40, runtime: 4ms, period: 10ms }
  - { name: u30, runtime: 3ms, period: 10ms }
";
    let r = run(&workload(yaml, "edf", "partitioned"));
    let cpus: Vec<Option<usize>> = r.tasks.iter().map(|t| t.cpu).collect();
    assert_eq!(cpus, vec![Some(1), Some(0), Some(1), Some(0), Some(1)]);
    assert_eq!(r.deadline_misses, 0);
    assert_eq!(r.migrations, 0);
    assert!((r.per_cpu[0].utilisation - 1.0).abs() < 1e-9);
}

#[test]
fn partitioning_that_does_not_fit_is_a_clear_error() {
    let yaml = "
platform: { cpus: 2 }
tasks:
  - { name: big, count: 3, runtime: 6ms, period: 10ms }
";
    let w = Workload::parse_str(yaml, Path::new("x.yaml"), &Overrides::default()).unwrap();
    let mut w = w;
    w.scheduler.placement = schedlab_model::Placement::Partitioned;
    match simulate(&w, &SimOptions::default()) {
        Err(SimError::Partition(msg)) => {
            assert!(msg.contains("task big3"), "{msg}");
            assert!(msg.contains("fits on no CPU"), "{msg}");
        }
        other => panic!("expected a partition error, got {other:?}"),
    }
}

#[test]
fn affinity_is_respected_in_every_placement() {
    let yaml = "
platform: { cpus: 3 }
duration: 200ms
tasks:
  - { name: pinned, runtime: 3ms, period: 10ms, affinity: [2] }
  - { name: pair, count: 4, runtime: 4ms, period: 10ms, affinity: [0, 1] }
";
    for placement in ["global", "linux"] {
        let w = workload(yaml, "edf", placement);
        let r = run(&w);
        for s in r.trace.as_ref().unwrap() {
            let allowed = w.tasks[s.task].affinity.as_ref().unwrap();
            assert!(allowed.contains(&s.cpu), "{placement}: {s:?}");
        }
        assert_eq!(r.tasks[0].misses, 0);
    }
}

#[test]
fn linux_placement_pulls_waiting_work_onto_idle_cpus() {
    // All four tasks start on CPU 0's run queue (affinity lets them move): push/pull must
    // spread them so that nobody waits while CPUs idle.
    let yaml = "
platform: { cpus: 2 }
duration: 100ms
tasks:
  - { name: a, runtime: 4ms, period: 10ms }
  - { name: b, runtime: 4ms, period: 10ms }
  - { name: c, runtime: 4ms, period: 10ms }
  - { name: d, runtime: 4ms, period: 10ms }
";
    let w = workload(yaml, "edf", "linux");
    let r = run(&w);
    assert_eq!(r.deadline_misses, 0);
    // Two CPUs, 16 ms of work per 10 ms: both CPUs 80% busy.
    for c in &r.per_cpu {
        assert!((c.utilisation - 0.8).abs() < 1e-9, "{c:?}");
    }
}
