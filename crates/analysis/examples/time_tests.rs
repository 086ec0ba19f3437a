//! Time each schedulability test on a workload file: `cargo run --release -p
//! schedlab-analysis --example time_tests -- FILE [CPUS]`. Prints one line per test:
//! name, seconds, verdict.

use schedlab_analysis::tests::{self as sched, PerCpu};
use schedlab_analysis::{from_workload, RtTask, Verdict};
use schedlab_model::{Overrides, Workload};
use std::path::Path;
use std::time::Instant;

/// A test as a function of the tasks and the CPUs.
type Test = fn(&[RtTask], usize) -> Verdict;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let file = args.get(1).ok_or("usage: time_tests FILE [CPUS]")?;
    let w = Workload::load(Path::new(file), &Overrides::default()).map_err(|e| e.to_string())?;
    let ts = from_workload(&w)?;
    let m = match args.get(2) {
        Some(c) => c.parse().map_err(|e| format!("CPUS: {e}"))?,
        None => w.platform.cpus,
    };
    let tests: Vec<(&str, Test)> = vec![
        ("ll", sched::liu_layland),
        ("hyperbolic", sched::hyperbolic),
        ("rta", sched::rta_test),
        ("edf-util", sched::edf_utilisation),
        ("edf-pda", sched::edf_pda),
        ("gfb", sched::gfb),
        ("bcl", sched::bcl),
        ("ffd-edf", |t, m| sched::ffd(t, m, PerCpu::Edf)),
        ("rta-gedf", schedlab_analysis::global::rta_gedf),
        ("rta-gfp", schedlab_analysis::global::rta_gfp),
        ("edzl", schedlab_analysis::global::edzl),
    ];
    println!("{} tasks, {m} CPUs", ts.len());
    for (name, f) in tests {
        let t0 = Instant::now();
        let v = f(&ts, m);
        let why: String = v.why.chars().take(90).collect();
        println!(
            "{name:<10} {:>8.3} s  {:<12} {why}",
            t0.elapsed().as_secs_f64(),
            v.outcome.words()
        );
    }
    Ok(())
}
