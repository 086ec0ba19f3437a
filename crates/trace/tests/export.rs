//! Exports agree with the counted metrics (the Python suite checks the same against
//! Perfetto's official compiled proto).
use prost::Message;
use schedlab_model::{Overrides, Placement, Policy, Workload};
use schedlab_sim::{simulate, SimOptions, SimResult};
use schedlab_trace::perfetto::{self, Trace};
use schedlab_trace::Schedule;
use std::path::Path;

const W: &str = "
name: mix
platform: { cpus: 2, hz: 1000 }
duration: 500ms
tasks:
  - { name: a, count: 2, runtime: 30ms, period: 50ms }
  - { name: b, runtime: 20ms, period: 40ms }
  - { name: c, runtime: 3ms, period: 10ms, release: sporadic, jitter: 4ms }
";

fn sim(policy: &str, placement: &str) -> (Workload, SimResult) {
    let ov = Overrides {
        policy: Some(Policy::parse(policy).unwrap()),
        placement: Some(Placement::parse(placement).unwrap()),
        ..Overrides::default()
    };
    let w = Workload::parse_str(W, Path::new("w.yaml"), &ov).unwrap();
    let r = simulate(&w, &SimOptions { trace: true }).unwrap();
    (w, r)
}

#[test]
fn jobs_and_switches_match_the_results() {
    for (policy, placement) in [("edf", "global"), ("rm", "linux"), ("illf", "linux")] {
        let (w, r) = sim(policy, placement);
        let s = Schedule::from_sim(&w, &r).unwrap();
        assert!(
            r.deadline_misses > 0,
            "{policy}: the workload is overloaded"
        );
        assert_eq!(s.jobs.len() as u64, r.jobs_released);
        assert_eq!(
            s.jobs.iter().filter(|j| j.missed).count() as u64,
            r.deadline_misses,
            "{policy}/{placement}"
        );
        assert_eq!(
            s.jobs.iter().filter(|j| j.finish.is_some()).count() as u64,
            r.jobs_completed
        );
        assert_eq!(s.switches.len() as u64, r.context_switches);
        let busy = s.busy_per_cpu();
        for c in &r.per_cpu {
            assert_eq!(busy[c.cpu] as f64 / r.duration_ns as f64, c.utilisation);
        }
        for j in &s.jobs {
            if let (Some(st), Some(f)) = (j.start, j.finish) {
                assert!(j.release <= st && st < f, "{j:?}");
            }
        }
    }
}

#[test]
fn perfetto_decodes_with_one_switch_per_counted_switch() {
    let (w, r) = sim("edf", "linux");
    let s = Schedule::from_sim(&w, &r).unwrap();
    let bytes = perfetto::encode(&s);
    let t = Trace::decode(bytes.as_slice()).unwrap();
    let mut per_cpu = vec![0u64; r.cpus];
    for p in &t.packet {
        if let Some(b) = &p.ftrace_events {
            let cpu = b.cpu.unwrap() as usize;
            let mut last = 0;
            for e in &b.event {
                assert!(e.timestamp.unwrap() >= last);
                last = e.timestamp.unwrap();
                if e.sched_switch.is_some() {
                    per_cpu[cpu] += 1;
                }
            }
        }
    }
    for c in &r.per_cpu {
        assert_eq!(per_cpu[c.cpu], c.context_switches);
    }
}

#[test]
fn ftrace_text_has_one_line_per_event() {
    let (w, r) = sim("edf", "linux");
    let s = Schedule::from_sim(&w, &r).unwrap();
    let text = schedlab_trace::ftrace::render(&s);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "cpus=2");
    assert_eq!(lines.len() - 1, s.switches.len() + s.wakeups.len());
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains(" sched_switch: "))
            .count() as u64,
        r.context_switches
    );
    assert!(lines[1].contains("sched_wakeup_new:"), "{}", lines[1]);
}

#[test]
fn untraced_results_give_no_schedule() {
    let (w, _) = sim("edf", "linux");
    let r = simulate(&w, &SimOptions::default()).unwrap();
    assert!(Schedule::from_sim(&w, &r).is_none());
}
