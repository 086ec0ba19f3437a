//! LLF and ILLF against the seed paper's hand-checkable examples (seeds digest §1.6-1.7).
mod common;
use common::*;
use schedlab_model::Workload;
use schedlab_sim::SimResult;

fn with_illf(yaml: &str, illf: &str) -> String {
    yaml.replacen(
        "tasks:",
        &format!("scheduler: {{ illf: {illf} }}\ntasks:"),
        1,
    )
}

#[test]
fn e1_dhall_llf_and_illf_meet_every_deadline_where_global_edf_misses() {
    let dhall = "
platform: { cpus: 4, hz: 1000 }
duration: 1s
tasks:
  - { name: heavy, runtime: 100ms, period: 100ms }
  - { name: light, count: 4, runtime: 1ms, period: 99ms }
";
    assert!(run_yaml(dhall, "edf", "global").deadline_misses > 0);
    for placement in ["global", "linux"] {
        for policy in ["llf", "illf"] {
            let w = workload(dhall, policy, placement);
            let r = run(&w);
            assert_eq!(r.deadline_misses, 0, "{policy}/{placement}");
            // heavy (laxity 0) runs at once and is never displaced.
            let heavy = segments_of(&w, &r, "heavy");
            assert_eq!(
                (heavy[0].2, heavy[0].3),
                (0.0, 100.0),
                "{policy}/{placement}"
            );
        }
    }
}

#[test]
fn e2_illf_every_pick_gives_1_2_3() {
    let w = workload(E2, "illf", "linux");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 100),
        vec![
            "t1[0]@0 0-5",
            "t2[0]@0 5-10",
            "t3[0]@0 10-70",
            "t1[1]@0 70-75",
            "t2[1]@0 75-80"
        ]
    );
    assert_eq!(
        (r.deadline_misses, r.preemptions, r.dispatches(100 * MS)),
        (0, 0, 5)
    );
}

#[test]
fn e2_illf_swap_at_activation_only_gives_1_3_2_3() {
    let w = workload(&with_illf(E2, "{ swap_at: activation }"), "illf", "linux");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 100),
        vec![
            "t1[0]@0 0-5",
            "t3[0]@0 5-45",
            "t2[0]@0 45-50",
            "t3[0]@0 50-70",
            "t1[1]@0 70-75",
            "t2[1]@0 75-80"
        ]
    );
    assert_eq!(
        (r.deadline_misses, r.preemptions, r.dispatches(100 * MS)),
        (0, 1, 6)
    );
}

#[test]
fn e2_llf_with_rule_3_only_misses() {
    let w = workload(&with_illf(E2, "{ rules: [1, 2, 3] }"), "illf", "linux");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 100),
        vec![
            "t3[0]@0 0-45",
            "t1[0]@0 45-50",
            "t2[0]@0 50-55",
            "t3[0]@0 55-70",
            "t1[1]@0 70-75",
            "t2[1]@0 75-80"
        ]
    );
    assert_eq!(r.tasks[1].misses, 1);
    assert_eq!(r.tasks[1].max_tardiness_ns, 5 * MS);
    assert_eq!(r.tasks[0].misses + r.tasks[2].misses, 0);
    assert_eq!(r.dispatches(100 * MS), 6);
}

#[test]
fn e2_plain_llf_thrashes_without_missing() {
    let w = workload(E2, "llf", "linux");
    let r = run(&w);
    let sched = schedule(&w, &r, 10);
    // t3 runs first (least laxity), then t1, t2, t3 take one tick each (ties go to the
    // least recently scheduled).
    assert_eq!(
        sched[..5],
        [
            "t3[0]@0 0-5",
            "t1[0]@0 5-6",
            "t2[0]@0 6-7",
            "t3[0]@0 7-8",
            "t1[0]@0 8-9"
        ]
    );
    assert_eq!(r.deadline_misses, 0);
    let edf = run_yaml(E2, "edf", "linux");
    assert_eq!(edf.dispatches(100 * MS), 5);
    assert_eq!((r.dispatches(100 * MS), r.preemptions), (31, 26));
}

const PARTITION: &str = "
platform: { cpus: 1, hz: 1000 }
duration: 3s
tasks:
  - { name: T1, runtime: 60ms, period: 100ms }
  - { name: T5, runtime: 5ms, period: 60ms }
  - { name: T9, runtime: 5ms, period: 60ms }
";

#[test]
fn table1_partition_llf_rule3_misses_every_hyperperiod() {
    let r = run_yaml(
        &with_illf(PARTITION, "{ rules: [1, 2, 3] }"),
        "illf",
        "linux",
    );
    // T9 misses at 60, 360, 660, ...: ten hyperperiods of 300 ms.
    assert_eq!(r.tasks[2].misses, 10);
    assert_eq!(r.tasks[0].misses + r.tasks[1].misses, 0);
    assert_eq!(r.dispatches(300 * MS), 14);
}

#[test]
fn table1_partition_illf_edf_llf_dispatch_counts() {
    let illf = run(&workload(PARTITION, "illf", "linux"));
    assert_eq!((illf.deadline_misses, illf.preemptions), (0, 0));
    assert_eq!(illf.dispatches(300 * MS), 13);
    assert_eq!(illf.dispatches(3000 * MS), 130);

    let edf = run(&workload(PARTITION, "edf", "linux"));
    assert_eq!(edf.deadline_misses, 0);
    assert_eq!(edf.dispatches(300 * MS), 14);
    assert_eq!(edf.preemptions, 10);

    let llf = run(&workload(PARTITION, "llf", "linux"));
    assert_eq!(llf.deadline_misses, 0);
    assert_eq!(llf.dispatches(300 * MS), 68);
}

fn table1(placement: &str) -> String {
    format!(
        "
platform: {{ cpus: 4, hz: 1000 }}
duration: 3s
scheduler: {{ placement: {placement} }}
tasks:
  - {{ name: T, count: 4, runtime: 60ms, period: 100ms }}
  - {{ name: S, count: 8, runtime: 5ms, period: 60ms }}
"
    )
}

#[test]
fn table1_on_4_cpus_llf_thrashes_and_illf_misses_nothing() {
    let y = table1("linux");
    let edf = run(&workload(&y, "edf", "linux"));
    let llf = run(&workload(&y, "llf", "linux"));
    let illf = run(&workload(&y, "illf", "linux"));
    assert_eq!(illf.deadline_misses, 0);
    assert_eq!(edf.deadline_misses, 0);
    assert!(
        llf.context_switches_per_cpu_per_s > 3.0 * edf.context_switches_per_cpu_per_s,
        "{} vs {}",
        llf.context_switches_per_cpu_per_s,
        edf.context_switches_per_cpu_per_s
    );
    assert!(llf.context_switches_per_cpu_per_s > 3.0 * illf.context_switches_per_cpu_per_s);
    // The paper's {T1, T5, T9} per CPU: threads start on CPU i mod 4.
    assert!(illf.context_switches_per_cpu_per_s <= edf.context_switches_per_cpu_per_s);
}

#[test]
fn illf_computes_a_small_fraction_of_llf_laxities_on_16_tasks() {
    // The paper's Case 1 set at 60% per CPU: T_i = (5i, 33.33i, 33.33i) ms, 4 CPUs.
    let mut y = String::from("platform: { cpus: 4, hz: 1000 }\nduration: 2s\ntasks:\n");
    for i in 1..=16u64 {
        let p_us = 100_000 * i / 3;
        y += &format!(
            "  - {{ name: T{i}, runtime: {}ms, period: {p_us}us }}\n",
            5 * i
        );
    }
    let llf = run(&workload(&y, "llf", "linux"));
    let illf = run(&workload(&y, "illf", "linux"));
    assert!(llf.laxity_evaluations > 0 && illf.laxity_evaluations > 0);
    assert!(
        illf.laxity_evaluations * 3 < llf.laxity_evaluations,
        "illf {} vs llf {}",
        illf.laxity_evaluations,
        llf.laxity_evaluations
    );
}

#[allow(dead_code)]
fn debug(w: &Workload, r: &SimResult) -> Vec<String> {
    schedule(w, r, 400)
}
