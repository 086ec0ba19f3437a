//! Benchmark of the user-space dispatcher.
//!
//! 1. Decision cost (the policy's choice only) of `edf`, `llf` and `illf` for 8, 64 and
//!    256 tasks on 2 CPUs, over a synthetic schedule: 1 ms ticks, releases at period
//!    boundaries, the chosen jobs' remaining time decreasing; median and p99 in µs from
//!    an HDR histogram.
//! 2. With root: switches per CPU per second of kernel EDF (SCHED_DEADLINE) against the
//!    dispatcher's EDF on examples/table1-2cpu.yaml (3 s each).
//!
//!     cargo run --release -p schedlab-linux --example dispatcher_bench

use hdrhistogram::Histogram;
use schedlab_linux::decide::{Decider, JobView};
use schedlab_linux::runner::{self, Backend, RunConfig};
use schedlab_model::{Overrides, Policy, Workload};
use std::path::Path;
use std::time::Instant;

const MS: u64 = 1_000_000;

fn decision_cost(policy: Policy, n: usize, m: usize, ticks: u64) -> (f64, f64, u64) {
    // Periods 10..100 ms; total utilisation 0.75 per CPU, split evenly.
    let periods: Vec<u64> = (0..n).map(|i| (10 + (i as u64 * 37) % 91) * MS).collect();
    let u_each = 0.75 * m as f64 / n as f64;
    let exec: Vec<u64> = periods
        .iter()
        .map(|&p| ((p as f64 * u_each) as u64).max(10_000))
        .collect();
    let mut rem = vec![0u64; n];
    let mut rel = vec![0u64; n];
    let mut jobs: Vec<Option<JobView>> = vec![None; n];
    // The same tasks as a workload: the Decider runs the policy's class for it.
    let mut yaml = format!("platform: {{ cpus: {m} }}\ntasks:\n");
    for t in 0..n {
        yaml += &format!(
            "  - {{ name: t{t}, runtime: {}us, period: {}us }}\n",
            exec[t] / 1000,
            periods[t] / 1000
        );
    }
    let ov = Overrides {
        policy: Some(policy),
        ..Overrides::default()
    };
    let w = Workload::parse_str(&yaml, Path::new("bench.yaml"), &ov).expect("bench workload");
    let mut d = Decider::new(&w).expect("the dispatcher runs the policy");
    let mut h = Histogram::<u64>::new_with_bounds(1, 1_000_000_000, 3).unwrap();
    for k in 0..ticks {
        let now = k * MS;
        for t in 0..n {
            if now % periods[t] == 0 {
                rel[t] = now;
                rem[t] = exec[t];
            }
            jobs[t] = (rem[t] > 0).then_some(JobView {
                release: rel[t],
                deadline: rel[t] + periods[t],
                remaining: rem[t],
            });
        }
        let t0 = Instant::now();
        let a = d.decide(now, &jobs, true);
        let dt = t0.elapsed().as_nanos() as u64;
        h.record(dt.max(1)).unwrap();
        for t in a.iter().flatten() {
            rem[*t] = rem[*t].saturating_sub(MS);
        }
    }
    (
        h.value_at_quantile(0.5) as f64 / 1e3,
        h.value_at_quantile(0.99) as f64 / 1e3,
        d.laxity_evaluations,
    )
}

fn main() {
    println!("decision cost on 2 CPUs (µs per decision, 5000 ticks of 1 ms)");
    println!(
        "{:<6} {:>6} {:>10} {:>10} {:>14}",
        "policy", "tasks", "median", "p99", "laxity evals"
    );
    for policy in [Policy::Edf, Policy::Llf, Policy::Illf] {
        for n in [8, 64, 256] {
            let (med, p99, lax) = decision_cost(policy, n, 2, 5000);
            println!(
                "{:<6} {:>6} {:>10.3} {:>10.3} {:>14}",
                policy.name(),
                n,
                med,
                p99,
                lax
            );
        }
    }

    if schedlab_linux::privileges::check().is_err() {
        println!("\n(kernel vs dispatcher EDF skipped: needs CAP_SYS_NICE)");
        return;
    }
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/table1-2cpu.yaml");
    let ov = Overrides {
        policy: Some(Policy::Edf),
        ..Overrides::default()
    };
    let w = Workload::load(&file, &ov).expect("examples/table1-2cpu.yaml");
    println!(
        "\nEDF on {} (3 s): kernel SCHED_DEADLINE vs the user-space dispatcher",
        w.name
    );
    println!(
        "{:<12} {:>7} {:>16} {:>16} {:>12} {:>12}",
        "backend", "misses", "switches/CPU/s", "worker switches", "preemptions", "decisions"
    );
    for (name, backend) in [
        ("kernel", Backend::Kernel),
        ("dispatcher", Backend::Dispatcher),
    ] {
        let cfg = RunConfig {
            backend: Some(backend),
            ..RunConfig::default()
        };
        match runner::run(&w, &cfg) {
            Ok(r) => println!(
                "{:<12} {:>7} {:>16.1} {:>16} {:>12} {:>12}",
                name,
                r.result.deadline_misses,
                r.result.context_switches_per_cpu_per_s,
                r.thread_switches,
                r.result.preemptions,
                r.dispatcher.map_or("-".into(), |d| format!(
                    "{} (p99 {:.2} µs)",
                    d.decisions,
                    d.p99_ns as f64 / 1e3
                ))
            ),
            Err(e) => println!("{name}: {e}"),
        }
    }
}
