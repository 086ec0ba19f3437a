//! Per-decision cost of `llf` and `illf` (tick mode) as the ready queue of ONE CPU grows:
//! 16, 256 and 4096 tasks.
//!
//! Every task is released at t = 0 with a runtime (10⁵ s) and a deadline (2·10⁵ s +
//! 10⁵ s × i) so long that no job completes and no laxities cross during the benchmark:
//! one task runs, all the others stay ready, and after the releases the run is nothing
//! but ticks (HZ = 1000), each one a scheduling decision of the policy (LLF re-evaluates
//! the laxities and compares the least-laxity waiting task with the running one; ILLF
//! refreshes its leftmost waiting task and applies rule 3).
//!
//! The releases at t = 0 cost O(n) each under ILLF's rule 1 (all stored laxities are
//! refreshed at an activation), O(n²) in all: seconds for n = 4096, which would swamp
//! the ticks. So the engine is built and run past t = 0 once, outside the measurement,
//! and each measured iteration advances the same simulation by 10,000 more ticks
//! ([`Engine::run_until`]). Criterion's throughput is ticks per second; the time per
//! element is the engine's full cost of one tick (event queue, accounting, the class's
//! `task_tick`, timer re-arming).
//!
//! `cargo bench -p schedlab-sim --bench decision` (about 1 minute).

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use schedlab_model::{Overrides, Workload};
use schedlab_sim::engine::Engine;
use schedlab_sim::{engine_for, simulate, SimOptions};
use std::path::Path;
use std::time::{Duration, Instant};

const HZ: u64 = 1000;
const TICK_NS: u64 = 1_000_000_000 / HZ;
/// Ticks per measured iteration.
const CHUNK: u64 = 10_000;
const RUNTIME_S: u64 = 100_000;

fn set(n: usize, duration_s: u64, policy: &str) -> Workload {
    let mut y = format!(
        "platform: {{ cpus: 1, hz: {HZ} }}\nduration: {duration_s}s\nscheduler: {{ deadline: {policy}, placement: linux }}\ntasks:\n"
    );
    for i in 0..n {
        let period = 2 * RUNTIME_S + RUNTIME_S * i as u64;
        y += &format!("  - {{ name: t{i}, runtime: {RUNTIME_S}s, period: {period}s }}\n");
    }
    Workload::parse_str(&y, Path::new("decision.yaml"), &Overrides::default()).unwrap()
}

/// A simulation past its releases, and the simulated time it has reached.
fn started(w: &Workload) -> (Engine, u64) {
    let mut e = engine_for(w, &SimOptions::default()).unwrap();
    let at = 10 * TICK_NS;
    e.run_until(at);
    (e, at)
}

fn decision(c: &mut Criterion) {
    let mut g = c.benchmark_group("tick_decision_1cpu");
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(3));
    g.throughput(Throughput::Elements(CHUNK));
    for n in [16usize, 256, 4096] {
        for policy in ["llf", "illf"] {
            // The steady state really is one running task and ticks only.
            let probe = simulate(&set(n, 20, policy), &SimOptions::default()).unwrap();
            assert_eq!(probe.context_switches, 1, "{policy}/{n}: one task runs");
            assert_eq!(
                probe.events,
                n as u64 + 20 * HZ - 1,
                "{policy}/{n}: ticks only"
            );

            let w = set(n, RUNTIME_S, policy);
            let end = RUNTIME_S * 1_000_000_000;
            let (mut e, mut at) = started(&w);
            g.bench_function(format!("{policy}/{n}"), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        if at + CHUNK * TICK_NS >= end {
                            (e, at) = started(&w); // not reached in practice
                        }
                        at += CHUNK * TICK_NS;
                        let t = Instant::now();
                        e.run_until(at);
                        total += t.elapsed();
                    }
                    total
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, decision);
criterion_main!(benches);
