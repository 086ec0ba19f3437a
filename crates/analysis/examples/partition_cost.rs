//! Time of the partitioned tests on large generated sets (docs/analysis.md "Cost"):
//! `cargo run --release -p schedlab-analysis --example partition_cost -- TASKS CPUS LOAD
//! [MIN_DEADLINE_RATIO]` (LOAD per CPU; a ratio below 1 draws constrained deadlines).

use schedlab_analysis::partition::{fit_test, Fit, PerCpu};
use schedlab_analysis::{generate, Deadlines, GenSpec, RtTask};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get = |i: usize, d: f64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let (n, m, load) = (get(0, 1000.0) as usize, get(1, 4.0) as usize, get(2, 0.9));
    let spec = GenSpec {
        tasks: n,
        cpus: m,
        utilization: load * m as f64,
        max_task_utilization: 1.0,
        deadlines: match get(3, 1.0) {
            r if r < 1.0 => Deadlines::Constrained { min_ratio: r },
            _ => Deadlines::Implicit,
        },
        ..GenSpec::default()
    };
    let set = generate(&spec).expect("generate");
    let ts: Vec<RtTask> = set.rt_tasks();
    for (how, fit) in [
        (PerCpu::Rm, Fit::First),
        (PerCpu::Dm, Fit::First),
        (PerCpu::Edf, Fit::First),
        (PerCpu::Edf, Fit::Best),
        (PerCpu::Edf, Fit::Worst),
    ] {
        let t0 = Instant::now();
        let v = fit_test(&ts, m, how, fit);
        let why: String = v.why.chars().take(90).collect();
        println!(
            "{n} tasks {m} cpus U={:.2}: {:8} {:>8.3} s  {} ({why})",
            load * m as f64,
            v.test,
            t0.elapsed().as_secs_f64(),
            v.outcome.words()
        );
    }
}
