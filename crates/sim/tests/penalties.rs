//! `platform.preemption` (SimSo's FixedPenalty): a preempted job resuming on the CPU it
//! left, after another task ran there, pays the penalty; a first start, a job resuming
//! after nothing else ran, and a migration (which pays `platform.migration`) do not.
mod common;
use common::*;

#[test]
fn a_resumed_job_pays_the_preemption_penalty_once_per_preemption() {
    // One CPU, EDF. a: C = 3ms, D = T = 20ms. b: offset 1ms, C = 1ms, D = 2ms, so it
    // preempts a at 1ms and runs 1..2ms.
    // a resumes at 2ms with 2ms left + 100us penalty: it finishes at 4.1ms. b starts
    // fresh: no penalty. Without the penalty a finishes at 4ms.
    let base = "
duration: 20ms
tasks:
  - { name: a, runtime: 3ms, period: 20ms }
  - { name: b, runtime: 1ms, period: 20ms, deadline: 2ms, offset: 1ms }
";
    let with = format!("platform: {{ cpus: 1, preemption: 100us }}\n{base}");
    let r = run(&workload(&with, "edf", "partitioned"));
    let a = &r.tasks[0];
    let b = &r.tasks[1];
    assert_eq!(a.max_response_ns, 4_100_000);
    assert_eq!(b.max_response_ns, 1_000_000);
    assert_eq!(r.preemptions, 1);
    let without = format!("platform: {{ cpus: 1 }}\n{base}");
    let r0 = run(&workload(&without, "edf", "partitioned"));
    assert_eq!(r0.tasks[0].max_response_ns, 4_000_000);
    // The migration cost is not charged to a job that stays on its CPU.
    let mig = format!("platform: {{ cpus: 1, migration: 1ms }}\n{base}");
    assert_eq!(
        run(&workload(&mig, "edf", "partitioned")).tasks[0].max_response_ns,
        4_000_000
    );
}

#[test]
fn the_plain_switch_walk_agrees_with_leave_and_arrive() {
    // Global LLF and ILLF without a trace, an event log, idle states or fair tasks take
    // the marked decision's plain switch walk (engine/global_marked.rs), which restates
    // `leave`/`arrive`; debug builds run both from the same records at every decision
    // and panic where they differ. Switch, migration and preemption costs, idle CPUs
    // and first dispatches (latency samples) all occur here.
    let set = periodic_set(12, 4, 3.2, 300, 29);
    let yaml = set.replace(
        "platform: { cpus: 4, hz: 1000 }",
        "platform: { cpus: 4, hz: 1000, context_switch: 5us, migration: 40us, preemption: 20us }",
    );
    assert_ne!(yaml, set, "the platform line was replaced");
    for policy in ["llf", "illf"] {
        let w = workload(&yaml, policy, "global");
        let r = schedlab_sim::simulate(&w, &schedlab_sim::SimOptions { trace: false }).unwrap();
        assert!(
            r.preemptions > 0 && r.migrations > 0,
            "{policy}: no switches to compare"
        );
    }
}
