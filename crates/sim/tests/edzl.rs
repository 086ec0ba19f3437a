//! EDZL (EDF until zero laxity): Dhall's example, E2, and a promotion in mid-run, in
//! tick mode (the default) and exact mode.
mod common;
use common::*;
use schedlab_model::{Overrides, Workload};
use std::path::Path;

fn with_mode(yaml: &str, mode: &str) -> String {
    yaml.replacen(
        "tasks:",
        &format!("scheduler: {{ edzl: {{ mode: {mode} }} }}\ntasks:"),
        1,
    )
}

const DHALL_M4: &str = "
platform: { cpus: 4, hz: 1000 }
duration: 1s
tasks:
  - { name: heavy, runtime: 100ms, period: 100ms }
  - { name: light, count: 4, runtime: 1ms, period: 99ms }
";

#[test]
fn dhall_m4_edzl_meets_every_deadline_where_global_edf_misses() {
    let edf = run_yaml(DHALL_M4, "edf", "global");
    assert!(edf.tasks[0].misses > 0);
    for mode in ["tick", "exact"] {
        let w = workload(&with_mode(DHALL_M4, mode), "edzl", "global");
        let r = run(&w);
        assert_eq!(r.deadline_misses, 0, "{mode}");
        // heavy has zero laxity at its release: promoted at once, it takes the first CPU
        // and the light tasks share the other three.
        assert_eq!(
            schedule(&w, &r, 101),
            vec![
                "heavy[0]@0 0-100",
                "light1[0]@1 0-1",
                "light2[0]@2 0-1",
                "light3[0]@3 0-1",
                "light4[0]@1 1-2",
                "light1[1]@1 99-100",
                "light2[1]@2 99-100",
                "light3[1]@3 99-100",
                "heavy[1]@0 100-200",
                "light4[1]@1 100-101",
            ],
            "{mode}"
        );
        assert_eq!((r.preemptions, r.migrations), (0, 0), "{mode}");
    }
}

#[test]
fn e2_edzl_is_edf() {
    for mode in ["tick", "exact"] {
        for placement in ["global", "partitioned", "linux"] {
            let w = workload(&with_mode(E2, mode), "edzl", placement);
            let r = run(&w);
            assert_eq!(
                schedule(&w, &r, 100),
                vec![
                    "t1[0]@0 0-5",
                    "t2[0]@0 5-10",
                    "t3[0]@0 10-70",
                    "t1[1]@0 70-75",
                    "t2[1]@0 75-80"
                ],
                "{mode}/{placement}"
            );
            assert_eq!((r.deadline_misses, r.preemptions), (0, 0));
            assert_eq!(r.context_switches, 6);
        }
    }
}

/// Two CPUs; A and B (4 ms every 8) and C (6 ms every 9) released at 0.
const MID_RUN: &str = "
platform: { cpus: 2, hz: 1000 }
duration: 18ms
tasks:
  - { name: A, runtime: 4ms, period: 8ms }
  - { name: B, runtime: 4ms, period: 8ms }
  - { name: C, runtime: 6ms, period: 9ms }
";

#[test]
fn a_job_reaching_zero_laxity_mid_run_preempts_the_lowest_priority_cpu() {
    // EDF: A and B (deadline 8) run 0-4, C (deadline 9) 4-10: it misses by 1 ms.
    let w = workload(MID_RUN, "edf", "global");
    let edf = run(&w);
    assert_eq!(
        schedule(&w, &edf, 5),
        vec!["A[0]@0 0-4", "B[0]@1 0-4", "C[0]@0 4-10"]
    );
    assert_eq!(edf.tasks[2].max_tardiness_ns, MS);

    // EDZL: C waits with laxity 3 − t: zero at 3 ms (a tick, and its exact instant). It
    // is promoted and takes CPU 0 from A (A and B are equal; the lowest-numbered CPU
    // gives way). A (1 ms left, deadline 8) resumes on CPU 1 when B completes at 4.
    // Second round: A' and B' at 8 (deadline 16), A' on the idle CPU 1. C completes at 9
    // and C' (deadline 18, laxity 3) is released at that instant: it goes on on CPU 0,
    // but B' (deadline 16) preempts it at once by EDF. C' waits with laxity 3 − (t − 9):
    // zero at 12, when A' completes: promoted, it runs 12-18 and meets its deadline
    // exactly. A'' (16) takes CPU 0 when B' is done; B'' waits for the end of the run.
    for mode in ["tick", "exact"] {
        let w = workload(&with_mode(MID_RUN, mode), "edzl", "global");
        let r = run(&w);
        assert_eq!(
            schedule(&w, &r, 18),
            vec![
                "A[0]@0 0-3",
                "B[0]@1 0-4",
                "C[0]@0 3-9",
                "A[0]@1 4-5",
                "A[1]@1 8-12",
                "B[1]@0 9-13",
                "C[1]@1 12-18",
                "A[2]@0 16-18",
            ],
            "{mode}"
        );
        assert_eq!(r.deadline_misses, 0, "{mode}");
        // One preemption (A at 3; C' had not started when B' took CPU 0 at 9). Two
        // migrations: A to CPU 1, and C', whose job began as CPU 0's current task at 9.
        assert_eq!((r.preemptions, r.migrations), (1, 2), "{mode}");
    }
}

#[test]
fn tick_mode_promotes_at_the_next_tick_exact_mode_at_the_instant() {
    // As MID_RUN with C's laxity reaching zero at 2.5 ms, between two ticks.
    let yaml = MID_RUN.replace("runtime: 6ms, period: 9ms", "runtime: 6500us, period: 9ms");
    let w = workload(&with_mode(&yaml, "exact"), "edzl", "global");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 4),
        vec!["A[0]@0 0-2.500", "B[0]@1 0-4", "C[0]@0 2.500-9"]
    );
    assert_eq!(r.tasks[2].misses, 0);
    // At the 3 ms tick C's laxity is already −0.5 ms: it ends 0.5 ms late.
    let w = workload(&with_mode(&yaml, "tick"), "edzl", "global");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 4),
        vec!["A[0]@0 0-3", "B[0]@1 0-4", "C[0]@0 3-9.500"]
    );
    assert_eq!(r.tasks[2].max_tardiness_ns, MS / 2);
}

#[test]
fn edzl_on_the_table1_set_in_every_placement() {
    let yaml = "
platform: { cpus: 4, hz: 1000 }
duration: 3s
tasks:
  - { name: T, count: 4, runtime: 60ms, period: 100ms }
  - { name: S, count: 8, runtime: 5ms, period: 60ms }
";
    for mode in ["tick", "exact"] {
        for placement in ["global", "partitioned", "linux"] {
            let a = run(&workload(&with_mode(yaml, mode), "edzl", placement));
            let b = run(&workload(&with_mode(yaml, mode), "edzl", placement));
            assert_eq!(a.deadline_misses, 0, "{mode}/{placement}");
            assert_eq!(a.trace, b.trace, "{mode}/{placement}");
        }
    }
}

#[test]
fn an_unknown_edzl_mode_is_a_clear_error() {
    let yaml = with_mode(E2, "sometimes");
    let err = Workload::parse_str(&yaml, Path::new("e2.yaml"), &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("scheduler.edzl.mode") && err.contains("sometimes"),
        "{err}"
    );
}

mod property {
    use super::*;
    use proptest::prelude::*;

    fn task_set() -> impl Strategy<Value = Vec<(u64, u64)>> {
        // (runtime_us, period_us) with periods 1..20 ms in whole ms.
        prop::collection::vec((1u64..=20, 1u64..=100), 1..6).prop_map(|v| {
            v.into_iter()
                .map(|(p_ms, pct)| {
                    let period = p_ms * 1000;
                    ((period * pct / 100).max(1), period)
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(100))]

        /// On one CPU a feasible set never lets a waiting job reach zero laxity before
        /// it can run (it and the running job could not both finish): EDZL is EDF.
        #[test]
        fn uniprocessor_edzl_schedule_is_edfs_when_u_at_most_1(
            set in task_set(),
            mode in prop::sample::select(vec!["tick", "exact"]),
        ) {
            let u: f64 = set.iter().map(|(c, p)| *c as f64 / *p as f64).sum();
            prop_assume!(u <= 1.0);
            let mut y = String::from("platform: { cpus: 1, hz: 1000 }\nduration: 240ms\ntasks:\n");
            for (i, (c, p)) in set.iter().enumerate() {
                y += &format!("  - {{ name: t{i}, runtime: {c}us, period: {p}us }}\n");
            }
            let edf = run(&workload(&y, "edf", "global"));
            let edzl = run(&workload(&with_mode(&y, mode), "edzl", "global"));
            prop_assert_eq!(edzl.deadline_misses, 0, "U = {}", u);
            prop_assert_eq!(edzl.trace, edf.trace);
        }
    }
}
