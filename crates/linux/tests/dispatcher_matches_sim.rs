//! The dispatcher decides as the simulator does: each workload is simulated under global
//! placement with zero overheads and its event log (releases, completions, aborts,
//! switches) replayed into the dispatcher's [`Decider`] exactly as the manager thread
//! would see it — at every instant, each task's current job (release, deadline, remaining
//! execution time) and whether the instant is a tick. After every instant the Decider's
//! assignment (which task on which CPU) must be the simulator's, for edf, llf and illf.
//!
//! No root needed: nothing runs on the kernel.

use schedlab_linux::decide::{Decider, JobView};
use schedlab_model::time::S;
use schedlab_model::{Ns, Overrides, Placement, Policy, Workload};
use schedlab_sim::result::SimEvent;
use schedlab_sim::{simulate, SimOptions};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

const POLICIES: [Policy; 3] = [Policy::Edf, Policy::Llf, Policy::Illf];

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

/// `w` as the dispatcher runs it: global placement, no overheads.
fn dispatched(mut w: Workload, policy: Policy) -> Workload {
    w.scheduler.policy = policy;
    w.scheduler.placement = Placement::Global;
    w.scheduler.cbs = false;
    w.platform.context_switch = 0;
    w.platform.migration = 0;
    w.platform.preemption = 0;
    w.platform.tick = 0;
    w
}

fn load(path: &Path, policy: Policy) -> Workload {
    let ov = Overrides {
        policy: Some(policy),
        placement: Some(Placement::Global),
        ..Overrides::default()
    };
    dispatched(Workload::load(path, &ov).unwrap(), policy)
}

fn parse(yaml: &str, policy: Policy) -> Workload {
    let ov = Overrides {
        policy: Some(policy),
        placement: Some(Placement::Global),
        ..Overrides::default()
    };
    dispatched(
        Workload::parse_str(yaml, Path::new("random.yaml"), &ov).unwrap(),
        policy,
    )
}

#[derive(Clone, Copy, Debug)]
struct LogJob {
    seq: u64,
    release: Ns,
    deadline: Ns,
    remaining: Ns,
}

/// What the replay compared: decision instants, the instants whose assignment changed,
/// and jobs that waited behind their task's previous one (started at its completion).
struct Replayed {
    instants: usize,
    changes: usize,
    backlogged: usize,
}

/// Simulate `w`, replay its log into a Decider and compare after every instant.
fn replay(w: &Workload, label: &str) -> Replayed {
    let r = simulate(w, &SimOptions { trace: true }).unwrap();
    let log = r.log.expect("trace on: the event log is recorded");
    let (n, m) = (w.tasks.len(), w.platform.cpus);
    let tick = if w.platform.hz == 0 {
        0
    } else {
        S / w.platform.hz as u64
    };
    // Every instant the simulator handled: those with a logged event and every tick.
    let mut instants: Vec<Ns> = log.iter().map(time_of).collect();
    if tick > 0 {
        instants.extend((1..).map(|k| k * tick).take_while(|&t| t < w.duration));
    }
    instants.retain(|&t| t < w.duration);
    instants.sort_unstable();
    instants.dedup();

    let mut dec = Decider::new(w).unwrap();
    let mut cur: Vec<Option<LogJob>> = vec![None; n];
    let mut backlog: Vec<VecDeque<LogJob>> = vec![VecDeque::new(); n];
    let mut sim_assign: Vec<Option<usize>> = vec![None; m];
    let mut jobs: Vec<Option<JobView>> = vec![None; n];
    let mut at = 0;
    let mut prev_t = 0;
    let mut changes = 0;
    let mut backlogged = 0;
    for &t in &instants {
        // Accounting: the running jobs progressed since the previous instant.
        for &task in sim_assign.iter().flatten() {
            if let Some(j) = cur[task].as_mut() {
                j.remaining = j.remaining.saturating_sub(t - prev_t);
            }
        }
        prev_t = t;
        let before = sim_assign.clone();
        while at < log.len() && time_of(&log[at]) == t {
            match log[at] {
                SimEvent::Release {
                    task,
                    job,
                    deadline,
                    exec,
                    ..
                } => {
                    let j = LogJob {
                        seq: job,
                        release: t,
                        deadline,
                        remaining: exec,
                    };
                    if cur[task].is_some() {
                        backlog[task].push_back(j);
                    } else {
                        cur[task] = Some(j);
                    }
                }
                SimEvent::Complete { task, .. } => {
                    cur[task] = backlog[task].pop_front();
                    backlogged += usize::from(cur[task].is_some());
                }
                SimEvent::Abort { task, job, .. } => {
                    if cur[task].is_some_and(|j| j.seq == job) {
                        cur[task] = backlog[task].pop_front();
                    } else {
                        backlog[task].retain(|j| j.seq != job);
                    }
                }
                SimEvent::Switch { cpu, next, .. } => sim_assign[cpu] = next,
                _ => {}
            }
            at += 1;
        }
        if sim_assign != before {
            changes += 1;
        }
        for (v, j) in jobs.iter_mut().zip(&cur) {
            *v = j.map(|j| JobView {
                release: j.release,
                deadline: j.deadline,
                remaining: j.remaining,
            });
        }
        let is_tick = tick > 0 && t % tick == 0;
        let got = dec.decide(t, &jobs, is_tick);
        assert_eq!(
            got,
            &sim_assign[..],
            "{label}: at {t} ns (tick: {is_tick}) the dispatcher runs {got:?}, the simulator {sim_assign:?}; jobs {jobs:?}"
        );
    }
    // The classes counted the same laxity evaluations (the simulation also handles the
    // completions at its very end, where it takes no decision).
    let at_end = log.iter().any(|e| time_of(e) == w.duration);
    if !at_end {
        assert_eq!(dec.laxity_evaluations, r.laxity_evaluations, "{label}");
    }
    Replayed {
        instants: instants.len(),
        changes,
        backlogged,
    }
}

fn time_of(e: &SimEvent) -> Ns {
    match *e {
        SimEvent::Release { time, .. }
        | SimEvent::Wakeup { time, .. }
        | SimEvent::Switch { time, .. }
        | SimEvent::Complete { time, .. }
        | SimEvent::Abort { time, .. } => time,
    }
}

fn check_example(name: &str) {
    for p in POLICIES {
        let w = load(&example(name), p);
        let r = replay(&w, &format!("{name} {}", p.name()));
        eprintln!(
            "{name} {}: {} instants, {} with a new assignment: identical",
            p.name(),
            r.instants,
            r.changes
        );
        assert!(r.changes > 0);
    }
}

#[test]
fn dhall_example_dispatcher_decides_as_the_simulator() {
    check_example("dhall.yaml");
}

#[test]
fn e2_dispatcher_decides_as_the_simulator() {
    check_example("e2.yaml");
}

#[test]
fn table1_2cpu_dispatcher_decides_as_the_simulator() {
    check_example("table1-2cpu.yaml");
}

/// SplitMix64: a few reproducible random numbers without a dependency.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random task set of `n` tasks on `cpus` CPUs at about `load` × cpus utilisation:
/// periods 5–100 ms, some constrained deadlines, offsets, sporadic releases and uniform
/// execution times, so that ties, backlogs (overload) and misses occur.
fn random_set(seed: u64, n: usize, cpus: usize, load: f64) -> String {
    let mut r = Mix(seed);
    let mut y = format!(
        "name: random{seed}\nplatform: {{ cpus: {cpus}, hz: 1000 }}\nduration: 1500ms\nseed: {seed}\ntasks:\n"
    );
    let u_each = load * cpus as f64 / n as f64;
    for i in 0..n {
        let period_ms = 5 + r.below(96);
        let u = u_each * (0.5 + r.below(1000) as f64 / 1000.0);
        let runtime_us = ((period_ms as f64 * 1000.0 * u) as u64).clamp(100, period_ms * 1000);
        let mut t = format!("  - {{ name: t{i}, runtime: {runtime_us}us, period: {period_ms}ms");
        if r.below(3) == 0 {
            let d = (runtime_us / 1000 + 1).max(period_ms * (60 + r.below(40)) / 100);
            t += &format!(", deadline: {}ms", d.min(period_ms));
        }
        if r.below(3) == 0 {
            t += &format!(", offset: {}ms", r.below(period_ms));
        }
        if r.below(4) == 0 {
            t += &format!(", release: sporadic, jitter: {}us", r.below(5000) + 1);
        }
        if r.below(3) == 0 {
            t += &format!(
                ", exec: {{ uniform: [{}us, {runtime_us}us] }}",
                runtime_us / 2
            );
        }
        y += &t;
        y += " }\n";
    }
    y
}

#[test]
fn random_sets_dispatcher_decides_as_the_simulator() {
    // Light, heavy and overloaded sets (the last two miss deadlines and build backlogs).
    let cases = [
        (1, 6, 2, 0.6),
        (2, 10, 2, 0.9),
        (3, 8, 3, 1.1),
        (4, 12, 4, 0.8),
        (5, 5, 1, 0.95),
    ];
    let mut backlogged = 0;
    for (seed, n, cpus, load) in cases {
        let yaml = random_set(seed, n, cpus, load);
        for p in POLICIES {
            let w = parse(&yaml, p);
            let r = replay(&w, &format!("random set {seed} {}\n{yaml}", p.name()));
            eprintln!(
                "random set {seed} ({n} tasks, {cpus} CPUs, load {load}) {}: {} instants, {} changes, {} backlogged jobs: identical",
                p.name(),
                r.instants,
                r.changes,
                r.backlogged
            );
            backlogged += r.backlogged;
        }
    }
    // The overloaded sets exercise the backlog path (a job starting at a completion).
    assert!(backlogged > 0);
}

#[test]
fn same_instant_releases_reach_the_classes_in_the_simulators_order() {
    // At 20 ms both tasks release a job with the same deadline (30 ms). The simulator
    // queued t1's release at 0 and t0's at 10 ms, so t1's comes first and, on a tie, runs
    // first (EDF queues equal deadlines FIFO) — not the lower task index.
    let yaml = "name: ties\nplatform: { cpus: 1, hz: 1000 }\nduration: 200ms\ntasks:\n  - { name: t0, runtime: 2ms, period: 10ms, deadline: 10ms }\n  - { name: t1, runtime: 2ms, period: 20ms, deadline: 10ms }\n  - { name: t2, runtime: 3ms, period: 20ms, offset: 20ms, deadline: 10ms }\n";
    for p in POLICIES {
        let r = replay(&parse(yaml, p), &format!("ties {}", p.name()));
        assert!(r.changes > 0);
    }
}
