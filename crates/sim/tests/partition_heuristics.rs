//! `scheduler.partition`: first-, best- and worst-fit decreasing and SimSo's load
//! balancing, on a set where all four give different partitions (worked by hand below).
mod common;
use common::*;
use schedlab_model::{Overrides, Workload};
use std::path::Path;

/// Utilisations 0.1, 0.3, 0.6, 0.8 in workload order on 3 CPUs.
/// Decreasing order: a8, a6, a3, a1.
/// - first fit: a8→0, a6→1, a3→1 (0.9), a1→0 (0.9)
/// - best fit (most loaded CPU where it fits): a8→0, a6→1, a3→1 (0 is 0.8+0.3 > 1),
///   a1→1 (0.9 + 0.1 = 1, exactly full)
/// - worst fit (least loaded): a8→0, a6→1, a3→2, a1→2 (0.3 is the least)
/// - load balance, workload order, no test: a1→0, a3→1, a6→2, a8→0 (0.1 is the least)
const SET: &str = "
platform: { cpus: 3 }
duration: 100ms
tasks:
  - { name: a1, runtime: 1ms, period: 10ms }
  - { name: a3, runtime: 3ms, period: 10ms }
  - { name: a6, runtime: 6ms, period: 10ms }
  - { name: a8, runtime: 8ms, period: 10ms }
";

fn placed(policy: &str, heuristic: Option<&str>) -> (Vec<usize>, String, bool) {
    let mut yaml = SET.to_string();
    if let Some(h) = heuristic {
        yaml = format!("scheduler: {{ partition: {h} }}\n{yaml}");
    }
    let r = run(&workload(&yaml, policy, "partitioned"));
    let cpus = r
        .tasks
        .iter()
        .map(|t| t.cpu.expect("partitioned task has a CPU"))
        .collect();
    let p = r.partition.expect("partitioned run reports its partition");
    (cpus, p.method, p.certified)
}

#[test]
fn each_heuristic_places_as_worked_by_hand() {
    assert_eq!(
        placed("edf", None),
        (vec![0, 1, 1, 0], "ffd-edf".into(), true)
    );
    assert_eq!(
        placed("edf", Some("ffd")),
        (vec![0, 1, 1, 0], "ffd-edf".into(), true)
    );
    assert_eq!(
        placed("edf", Some("best-fit-decreasing")),
        (vec![1, 1, 1, 0], "bfd-edf".into(), true)
    );
    assert_eq!(
        placed("edf", Some("wfd")),
        (vec![2, 2, 1, 0], "wfd-edf".into(), true)
    );
    assert_eq!(
        placed("rm", Some("worst-fit-decreasing")),
        (vec![2, 2, 1, 0], "wfd-rm".into(), true)
    );
    assert_eq!(
        placed("edf", Some("load-balance")),
        (vec![0, 1, 2, 0], "load-balance".into(), false)
    );
    assert_eq!(
        placed("rm", Some("lb")),
        (vec![0, 1, 2, 0], "load-balance".into(), false)
    );
}

#[test]
fn fifo_falls_back_to_the_load_fit_of_the_same_kind() {
    // No uniprocessor test for fifo: the load-only fit, not certified.
    assert_eq!(
        placed("fifo", Some("wfd")),
        (vec![2, 2, 1, 0], "load-wfd".into(), false)
    );
    assert_eq!(
        placed("fifo", Some("bfd")),
        (vec![1, 1, 1, 0], "load-bfd".into(), false)
    );
}

#[test]
fn load_balance_does_not_refuse_an_overloaded_cpu() {
    // 0.6 × 3 on 2 CPUs: a→0, b→1, c→0 (1.2): c's jobs miss, as in SimSo's LB_P_EDF.
    let yaml = "
platform: { cpus: 2 }
duration: 100ms
on_miss: abort
scheduler: { partition: load-balance }
tasks:
  - { name: a, runtime: 6ms, period: 10ms }
  - { name: b, runtime: 6ms, period: 10ms }
  - { name: c, runtime: 6ms, period: 10ms }
";
    let r = run(&workload(yaml, "edf", "partitioned"));
    let cpus: Vec<Option<usize>> = r.tasks.iter().map(|t| t.cpu).collect();
    assert_eq!(cpus, vec![Some(0), Some(1), Some(0)]);
    assert!(r.deadline_misses > 0);
    assert_eq!(r.tasks[1].misses, 0);
}

#[test]
fn an_unknown_heuristic_names_the_known_ones() {
    let yaml = format!("scheduler: {{ partition: next-fit }}\n{SET}");
    let err = Workload::parse_str(&yaml, Path::new("w.yaml"), &Overrides::default())
        .unwrap_err()
        .to_string();
    for part in [
        "scheduler.partition",
        "unknown heuristic `next-fit`",
        "first-fit-decreasing (ffd)",
        "best-fit-decreasing (bfd)",
        "worst-fit-decreasing (wfd)",
        "load-balance (lb)",
    ] {
        assert!(err.contains(part), "{part} not in: {err}");
    }
}
