//! SCHED_DEADLINE's CBS reservations in `linux` placement, with overheads.
mod common;
use common::*;

fn table1_2cpu(margin: f64, overheads: bool, hrtick: bool) -> String {
    let oh = if overheads {
        ", context_switch: 20us, tick: 2us"
    } else {
        ""
    };
    table1_2cpu_on(&format!("{oh}, hrtick: {hrtick}"), margin)
}

/// The 2-CPU Table-1 analogue with `platform` appended to its platform block.
fn table1_2cpu_on(platform: &str, margin: f64) -> String {
    format!(
        "
platform: {{ cpus: 2, hz: 250{platform} }}
duration: 3s
scheduler: {{ placement: linux, dl_margin: {margin} }}
tasks:
  - {{ name: big, count: 2, runtime: 60ms, period: 100ms }}
  - {{ name: small, count: 4, runtime: 5ms, period: 60ms }}
"
    )
}

#[test]
fn budget_equal_to_demand_is_enough_without_overheads() {
    let r = run_yaml(&table1_2cpu(0.0, false, false), "edf", "linux");
    assert_eq!(r.deadline_misses, 0);
    assert_eq!(r.throttles, 0);
}

#[test]
fn with_overheads_a_budget_equal_to_demand_throttles_and_misses() {
    // Every dispatch costs 20 us and every tick 2 us: a job needs more than its runtime,
    // the reservation runs dry and CBS throttles it until its next period.
    for hrtick in [false, true] {
        let r = run_yaml(&table1_2cpu(0.0, true, hrtick), "edf", "linux");
        assert!(r.throttles > 0, "hrtick {hrtick}: {r:?}");
        assert!(r.deadline_misses > 0, "hrtick {hrtick}: no miss");
    }
}

#[test]
fn a_margin_covers_the_overheads() {
    let r = run_yaml(&table1_2cpu(0.05, true, true), "edf", "linux");
    assert_eq!(r.throttles, 0);
    assert_eq!(r.deadline_misses, 0);
}

#[test]
fn without_cbs_overheads_only_delay_jobs() {
    let mut w = workload(&table1_2cpu(0.0, true, false), "edf", "linux");
    w.scheduler.cbs = false;
    let r = run(&w);
    assert_eq!(r.throttles, 0);
    assert_eq!(r.deadline_misses, 0);
}

#[test]
fn throttled_task_waits_for_its_next_period() {
    // One task, 1 CPU, switch cost 1 ms: the job needs 4 ms of CPU for a 3 ms budget.
    // With HRTICK the budget runs out at 3 ms; it is replenished at 10 ms (d += P) and
    // the job pays the switch again (10-11) and finishes its last millisecond at 12 ms.
    // The next job (released at 10) starts at once on the 1 ms left of the reservation
    // and is throttled again at 13 ms: two throttles, two misses.
    let yaml = "
platform: { cpus: 1, hz: 1000, context_switch: 1ms, hrtick: true }
duration: 20ms
scheduler: { placement: linux }
tasks:
  - { name: t, runtime: 3ms, period: 10ms }
";
    let w = workload(yaml, "edf", "linux");
    let r = run(&w);
    let segs = segments_of(&w, &r, "t");
    assert_eq!(segs[0], (0, 0, 0.0, 3.0));
    assert_eq!(segs[1], (0, 0, 10.0, 12.0));
    assert_eq!(r.tasks[0].max_tardiness_ns, 2 * MS);
    assert_eq!(segs[2], (0, 1, 12.0, 13.0));
    assert_eq!(r.throttles, 2);
    assert_eq!(r.deadline_misses, 2);
}

fn table1_2cpu_job_costs(margin: f64, per_job: &str, reads_cpu_clock: bool) -> String {
    table1_2cpu_on(
        &format!(", job_costs: {{ per_job: {per_job}, reads_cpu_clock: {reads_cpu_clock} }}"),
        margin,
    )
}

#[test]
fn jobs_that_read_their_cpu_clock_collapse_at_margin_zero_as_the_kernel_does() {
    // The runner's burn loop reads its own CPU clock, and each read makes the kernel
    // account it: an exhausted budget is caught at once. A job costing 25 us more than
    // its runtime is then throttled before its end, finishes after its deadline, and the
    // task never catches up again (it gets Q per period and needs Q + 25 us).
    let r = run_yaml(&table1_2cpu_job_costs(0.0, "25us", true), "edf", "linux");
    assert_eq!(r.deadline_misses, r.jobs_released, "{r:?}");
    // Caught only at ticks, most overruns end with the job (and are forgiven by the
    // sleep): far fewer misses.
    let ticks = run_yaml(&table1_2cpu_job_costs(0.0, "25us", false), "edf", "linux");
    assert!(ticks.deadline_misses < r.deadline_misses / 2, "{ticks:?}");
    // The default 5% margin covers 25 us on every job.
    let r = run_yaml(&table1_2cpu_job_costs(0.05, "25us", true), "edf", "linux");
    assert_eq!((r.deadline_misses, r.throttles), (0, 0));
}

#[test]
fn the_per_job_cost_is_charged_to_the_task_once_per_job() {
    let y = "
platform: { cpus: 1, hz: 250, job_costs: { per_job: 30us } }
duration: 1s
scheduler: { dl_margin: 0.05 }
tasks:
  - { name: p, runtime: 2ms, period: 10ms }
";
    let r = run_yaml(y, "edf", "linux");
    let p = &r.tasks[0];
    assert_eq!(p.completed, 100);
    assert_eq!(p.cpu_time_ns, 100 * (2_000_000 + 30_000));
    // Its work starts 30 us after the release, so it responds 30 us later.
    assert_eq!(p.max_response_ns, 2_030_000);
}

#[test]
fn a_release_wakes_its_task_after_the_wake_up_delay_and_its_reservation_starts_then() {
    let y = "
platform: { cpus: 1, hz: 250, job_costs: { wakeup_latency: 50us } }
duration: 1s
tasks:
  - { name: p, runtime: 2ms, period: 10ms }
";
    let r = run_yaml(y, "edf", "linux");
    let p = &r.tasks[0];
    assert_eq!(p.completed, 100);
    assert_eq!(p.max_response_ns, 2_050_000);
    assert_eq!(p.latency.as_ref().unwrap().p50_ns, 50_000);
    // No CPU time is charged for the wait.
    assert_eq!(p.cpu_time_ns, 100 * 2_000_000);
    // Its CPU is idle at every release: it must leave idle first.
    let r = run_yaml(
        &y.replace(
            "wakeup_latency: 50us",
            "wakeup_latency: 50us, wakeup_from_idle: 10us",
        ),
        "edf",
        "linux",
    );
    assert_eq!(r.tasks[0].max_response_ns, 2_060_000);
}

#[test]
fn wake_up_jitter_decides_equal_deadlines_as_on_the_kernel() {
    // At 240 ms a small job's deadline (300 ms) equals the running big job's. Released
    // at once, EDF keeps the running job; with wake-up delays drawn per release instant
    // the reservation deadlines differ by microseconds and the earlier one preempts.
    let plain = table1_2cpu_job_costs(0.05, "0ns", true);
    let jitter = plain.replace(
        "reads_cpu_clock: true",
        "reads_cpu_clock: true, wakeup_latency: 20us, wakeup_jitter: 20us",
    );
    let edf = |y: &str| run_yaml(y, "edf", "linux");
    let rm = |y: &str| run_yaml(y, "rm", "linux");
    assert_eq!(edf(&plain).preemptions, 20);
    let j = edf(&jitter);
    assert!(j.preemptions > 20, "{j:?}");
    assert_eq!(j.deadline_misses, 0);
    // Releases at the same instant share their delay: fixed priorities see no extra
    // preemption.
    assert_eq!(rm(&jitter).preemptions, rm(&plain).preemptions);
}
