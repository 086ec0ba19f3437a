//! The event log recorded with the trace agrees with the counted metrics: one `Switch`
//! per counted context switch, busy time rebuilt from switches equals the per-CPU
//! utilisation and per-task CPU time, one `Release` per job, one `Complete` per completion.
mod common;
use common::*;
use schedlab_sim::result::SimEvent;
use schedlab_sim::SimResult;

const MIXED: &str = "
platform: { cpus: 3, hz: 1000, context_switch: 5us, migration: 20us, tick: 1us }
duration: 1s
seed: 3
tasks:
  - { name: big, count: 3, runtime: 60ms, period: 100ms }
  - { name: small, count: 6, runtime: 5ms, period: 60ms }
  - { name: spor, count: 2, runtime: 2ms, period: 20ms, release: sporadic, jitter: 15ms, exec: { uniform: [500us, 2ms] } }
";

fn check(r: &SimResult, label: &str) {
    let log = r.log.as_ref().expect("log recorded with the trace");
    let ncpu = r.cpus;
    let mut switches = vec![0u64; ncpu];
    let mut idle_switches = vec![0u64; ncpu];
    let mut curr: Vec<Option<usize>> = vec![None; ncpu];
    let mut since = vec![0u64; ncpu];
    let mut busy = vec![0u64; ncpu];
    let mut cpu_time = vec![0u64; r.tasks.len()];
    let (mut released, mut completed, mut aborted) = (0u64, 0u64, 0u64);
    let mut last = 0;
    for ev in log {
        match *ev {
            SimEvent::Switch {
                time,
                cpu,
                prev,
                next,
                ..
            } => {
                assert!(time >= last, "{label}: log out of time order");
                last = time;
                assert_eq!(curr[cpu], prev, "{label}: switch at {time} on {cpu}");
                assert_ne!(prev, next);
                switches[cpu] += 1;
                if prev.is_none() || next.is_none() {
                    idle_switches[cpu] += 1;
                }
                if let Some(p) = prev {
                    busy[cpu] += time - since[cpu];
                    cpu_time[p] += time - since[cpu];
                }
                curr[cpu] = next;
                since[cpu] = time;
            }
            SimEvent::Release { .. } => released += 1,
            SimEvent::Complete { .. } => completed += 1,
            SimEvent::Abort { .. } => aborted += 1,
            SimEvent::Wakeup { .. } => {}
        }
    }
    for cpu in 0..ncpu {
        if let Some(p) = curr[cpu] {
            busy[cpu] += r.duration_ns - since[cpu];
            cpu_time[p] += r.duration_ns - since[cpu];
        }
        let pc = &r.per_cpu[cpu];
        assert_eq!(switches[cpu], pc.context_switches, "{label}: cpu {cpu}");
        assert_eq!(idle_switches[cpu], pc.idle_switches, "{label}: cpu {cpu}");
        assert_eq!(
            busy[cpu] as f64 / r.duration_ns as f64,
            pc.utilisation,
            "{label}: cpu {cpu}"
        );
    }
    for (i, t) in r.tasks.iter().enumerate() {
        assert_eq!(cpu_time[i], t.cpu_time_ns, "{label}: task {}", t.name);
    }
    assert_eq!(released, r.jobs_released, "{label}");
    assert_eq!(completed, r.jobs_completed, "{label}");
    assert_eq!(aborted, r.jobs_aborted, "{label}");
}

#[test]
fn the_log_rebuilds_every_counted_switch() {
    for placement in ["global", "partitioned", "linux"] {
        for policy in ["edf", "llf", "illf", "rm", "rr"] {
            let r = run_yaml(MIXED, policy, placement);
            check(&r, &format!("{policy}/{placement}"));
        }
    }
}

#[test]
fn aborted_jobs_are_logged() {
    let yaml = format!("on_miss: abort\n{MIXED}").replace("cpus: 3", "cpus: 2");
    let r = run_yaml(&yaml, "edf", "global");
    assert!(r.jobs_aborted > 0);
    check(&r, "abort");
}

#[test]
fn untraced_runs_record_no_log() {
    let w = workload(MIXED, "edf", "linux");
    let r = schedlab_sim::simulate(&w, &schedlab_sim::SimOptions::default()).unwrap();
    assert!(r.log.is_none() && r.trace.is_none());
}
