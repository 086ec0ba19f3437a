//! What a result reports beyond the schedule (issue 27): `scheduler_invocations`, the
//! scheduling decisions the engine took, and `scheduler_structure`, what the policy built
//! from the task set (RUN's reduction tree, U-EDF's allotments, DP-Wrap's first slice,
//! EDHS's split tasks). Every count and structure here is worked by hand.
mod common;
use common::workload;
use schedlab_sim::policy::run::for_workload;
use schedlab_sim::{simulate_checked, SimOptions, SimResult};
use serde_json::json;

fn run(yaml: &str, policy: &str, placement: &str) -> SimResult {
    simulate_checked(
        &workload(yaml, policy, placement),
        &SimOptions { trace: false },
    )
    .unwrap()
}

/// Two tasks on one CPU: a (1 ms every 4 ms) and b (2 ms every 6 ms), 12 ms.
const TWO: &str = "
platform: { cpus: 1 }
duration: 12ms
tasks:
  - { name: a, runtime: 1ms, period: 4ms }
  - { name: b, runtime: 2ms, period: 6ms }
";

/// EDF on one CPU decides once per instant at which something happens there: releases
/// at 0 (both), 4 (a), 6 (b), 8 (a); completions at 1 (a), 3 (b), 5 (a), 8 (b, with a's
/// release), 9 (a). That is 0, 1, 3, 4, 5, 6, 8, 9: 8 decisions (none at 12, the end).
/// One CPU makes global placement's one pass per instant and the per-CPU decision of
/// the other placements the same count.
#[test]
fn edf_on_one_cpu_decides_once_per_instant_with_an_event() {
    for placement in ["global", "partitioned", "linux"] {
        let r = run(TWO, "edf", placement);
        assert_eq!(r.scheduler_invocations, 8, "{placement}");
        assert_eq!(r.scheduler_structure, None, "{placement}");
    }
}

/// PD2 at a 1 ms quantum (hz 0: the default quantum is 1 ms) decides at every quantum
/// boundary, 0 to 11 ms: 12 decisions where EDF takes 8 (every release and completion of
/// this set falls on a boundary, so there is no other instant). Over 100 ms: 100.
#[test]
fn pd2_decides_at_every_quantum() {
    assert_eq!(run(TWO, "pd2", "global").scheduler_invocations, 12);
    let long = TWO.replace("12ms", "100ms");
    assert_eq!(run(&long, "pd2", "global").scheduler_invocations, 100);
    assert!(run(&long, "edf", "global").scheduler_invocations < 100);
}

/// Two CPUs, a (3 ms every 4 ms, u 0.75) and b (2 ms every 6 ms): they do not fit on one
/// CPU, so partitioning puts a on CPU 0 and b on CPU 1. Per-CPU decisions: CPU 0 at 0,
/// 3, 4, 7, 8, 11 (a's releases and completions), CPU 1 at 0, 2, 6, 8: 10. Global
/// placement takes one pass per instant of either: 0, 2, 3, 4, 6, 7, 8, 11: 8.
#[test]
fn per_cpu_decisions_count_per_cpu_and_a_global_pass_once() {
    let set = "
platform: { cpus: 2 }
duration: 12ms
tasks:
  - { name: a, runtime: 3ms, period: 4ms }
  - { name: b, runtime: 2ms, period: 6ms }
";
    let p = run(set, "edf", "partitioned");
    assert_eq!(
        p.partition.as_ref().unwrap().cpus,
        [vec!["a".to_string()], vec!["b".to_string()]]
    );
    assert_eq!(p.scheduler_invocations, 10);
    assert_eq!(run(set, "edf", "global").scheduler_invocations, 8);
}

/// Five tasks of rate 0.6 on three CPUs: the reduction tree of `servers.rs`, whose
/// display form is checked there line by line. Servers 0-4 are the task leaves, 5-9 their
/// packed servers (level 0), 10-14 the duals (level 1), 15 = {10, 11} and 16 = {12, 13}
/// at 4/5 and 17 = {14} at 2/5 (level 1), 18-20 their duals (level 2) and 21 the unit
/// server packing 20, 18, 19 (decreasing rates: 3/5, 1/5, 1/5).
const FIVE: &str = "
platform: { cpus: 3 }
duration: 30ms
tasks:
  - { name: t1, runtime: 3ms, period: 5ms }
  - { name: t2, runtime: 6ms, period: 10ms }
  - { name: t3, runtime: 9ms, period: 15ms }
  - { name: t4, runtime: 6ms, period: 10ms }
  - { name: t5, runtime: 3ms, period: 5ms }
";

#[test]
fn run_reports_its_reduction_tree() {
    let r = run(FIVE, "run", "global");
    let s = r.scheduler_structure.expect("run reports its tree");
    assert_eq!(s["kind"], "run-reduction-tree");
    let servers = s["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 22);
    assert_eq!(
        servers[0],
        json!({"id": 0, "label": "t1", "kind": "task", "rate": "3/5", "utilisation": 0.6,
               "level": 0, "parent": 5, "children": [], "task": "t1"})
    );
    assert_eq!(
        servers[10],
        json!({"id": 10, "label": "S10*", "kind": "dual", "rate": "2/5", "utilisation": 0.4,
               "level": 1, "parent": 15, "children": [5], "task": null})
    );
    assert_eq!(
        servers[15],
        json!({"id": 15, "label": "S15", "kind": "pack", "rate": "4/5", "utilisation": 0.8,
               "level": 1, "parent": 18, "children": [10, 11], "task": null})
    );
    assert_eq!(
        servers[21],
        json!({"id": 21, "label": "S21", "kind": "pack", "rate": "1", "utilisation": 1.0,
               "level": 2, "parent": null, "children": [20, 18, 19], "task": null})
    );
    let levels: Vec<u64> = servers
        .iter()
        .map(|x| x["level"].as_u64().unwrap())
        .collect();
    assert_eq!(
        levels,
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2]
    );
    let rates: Vec<&str> = servers[15..21]
        .iter()
        .map(|x| x["rate"].as_str().unwrap())
        .collect();
    assert_eq!(rates, ["4/5", "4/5", "2/5", "1/5", "1/5", "3/5"]);
    assert_eq!(s["subsystems"], json!([{"root": 21, "cpus": [0, 1, 2]}]));
    // The text is the tree's display form, what `simulate` prints.
    let tree = for_workload(&workload(FIVE, "run", "global")).unwrap();
    assert_eq!(s["text"], tree.tree().to_string());
}

/// DP-Wrap, two CPUs, a and b (3 ms every 5 ms), c (4 ms every 10 ms). The first slice
/// runs from 0 to the earliest deadline, 5 ms; the shares are u × 5 ms: 3, 3 and 2 ms,
/// wrapped in task order: CPU 0 runs a over [0, 3) and b over [3, 5); b's last 1 ms goes
/// to the start of CPU 1, then c over [1, 3), and CPU 1 idles from 3 to 5.
#[test]
fn dp_wrap_reports_its_first_slice() {
    let set = "
platform: { cpus: 2 }
duration: 10ms
tasks:
  - { name: a, runtime: 3ms, period: 5ms }
  - { name: b, runtime: 3ms, period: 5ms }
  - { name: c, runtime: 4ms, period: 10ms }
";
    let r = run(set, "dp-wrap", "global");
    const MS: u64 = 1_000_000;
    let piece = |t: &str, s: u64, e: u64| json!({"task": t, "start_ns": s * MS, "end_ns": e * MS});
    assert_eq!(
        r.scheduler_structure.unwrap(),
        json!({
            "kind": "dp-wrap-slice",
            "start_ns": 0,
            "end_ns": 5 * MS,
            "cpus": [[piece("a", 0, 3), piece("b", 3, 5)], [piece("b", 0, 1), piece("c", 1, 3)]],
            "text": "slice [0, 5ms):\n  cpu0: a [0, 3ms) b [3ms, 5ms)\n  cpu1: b [0, 1ms) c [1ms, 3ms)\n",
        })
    );
    assert_eq!(r.deadline_misses, 0);
}

/// U-EDF on the same set at 0 (utilisations 0.6, 0.6, 0.4; EDF order a, b, c):
/// - a: min(5 − 0, 3) = 3 ms on processor 0, nothing left for processor 1;
/// - b: on 0, 5 − al(a,0) − res(a,0) = 5 − 3 − 0 = 2 ms (res is 0 between equal deadlines);
///   on 1, min(5 − 0 − 2, 3 − 2) = 1 ms;
/// - c (deadline 10): on 0, res(a,0) = 5 × 0.6 = 3 and res(b,0) = 5 × (1 − 0.6) = 2 leave
///   10 − (3 + 3) − (2 + 2) = 0; on 1, res(b,1) = 5 × 0.2 = 1 leaves 10 − (0 + 0) − (1 + 1)
///   = 8, so min(8, 4) = 4 ms.
///
/// EDF-D selects a on processor 0 and b on processor 1 (its 1 ms there); c waits.
#[test]
fn u_edf_reports_its_first_allotments() {
    let set = "
platform: { cpus: 2 }
duration: 10ms
tasks:
  - { name: a, runtime: 3ms, period: 5ms }
  - { name: b, runtime: 3ms, period: 5ms }
  - { name: c, runtime: 4ms, period: 10ms }
";
    let s = run(set, "u-edf", "global").scheduler_structure.unwrap();
    const MS: i64 = 1_000_000;
    assert_eq!(s["kind"], "u-edf-allotments");
    assert_eq!(s["at_ns"], 0);
    assert_eq!(s["virtual_processors"], 2);
    assert_eq!(
        s["tasks"],
        json!([
            {"task": "a", "utilisation": 0.6, "reserved_from": 0.0, "deadline_ns": 5 * MS,
             "allotment_ns": [3 * MS, 0], "selected_on": 0},
            {"task": "b", "utilisation": 0.6, "reserved_from": 0.6, "deadline_ns": 5 * MS,
             "allotment_ns": [2 * MS, MS], "selected_on": 1},
            {"task": "c", "utilisation": 0.4, "reserved_from": 1.2, "deadline_ns": 10 * MS,
             "allotment_ns": [0, 4 * MS], "selected_on": null},
        ])
    );
}

/// EDHS, three tasks of 0.6 on two CPUs: first fit puts a on CPU 0 and b on CPU 1; c fits
/// nowhere and is split over the spare capacity in CPU order: 0.4 on CPU 0 (budget
/// 0.4 × 5 ms = 2 ms), the remaining 0.2 on CPU 1 (1 ms).
#[test]
fn edhs_reports_its_split_tasks() {
    let set = "
platform: { cpus: 2 }
duration: 10ms
tasks:
  - { name: a, runtime: 3ms, period: 5ms }
  - { name: b, runtime: 3ms, period: 5ms }
  - { name: c, runtime: 3ms, period: 5ms }
";
    let s = run(set, "edhs", "global").scheduler_structure.unwrap();
    assert_eq!(
        s,
        json!({
            "kind": "edhs-partition",
            "cpus": [["a"], ["b"]],
            "split": [{"task": "c", "period_ns": 5_000_000, "portions": [
                {"cpu": 0, "budget_ns": 2_000_000, "share": 0.4},
                {"cpu": 1, "budget_ns": 1_000_000, "share": 0.2},
            ]}],
            "text": "  cpu0: [a]\n  cpu1: [b]\n  split c: cpu0 2ms, cpu1 1ms\n",
        })
    );
}
