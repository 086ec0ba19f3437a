//! `platform:` interrupts, timers, kernel sections, isolation, wake-up cost, and the
//! task-level `probe:`: good paths and one message per kind of bad input.

use schedlab_model::kernel::{TimerWheel, DEFAULT_CASCADE_COST, DEFAULT_CASCADE_PER_TIMER};
use schedlab_model::time::{MS, S, US};
use schedlab_model::{ModelError, Overrides, TaskClass, Workload};
use std::path::Path;

fn parse(text: &str) -> Result<Workload, ModelError> {
    Workload::parse_str(text, Path::new("w.yaml"), &Overrides::default())
}

fn ok(text: &str) -> Workload {
    parse(text).unwrap_or_else(|e| panic!("expected a valid workload, got: {e}"))
}

fn err(text: &str) -> String {
    match parse(text) {
        Ok(w) => panic!("expected an error, got {w:?}"),
        Err(e) => e.to_string(),
    }
}

fn has(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "message `{msg}` should contain `{p}`");
    }
}

const FULL: &str = "
platform:
  cpus: 4
  hz: 1000
  wakeup_cost: 5us
  isolated: [3]
  irqs:
    - { name: eth0, period: 250us, handler: 8us, softirq: 20us }
    - { name: loc, period: 4ms, handler: 3us, per_cpu: true, cpus: [2, 3] }
  timers:
    wheel: cascading
    migrate: true
    groups:
      - { name: keepalive, count: 100, timeout: 20s, spread: 5s }
      - { count: 10, timeout: 100ms, periodic: true, cpus: [0, 3] }
  kernel_sections: { every: 2ms, length: 20us, max_length: 300us }
tasks:
  - { name: probe, probe: { interval: 1ms, policy: fifo, priority: 99 }, affinity: [3] }
  - { name: cfsprobe, probe: { interval: 500us, policy: normal, nice: -5, runtime: 3us } }
  - { name: hog, count: 3, nice: 0 }
";

#[test]
fn a_full_platform_and_probes_parse() {
    let w = ok(FULL);
    let p = &w.platform;
    assert_eq!(p.wakeup_cost, 5 * US);
    assert_eq!(p.isolated, vec![3]);
    assert_eq!(p.irqs.len(), 2);
    let eth = &p.irqs[0];
    assert_eq!(
        (eth.period, eth.handler, eth.softirq, eth.offset),
        (250 * US, 8 * US, 20 * US, 250 * US)
    );
    assert_eq!(eth.cpus, vec![0, 1, 2, 3]);
    // A device interrupt avoids the isolated CPU; a per-CPU one cannot.
    assert_eq!(eth.effective_cpus(&p.isolated), vec![0, 1, 2]);
    assert_eq!(p.irqs[1].effective_cpus(&p.isolated), vec![2, 3]);
    let t = p.timers.as_ref().unwrap();
    assert_eq!(t.wheel, TimerWheel::Cascading);
    assert!(t.migrate);
    assert_eq!(t.cascade_cost, DEFAULT_CASCADE_COST);
    assert_eq!(t.cascade_per_timer, DEFAULT_CASCADE_PER_TIMER);
    assert_eq!(t.groups[0].name, "keepalive");
    assert_eq!(t.groups[0].cpus, vec![0, 1, 2, 3]);
    assert_eq!(t.groups[1].name, "group1");
    assert!(t.groups[1].periodic && !t.groups[0].periodic);
    let ks = p.kernel_sections.unwrap();
    assert_eq!(
        (ks.every, ks.length, ks.max_length),
        (2 * MS, 20 * US, 300 * US)
    );
    assert!(p.has_kernel_work());

    let probe = &w.tasks[0];
    assert_eq!(probe.class, TaskClass::Fifo);
    assert_eq!(probe.priority, Some(99));
    assert_eq!(probe.period, Some(MS));
    assert_eq!(
        probe.offset, MS,
        "first sample one interval after the start"
    );
    assert_eq!(probe.runtime, US, "default probe runtime");
    assert_eq!(probe.probe.unwrap().interval, MS);
    assert_eq!(probe.affinity, Some(vec![3]));
    let cfs = &w.tasks[1];
    assert_eq!(
        (cfs.class, cfs.nice, cfs.priority),
        (TaskClass::Normal, -5, None)
    );
    assert_eq!(cfs.runtime, 3 * US);
    assert!(w.tasks[2].probe.is_none());
}

#[test]
fn defaults_leave_the_platform_as_before() {
    let w = ok("tasks: [{ name: a, runtime: 1ms, period: 10ms }]");
    let p = &w.platform;
    assert_eq!(p.wakeup_cost, 0);
    assert!(p.irqs.is_empty() && p.timers.is_none() && p.isolated.is_empty());
    assert!(p.kernel_sections.is_none());
    assert!(!p.has_kernel_work());
    let w = ok("tasks: [{ name: p, probe: { interval: 2ms } }]");
    assert_eq!(w.tasks[0].class, TaskClass::Fifo);
    assert_eq!(w.tasks[0].priority, Some(99));
    let w = ok("platform: { hz: 250, timers: { wheel: hierarchical, groups: [{ count: 1, timeout: 1s }] } }\ntasks: [{ name: p, probe: { interval: 2ms } }]");
    assert_eq!(
        w.platform.timers.as_ref().unwrap().wheel,
        TimerWheel::Hierarchical
    );
}

#[test]
fn bad_platform_fields_are_named() {
    let t = "\ntasks: [{ name: p, probe: { interval: 1ms } }]";
    has(
        &err(&format!("platform: {{ cpus: 2, isolated: [0, 1] }}{t}")),
        &["platform.isolated", "every CPU", "housekeeping"],
    );
    has(
        &err(&format!("platform: {{ cpus: 2, isolated: [2] }}{t}")),
        &["platform.isolated", "CPU 2", "0..1"],
    );
    has(
        &err(&format!("platform: {{ irqs: [{{ period: 1ms }}] }}{t}")),
        &["platform.irqs[0] (irq0).handler is missing"],
    );
    has(
        &err(&format!(
            "platform: {{ irqs: [{{ name: nic, period: 10us, handler: 8us, softirq: 2us }}] }}{t}"
        )),
        &["platform.irqs[0] (nic)", "not shorter than the period 10us"],
    );
    has(
        &err(&format!(
            "platform: {{ irqs: [{{ period: 1ms, handler: 1us, cpus: [] }}] }}{t}"
        )),
        &["platform.irqs[0] (irq0).cpus", "empty"],
    );
    has(
        &err(&format!(
            "platform: {{ irqs: [{{ period: 1ms, handler: 1us, vector: 3 }}] }}{t}"
        )),
        &["platform.irqs[0]", "unknown field `vector`"],
    );
    has(
        &err(&format!(
            "platform: {{ hz: 0, timers: {{ groups: [{{ count: 1, timeout: 1s }}] }} }}{t}"
        )),
        &["platform.timers", "platform.hz"],
    );
    has(
        &err(&format!("platform: {{ timers: {{ wheel: calendar }} }}{t}")),
        &[
            "platform.timers.wheel",
            "`calendar`",
            "cascading, hierarchical",
        ],
    );
    has(
        &err(&format!(
            "platform: {{ timers: {{ groups: [{{ count: 3 }}] }} }}{t}"
        )),
        &["platform.timers.groups[0] (group0).timeout is missing"],
    );
    has(
        &err(&format!(
            "platform: {{ timers: {{ groups: [{{ count: 20000000, timeout: 1s }}] }} }}{t}"
        )),
        &["timers in all", "10000000"],
    );
    has(
        &err(&format!(
            "platform: {{ kernel_sections: {{ every: 1ms, length: 2ms }} }}{t}"
        )),
        &["platform.kernel_sections", "shorter than `every`"],
    );
    has(
        &err(&format!(
            "platform: {{ kernel_sections: {{ every: 1ms, length: 20us, max_length: 10us }} }}{t}"
        )),
        &["max_length 10us is shorter than length 20us"],
    );
    has(
        &err(&format!("platform: {{ wakeup_cost: 5 parsecs }}{t}")),
        &["platform.wakeup_cost", "unknown unit"],
    );
}

#[test]
fn bad_probes_are_named() {
    has(
        &err("tasks: [{ name: p, probe: { policy: fifo } }]"),
        &["task p: probe.interval is missing"],
    );
    has(
        &err("tasks: [{ name: p, priority: 90, probe: { interval: 1ms } }]"),
        &[
            "task p",
            "only name, count, affinity, offset and probe",
            "priority",
        ],
    );
    has(
        &err("tasks: [{ name: p, probe: { interval: 1ms, policy: deadline } }]"),
        &["task p: probe.policy", "`deadline`", "fifo, rr, normal"],
    );
    has(
        &err("tasks: [{ name: p, probe: { interval: 1ms, priority: 100 } }]"),
        &["probe.priority 100 is outside 1..99"],
    );
    has(
        &err("tasks: [{ name: p, probe: { interval: 1ms, nice: 3 } }]"),
        &["probe.nice applies to a normal probe"],
    );
    has(
        &err("tasks: [{ name: p, probe: { interval: 1ms, policy: other, priority: 3 } }]"),
        &["probe.priority applies to fifo/rr"],
    );
    has(
        &err("tasks: [{ name: p, probe: { interval: 1ms, runtime: 1ms } }]"),
        &["probe.runtime 1ms", "shorter than the interval 1ms"],
    );
    has(
        &err("tasks: [{ name: p, probe: { interval: 1ms, every: 2 } }]"),
        &["probe", "unknown field `every`"],
    );
    has(
        &err(
            "platform: { cpus: 2 }\ntasks: [{ name: p, affinity: [4], probe: { interval: 1ms } }]",
        ),
        &["task p", "CPU 4"],
    );
}

#[test]
fn probes_expand_with_count_and_keep_their_offset() {
    let w = ok("tasks: [{ name: p, count: 2, offset: 250us, probe: { interval: 1ms, policy: rr, priority: 80 } }]");
    assert_eq!(w.tasks.len(), 2);
    assert_eq!(w.tasks[1].name, "p2");
    assert_eq!(w.tasks[1].class, TaskClass::Rr);
    assert_eq!(w.tasks[1].priority, Some(80));
    assert_eq!(w.tasks[0].offset, 250 * US);
    // JSON works the same.
    let w = Workload::parse_str(
        r#"{"platform": {"cpus": 2, "irqs": [{"period": "1ms", "handler": 5000}]}, "duration": "1s",
            "tasks": [{"name": "p", "probe": {"interval": 1000000}}]}"#,
        Path::new("w.json"),
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(w.platform.irqs[0].handler, 5 * US);
    assert_eq!(w.duration, S);
}
