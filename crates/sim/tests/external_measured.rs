//! The externally driven engine (the real runner's dispatcher) with measured remaining
//! times: between two decisions the caller replaces a running job's remaining time with
//! the one it read from the thread's CPU clock, which can be a little below the engine's
//! estimate (the clock is read after the instant). A running job's laxity can then rise
//! while it runs, so the shortcuts that assume it constant (LLF's running-key bounds,
//! ILLF's rule-1 cache) must not be used: they tripped their debug checks in real
//! dispatcher runs (and in release builds decided on stale laxities). The ILLF case
//! here trips its check without the fix; the LLF case checks LLF's order with measured
//! times (its bound check tripped only in real runs' timing: `schedlab run --policy
//! llf` under load, crates/cli/tests/run.rs).
mod common;
use common::*;
use schedlab_sim::engine::external::ExternalJob;
use schedlab_sim::engine::Engine;

/// Five tasks of 7 ms every 20 ms on 2 CPUs (U = 1.75), ticks every ms.
const SET: &str = "
platform: { cpus: 2, hz: 1000 }
duration: 1s
tasks:
  - { name: t, count: 5, runtime: 7ms, period: 20ms }
";

const MS: u64 = 1_000_000;

/// Drive `policy` for 200 ms: releases every 20 ms, a decision every 0.5 ms (the
/// dispatcher also decides between ticks, at completions), a tick every ms, each running
/// job measured 20 µs further on than the engine charged. After each decision:
/// `check(now, laxities of the running tasks, laxities of the waiting ones)`.
fn drive(policy: &str, check: impl Fn(u64, &[i64], &[i64])) -> u64 {
    let w = workload(SET, policy, "global");
    let mut e = Engine::external(&w).unwrap();
    let n = w.tasks.len();
    for now in (0..200 * MS).step_by(MS as usize / 2) {
        e.at(now);
        let running: Vec<usize> = (0..e.cpus()).filter_map(|c| e.running(c)).collect();
        for &t in &running {
            let left = e.task(t).remaining();
            e.remaining(t, left.saturating_sub(20_000));
        }
        for t in 0..n {
            if e.task(t).job.is_some() && e.task(t).remaining() == 0 {
                e.complete(t);
            }
        }
        if now % (20 * MS) == 0 {
            for t in 0..n {
                let job = ExternalJob {
                    release: now,
                    deadline: now + 20 * MS,
                    exec: 7 * MS,
                    remaining: 7 * MS,
                };
                e.release(t, job);
            }
        }
        if now % MS == 0 {
            e.tick();
        }
        e.decide();
        let running: Vec<usize> = (0..e.cpus()).filter_map(|c| e.running(c)).collect();
        let laxity = |t: usize| {
            let j = e.task(t).job.unwrap();
            j.deadline as i64 - now as i64 - j.remaining as i64
        };
        let waiting: Vec<i64> = (0..n)
            .filter(|&t| e.task(t).job.is_some() && !running.contains(&t))
            .map(laxity)
            .collect();
        let run: Vec<i64> = running.iter().map(|&t| laxity(t)).collect();
        check(now, &run, &waiting);
    }
    e.laxity_evaluations()
}

#[test]
fn llf_with_measured_remaining_times_runs_the_least_laxities_after_every_tick() {
    let evals = drive("llf", |now, run, waiting| {
        if !waiting.is_empty() {
            assert_eq!(run.len(), 2, "at {now}: a CPU idles with tasks waiting");
        }
        // After a tick (LLF's tick mode preempts at ticks), no waiting job has strictly
        // less laxity than a running one.
        if now % MS != 0 {
            return;
        }
        for w in waiting {
            for r in run {
                assert!(w >= r, "at {now}: waiting laxity {w} < running {r}");
            }
        }
    });
    assert!(evals > 0);
}

#[test]
fn illf_with_measured_remaining_times_keeps_both_cpus_busy() {
    let evals = drive("illf", |now, run, waiting| {
        if !waiting.is_empty() {
            assert_eq!(run.len(), 2, "at {now}: a CPU idles with tasks waiting");
        }
    });
    assert!(evals > 0);
}
