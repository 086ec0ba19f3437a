//! The Rust core of `scripts/bench_sweep.py`'s serial sweep without Python, for callgrind
//! and for comparing two builds' rows:
//! `cargo build --release -p schedlab-py --example sweep_cells`, then
//! `target/release/examples/sweep_cells N [--chunk K] [--no-analysis] [--print]`.
//!
//! Runs the cells a serial sweep sends for the grid `cpus: 4, tasks: 16, utilizations:
//! [2.0, 2.5, 3.0, 3.5], policies: [edf], seed: 1, duration: 1s` with N/4 samples each,
//! K cells per batch (16, as `schedlab.sweep`'s serial client), through the same
//! functions as `_native.run_cells_columns` (parse the batch's JSON, run each cell; the
//! Python lists it then builds are not made here). `--print` writes each batch's columns
//! as `_native.run_cells`' JSON, so that every test's verdict and every
//! simulated number of two builds can be compared byte for byte (`cmp`): the check that
//! a speed change of the analysis or the cells changes no result (20,000 sets take a
//! few seconds).
//! docs/performance.md reports `(N = 300 − N = 100) / 200` instructions a set.

// The cdylib has no Rust library target: the sweep module itself is compiled in.
#[allow(dead_code)]
#[path = "../src/sweep.rs"]
mod sweep;

use std::io::Write as _;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: sweep_cells N [--chunk K] [--no-analysis] [--print]";
    let n: u64 = args
        .get(1)
        .ok_or(usage)?
        .parse()
        .map_err(|e| format!("N: {e}"))?;
    let mut chunk = 16usize;
    let mut analysis = true;
    let mut print = false;
    let mut rest = args[2..].iter();
    while let Some(a) = rest.next() {
        match a.as_str() {
            "--chunk" => {
                chunk = rest
                    .next()
                    .ok_or(usage)?
                    .parse()
                    .map_err(|e| format!("--chunk: {e}"))?;
            }
            "--no-analysis" => analysis = false,
            "--print" => print = true,
            _ => return Err(usage.into()),
        }
    }
    // The cells as `schedlab.sweep.cells_of` writes them, as JSON text.
    let mut cells = Vec::new();
    for u in [2.0f64, 2.5, 3.0, 3.5] {
        for s in 0..n / 4 {
            cells.push((u, s, format!(
                r#"{{"cpus": 4, "tasks": 16, "utilization": {u:?}, "sample": {s}, "seed": 1, "duration": "1s", "method": "uunifast-discard", "periods": "10ms..1000ms", "granularity": "1ms", "max_task_utilization": 1.0, "deadline_min_ratio": null, "scheduler": null, "platform": null, "policies": ["edf"], "analysis": {analysis}}}"#
            )));
        }
    }
    let mut out = std::io::stdout().lock();
    for batch in cells.chunks(chunk.max(1)) {
        // As `schedlab.sweep` sends a batch of one axis combination: its first cell and
        // each cell's utilisation and sample.
        let points: Vec<String> = batch
            .iter()
            .map(|(u, s, _)| format!("[{u:?}, {s}]"))
            .collect();
        let text = format!(
            r#"{{"cell": {}, "points": [{}]}}"#,
            batch[0].2,
            points.join(", ")
        );
        let rows = sweep::Batch::parse(&text)?.rows()?;
        // The sweep takes the columns as Python lists (`_native.run_cells_columns`, built
        // with the GIL held, not here); their JSON text is `--print`'s comparison form.
        if print {
            let columns =
                serde_json::to_string(&sweep::columns(&rows)).map_err(|e| e.to_string())?;
            writeln!(out, "{columns}").map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}
