//! Shared test helpers: build workloads from YAML, simulate with a trace, and check the
//! invariants every schedule in the suite must satisfy.
#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedlab_model::{Overrides, Placement, Policy, Workload};
use schedlab_sim::{simulate_checked, Segment, SimOptions, SimResult};
use std::path::Path;

/// Milliseconds in ns.
pub const MS: u64 = 1_000_000;

/// The seeds' E2 example (examples/e2.yaml without its name): three tasks on one CPU
/// whose hand-worked schedules several policies' tests assert.
pub const E2: &str = "
platform: { cpus: 1, hz: 1000 }
duration: 100ms
tasks:
  - { name: t1, runtime: 5ms, period: 50ms }
  - { name: t2, runtime: 5ms, period: 50ms }
  - { name: t3, runtime: 60ms, period: 100ms }
";

/// Parse a YAML workload with overrides.
pub fn workload(yaml: &str, policy: &str, placement: &str) -> Workload {
    let ov = Overrides {
        policy: Some(Policy::parse(policy).unwrap()),
        placement: Some(Placement::parse(placement).unwrap()),
        ..Overrides::default()
    };
    Workload::parse_str(yaml, Path::new("test.yaml"), &ov).unwrap()
}

/// Simulate with a trace and check the invariants.
pub fn run(w: &Workload) -> SimResult {
    let r = simulate_checked(w, &SimOptions { trace: true }).unwrap();
    check_invariants(w, &r);
    r
}

/// Simulate a YAML text under `policy`/`placement`.
pub fn run_yaml(yaml: &str, policy: &str, placement: &str) -> SimResult {
    run(&workload(yaml, policy, placement))
}

/// Segments of task `name`, as (cpu, job, start_ms, end_ms) with fractional ms.
pub fn segments_of(w: &Workload, r: &SimResult, name: &str) -> Vec<(usize, u64, f64, f64)> {
    let idx = w.tasks.iter().position(|t| t.name == name).unwrap();
    r.trace
        .as_ref()
        .unwrap()
        .iter()
        .filter(|s| s.task == idx)
        .map(|s| {
            (
                s.cpu,
                s.job,
                s.start as f64 / MS as f64,
                s.end as f64 / MS as f64,
            )
        })
        .collect()
}

/// The schedule as "task[job]@cpu start-end" strings (ms), merged per (task, job, cpu)
/// when contiguous, ordered by start then CPU.
pub fn schedule(w: &Workload, r: &SimResult, until_ms: u64) -> Vec<String> {
    let mut segs: Vec<Segment> = r.trace.clone().unwrap();
    segs.sort_by_key(|s| (s.start, s.cpu));
    segs.iter()
        .filter(|s| s.start < until_ms * MS)
        .map(|s| {
            format!(
                "{}[{}]@{} {}-{}",
                w.tasks[s.task].name,
                s.job,
                s.cpu,
                fmt_ms(s.start),
                fmt_ms(s.end)
            )
        })
        .collect()
}

fn fmt_ms(ns: u64) -> String {
    if ns.is_multiple_of(MS) {
        format!("{}", ns / MS)
    } else {
        format!("{:.3}", ns as f64 / MS as f64)
    }
}

/// Invariants of every schedule:
/// - a CPU never runs two tasks at once, and a task never runs on two CPUs at once;
/// - with no overheads, every completed job executed exactly its demand (WCET model);
/// - with global placement and no affinity, no CPU is idle while a released job waits.
pub fn check_invariants(w: &Workload, r: &SimResult) {
    let segs = r.trace.as_ref().expect("trace recorded");
    for s in segs {
        assert!(s.start < s.end, "empty segment {s:?}");
        assert!(s.end <= w.duration, "segment past the end {s:?}");
    }
    let mut by_cpu: Vec<Vec<&Segment>> = vec![Vec::new(); w.platform.cpus];
    let mut by_task: Vec<Vec<&Segment>> = vec![Vec::new(); w.tasks.len()];
    for s in segs {
        by_cpu[s.cpu].push(s);
        by_task[s.task].push(s);
    }
    for (cpu, v) in by_cpu.iter_mut().enumerate() {
        v.sort_by_key(|s| s.start);
        for p in v.windows(2) {
            assert!(
                p[0].end <= p[1].start,
                "CPU {cpu} runs two tasks at once: {:?} {:?}",
                p[0],
                p[1]
            );
        }
    }
    for (t, v) in by_task.iter_mut().enumerate() {
        v.sort_by_key(|s| s.start);
        for p in v.windows(2) {
            assert!(
                p[0].end <= p[1].start,
                "task {t} on two CPUs at once: {:?} {:?}",
                p[0],
                p[1]
            );
        }
    }
    let no_overheads = w.platform.context_switch == 0
        && w.platform.migration == 0
        && w.platform.preemption == 0
        && w.platform.tick == 0
        && !w.platform.has_kernel_work()
        && w.platform.idle_states.is_empty()
        && w.platform.job_costs.per_job == 0;
    let wcet = w
        .tasks
        .iter()
        .all(|t| t.exec == schedlab_model::ExecModel::Wcet);
    if no_overheads && wcet && w.on_miss == schedlab_model::OnMiss::Continue {
        for (t, v) in by_task.iter().enumerate() {
            let done = r.tasks[t].completed;
            for job in 0..done {
                let ran: u64 = v
                    .iter()
                    .filter(|s| s.job == job)
                    .map(|s| s.end - s.start)
                    .sum();
                assert_eq!(
                    ran, w.tasks[t].runtime,
                    "task {} job {job} ran {ran} ns",
                    w.tasks[t].name
                );
            }
        }
    }
    let periodic = w
        .tasks
        .iter()
        .all(|t| t.release == schedlab_model::Release::Periodic);
    let free = w.tasks.iter().all(|t| t.affinity.is_none());
    // EDHS places tasks per CPU and NVNLF leaves a job without budget waiting: neither
    // is work-conserving across CPUs.
    let conserving = !matches!(w.scheduler.policy, Policy::Edhs | Policy::Nvnlf);
    if w.scheduler.placement == Placement::Global
        && periodic
        && free
        && no_overheads
        && wcet
        && conserving
    {
        check_work_conserving(w, r, &by_task);
    }
}

/// Global placement: at every instant, busy CPUs = min(cpus, tasks with a pending job).
fn check_work_conserving(w: &Workload, r: &SimResult, by_task: &[Vec<&Segment>]) {
    let mut points: Vec<u64> = Vec::new();
    for s in r.trace.as_ref().unwrap() {
        points.push(s.start);
        points.push(s.end);
    }
    for t in &w.tasks {
        let mut rel = t.offset;
        while rel < w.duration {
            points.push(rel);
            rel += t.period.unwrap();
        }
    }
    points.sort_unstable();
    points.dedup();
    for &p in &points {
        if p >= w.duration {
            continue;
        }
        let busy = by_task
            .iter()
            .flatten()
            .filter(|s| s.start <= p && p < s.end)
            .count();
        let mut pending = 0;
        for (i, t) in w.tasks.iter().enumerate() {
            let period = t.period.unwrap();
            if p < t.offset {
                continue;
            }
            let released = (p - t.offset) / period + 1;
            // Work done by time p.
            let done: u64 = by_task[i]
                .iter()
                .map(|s| s.end.min(p).saturating_sub(s.start))
                .sum();
            if done < released * t.runtime {
                pending += 1;
            }
        }
        assert_eq!(
            busy,
            pending.min(w.platform.cpus),
            "at t={p} ns {busy} CPUs busy but {pending} tasks have pending work"
        );
    }
}

/// UUniFast utilisations summing to `total`, log-uniform periods in whole ms.
pub fn periodic_set(n: usize, cpus: usize, total: f64, ms: u64, seed: u64) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut sum = total;
    let mut y = format!("platform: {{ cpus: {cpus}, hz: 1000 }}\nduration: {ms}ms\ntasks:\n");
    for i in 0..n {
        let u = if i + 1 == n {
            sum
        } else {
            let next = sum * rng.random::<f64>().powf(1.0 / (n - i - 1) as f64);
            let u = sum - next;
            sum = next;
            u
        };
        let period = (10f64 * 100f64.powf(rng.random::<f64>())).round() as u64;
        let runtime = ((u.min(1.0) * period as f64 * 1000.0).round() as u64).max(1);
        y += &format!("  - {{ name: t{i}, runtime: {runtime}us, period: {period}ms }}\n");
    }
    y
}
