//! Latency probes, interrupts, timer wheels, kernel sections and isolation (docs/latency.md):
//! exact values where the model fixes them.
mod common;
use common::*;
use schedlab_sim::result::{KernelCpuStats, LatencyStats};
use schedlab_sim::SimResult;

const US: u64 = 1_000;

fn sim(yaml: &str) -> SimResult {
    run_yaml(yaml, "edf", "linux")
}

fn probe(r: &SimResult, name: &str) -> LatencyStats {
    r.tasks
        .iter()
        .find(|t| t.name == name)
        .unwrap()
        .latency
        .clone()
        .unwrap()
}

fn kcpu(r: &SimResult, cpu: usize) -> KernelCpuStats {
    r.kernel.as_ref().unwrap().per_cpu[cpu].clone()
}

/// Every sample is exactly `v`.
fn all_exactly(l: &LatencyStats, v: u64) {
    assert_eq!(
        (l.min_ns, l.p50_ns, l.p99_ns, l.p999_ns, l.max_ns),
        (v, v, v, v, v),
        "{l:?}"
    );
    assert_eq!(l.mean_ns, v as f64);
    assert_eq!(
        l.histogram_us.as_deref(),
        Some(&[[v / 1000, l.samples]][..])
    );
}

#[test]
fn a_probe_alone_on_an_idle_cpu_reports_exactly_the_wakeup_cost() {
    for cpus in [1, 4] {
        for policy in ["fifo", "rr", "normal"] {
            // Switch and tick costs are part of the modelled wake-up cost, not added to it.
            let r = sim(&format!(
                "platform: {{ cpus: {cpus}, hz: 1000, wakeup_cost: 7us, context_switch: 2us, tick: 1us }}
duration: 1s
tasks:
  - {{ name: p, probe: {{ interval: 1ms, policy: {policy} }} }}
"
            ));
            let l = probe(&r, "p");
            // Releases at 1, 2, ..., 999 ms (the first one interval after the start).
            assert_eq!(l.samples, 999, "{cpus} CPUs, {policy}");
            all_exactly(&l, 7 * US);
            assert!(r.kernel.is_none(), "no kernel work, no kernel section");
        }
    }
}

/// One CPU, a probe, and `n` one-shot timers due at 300-400 ms: they sit in tv2 bucket 1
/// and are cascaded into tv1 at jiffy 256 (t = 256 ms), a release instant of the probe.
fn cascade(n: u64, wheel: &str) -> SimResult {
    sim(&format!(
        "platform:
  cpus: 2
  hz: 1000
  wakeup_cost: 5us
  timers:
    wheel: {wheel}
    cascade_cost: 2us
    cascade_per_timer: 500ns
    groups: [{{ count: {n}, timeout: 300ms, spread: 100ms }}]
duration: 500ms
tasks:
  - {{ name: p, probe: {{ interval: 1ms }}, affinity: [1] }}
"
    ))
}

#[test]
fn max_latency_grows_with_the_number_of_timers_a_cascade_moves() {
    let mut last = 0;
    for n in [100u64, 400, 1600] {
        let r = cascade(n, "cascading");
        let l = probe(&r, "p");
        let k = kcpu(&r, 1);
        assert_eq!(k.largest_cascade_timers, n, "every timer moved at once");
        assert_eq!(k.largest_cascade_at_ns, 256 * 1_000_000);
        assert_eq!(k.largest_cascade_ns, 2 * US + n * 500);
        // The probe released at 256 ms runs when the interrupts-off cascade ends.
        assert_eq!(l.max_ns, 5 * US + 2 * US + n * 500, "n = {n}");
        assert!(l.max_ns > last);
        last = l.max_ns;
        assert_eq!(l.p50_ns, 5 * US, "the rest is untouched");
        assert_eq!(k.timer_expiries, n, "all expired by 500 ms");
    }
}

#[test]
fn the_v4_8_wheel_does_not_cascade() {
    let r = cascade(1600, "hierarchical");
    let k = kcpu(&r, 1);
    assert_eq!((k.cascades, k.timers_moved), (0, 0));
    assert_eq!(k.timer_expiries, 1600);
    all_exactly(&probe(&r, "p"), 5 * US);
}

/// Seed 003's set-up on 2 CPUs: CPU 1 shielded for the probe, general load (CPU-bound fair
/// tasks entering kernel sections) and a NIC interrupt on CPU 0, a per-CPU local interrupt
/// on both, and timers on both wheels: long one-shot timers (cascaded at 256 ms) and
/// short periodic ones.
fn shield(migrate: bool) -> SimResult {
    sim(&format!(
        "platform:
  cpus: 2
  hz: 1000
  wakeup_cost: 5us
  isolated: [1]
  irqs:
    - {{ name: nic, period: 250us, handler: 10us, softirq: 30us }}
    - {{ name: loc, period: 4ms, handler: 3us, per_cpu: true }}
  timers:
    migrate: {migrate}
    cascade_cost: 2us
    cascade_per_timer: 500ns
    groups:
      - {{ name: long, count: 1000, timeout: 300ms, spread: 100ms }}
      - {{ name: short, count: 50, timeout: 20ms, spread: 200ms, periodic: true }}
  kernel_sections: {{ every: 1ms, length: 20us, max_length: 400us }}
duration: 600ms
tasks:
  - {{ name: p, probe: {{ interval: 1ms }}, affinity: [1] }}
  - {{ name: hog, count: 3 }}
"
    ))
}

/// Seed 003's second half: 1000 timers (400-450 ms) registered for the shielded CPU 1 at
/// 200 ms into the run, with the start's timers moved (`migrate`) and new registrations
/// there forbidden or not.
fn registered_late(forbid_new: &str) -> SimResult {
    sim(&format!(
        "platform:
  cpus: 2
  hz: 1000
  wakeup_cost: 5us
  isolated: [1]
  timers:
    migrate: true{forbid_new}
    cascade_cost: 2us
    cascade_per_timer: 500ns
    groups:
      - {{ name: early, count: 1000, timeout: 300ms, spread: 100ms }}
      - {{ name: late, count: 1000, timeout: 400ms, spread: 50ms, offset: 200ms, cpus: [1] }}
duration: 700ms
tasks:
  - {{ name: p, probe: {{ interval: 1ms }}, affinity: [1] }}
  - {{ name: hog }}
"
    ))
}

#[test]
fn timers_registered_during_the_run_reach_the_shielded_cpu_unless_forbidden() {
    // Moving the start's timers alone: the late ones are registered on CPU 1 at jiffy 200,
    // due at 600-650, i.e. in tv2's bucket 2 (512-767), cascaded together at jiffy 512.
    let only_moved = registered_late("\n    forbid_new: false");
    let k = kcpu(&only_moved, 1);
    assert_eq!((k.cascades, k.largest_cascade_timers), (1, 1000), "{k:?}");
    assert_eq!(k.largest_cascade_at_ns, 512 * 1_000_000);
    assert_eq!(k.largest_cascade_ns, 2 * US + 1000 * 500);
    assert_eq!(k.timer_expiries, 1000);
    assert_eq!(kcpu(&only_moved, 0).timer_expiries, 2000);
    let l = probe(&only_moved, "p");
    assert!(l.max_ns >= 5 * US + 2 * US + 1000 * 500, "{l:?}");
    // With the ban (explicit, or by default with `migrate`) they go to CPU 0 instead.
    for forbid in ["\n    forbid_new: true", ""] {
        let r = registered_late(forbid);
        let k = kcpu(&r, 1);
        assert_eq!((k.cascades, k.timer_expiries), (0, 0), "{forbid:?}: {k:?}");
        // The early timers of both CPUs (2 × 1000) and the late ones.
        assert_eq!(kcpu(&r, 0).timer_expiries, 3000, "{forbid:?}");
        assert_eq!(probe(&r, "p").max_ns, 5 * US, "{forbid:?}");
    }
}

#[test]
fn with_timers_migrated_the_isolated_cpu_is_bounded_by_the_remaining_sources() {
    let a = shield(false);
    let b = shield(true);
    let (la, lb) = (probe(&a, "p"), probe(&b, "p"));
    // Isolation keeps the hogs, their kernel sections and the NIC off CPU 1 in both.
    for r in [&a, &b] {
        let k = kcpu(r, 1);
        assert_eq!((k.sections, k.section_ns), (0, 0));
        assert_eq!(
            k.irqs, 149,
            "only the per-CPU interrupt, at 4, 8, ..., 596 ms"
        );
        assert!(kcpu(r, 0).sections > 0 && kcpu(r, 0).irqs > 2000);
        for t in r.tasks.iter().filter(|t| t.name.starts_with("hog")) {
            assert!(t.cpu_time_ns > 0);
        }
    }
    // A: CPU 1 keeps its 1000 long timers; the cascade at 256 ms moves them all (and the
    // short timers due in that window) with interrupts off.
    let ka = kcpu(&a, 1);
    assert!(ka.largest_cascade_timers >= 1000, "{ka:?}");
    assert!(la.max_ns >= 5 * US + 2 * US + 1000 * 500, "{la:?}");
    // B: no timer on CPU 1, so the only kernel work left there is the per-CPU interrupt,
    // 3 us every 4 ms, on the probe's 1 ms grid: the bound is wake-up cost + 3 us, and
    // every fourth sample reaches it.
    let kb = kcpu(&b, 1);
    assert_eq!((kb.cascades, kb.timer_expiries, kb.timers_armed), (0, 0, 0));
    assert!(kcpu(&b, 0).timers_armed > kcpu(&a, 0).timers_armed);
    assert_eq!(lb.max_ns, 5 * US + 3 * US, "{lb:?}");
    assert_eq!(lb.min_ns, 5 * US);
    let h = lb.histogram_us.clone().unwrap();
    assert_eq!(h, vec![[5, lb.samples - 149], [8, 149]]);
    // The shield-only run differs in its tail, not in its typical values.
    assert_eq!(la.p50_ns, lb.p50_ns);
    assert!(la.max_ns > 60 * lb.max_ns);
}

fn with_load(probe_policy: &str, load: &str, cpus: usize, latency: &str) -> LatencyStats {
    let r = sim(&format!(
        "platform: {{ cpus: {cpus}, hz: 1000, wakeup_cost: 5us, context_switch: 2us }}
duration: 2s
scheduler: {{ cfs: {{ latency: {latency} }} }}
tasks:
  - {{ name: p, probe: {{ interval: 1ms, policy: {probe_policy} }}, affinity: [0] }}
{load}"
    ));
    probe(&r, "p")
}

/// `n` general-purpose tasks that sleep (different run/sleep lengths so that they do not
/// run in lockstep).
fn sleepers(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "  - {{ name: w{i}, run: {}us, sleep: {}us, affinity: [0] }}\n",
                300 + 97 * (i % 11),
                1900 + 313 * (i % 7)
            )
        })
        .collect()
}

#[test]
fn a_fifo_probe_is_unaffected_by_any_number_of_cfs_tasks() {
    for cpus in [1, 2] {
        for n in [0, 1, 4, 16, 64] {
            let hogs = if n == 0 {
                String::new()
            } else {
                format!("  - {{ name: hog, count: {n}, nice: 0 }}\n")
            };
            all_exactly(&with_load("fifo", &hogs, cpus, "6ms"), 5 * US);
            all_exactly(
                &with_load("fifo", &format!("{hogs}{}", sleepers(n)), cpus, "24ms"),
                5 * US,
            );
        }
    }
}

#[test]
fn a_cfs_probe_preempts_cpu_bound_hogs_at_once_thanks_to_its_sleeper_credit() {
    // A woken CFS task is placed at min_vruntime − latency/2 at the earliest
    // (GENTLE_FAIR_SLEEPERS) and preempts when it is more than wakeup_granularity behind
    // the current task: a probe that hardly runs always is, so CPU-bound hogs do not
    // delay it, however many. Only its first wake-ups can wait: a new task is placed
    // one slice after min_vruntime (START_DEBIT), and the jobs released meanwhile queue.
    for n in [1, 4, 16, 64] {
        for lat in ["6ms", "24ms"] {
            let l = with_load(
                "normal",
                &format!("  - {{ name: hog, count: {n} }}\n"),
                1,
                lat,
            );
            assert_eq!(l.p50_ns, 5 * US, "{n} hogs, latency {lat}: {l:?}");
            // The start-up wait lasts about one scheduling period, max(latency, (n + 1) ×
            // min_granularity) = up to 48.75 ms here, one late sample per interval.
            let late: u64 = l.histogram_us.as_ref().unwrap()[1..]
                .iter()
                .map(|b| b[1])
                .sum();
            let period_ms =
                ((n as f64 + 1.0) * 0.75).max(lat.trim_end_matches("ms").parse().unwrap());
            assert!(
                late as f64 <= period_ms + 10.0,
                "{n} hogs, latency {lat}: {l:?}"
            );
        }
    }
}

#[test]
fn a_cfs_probe_waits_behind_sleeping_load_and_a_longer_sched_latency_shortens_the_wait() {
    // Tasks that sleep get the same credit when they wake: the probe, woken while such a
    // task runs, is less than wakeup_granularity ahead of it and waits. The wait grows
    // with the number of such tasks; a longer sched_latency gives every sleeper more
    // credit relative to min_vruntime and makes the probe's wake-up preemption likelier.
    let mean = |n: usize, lat: &str| with_load("normal", &sleepers(n), 1, lat).mean_ns;
    for lat in ["3ms", "6ms", "24ms"] {
        let m: Vec<f64> = [0, 1, 2, 3].iter().map(|&n| mean(n, lat)).collect();
        assert_eq!(m[0], 5000.0);
        assert!(m.windows(2).all(|w| w[1] > w[0]), "latency {lat}: {m:?}");
    }
    for n in [2, 3, 4] {
        let m: Vec<f64> = ["3ms", "6ms", "12ms", "24ms"]
            .iter()
            .map(|l| mean(n, l))
            .collect();
        assert!(m.windows(2).all(|w| w[1] < w[0]), "{n} sleepers: {m:?}");
    }
    // The same load leaves a FIFO probe alone.
    all_exactly(&with_load("fifo", &sleepers(4), 1, "3ms"), 5 * US);
}

#[test]
fn kernel_work_is_charged_to_the_running_task_and_delays_decisions() {
    // One CPU: a hog, a FIFO probe released at 1 ms, and an interrupt at 1 ms with 40 us
    // of handler + softirq: the probe runs at 1.040 ms; the hog lost the interrupt time.
    let r = sim("platform: { cpus: 1, hz: 0, wakeup_cost: 1us, irqs: [{ name: x, period: 10ms, offset: 1ms, handler: 10us, softirq: 30us }] }
duration: 20ms
tasks:
  - { name: p, offset: 1ms, probe: { interval: 10ms } }
  - { name: hog, work: 100ms }
");
    let l = probe(&r, "p");
    assert_eq!(l.samples, 2);
    all_exactly(&l, 41 * US);
    let k = kcpu(&r, 0);
    assert_eq!(
        (k.irqs, k.irq_ns, k.longest_block_ns),
        (2, 80 * US, 40 * US)
    );
    // The hog's CPU time includes the interrupts (as the kernel's accounting without
    // IRQ_TIME_ACCOUNTING); the probe ran 1 us twice.
    let hog = r.tasks.iter().find(|t| t.name == "hog").unwrap();
    assert_eq!(hog.cpu_time_ns, 20_000 * US - 2 * US);
}

#[test]
fn interrupts_round_robin_over_their_affinity_and_skip_isolated_cpus() {
    let r = sim("platform: { cpus: 3, hz: 1000, isolated: [2], irqs: [{ name: a, period: 1ms, handler: 1us }, { name: b, period: 1ms, handler: 1us, cpus: [2] }] }
duration: 100ms
tasks:
  - { name: p, probe: { interval: 1ms }, affinity: [2] }
");
    // `a` (default affinity) alternates between CPUs 0 and 1; `b` is explicitly on the
    // isolated CPU 2 and stays there.
    let n: Vec<u64> = (0..3).map(|c| kcpu(&r, c).irqs).collect();
    assert_eq!(n, vec![50, 49, 99]);
}

#[test]
fn global_placement_with_kernel_work_is_refused_with_a_reason() {
    let w = workload(
        "platform: { cpus: 2, irqs: [{ period: 1ms, handler: 1us }] }\ntasks: [{ name: a, runtime: 1ms, period: 10ms }]",
        "edf",
        "global",
    );
    let e = schedlab_sim::simulate(&w, &Default::default()).unwrap_err();
    assert!(e.to_string().contains("per-CPU run queues"), "{e}");
}

#[test]
fn runs_with_kernel_work_are_deterministic() {
    let a = serde_json::to_value(shield(false)).unwrap();
    let b = serde_json::to_value(shield(false)).unwrap();
    let strip = |mut v: serde_json::Value| {
        v["wall_s"] = 0.into();
        v
    };
    assert_eq!(strip(a), strip(b));
}

#[test]
fn a_probe_skips_the_periods_it_sleeps_through_as_cyclictest_does() {
    // 2.5 ms of interrupt work from 1 ms: the wake-up due at 1 ms runs at 3.5 ms; those
    // due at 2 and 3 ms are overruns (no sample); 4..9 ms are on time.
    let r = sim("platform: { cpus: 1, hz: 0, wakeup_cost: 1us, irqs: [{ period: 10ms, offset: 1ms, handler: 100us, softirq: 2400us }] }
duration: 10ms
tasks:
  - { name: p, probe: { interval: 1ms } }
");
    let l = probe(&r, "p");
    assert_eq!(l.overruns, Some(2));
    assert_eq!(l.samples, 7);
    assert_eq!(l.histogram_us, Some(vec![[1, 6], [2501, 1]]));
    // Other tasks keep every release (a thread runs its jobs in order).
    assert_eq!(r.tasks[0].jobs, 7);
}

#[test]
fn decision_timers_wait_for_the_end_of_kernel_work() {
    // Exact-mode llf arms decision instants; one falling inside a 400 us interrupt must
    // fire once at its end, not again every nanosecond until then.
    let w = workload(
        "platform: { cpus: 1, hz: 1000, irqs: [{ period: 1ms, handler: 100us, softirq: 300us }] }
duration: 200ms
scheduler: { llf: { mode: exact } }
tasks:
  - { name: a, runtime: 3ms, period: 10ms }
  - { name: b, runtime: 4ms, period: 12ms }
  - { name: c, runtime: 2ms, period: 7ms }
",
        "llf",
        "linux",
    );
    let r = run(&w);
    assert!(r.events < 5_000, "{} events", r.events);
}

/// A real-time task woken on a CPU in kernel work waits there for the work's end: the
/// CPU has not scheduled, and the kernel pushes only from a CPU after `__schedule` (an rq
/// with one RT task is not overloaded, so no other CPU pulls it either). With both CPUs
/// in kernel work, pushing it anyway handed it back and forth until the push rounds'
/// bound chose where it stayed (the checker now reports a bound reached).
#[test]
fn a_task_woken_on_a_cpu_in_kernel_work_waits_there_for_its_end() {
    for (irq, other) in [
        ("cpus: [0]", "running a fair task beside it"),
        ("per_cpu: true", "in kernel work too"),
    ] {
        let yaml = format!(
            "platform: {{ cpus: 2, irqs: [{{ name: d, period: 10ms, handler: 10us, softirq: 990us, offset: 2ms, {irq} }}] }}
duration: 10ms
tasks:
  - {{ name: r, runtime: 1ms, period: 10ms, offset: 2500us }}
  - {{ name: h0, affinity: [0] }}
  - {{ name: h1, affinity: [1] }}
"
        );
        let w = workload(&yaml, "edf", "linux");
        let r = run(&w);
        let got: Vec<String> = schedule(&w, &r, 10)
            .into_iter()
            .filter(|s| s.starts_with("r["))
            .collect();
        assert_eq!(got, ["r[0]@0 3-4"], "CPU 1 {other}");
        assert_eq!(r.tasks[0].migrations, 0, "CPU 1 {other}");
    }
}
