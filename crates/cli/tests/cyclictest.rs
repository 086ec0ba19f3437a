//! `schedlab latency` against cyclictest (rt-tests) on this machine, through
//! scripts/latency-vs-cyclictest.py: one SCHED_FIFO 99 thread on the last CPU, 1 ms
//! interval, the two tools alternating, with the PM QoS request (both tools' default) and
//! without it (`--laptop`), the CPU shielded (`--shield`: other threads moved off it and
//! back) so that it idles between wake-ups even on a busy machine. Asserts robust facts only: every run has its samples, schedlab
//! says which setting was in force, and the two tools agree on avg and p99.

mod common;

use serde_json::Value;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn spread(v: &[f64]) -> f64 {
    v.iter().cloned().fold(f64::MIN, f64::max) - v.iter().cloned().fold(f64::MAX, f64::min)
}

#[test]
#[cfg_attr(
    not(all(real_kernel, cyclictest)),
    ignore = "needs root, 2 CPUs (crates/cli/build.rs) and cyclictest (apt install rt-tests)"
)]
fn schedlab_and_cyclictest_agree_with_and_without_the_pm_qos_request() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scripts/latency-vs-cyclictest.py"
    );
    let out = Command::new("python3")
        .args([
            script,
            "--duration",
            "1",
            "--rounds",
            "2",
            "--shield",
            "--json",
            "--schedlab",
            BIN,
        ])
        .output()
        .unwrap();
    let v: Value = common::json_of(&out);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 4, "2 settings x 2 tools");
    for setting in ["request 0", "--laptop"] {
        let runs = |tool: &str| -> Vec<Value> {
            let r = results
                .iter()
                .find(|r| r["setting"] == setting && r["tool"] == tool)
                .unwrap();
            r["runs"].as_array().unwrap().clone()
        };
        let (s, c) = (runs("schedlab"), runs("cyclictest"));
        assert_eq!((s.len(), c.len()), (2, 2));
        for r in s.iter().chain(&c) {
            // 1 s at 1 ms: 999 wake-ups, fewer only by the periods a stall skipped.
            let n = r["samples"].as_u64().unwrap();
            assert!((800..=1000).contains(&n), "{setting}: {r}");
        }
        let held = if setting == "--laptop" {
            Value::Null
        } else {
            Value::from(0)
        };
        for r in &s {
            assert_eq!(r["dma_latency_us"], held, "{setting}: {r}");
        }
        for key in ["avg_us", "p99_us"] {
            let f = |rs: &[Value]| -> Vec<f64> {
                rs.iter().map(|r| r[key].as_f64().unwrap()).collect()
            };
            let (fs, fc) = (f(&s), f(&c));
            let (ms, mc) = (mean(&fs), mean(&fc));
            eprintln!("{setting} {key}: schedlab {fs:?}, cyclictest {fc:?}");
            // Agreement: within the runs' own spread, or within a factor 2. Back-to-back
            // runs of one tool on this shared 2-CPU VM differ by up to ~1.5x in avg, so
            // 2x is noise-proof, yet it fails the 2.5x gap schedlab had when it did not
            // hold the request cyclictest holds (idle-state exits on every wake-up).
            let within_spread = (ms - mc).abs() <= spread(&fs).max(spread(&fc));
            let ratio = ms.max(1.0) / mc.max(1.0);
            assert!(
                within_spread || (0.5..=2.0).contains(&ratio),
                "{setting} {key}: schedlab {fs:?} vs cyclictest {fc:?} (ratio {ratio:.2})"
            );
        }
    }
}
