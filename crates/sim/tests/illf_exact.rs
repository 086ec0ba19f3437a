//! Exact-mode ILLF (`illf: { mode: exact }`): rule 3 acts at the instant a waiting task's
//! laxity reaches zero, not at the first tick after it (seeds digest §1.3; issue: a job
//! shorter than a tick that waits for zero laxity always missed).
mod common;
use common::*;
use schedlab_model::{Overrides, Workload};
use std::path::Path;

fn with_illf(yaml: &str, illf: &str) -> String {
    yaml.replacen(
        "tasks:",
        &format!("scheduler: {{ illf: {illf} }}\ntasks:"),
        1,
    )
}

fn exact(yaml: &str) -> String {
    with_illf(yaml, "{ mode: exact }")
}

/// S (0.16 ms every 10 ms) and B (50 ms every 100 ms) on one CPU. From S's second job on,
/// B runs (small: R ≤ S, so no swap at S's activation) and S waits for zero laxity
/// (rule 3) at deadline − 0.16 ms, between two ticks.
const SHORT: &str = "
platform: { cpus: 1, hz: 1000 }
duration: 60ms
tasks:
  - { name: S, runtime: 0.16ms, period: 10ms }
  - { name: B, runtime: 50ms, period: 100ms }
";

#[test]
fn a_job_shorter_than_a_tick_starts_at_its_zero_laxity_instant() {
    for placement in ["linux", "partitioned", "global"] {
        let w = workload(&exact(SHORT), "illf", placement);
        let r = run(&w);
        assert_eq!(
            schedule(&w, &r, 60),
            vec![
                "S[0]@0 0-0.160",
                "B[0]@0 0.160-19.840",
                "S[1]@0 19.840-20",
                "S[2]@0 20-20.160",
                "B[0]@0 20.160-39.840",
                "S[3]@0 39.840-40",
                "S[4]@0 40-40.160",
                "B[0]@0 40.160-50.800",
                "S[5]@0 50.800-50.960"
            ],
            "{placement}"
        );
        assert_eq!(r.deadline_misses, 0, "{placement}");
        assert_eq!(r.preemptions, 2, "{placement}");
    }
}

#[test]
fn in_tick_mode_the_same_job_is_seen_a_tick_late_and_misses() {
    let w = workload(SHORT, "illf", "linux");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 45)[..6],
        [
            "S[0]@0 0-0.160",
            "B[0]@0 0.160-20",
            "S[1]@0 20-20.160",
            "S[2]@0 20.160-20.320",
            "B[0]@0 20.320-40",
            "S[3]@0 40-40.160"
        ]
    );
    assert_eq!(r.tasks[0].misses, 2);
    assert_eq!(r.tasks[0].max_tardiness_ns, 160_000);
}

#[test]
fn exact_mode_evaluates_one_laxity_per_zero_laxity_instant_instead_of_one_per_tick() {
    let tick = run(&workload(SHORT, "illf", "linux"));
    let exact = run(&workload(&exact(SHORT), "illf", "linux"));
    // Tick mode refreshes S at every tick it waits through: 10..=20 and 30..=40 ms (the
    // tick follows the release at the same instant) and 50 ms, 23 ticks; exact mode
    // refreshes it at its two zero-laxity instants (19.84, 39.84 ms). Everything else
    // (rule 1 at activations and completions) is the same in both.
    assert_eq!(tick.laxity_evaluations - exact.laxity_evaluations, 23 - 2);
}

#[test]
fn e2_schedules_are_those_of_tick_mode() {
    // Every decision of E2 falls on a tick, so exact mode changes none of them; the
    // schedules are the digest's hand-worked ones (§1.6 E2).
    let cases: [(&str, Vec<&str>); 3] = [
        (
            "{}",
            vec![
                "t1[0]@0 0-5",
                "t2[0]@0 5-10",
                "t3[0]@0 10-70",
                "t1[1]@0 70-75",
                "t2[1]@0 75-80",
            ],
        ),
        (
            "{ swap_at: activation }",
            vec![
                "t1[0]@0 0-5",
                "t3[0]@0 5-45",
                "t2[0]@0 45-50",
                "t3[0]@0 50-70",
                "t1[1]@0 70-75",
                "t2[1]@0 75-80",
            ],
        ),
        (
            "{ rules: [1, 2, 3] }",
            vec![
                "t3[0]@0 0-45",
                "t1[0]@0 45-50",
                "t2[0]@0 50-55",
                "t3[0]@0 55-70",
                "t1[1]@0 70-75",
                "t2[1]@0 75-80",
            ],
        ),
    ];
    for (opts, want) in cases {
        let exact_opts = opts.replacen('{', "{ mode: exact,", 1).replace(",}", " }");
        let w = workload(&with_illf(E2, &exact_opts), "illf", "linux");
        assert_eq!(schedule(&w, &run(&w), 100), want, "{exact_opts}");
        // Partitioned placement breaks the t1'/t2' tie at 70 ms the other way (rules
        // [1, 2, 3]); whatever the tie, exact mode takes tick mode's decisions here.
        let w = workload(&with_illf(E2, &exact_opts), "illf", "partitioned");
        let t = workload(&with_illf(E2, opts), "illf", "partitioned");
        assert_eq!(
            schedule(&w, &run(&w), 100),
            schedule(&t, &run(&t), 100),
            "{exact_opts}"
        );
    }
    let w = workload(
        &with_illf(E2, "{ mode: exact, rules: [1, 2, 3] }"),
        "illf",
        "linux",
    );
    let r = run(&w);
    assert_eq!(
        (r.tasks[1].misses, r.tasks[1].max_tardiness_ns),
        (1, 5 * MS)
    );
}

#[test]
fn e1_dhall_heavy_task_runs_at_once_and_nothing_misses() {
    let dhall = "
platform: { cpus: 4, hz: 1000 }
duration: 1s
tasks:
  - { name: heavy, runtime: 100ms, period: 100ms }
  - { name: light, count: 4, runtime: 1ms, period: 99ms }
";
    for placement in ["global", "linux"] {
        let w = workload(&exact(dhall), "illf", placement);
        let r = run(&w);
        assert_eq!(r.deadline_misses, 0, "{placement}");
        let heavy = segments_of(&w, &r, "heavy");
        assert_eq!((heavy[0].2, heavy[0].3), (0.0, 100.0), "{placement}");
        // The fourth light task waits 1 ms for a CPU, far from zero laxity.
        let l4 = segments_of(&w, &r, "light4");
        assert_eq!((l4[0].2, l4[0].3), (1.0, 2.0), "{placement}");
    }
}

fn parse_err(yaml: &str) -> String {
    Workload::parse_str(yaml, Path::new("w.yaml"), &Overrides::default())
        .unwrap_err()
        .to_string()
}

#[test]
fn exact_mode_needs_rule_3_and_a_known_mode() {
    let e = parse_err(&with_illf(SHORT, "{ mode: exact, rules: [1, 2, 4] }"));
    assert!(
        e.contains("scheduler.illf.mode") && e.contains("rule 3"),
        "{e}"
    );
    let e = parse_err(&with_illf(SHORT, "{ mode: exactly }"));
    assert!(
        e.contains("unknown mode `exactly` (known: tick, exact)"),
        "{e}"
    );
}

#[test]
fn the_externally_driven_engine_refuses_exact_mode_with_the_reason() {
    // The real runner's dispatcher decides at the instants it is given: exact ILLF's own
    // zero-laxity instants would never be acted on.
    let w = workload(&exact(SHORT), "illf", "global");
    let Err(e) = schedlab_sim::engine::Engine::external(&w) else {
        panic!("exact illf accepted by the external engine")
    };
    assert!(e.to_string().contains("`illf` in exact mode"), "{e}");
    assert!(schedlab_sim::engine::Engine::external(&workload(SHORT, "illf", "global")).is_ok());
}
