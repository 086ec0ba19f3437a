//! CPU idle states and the PM QoS limit (docs/latency.md, "Idle states"): a probe waking
//! an idle CPU pays the exit latency of the deepest state the CPU's idle time allows, and
//! none the PM QoS limit forbids — exact values.
mod common;
use common::*;
use schedlab_sim::result::LatencyStats;
use schedlab_sim::SimResult;

const US: u64 = 1_000;

/// C1: 2 us to leave, entered after 2 us idle; C6: 100 us to leave, after 600 us idle.
const STATES: &str = "idle_states: [{ name: C1, exit_latency: 2us, target_residency: 2us }, { name: C6, exit_latency: 100us, target_residency: 600us }]";

fn probe(platform_extra: &str, interval: &str, load: bool) -> (LatencyStats, SimResult) {
    let hog = if load { "  - { name: hog }\n" } else { "" };
    let r = run_yaml(
        &format!(
            "platform: {{ cpus: 1, hz: 1000, wakeup_cost: 7us{platform_extra} }}
duration: 1s
tasks:
  - {{ name: p, probe: {{ interval: {interval}, policy: fifo }} }}
{hog}"
        ),
        "edf",
        "linux",
    );
    let l = r.tasks[0].latency.clone().unwrap();
    (l, r)
}

/// Every sample is exactly `v`.
fn all_exactly(l: &LatencyStats, v: u64) {
    assert_eq!(
        (l.min_ns, l.p50_ns, l.p99_ns, l.max_ns, l.mean_ns),
        (v, v, v, v, v as f64),
        "{l:?}"
    );
}

#[test]
fn an_idle_cpu_pays_the_exit_of_the_deepest_state_its_idle_time_reached() {
    // 1 ms between wake-ups: the CPU idles ~1 ms > 600 us, so it is in C6 at each wake-up.
    let (l, _) = probe(&format!(", {STATES}"), "1ms", false);
    assert_eq!(l.samples, 999);
    all_exactly(&l, 7 * US + 100 * US);
    // 500 us between wake-ups: never idle 600 us, so C1 (2 us) at each wake-up.
    let (l, _) = probe(&format!(", {STATES}"), "500us", false);
    all_exactly(&l, 7 * US + 2 * US);
}

#[test]
fn the_pm_qos_limit_keeps_cpus_out_of_states_slower_to_leave() {
    // A 10 us limit forbids C6: C1 only, whatever the idle time.
    let (l, _) = probe(&format!(", {STATES}, pm_qos_latency: 10us"), "1ms", false);
    all_exactly(&l, 7 * US + 2 * US);
    // 0 (cyclictest's default request): no state at all, only the wake-up cost.
    let (l, _) = probe(&format!(", {STATES}, pm_qos_latency: 0us"), "1ms", false);
    all_exactly(&l, 7 * US);
    // A limit at the deep state's exit latency allows it.
    let (l, _) = probe(&format!(", {STATES}, pm_qos_latency: 100us"), "1ms", false);
    all_exactly(&l, 7 * US + 100 * US);
}

#[test]
fn a_cpu_that_never_idles_pays_no_exit_so_a_loaded_machine_hides_the_states() {
    // A hog keeps the CPU busy: the probe preempts it and pays nothing for idle states.
    let (with, _) = probe(&format!(", {STATES}"), "1ms", true);
    let (without, _) = probe("", "1ms", true);
    assert_eq!(with.samples, without.samples);
    all_exactly(&with, 7 * US);
    all_exactly(&without, 7 * US);
}

#[test]
fn the_exit_latency_is_cpu_time_spent_before_the_task_runs() {
    // The probe's CPU time includes one C6 exit per wake-up: 999 × 100 us.
    let (_, idle) = probe(&format!(", {STATES}"), "1ms", false);
    let (_, held) = probe(&format!(", {STATES}, pm_qos_latency: 0us"), "1ms", false);
    assert_eq!(
        idle.tasks[0].cpu_time_ns - held.tasks[0].cpu_time_ns,
        999 * 100 * US
    );
}

#[test]
fn bad_idle_state_tables_are_refused_naming_the_field() {
    for (extra, want) in [
        (
            ", idle_states: [{ name: C1, target_residency: 2us }]",
            "platform.idle_states[0].exit_latency: missing",
        ),
        (
            ", idle_states: [{ exit_latency: 100us, target_residency: 600us }, { exit_latency: 2us, target_residency: 2us }]",
            "platform.idle_states[1].target_residency",
        ),
        (
            ", idle_states: [{ exit_latency: 2s }]",
            "platform.idle_states[0].exit_latency: 2s is more than 1s",
        ),
        (", idle_states: [{ exit_latency: 2us, depth: 3 }]", "depth"),
    ] {
        let yaml = format!(
            "platform: {{ cpus: 1{extra} }}\nduration: 10ms\ntasks:\n  - {{ name: p, probe: {{ interval: 1ms }} }}\n"
        );
        let e = schedlab_model::Workload::parse_str(
            &yaml,
            std::path::Path::new("w.yaml"),
            &schedlab_model::Overrides::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains(want), "{extra}: {e}");
    }
}
