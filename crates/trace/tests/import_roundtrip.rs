//! Round trip: simulate -> ftrace text (trace-cmd report style) -> `trace import` ->
//! the periodic tasks come back with their periods, runtimes and offsets.
use schedlab_model::{Overrides, Policy, Workload};
use schedlab_sim::{simulate, SimOptions};
use schedlab_trace::import::kernel::{self, Options};
use schedlab_trace::{ftrace, Schedule};
use std::path::Path;

fn export(yaml: &str, policy: &str) -> (Workload, String) {
    let ov = Overrides {
        policy: Some(Policy::parse(policy).unwrap()),
        ..Overrides::default()
    };
    let w = Workload::parse_str(yaml, Path::new("w.yaml"), &ov).unwrap();
    let r = simulate(&w, &SimOptions { trace: true }).unwrap();
    let s = Schedule::from_sim(&w, &r).unwrap();
    (w, ftrace::render(&s))
}

#[test]
fn table1_comes_back_task_for_task() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let yaml = std::fs::read_to_string(root.join("examples/table1.yaml")).unwrap();
    let (w, text) = export(&yaml, "edf");
    let imp = kernel::import(&text, "sim.txt", &Options::default()).unwrap();
    let back =
        Workload::parse_str(&imp.yaml, Path::new("back.yaml"), &Overrides::default()).unwrap();
    assert_eq!(back.platform.cpus, w.platform.cpus);
    assert_eq!(back.tasks.len(), w.tasks.len(), "{}", imp.yaml);
    for t in &w.tasks {
        let b = back
            .tasks
            .iter()
            .find(|b| b.name == t.name)
            .unwrap_or_else(|| panic!("{} missing:\n{}", t.name, imp.yaml));
        assert_eq!(b.period, t.period, "{}", t.name);
        assert_eq!(b.runtime, t.runtime, "{}", t.name);
        assert_eq!(b.class, t.class, "{}", t.name);
    }
    // Nothing was inferred: the export has every switch.
    assert!(imp.yaml.contains("(0 more inferred)"), "{}", imp.yaml);
}

#[test]
fn offsets_and_fixed_priorities_survive() {
    let yaml = "platform: { cpus: 2 }\nduration: 1s\ntasks:\n  - { name: a, class: fifo, priority: 70, runtime: 3ms, period: 20ms, offset: 5ms }\n  - { name: b, class: fifo, priority: 10, runtime: 9ms, period: 50ms }\n";
    let (_, text) = export(yaml, "fifo");
    let imp = kernel::import(&text, "sim.txt", &Options::default()).unwrap();
    assert!(
        imp.yaml.contains(
            "{ name: \"a\", class: fifo, priority: 70, runtime: 3ms, period: 20ms, offset: 5ms }"
        ),
        "{}",
        imp.yaml
    );
    assert!(
        imp.yaml
            .contains("{ name: \"b\", class: fifo, priority: 10, runtime: 9ms, period: 50ms }"),
        "{}",
        imp.yaml
    );
}

#[test]
fn dropped_idle_to_task_switches_do_not_change_the_result() {
    // Remove a third of the idle -> task switches, as the kernels measured here do.
    let yaml = "platform: { cpus: 2 }\nduration: 2s\ntasks:\n  - { name: a, runtime: 3ms, period: 20ms }\n  - { name: b, runtime: 7ms, period: 30ms }\n  - { name: c, runtime: 1ms, period: 10ms }\n";
    let (_, full) = export(yaml, "edf");
    let mut dropped = 0;
    let mut k = 0;
    let lossy: String = full
        .lines()
        .filter(|l| {
            if l.contains("sched_switch:") && l.contains(" swapper/") && l.contains(" R ==> ") {
                k += 1;
                if k % 3 == 0 {
                    dropped += 1;
                    return false;
                }
            }
            true
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(dropped > 50);
    let a = kernel::cpu_time_by_pid(&full).unwrap();
    let b = kernel::cpu_time_by_pid(&lossy).unwrap();
    assert_eq!(a, b, "wake-ups pin the missing switch-ins exactly");
    let imp = kernel::import(&lossy, "lossy.txt", &Options::default()).unwrap();
    assert!(
        imp.notes
            .iter()
            .any(|n| n.starts_with(&format!("{dropped} context switches were missing"))),
        "{:?}",
        imp.notes
    );
    assert!(
        imp.yaml
            .contains("{ name: \"a\", runtime: 3ms, period: 20ms }"),
        "{}",
        imp.yaml
    );
    assert!(
        imp.yaml
            .contains("{ name: \"b\", runtime: 7ms, period: 30ms }"),
        "{}",
        imp.yaml
    );
}
