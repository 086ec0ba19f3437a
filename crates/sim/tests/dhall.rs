//! Seed 000, example E1 (the Dhall effect), asserted job by job under global EDF.
mod common;
use common::*;

const DHALL_M4: &str = "
platform: { cpus: 4, hz: 1000 }
duration: 200ms
tasks:
  - { name: heavy, runtime: 100ms, period: 100ms }
  - { name: light, count: 4, runtime: 1ms, period: 99ms }
";

const DHALL_M2: &str = "
platform: { cpus: 2, hz: 1000 }
duration: 20ms
tasks:
  - { name: heavy, runtime: 10ms, period: 10ms }
  - { name: light, count: 2, runtime: 1ms, period: 9ms }
";

#[test]
fn global_edf_m4_runs_light_tasks_first_and_heavy_misses_by_e() {
    let w = workload(DHALL_M4, "edf", "global");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 101),
        vec![
            "light1[0]@0 0-1",
            "light2[0]@1 0-1",
            "light3[0]@2 0-1",
            "light4[0]@3 0-1",
            "heavy[0]@0 1-101",
            // At 99 the light tasks' second jobs (deadline 198) take the three idle CPUs;
            // the fourth waits for one to free up: heavy (deadline 100) is never displaced.
            "light1[1]@1 99-100",
            "light2[1]@2 99-100",
            "light3[1]@3 99-100",
            "light4[1]@1 100-101",
        ]
    );
    // heavy's first job completes at P + e = 101 ms > its deadline 100 ms.
    let heavy = &r.tasks[0];
    assert_eq!(heavy.max_tardiness_ns, MS);
    assert!(heavy.misses >= 1);
    assert!(r.tasks[1..].iter().all(|t| t.misses == 0));
}

#[test]
fn global_edf_m2_heavy_finishes_at_11_for_deadline_10() {
    let w = workload(DHALL_M2, "edf", "global");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 11),
        vec![
            "light1[0]@0 0-1",
            "light2[0]@1 0-1",
            "heavy[0]@0 1-11",
            "light1[1]@1 9-10",
            "light2[1]@1 10-11"
        ]
    );
    assert_eq!(segments_of(&w, &r, "heavy")[0], (0, 0, 1.0, 11.0));
    assert_eq!(r.tasks[0].max_tardiness_ns, MS);
}

#[test]
fn linux_edf_shows_the_same_dhall_miss() {
    // Threads start spread over the CPUs (task i on CPU i mod 4), so heavy and light4
    // share CPU 0's run queue; push/pull cannot help heavy because every CPU runs an
    // earlier deadline until t = 1.
    let w = workload(DHALL_M4, "edf", "linux");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 101),
        vec![
            "light4[0]@0 0-1",
            "light1[0]@1 0-1",
            "light2[0]@2 0-1",
            "light3[0]@3 0-1",
            "heavy[0]@0 1-101",
            "light1[1]@1 99-100",
            "light2[1]@2 99-100",
            "light3[1]@3 99-100",
            "light4[1]@1 100-101",
        ]
    );
    assert!(r.tasks[0].misses >= 1);
    assert!(r.tasks[1..].iter().all(|t| t.misses == 0));
}

#[test]
fn partitioned_edf_avoids_the_dhall_effect() {
    // Partitioning puts heavy alone on one CPU: nothing misses.
    let w = workload(DHALL_M4, "edf", "partitioned");
    let r = run(&w);
    assert_eq!(r.deadline_misses, 0);
    assert_eq!(r.tasks[0].cpu, Some(0));
}
