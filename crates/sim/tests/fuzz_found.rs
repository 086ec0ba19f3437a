//! Workloads the cargo-fuzz targets (fuzz/, docs/safety.md "Fuzzing") found, kept as
//! regression tests: each runs with the engine's invariant checker on.

use schedlab_model::{Overrides, Workload};
use schedlab_sim::{simulate_checked, SimOptions};
use std::path::Path;

fn checked(yaml: &str) -> Result<(), String> {
    let w = Workload::parse_str(yaml, Path::new("found.yaml"), &Overrides::default()).unwrap();
    simulate_checked(&w, &SimOptions { trace: true })
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Found by the `simulate` target (from a JSON seed, after 1,019,154 inputs): a fair
/// task whose phases are a single `run` (it goes on with its next burst without
/// sleeping) ends a burst at the very instant an EDF job is released on its CPU; the
/// fair class's run queue then holds the task while its count says 0 (cfs and eevdf,
/// every placement). Minimised to one CPU and two tasks. Fixed on main (a fair task
/// whose next burst begins at the instant the last ends stays on its queue).
#[test]
fn a_fair_burst_ending_at_an_rt_release_keeps_the_queue_count() {
    let yaml = "platform: { cpus: 1 }\nduration: 20ms\ntasks:\n  \
                - { name: big, runtime: 7ms, period: 10ms }\n  \
                - { name: p, phases: [{ run: 1ms }] }\n";
    assert_eq!(checked(yaml), Ok(()));
}

/// Found by the `simulate_generated` target as a slow input (4 s for 15 ms simulated in
/// the instrumented build): under `linux` placement ILLF switched 27 times per event
/// (113,974 context switches for 4,165 events on 2 CPUs). Overloaded on purpose (seven
/// tasks of 10 µs every 50 µs with 20 µs deadlines), so several tasks reach zero laxity
/// at once; rule 3 let a pushed zero-laxity task displace another zero-laxity task, which
/// was pushed back in turn, round the CPUs until the push loop's bound, every instant.
/// Fixed: a task pushed at zero laxity displaces only a task with more laxity (as
/// push_rt_task targets only a CPU running something of lower priority); 2,709 switches,
/// under one per event like every other policy and placement on these tasks.
#[test]
fn illf_under_linux_placement_does_not_bounce_tasks_within_an_instant() {
    let mut yaml = String::from(
        "platform: { cpus: 2, hz: 250, context_switch: 2us, migration: 2us }\n\
         duration: 15ms\nseed: 36\n\
         scheduler: { deadline: illf, fair: bfs, placement: linux, cbs: false }\ntasks:\n  \
         - { name: t0, count: 3, runtime: 10us, period: 5470us, deadline: 74us }\n",
    );
    for i in 1..=7 {
        yaml.push_str(&format!(
            "  - {{ name: t{i}, runtime: 10us, period: 50us, deadline: 20us }}\n"
        ));
    }
    let w = Workload::parse_str(&yaml, Path::new("found.yaml"), &Overrides::default()).unwrap();
    let r = schedlab_sim::simulate(&w, &SimOptions::default()).unwrap();
    assert!(
        r.context_switches <= r.events,
        "{} context switches for {} events",
        r.context_switches,
        r.events
    );
}
