//! Simulate one workload file and print the events, wall time and memory: a quick way
//! to profile the engine alone (`perf record`, `valgrind --tool=callgrind`).
//!
//! `cargo run --release -p schedlab-sim --example run_file -- FILE [POLICY [PLACEMENT]]`

use schedlab_model::{Overrides, Placement, Policy, Workload};
use schedlab_sim::{engine_for, SimOptions};
use std::path::Path;

fn rss_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: run_file FILE [POLICY [PLACEMENT]]");
        std::process::exit(2);
    };
    let ov = Overrides {
        policy: args.get(2).map(|p| Policy::parse(p).expect("policy")),
        placement: args.get(3).map(|p| Placement::parse(p).expect("placement")),
        ..Overrides::default()
    };
    let w = Workload::load(Path::new(path), &ov).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let rss0 = rss_kb("VmRSS:");
    let e = engine_for(&w, &SimOptions::default()).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let rest = rss_kb("VmRSS:").saturating_sub(rss0);
    let r = e.run();
    println!(
        "{path} {} {} tasks={} cpus={} events={} wall={:.3}s events/s={:.0} misses={} rest_kb={} rest_per_task_b={} peak_kb={}",
        r.policy,
        r.placement,
        w.tasks.len(),
        r.cpus,
        r.events,
        r.wall_s,
        r.events as f64 / r.wall_s,
        r.deadline_misses,
        rest,
        rest * 1024 / w.tasks.len().max(1) as u64,
        rss_kb("VmHWM:")
    );
}
