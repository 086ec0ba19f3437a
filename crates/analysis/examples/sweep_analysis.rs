//! The analysis of `scripts/bench_sweep.py`'s sets alone, for callgrind and `perf`:
//! `cargo build --release -p schedlab-analysis --example sweep_analysis`, then
//! `target/release/examples/sweep_analysis N [--print | --outcomes]`. Generates N sets
//! (16 tasks, 4 CPUs, U = 2.0, 2.5, 3.0, 3.5, N/4 each, the sweep's seeds for seed 1) and
//! runs every test on each; `--print` writes each verdict (test, outcome, reason) to
//! compare two builds; `--outcomes` runs the sweep's `analyze_outcomes` instead (no
//! reasons formatted). docs/performance.md reports `(N = 300 − N = 100) / 200`
//! instructions a set.

use schedlab_analysis::{analyze, analyze_outcomes, generate, GenSpec};
use std::fmt::Write as _;

/// The sweep's set seed (`schedlab.sweep`'s `set_seed`, crates/py/src/sweep.rs).
fn set_seed(seed: u64, utilization: f64, sample: u64) -> u64 {
    fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    mix(mix(mix(seed) ^ utilization.to_bits()) ^ sample) >> 1
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args
        .get(1)
        .ok_or("usage: sweep_analysis N [--print | --outcomes]")?
        .parse()
        .map_err(|e| format!("N: {e}"))?;
    let print = args.get(2).is_some_and(|a| a == "--print");
    // The sweep's own call: outcomes only, no reasons formatted.
    let outcomes = args.get(2).is_some_and(|a| a == "--outcomes");
    let mut out = String::new();
    let mut accepted = 0usize;
    for u in [2.0f64, 2.5, 3.0, 3.5] {
        for s in 0..n / 4 {
            let spec = GenSpec {
                name: format!("u{u}-s{s}"),
                utilization: u,
                seed: set_seed(1, u, s),
                ..GenSpec::default()
            };
            let ts = generate(&spec)?.rt_tasks();
            if outcomes {
                let o = analyze_outcomes(&ts, 4);
                accepted += o.iter().filter(|(_, a)| *a == Some(true)).count();
                continue;
            }
            for v in analyze(&ts, 4) {
                accepted += usize::from(v.outcome.accepted() == Some(true));
                if print {
                    let _ = writeln!(out, "{} {:?} {}", v.test, v.outcome, v.why);
                }
            }
        }
    }
    print!("{out}");
    eprintln!("{accepted} verdicts accept their set");
    Ok(())
}
