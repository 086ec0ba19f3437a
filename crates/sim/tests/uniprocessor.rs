//! Uniprocessor schedules: seed E2 under EDF, the EDF optimality property, RM vs EDF,
//! FIFO and RR semantics.
mod common;
use common::*;
use proptest::prelude::*;

#[test]
fn e2_edf_order_is_1_2_3_1_2_with_five_dispatches() {
    for placement in ["global", "partitioned", "linux"] {
        let w = workload(E2, "edf", placement);
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
            "placement {placement}"
        );
        assert_eq!(r.deadline_misses, 0);
        assert_eq!(r.preemptions, 0);
        // idle→t1, t1→t2, t2→t3, t3→t1', t1'→t2', t2'→idle
        assert_eq!(r.context_switches, 6);
        assert_eq!(r.per_cpu[0].idle_switches, 2);
    }
}

const RM_OVERLOAD: &str = "
platform: { cpus: 1, hz: 1000 }
duration: 35ms
tasks:
  - { name: a, runtime: 2ms, period: 5ms }
  - { name: b, runtime: 4ms, period: 7ms }
";

#[test]
fn rm_misses_above_its_bound_where_edf_does_not() {
    // U = 0.4 + 0.571 = 0.971 > 2(√2−1) = 0.828.
    let w = workload(RM_OVERLOAD, "rm", "global");
    let r = run(&w);
    // RM: a runs 0-2, b 2-5, a 5-7 (preempting b), b needs 1 more ms by 7: it ends at 8.
    assert_eq!(
        schedule(&w, &r, 8),
        vec!["a[0]@0 0-2", "b[0]@0 2-5", "a[1]@0 5-7", "b[0]@0 7-8"]
    );
    assert_eq!(r.tasks[1].max_tardiness_ns, MS);
    assert!(r.tasks[1].misses >= 1);
    assert_eq!(r.tasks[0].misses, 0);

    let r = run(&workload(RM_OVERLOAD, "edf", "global"));
    assert_eq!(r.deadline_misses, 0);
}

#[test]
fn dm_orders_by_relative_deadline_rm_by_period() {
    let yaml = "
platform: { cpus: 1 }
duration: 20ms
tasks:
  - { name: long_period_short_deadline, runtime: 2ms, period: 20ms, deadline: 3ms }
  - { name: short_period, runtime: 3ms, period: 10ms }
";
    let w = workload(yaml, "dm", "global");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 5)[0],
        "long_period_short_deadline[0]@0 0-2"
    );
    assert_eq!(r.deadline_misses, 0);
    let w = workload(yaml, "rm", "global");
    let r = run(&w);
    assert_eq!(schedule(&w, &r, 5)[0], "short_period[0]@0 0-3");
    // Under RM the short-deadline task finishes at 5 > 3.
    assert_eq!(r.tasks[0].misses, 1);
}

#[test]
fn fifo_runs_equal_priorities_to_completion_rr_slices_them() {
    let yaml = "
platform: { cpus: 1, hz: 1000 }
duration: 100ms
scheduler: { rr_timeslice: 10ms }
tasks:
  - { name: a, runtime: 25ms, period: 100ms }
  - { name: b, runtime: 25ms, period: 100ms }
";
    let w = workload(yaml, "fifo", "global");
    let r = run(&w);
    assert_eq!(schedule(&w, &r, 100), vec!["a[0]@0 0-25", "b[0]@0 25-50"]);
    let w = workload(yaml, "rr", "global");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 100),
        vec![
            "a[0]@0 0-10",
            "b[0]@0 10-20",
            "a[0]@0 20-30",
            "b[0]@0 30-40",
            "a[0]@0 40-45",
            "b[0]@0 45-50"
        ]
    );
    assert_eq!(r.preemptions, 4);
}

#[test]
fn a_preempted_fifo_task_resumes_before_its_equal_priority_peers() {
    let yaml = "
platform: { cpus: 1, hz: 1000 }
duration: 40ms
tasks:
  - { name: low1, class: fifo, priority: 10, runtime: 10ms, period: 40ms }
  - { name: low2, class: fifo, priority: 10, runtime: 10ms, period: 40ms }
  - { name: high, class: fifo, priority: 20, runtime: 2ms, period: 40ms, offset: 4ms }
";
    let w = workload(yaml, "fifo", "global");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 40),
        vec![
            "low1[0]@0 0-4",
            "high[0]@0 4-6",
            "low1[0]@0 6-12",
            "low2[0]@0 12-22"
        ]
    );
}

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

fn yaml_for(set: &[(u64, u64)], hz: u32) -> String {
    let mut s = format!("platform: {{ cpus: 1, hz: {hz} }}\nduration: 240ms\ntasks:\n");
    for (i, (c, p)) in set.iter().enumerate() {
        s += &format!("  - {{ name: t{i}, runtime: {c}us, period: {p}us }}\n");
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// EDF is optimal on one CPU: an implicit-deadline set with U ≤ 1 never misses, in
    /// every placement (with CBS reservations equal to the runtime in `linux`).
    #[test]
    fn uniprocessor_edf_never_misses_when_u_at_most_1(set in task_set(), hz in prop::sample::select(vec![0u32, 250, 1000])) {
        let u: f64 = set.iter().map(|(c, p)| *c as f64 / *p as f64).sum();
        prop_assume!(u <= 1.0);
        let yaml = yaml_for(&set, hz);
        for placement in ["global", "linux"] {
            let r = run(&workload(&yaml, "edf", placement));
            prop_assert_eq!(r.deadline_misses, 0, "U = {}, placement {}", u, placement);
        }
    }
}

fn constrained_set() -> impl Strategy<Value = Vec<(u64, u64, u64)>> {
    // (runtime_us, deadline_us, period_us), deadline between runtime and period.
    prop::collection::vec((1u64..=20, 1u64..=60, 0u64..=100), 1..5).prop_map(|v| {
        v.into_iter()
            .map(|(p_ms, pct, dpct)| {
                let period = p_ms * 1000;
                let c = (period * pct / 100).max(1);
                let d = c + (period - c) * dpct / 100;
                (c, d, period)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// Constrained deadlines: density Σ C/D ≤ 1 is sufficient for uniprocessor EDF, also
    /// with CBS reservations (revised wake-up rule) and sporadic releases.
    #[test]
    fn uniprocessor_edf_never_misses_when_density_at_most_1(set in constrained_set(), sporadic in any::<bool>()) {
        let density: f64 = set.iter().map(|(c, d, _)| *c as f64 / *d as f64).sum();
        prop_assume!(density <= 1.0);
        let rel = if sporadic { ", release: sporadic, jitter: 3ms" } else { "" };
        let mut yaml = "platform: { cpus: 1, hz: 1000 }\nduration: 300ms\nseed: 3\ntasks:\n".to_string();
        for (i, (c, d, p)) in set.iter().enumerate() {
            yaml += &format!("  - {{ name: t{i}, runtime: {c}us, deadline: {d}us, period: {p}us{rel} }}\n");
        }
        for placement in ["global", "linux"] {
            let r = run(&workload(&yaml, "edf", placement));
            prop_assert_eq!(r.deadline_misses, 0, "density {}, placement {}", density, placement);
            prop_assert_eq!(r.throttles, 0);
        }
    }
}
